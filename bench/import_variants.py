#!/usr/bin/env python3
"""What a different records schema would buy the plain import (issue 18, "change what is
inserted"), measured as SQLite's own floor: rows already parsed, normalised and hashed are
copied from a store into a fresh database 50,000 a transaction (the plain path's commit
size) with the importer's settings, for each of these layouts, side by side in one run:

  current   the store's own schema: the records table, its unique content hash and its ten
            lookup indexes over text and blob keys (partial: only rows with the field);
  int-keys  the same lookups over 64-bit integer hashes of the values instead of the values
            (a search would hash its input and check the row), and the breach index folded
            into the unique content key (breach_id, dedup);
  one-table the records table with no index at all beside a single WITHOUT ROWID lookup table
            (key hash, breach date, record id) that every field's entry goes into, each
            batch's entries inserted in key order, and a WITHOUT ROWID content-key table.

Each layout is also loaded "staged" (rows first, then every index or lookup table built by
sorting): the --bulk floor. The source rows (with the integer hashes) are prepared before the
clock starts. Prints a Markdown section; --results FILE replaces the import-variants section
of bench/RESULTS.md.
"""
import argparse
import hashlib
import os
import sqlite3
import subprocess
import sys
import tempfile
import time

import results_md

BATCH = 50000
PRAGMAS = ("PRAGMA journal_mode=WAL", "PRAGMA synchronous=NORMAL", "PRAGMA temp_store=MEMORY",
           "PRAGMA cache_size=-1048576", "PRAGMA mmap_size=0", "PRAGMA wal_autocheckpoint=16384",
           "PRAGMA threads=%d" % max(0, min(7, (os.cpu_count() or 1) - 1)))
FIELDS = ["email", "email_domain", "phone_key", "user_name_key", "ip_address", "ssn_hmac",
          "password_hmac", "password_hash", "bitcoin_address"]


def h64(kind, v):
    if v is None:
        return None
    if isinstance(v, str):
        v = v.encode()
    return int.from_bytes(hashlib.blake2b(bytes([kind]) + v, digest_size=8).digest(), "little", signed=True)


def prepare(src, path):
    """Copies the source store's records into path with an integer hash beside each field."""
    con = sqlite3.connect(path, isolation_level=None)
    con.execute("PRAGMA page_size=16384")
    con.execute("PRAGMA journal_mode=OFF")
    con.execute("ATTACH ? AS s", (src,))
    cols = [r[1] for r in con.execute("PRAGMA s.table_info(records)")]
    con.execute("CREATE TABLE records AS SELECT * FROM s.records WHERE 0")
    for i, f in enumerate(FIELDS):
        con.execute("ALTER TABLE records ADD COLUMN k_%s INTEGER" % f)
    con.execute("ALTER TABLE records ADD COLUMN d1 INTEGER")
    con.execute("ALTER TABLE records ADD COLUMN d2 INTEGER")
    for i, f in enumerate(FIELDS):
        con.create_function("h%d" % i, 1, lambda v, i=i: h64(i, v), deterministic=True)
    con.create_function("half", 2, lambda b, n: int.from_bytes(b[8 * n:8 * n + 8], "little", signed=True),
                        deterministic=True)
    con.execute("BEGIN")
    con.execute("INSERT INTO records SELECT %s, %s, half(dedup, 0), half(dedup, 1) FROM s.records ORDER BY id"
                % (", ".join(cols), ", ".join("h%d(%s)" % (i, f) for i, f in enumerate(FIELDS))))
    con.execute("COMMIT")
    n = con.execute("SELECT count(*) FROM records").fetchone()[0]
    con.close()
    return cols, n


def layout(name, cols):
    """(DDL, per-batch inserts, staged index DDL) of a layout; :lo/:hi bound a batch."""
    cdef = ", ".join("id INTEGER PRIMARY KEY" if c == "id" else c for c in cols)
    rows = "INSERT INTO records SELECT %s FROM p.records WHERE id >= :lo AND id < :hi" % ", ".join(cols)
    if name == "current":
        table = "CREATE TABLE records(%s, UNIQUE(dedup))" % cdef
        idx = ["CREATE INDEX r_breach ON records(breach_id)"] + [
            "CREATE INDEX r_%s ON records(%s, breach_date) WHERE %s IS NOT NULL" % (f, f, f) for f in FIELDS]
        return [table], [rows], idx
    if name == "int-keys":
        kcols = ", ".join(["k_%s" % f for f in FIELDS])
        table = "CREATE TABLE records(%s, %s, UNIQUE(breach_id, dedup))" % (cdef, kcols)
        ins = "INSERT INTO records SELECT %s, %s FROM p.records WHERE id >= :lo AND id < :hi" % (
            ", ".join(cols), kcols)
        idx = ["CREATE INDEX r_%s ON records(k_%s, breach_date) WHERE k_%s IS NOT NULL" % (f, f, f)
               for f in FIELDS]
        return [table], [ins], idx
    # one-table
    table = "CREATE TABLE records(%s)" % cdef
    keys = ("CREATE TABLE keys(k INTEGER NOT NULL, d INTEGER NOT NULL, id INTEGER NOT NULL, "
            "PRIMARY KEY(k, d, id)) WITHOUT ROWID")
    dedup = ("CREATE TABLE dedup(b INTEGER NOT NULL, d1 INTEGER NOT NULL, d2 INTEGER NOT NULL, "
             "PRIMARY KEY(b, d1, d2)) WITHOUT ROWID")
    union = " UNION ALL ".join("SELECT k_%s AS k, breach_date AS d, id FROM p.records "
                               "WHERE id >= :lo AND id < :hi AND k_%s IS NOT NULL" % (f, f) for f in FIELDS)
    ins = [rows, "INSERT INTO dedup SELECT breach_id, d1, d2 FROM p.records WHERE id >= :lo AND id < :hi",
           "INSERT INTO keys SELECT k, d, id FROM (%s) ORDER BY k, d, id" % union]
    return [table, keys, dedup], ins, None


