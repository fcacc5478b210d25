#!/usr/bin/env python3
"""Pwned Passwords ranges benchmark (issue 16): load rate and bytes per hash of a sorted
download on SQLite (and PostgreSQL with --pg-uri), then GET /range/{prefix} served by
breachd against nginx serving a static file of the median answer's size, alternating, and
one connection's latency. Prints a JSON summary and, with --results, appends a section to
bench/RESULTS.md.

    python3 bench/ranges.py --hashes 10000000 --duration 10
    scripts/pg-cluster.sh run sh -c 'python3 bench/ranges.py --pg-uri "$BREACHD_PG_URI" --no-http'

Standard library only; wrk and nginx on PATH (bench/install-bench-deps.sh)."""
import argparse
import http.client
import json
import os
import random
import resource
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

import pg_floors
from procs import free_port, machine_cpu, proc_cpu_seconds, start_nginx, wait_port

BENCH = os.path.dirname(os.path.abspath(__file__))
LUA = os.path.join(BENCH, "lua")


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def generate(path, n, seed, span=1.0):
    """A sorted SHA-1 download of n random hashes: evenly spread, like SHA-1 output, over
    the first `span` of the hash space (1: all of it; 0.1: the buckets are as full as
    10 x n hashes would make them), with counts drawn so that most are small, as in the
    real download."""
    if os.path.exists(path):
        return
    rnd = random.Random(seed)
    stride = int((1 << 160) * span) // n
    tmp = path + ".part"
    with open(tmp, "w") as f:
        out = []
        for i in range(n):
            h = i * stride + rnd.getrandbits(150) % stride
            c = 1 + int(rnd.expovariate(0.25)) if rnd.random() < 0.98 else rnd.randrange(1, 10 ** 6)
            out.append("%040X:%d\r\n" % (h, c))
            if len(out) == 100000:
                f.write("".join(out))
                out = []
        f.write("".join(out))
    os.rename(tmp, path)


def ctl(build, *args):
    p = subprocess.run([os.path.join(build, "breachctl"), *args], capture_output=True,
                       timeout=3600)
    if p.returncode != 0:
        raise SystemExit("breachctl %s: %s" % (" ".join(args), p.stderr.decode()[-2000:]))
    return p


def load(build, db, extra, path, n):
    ctl(build, "init", "--db", db, *extra)
    t0 = time.time()
    ctl(build, "import", "pwned-passwords", path, "--db", db, *extra)
    secs = time.time() - t0
    return {"seconds": round(secs, 2), "hashes_per_s": round(n / secs)}


def sqlite_size(db, n):
    c = sqlite3.connect(db)
    c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    page = c.execute("PRAGMA page_size").fetchone()[0]
    try:
        table = c.execute("SELECT sum(pgsize) FROM dbstat WHERE name = 'password_ranges'")\
                 .fetchone()[0]
    except sqlite3.OperationalError:  # no dbstat: the whole file, less an empty store's
        table = None
    payload = c.execute("SELECT sum(length(hashes)), count(*) FROM password_ranges").fetchone()
    c.close()
    out = {"file_bytes": os.path.getsize(db), "page_size": page, "rows": payload[1],
           "blob_bytes_per_hash": round(payload[0] / n, 2),
           "file_bytes_per_hash": round(os.path.getsize(db) / n, 2)}
    if table is not None:
        out["table_bytes_per_hash"] = round(table / n, 2)
    return out


def pg_size(uri, n):
    p = subprocess.run(["psql", "-At", uri, "-c",
                        "SELECT pg_total_relation_size('password_ranges'), "
                        "sum(length(hashes)), count(*) FROM password_ranges"],
                       capture_output=True, timeout=600, check=True)
    total, payload, rows = (int(v) for v in p.stdout.decode().strip().split("|"))
    return {"relation_bytes": total, "rows": rows,
            "blob_bytes_per_hash": round(payload / n, 2),
            "total_bytes_per_hash": round(total / n, 2)}


