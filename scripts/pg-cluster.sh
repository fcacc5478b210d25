#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the tests: initdb into a temporary directory, a Unix
# socket in that directory (no TCP port), fsync off, trust authentication for one role.
# PostgreSQL refuses to run as root, so as root the cluster runs as the 'postgres' user
# that Debian's package creates.
#
#   scripts/pg-cluster.sh start DIR   starts it; prints the libpq URI of database 'breachd'
#   scripts/pg-cluster.sh standby PRIMARY_DIR DIR
#                                     makes DIR a streaming-replication hot standby of the
#                                     cluster started in PRIMARY_DIR (pg_basebackup -R over
#                                     its socket), starts it; prints its URI of 'breachd'
#   scripts/pg-cluster.sh stop DIR    stops it (immediate) and removes DIR
#   scripts/pg-cluster.sh pause DIR   stops the server, keeping its data (fault tests)
#   scripts/pg-cluster.sh resume DIR  starts it again
#   scripts/pg-cluster.sh run CMD...  starts one in a new directory, runs CMD with
#                                     BREACHD_PG_URI, BREACHD_TEST_PG_URI and BREACHD_PG_DIR
#                                     set, and removes it however CMD ends; CMD's status
#   scripts/pg-cluster.sh run-standby CMD...
#                                     the same with a hot standby of it beside it, its URI
#                                     and directory in BREACHD_PG_STANDBY_URI and
#                                     BREACHD_PG_STANDBY_DIR (the cluster tests)
# pause, resume and stop work on a standby's DIR as on a primary's.
set -euo pipefail
cmd=${1:-}; dir=${2:-}
usage() { echo "usage: $0 start|stop|pause|resume DIR | standby PRIMARY_DIR DIR | run|run-standby CMD..." >&2; exit 2; }
[ -n "$cmd" ] && [ -n "$dir" ] || usage
# run and run-standby put their clusters where scripts/scratch-base.sh says (memory when it can).
scratch() { "$(dirname "$0")/scratch-base.sh"; }
if [ "$cmd" = run ]; then
  shift
  run_dir=$(mktemp -d -u "$(scratch)/breachd-pg-XXXXXX")
  trap '"$0" stop "$run_dir"' EXIT
  uri=$("$0" start "$run_dir")
  BREACHD_PG_URI=$uri BREACHD_TEST_PG_URI=$uri BREACHD_PG_DIR=$run_dir "$@"
  exit $?
fi
if [ "$cmd" = run-standby ]; then
  shift
  run_dir=$(mktemp -d -u "$(scratch)/breachd-pg-XXXXXX")
  standby_dir=$(mktemp -d -u "$(scratch)/breachd-pg-standby-XXXXXX")
  trap '"$0" stop "$standby_dir"; "$0" stop "$run_dir"' EXIT
  uri=$("$0" start "$run_dir")
  standby_uri=$("$0" standby "$run_dir" "$standby_dir")
  BREACHD_PG_URI=$uri BREACHD_TEST_PG_URI=$uri BREACHD_PG_DIR=$run_dir \
    BREACHD_PG_STANDBY_URI=$standby_uri BREACHD_PG_STANDBY_DIR=$standby_dir "$@"
  exit $?
fi
if [ "$cmd" = standby ]; then
  # The standby's own directory is the one its socket, log and options are about.
  primary_dir=$dir; dir=${3:-}
  [ -n "$dir" ] || usage
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
standby)
  # initdb -A trust allows local replication connections (pg_hba's "local replication all
  # trust"), and PostgreSQL 15 defaults to wal_level replica and 10 WAL senders: the primary
  # needs no change. -R writes primary_conninfo (the primary's socket) and standby.signal;
  # the standby gets the same options but its own socket directory.
  mkdir -p "$dir"
  [ "$(id -u)" -eq 0 ] && chown postgres: "$dir"
  as_owner "$bin/pg_basebackup" -h "$primary_dir" -U breachd -D "$dir/data" -R -X stream \
    -c fast --no-sync >"$dir/basebackup.log" 2>&1 ||
    { cat "$dir/basebackup.log" >&2; exit 2; }
  as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 30 start \
    -o "$server_opts" >/dev/null ||
    { cat "$dir/server.log" >&2; exit 2; }
  # pg_ctl -w returns once the standby accepts connections (hot standby reached a
  # consistent state); check it answers queries as a standby before saying so.
  for _ in $(seq 100); do
    [ "$(as_owner "$bin/psql" -h "$dir" -U breachd -d breachd -XAtqc 'SELECT pg_is_in_recovery()' 2>/dev/null)" = t ] &&
      break
    sleep 0.1
  done
  [ "$(as_owner "$bin/psql" -h "$dir" -U breachd -d breachd -XAtqc 'SELECT pg_is_in_recovery()' 2>&1)" = t ] ||
    { echo "pg-cluster: the standby in $dir does not answer as a hot standby" >&2; cat "$dir/server.log" >&2; exit 2; }
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
