#!/usr/bin/env python3
"""Requests/s and p50/p99 latency of short completions against a running exspec server, at a
few client concurrencies, plus the server's own overhead per request (time outside the engine,
from the Server-Timing header: parsing, tokenizing, detokenizing, JSON).

usage: bench/http_bench.py [--url http://127.0.0.1:8000] [--model NAME] [--clients 1,16]
                           [--requests 64] [--max-tokens 16]
Standard library only. Each client keeps one keep-alive connection.
"""
import argparse, http.client, json, statistics, threading, time, urllib.parse


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100.0 * (len(xs) - 1))))]


def run(url, model, clients, total, max_tokens):
    u = urllib.parse.urlparse(url)
    lat, overhead, engine, errors = [], [], [], []
    lock = threading.Lock()
    counter = [0]

    def client(cid):
        conn = http.client.HTTPConnection(u.hostname, u.port or 80, timeout=300)
        while True:
            with lock:
                if counter[0] >= total:
                    break
                i = counter[0]
                counter[0] += 1
            body = json.dumps({"model": model, "prompt": "Request %d: tell me something short" % i,
                               "max_tokens": max_tokens})
            t0 = time.perf_counter()
            conn.request("POST", "/v1/completions", body, {"Content-Type": "application/json"})
            r = conn.getresponse()
            data = r.read()
            dt = time.perf_counter() - t0
            with lock:
                if r.status != 200:
                    errors.append((r.status, data[:200]))
                    continue
                lat.append(dt)
                timing = dict(p.strip().split(";dur=") for p in r.getheader("Server-Timing", "").split(",") if ";dur=" in p)
                overhead.append(float(timing.get("server", "nan")) / 1e3)
                engine.append(float(timing.get("engine", "nan")) / 1e3)
        conn.close()

    threads = [threading.Thread(target=client, args=(c,)) for c in range(clients)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    return {
        "clients": clients, "requests": len(lat), "errors": len(errors), "wall_s": round(wall, 3),
        "requests_per_s": round(len(lat) / wall, 2),
        "p50_ms": round(pct(lat, 50) * 1e3, 1), "p99_ms": round(pct(lat, 99) * 1e3, 1),
        "server_overhead_ms_mean": round(statistics.mean(overhead) * 1e3, 3),
        "server_overhead_ms_p99": round(pct(overhead, 99) * 1e3, 3),
        "engine_ms_p50": round(pct(engine, 50) * 1e3, 1),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", default="http://127.0.0.1:8000")
    ap.add_argument("--model", default="demo")
    ap.add_argument("--clients", default="1,16")
    ap.add_argument("--requests", type=int, default=64)
    ap.add_argument("--max-tokens", type=int, default=16)
    a = ap.parse_args()
    run(a.url, a.model, 2, 4, a.max_tokens)  # warm-up
    for c in [int(x) for x in a.clients.split(",")]:
        print(json.dumps(run(a.url, a.model, c, max(a.requests, c), a.max_tokens)), flush=True)


if __name__ == "__main__":
    main()
