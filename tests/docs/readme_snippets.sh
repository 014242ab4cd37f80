#!/usr/bin/env bash
# The README's first screen, run as a newcomer would: a real `exspec serve` on a generated pair
# named "demo", then the README's own curl and openai-client snippets (extracted from the
# markdown) against it. The Node snippet runs the official openai npm package (tests/http/fetch.sh);
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
"$exspec" make-model --arch llama --preset tiny --seed 1 --out "$work/demo" 2> /dev/null
"$exspec" make-model --draft-of "$work/demo" --layers 1 --out "$work/demo-draft" 2> /dev/null
"$exspec" serve --model "$work/demo" --draft "$work/demo-draft" --port 0 2> "$work/serve.err" &
server=$!
trap 'kill "$server" 2> /dev/null; wait "$server" 2> /dev/null || true' EXIT
port=
for _ in $(seq 600); do
  port=$(sed -n 's|.*listening on http://127.0.0.1:\([0-9]*\).*|\1|p' "$work/serve.err")
  [ -n "$port" ] && curl -sf "127.0.0.1:$port/health" > /dev/null && break
  kill -0 "$server" 2> /dev/null || { cat "$work/serve.err"; exit 1; }
  sleep 0.1
done
curl -sf "127.0.0.1:$port/health" > /dev/null || { echo "the server did not get ready"; cat "$work/serve.err"; exit 1; }
$py "$root/tests/docs/readme_snippets.py" extract "$root/README.md" "$work" "$port"
for s in curl-completion curl-chat curl-chat-stream; do
  timeout 60 bash "$work/$s.sh" > "$work/$s.out"
done
ln -s "$root/tests/http/node_modules" "$work/node_modules"  # where the snippet's `import "openai"` looks
timeout 60 node "$work/node-chat-stream.mjs" > "$work/node-chat-stream.out"
$py -m py_compile "$work/python-chat-stream.py"
$py "$root/tests/docs/readme_snippets.py" judge "$work"
