#!/usr/bin/env bash
# Upload and download time of one file of MIB MiB through a server on the SQLite store (content
# in DATA_DIR/files) and through a replica on the PostgreSQL store (content in a bytea column):
# what keeping file contents in the database costs. Median of REPEATS. Hold the CPU lock.
#
#   bench/file_store_bench.sh [MIB=50] [REPEATS=3]
set -euo pipefail
cd "$(dirname "$0")/.."
mib=${1:-50}; repeats=${2:-3}
work=$(mktemp -d /tmp/exspec-file-bench-XXXXXX)
chmod 755 "$work"
export BASE_PORT=${BASE_PORT:-18720}
trap 'scripts/replicas down "$work/run" > /dev/null 2>&1 || true; rm -rf "$work"' EXIT
/usr/bin/python3 -c "
import json, sys
line = json.dumps({'custom_id': 'x', 'method': 'POST', 'url': '/v1/completions', 'body': {'prompt': 'y' * 900}})
n = $mib * 1048576 // (len(line) + 1)
sys.stdout.write(''.join(line[:-3] + str(i) + '\"}}\n' for i in range(n)))" > "$work/big.jsonl"
bytes=$(stat -c %s "$work/big.jsonl")

time_it() { local t0; t0=$(date +%s.%N); "$@" > /dev/null; echo "$(date +%s.%N) - $t0" | bc; }
median() { sort -g | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.3f s (min %.3f, max %.3f)", m, a[1], a[NR]}'; }

measure() {  # name, port
  local up=() down=() fid
  for r in $(seq 1 "$repeats"); do
    local t0; t0=$(date +%s.%N)
    fid=$(curl -fs "http://127.0.0.1:$2/v1/files" -F purpose=batch -F file=@"$work/big.jsonl" |
          /usr/bin/python3 -c "import json,sys; print(json.load(sys.stdin)['id'])")
    up+=("$(echo "$(date +%s.%N) - $t0" | bc)")
    down+=("$(time_it curl -fs -o "$work/back.jsonl" "http://127.0.0.1:$2/v1/files/$fid/content")")
    cmp -s "$work/big.jsonl" "$work/back.jsonl" || { echo "$1: the download differs" >&2; exit 1; }
  done
  echo "$1: $bytes bytes: upload $(printf '%s\n' "${up[@]}" | median), download $(printf '%s\n' "${down[@]}" | median)"
}

limits="--max-body-bytes $(( bytes + 1048576 ))"
build/exspec serve --port "$BASE_PORT" --data-dir "$work/sqlite" --cache-dir "$work/cache" $limits > "$work/s.log" 2>&1 &
pid=$!
for _ in $(seq 1 1200); do curl -fs -o /dev/null "http://127.0.0.1:$BASE_PORT/health" && break; sleep 0.1; done
measure sqlite "$BASE_PORT"
kill "$pid"; wait "$pid" || true
scripts/replicas up "$work/run" 1 --cache-dir "$work/cache" $limits > /dev/null
measure postgresql "$(( BASE_PORT + 1 ))"
