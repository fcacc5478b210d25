#!/usr/bin/env bash
# Installs dependencies, builds, and runs every test: the OpenAPI document through a
# published validator, unit and end-to-end tests (gcc build)
# on a SQLite store, then the PostgreSQL contract tests and the same end-to-end suite on a
# throwaway PostgreSQL cluster, the cluster tests (two breachd instances on a primary and
# its hot standby), both suites again under AddressSanitizer + UndefinedBehaviorSanitizer
# (clang build), a clang warning check, and a short run of every fuzz target.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
make -j"$(nproc)" all
make npm-deps
# the published client libraries must run here, not be skipped for want of node
export BREACHD_REQUIRE_CLIENTS=1
make test-openapi
make test
make test-pg
make test-cluster
make CC=clang BUILD=build-clang -j"$(nproc)" all
make test-sanitize
make fuzz-quick
echo "test.sh: every test passed"
