#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the tests: initdb into a temporary directory, a Unix
# socket in that directory (no TCP port), fsync off, trust authentication for one role.
# PostgreSQL refuses to run as root, so as root the cluster runs as the 'postgres' user
# that Debian's package creates.
#
#   scripts/pg-cluster.sh start DIR   starts it; prints the libpq URI of database 'breachd'
#   scripts/pg-cluster.sh stop DIR    stops it (immediate) and removes DIR
#   scripts/pg-cluster.sh pause DIR   stops the server, keeping its data (fault tests)
#   scripts/pg-cluster.sh resume DIR  starts it again
#   scripts/pg-cluster.sh run CMD...  starts one in a new directory, runs CMD with
#                                     BREACHD_PG_URI, BREACHD_TEST_PG_URI and BREACHD_PG_DIR
#                                     set, and removes it however CMD ends; CMD's status
set -euo pipefail
cmd=${1:-}; dir=${2:-}
usage() { echo "usage: $0 start|stop|pause|resume DIR | run CMD..." >&2; exit 2; }
[ -n "$cmd" ] && [ -n "$dir" ] || usage
if [ "$cmd" = run ]; then
  shift
  run_dir=$(mktemp -d -u /tmp/breachd-pg-XXXXXX)
  trap '"$0" stop "$run_dir"' EXIT
  uri=$("$0" start "$run_dir")
  BREACHD_PG_URI=$uri BREACHD_TEST_PG_URI=$uri BREACHD_PG_DIR=$run_dir "$@"
  exit $?
fi
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
[ -x "$bin/pg_ctl" ] || { echo "pg-cluster: PostgreSQL server binaries not found (apt install postgresql)" >&2; exit 2; }
as_owner() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
# Tests only: no durability (fsync off) and no TCP listener.
server_opts="-k $dir -c listen_addresses='' -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200"
case "$cmd" in
start)
  mkdir -p "$dir"
  [ "$(id -u)" -eq 0 ] && chown postgres: "$dir"
  as_owner "$bin/initdb" -D "$dir/data" -U breachd -A trust --no-sync -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 ||
    { cat "$dir/initdb.log" >&2; exit 2; }
  as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 30 start \
    -o "$server_opts" >/dev/null ||
    { cat "$dir/server.log" >&2; exit 2; }
  as_owner "$bin/createdb" -h "$dir" -U breachd breachd
  echo "postgresql:///breachd?host=$dir&user=breachd"
  ;;
pause)
  as_owner "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null
  ;;
resume)
  as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 30 start \
    -o "$server_opts" >/dev/null
  ;;
stop)
  [ -d "$dir/data" ] && as_owner "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
  rm -rf "$dir"
  ;;
*) usage ;;
esac
