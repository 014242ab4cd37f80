#!/usr/bin/env bash
# exspec says at start how the forwards' threads wait (docs/performance.md#threads): libgomp's
# default with a hint for shared cores, and whatever OMP_WAIT_POLICY or GOMP_SPINCOUNT set; and
# that EXSPEC_KERNEL_THREADS=spin (model/kernels/spin_team.h) says so and gives the same tokens.
# usage: thread_wait.sh EXSPEC_BINARY MODEL_DIR
set -euo pipefail
exspec=$1
model=$2
said() { env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT -u EXSPEC_KERNEL_THREADS "$@" "$exspec" generate --model "$model" --prompt-ids 1,2,3 \
           --max-tokens 2 2>&1 > /dev/null | grep "^exspec: threads wait" || echo "(no line)"; }
expect() {
  local got
  got=$(said "${@:2}")
  [[ "$got" == *"$1"* ]] || { echo "with ${*:2}: expected \"$1\", got: $got"; exit 1; }
}
expect "libgomp's default); where other work shares the cores, OMP_WAIT_POLICY=PASSIVE"
expect "as OMP_WAIT_POLICY=PASSIVE says" OMP_WAIT_POLICY=PASSIVE
expect "spinning GOMP_SPINCOUNT=10000 times" GOMP_SPINCOUNT=10000
expect "the kernels run on exspec's own spinning threads (EXSPEC_KERNEL_THREADS=spin)" EXSPEC_KERNEL_THREADS=spin
tokens() { env -u EXSPEC_KERNEL_THREADS "$@" "$exspec" generate --model "$model" --dtype int8 --batch 4 --prompt-ids 1,2,3 \
             --prompt-ids 4,5 --prompt-ids 6 --prompt-ids 7,8,9,10 --max-tokens 24 --ignore-eos 2> /dev/null; }
plain=$(tokens)
spin=$(tokens EXSPEC_KERNEL_THREADS=spin)
[[ -n "$plain" && "$plain" == "$spin" ]] || { echo "EXSPEC_KERNEL_THREADS=spin gave other tokens:"; diff <(echo "$plain") <(echo "$spin"); exit 1; }
echo "thread wait: said for the default, OMP_WAIT_POLICY, GOMP_SPINCOUNT and the spin team; its tokens are libgomp's"
