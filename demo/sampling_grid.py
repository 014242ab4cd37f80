#!/usr/bin/python3
"""Which sampling makes the demo pair's chat answers read like its corpus: measured, not chosen.

  demo/sampling_grid.py grid  EXSPEC [--prompts F] [--max-tokens N] [--n N]
      serves demo/target + demo/draft with --generation-config none and asks every chat prompt
      of F (default demo/prompts/chat_tune.txt) once per setting of GRID below, each field sent
      explicitly, n choices a prompt, seed = the prompt's index. Prints one markdown table row a
      setting.
  demo/sampling_grid.py check EXSPEC [--prompts F] [--max-tokens N] [--n N]
      serves the pair as shipped (--generation-config auto: demo/target/generation_config.json)
      and asks the prompts (default demo/prompts/chat_check.txt, none of them tuned on) with no
      sampling field but the seed: the defaults in force. Exit 1 if an answer repeats a line 3 times.

Per setting, over all its answers:
  line loops   share of answers in which one non-empty line occurs 3 or more times
  4-gram loops share of answers in which one word 4-gram occurs 3 or more times
  distinct-2   distinct word bigrams / word bigrams: per answer (the mean), and over all the
               answers together (low when choices and prompts get the same answer)
  dict words   share of the answers' words in /usr/share/dict/american-english (wamerican)
The server runs under whatever CPU share it gets; nothing here is timed."""
import argparse, concurrent.futures, json, os, re, subprocess, sys, tempfile, time, urllib.request
from collections import Counter

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DICT = "/usr/share/dict/american-english"
WORD = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)?")

# (label, temperature, top_p, top_k, min_p, repetition_penalty); top_k 0 and min_p 0: off.
GRID = [
    ("greedy (the API's default)", 0.0, 1.0, 0, 0.0, 1.0),
    ("greedy, repetition 1.3", 0.0, 1.0, 0, 0.0, 1.3),
    ("T 1.0 (OpenAI's default)", 1.0, 1.0, 0, 0.0, 1.0),
    ("T 0.6, top_p 0.9 (Llama 3.1's)", 0.6, 0.9, 0, 0.0, 1.0),
    ("T 0.6, top_p 0.95, top_k 20 (Qwen3's)", 0.6, 0.95, 20, 0.0, 1.0),
    ("T 0.8, top_p 0.95, top_k 40, min_p 0.05, rep 1.1 (llama.cpp's)", 0.8, 0.95, 40, 0.05, 1.1),
    ("T 0.7, top_p 0.9, rep 1.2", 0.7, 0.9, 0, 0.0, 1.2),
    ("T 0.8, min_p 0.1, rep 1.2", 0.8, 1.0, 0, 0.1, 1.2),
    ("T 0.8, min_p 0.1, rep 1.3", 0.8, 1.0, 0, 0.1, 1.3),
    ("T 1.0, min_p 0.1, rep 1.3", 1.0, 1.0, 0, 0.1, 1.3),
    ("T 0.7, min_p 0.1, rep 1.1", 0.7, 1.0, 0, 0.1, 1.1),
    ("T 0.8, min_p 0.1, rep 1.1", 0.8, 1.0, 0, 0.1, 1.1),
]


def start(exspec, extra):
    log = tempfile.TemporaryFile("w+")  # the server's stderr: where it says its port
    args = [exspec, "serve", "--model", f"{ROOT}/demo/target", "--draft", f"{ROOT}/demo/draft",
            "--served-model-name", "demo", "--port", "0"] + extra
    proc = subprocess.Popen(args, stderr=log, stdout=subprocess.DEVNULL)
    for _ in range(1200):
        log.seek(0)
        m = re.search(r"listening on http://127\.0\.0\.1:(\d+)", log.read())
        if m:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{m.group(1)}/health", timeout=5)
                return proc, int(m.group(1))
            except Exception:
                pass
        if proc.poll() is not None:
            break
        time.sleep(0.1)
    proc.kill()
    log.seek(0)
    sys.exit("the server did not start:\n" + log.read())


