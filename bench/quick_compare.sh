#!/usr/bin/env bash
# Two exspec binaries (before and after a change) through `exspec bench --quick` in turns: ROUNDS
# rounds (even, at least 4), the order flipped each round (before-after, after-before, ...) so that
# a drift of the machine falls on both alike, never both at once. The verdict is
# bench/quick_verdict.py's: a setting is "slower" only when the verdict repeats in every pass of
# two rounds, beyond the binaries' own spread; and every run of both binaries must match the
# oracle as often as the other (exact_match).
# Run from the repository root (the prompt sets and models/ are found there); BENCH_ARGS go to
# both, e.g. --threads 2.
# usage: bench/quick_compare.sh BEFORE AFTER OUT_DIR ROUNDS [BENCH_ARGS...]
# e.g.   bench/quick_compare.sh /tmp/prev/build/exspec build/exspec /tmp/qc 4
set -euo pipefail
before=$1 after=$2 out=$3 rounds=$4
shift 4
if [ "$rounds" -lt 4 ] || [ $((rounds % 2)) -ne 0 ]; then
  echo "quick_compare.sh: ROUNDS must be even and at least 4 (the verdict must repeat in two passes)" >&2
  exit 2
fi
mkdir -p "$out"
for round in $(seq "$rounds"); do
  order="before after"
  [ $((round % 2)) -eq 0 ] && order="after before"
  for which in $order; do
    bin=$before
    [ "$which" = after ] && bin=$after
    echo "round $round: $which ($bin)" >&2
    "$bin" bench --quick --out "$out/$which-r$round" "$@" 2> "$out/$which-r$round.log"
  done
done
exec /usr/bin/python3 "$(dirname "$0")/quick_verdict.py" "$out" "$rounds"
