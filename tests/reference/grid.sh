#!/usr/bin/env bash
# The reference grid: greedy ids of every serving path, for every architecture and shape family
# (tests/reference/write_grid.py, written without exspec's code), equal to the float64 reference
# that re-runs the whole sequence for every token (tests/reference/hf_reference.py); and
# `exspec check` passes on each checkpoint.
# usage: grid.sh EXSPEC_BINARY WORK_DIR [GRID_ENTRY]
set -euo pipefail
exspec=$1
work=$2
only=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
py=/usr/bin/python3
rm -rf "$work"
mkdir -p "$work"
$py "$here/write_grid.py" --out "$work" ${only:+--only "$only"}
prompts=$work/prompts.jsonl
# Lengths 4, 1, 9 and 17: a padded batch of them has padding in every row but the longest, and a
# chunk of 3 splits all but the shortest.
cat > "$prompts" <<'JSONL'
{"prompt_ids": [1, 5, 9, 13]}
{"prompt_ids": [42]}
{"prompt_ids": [7, 7, 7, 7, 7, 7, 7, 7, 200]}
{"prompt_ids": [299, 0, 128, 64, 32, 16, 8, 4, 3, 250, 251, 252, 253, 254, 255, 256, 100]}
JSONL

# Each path: a name and the flags that select it (the draft is DRAFT, substituted per entry).
paths=(
  "oracle-b1|--oracle --batch 1"
  "nonspec-b1|--mode nonspec --batch 1"
  "nonspec-padded|--mode nonspec --batch 4"
  "inplace-nodraft|--batch 2 --slots 3"
  "inplace-nodraft-chunked|--prefill-chunk 3 --batch 4 --slots 4"
  "inplace-draft|--mode inplace --draft DRAFT --draft-tokens 3 --batch 2 --slots 3"
  "inplace-plain|--mode inplace --draft DRAFT --draft-tokens auto --max-draft-tokens 0 --batch 2 --slots 3"
  "inplace-chunked|--mode inplace --draft DRAFT --draft-tokens 2 --prefill-chunk 3 --batch 4 --slots 4"
  "exspec-draft|--mode exspec --draft DRAFT --draft-tokens 3 --batch 2 --window 4"
)

run_entry() {  # name: every path's ids into $work/NAME/PATH.jsonl, and `exspec check`
  local m=$work/$1 p name flags q qp n
  # One `exspec script` an entry: its ten commands pay libtorch's start-up once (docs/testing.md).
  printf -v q '%q' "$m"
  printf -v qp '%q' "$prompts"
  for p in "${paths[@]}"; do
    name=${p%%|*}
    flags=${p#*|}
    echo "generate --model $q ${flags//DRAFT/$q-draft} --dtype float64 --max-tokens 24 --prompts-file $qp > $q/$name.jsonl 2> $q/$name.err"
  done > "$m/commands.txt"
  echo "check --model $q --max-tokens 24 --prompts-file $qp > $q/check.txt 2>&1" >> "$m/commands.txt"
  local status=0
  "$exspec" script "$m/commands.txt" 2> "$m/script.err" || status=$?
  # 1: some lines failed (named below); more: the script itself died, and the lines after it never ran.
  [ "$status" -le 1 ] || echo "check FAILED: exspec script exited $status" >> "$m/check.txt"
  # A line that failed (the script names it and its status): line i is path i, the last check.
  grep -o 'commands.txt:[0-9]*: [a-z]* exited' "$m/script.err" | cut -d: -f2 | while read -r n; do
    if [ "$n" -le "${#paths[@]}" ]; then
      p=${paths[n - 1]}
      echo "exspec generate failed" > "$m/${p%%|*}.jsonl"
    else
      echo "check FAILED" >> "$m/check.txt"
    fi
  done
}
export -f run_entry
export exspec work prompts
export paths_text
paths_text=$(printf '%s\n' "${paths[@]}")
# Two entries at a time: each exspec process is mostly start-up on these tiny models.
$py -c 'import json, sys; print("\n".join(json.load(open(sys.argv[1]))))' "$work/grid.json" |
  xargs -P "${EXSPEC_JOBS:-2}" -I{} bash -c 'mapfile -t paths <<< "$paths_text"; run_entry "$@"' _ {}

names=$(printf '%s\n' "${paths[@]}" | cut -d'|' -f1 | paste -sd,)
$py "$here/grid_check.py" --grid "$work" --prompts "$prompts" --max-tokens 24 --paths "$names"
