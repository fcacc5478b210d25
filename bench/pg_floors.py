"""What PostgreSQL alone can do on this machine: the floors under breachd's PostgreSQL
targets (issues 14 and 16), measured in the same run as breachd and the nginx ceiling.

- serving: bench/pg_floor.c executes the very statement breachd sends for a request,
  prepared, with as many connections as wrk keeps open and the same parameters in turn,
  from a client that does nothing else. breachd does that and more per request (HTTP,
  JSON, its own statement bookkeeping) on the same two cores, beside wrk, so the floor's
  statements per second bound breachd's requests per second from above.
- loading: PostgreSQL alone making the tables of a bulk load queryable from rows it already
  has in its own binary COPY format: COPY into a table without indexes, every index of the
  real table built, ANALYZE. breachctl's --bulk does that and more (reads, parses, hashes
  and sends every row; removes duplicates; counts; the change log).
Standard library only."""
import json
import os
import re
import subprocess
import time

# The statement of a scenario-1 request (/v7/breach-search?type=email&number_of_records=1):
# src/store/pg/records.c, EMAIL_FIRST (an email search without filters, a first page, on a
# store whose searches are not routed); the limit is the page size plus one
# (src/v7/search.c).
S1_COLUMNS = ("r.id, r.breach_date, r.user_name, r.first_name, r.last_name, r.email, "
              "r.email_domain, r.phone_number, r.ip_address, r.bitcoin_address, "
              "r.password_masked, r.password_hash, r.ssn_masked, r.other_attributes, "
              "r.severity, r.breach_id")
S1_SQL = ("SELECT " + S1_COLUMNS + ", (SELECT value FROM meta WHERE key = 'data_version'), "
          "count(*) OVER () FROM records r WHERE r.email = $1 "
          "ORDER BY r.breach_date DESC, r.id DESC LIMIT $2")
# The same lookups S1_BATCH emails at a time, in one statement (unnest of the keys, LATERAL
# per key, each key's rows tagged with its position): the statement a dispatcher batching
# the lookups waiting at one moment would send (issue 31); its floor is in lookups per
# second (statements times S1_BATCH).
S1_BATCH = 16
S1_BATCH_SQL = ("SELECT k.i, r.*, (SELECT value FROM meta WHERE key = 'data_version') "
                "FROM unnest($1::text[]) WITH ORDINALITY AS k(e, i) CROSS JOIN LATERAL "
                "(SELECT " + S1_COLUMNS + ", count(*) OVER () FROM records r "
                "WHERE r.email = k.e ORDER BY r.breach_date DESC, r.id DESC LIMIT $2) r")

# The statement of a range request: src/store/pg/ranges.c, RANGE_GET.
RANGE_SQL = "SELECT hashes FROM password_ranges WHERE bucket = $1"


def write_s1_params(emails, path):
    with open(path, "w") as f:
        for e in emails:
            f.write("%s\t2\n" % e)
    return path


def write_s1_batch_params(emails, path, n=S1_BATCH):
    """S1_BATCH_SQL's parameters: n emails as an array literal (the corpus's emails need no
    quoting), then the limit."""
    with open(path, "w") as f:
        for i in range(0, len(emails) - n + 1, n):
            f.write("{%s}\t2\n" % ",".join(emails[i:i + n]))
    return path


def write_range_params(prefixes, path):
    """A SHA-1 range's bucket is its 20-bit prefix (mode 0: src/store/pg/ranges.c)."""
    with open(path, "w") as f:
        for p in prefixes:
            f.write("%d\n" % int(p, 16))
    return path


def _cpu(pid):
    """CPU seconds of a postmaster and its backends so far: its own, its live children's,
    and those of the children it has reaped (a backend's time moves there when its
    connection ends)."""
    tck = os.sysconf("SC_CLK_TCK")

    def stat(q):
        with open("/proc/%d/stat" % q) as f:
            return [int(x) for x in f.read().rsplit(")", 1)[1].split()[11:15]]
    utime, stime, cutime, cstime = stat(pid)
    total = utime + stime + cutime + cstime
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            children = [int(x) for x in f.read().split()]
    except OSError:
        children = []
    for q in children:
        try:
            total += sum(stat(q)[:2])
        except OSError:
            continue
    return total / tck


def serve(floor_bin, uri, sql, params, seconds, connections, threads, db_pid=None):
    """One run of bench/pg_floor: statements per second, and who used the cores."""
    db0 = _cpu(db_pid) if db_pid else 0.0
    t0 = time.monotonic()
    p = subprocess.run([floor_bin, uri, str(seconds), str(connections), str(threads), params,
                        sql], capture_output=True, text=True, timeout=seconds + 120)
    wall = time.monotonic() - t0
    if p.returncode != 0:
        raise SystemExit("pg_floor failed (%d): %s" % (p.returncode, p.stderr.strip()))
    r = json.loads(p.stdout)
    r["per_second"] = round(r["per_second"], 1)
    r["client_cores"] = round(r.pop("client_cpu_seconds") / seconds, 2)
    if db_pid:
        # the connections' start and end are inside wall: a slight overcount of the cores
        r["db_cores"] = round((_cpu(db_pid) - db0) / wall, 2)
    return r


