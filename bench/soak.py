#!/usr/bin/env python3
"""Soak: C streaming clients for S seconds against `exspec serve`, reporting every 10 s the requests
answered, the errors and the server's resident memory, and at the end the growth and the slope of
resident memory after the warm-up (issue 49: a server that runs for weeks must not grow with the
requests it has answered). A benchmark, not a test: it judges nothing unless --max-growth-mb asks.

usage: bench/soak.py [--exspec build/exspec] [--serve "FLAGS"] | [--url URL --pid PID]
           [--clients 64] [--seconds 480] [--warmup 120] [--interval 10] [--max-tokens 8,48]
           [--prompt-len 4,200] [--keep-alive] [--seed 0] [--env NAME=VALUE] [--out soak.json]
           [--max-growth-mb MB]
Without --url it starts `exspec serve --port 0 FLAGS` itself (--env: in that environment; without
--serve: a tiny seeded pair made with `exspec make-model` into a temporary directory) and stops it
at the end; or give the --url and --pid of a running server. Each client sends streamed /v1/completions one after another,
each on a fresh connection (--keep-alive: one connection per client), prompts of random printable
text of --prompt-len characters, random max_tokens in the --max-tokens range, a third of them
seeded sampling at temperature 0.8, the rest greedy; a request's answer must end with [DONE].
Resident memory is VmRSS of /proc/PID/status.
Standard library only. On a shared machine, run it under flock /work/.heavy.lock.
"""
import argparse, http.client, json, os, random, re, shlex, shutil, subprocess, sys, tempfile, threading, time, urllib.parse


def rss_bytes(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


class Counts:
    def __init__(self):
        self.lock = threading.Lock()
        self.requests = 0
        self.errors = 0
        self.tokens = 0
        self.last_errors = []


def one_request(conn_box, host, port, body, keep_alive):
    """One streamed completion; returns the number of data events, raises on any failure."""
    conn = conn_box[0] if keep_alive and conn_box[0] is not None else http.client.HTTPConnection(host, port, timeout=120)
    conn_box[0] = conn if keep_alive else None
    try:
        conn.request("POST", "/v1/completions", json.dumps(body),
                     {"Content-Type": "application/json", "Connection": "keep-alive" if keep_alive else "close"})
        r = conn.getresponse()
        if r.status != 200:
            raise RuntimeError("HTTP %d: %s" % (r.status, r.read()[:200]))
        events, done = 0, False
        while True:
            line = r.readline()
            if not line:
                break
            if line.startswith(b"data: "):
                if line.strip() == b"data: [DONE]":
                    done = True
                    if keep_alive:
                        r.read()  # the chunked body's end, so that the connection can be reused
                    break
                events += 1
        if not done:
            raise RuntimeError("stream ended without [DONE]")
        return events
    except Exception:
        conn.close()
        conn_box[0] = None
        raise
    finally:
        if not keep_alive:
            conn.close()


def client(i, a, host, port, stop, counts):
    rng = random.Random(a.seed * 1000 + i)
    lo_p, hi_p = map(int, a.prompt_len.split(","))
    lo_t, hi_t = map(int, a.max_tokens.split(","))
    box = [None]
    while not stop.is_set():
        prompt = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz .,") for _ in range(rng.randint(lo_p, hi_p)))
        body = {"prompt": prompt, "max_tokens": rng.randint(lo_t, hi_t), "stream": True}
        if rng.random() < 1 / 3:
            body.update(temperature=0.8, seed=rng.randint(0, 1 << 30))
        else:
            body.update(temperature=0)
        try:
            n = one_request(box, host, port, body, a.keep_alive)
            with counts.lock:
                counts.requests += 1
                counts.tokens += n
        except Exception as e:  # counted, and the client goes on
            if stop.is_set():
                break
            with counts.lock:
                counts.errors += 1
                counts.last_errors = (counts.last_errors + [repr(e)[:200]])[-5:]
            time.sleep(0.1)


def start_server(a):
    if not a.serve_flags_given:
        work = a.models_dir = tempfile.mkdtemp(prefix="soak_")
        subprocess.run([a.exspec, "make-model", "--arch", "llama", "--preset", "tiny", "--seed", "1", "--out",
                        work + "/target"], check=True, stderr=subprocess.DEVNULL)
        subprocess.run([a.exspec, "make-model", "--draft-of", work + "/target", "--layers", "1", "--out",
                        work + "/draft"], check=True, stderr=subprocess.DEVNULL)
        a.serve = "--model %s/target --draft %s/draft" % (work, work)
    log = tempfile.NamedTemporaryFile(prefix="soak_serve_", suffix=".log", delete=False)
    cmd = [a.exspec, "serve", "--port", "0"] + shlex.split(a.serve)
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=log, env=dict(os.environ, **a.env))
    deadline = time.time() + 300
    while True:
        text = open(log.name).read()
        if "exspec serve: ready" in text:
            break
        if p.poll() is not None or time.time() > deadline:
            raise RuntimeError("server did not start: %s\n%s" % (" ".join(cmd), text))
        time.sleep(0.1)
    url = re.search(r"listening on (http://[0-9.:]+)", text).group(1)
    return p, url, log.name, " ".join(cmd)


