#!/usr/bin/env bash
# A throwaway Citus cluster for the tests and the benchmark: a coordinator and two workers,
# each a PostgreSQL 15 server on a Unix socket of its own under DIR (no TCP port), fsync off,
# trust authentication for one role, run as the 'postgres' user when run as root (as
# scripts/pg-cluster.sh does for one server).
#
# Debian 12 does not package Citus: the first use builds it from the release tree in
# ../shared/citus (see build below) into a cache, and installs it where PostgreSQL 15 finds
# its extensions; later uses copy the cached build in again when it is missing.
#
#   scripts/citus-cluster.sh build            builds (once) and installs Citus; prints nothing
#   scripts/citus-cluster.sh start DIR        starts coordinator and workers; prints the
#                                             libpq URI of database 'breachd' on the coordinator
#   scripts/citus-cluster.sh stop DIR         stops every node (immediate), removes DIR
#   scripts/citus-cluster.sh createdb DIR NAME
#                                             a database NAME on every node with the citus
#                                             extension, the workers added to its metadata;
#                                             prints its coordinator URI
#   scripts/citus-cluster.sh attach DIR NAME  (again) the extension in the coordinator's
#                                             database NAME and the workers in its metadata
#   scripts/citus-cluster.sh dropdb DIR NAME  drops it everywhere
#   scripts/citus-cluster.sh pause DIR NODE   stops one node (w1, w2, ...), keeping its data
#   scripts/citus-cluster.sh resume DIR NODE  starts it again
#   scripts/citus-cluster.sh add-worker DIR NODE NAME
#                                             starts a new worker NODE (first call) and adds
#                                             it to database NAME (created there with the
#                                             extension); prints the node's socket directory
#   scripts/citus-cluster.sh run CMD...       starts one in a new directory, runs CMD with
#                                             BREACHD_PG_URI, BREACHD_TEST_PG_URI,
#                                             BREACHD_PG_DIR (the coordinator's) and
#                                             BREACHD_CITUS_DIR set; removes it however CMD
#                                             ends; CMD's status
#
# The cache is $BREACHD_CITUS_CACHE, else ~/.cache/breachd/citus (docs/TESTING.md).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
version=13.2.2
tarball=${BREACHD_CITUS_TARBALL:-$root/../shared/citus/citus-$version.tar.xz}
cache=${BREACHD_CITUS_CACHE:-${HOME:-/root}/.cache/breachd/citus}
cmd=${1:-}
usage() {
  echo "usage: $0 build | start|stop DIR | createdb|attach|dropdb DIR NAME | pause|resume DIR NODE |" \
    "add-worker DIR NODE NAME | run CMD..." >&2
  exit 2
}
[ -n "$cmd" ] || usage

