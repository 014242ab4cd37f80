#!/usr/bin/env bash
# exspec against llama.cpp v0.5.0 (its own llama-server, bench/llama_cpp_build.sh) on the same
# GGUF files of the 150M llama shape: the m150t pair (docs/performance.md: a 150M target whose
# one-layer draft agrees like a good real pair) written by tests/gguf/write_gguf.py as Q8_0 and as
# Q4_K_M. Greedy, N tokens a prompt (EOS ignored on both sides), THREADS threads each. Settings
# per file and client count C (1, 8, 16), those named in SETTINGS (environment; default
# "plain best"):
#   plain    exspec's plain decoding as served: its default mode (in place) at --batch C without a
#            draft, against llama-server -np C without one;
#   nonspec  the paper's NonSpec baseline (--mode nonspec: rectangular caches, actors/paper/), the
#            plain row of these tables before 2026-11-30, against the same llama-server;
#   best     exspec's default mode (in place, auto K) with the draft at --batch C, against the best
#            of llama-server -np C without the draft and with it (--spec-type draft-simple
#            --spec-draft-n-max 4 --spec-draft-p-min 0: without --spec-type the draft is loaded
#            and never used).
# C clients share max(4, 2C) prompts (llama.cpp: C concurrent HTTP clients; exspec: generate
# --batch C, decoding only: the load is left out of both). Each round runs every setting of both
# in turns, the order flipped each round; then per setting the median tok/s of each and the
# median of the per-round ratios exspec / llama.cpp with their range. BUILD: the llama.cpp build
# (native, or avx2 for an AVX2-only CPU's path; set EXSPEC_ISA=avx2 for exspec's to match).
# TYPES (environment; default "q8_0 q4_k_m") names the files, any --type of tests/gguf/write_gguf.py
# (q4_0, q5_k, iq4_xs, ...: every tensor in that type, for one type's speed, issue 70), and
# CLIENTS (default "1 8 16") the client counts. BEFORE (environment, optional): another exspec
# binary (the one before a change) whose plain decoding (the plain setting's) runs as a third side in the same turns,
# with the ratio exspec / BEFORE per round. PAIR (environment, optional): a pair of Hugging Face
# directories PAIR and PAIR-draft in place of m150t (issue 72: a made qwen3moe target and its
# draft, `make-model --arch qwen3moe --preset moe`), written as GGUF into WORK_DIR beside them.
# usage: bench/llama_cpp_compare.sh EXSPEC WORK_DIR ROUNDS [N] [THREADS] [BUILD]
# e.g.   flock /tmp/cpu.lock bench/llama_cpp_compare.sh build/exspec /tmp/lcc 3 128 2 native
#        TYPES="q4_0 q5_k iq4_xs" CLIENTS=1 SETTINGS=plain bench/llama_cpp_compare.sh build/exspec /tmp/lcc 1 64
#        BEFORE=/tmp/exspec-old TYPES=q4_0 CLIENTS=1 bench/llama_cpp_compare.sh build/exspec /tmp/lcc 5 64
set -euo pipefail
exspec=$1 work=$2 rounds=$3 n=${4:-128} threads=${5:-2} build=${6:-native}
read -r -a types <<< "${TYPES:-q8_0 q4_k_m}"
read -r -a clients <<< "${CLIENTS:-1 8 16}"
read -r -a settings <<< "${SETTINGS:-plain best}"
wants() { [[ " ${settings[*]} " == *" $1 "* ]]; }
root=$(cd "$(dirname "$0")/.." && pwd)
server=$root/third_party/llama.cpp-v0.5.0/build-$build/bin/llama-server
[ -x "$server" ] || { echo "build llama.cpp v0.5.0 first: bench/llama_cpp_build.sh $build"; exit 1; }
mkdir -p "$work"
if [ -n "${PAIR:-}" ]; then
  m=$(basename "$PAIR")
  [ -e "$work/$m" ] || ln -s "$(cd "$PAIR" && pwd)" "$work/$m"
  [ -e "$work/$m-draft" ] || ln -s "$(cd "$PAIR-draft" && pwd)" "$work/$m-draft"
else
  m=m150t
  [ -d "$work/m150t" ] || "$exspec" make-model --arch llama --preset 150m --seed 1 --damp-std 0.0001 --out "$work/m150t"
  [ -d "$work/m150t-draft" ] || "$exspec" make-model --draft-of "$work/m150t" --layers 1 --out "$work/m150t-draft"
fi
pair=$m
for type in "${types[@]}"; do
  for m in "$pair" "$pair-draft"; do
    [ -f "$work/$m-$type.gguf" ] || /usr/bin/python3 "$root/tests/gguf/write_gguf.py" "$work/$m" "$work/$m-$type.gguf" --type $type
  done
