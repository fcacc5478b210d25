#!/usr/bin/env bash
# Installs every build and test dependency from Debian 12's archive (PostgreSQL's server
# too: the tests start a throwaway cluster of their own), plus any packages
# named as arguments (the benchmark adds wrk and nginx this way).
# Safe to re-run: does nothing when all are present. Uses sudo when not root.
set -euo pipefail
PKGS=(
  build-essential pkg-config clang llvm libclang-rt-14-dev
  libmicrohttpd-dev libsqlite3-dev libsodium-dev libjansson-dev libpq-dev nettle-dev
  libcurl4-openssl-dev zlib1g-dev libzstd-dev liblzma-dev libbz2-dev libidn2-dev
  sqlite3 gzip curl python3 python3-jsonschema openssl ca-certificates
  postgresql
  # the package and its checks (make deb, make test-package; man pages, promtool)
  debhelper lintian fakeroot man-db prometheus
  # the web console's browser tests (make test-console: playwright-core drives it)
  chromium
  # Citus, built from ../shared/citus by scripts/citus-cluster.sh (make test-citus)
  postgresql-server-dev-15 liblz4-dev libkrb5-dev autoconf flex bison
  "$@"
)
# Node.js and npm for the test-side clients and validators (tests/openapi, tests/hibp-client):
# Debian's, unless a Node.js with npm is already there (NodeSource's package ships npm and
# conflicts with Debian's npm package).
command -v npm >/dev/null 2>&1 || PKGS+=(nodejs npm)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PKGS[@]} packages present"
else
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  echo "install-deps: installing ${missing[*]}"
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -q
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
