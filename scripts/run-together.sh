#!/usr/bin/env bash
# Runs test suites side by side and reports them one after another:
#
#   scripts/run-together.sh NAME 'COMMAND' [NAME 'COMMAND' ...]
#
# The end-to-end suites spend most of their time waiting (on servers, webhook receivers,
# timers), so on two cores they finish in about the time of the longest instead of the sum.
# Each command's output goes to a log of its own, printed whole when all have ended, with
# its time and status; the status is 1 if any command failed.
set -uo pipefail
[ $# -ge 2 ] && [ $(($# % 2)) -eq 0 ] || { echo "usage: $0 NAME 'COMMAND' ..." >&2; exit 2; }
logs=$(mktemp -d /tmp/breachd-run-together-XXXXXX)
trap 'rm -rf "$logs"' EXIT
names=(); pids=()
while [ $# -gt 0 ]; do
  name=$1; command=$2; shift 2
  ( began=$(date +%s)
    bash -c "$command" > "$logs/$name.log" 2>&1
    status=$?
    echo "$status $(( $(date +%s) - began ))" > "$logs/$name.status" ) &
  names+=("$name"); pids+=($!)
done
wait "${pids[@]}"
failed=0
for name in "${names[@]}"; do
  read -r status seconds < "$logs/$name.status" || { status=1; seconds=?; }
  echo "==== $name: exit $status after ${seconds} s"
  cat "$logs/$name.log"
  [ "$status" -eq 0 ] || failed=1
done
for name in "${names[@]}"; do
  read -r status seconds < "$logs/$name.status" || status=1
  echo "run-together: $name $([ "$status" -eq 0 ] && echo passed || echo FAILED) ($seconds s)"
done
exit $failed