done
# 32 prompts of 8 to 15 byte-level ids (the made tokenizer spells ids 0..257).
mapfile -t prompts < <(/usr/bin/python3 -c '
import random
r = random.Random(7)
for i in range(32): print(",".join(str(r.randrange(32, 127)) for _ in range(8 + i % 8)))')
count() { echo $(( $1 * 2 > 4 ? $1 * 2 : 4 )); }
ours() {  # TYPE CLIENTS [ARGS...]: tok/s (of EXSPEC_BIN, default the EXSPEC argument)
  local type=$1 c=$2 args=()
  shift 2
  for p in "${prompts[@]:0:$(count "$c")}"; do args+=(--prompt-ids "$p"); done
  "${EXSPEC_BIN:-$exspec}" generate --model "$work/$pair-$type.gguf" "$@" --dtype int8 --batch "$c" --max-tokens "$n" --ignore-eos \
    --generation-config none --torch-threads "$threads" --stats "$work/stats.json" "${args[@]}" > /dev/null 2>&1
  /usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["tokens_per_s"])' "$work/stats.json"
}
theirs() {  # TYPE CLIENTS [SERVER ARGS...]: tok/s of llama-server, started for this setting alone
  local type=$1 c=$2 port=$((18000 + RANDOM % 1000))
  shift 2
  "$server" -m "$work/$pair-$type.gguf" "$@" -t "$threads" -np "$c" -c $((c * (n + 64))) --port "$port" --no-webui \
    > "$work/server.log" 2>&1 &
  local pid=$!
  for _ in $(seq 600); do curl -sf "http://127.0.0.1:$port/health" > /dev/null 2>&1 && break; sleep 0.1; done
  /usr/bin/python3 "$root/bench/llama_server_decode.py" "$port" "$n" "$c" "${prompts[@]:0:$(count "$c")}" > "$work/theirs.json"
  kill "$pid"; wait "$pid" 2> /dev/null || true
  /usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["tok_s"])' "$work/theirs.json"
}
draft_args() { echo -md "$work/$pair-draft-$1.gguf" --spec-type draft-simple --spec-draft-n-max 4 --spec-draft-p-min 0; }
: > "$work/runs.tsv"
for round in $(seq 1 "$rounds"); do
  for type in "${types[@]}"; do
    for c in "${clients[@]}"; do
      sides=(exspec llama)
      [ $((round % 2)) -eq 0 ] && sides=(llama exspec)
      if [ -n "${BEFORE:-}" ]; then  # three sides: each first, second and third in turn
        all=(exspec before llama) k=$((round % 3))
        sides=("${all[@]:k}" "${all[@]:0:k}")
      fi
      for side in "${sides[@]}"; do
        if [ $side = before ]; then
          echo -e "$round\t$type\t$c\tplain\tbefore\t$(EXSPEC_BIN=$BEFORE ours $type "$c")" >> "$work/runs.tsv"
        elif [ $side = exspec ]; then
          ! wants plain || echo -e "$round\t$type\t$c\tplain\texspec\t$(ours $type "$c")" >> "$work/runs.tsv"
          ! wants nonspec || echo -e "$round\t$type\t$c\tnonspec\texspec\t$(ours $type "$c" --mode nonspec)" >> "$work/runs.tsv"
          ! wants best || echo -e "$round\t$type\t$c\tbest\texspec\t$(ours $type "$c" --draft "$work/$pair-draft-$type.gguf")" >> "$work/runs.tsv"
        else
          plain=$(theirs $type "$c")
          for setting in plain nonspec; do
            ! wants $setting || echo -e "$round\t$type\t$c\t$setting\tllama\t$plain" >> "$work/runs.tsv"
          done
          if wants best; then
            # shellcheck disable=SC2046
            spec=$(theirs $type "$c" $(draft_args $type))
            echo -e "$round\t$type\t$c\tbest\tllama\t$(/usr/bin/python3 -c "print(max($plain, $spec))")\t$plain\t$spec" >> "$work/runs.tsv"
          fi
        fi
      done
    done
    echo "round $round $type done" >&2
  done
done
/usr/bin/python3 - "$work/runs.tsv" <<'PY'
import collections, statistics, sys
runs = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    f = line.rstrip("\n").split("\t")
    runs[(f[1], int(f[2]), f[3])].setdefault(f[4], {})[int(f[0])] = float(f[5])
print("| file | clients | setting | exspec tok/s | llama.cpp v0.5.0 tok/s | exspec / llama.cpp (range) |")
print("|---|--:|---|--:|--:|--:|")
for (t, c, s), sides in sorted(runs.items()):
    ratios = [sides["exspec"][r] / sides["llama"][r] for r in sides["exspec"] if r in sides["llama"]]
    med = statistics.median
    name = {"plain": "plain decoding", "nonspec": "the paper's NonSpec (--mode nonspec)",
            "best": "exspec default mode vs llama.cpp's best"}[s]
    print("| %s | %d | %s | %.1f | %.1f | %.2fx (%.2f-%.2f) |" % (t, c, name, med(sides["exspec"].values()),
                                                             med(sides["llama"].values()), med(ratios), min(ratios), max(ratios)))
    if "before" in sides:
        before = [sides["exspec"][r] / sides["before"][r] for r in sides["exspec"] if r in sides["before"]]
        print("| %s | %d | plain decoding, BEFORE | %.1f | | exspec / BEFORE %.2fx (%.2f-%.2f) |" % (
            t, c, med(sides["before"].values()), med(before), min(before), max(before)))
PY
