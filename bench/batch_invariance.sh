#!/usr/bin/env bash
# Whether answers served in a crowded batch equal the same requests decoded alone (issue 47): one
# server takes N requests at once (a third seeded sampling at temperature 0.8, the rest greedy),
# more than its slots, so slots are reused and, with a small --kv-cache-memory, sequences are
# pre-empted and recomputed; then a `--mode nonspec` server decodes each request alone, one after
# another (batch-1 plain decoding). Prints how many answers are equal, greedy and seeded.
# usage: bench/batch_invariance.sh EXSPEC OUT_DIR N TOKENS SERVE_ARGS...
# e.g.   bench/batch_invariance.sh build/exspec inv 32 400 --model demo/target --draft demo/draft --dtype bfloat16
#        (add --kv-cache-memory 4M to the SERVE_ARGS for pre-emptions)
set -euo pipefail
cd "$(dirname "$0")/.."
exspec=$1 out=$2 n=$3 tokens=$4
shift 4
py=/usr/bin/python3
. tests/start_server.sh
mkdir -p "$out"
ask() {  # CONCURRENCY FILE: every request against the server on $port, answers as JSON lines
  $py - "$port" "$n" "$tokens" "$1" > "$2" <<'PY'
import http.client, json, sys, threading
port, n, tokens, conc = (int(x) for x in sys.argv[1:5])
prompts = [json.loads(l)["prompt_ids"] for l in open("bench/prompts/trained.jsonl")]
answers = [None] * n
gate = threading.Semaphore(conc)
def one(i):
    body = {"prompt": prompts[i % len(prompts)], "max_tokens": tokens, "ignore_eos": True, "temperature": 0.0}
    if i % 3 == 0:
        body.update(temperature=0.8, seed=1000 + i)
    with gate:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=3600)
        c.request("POST", "/v1/completions", json.dumps(body), {"Content-Type": "application/json"})
        r = json.loads(c.getresponse().read())
        answers[i] = {"index": i, "seeded": i % 3 == 0, "text": r["choices"][0]["text"]}
threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
for t in threads: t.start()
for t in threads: t.join()
for a in answers: print(json.dumps(a))
PY
}
start_server "$exspec" "$out/crowd.log" "$@"
ask "$n" "$out/crowd.jsonl"
preempted=$(curl -s "127.0.0.1:$port/metrics" | awk '/^exspec_preemptions_total/ {print $2}')
stop_server
start_server "$exspec" "$out/alone.log" "$@" --mode nonspec
ask 1 "$out/alone.jsonl"
stop_server
$py - "$out" "$preempted" <<'PY'
import json, sys
out = sys.argv[1]
print(f"pre-emptions in the crowded run: {sys.argv[2] or 0}")
crowd = [json.loads(l) for l in open(f"{out}/crowd.jsonl")]
alone = [json.loads(l) for l in open(f"{out}/alone.jsonl")]
for kind in (False, True):
    pairs = [(c, a) for c, a in zip(crowd, alone) if c["seeded"] == kind]
    same = sum(c["text"] == a["text"] for c, a in pairs)
    print(f"{'seeded' if kind else 'greedy'}: {same} of {len(pairs)} equal to the request decoded alone")
PY
