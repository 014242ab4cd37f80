#!/usr/bin/python3
"""llama.cpp's decoding speed through its own llama-server (v0.5.0, bench/llama_cpp_build.sh):
CLIENTS concurrent clients send the prompts (token ids) to /completion, greedy, N tokens each
(ignore_eos), each client taking the next prompt when its last one is done. Prints
{"clients", "tokens", "seconds", "tok_s", "draft_accepted", "draft_n"}: the generated tokens over
the wall time from the first request to the last answer (the server's load left out).
usage: llama_server_decode.py PORT N CLIENTS "1,2,3" ...
"""
import json
import sys
import threading
import time
import urllib.request

port, n, clients, prompts = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
queue = [[int(t) for t in p.split(",")] for p in prompts]
lock = threading.Lock()
totals = {"tokens": 0, "draft_n": 0, "draft_accepted": 0}


def client():
    while True:
        with lock:
            if not queue:
                return
            ids = queue.pop(0)
        body = json.dumps({"prompt": ids, "n_predict": n, "temperature": 0, "ignore_eos": True, "cache_prompt": False,
                           "samplers": ["top_k"], "top_k": 1}).encode()
        req = urllib.request.Request(f"http://127.0.0.1:{port}/completion", body, {"Content-Type": "application/json"})
        out = json.load(urllib.request.urlopen(req, timeout=600))
        timings = out.get("timings", {})
        with lock:
            totals["tokens"] += int(out.get("tokens_predicted", timings.get("predicted_n", 0)))
            totals["draft_n"] += int(timings.get("draft_n", 0))
            totals["draft_accepted"] += int(timings.get("draft_n_accepted", 0))


t0 = time.monotonic()
threads = [threading.Thread(target=client) for _ in range(clients)]
for t in threads:
    t.start()
for t in threads:
    t.join()
seconds = time.monotonic() - t0
print(json.dumps({"clients": clients, "seconds": seconds, "tok_s": totals["tokens"] / seconds, **totals}))
