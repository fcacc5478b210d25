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
./scripts/install-deps.sh
make -j"$(nproc)" build-tests
make npm-deps
# the published client libraries must run here, not be skipped for want of node
export BREACHD_REQUIRE_CLIENTS=1
make test-openapi
# the web console in chromium, on SQLite and on a throwaway PostgreSQL cluster
make test-console
# clang: the warning check, and the sanitizer build the second pass runs
make CC=clang BUILD=build-clang -j"$(nproc)" all
# Each pass runs its suites side by side (they mostly wait on servers and timers): SQLite,
# PostgreSQL, the primary + hot standby cluster, and (the first pass only) the e2e suite on a
# Citus coordinator with two workers (Citus built once into ~/.cache/breachd/citus).
scripts/run-together.sh sqlite 'make test' pg 'make test-pg' cluster 'make test-cluster' \
  citus 'make test-citus'
make test-sanitize
make -j"$(nproc)" fuzz-quick
# the Debian package: built, checked, installed on this machine when breachd is not, with
# OPERATIONS.md's PostgreSQL steps followed as written, and removed again (about 1.5 minutes)
make test-package
echo "test.sh: every test passed"