def _psql(uri, sql):
    p = subprocess.run(["psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d", uri,
                        "-c", sql], capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit("psql %s: %s" % (sql[:200], (p.stderr or p.stdout).strip()))
    return p.stdout.strip()


def _timed_script(uri, statements):
    """Runs statements in one psql session with \\timing; returns each one's seconds as
    the server reported it (no process start or connection counted)."""
    script = "\\timing on\n" + "".join(st + ";\n" for st in statements)
    p = subprocess.run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", uri],
                       input=script, capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit("psql: %s" % (p.stderr or p.stdout).strip())
    times = [float(m) / 1000 for m in re.findall(r"^Time: ([0-9.]+) ms", p.stdout, re.M)]
    if len(times) != len(statements):
        raise SystemExit("psql printed %d timings for %d statements" % (len(times),
                                                                         len(statements)))
    return times


def load(uri, tables, workdir):
    """PostgreSQL alone rebuilding `tables` (names in a store just loaded) from their own
    rows: COPY TO a binary file, then, timed, COPY FROM it into a new table without
    indexes, each index and unique key of the original built on it, and ANALYZE. The
    server writes and reads the files, so `workdir` must be writable by its user.
    Returns {"tables": {name: {rows, indexes, copy_s, index_s, analyze_s, seconds}},
    "seconds": the sum}."""
    out, total = {}, 0.0
    for t in tables:
        path = os.path.join(workdir, "floor-%s.copy" % t)
        _psql(uri, "COPY %s TO '%s' (FORMAT binary)" % (t, path))
        rows = int(_psql(uri, "SELECT count(*) FROM %s" % t))
        indexes = _psql(uri, "SELECT indexdef FROM pg_indexes WHERE schemaname = 'public' "
                             "AND tablename = '%s' ORDER BY indexname" % t).splitlines()
        copy = "floor_" + t
        _psql(uri, "DROP TABLE IF EXISTS %s; CREATE TABLE %s (LIKE %s INCLUDING DEFAULTS)"
              % (copy, copy, t))
        ddl = [re.sub(r"^CREATE (UNIQUE )?INDEX \S+ ON (public\.)?%s " % re.escape(t),
                      lambda m, k=k: "CREATE %sINDEX floor_%s_%d ON %s "
                      % (m.group(1) or "", t, k, copy), d) for k, d in enumerate(indexes)]
        times = _timed_script(uri, ["COPY %s FROM '%s' (FORMAT binary)" % (copy, path)]
                              + ddl + ["ANALYZE %s" % copy])
        f = {"rows": rows, "indexes": len(indexes), "copy_s": round(times[0], 2),
             "index_s": round(sum(times[1:-1]), 2), "analyze_s": round(times[-1], 2),
             "seconds": round(sum(times), 2)}
        total += sum(times)
        out[t] = f
        _psql(uri, "DROP TABLE %s" % copy)
        os.unlink(path)
    return {"tables": out, "seconds": round(total, 2)}


def main():
    """Scenario 1's floor alone, one lookup per statement and batched, on a store already
    loaded (e.g. a kept bench work directory's):
        pg_floors.py --floor-bin build/pg_floor --uri URI --emails emails.txt [--db-pid PID]
    prints one JSON object: per variant the median run's statements and lookups per second
    and PostgreSQL's CPU microseconds per lookup (with --db-pid, the postmaster's)."""
    import argparse
    import tempfile
    ap = argparse.ArgumentParser(description=main.__doc__.split("\n")[0])
    ap.add_argument("--floor-bin", required=True)
    ap.add_argument("--uri", required=True)
    ap.add_argument("--emails", required=True)
    ap.add_argument("--db-pid", type=int)
    ap.add_argument("--seconds", type=int, default=4)
    ap.add_argument("--connections", type=int, default=2)
    ap.add_argument("--runs", type=int, default=5, help="alternating rounds; medians")
    a = ap.parse_args()
    with open(a.emails) as f:
        emails = [l.strip() for l in f if l.strip()]
    tmp = tempfile.mkdtemp()
    variants = {"one": (S1_SQL, write_s1_params(emails, os.path.join(tmp, "one.tsv")), 1),
                "batch%d" % S1_BATCH: (S1_BATCH_SQL, write_s1_batch_params(
                    emails, os.path.join(tmp, "batch.tsv")), S1_BATCH)}
    runs = {k: [] for k in variants}
    for _ in range(a.runs):
        for k, (sql, params, n) in variants.items():
            runs[k].append(serve(a.floor_bin, a.uri, sql, params, a.seconds, a.connections,
                                 1, a.db_pid))
    out = {}
    for k, rs in runs.items():
        n = variants[k][2]
        med = sorted(rs, key=lambda x: x["per_second"])[len(rs) // 2]
        o = {"statements_per_s": med["per_second"], "lookups_per_s": round(med["per_second"] * n),
             "per_second_runs": [x["per_second"] for x in rs]}
        if a.db_pid:
            o["postgres_us_per_lookup"] = round(sorted(
                1e6 * x["db_cores"] / (x["per_second"] * n) for x in rs)[len(rs) // 2], 1)
        out[k] = o
    for p in os.listdir(tmp):
        os.unlink(os.path.join(tmp, p))
    os.rmdir(tmp)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
