#!/usr/bin/env python3
"""A multi-turn chat benchmark: each turn resends the whole history (as chat clients and agents
do) through /v1/chat/completions, streamed, greedy. Reports the time to first token (TTFT) of the
first turns and of the later ones (median, mean, max, in ms), and every answer's text, so that
two servers can be compared (bench/multiturn.sh: the prefix cache on and off).

usage: bench/multiturn.py --url URL [--conversations 4] [--turns 4] [--history-chars 1200]
                          [--output-len 32] [--out result.json] [--label TEXT]
The first user message of each conversation is about --history-chars characters of text; later
user messages are one short sentence. Conversations run one after another. Standard library only.
"""
import argparse, http.client, json, statistics, time, urllib.parse

WORDS = ("the river ran past old mills and quiet farms while the evening light fell over fields of "
         "barley and the people of the valley gathered their tools and walked home singing").split()


def text_of(seed, chars):
    out, i = [], seed
    while sum(len(w) + 1 for w in out) < chars:
        out.append(WORDS[(i * 7 + len(out) * 3) % len(WORDS)])
        i += 1
    return " ".join(out)


def turn(url, messages, n):
    u = urllib.parse.urlparse(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=600)
    body = {"messages": messages, "max_tokens": n, "temperature": 0, "stream": True, "ignore_eos": True}
    t0 = time.perf_counter()
    conn.request("POST", "/v1/chat/completions", json.dumps(body), {"Content-Type": "application/json"})
    r = conn.getresponse()
    if r.status != 200:
        raise SystemExit("turn failed: %d %s" % (r.status, r.read()[:300]))
    ttft, text = None, ""
    for line in r:
        line = line.strip()
        if not line.startswith(b"data: ") or line == b"data: [DONE]":
            continue
        delta = json.loads(line[6:])["choices"][0]["delta"].get("content")
        if delta:
            ttft = ttft or time.perf_counter() - t0
            text += delta
    conn.close()
    return ttft, text


def stats(xs):
    return {"median": round(statistics.median(xs) * 1e3, 1), "mean": round(statistics.mean(xs) * 1e3, 1),
            "max": round(max(xs) * 1e3, 1)}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--url", required=True)
    ap.add_argument("--conversations", type=int, default=4)
    ap.add_argument("--turns", type=int, default=4)
    ap.add_argument("--history-chars", type=int, default=1200)
    ap.add_argument("--output-len", type=int, default=32)
    ap.add_argument("--out", default="")
    ap.add_argument("--label", default="")
    a = ap.parse_args()
    first, later, answers, ttfts = [], [], [], []
    for c in range(a.conversations):
        messages = [{"role": "user", "content": "Read this and answer briefly. " + text_of(c, a.history_chars)}]
        for t in range(a.turns):
            ttft, text = turn(a.url, messages, a.output_len)
            (first if t == 0 else later).append(ttft)
            ttfts.append(round(ttft * 1e3, 1))
            answers.append(text)
            messages += [{"role": "assistant", "content": text}, {"role": "user", "content": "And then what happened %d?" % t}]
    result = {"label": a.label, "conversations": a.conversations, "turns": a.turns, "history_chars": a.history_chars,
              "ttft_first_turn_ms": stats(first), "ttft_later_turns_ms": stats(later), "ttft_ms": ttfts, "answers": answers}
    print(json.dumps({k: v for k, v in result.items() if k not in ("answers", "ttft_ms")}))
    if a.out:
        with open(a.out, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
