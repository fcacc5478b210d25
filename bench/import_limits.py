#!/usr/bin/env python3
"""Import speed beside its physical limits on this machine (issue 18, "Speed").

For records and for cards, with the real binaries of --build, each in a fresh store:
  1. read + parse + normalise + mask + hash alone: `breachctl import KIND FILE --dry-run`;
  2. `breachctl import KIND FILE` (the plain path: every index kept row by row, a commit
     every 50,000 rows so that a running server sees each batch);
  3. `breachctl import KIND FILE --bulk` (indexes dropped, rebuilt by sorting at the end);
  4. SQLite alone, with the importer's settings, copying the rows the plain import stored
     (already parsed, normalised, masked and hashed) into a fresh store of the same schema:
     a. "live": INSERT ... SELECT in the plain import's transactions (an eighth of the rows
        the store holds, at least 50,000 and at most 1,000,000) with every index in place,
        plus what the importer moves with them (domain counts; the cards' words, owner-word
        rows and BIN/tail counts): the floor of the plain path;
     b. "staged": every row in one INSERT ... SELECT with the lookup indexes dropped, then
        each index created by sorting, then the same counts: the floor of --bulk.
     Both leave out what the importer adds beyond the rows (the change log, password
     ranges, watch matching), so they are generous floors.
Prints a Markdown section; --results FILE replaces the import section of bench/RESULTS.md.
"""
import argparse
import os
import resource
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

import results_md

TARGET = {"records": 200000, "cards": 100000}