def chat(port, prompt, fields):
    body = {"model": "demo", "messages": [{"role": "user", "content": prompt}], **fields}
    req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/chat/completions", json.dumps(body).encode(),
                                 {"Content-Type": "application/json"})
    return [c["message"]["content"] for c in json.load(urllib.request.urlopen(req, timeout=600))["choices"]]


def ask_all(port, prompts, fields_of):
    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        futures = [pool.submit(chat, port, p, fields_of(i)) for i, p in enumerate(prompts)]
        return [a for f in futures for a in f.result()]


def repeats(items, times=3):
    return any(c >= times for c in Counter(items).values())


def measure(answers, words):
    line_loops = gram_loops = known = said = 0
    bigrams, own = [], []
    for a in answers:
        lines = [l.strip() for l in a.splitlines() if l.strip()]
        w = WORD.findall(a)
        line_loops += repeats(lines)
        gram_loops += repeats(tuple(w[i:i + 4]) for i in range(len(w) - 3))
        b = [tuple(w[i:i + 2]) for i in range(len(w) - 1)]
        bigrams += b
        own.append(len(set(b)) / max(len(b), 1))
        said += len(w)
        known += sum(x.lower() in words for x in w)
    n = max(len(answers), 1)
    return {"line_loops": line_loops / n, "gram_loops": gram_loops / n,
            "distinct2": sum(own) / n, "distinct2_all": len(set(bigrams)) / max(len(bigrams), 1),
            "dict": known / max(said, 1),
            "words": said / n}


def row(label, m):
    return (f"| {label} | {m['line_loops']:.0%} | {m['gram_loops']:.0%} | {m['distinct2']:.2f} | "
            f"{m['distinct2_all']:.2f} | "
            f"{m['dict']:.1%} | {m['words']:.0f} |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["grid", "check"])
    ap.add_argument("exspec")
    ap.add_argument("--prompts")
    ap.add_argument("--max-tokens", type=int, default=128)
    ap.add_argument("--n", type=int, default=5)
    ap.add_argument("--show", action="store_true", help="print every answer too")
    a = ap.parse_args()
    default = "chat_tune.txt" if a.what == "grid" else "chat_check.txt"
    prompts = [l.strip() for l in open(a.prompts or f"{ROOT}/demo/prompts/{default}") if l.strip()]
    words = {w.strip().lower() for w in open(DICT, encoding="utf-8", errors="ignore")}
    extra = ["--generation-config", "none"] if a.what == "grid" else []
    proc, port = start(a.exspec, extra)
    try:
        print(f"{len(prompts)} prompts x {a.n} choices, max_tokens {a.max_tokens}, seed = prompt index\n")
        print("| setting | line loops | 4-gram loops | distinct-2 | distinct-2, all | dict words | words/answer |")
        print("|---|--:|--:|--:|--:|--:|--:|")
        settings = GRID if a.what == "grid" else [("the served defaults (no sampling field sent)",)]
        failed = False
        for s in settings:
            base = {"max_tokens": a.max_tokens, "n": a.n}
            if len(s) > 1:
                base.update(temperature=s[1], top_p=s[2], top_k=s[3], min_p=s[4], repetition_penalty=s[5])
            answers = ask_all(port, prompts, lambda i: {**base, "seed": i})
            m = measure(answers, words)
            print(row(s[0], m), flush=True)
            failed = failed or (a.what == "check" and m["line_loops"] > 0)
            if a.show:
                for i, ans in enumerate(answers):
                    print(f"  [{prompts[i // a.n]!r} #{i % a.n}] {ans!r}")
        return 1 if failed else 0
    finally:
        proc.terminate()
        proc.wait()


if __name__ == "__main__":
    sys.exit(main())
