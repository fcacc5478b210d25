#!/usr/bin/env python3
"""Import speed beside its physical limits on this machine (issues 18 and 32, "Speed").

For records and for cards, with the real binaries of --build, each in a fresh store:
  1. read + parse + normalise + mask + hash alone: `breachctl import KIND FILE --dry-run`;
  2. `breachctl import KIND FILE` (the plain path: every index kept row by row, a commit
     every 50,000 rows so that a running server sees each batch);
  3. `breachctl import KIND FILE --bulk` (indexes dropped, rebuilt by sorting at the end);
  4. SQLite alone, with the best settings SQLite offers (not the importer's: issue 32 found
     the floors copied the importer's temp_store=MEMORY, which turns the external merge
     sorter and PRAGMA threads off), copying the rows the plain import stored (already
     parsed, normalised, masked and hashed) into a fresh store of the same schema:
     a. "live": INSERT ... SELECT in the plain import's transactions (an eighth of the rows
        the store holds, at least 50,000 and at most 1,000,000) with every index in place,
        plus what the importer moves with them (domain counts; the cards' words, owner-word
        rows and BIN/tail counts): the floor of the plain path;
     b. "staged": every row in one INSERT ... SELECT with the lookup indexes dropped, then
        each index created by sorting (temp_store=FILE, temporary files in the store's
        directory, PRAGMA threads, the sorter's memory picked by measuring one index at
        several sizes first), then the same counts, through the WAL: the floor of --bulk;
     c. "staged, no WAL": the same into a store file written with journal_mode=OFF and
        synchronous=OFF (nothing written twice): the floor of a load into an empty store.
     All leave out what the importer adds beyond the rows (the change log, password
     ranges, watch matching), so they are generous floors.
With --baseline-build, the importer runs of that build alternate with --build's (--rounds
times each), so a change is measured side by side in one run on a noisy machine.
Prints a Markdown section; --results FILE replaces the import section of bench/RESULTS.md.
"""
import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import results_md

sqlite3 = None  # imported once SQLITE_TMPDIR is set (SQLite reads it when it starts)

# Issue 32's targets at 1M (rows/s): plain and --bulk.
TARGET = {"records": {"plain": 120000, "bulk": 200000}, "cards": {"plain": 60000, "bulk": 100000}}
MEMORY_TARGET_KIB = 1 << 20


