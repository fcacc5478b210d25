#!/usr/bin/env bash
# Prints the directory the test clusters (pg-cluster.sh, citus-cluster.sh run) put their
# data in: $BREACHD_SCRATCH when set; else /dev/shm when it is a writable tmpfs with 4 GiB
# free, since the clusters run with fsync off and hold nothing worth keeping, and on a
# journalled disk PostgreSQL's CREATE and DROP DATABASE (one file per relation, hundreds per
# database) cost the e2e suites on Citus most of their time (docs/TESTING.md); else /tmp.
set -euo pipefail
if [ -n "${BREACHD_SCRATCH:-}" ]; then echo "$BREACHD_SCRATCH"; exit 0; fi
free_kib=$(df -k --output=avail /dev/shm 2>/dev/null | tail -n 1 | tr -d ' ' || true)
if [ -w /dev/shm ] && [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ] &&
   [ "${free_kib:-0}" -ge $((4 * 1024 * 1024)) ]; then
  echo /dev/shm
else
  echo /tmp
fi