def slope_mb_per_min(samples, t0):
    pts = [(t, r) for t, _, _, r in samples if t >= t0]
    if len(pts) < 2:
        return None
    mt = sum(t for t, _ in pts) / len(pts)
    mr = sum(r for _, r in pts) / len(pts)
    den = sum((t - mt) ** 2 for t, _ in pts)
    return sum((t - mt) * (r - mr) for t, r in pts) / den * 60 / 1e6 if den else None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--exspec", default="build/exspec")
    ap.add_argument("--serve", default="")
    ap.add_argument("--env", action="append", default=[], help="NAME=VALUE for the server started by --serve")
    ap.add_argument("--url")
    ap.add_argument("--pid", type=int)
    ap.add_argument("--clients", type=int, default=64)
    ap.add_argument("--seconds", type=float, default=480)
    ap.add_argument("--warmup", type=float, default=120)
    ap.add_argument("--interval", type=float, default=10)
    ap.add_argument("--max-tokens", default="8,48")
    ap.add_argument("--prompt-len", default="4,200")
    ap.add_argument("--keep-alive", action="store_true")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out")
    ap.add_argument("--max-growth-mb", type=float, help="exit 1 if resident memory grew more after the warm-up")
    a = ap.parse_args()
    a.serve_flags_given = bool(a.serve)
    a.models_dir = None
    a.env = dict(e.split("=", 1) for e in a.env)
    server, log_path, command = None, None, None
    if a.url:
        if not a.pid:
            ap.error("--url needs --pid (the server's process, for its resident memory)")
        url, pid = a.url, a.pid
    else:
        server, url, log_path, command = start_server(a)
        pid = server.pid
    u = urllib.parse.urlparse(url)
    counts, stop = Counts(), threading.Event()
    t_start = time.time()
    samples = [(0.0, 0, 0, rss_bytes(pid))]
    print("%7s %9s %7s %9s" % ("t (s)", "requests", "errors", "RSS (MB)"), flush=True)
    print("%7.0f %9d %7d %9.1f" % (samples[0][:3] + (samples[0][3] / 1e6,)), flush=True)
    threads = [threading.Thread(target=client, args=(i, a, u.hostname, u.port, stop, counts), daemon=True)
               for i in range(a.clients)]
    for t in threads:
        t.start()
    try:
        next_t = a.interval
        while next_t <= a.seconds + 1e-9:
            time.sleep(max(0.0, t_start + next_t - time.time()))
            with counts.lock:
                s = (next_t, counts.requests, counts.errors, rss_bytes(pid))
            samples.append(s)
            print("%7.0f %9d %7d %9.1f" % (s[0], s[1], s[2], s[3] / 1e6), flush=True)
            next_t += a.interval
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=150)
    at_warmup = min((s for s in samples if s[0] >= a.warmup), key=lambda s: s[0], default=samples[-1])
    last = samples[-1]
    growth = (last[3] - at_warmup[3]) / 1e6
    per_request = (last[3] - at_warmup[3]) / max(1, last[1] - at_warmup[1])
    result = {"command": command, "url": url, "clients": a.clients, "seconds": a.seconds, "warmup": a.warmup,
              "keep_alive": a.keep_alive, "max_tokens": a.max_tokens, "prompt_len": a.prompt_len,
              "requests": last[1], "errors": last[2], "last_errors": counts.last_errors, "tokens": counts.tokens,
              "rss_start_mb": samples[0][3] / 1e6, "rss_at_warmup_mb": at_warmup[3] / 1e6, "rss_end_mb": last[3] / 1e6,
              "growth_after_warmup_mb": growth, "bytes_per_request_after_warmup": per_request,
              "slope_after_warmup_mb_per_min": slope_mb_per_min(samples, a.warmup),
              "samples": [{"t": t, "requests": r, "errors": e, "rss": m} for t, r, e, m in samples]}
    print("requests %d, errors %d; RSS %.1f MB at start, %.1f at %.0f s, %.1f at the end: %+.1f MB after the warm-up "
          "(%.0f bytes a request), slope %s MB/min" % (
              result["requests"], result["errors"], result["rss_start_mb"], result["rss_at_warmup_mb"], at_warmup[0],
              result["rss_end_mb"], growth, per_request,
              "%.2f" % result["slope_after_warmup_mb_per_min"] if result["slope_after_warmup_mb_per_min"] is not None else "-"))
    if counts.last_errors:
        print("last errors: %s" % counts.last_errors)
    if a.out:
        with open(a.out, "w") as f:
            json.dump(result, f, indent=1)
    if server:
        server.terminate()
        server.wait(timeout=120)
        os.unlink(log_path)
    if a.models_dir:
        shutil.rmtree(a.models_dir)
    failed = result["errors"] > 0 or (a.max_growth_mb is not None and growth > a.max_growth_mb)
    return 1 if failed and a.max_growth_mb is not None else 0


if __name__ == "__main__":
    sys.exit(main())
