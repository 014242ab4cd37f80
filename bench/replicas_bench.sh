#!/usr/bin/env bash
# Batch throughput with one and with two replicas behind HAProxy on one PostgreSQL job store
# (scripts/replicas), and with the SQLite store for reference. Each run: upload LINES completion
# lines (max_tokens TOKENS) through the balancer, create a batch, time create -> completed.
# Prints one row per run and the median of each configuration; also the mean claim time of the
# shared store (exspec_batch_claim_seconds). Hold the CPU lock while it runs.
#
#   bench/replicas_bench.sh [LINES=96] [TOKENS=16] [REPEATS=3]
set -euo pipefail
cd "$(dirname "$0")/.."
lines=${1:-96}; tokens=${2:-16}; repeats=${3:-3}
work=$(mktemp -d /tmp/exspec-replicas-bench-XXXXXX)
chmod 755 "$work"  # PostgreSQL and HAProxy run as nobody under it when we are root
export BASE_PORT=${BASE_PORT:-18700}
lb="http://127.0.0.1:$BASE_PORT"
trap 'scripts/replicas down "$work/run" > /dev/null 2>&1 || true; rm -rf "$work"' EXIT

/usr/bin/python3 - "$lines" "$tokens" > "$work/in.jsonl" <<'EOF'
import json, sys
n, t = int(sys.argv[1]), int(sys.argv[2])
for i in range(n):
    text = f"Request {i}: tell me about" + " the weather" * (i % 5)
    print(json.dumps({"custom_id": f"r{i}", "method": "POST", "url": "/v1/completions",
                      "body": {"model": "demo", "prompt": text, "max_tokens": t}}))
EOF

json_field() { /usr/bin/python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }

one_batch() {  # base URL -> seconds from create to completed
  local url=$1 fid bid t0 st
  fid=$(curl -fs "$url/v1/files" -F purpose=batch -F file=@"$work/in.jsonl" | json_field "d['id']")
  t0=$(date +%s.%N)
  bid=$(curl -fs "$url/v1/batches" -H 'Content-Type: application/json' \
        -d "{\"input_file_id\":\"$fid\",\"endpoint\":\"/v1/completions\",\"completion_window\":\"24h\"}" | json_field "d['id']")
  while true; do
    st=$(curl -fs "$url/v1/batches/$bid" | json_field "d['status']+' '+str(d['request_counts']['completed'])")
    case "$st" in completed*) break ;; failed*|cancelled*) echo "batch $st" >&2; exit 1 ;; esac
    sleep 0.05
  done
  [ "${st#* }" = "$lines" ] || { echo "completed ${st#* } of $lines" >&2; exit 1; }
  echo "$(date +%s.%N) - $t0" | bc
}

claim_stats() {  # n replicas -> "claims mean_ms"
  local n=$1 sum=0 count=0 s c
  for i in $(seq 1 "$n"); do
    s=$(curl -fs "http://127.0.0.1:$(( BASE_PORT + i ))/metrics" | awk '/^exspec_batch_claim_seconds_sum/ {print $2}')
    c=$(curl -fs "http://127.0.0.1:$(( BASE_PORT + i ))/metrics" | awk '/^exspec_batch_claim_seconds_count/ {print $2}')
    sum=$(echo "$sum + $s" | bc -l); count=$(( count + c ))
  done
  echo "$count claims, mean $(echo "scale=2; 1000 * $sum / $count" | bc -l) ms"
}

median() { sort -g | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.2f (min %.2f, max %.2f)", m, a[1], a[NR]}'; }

run_config() {  # name, replicas, threads per replica
  local name=$1 n=$2 threads=$3 rates=()
  for r in $(seq 1 "$repeats"); do
    scripts/replicas up "$work/run" "$n" --threads "$threads" --cache-dir "$work/cache" > /dev/null
    s=$(one_batch "$lb")
    rate=$(echo "scale=3; $lines / $s" | bc -l)
    echo "$name run $r: $lines lines in $s s = $rate lines/s; $(claim_stats "$n")"
    rates+=("$rate")
    scripts/replicas down "$work/run" > /dev/null
    rm -rf "$work/run"
  done
  echo "$name: median lines/s $(printf '%s\n' "${rates[@]}" | median)"
}

sqlite_config() {  # reference: one server on the SQLite store, the same threads as one replica
  local threads=$1 rates=()
  for r in $(seq 1 "$repeats"); do
    build/exspec serve --port "$BASE_PORT" --data-dir "$work/sqlite" --threads "$threads" --cache-dir "$work/cache" \
      > "$work/sqlite.log" 2>&1 &
    local pid=$!
    for _ in $(seq 1 1200); do curl -fs -o /dev/null "$lb/health" && break; sleep 0.1; done
    s=$(one_batch "$lb")
    rate=$(echo "scale=3; $lines / $s" | bc -l)
    echo "sqlite-1x$threads run $r: $lines lines in $s s = $rate lines/s"
    rates+=("$rate")
    kill "$pid"; wait "$pid" || true
    rm -rf "$work/sqlite"
  done
  echo "sqlite-1x$threads: median lines/s $(printf '%s\n' "${rates[@]}" | median)"
}

echo "replicas bench: $lines lines, max_tokens $tokens, demo pair (float32, exspec), $(nproc) cores, $repeats runs each"
sqlite_config 2
run_config "pg-1x1" 1 1
run_config "pg-1x2" 1 2
run_config "pg-2x1" 2 1
