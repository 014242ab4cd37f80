#!/usr/bin/env python3
"""A serving benchmark in the shape of vLLM's `bench serve`: streamed /v1/completions requests
at a request rate (Poisson) or a fixed concurrency, fixed output lengths (`ignore_eos`), and the
field's figures: request throughput, output and total token throughput, time to first token
(TTFT), time per output token after the first (TPOT), inter-token latency between streamed
chunks (ITL) and end-to-end latency, each as mean, median and p99. Writes a JSON result and,
with --plot, a PNG of the latencies (gnuplot).

usage: bench/serve_bench.py [--url http://127.0.0.1:8000] [--model NAME] [--dataset random|prompts]
           [--num-prompts 64] [--input-len 128] [--output-len 64] [--prompts FILE.jsonl]
           [--request-rate inf | R] [--interval S] [--max-concurrency N] [--no-ignore-eos] [--seed 0]
           [--vocab 256] [--temperature 0] [--predict] [--response-format FILE.json]
           [--out result.json] [--plot latencies.png] [--label TEXT]
random: prompts of --input-len random token ids in [0, --vocab) (vLLM's random dataset).
--interval S: requests start S seconds apart (fixed arrivals, instead of --request-rate's Poisson).
prompts: the lines of a JSONL file with "prompt_ids" (default bench/prompts/mixed.jsonl: varied
lengths, like a chat dataset's), each request --output-len tokens. --predict: lines with
"prediction_ids" send them as OpenAI's prediction (Predicted Outputs); the result counts the
accepted and rejected prediction tokens (usage.completion_tokens_details).
--response-format FILE: each request sends the file's object as response_format (e.g. a strict
json_schema): structured output; a request then ends where its grammar does (ignore_eos is not sent).
Standard library only (plus gnuplot for --plot). Each request opens its own connection.
"""
import argparse, http.client, json, os, random, statistics, subprocess, tempfile, threading, time, urllib.parse


def percentile(xs, p):
    if not xs:
        return None
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100.0 * (len(xs) - 1))))]


def summary(xs, scale=1e3):
    """mean, median, p99 (milliseconds by default)."""
    if not xs:
        return {"mean": None, "median": None, "p99": None}
    return {"mean": round(statistics.mean(xs) * scale, 3), "median": round(statistics.median(xs) * scale, 3),
            "p99": round(percentile(xs, 99) * scale, 3)}


def one_request(url, body):
    """Sends one streamed completion; returns its timings and token counts (or the error)."""
    u = urllib.parse.urlparse(url)
    out = {"ok": False, "ttft": None, "itl": [], "e2e": None, "output_tokens": 0, "prompt_tokens": 0}
    t0 = time.perf_counter()
    try:
        conn = http.client.HTTPConnection(u.hostname, u.port or 80, timeout=600)
        conn.request("POST", "/v1/completions", json.dumps(body), {"Content-Type": "application/json"})
        r = conn.getresponse()
        if r.status != 200:
            out["error"] = "%d %s" % (r.status, r.read()[:200].decode("utf-8", "replace"))
            return out
        last = None
        while True:
            line = r.readline()
            if not line:
                break
            line = line.strip()
            if not line.startswith(b"data: "):
                continue
            data = line[6:]
            if data == b"[DONE]":
                out["done"] = True
                break
            event = json.loads(data)
            if event.get("usage"):
                out["output_tokens"] = event["usage"]["completion_tokens"]
                out["prompt_tokens"] = event["usage"]["prompt_tokens"]
                d = event["usage"].get("completion_tokens_details") or {}
                out["accepted"] = d.get("accepted_prediction_tokens", 0)
                out["rejected"] = d.get("rejected_prediction_tokens", 0)
            if not any(c.get("text") for c in event.get("choices", [])):
                continue
            now = time.perf_counter()
            if last is None:
                out["ttft"] = now - t0
            else:
                out["itl"].append(now - last)
            last = now
        out["e2e"] = time.perf_counter() - t0
        # Answered whole: a model whose tokens decode to no text (a seeded checkpoint's) streams
        # no text, and has no TTFT, but it was served.
        out["ok"] = out["ttft"] is not None or (out.get("done", False) and out["output_tokens"] > 0)
        conn.close()
    except (OSError, http.client.HTTPException, ValueError) as e:
        out["error"] = str(e)
    return out


def prompts_of(args, rng):
    if args.dataset == "random":
        return [[rng.randrange(args.vocab) for _ in range(args.input_len)] for _ in range(args.num_prompts)], \
            [None] * args.num_prompts
    with open(args.prompts) as f:
        lines = [json.loads(l) for l in f if l.strip()]
    return [lines[i % len(lines)]["prompt_ids"] for i in range(args.num_prompts)], \
        [lines[i % len(lines)].get("prediction_ids") for i in range(args.num_prompts)]