bin=$(ls -d /usr/lib/postgresql/15/bin 2>/dev/null || true)
[ -x "$bin/pg_ctl" ] || { echo "citus-cluster: PostgreSQL 15 server binaries not found (apt install postgresql)" >&2; exit 2; }
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
as_owner() { if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

# The build: the release tree, with one change (Debian's PostgreSQL 15.20 headers declare
# have_createdb_privilege, which Citus's pg_version_compat.h also defines for 15: its copy
# and its one caller are renamed), configured against PostgreSQL 15 and installed into a
# staging tree in the cache; the staging tree is what gets copied into /usr. The cache key
# is the tarball's checksum and the PostgreSQL version it was built against.
build() {
  [ -f "$tarball" ] || { echo "citus-cluster: $tarball not found" >&2; exit 2; }
  local pgv key stage lib
  pgv=$("$bin/pg_config" --version | awk '{print $2}')
  key=$(sha256sum "$tarball" | cut -c1-16)-pg$pgv
  stage=$cache/$key/stage
  lib=$("$bin/pg_config" --pkglibdir)
  if [ ! -f "$stage/.complete" ]; then
    echo "citus-cluster: building Citus $version for PostgreSQL $pgv into $cache/$key (once)" >&2
    rm -rf "$cache/$key"
    mkdir -p "$cache/$key"
    tar -xJf "$tarball" -C "$cache/$key"
    local src=$cache/$key/citus-$version
    sed -i 's/^have_createdb_privilege(void)/citus_have_createdb_privilege(void)/' \
      "$src/src/include/pg_version_compat.h"
    sed -i 's/!have_createdb_privilege()/!citus_have_createdb_privilege()/' \
      "$src/src/backend/distributed/commands/serialize_distributed_ddls.c"
    (cd "$src" && ./configure PG_CONFIG="$bin/pg_config" >"$cache/$key/configure.log" 2>&1 &&
      make -j"$(nproc)" >"$cache/$key/make.log" 2>&1 &&
      make install DESTDIR="$stage" >"$cache/$key/install.log" 2>&1) ||
      { echo "citus-cluster: the build failed; logs in $cache/$key" >&2; tail -n 30 "$cache/$key"/*.log >&2; exit 2; }
    rm -rf "$src"
    touch "$stage/.complete"
  fi
  if ! cmp -s "$stage$lib/citus.so" "$lib/citus.so"; then
    # modes as make install gave them; directories that exist are left as they are
    tar -C "$stage" --exclude=./.complete -cf - . | as_root tar -C / --no-overwrite-dir -xf -
  fi
}

# Tests only: no durability, no TCP listener. Citus needs itself preloaded, prepared
# transactions (its two-phase commits) and logical decoding (shard moves of the rebalancer);
# a node reaches itself (the rebalancer's background jobs) by its socket directory, not the
# default localhost:5432.
server_opts() {
  echo "-k $1 -c listen_addresses='' -c fsync=off -c synchronous_commit=off" \
    "-c full_page_writes=off -c max_connections=300 -c shared_preload_libraries=citus" \
    "-c max_prepared_transactions=300 -c wal_level=logical -c max_worker_processes=64" \
    "-c max_wal_senders=20 -c max_replication_slots=20" \
    "-c citus.shard_count=${BREACHD_CITUS_SHARDS:-32} -c citus.local_hostname=$1"
}

node_start() { # DIR NODE
  local d=$1/$2
  mkdir -p "$d"
  [ "$(id -u)" -eq 0 ] && chown postgres: "$d"
  if [ ! -d "$d/data" ]; then
    as_owner "$bin/initdb" -D "$d/data" -U breachd -A trust --no-sync -E UTF8 --locale=C.UTF-8 \
      >"$d/initdb.log" 2>&1 || { cat "$d/initdb.log" >&2; exit 2; }
  fi
  as_owner "$bin/pg_ctl" -D "$d/data" -l "$d/server.log" -w -t 60 start -o "$(server_opts "$d")" \
    >/dev/null || { cat "$d/server.log" >&2; exit 2; }
}

psql_on() { # SOCKETDIR DB SQL
  "$bin/psql" -h "$1" -U breachd -d "$2" -X -q -A -t -v ON_ERROR_STOP=1 -c "$3"
}

workers() { # the worker node names under DIR, in order
  local n
  for n in "$1"/w*; do [ -d "$n/data" ] && basename "$n"; done
}

# A database with the extension on every node, the workers in its metadata: Citus keeps its
# node list per database. Made once by start as the template breachd_template (CREATE
# EXTENSION citus takes one to three seconds a node, a copy of the template a tenth of
# that), then copied on each node: the workers' copies hold the metadata the coordinator's
# synced to them. A template is copied only while nobody is connected to it, Citus's
# maintenance daemon included: connections to it are refused and ended.
make_template() { # DIR
  local d=$1 n
  for n in $(workers "$d"); do
    psql_on "$d/$n" postgres "CREATE DATABASE breachd_template" >/dev/null
    psql_on "$d/$n" breachd_template "CREATE EXTENSION citus" >/dev/null
  done
  psql_on "$d/coord" postgres "CREATE DATABASE breachd_template" >/dev/null
  attach "$d" breachd_template >/dev/null
  workers "$d" >"$d/template_workers"
  for n in coord $(workers "$d"); do
    psql_on "$d/$n" postgres "ALTER DATABASE breachd_template ALLOW_CONNECTIONS false;
      ALTER DATABASE breachd_template IS_TEMPLATE true;
      SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = 'breachd_template'" \
      >/dev/null
  done
}

# A copy names the template as the database Citus distributed (pg_dist_object), and Citus
# would make that database on a worker added later: the copy names itself instead.
createdb_all() { # DIR NAME
  local d=$1 name=$2 n
  for n in $(cat "$d/template_workers") coord; do
    psql_on "$d/$n" postgres \
      "CREATE DATABASE \"$name\" TEMPLATE breachd_template STRATEGY FILE_COPY" >/dev/null
    psql_on "$d/$n" "$name" "UPDATE pg_catalog.pg_dist_object SET objid = (SELECT oid FROM
      pg_database WHERE datname = current_database()) WHERE classid = 'pg_database'::regclass" \
      >/dev/null
  done
  echo "postgresql:///$name?host=$d/coord&user=breachd"
}

# The coordinator's side: the extension in database NAME, and the workers in its metadata.
attach() { # DIR NAME
  local d=$1 name=$2 w
  psql_on "$d/coord" "$name" "CREATE EXTENSION IF NOT EXISTS citus;
    SELECT citus_set_coordinator_host('$d/coord', 5432)" >/dev/null
  for w in $(workers "$d"); do
    psql_on "$d/coord" "$name" "SELECT citus_add_node('$d/$w', 5432)" >/dev/null
  done
  echo "postgresql:///$name?host=$d/coord&user=breachd"
}

case "$cmd" in
build)
  build
  ;;
start)
  dir=${2:-}; [ -n "$dir" ] || usage
  build
  mkdir -p "$dir"
  for n in coord w1 w2; do node_start "$dir" "$n"; done
  make_template "$dir"
  createdb_all "$dir" breachd
  ;;
createdb)
  [ -n "${3:-}" ] || usage
  createdb_all "$2" "$3"
  ;;
attach)
  [ -n "${3:-}" ] || usage
  attach "$2" "$3"
  ;;
dropdb)
  [ -n "${3:-}" ] || usage
  # every node at once: each drop mostly waits for Citus's maintenance daemon to leave
  for w in $(workers "$2"); do
    psql_on "$2/$w" postgres "DROP DATABASE IF EXISTS \"$3\" WITH (FORCE)" >/dev/null 2>&1 &
  done
  psql_on "$2/coord" postgres "DROP DATABASE IF EXISTS \"$3\" WITH (FORCE)" >/dev/null
  wait || true
  ;;
pause)
  [ -n "${3:-}" ] || usage
  as_owner "$bin/pg_ctl" -D "$2/$3/data" -m fast -w stop >/dev/null
  ;;
resume)
  [ -n "${3:-}" ] || usage
  node_start "$2" "$3"
  ;;
add-worker)
  [ -n "${4:-}" ] || usage
  dir=$2; node=$3; name=$4
  [ -f "$dir/$node/data/postmaster.pid" ] || node_start "$dir" "$node"
  psql_on "$dir/$node" postgres "CREATE DATABASE \"$name\"" >/dev/null
  psql_on "$dir/$node" "$name" "CREATE EXTENSION citus" >/dev/null
  psql_on "$dir/coord" "$name" "SELECT citus_add_node('$dir/$node', 5432)" >/dev/null
  echo "$dir/$node"
  ;;
stop)
  dir=${2:-}; [ -n "$dir" ] || usage
  for n in "$dir"/*/; do
    [ -d "$n/data" ] && as_owner "$bin/pg_ctl" -D "$n/data" -m immediate -w stop >/dev/null 2>&1 || true
  done
  rm -rf "$dir"
  ;;
run)
  shift
  [ $# -gt 0 ] || usage
  # in memory when it can (scripts/scratch-base.sh): CREATE and DROP DATABASE write
  # hundreds of files on each node for every test's store
  run_dir=$(mktemp -d -u "$("$here/scratch-base.sh")/breachd-citus-XXXXXX")
  trap '"$0" stop "$run_dir"' EXIT
  uri=$("$0" start "$run_dir")
  BREACHD_PG_URI=$uri BREACHD_TEST_PG_URI=$uri BREACHD_PG_DIR=$run_dir/coord \
    BREACHD_CITUS_DIR=$run_dir "$@"
  exit $?
  ;;
*) usage ;;
esac