def get(port, path):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request("GET", path)
    r = conn.getresponse()
    body = r.read()
    conn.close()
    return r.status, body


def wrk(port, data, seconds, conns, name, logs, server_pid=None):
    """One wrk run; with server_pid, also the CPU per request of the server (with its
    children), of wrk and of the loopback (softirq), in microseconds."""
    env = dict(os.environ, BENCH_DATA=data, BENCH_LUA=LUA, BENCH_KEY="")
    cmd = ["wrk", "-t%d" % min(2, conns), "-c%d" % conns, "-d%ds" % seconds, "--timeout", "10s",
           "--latency", "-s", os.path.join(LUA, "s7_range.lua"), "http://127.0.0.1:%d" % port]
    srv0 = proc_cpu_seconds(server_pid) if server_pid else 0.0
    _, irq0, _ = machine_cpu()
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run(cmd, capture_output=True, env=env, timeout=seconds + 60)
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    _, irq1, _ = machine_cpu()
    srv1 = proc_cpu_seconds(server_pid) if server_pid else 0.0
    out = p.stdout.decode()
    with open(os.path.join(logs, name + ".txt"), "w") as f:
        f.write(out)
    line = [l for l in out.splitlines() if l.startswith("BENCH ")]
    if p.returncode != 0 or not line:
        raise SystemExit("wrk failed (%s): %s" % (name, out[-2000:]))
    j = json.loads(line[-1][6:])
    dur = j["duration_us"] / 1e6
    res = {"rps": round(j["requests"] / dur), "p50_ms": j["lat_p50_us"] / 1000,
           "p99_ms": j["lat_p99_us"] / 1000, "bytes_per_resp": round(j["bytes"] / j["requests"]),
           "errors": {k: j[k] for k in j if k.startswith("err_") and j[k]}}
    if "Non-2xx" in out:
        res["non_2xx"] = True
    if server_pid:
        per = 1e6 / max(1, j["requests"])
        res["cpu_us"] = {"server": round((srv1 - srv0) * per, 1),
                         "wrk": round((ru1.ru_utime - ru0.ru_utime + ru1.ru_stime - ru0.ru_stime)
                                      * per, 1),
                         "softirq": round((irq1 - irq0) * per, 1)}
    log("  %-10s %8d req/s  p50 %6.2f ms  p99 %6.2f ms  %d B" % (
        name, res["rps"], res["p50_ms"], res["p99_ms"], res["bytes_per_resp"]))
    return res


