#!/usr/bin/env python3
"""The workloads of bench/proposers.sh, made with the served model's own greedy text (so they
hold for any checkpoint, the demo pair's seeded weights included):

  plain.jsonl   each base prompt S as it is; prediction_ids: the model's greedy answer to S
  repeat.jsonl  S + G, G the model's first --context greedy tokens after S: the answer (the
                next --len tokens) goes on with text the prompt already holds as far as the
                model repeats itself (a document continued, an agent loop, an edit of the
                prompt's text); prediction_ids: that answer

Prints the share of answer tokens whose first lookup proposal (actors/scheduler/proposer.h, n 4..1) is
right, per workload: what prompt lookup can gain on it.

usage: bench/make_repeat_prompts.py --url URL --out DIR [--prompts FILE.jsonl] [--count 16] [--len 64]
                                    [--context 128]
Standard library only; the server must decode plainly or speculate (the answers are the same).
"""
import argparse, http.client, json, os, urllib.parse


def greedy(url, ids, n):
    u = urllib.parse.urlparse(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=600)
    body = {"prompt": ids, "max_tokens": n, "temperature": 0, "ignore_eos": True, "return_token_ids": True}
    conn.request("POST", "/v1/completions", json.dumps(body), {"Content-Type": "application/json"})
    r = conn.getresponse()
    data = json.loads(r.read())
    if r.status != 200:
        raise SystemExit("greedy request failed: %d %s" % (r.status, data))
    return data["choices"][0]["token_ids"]


def first_lookup(t, max_n=4):
    """The first token prompt lookup proposes after t (None: no match)."""
    for n in range(max_n, 0, -1):
        for i in range(len(t) - n - 1, -1, -1):
            if len(t) >= n + 1 and t[i:i + n] == t[len(t) - n:]:
                return t[i + n]
    return None


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--url", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--prompts", default=os.path.join(here, "prompts", "english.jsonl"))
    ap.add_argument("--count", type=int, default=16)
    ap.add_argument("--len", type=int, default=64)
    ap.add_argument("--context", type=int, default=128)
    a = ap.parse_args()
    with open(a.prompts) as f:
        base = [json.loads(l)["prompt_ids"] for l in f if l.strip()][: a.count]
    os.makedirs(a.out, exist_ok=True)
    hits = {"plain": [0, 0], "repeat": [0, 0]}
    with open(os.path.join(a.out, "plain.jsonl"), "w") as plain, open(os.path.join(a.out, "repeat.jsonl"), "w") as rep:
        for s in base:
            g = greedy(a.url, s, a.context + a.len)
            for name, f, prompt, answer in (("plain", plain, s, g[: a.len]), ("repeat", rep, s + g[: a.context], g[a.context:])):
                f.write(json.dumps({"prompt_ids": prompt, "prediction_ids": answer}) + "\n")
                for j in range(len(answer)):
                    hits[name][0] += first_lookup(prompt + answer[:j]) == answer[j]
                    hits[name][1] += 1
    print(json.dumps({"prompts": len(base), "first_lookup_right": {k: round(h / max(1, n), 3) for k, (h, n) in hits.items()}}))


if __name__ == "__main__":
    main()
