#!/usr/bin/env python3
"""PostgreSQL import speed beside its floor (issue 32): `breachctl import --bulk` of the
benchmark corpus into a throwaway cluster tuned as bench/run.py tunes it, then PostgreSQL
alone rebuilding the same tables from their own rows (bench/pg_floors.load), side by side
in one run. Writes the import-pg-<records> section of bench/RESULTS.md.

    bench/import_pg.py --records 1000000 --cards 1000000 --build build [--rounds 3]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

BENCH = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(BENCH)
sys.path.insert(0, BENCH)
import pg_floors  # noqa: E402
import results_md  # noqa: E402
from run import PG_SETTINGS, PG_CLUSTER  # noqa: E402

# The tables a load of each kind writes, which the floor rebuilds: email_hashes is the
# records' too (the HIBP range over their emails, hashed at each records import).
TABLES = {"records": ("records", "record_domains", "email_hashes"),
          "cards": ("cards", "card_bins", "card_words", "card_owner_words")}
TARGET = 0.85  # issue 32: --bulk at least 0.85 of PostgreSQL alone's load


def log(msg):
    print("[import-pg] " + msg, file=sys.stderr, flush=True)


def sh(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if p.returncode != 0:
        raise SystemExit("%s failed (%d):\n%s%s" % (cmd[0], p.returncode, p.stderr, p.stdout))
    return p.stdout


def psql(uri, sql):
    return sh(["psql", "-qAtX", "-v", "ON_ERROR_STOP=1", uri, "-c", sql]).strip()


def db_uri(uri, name):
    return uri.replace("postgresql:///breachd?", "postgresql:///%s?" % name, 1)


def timed(cmd):
    """Runs cmd; wall, user and system seconds and peak memory (GNU time)."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as tf:
        t0 = time.monotonic()
        p = subprocess.run(["/usr/bin/time", "-f", "%U %S %M", "-o", tf.name] + cmd,
                           capture_output=True, text=True)
        wall = time.monotonic() - t0
        if p.returncode != 0:
            raise SystemExit("%s failed:\n%s" % (" ".join(cmd), p.stderr))
        user, sys_, rss = tf.read().split()[-3:]
    return {"wall_s": round(wall, 2), "user_s": float(user), "sys_s": float(sys_),
            "peak_mib": round(int(rss) / 1024)}


def start_cluster(work):
    d = os.path.join(work, "pg")
    os.chmod(work, 0o711)
    uri = sh([PG_CLUSTER, "start", d]).strip().splitlines()[-1]
    for k, v in PG_SETTINGS:
        psql(uri, "ALTER SYSTEM SET %s = '%s'" % (k, v))
    sh([PG_CLUSTER, "pause", d])
    sh([PG_CLUSTER, "resume", d])
    return d, uri


def one_load(a, uri, build, kind, n, files_dir, floor):
    """A fresh database, its breaches, then `import <kind> --bulk` timed; with floor, the
    floor measured on the store the load left. Returns (import figures, floor or None)."""
    name = "imp_%s_%d" % (kind, n)
    psql(uri, "CREATE DATABASE %s" % name)
    psql(uri, "CHECKPOINT")  # each load from a quiet server (run.py says why)
    db = db_uri(uri, name)
    secret = os.path.join(a.work, name + ".secret")
    ctl = os.path.join(build, "breachctl")
    sh([ctl, "init", "--db", db, "--secret", secret])
    sh([ctl, "import", "breaches", "--db", db, "--secret", secret,
        os.path.join(a.corpus, "breaches.jsonl")])
    fig = timed([ctl, "import", kind, "--bulk", "--db", db, "--secret", secret,
                 os.path.join(a.corpus, kind + ".jsonl")])
    got = None
    if floor:
        got = pg_floors.load(db, TABLES[kind], files_dir)
    psql(uri, "DROP DATABASE %s WITH (FORCE)" % name)
    return fig, got


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--records", type=int, default=1000000)
    ap.add_argument("--cards", type=int, default=1000000)
    ap.add_argument("--kinds", default="records,cards")
    ap.add_argument("--corpus", help="corpus directory (generated when missing)")
    ap.add_argument("--build", default="build")
    ap.add_argument("--baseline-build", help="a build of the commit before the change: its "
                    "imports alternate with --build's")
    ap.add_argument("--rounds", type=int, default=3, help="imports of each build (medians)")
    ap.add_argument("--results", default=os.path.join(BENCH, "RESULTS.md"))
    a = ap.parse_args()
    kinds = [k for k in a.kinds.split(",") if k]
    a.corpus = a.corpus or "/tmp/breachd-import-corpus-%d-%d" % (a.records, a.cards)
    if not os.path.exists(os.path.join(a.corpus, "manifest.json")):
        log("generating the corpus into " + a.corpus)
        sh([sys.executable, os.path.join(BENCH, "gen_corpus.py"), "--seed", "7", "--out",
            a.corpus, "--records", str(a.records), "--cards", str(a.cards)])
    a.work = tempfile.mkdtemp(prefix="breachd-import-pg-")
    files_dir = os.path.join(a.work, "files")
    os.makedirs(files_dir)
    os.chmod(files_dir, 0o777)
    builds = [("candidate", a.build)] + ([("baseline", a.baseline_build)]
                                         if a.baseline_build else [])
    pg_dir, res = None, {}
    t0 = time.monotonic()
    try:
        pg_dir, uri = start_cluster(a.work)
        version = psql(uri, "SHOW server_version")
        for kind in kinds:
            res[kind] = {who: [] for who, _ in builds}
            res[kind]["floor"] = []
            for n in range(a.rounds):
                for who, build in (builds if n % 2 == 0 else builds[::-1]):
                    log("%s: %s import --bulk, round %d" % (kind, who, n + 1))
                    fig, floor = one_load(a, uri, build, kind, len(res[kind][who]), files_dir,
                                          floor=who == "candidate")
                    res[kind][who].append(fig)
                    if floor:
                        res[kind]["floor"].append(floor)
                        log("  %.2f s; PostgreSQL alone %.2f s" % (fig["wall_s"],
                                                                    floor["seconds"]))
                    else:
                        log("  %.2f s" % fig["wall_s"])
    finally:
        if pg_dir:
            subprocess.run([PG_CLUSTER, "stop", pg_dir], capture_output=True)
        shutil.rmtree(a.work, ignore_errors=True)
    report(a, res, kinds, builds, version, time.monotonic() - t0)