def wait_log(path, text, srv, timeout=600):
    """Waits until the server's log holds text (the snapshot written and served)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        with open(path, "rb") as f:
            if text.encode() in f.read():
                return time.time()
        if srv.poll() is not None:
            break
        time.sleep(0.1)
    raise SystemExit("breachd: no %r in %s" % (text, path))


def serve(a, db, work, extra=(), floor_uri=None, snapshot=False):
    """/range/ against nginx; snapshot: served from --range-snapshot-dir, measured once the
    first snapshot is written."""
    port = free_port()
    logf = os.path.join(work, "breachd-snapshot.log" if snapshot else "breachd.log")
    if snapshot:
        extra = [*extra, "--range-snapshot-dir", os.path.join(work, "snapshot")]
    t0 = time.time()
    srv = subprocess.Popen([os.path.join(a.build, "breachd"), "--db", db, *extra, "--listen",
                            "127.0.0.1:%d" % port, "--range-auth", "none", "--threads",
                            str(a.threads)], stdout=subprocess.DEVNULL,
                           stderr=open(logf, "wb"))
    if not wait_port(port, srv):
        raise SystemExit("breachd did not start")
    snapshot_s = None
    if snapshot:
        snapshot_s = round(wait_log(logf, "/range/ serves from it", srv) - t0, 2)
        log("  the range snapshot served %.1f s after the start" % snapshot_s)
    rnd = random.Random(a.seed)
    top = int((1 << 20) * (a.hashes / a.density_of if a.density_of else 1.0))
    prefixes = ["%05X" % rnd.randrange(top) for _ in range(4096)]
    with open(os.path.join(work, "prefixes.txt"), "w") as f:
        f.write("\n".join(prefixes) + "\n")
    bodies = sorted((get(port, "/range/" + p)[1] for p in prefixes[:200]), key=len)
    body = bodies[len(bodies) // 2]
    ngx, ngx_port = start_nginx(work, body, a.threads, content_type="text/plain")
    out = {"median_body_bytes": len(body), "lines": body.count(b"\n") + 1, "runs": []}
    if snapshot:
        out["snapshot_seconds"] = snapshot_s
        out["snapshot_bytes"] = os.path.getsize(os.path.join(work, "snapshot", "ranges.snapshot"))
    try:
        for k in range(a.runs):
            b = wrk(port, work, a.duration, a.connections, "breachd-%d" % (k + 1), work,
                    server_pid=srv.pid)
            n = wrk(ngx_port, work, a.duration, a.connections, "nginx-%d" % (k + 1), work,
                    server_pid=ngx.pid)
            out["runs"].append({"breachd": b, "nginx": n, "ratio": round(b["rps"] / n["rps"], 3)})
        out["one_connection"] = wrk(port, work, a.duration, 1, "breachd-1conn", work)
        out["one_connection_nginx"] = wrk(ngx_port, work, a.duration, 1, "nginx-1conn", work)
    finally:
        for p in (srv, ngx):
            p.terminate()
            p.wait()
    ratios = sorted(r["ratio"] for r in out["runs"])
    out["ratio_median"] = ratios[len(ratios) // 2]
    # CPU per request, server side, medians: what the load of other processes moves least
    med = lambda side: sorted(r[side]["cpu_us"]["server"] for r in out["runs"])[len(out["runs"]) // 2]
    out["server_cpu_us"] = {"breachd": med("breachd"), "nginx": med("nginx")}
    log("  server CPU per request (medians): breachd %.1f us, nginx %.1f us"
        % (out["server_cpu_us"]["breachd"], out["server_cpu_us"]["nginx"]))
    if floor_uri:
        out["floor"] = range_floor(a, floor_uri, prefixes, work, out)
    return out


def range_floor(a, uri, prefixes, work, served):
    """PostgreSQL alone executing a range request's statement (pg_floors.serve) with
    breachd's and wrk's number of connections; with what nginx, wrk and the loopback spent
    per request in the ceiling's runs (medians), the most requests/s two cores allow."""
    params = pg_floors.write_range_params(prefixes, os.path.join(work, "range-params.tsv"))
    db_pid = None
    if os.environ.get("BREACHD_PG_DIR"):
        with open(os.path.join(os.environ["BREACHD_PG_DIR"], "data", "postmaster.pid")) as f:
            db_pid = int(f.readline())
    floor_bin = os.path.join(a.build, "pg_floor")
    out = {"by_connections": {}}
    for conns in sorted({a.threads, a.connections}):
        runs = [pg_floors.serve(floor_bin, uri, pg_floors.RANGE_SQL, params, a.duration, conns,
                                min(conns, 2), db_pid) for _ in range(a.runs)]
        for x in runs:
            log("  floor, %d connections: %.0f statements/s, postgres cores %s, client %.2f"
                % (conns, x["per_second"], x.get("db_cores"), x["client_cores"]))
        out["by_connections"][conns] = sorted(runs, key=lambda x: x["per_second"])[len(runs) // 2]
    best = max(out["by_connections"].values(), key=lambda x: x["per_second"])
    med = lambda k: sorted(r["nginx"]["cpu_us"][k] for r in served["runs"])[len(served["runs"]) // 2]
    budget = {"libpq client": round(1e6 * best["client_cores"] / best["per_second"], 1),
              "nginx": med("server"), "wrk": med("wrk"), "softirq": med("softirq")}
    if best.get("db_cores"):
        budget["postgres"] = round(1e6 * best["db_cores"] / best["per_second"], 1)
    nginx_rps = sorted(r["nginx"]["rps"] for r in served["runs"])[len(served["runs"]) // 2]
    out["budget_us"] = budget
    out["bound_rps"] = round((os.cpu_count() or 1) * 1e6 / sum(budget.values()))
    out["bound_ratio"] = round(out["bound_rps"] / nginx_rps, 3)
    out["floor_ratio"] = round(best["per_second"] / nginx_rps, 3)
    log("  floor: %.3f x nginx; CPU budget %s us: at most %d req/s, %.3f x nginx"
        % (out["floor_ratio"], budget, out["bound_rps"], out["bound_ratio"]))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hashes", type=int, default=10_000_000)
    ap.add_argument("--build", default="build")
    ap.add_argument("--duration", type=int, default=10)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--connections", type=int, default=32)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--download", default=None, help="the generated file (kept for reuse)")
    ap.add_argument("--density-of", type=int, default=0,
                    help="fill the buckets as this many hashes would (the hashes then cover "
                         "that fraction of the prefixes): sizes at scale without the load")
    ap.add_argument("--pg-uri", default=None, help="also load into this PostgreSQL database")
    ap.add_argument("--no-http", action="store_true")
    ap.add_argument("--pg-http", action="store_true", help="serve /range/ from PostgreSQL too")
    ap.add_argument("--pg-vacuum", action="store_true",
                    help="VACUUM ANALYZE the ranges after the load, before serving")
    ap.add_argument("--pg-snapshot", action="store_true",
                    help="serve /range/ from PostgreSQL with --range-snapshot-dir too (after "
                         "--pg-http's run of the store read, in the same session)")
    ap.add_argument("--no-sqlite", action="store_true")
    a = ap.parse_args()
    a.build = os.path.abspath(a.build)
    span = a.hashes / a.density_of if a.density_of else 1.0
    path = a.download or "/tmp/breachd-bench-pwned-%d%s.txt" % (
        a.hashes, "-as-%d" % a.density_of if a.density_of else "")
    t0 = time.time()
    generate(path, a.hashes, a.seed, span)
    log("download: %s (%.1f MB, %.0f s)" % (path, os.path.getsize(path) / 1e6, time.time() - t0))
    work = tempfile.mkdtemp(prefix="breachd-ranges-")
    r = {"hashes": a.hashes, "density_of": a.density_of or a.hashes,
         "download_bytes": os.path.getsize(path)}
    try:
        if not a.no_sqlite:
            db = os.path.join(work, "store.db")
            r["sqlite_load"] = load(a.build, db, [], path, a.hashes)
            r["sqlite_size"] = sqlite_size(db, a.hashes)
            log("sqlite: %s %s" % (r["sqlite_load"], r["sqlite_size"]))
            if not a.no_http:
                r["http"] = serve(a, db, work)
        if a.pg_uri:
            secret = os.path.join(work, "pg.secret")
            r["pg_load"] = load(a.build, a.pg_uri, ["--secret", secret], path, a.hashes)
            r["pg_size"] = pg_size(a.pg_uri, a.hashes)
            log("postgresql: %s %s" % (r["pg_load"], r["pg_size"]))
            if a.pg_vacuum and (a.pg_http or a.pg_snapshot):
                # what autovacuum would do a minute after the load
                subprocess.run(["psql", "-q", a.pg_uri, "-c", "VACUUM ANALYZE password_ranges"],
                               check=True, timeout=600)
            if a.pg_http:
                r["pg_http"] = serve(a, a.pg_uri, work, ["--secret", secret],
                                     floor_uri=a.pg_uri)
            if a.pg_snapshot:
                r["pg_http_snapshot"] = serve(a, a.pg_uri, work, ["--secret", secret],
                                              snapshot=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(r, indent=1))


if __name__ == "__main__":
    main()
