#!/usr/bin/env python3
"""The importer's watch matching when many watches name one value (issue 29, finding 9).

With the real breachctl of --build: a fresh SQLite store, one breach, --watches watches of
type email_domain on one domain (100 per API key, the limit, so --watches / 100 keys, each
watch with its own URL), and a records file of --records lines all of that domain. Times
`breachctl import records` of the file into a store without watches and into one with
them (each a fresh store, best of --runs), and prints both in seconds.

    python3 bench/watch_match.py --build build --watches 700 --records 100000
"""
import argparse
import json
import os
import shutil
import subprocess
import tempfile
import time

BREACH = "22222222-2222-4222-8222-222222222222"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(ctl, *args):
    p = subprocess.run([ctl, *args], capture_output=True, timeout=600)
    if p.returncode != 0:
        raise SystemExit("breachctl %s: %s" % (" ".join(args), p.stderr.decode()))
    return p.stdout.decode()


def store(ctl, d, watches, domain):
    db = os.path.join(d, "store.db")
    run(ctl, "init", "--db", db)
    run(ctl, "import", "breaches", os.path.join(ROOT, "tests/e2e/fixtures/breaches.jsonl"),
        "--db", db)
    keys = []
    for i in range(watches):
        if i % 100 == 0:
            run(ctl, "keys", "create", "--name", "k%d" % (i // 100), "--db", db)
            keys.append(len(keys) + 1)
        run(ctl, "watch", "add", "--db", db, "--key", str(keys[-1]), "--type", "email_domain",
            "--account", domain, "--url", "http://127.0.0.1:9/hook?n=%d" % i,
            "--secret", "whsec-0123456789abcdef", "--webhook-allow", "127.0.0.0/8")
    return db


def timed_import(ctl, db, path):
    t = time.monotonic()
    run(ctl, "import", "records", path, "--db", db)
    return time.monotonic() - t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--watches", type=int, default=700)
    ap.add_argument("--records", type=int, default=100000)
    ap.add_argument("--runs", type=int, default=2)
    a = ap.parse_args()
    ctl = os.path.join(ROOT, a.build, "breachctl")
    domain = "example.com"
    top = tempfile.mkdtemp(prefix="breachd-watch-match-")
    try:
        path = os.path.join(top, "records.jsonl")
        with open(path, "w") as f:
            for i in range(a.records):
                f.write(json.dumps({"breach_uuid": BREACH, "email": "user%d@%s" % (i, domain),
                                    "user_name": "user%d" % i}) + "\n")
        result = {}
        for n in (0, a.watches):
            best = None
            for r in range(a.runs):
                d = os.path.join(top, "s%d-%d" % (n, r))
                os.mkdir(d)
                db = store(ctl, d, n, domain)
                t = timed_import(ctl, db, path)
                best = t if best is None else min(best, t)
                shutil.rmtree(d)
            result[n] = best
        print("%s: %d records of one domain, best of %d: no watches %.2f s, %d watches on the "
              "domain %.2f s" % (a.build, a.records, a.runs, result[0], a.watches,
                                 result[a.watches]))
    finally:
        shutil.rmtree(top, ignore_errors=True)


if __name__ == "__main__":
    main()
