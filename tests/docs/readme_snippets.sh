#!/usr/bin/env bash
# The README's first screen, run as a newcomer would: a real `exspec serve` with no --model, which
# serves the trained demo pair shipped in demo/ as "demo", then the README's own curl and
# openai-client snippets (extracted from the markdown) against it, and the demo pair's promise:
# greedy, sampled and default answers to English prompts are English words (/usr/share/dict, wamerican). The Node snippet runs the official openai npm package (tests/http/fetch.sh);
# Debian has no Python openai package, so the Python snippet is byte-compiled, not run.
# usage: readme_snippets.sh EXSPEC_BINARY WORK_DIR
set -euo pipefail
exspec=$1
work=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
py=/usr/bin/python3
rm -rf "$work"
mkdir -p "$work"
[ -f "$root/tests/http/node_modules/openai/package.json" ] || { echo "run tests/http/fetch.sh first (scripts/test does)"; exit 1; }
[ -f /usr/share/dict/american-english ] || { echo "no /usr/share/dict/american-english: run scripts/setup (wamerican)"; exit 1; }
. "$root/tests/start_server.sh"
export EXSPEC_DEMO_DIR="$root/demo"
start_server "$exspec" "$work/serve.err"
grep -q "serving the trained demo pair" "$work/serve.err" || { cat "$work/serve.err"; exit 1; }
$py "$root/tests/docs/readme_snippets.py" english "$port" /usr/share/dict/american-english
$py "$root/tests/docs/readme_snippets.py" extract "$root/README.md" "$work" "$port"
for s in curl-completion curl-chat curl-chat-stream; do
  timeout 60 bash "$work/$s.sh" > "$work/$s.out"
done
ln -s "$root/tests/http/node_modules" "$work/node_modules"  # where the snippet's `import "openai"` looks
timeout 60 node "$work/node-chat-stream.mjs" > "$work/node-chat-stream.out"
$py -m py_compile "$work/python-chat-stream.py"
$py "$root/tests/docs/readme_snippets.py" judge "$work"
