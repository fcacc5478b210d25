#!/usr/bin/env bash
# Installs dependencies, builds, creates the demo store on first run, and serves it.
#   PORT=8080 DATA=data ./scripts/demo.sh
set -euo pipefail
cd "$(dirname "$0")/.."
PORT="${PORT:-8080}"
DATA="${DATA:-data}"
./scripts/install-deps.sh
make -j"$(nproc)"
mkdir -p "$DATA"
if [ ! -f "$DATA/demo.db" ]; then
  umask 077
  build/breachctl demo --db "$DATA/demo.db" > "$DATA/demo.key"
fi
KEY="$(cat "$DATA/demo.key")"
cat <<MSG

breachd demo is starting on http://127.0.0.1:$PORT/v7  (Ctrl-C stops it)
demo API key: $KEY
try:
  curl -s -H "x-api-key: $KEY" "http://127.0.0.1:$PORT/v7/breaches?number_of_records=3"

MSG
exec build/breachd --db "$DATA/demo.db" --listen "127.0.0.1:$PORT"