def batch_rows(rows):
    """Rows per transaction of a plain import into a store of `rows` rows (bd_import_batch_rows)."""
    return min(1000000, max(50000, rows // 8))

# The importer's writer settings (src/store/sqlite/conn.c: open, set_role).
PRAGMAS = ("PRAGMA synchronous=NORMAL", "PRAGMA foreign_keys=OFF", "PRAGMA temp_store=MEMORY",
           "PRAGMA cache_size=-1048576", "PRAGMA mmap_size=0", "PRAGMA wal_autocheckpoint=16384",
           "PRAGMA threads=%d" % max(0, min(7, (os.cpu_count() or 1) - 1)))


def timed(cmd):
    """Runs cmd; returns (wall, user, sys, stderr)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.monotonic()
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.monotonic() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        sys.exit("failed (%d): %s\n%s" % (p.returncode, " ".join(cmd), p.stderr.decode()))
    return wall, after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime, p.stderr.decode()


class Stores:
    def __init__(self, build, corpus, work):
        self.ctl = os.path.join(build, "breachctl")
        self.corpus = corpus
        self.work = work

    def fresh(self, name):
        db = os.path.join(self.work, name + ".db")
        for suffix in ("", "-wal", "-shm", ".secret"):
            if os.path.exists(db + suffix):
                os.unlink(db + suffix)
        subprocess.run([self.ctl, "init", "--db", db], check=True, capture_output=True)
        subprocess.run([self.ctl, "import", "breaches", os.path.join(self.corpus, "breaches.jsonl"),
                        "--db", db], check=True, capture_output=True)
        return db

    def drop(self, db):
        for suffix in ("", "-wal", "-shm", ".secret"):
            if os.path.exists(db + suffix):
                os.unlink(db + suffix)

    def import_(self, kind, db, *flags):
        return timed([self.ctl, "import", kind, os.path.join(self.corpus, kind + ".jsonl"), "--db", db]
                     + list(flags))


def connect(db, src):
    con = sqlite3.connect(db, isolation_level=None)
    for p in PRAGMAS:
        con.execute(p)
    con.execute("ATTACH ? AS src", (src,))
    return con


# What moves with a batch of rows [lo, hi) besides the rows, per kind (the importer's own
# statements do the same work row by row).
def live_extras(kind):
    if kind == "records":
        return ["INSERT INTO domain_counts(domain, n) SELECT email_domain, count(*) FROM src.records "
                "WHERE id >= :lo AND id < :hi AND email_domain IS NOT NULL GROUP BY email_domain "
                "ON CONFLICT(domain) DO UPDATE SET n = n + excluded.n"]
    return ["INSERT INTO card_owner_words SELECT * FROM src.card_owner_words WHERE id >= :lo AND id < :hi",
            "INSERT INTO cards_words(rowid, owner, bank) SELECT id, owner, bank FROM src.cards "
            "WHERE id >= :lo AND id < :hi",
            "INSERT INTO card_counts(kind, key, n) SELECT 0, bin, count(*) FROM src.cards "
            "WHERE id >= :lo AND id < :hi GROUP BY bin ON CONFLICT(kind, key) DO UPDATE SET n = n + excluded.n",
            "INSERT INTO card_counts(kind, key, n) SELECT 1, tail, count(*) FROM src.cards "
            "WHERE id >= :lo AND id < :hi GROUP BY tail ON CONFLICT(kind, key) DO UPDATE SET n = n + excluded.n"]


def staged_extras(kind):
    if kind == "records":
        return [("domain counts", "INSERT INTO domain_counts(domain, n) SELECT email_domain, count(*) "
                 "FROM records WHERE email_domain IS NOT NULL GROUP BY email_domain")]
    return [("owner-word rows", "INSERT INTO card_owner_words SELECT * FROM src.card_owner_words"),
            ("FTS5 words (rebuild)", "INSERT INTO cards_words(cards_words) VALUES ('rebuild')"),
            ("BIN and tail counts", "INSERT INTO card_counts(kind, key, n) SELECT 0, bin, count(*) FROM cards "
             "GROUP BY bin; INSERT INTO card_counts(kind, key, n) SELECT 1, tail, count(*) FROM cards GROUP BY tail")]


def floor_live(stores, kind, src):
    db = stores.fresh("floor-live-" + kind)
    con = connect(db, src)
    lo, hi_max = con.execute("SELECT min(id), max(id) FROM src.%s" % kind).fetchone()
    first = lo
    t = time.monotonic()
    while lo <= hi_max:
        args = {"lo": lo, "hi": lo + batch_rows(lo - first)}
        con.execute("BEGIN")
        con.execute("INSERT INTO main.%s SELECT * FROM src.%s WHERE id >= :lo AND id < :hi" % (kind, kind), args)
        for sql in live_extras(kind):
            con.execute(sql, args)
        con.execute("COMMIT")
        lo = args["hi"]
    wall = time.monotonic() - t
    con.close()
    stores.drop(db)
    return wall


def floor_staged(stores, kind, src):
    db = stores.fresh("floor-staged-" + kind)
    con = connect(db, src)
    indexes = con.execute("SELECT name, sql FROM main.sqlite_master WHERE type = 'index' AND tbl_name = ? "
                          "AND sql IS NOT NULL ORDER BY rowid", (kind,)).fetchall()
    for name, _ in indexes:
        con.execute("DROP INDEX main.%s" % name)
    steps = []
    con.execute("BEGIN")
    t = time.monotonic()
    con.execute("INSERT INTO main.%s SELECT * FROM src.%s" % (kind, kind))
    steps.append(("rows (with the table's unique keys)", time.monotonic() - t))
    for name, sql in indexes:
        t = time.monotonic()
        con.execute(sql)
        steps.append((name, time.monotonic() - t))
    for what, sql in staged_extras(kind):
        t = time.monotonic()
        for one in sql.split("; "):  # executescript would commit first
            con.execute(one)
        steps.append((what, time.monotonic() - t))
    t = time.monotonic()
    con.execute("COMMIT")
    steps.append(("commit", time.monotonic() - t))
    con.close()
    stores.drop(db)
    return sum(s for _, s in steps), steps


def count_lines(path):
    with open(path, "rb") as f:
        return sum(1 for _ in f)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--records", type=int, default=1000000)
    ap.add_argument("--cards", type=int, default=1000000)
    ap.add_argument("--corpus", help="corpus directory (generated by bench/gen_corpus.py when missing)")
    ap.add_argument("--build", default="build")
    ap.add_argument("--work", default=None, help="where the stores go (default: a new directory in /tmp)")
    ap.add_argument("--label", default=None, help="section tag (default import-<records>)")
    ap.add_argument("--results", help="bench/RESULTS.md to update")
    ap.add_argument("--kinds", default="records,cards", help="which files to time (records,cards)")
    a = ap.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    corpus = a.corpus or "/tmp/breachd-import-corpus-%d-%d" % (a.records, a.cards)
    if not os.path.exists(os.path.join(corpus, "manifest.json")):
        print("generating %s ..." % corpus, flush=True)
        subprocess.run([sys.executable, os.path.join(here, "gen_corpus.py"), "--records", str(a.records),
                        "--cards", str(a.cards), "--seed", "7", "--out", corpus], check=True)
    work = a.work or tempfile.mkdtemp(prefix="breachd-import-bench-")
    os.makedirs(work, exist_ok=True)
    stores = Stores(a.build, corpus, work)
    res = {}
    kinds = [k for k in ("records", "cards") if k in a.kinds.split(",")]
    for kind in kinds:
        n = count_lines(os.path.join(corpus, kind + ".jsonl"))
        r = {"lines": n}
        db = stores.fresh("dry-" + kind)
        r["dry"] = stores.import_(kind, db, "--dry-run")
        stores.drop(db)
        print("%s: dry run %.1f s" % (kind, r["dry"][0]), flush=True)
        plain = stores.fresh("plain-" + kind)
        r["plain"] = stores.import_(kind, plain)
        print("%s: plain %.1f s" % (kind, r["plain"][0]), flush=True)
        r["size"] = os.path.getsize(plain)
        r["live"] = floor_live(stores, kind, plain)
        print("%s: SQLite alone, live indexes %.1f s" % (kind, r["live"]), flush=True)
        r["staged"], r["steps"] = floor_staged(stores, kind, plain)
        print("%s: SQLite alone, staged %.1f s" % (kind, r["staged"]), flush=True)
        stores.drop(plain)
        db = stores.fresh("bulk-" + kind)
        r["bulk"] = stores.import_(kind, db, "--bulk")
        print("%s: --bulk %.1f s" % (kind, r["bulk"][0]), flush=True)
        stores.drop(db)
        res[kind] = r
    if not a.work:
        shutil.rmtree(work, ignore_errors=True)
    text = report(a, corpus, res, kinds)
    print(text)
    if a.results:
        tag = a.label or "import-%d" % a.records
        results_md.replace_section(a.results, tag, text)


def report(a, corpus, res, kinds):
    tag = a.label or "import-%d" % a.records
    commit = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], capture_output=True).stdout.decode().strip()
    if subprocess.run(["git", "status", "--porcelain", "--", "src"], capture_output=True).stdout.strip():
        commit += " with uncommitted changes under src/"
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    out = ["<!-- bench:%s:begin -->" % tag,
           "## Import speed and its floor, %s, %s" % (
               " and ".join("%s %s" % (format(res[k]["lines"], ","), k) for k in kinds), when),
           "",
           "Command: `make bench-import%s` (`bench/import_limits.py --records %d --cards %d --kinds %s`), breachctl at "
           "commit %s, SQLite %s, %d cores, load average %.2f at the end; corpus `%s` "
           "(bench/gen_corpus.py --seed 7). Each line is a fresh store holding the corpus's breaches." % (
               "" if a.records == 1000000 else "-10m", a.records, a.cards, ",".join(kinds), commit, sqlite3.sqlite_version, os.cpu_count(), os.getloadavg()[0], corpus),
           "",
           "| | %s |" % " | ".join("%s: s | %s/s" % (k, k) for k in kinds),
           "|---|%s" % ("--:|--:|" * len(kinds))]

    def row(label, key):
        cells = []
        for kind in kinds:
            v = res[kind][key]
            s = v[0] if isinstance(v, tuple) else v
            cells += ["%.1f" % s, format(int(res[kind]["lines"] / s), ",")]
        out.append("| %s | %s |" % (label, " | ".join(cells)))

    row("read, parse, normalise, mask, hash alone (`--dry-run`)", "dry")
    row("SQLite alone: prepared rows, every index live, the plain path's commits (its floor)", "live")
    row("SQLite alone: prepared rows, then each index by sorting (the `--bulk` floor)", "staged")
    row("`breachctl import` (plain)", "plain")
    row("`breachctl import --bulk`", "bulk")
    out.append("")
    for kind in kinds:
        r = res[kind]
        t = TARGET[kind]
        rate = lambda s: r["lines"] / s
        out.append("- %s, target %s/s on both paths: plain %s/s (**%s**), `--bulk` %s/s (**%s**); SQLite's "
                   "own floor %s/s live, %s/s staged. Plain store %.0f MiB." % (
                       kind.capitalize(), format(t, ","), format(int(rate(r["plain"][0])), ","),
                       "met" if rate(r["plain"][0]) >= t else "missed", format(int(rate(r["bulk"][0])), ","),
                       "met" if rate(r["bulk"][0]) >= t else "missed", format(int(rate(r["live"])), ","),
                       format(int(rate(r["staged"])), ","), r["size"] / 1048576))
    for kind in kinds:
        steps = res[kind]["steps"]
        out.append("- The staged floor of %s, step by step: %s." % (
            kind, "; ".join("%s %.2f s" % (name, s) for name, s in steps)))
    out.append("- CPU (user + system) of the importer: %s." % "; ".join(
        "%s %s %.1f + %.1f s" % (kind, key, res[kind][key][1], res[kind][key][2])
        for kind in kinds for key in ("plain", "bulk")))
    out.append("<!-- bench:%s:end -->" % tag)
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    main()