def batch_rows(rows):
    """Rows per transaction of a plain import into a store of `rows` rows (bd_import_batch_rows)."""
    return min(1000000, max(50000, rows // 8))

CORES = os.cpu_count() or 1
# The best settings SQLite offers a loader (not the importer's own): WAL with NORMAL sync
# (what a store serving reads needs), a 1 GiB page cache while rows go in, temporary data in
# files so that CREATE INDEX runs the external merge sorter, with helper threads.
PRAGMAS = ("PRAGMA synchronous=NORMAL", "PRAGMA foreign_keys=OFF", "PRAGMA temp_store=FILE",
           "PRAGMA cache_size=-1048576", "PRAGMA mmap_size=0", "PRAGMA wal_autocheckpoint=16384",
           "PRAGMA threads=%d" % max(0, min(7, CORES - 1)))
# What the sorter sweep tries: page cache (the sorter's in-memory run size follows it, at
# least 250 pages) in KiB, and helper threads.
SORT_SWEEP = [(kib, thr) for kib in (2048, 16384, 131072, 1048576) for thr in sorted({0, max(0, min(7, CORES - 1))})]


def timed(cmd):
    """Runs cmd; returns (wall, user, sys, stderr, peak RSS in KiB)."""
    t = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = p.stderr.read()
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        sys.exit("failed (%d): %s\n%s" % (p.returncode, " ".join(cmd), err.decode()))
    return wall, ru.ru_utime, ru.ru_stime, err.decode(), ru.ru_maxrss


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


def connect(db, src, pragmas=PRAGMAS):
    con = sqlite3.connect(db, isolation_level=None)
    for p in pragmas:
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
            # FTS5's best setting for a rebuild: a 16 MiB term hash, not 1 MiB (fewer
            # segments to merge; the importer's since 8e9d30c), then its default again
            ("FTS5 words (rebuild)", "INSERT INTO cards_words(cards_words, rank) VALUES ('hashsize', 16777216); "
             "INSERT INTO cards_words(cards_words) VALUES ('rebuild'); "
             "INSERT INTO cards_words(cards_words, rank) VALUES ('hashsize', 1048576)"),
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


def lookup_indexes(con, kind):
    return con.execute("SELECT name, sql FROM main.sqlite_master WHERE type = 'index' AND tbl_name = ? "
                       "AND sql IS NOT NULL ORDER BY rowid", (kind,)).fetchall()


def sorter_sweep(stores, kind, src):
    """Times CREATE INDEX of the kind's widest index over the staged rows at each sorter
    setting of SORT_SWEEP (rolled back each time); returns [(kib, threads, wall, cpu)]."""
    db = stores.fresh("sweep-" + kind)
    con = connect(db, src)
    indexes = lookup_indexes(con, kind)
    widest = {"records": "records_by_email", "cards": "cards_by_bin_created"}[kind]
    sql = [q for n, q in indexes if n == widest][0]
    for name, _ in indexes:
        con.execute("DROP INDEX main.%s" % name)
    con.execute("INSERT INTO main.%s SELECT * FROM src.%s" % (kind, kind))
    out = []
    for kib, thr in SORT_SWEEP:
        con.execute("PRAGMA cache_size=-%d" % kib)
        con.execute("PRAGMA threads=%d" % thr)
        con.execute("BEGIN")
        t, c = time.monotonic(), os.times()
        con.execute(sql)
        wall, c2 = time.monotonic() - t, os.times()
        con.execute("ROLLBACK")
        out.append((kib, thr, wall, (c2.user - c.user) + (c2.system - c.system)))
    con.close()
    stores.drop(db)
    return out


def floor_staged(stores, kind, src, sort, no_wal=False):
    """sort: (cache KiB, threads) of the index builds."""
    db = stores.fresh(("floor-nowal-" if no_wal else "floor-staged-") + kind)
    pragmas = PRAGMAS + (("PRAGMA journal_mode=OFF", "PRAGMA synchronous=OFF") if no_wal else ())
    con = connect(db, src, pragmas)
    indexes = lookup_indexes(con, kind)
    for name, _ in indexes:
        con.execute("DROP INDEX main.%s" % name)
    steps = []
    con.execute("BEGIN")
    t = time.monotonic()
    con.execute("INSERT INTO main.%s SELECT * FROM src.%s" % (kind, kind))
    steps.append(("rows (with the table's unique keys)", time.monotonic() - t))
    con.execute("PRAGMA cache_size=-%d" % sort[0])
    con.execute("PRAGMA threads=%d" % sort[1])
    for name, sql in indexes:
        t = time.monotonic()
        con.execute(sql)
        steps.append((name, time.monotonic() - t))
    con.execute("PRAGMA cache_size=-1048576")
    for what, sql in staged_extras(kind):
        t = time.monotonic()
        for one in sql.split("; "):  # executescript would commit first
            con.execute(one)
        steps.append((what, time.monotonic() - t))
    t = time.monotonic()
    con.execute("COMMIT")
    if no_wal:  # durable and a store again: what publishing the file would take
        con.execute("PRAGMA journal_mode=WAL")
        fd = os.open(db, os.O_RDONLY)
        os.fsync(fd)
        os.close(fd)
    steps.append(("commit", time.monotonic() - t))
    con.close()
    stores.drop(db)
    return sum(s for _, s in steps), steps


def count_lines(path):
    with open(path, "rb") as f:
        return sum(1 for _ in f)


def main():
    global sqlite3
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--records", type=int, default=1000000)
    ap.add_argument("--cards", type=int, default=1000000)
    ap.add_argument("--corpus", help="corpus directory (generated by bench/gen_corpus.py when missing)")
    ap.add_argument("--build", default="build")
    ap.add_argument("--baseline-build", help="a build of the commit before the change: its importer "
                    "runs alternate with --build's")
    ap.add_argument("--baseline-label", default="baseline")
    ap.add_argument("--rounds", type=int, default=1, help="importer runs of each build and path (medians)")
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
    # SQLite's temporary files (the sorter's runs) on the stores' disk, as breachctl does
    os.environ["SQLITE_TMPDIR"] = os.path.abspath(work)
    import sqlite3 as sqlite3_module
    sqlite3 = sqlite3_module
    builds = [("candidate", Stores(a.build, corpus, work))]
    if a.baseline_build:
        builds.insert(0, ("baseline", Stores(a.baseline_build, corpus, work)))
    stores = builds[-1][1]
    res = {}
    kinds = [k for k in ("records", "cards") if k in a.kinds.split(",")]
    for kind in kinds:
        n = count_lines(os.path.join(corpus, kind + ".jsonl"))
        r = {"lines": n, "runs": {}}
        db = stores.fresh("dry-" + kind)
        r["dry"] = stores.import_(kind, db, "--dry-run")
        stores.drop(db)
        print("%s: dry run %.1f s" % (kind, r["dry"][0]), flush=True)
        plain = None
        for rnd in range(a.rounds):
            for who, st in builds:
                for path in ("plain", "bulk"):
                    db = st.fresh("%s-%s-%s" % (path, who, kind))
                    t = st.import_(kind, db, *(("--bulk",) if path == "bulk" else ()))
                    r["runs"].setdefault((who, path), []).append(t)
                    print("%s: %s %s %.1f s (%.1f + %.1f s CPU, %d MiB peak)" % (
                        kind, who, path, t[0], t[1], t[2], t[4] // 1024), flush=True)
                    if who == "candidate" and path == "plain" and plain is None:
                        plain = db + ".kept"
                        os.rename(db, plain)
                        r["size"] = os.path.getsize(plain)
                    st.drop(db)
        r["live"] = floor_live(stores, kind, plain)
        print("%s: SQLite alone, live indexes %.1f s" % (kind, r["live"]), flush=True)
        r["sweep"] = sorter_sweep(stores, kind, plain)
        best = min(r["sweep"], key=lambda x: x[2])
        r["sort"] = best[:2]
        print("%s: sorter sweep %s" % (kind, r["sweep"]), flush=True)
        r["staged"], r["steps"] = floor_staged(stores, kind, plain, r["sort"])
        print("%s: SQLite alone, staged %.1f s" % (kind, r["staged"]), flush=True)
        r["nowal"], r["nowal_steps"] = floor_staged(stores, kind, plain, r["sort"], no_wal=True)
        print("%s: SQLite alone, staged without the WAL %.1f s" % (kind, r["nowal"]), flush=True)
        os.unlink(plain)
        res[kind] = r
    if not a.work:
        shutil.rmtree(work, ignore_errors=True)
    text = report(a, corpus, res, kinds, [who for who, _ in builds])
    print(text)
    if a.results:
        tag = a.label or "import-%d" % a.records
        results_md.replace_section(a.results, tag, text)


def median_run(runs):
    """The run of median wall time (the lower middle of an even count)."""
    return sorted(runs, key=lambda t: t[0])[(len(runs) - 1) // 2]


def report(a, corpus, res, kinds, who):
    tag = a.label or "import-%d" % a.records
    commit = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], capture_output=True).stdout.decode().strip()
    if subprocess.run(["git", "status", "--porcelain", "--", "src"], capture_output=True).stdout.strip():
        commit += " with uncommitted changes under src/"
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    names = {"candidate": "this tree (%s)" % commit, "baseline": a.baseline_label}
    out = ["<!-- bench:%s:begin -->" % tag,
           "## Import speed and its floor, %s, %s" % (
               " and ".join("%s %s" % (format(res[k]["lines"], ","), k) for k in kinds), when),
           "",
           "Command: `make bench-import%s` (`bench/import_limits.py --records %d --cards %d --kinds %s --rounds %d%s`), "
           "breachctl at commit %s, SQLite %s, %d cores, load average %.2f at the end; corpus `%s` "
           "(bench/gen_corpus.py --seed 7). Each line is a fresh store holding the corpus's breaches; "
           "importer lines are the median of %d run(s)%s; the floors use the best settings SQLite offers "
           "(temp_store=FILE, temporary files on the store's disk, PRAGMA threads=%d, the sorter's memory "
           "picked by the sweep below), not the importer's." % (
               "" if a.records == 1000000 else "-10m", a.records, a.cards, ",".join(kinds), a.rounds,
               " --baseline-build ..." if "baseline" in who else "", commit, sqlite3.sqlite_version,
               os.cpu_count(), os.getloadavg()[0], corpus, a.rounds,
               ", %s's and this tree's alternating" % a.baseline_label if "baseline" in who else "",
               max(0, min(7, CORES - 1))),
           "",
           "| | %s |" % " | ".join("%s: s | %s/s" % (k, k) for k in kinds),
           "|---|%s" % ("--:|--:|" * len(kinds))]

    def row(label, get):
        cells = []
        for kind in kinds:
            s = get(res[kind])
            cells += ["%.1f" % s, format(int(res[kind]["lines"] / s), ",")]
        out.append("| %s | %s |" % (label, " | ".join(cells)))

    row("read, parse, normalise, mask, hash alone (`--dry-run`)", lambda r: r["dry"][0])
    row("SQLite alone: prepared rows, every index live, the plain path's commits (the plain floor)",
        lambda r: r["live"])
    row("SQLite alone: prepared rows, then each index by sorting, through the WAL (the `--bulk` floor)",
        lambda r: r["staged"])
    row("SQLite alone: the same into a file written without a journal (the floor of a load into an empty store)",
        lambda r: r["nowal"])
    for w in who:
        row("`breachctl import` (plain), %s" % names[w], lambda r: median_run(r["runs"][(w, "plain")])[0])
        row("`breachctl import --bulk`, %s" % names[w], lambda r: median_run(r["runs"][(w, "bulk")])[0])
    out.append("")
    for kind in kinds:
        r = res[kind]
        rate = lambda s: r["lines"] / s
        plain = median_run(r["runs"][("candidate", "plain")])
        bulk = median_run(r["runs"][("candidate", "bulk")])
        tp, tb = TARGET[kind]["plain"], TARGET[kind]["bulk"]
        line = ("- %s: plain %s/s against a target of %s/s (**%s**; %.2f of its floor, %s/s live), `--bulk` "
                "%s/s against %s/s (**%s**; %.2f of its floor, %s/s staged through the WAL, %s/s without it)." % (
                    kind.capitalize(), format(int(rate(plain[0])), ","), format(tp, ","),
                    "met" if rate(plain[0]) >= tp else "missed", r["live"] / plain[0], format(int(rate(r["live"])), ","),
                    format(int(rate(bulk[0])), ","), format(tb, ","), "met" if rate(bulk[0]) >= tb else "missed",
                    r["staged"] / bulk[0], format(int(rate(r["staged"])), ","), format(int(rate(r["nowal"])), ",")))
        if "baseline" in who:
            bp = median_run(r["runs"][("baseline", "plain")])
            bb = median_run(r["runs"][("baseline", "bulk")])
            line += " Against %s in the same run: plain %.2f ×, `--bulk` %.2f × as fast (CPU %.1f -> %.1f s and %.1f -> %.1f s)." % (
                a.baseline_label, bp[0] / plain[0], bb[0] / bulk[0], bp[1] + bp[2], plain[1] + plain[2],
                bb[1] + bb[2], bulk[1] + bulk[2])
        line += " Plain store %.0f MiB." % (r["size"] / 1048576)
        out.append(line)
    for kind in kinds:
        r = res[kind]
        out.append("- Sorter sweep (%s, CREATE INDEX of its widest index over the staged rows; page cache, which "
                   "sizes the sorter's runs, and helper threads: wall / CPU): %s; the floors use %d KiB, %d thread(s)." % (
                       kind, "; ".join("%d KiB, %d: %.2f / %.2f s" % x for x in r["sweep"]), r["sort"][0], r["sort"][1]))
        out.append("- The staged floor of %s, step by step: %s." % (
            kind, "; ".join("%s %.2f s" % (name, s) for name, s in r["steps"])))
        out.append("- The same without the WAL: %s." % (
            "; ".join("%s %.2f s" % (name, s) for name, s in r["nowal_steps"])))
    out.append("- CPU (user + system) and peak memory of the importer (median runs; target ≤ 1 GiB): %s." % "; ".join(
        "%s %s %s %.1f + %.1f s, %d MiB" % (kind, w, path, t[1], t[2], t[4] // 1024)
        for kind in kinds for w in who for path in ("plain", "bulk")
        for t in [median_run(res[kind]["runs"][(w, path)])]))
    out.append("<!-- bench:%s:end -->" % tag)
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    main()
