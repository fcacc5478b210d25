#!/usr/bin/env bash
# Installs what the benchmark needs beyond the build: wrk (load generator) and nginx (the
# static-file ceiling), through the project's one installer. Called by `make bench` and
# `make bench-quick`. Installing nginx may start the system nginx service on port 80 where
# an init system runs; the benchmark does not use it (it runs its own nginx with a private
# config on a free loopback port).
set -euo pipefail
exec "$(dirname "$0")/../scripts/install-deps.sh" wrk nginx