def connect(path, prepared):
    con = sqlite3.connect(path, isolation_level=None)
    con.execute("PRAGMA page_size=16384")
    for p in PRAGMAS:
        con.execute(p)
    con.execute("ATTACH ? AS p", (prepared,))
    return con


def run(name, cols, n, prepared, work, staged):
    path = os.path.join(work, "%s-%s.db" % (name, "staged" if staged else "live"))
    con = connect(path, prepared)
    ddl, inserts, idx = layout(name, cols)
    for d in ddl:
        con.execute(d)
    if not staged and idx:
        for d in idx:
            con.execute(d)
    t = time.monotonic()
    if staged:
        con.execute("BEGIN")
        for sql in inserts:
            if "ORDER BY k" in sql:  # one table: all entries at once, sorted
                con.execute(sql, {"lo": 0, "hi": 1 << 62})
            else:
                con.execute(sql, {"lo": 0, "hi": 1 << 62})
        for d in idx or []:
            con.execute(d)
        con.execute("COMMIT")
    else:
        lo = 1
        while lo <= n:
            con.execute("BEGIN")
            for sql in inserts:
                con.execute(sql, {"lo": lo, "hi": lo + BATCH})
            con.execute("COMMIT")
            lo += BATCH
    wall = time.monotonic() - t
    con.close()
    size = os.path.getsize(path)
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(path + suffix):
            os.unlink(path + suffix)
    return wall, size


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--store", help="a SQLite store holding the records to copy (default: the corpus's "
                    "records loaded with breachctl import --bulk into the work directory)")
    ap.add_argument("--corpus", default="/tmp/breachd-import-corpus-1000000-1000000")
    ap.add_argument("--build", default="build")
    ap.add_argument("--work", default=None)
    ap.add_argument("--results", help="bench/RESULTS.md to update")
    a = ap.parse_args()
    work = a.work or tempfile.mkdtemp(prefix="breachd-import-variants-")
    if not a.store:
        if not os.path.exists(os.path.join(a.corpus, "manifest.json")):
            subprocess.run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "gen_corpus.py"),
                            "--records", "1000000", "--cards", "1000000", "--seed", "7", "--out", a.corpus],
                           check=True)
        a.store = os.path.join(work, "source.db")
        ctl = os.path.join(a.build, "breachctl")
        subprocess.run([ctl, "init", "--db", a.store], check=True, capture_output=True)
        for kind, extra in (("breaches", []), ("records", ["--bulk"])):
            subprocess.run([ctl, "import", kind, os.path.join(a.corpus, kind + ".jsonl"), "--db", a.store] + extra,
                           check=True, capture_output=True)
    prepared = os.path.join(work, "prepared.db")
    if os.path.exists(prepared):
        os.unlink(prepared)
    cols, n = prepare(a.store, prepared)
    # ids must run 1..n for the batch windows
    lo, hi = sqlite3.connect(prepared).execute("SELECT min(id), max(id) FROM records").fetchone()
    if lo != 1 or hi != n:
        sys.exit("the store's record ids are not 1..%d" % n)
    sqlite3.connect(prepared).execute("CREATE UNIQUE INDEX IF NOT EXISTS by_id ON records(id)")
    res = []
    for name in ("current", "int-keys", "one-table"):
        for staged in (False, True):
            wall, size = run(name, cols, n, prepared, work, staged)
            res.append((name, staged, wall, size))
            print("%-9s %-6s %6.1f s %8d records/s %5.0f MiB" % (
                name, "staged" if staged else "live", wall, n / wall, size / 1048576), flush=True)
    os.unlink(prepared)
    if not a.work:
        subprocess.run(["rm", "-rf", work])
    commit = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], capture_output=True).stdout.decode().strip()
    out = ["<!-- bench:import-variants:begin -->",
           "## What another records layout would buy the import: SQLite's floor, %s" %
           time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
           "",
           "Command: `make bench-import-variants` (`bench/import_variants.py --store STORE`), at commit %s, "
           "SQLite %s, %d cores, load average %.2f at the end; %s records of the 1M benchmark corpus, "
           "prepared (parsed, normalised, hashed) before the clock starts. \"live\": 50,000 rows a "
           "transaction with every index in place (the plain path); \"staged\": rows first, then the "
           "indexes by sorting (`--bulk`)." % (commit, sqlite3.sqlite_version, os.cpu_count(),
                                               os.getloadavg()[0], format(n, ",")),
           "",
           "| layout | live: s | records/s | staged: s | records/s | size |",
           "|---|--:|--:|--:|--:|--:|"]
    for name in ("current", "int-keys", "one-table"):
        live = [r for r in res if r[0] == name and not r[1]][0]
        st = [r for r in res if r[0] == name and r[1]][0]
        out.append("| %s | %.1f | %s | %.1f | %s | %.0f MiB |" % (
            name, live[2], format(int(n / live[2]), ","), st[2], format(int(n / st[2]), ","), live[3] / 1048576))
    out.append("<!-- bench:import-variants:end -->")
    text = "\n".join(out) + "\n"
    print(text)
    if a.results:
        results_md.replace_section(a.results, "import-variants", text)


if __name__ == "__main__":
    main()
