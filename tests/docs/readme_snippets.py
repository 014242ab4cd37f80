#!/usr/bin/python3
"""The README's "Talk to it" snippets, taken from the markdown itself so they cannot drift.

  readme_snippets.py extract README.md DIR PORT   writes DIR/NAME.sh|.mjs|.py for each
      `<!-- snippet: NAME -->` block, localhost:8000 replaced by 127.0.0.1:PORT
  readme_snippets.py judge DIR                    checks what the snippets printed (DIR/NAME.out)
  readme_snippets.py english PORT DICT            the served demo pair answers English prompts in
      English: at least 80 % of the words of its greedy answers, of its sampled ones (temperature
      0.8), and of those with the served defaults (no sampling field) are in the word list DICT
Exit status: 0 fine, 1 a snippet missing or its output wrong (printed)."""
import json, os, re, sys, urllib.request

EXT = {"sh": ".sh", "js": ".mjs", "python": ".py"}
WANT = ["curl-completion", "curl-chat", "curl-chat-stream", "node-chat-stream", "python-chat-stream"]


def extract(readme, out, port):
    with open(readme) as f:
        text = f.read()
    found = re.findall(r"<!-- snippet: ([\w-]+) -->\n```(\w+)\n(.*?)```", text, re.S)
    names = [n for n, _, _ in found]
    if sorted(names) != sorted(WANT):
        print(f"snippets in {readme}: {names}, expected {WANT}")
        return 1
    for name, lang, body in found:
        with open(os.path.join(out, name + EXT[lang]), "w") as f:
            f.write(body.replace("localhost:8000", f"127.0.0.1:{port}"))
    return 0


def judge(out):
    read = lambda n: open(os.path.join(out, n + ".out")).read()
    problems = []
    c = json.loads(read("curl-completion"))
    if c.get("object") != "text_completion" or c["usage"]["completion_tokens"] not in range(1, 17):
        problems.append(f"curl-completion: {c}")
    chat = json.loads(read("curl-chat"))
    answer = chat["choices"][0]["message"]
    if chat.get("object") != "chat.completion" or answer["role"] != "assistant" or not answer["content"]:
        problems.append(f"curl-chat: {chat}")
    # The README shows this answer as one that does not loop (the demo's sampling defaults).
    lines = [l.strip() for l in (answer["content"] or "").splitlines() if l.strip()]
    if any(lines.count(l) >= 3 for l in lines):
        problems.append(f"curl-chat: a line repeats 3 times: {answer['content']!r}")
    events = [l[len("data: "):] for l in read("curl-chat-stream").splitlines() if l.startswith("data: ")]
    streamed = "".join(json.loads(e)["choices"][0]["delta"].get("content") or "" for e in events[:-1])
    if not events or events[-1] != "[DONE]" or streamed != answer["content"]:
        problems.append(f"curl-chat-stream: {len(events)} events, text {streamed!r}, chat {answer['content']!r}")
    # The same seed: the client's streamed answer is the chat answer, byte for byte.
    if read("node-chat-stream") != answer["content"]:
        problems.append(f"node-chat-stream: {read('node-chat-stream')!r}, chat {answer['content']!r}")
    for p in problems:
        print("WRONG " + p)
    print(f"snippets: {4 - len(problems)} passed, {len(problems)} failed (python-chat-stream compiled only)")
    return 1 if problems else 0


ENGLISH_PROMPTS = ["Once upon a time", "The house was quiet and", "My favourite food is", "Hello",
                   "What is the capital of France?", "The weather today is"]


def english(port, dictionary):
    words = {w.strip().lower() for w in open(dictionary, encoding="utf-8", errors="ignore")}
    failed = 0
    # None: no sampling field, so the demo's generation_config.json defaults (what a client gets).
    for temperature in (0.0, 0.8, None):
        body = {"model": "demo", "prompt": ENGLISH_PROMPTS, "max_tokens": 64, "seed": 1}
        if temperature is not None:
            body["temperature"] = temperature
        req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/completions", json.dumps(body).encode(),
                                     {"Content-Type": "application/json"})
        answers = [c["text"] for c in json.load(urllib.request.urlopen(req, timeout=120))["choices"]]
        said = [w for a in answers for w in re.findall(r"[A-Za-z]+(?:'[A-Za-z]+)?", a)]
        known = sum(w.lower() in words for w in said)
        share = known / max(len(said), 1)
        how = f"temperature {temperature}" if temperature is not None else "the served defaults"
        print(f"english: {how}: {known} of {len(said)} words in {dictionary} ({share:.0%})")
        if len(said) < 50 or share < 0.8:
            failed += 1
            print("WRONG english: " + " | ".join(repr(a) for a in answers))
    return 1 if failed else 0


if __name__ == "__main__":
    if sys.argv[1] == "english":
        sys.exit(english(sys.argv[2], sys.argv[3]))
    if sys.argv[1] == "extract":
        sys.exit(extract(sys.argv[2], sys.argv[3], sys.argv[4]))
    sys.exit(judge(sys.argv[2]))
