#!/usr/bin/env bash
# Installs dependencies, builds, and runs every test: the OpenAPI document through a
# published validator; the web console in chromium (both stores); then, side by side, unit
# and end-to-end tests (gcc build) on a SQLite store, the PostgreSQL contract tests and the
# same end-to-end suite on a throwaway PostgreSQL cluster, the cluster tests (two breachd
# instances on a primary and its hot standby), and the end-to-end suite on a Citus cluster;
# the first three again under AddressSanitizer +
# UndefinedBehaviorSanitizer (clang build); a clang warning check; a short run of every fuzz
# target, two at a time; and the Debian package (make test-package).
set -euo pipefail
cd "$(dirname "$0")/.."
# Each step's start in the log, with the seconds since this script began: where a run's
# time goes (keep the whole within about 15 minutes: docs/internals/TESTING.md).
step() { echo "==== test.sh: $* (at ${SECONDS} s)"; }
step install-deps
./scripts/install-deps.sh
step build-tests
make -j"$(nproc)" build-tests
step npm-deps
make npm-deps
# the published client libraries must run here, not be skipped for want of node
export BREACHD_REQUIRE_CLIENTS=1
step test-openapi
make test-openapi
# the web console in chromium, on SQLite and on a throwaway PostgreSQL cluster
step test-console
make test-console
# clang: the warning check, and the sanitizer build the second pass runs
step clang build
make CC=clang BUILD=build-clang -j"$(nproc)" all
# The e2e suite on a Citus coordinator with two workers (Citus built once into
# ~/.cache/breachd/citus) is the longest suite: it runs beside both passes below, its log
# printed when they have ended.
citus_log=$(mktemp /tmp/breachd-test-citus-XXXXXX)
( status=0; make test-citus > "$citus_log" 2>&1 || status=$?; echo "$status" > "$citus_log.status"
  echo "==== test.sh: test-citus ended (at ${SECONDS} s)" >> "$citus_log" ) &
citus_pid=$!
trap 'kill "$citus_pid" 2>/dev/null || true' EXIT
# Each pass runs its three suites side by side (they mostly wait on servers and timers):
# SQLite, PostgreSQL, and the primary + hot standby cluster.
step pass 1 and test-citus beside
scripts/run-together.sh sqlite 'make test' pg 'make test-pg' cluster 'make test-cluster'
step test-sanitize
make test-sanitize
step waiting for test-citus
wait "$citus_pid" || true
trap - EXIT
echo "==== citus: exit $(cat "$citus_log.status" 2>/dev/null || echo '?')"
cat "$citus_log"
[ "$(cat "$citus_log.status" 2>/dev/null)" = 0 ] || { echo "test.sh: make test-citus FAILED"; exit 1; }
rm -f "$citus_log" "$citus_log.status"
step fuzz-quick
make -j"$(nproc)" fuzz-quick
# the Debian package: built, checked, installed on this machine when breachd is not, with
# OPERATIONS.md's PostgreSQL steps followed as written, and removed again (about 1.5 minutes)
step test-package
make test-package
echo "test.sh: every test passed (${SECONDS} s)"