def med(runs, key):
    return statistics.median(r[key] for r in runs)


def report(a, res, kinds, builds, version, took):
    counts = {"records": a.records, "cards": a.cards}
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short=12", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "src"],
                           capture_output=True, text=True).stdout.strip()
    tag = "import-pg-%d" % a.records
    lines = ["<!-- bench:%s:begin -->" % tag,
             "## PostgreSQL import --bulk and its floor, %s UTC" % time.strftime(
                 "%Y-%m-%d %H:%M", time.gmtime()), "",
             "Command: `bench/import_pg.py --records %d --cards %d --kinds %s --rounds %d%s` "
             "(%.0f s), breachctl at commit %s%s; PostgreSQL %s, a throwaway cluster "
             "(scripts/pg-cluster.sh: fsync off) with bench/run.py's settings (%s); "
             "2 cores, load average %.2f at the end. Each import into a fresh database "
             "holding the corpus's breaches, after a CHECKPOINT; PostgreSQL alone: the "
             "tables that import left, rebuilt from their own rows (`COPY` from a binary "
             "file into a table without indexes, each index built, `ANALYZE`: "
             "bench/pg_floors.py), measured after each candidate import; medians."
             % (a.records, a.cards, ",".join(kinds), a.rounds,
                " --baseline-build %s" % a.baseline_build if a.baseline_build else "",
                took, commit, " with uncommitted changes under src/" if dirty else "",
                version, ", ".join("%s=%s" % kv for kv in PG_SETTINGS),
                os.getloadavg()[0]), "",
             "| kind | rows | PostgreSQL alone s | tables | " + " | ".join(
                 "%s s | %s /s | %s CPU s | %s peak MiB" % (w, w, w, w) for w, _ in builds)
             + " | candidate ÷ PostgreSQL alone | target |",
             "|---|--:|--:|---|" + "--:|--:|--:|--:|" * len(builds) + "--:|---|"]
    verdicts = {}
    for kind in kinds:
        rows = counts[kind]
        floor_s = statistics.median(f["seconds"] for f in res[kind]["floor"])
        cand_s = med(res[kind]["candidate"], "wall_s")
        ratio = floor_s / cand_s
        verdicts[kind] = ratio >= TARGET
        cells = []
        for who, _ in builds:
            runs = res[kind][who]
            cells.append("%.2f | %s | %.1f | %d" % (
                med(runs, "wall_s"), "{:,.0f}".format(rows / med(runs, "wall_s")),
                med(runs, "user_s") + med(runs, "sys_s"), med(runs, "peak_mib")))
        lines.append("| %s --bulk | %s | %.2f | %s | %s | **%.3f** | ≥ %.2f: %s |" % (
            kind, "{:,}".format(rows), floor_s, ", ".join(TABLES[kind]), " | ".join(cells),
            ratio, TARGET, "met" if verdicts[kind] else "**missed**"))
    lines += ["", "PostgreSQL alone, per table (median round): seconds for COPY, indexes, "
              "ANALYZE:", ""]
    for kind in kinds:
        floor = sorted(res[kind]["floor"], key=lambda f: f["seconds"])[len(res[kind]["floor"]) // 2]
        lines.append("- %s: " % kind + "; ".join(
            "`%s` %s rows, %.2f + %.2f + %.2f s" % (t, "{:,}".format(f["rows"]), f["copy_s"],
                                                   f["index_s"], f["analyze_s"])
            for t, f in floor["tables"].items()))
    lines += ["", "<!-- bench:import-pg:figures %s -->" % json.dumps(
        {k: {w: res[k][w] for w, _ in builds} | {"floor_s": [f["seconds"]
                                                             for f in res[k]["floor"]]}
         for k in kinds}), "<!-- bench:%s:end -->" % tag]
    text = "\n".join(lines) + "\n"
    print(text)
    if a.results:
        results_md.replace_section(a.results, tag, text)


if __name__ == "__main__":
    main()
