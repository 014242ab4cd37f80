#!/usr/bin/env bash
# exspec script: a file's commands in one process give the output each gives in a process of its
# own, byte for byte (greedy, seeded with a draft, the oracle, check); a line that fails is named
# with its status and the lines after it still run; serve is refused; and a line that cannot be
# read stops the script before anything runs.
# usage: script.sh EXSPEC_BINARY WORK_DIR
set -euo pipefail
exspec=$1
work=$2
rm -rf "$work"
mkdir -p "$work"
cd "$work"
"$exspec" make-model --arch qwen3 --preset tiny --seed 5 --out m 2> /dev/null
"$exspec" make-model --draft-of m --layers 1 --out d 2> /dev/null
lines=(
  "generate --model m --prompt-ids 1,2,3 --prompt-ids 9 --max-tokens 12"
  "generate --model m --draft d --prompt 'hello world' --prompt \"the quick fox\" --temperature 0.8 --seed 5 --max-tokens 12"
  "generate --model m --oracle --prompt-ids 4,5,6,7 --max-tokens 12 --dtype float64"
  "generate --model m --draft d --mode exspec --window 3 --batch 2 --prompt-ids 1,2 --prompt-ids 3 --prompt-ids 4,4 --max-tokens 12 --dtype int8"
  "check --model m --max-tokens 4"
)
one_by_one() {  # each line in its own process: what the script must equal
  local i=0 line
  for line in "${lines[@]}"; do
    eval "\"\$exspec\" $line" > "alone-$i.out" 2> /dev/null
    i=$((i + 1))
  done
}
one_by_one
{
  echo "# the lines, with a failing one and serve among them"
  i=0
  for line in "${lines[@]}"; do
    echo "$line > script-$i.out 2>> script.err"
    [ $i = 1 ] && echo "generate --model no-such-model --prompt-ids 1 > failed.out 2> failed.err"
    [ $i = 2 ] && echo "serve --model m"
    i=$((i + 1))
  done
} > commands.txt
status=0
"$exspec" script commands.txt 2> script-own.err || status=$?
[ "$status" = 1 ] || { echo "exspec script exited $status, not 1"; cat script-own.err; exit 1; }
for i in "${!lines[@]}"; do
  [ -s "alone-$i.out" ] || { echo "line $i gave no output alone"; exit 1; }
  cmp -s "alone-$i.out" "script-$i.out" || { echo "line $i: the script's output differs from its own process's:"; diff "alone-$i.out" "script-$i.out"; exit 1; }
done
grep -q "commands.txt:4: generate exited 1" script-own.err || { echo "the failing line is not named:"; cat script-own.err; exit 1; }
grep -q "no-such-model" failed.err || { echo "the failing line's error is not in its own file:"; cat failed.err; exit 1; }
grep -q "serve runs in a process of its own" script-own.err && grep -q "commands.txt:6: serve exited 2" script-own.err ||
  { echo "serve was not refused:"; cat script-own.err; exit 1; }
grep -q "2 of 7 lines failed" script-own.err || { echo "no count of the failed lines:"; cat script-own.err; exit 1; }
# A line that cannot be read: exit 2, and nothing runs (the first line's output is not written).
printf '%s\n' "generate --model m --prompt-ids 1 --max-tokens 2 > early.out" "generate --prompt 'open" > bad.txt
status=0
"$exspec" script bad.txt 2> bad.err || status=$?
[ "$status" = 2 ] && grep -q "bad.txt:2: an unclosed ' quote" bad.err && [ ! -e early.out ] ||
  { echo "an unreadable line: exit $status, stderr: $(cat bad.err)"; exit 1; }
# From stdin, as `exspec script -`.
echo "generate --model m --prompt-ids 1,2,3 --prompt-ids 9 --max-tokens 12" | "$exspec" script - > stdin.out 2> /dev/null
cmp -s alone-0.out stdin.out || { echo "the script from stdin differs"; exit 1; }
# Its own arguments: --help anywhere prints the usage; none, two, or a file that is not there: exit 2.
"$exspec" script commands.txt --help | grep -q "usage: exspec script FILE" || { echo "script --help: no usage"; exit 1; }
for args in "" "commands.txt bad.txt" "no-such-file.txt"; do
  status=0
  # shellcheck disable=SC2086  # the words of args
  "$exspec" script $args > /dev/null 2> args.err || status=$?
  [ "$status" = 2 ] || { echo "exspec script $args: exit $status, not 2"; exit 1; }
done
grep -q "cannot read no-such-file.txt" args.err || { echo "a missing file is not named: $(cat args.err)"; exit 1; }
echo "script: ${#lines[@]} commands equal their own processes' output; failures named, serve refused, bad lines stop it"