def run(args):
    rng = random.Random(args.seed)
    prompts, predictions = prompts_of(args, rng)
    results = [None] * len(prompts)
    gate = threading.Semaphore(args.max_concurrency or len(prompts))
    threads = []

    def worker(i, body):
        with gate:
            results[i] = one_request(args.url, body)

    t0 = time.perf_counter()
    for i, p in enumerate(prompts):
        body = {"prompt": p, "max_tokens": args.output_len, "stream": True,
                "ignore_eos": args.ignore_eos and not args.response_format,
                "stream_options": {"include_usage": True}, "temperature": args.temperature}
        if args.model:
            body["model"] = args.model
        if args.response_format:
            body["response_format"] = args.response_format
        if args.predict and predictions[i]:
            body["prediction"] = {"type": "content", "content": predictions[i]}
        t = threading.Thread(target=worker, args=(i, body))
        t.start()
        threads.append(t)
        if args.interval > 0:
            time.sleep(args.interval)
        elif args.request_rate != float("inf"):
            time.sleep(rng.expovariate(args.request_rate))  # Poisson arrivals
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    ok = [r for r in results if r["ok"]]
    out_tokens = sum(r["output_tokens"] for r in ok)
    in_tokens = sum(r["prompt_tokens"] for r in ok)
    timed = [r for r in ok if r["ttft"] is not None]  # requests that streamed text
    tpot = [(r["e2e"] - r["ttft"]) / (r["output_tokens"] - 1) for r in timed if r["output_tokens"] > 1]
    itl = [x for r in ok for x in r["itl"]]
    return {
        "label": args.label, "dataset": args.dataset, "num_prompts": len(prompts), "completed": len(ok),
        "failed": len(prompts) - len(ok), "errors": [r.get("error") for r in results if not r["ok"]][:5],
        "request_rate": str(args.request_rate), "interval_s": args.interval, "max_concurrency": args.max_concurrency,
        "output_len": args.output_len, "ignore_eos": args.ignore_eos, "duration_s": round(wall, 3),
        "request_throughput": round(len(ok) / wall, 3), "output_throughput": round(out_tokens / wall, 2),
        "total_token_throughput": round((in_tokens + out_tokens) / wall, 2),
        "total_input_tokens": in_tokens, "total_output_tokens": out_tokens,
        "without_text": len(ok) - len(timed),
        "ttft_ms": summary([r["ttft"] for r in timed]), "tpot_ms": summary(tpot), "itl_ms": summary(itl),
        "e2el_ms": summary([r["e2e"] for r in ok]),
        "accepted_prediction_tokens": sum(r.get("accepted", 0) for r in ok),
        "rejected_prediction_tokens": sum(r.get("rejected", 0) for r in ok),
        "per_request": [{"ttft_ms": round(r["ttft"] * 1e3, 3), "e2el_ms": round(r["e2e"] * 1e3, 3),
                         "output_tokens": r["output_tokens"]} for r in timed],
    }


def plot(result, path):
    """TTFT and end-to-end latency of every request, sorted (a CDF on its side)."""
    with tempfile.NamedTemporaryFile("w", suffix=".dat", delete=False) as f:
        ttft = sorted(r["ttft_ms"] for r in result["per_request"])
        e2e = sorted(r["e2el_ms"] for r in result["per_request"])
        for i, (a, b) in enumerate(zip(ttft, e2e)):
            f.write("%f %f %f\n" % ((i + 1) / len(ttft), a, b))
        data = f.name
    script = ('set terminal png size 800,500; set output "%s"; set xlabel "latency (ms)"; set ylabel "fraction of requests";'
              'set key bottom right; set title "%s"; plot "%s" using 2:1 with lines title "time to first token",'
              ' "%s" using 3:1 with lines title "end to end"' % (path, result["label"] or "serve_bench", data, data))
    subprocess.run(["gnuplot", "-e", script], check=True)
    os.unlink(data)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--url", default="http://127.0.0.1:8000")
    ap.add_argument("--model", default="", help="omitted from requests when empty (the server serves one model)")
    ap.add_argument("--dataset", choices=["random", "prompts"], default="random")
    ap.add_argument("--prompts", default=os.path.join(here, "prompts", "mixed.jsonl"))
    ap.add_argument("--num-prompts", type=int, default=64)
    ap.add_argument("--input-len", type=int, default=128)
    ap.add_argument("--output-len", type=int, default=64)
    ap.add_argument("--vocab", type=int, default=256, help="random prompts draw ids below this")
    ap.add_argument("--request-rate", type=float, default=float("inf"))
    ap.add_argument("--interval", type=float, default=0.0, help="seconds between request starts (0: rate)")
    ap.add_argument("--max-concurrency", type=int, default=0)
    ap.add_argument("--no-ignore-eos", dest="ignore_eos", action="store_false")
    ap.add_argument("--temperature", type=float, default=0.0, help="0: greedy (the default)")
    ap.add_argument("--predict", action="store_true", help="send the prompts file's prediction_ids as prediction")
    ap.add_argument("--response-format", default="", type=lambda f: json.load(open(f)) if f else None,
                    help="a JSON file whose object each request sends as response_format (structured output)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--label", default="")
    ap.add_argument("--out", default="")
    ap.add_argument("--plot", default="")
    args = ap.parse_args()
    if args.num_prompts < 1 or args.output_len < 1 or args.input_len < 1 or args.max_concurrency < 0 or args.interval < 0:
        ap.error("--num-prompts, --input-len and --output-len must be >= 1, --max-concurrency and --interval >= 0")
    result = run(args)
    text = json.dumps({k: v for k, v in result.items() if k != "per_request"}, indent=1)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(result, f, indent=1)
    if args.plot and result["per_request"]:
        plot(result, args.plot)
    return 0 if result["failed"] == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
