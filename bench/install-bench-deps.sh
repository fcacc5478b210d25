#!/usr/bin/env bash
# Installs what the benchmark needs beyond the build: wrk (load generator) and nginx (the
# static-file ceiling) from Debian's archive. Safe to re-run: does nothing when both are
# present. Uses sudo when not root. Called by `make bench` and `make bench-quick`.
set -euo pipefail
PKGS=(wrk nginx)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-bench-deps: wrk and nginx present"
  exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "install-bench-deps: installing ${missing[*]}"
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -q
# --no-install-recommends keeps it to the binaries. Installing the package may start the
# system nginx service on port 80 where an init system runs; the benchmark does not use
# it (it runs its own nginx with a private config on a free loopback port).
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
