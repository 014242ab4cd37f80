#!/usr/bin/env bash
# exspec says at start how the forwards' threads wait (docs/performance.md#threads): libgomp's
# default with a hint for shared cores, and whatever OMP_WAIT_POLICY or GOMP_SPINCOUNT set.
# usage: thread_wait.sh EXSPEC_BINARY MODEL_DIR
set -euo pipefail
exspec=$1
model=$2
said() { env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT "$@" "$exspec" generate --model "$model" --prompt-ids 1,2,3 \
           --max-tokens 2 2>&1 > /dev/null | grep "^exspec: threads wait" || echo "(no line)"; }
expect() {
  local got
  got=$(said "${@:2}")
  [[ "$got" == *"$1"* ]] || { echo "with ${*:2}: expected \"$1\", got: $got"; exit 1; }
}
expect "libgomp's default); where other work shares the cores, OMP_WAIT_POLICY=PASSIVE"
expect "as OMP_WAIT_POLICY=PASSIVE says" OMP_WAIT_POLICY=PASSIVE
expect "spinning GOMP_SPINCOUNT=10000 times" GOMP_SPINCOUNT=10000
echo "thread wait: said for the default, OMP_WAIT_POLICY and GOMP_SPINCOUNT"
