#!/usr/bin/env python3
"""Watches (issue: watchlists with webhook alerts): the time from an import's commit to the
webhook being received, with many watches registered and a large import running.

What it does, with the real binaries of --build:
  1. a fresh SQLite store, one breach, --keys API keys holding --watches email watches in
     all (100 a key, the limit), added over the API to a receiver on loopback;
  2. a records file of --records lines; every (records / watches)-th record is a watched
     email, so every batch of the import (50,000 rows a commit) matches watches;
  3. breachd --webhook-allow 127.0.0.0/8 running; the receiver (http.server, threaded) notes
     when each event id arrives; a poller reads the store's alerts table every 5 ms and
     notes when each alert first becomes visible, i.e. when its batch committed (alerts are
     written in the batch's transaction); then `breachctl import records` runs;
  4. latency = received - visible, per alert: p50, p99, max. The poll interval makes the
     visible time up to 5 ms late, so the figures are up to 5 ms low.
Prints a Markdown section; --results FILE replaces the watch section of bench/RESULTS.md.
"""
import argparse
import http.client
import http.server
import json
import os
import platform
import re
import sqlite3
import subprocess
import tempfile
import threading
import time

import results_md

BREACH = "22222222-2222-4222-8222-222222222222"


def pct(values, p):
    s = sorted(values)
    if not s:
        return float("nan")
    k = min(len(s) - 1, max(0, int(round(p / 100.0 * len(s) + 0.5)) - 1))
    return s[k]


class Receiver:
    def __init__(self):
        self.arrived = {}
        self.lock = threading.Lock()
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                t = time.time()
                self.rfile.read(int(self.headers.get("content-length", "0")))
                with outer.lock:
                    outer.arrived.setdefault(self.headers["x-breachd-event-id"], t)
                self.send_response(204)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *a):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()


def poll_alerts(db, seen, stop):
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True, timeout=30)
    last = 0
    while not stop.is_set():
        rows = con.execute("SELECT seq, event_id FROM alerts WHERE seq > ? ORDER BY seq",
                           (last,)).fetchall()
        t = time.time()
        for seq, ev in rows:
            seen.setdefault(ev, t)
            last = seq
        time.sleep(0.005)
    con.close()


def poll_pg(uri, seen, stop):
    """The same through one psql session fed a query every 5 ms."""
    psql = subprocess.Popen(["psql", uri, "-X", "-q", "-A", "-t", "-F", "\t"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
    last = 0
    while not stop.is_set():
        psql.stdin.write("SELECT seq, event_id FROM alerts WHERE seq > %d ORDER BY seq;\n"
                         "\\echo __end__\n" % last)
        psql.stdin.flush()
        rows = []
        for line in psql.stdout:
            line = line.rstrip("\n")
            if line == "__end__":
                break
            if line:
                rows.append(line.split("\t"))
        t = time.time()
        for seq, ev in rows:
            seen.setdefault(ev, t)
            last = int(seq)
        time.sleep(0.005)
    psql.stdin.close()
    psql.wait()


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, **kw)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--records", type=int, default=1000000)
    ap.add_argument("--watches", type=int, default=1000)
    ap.add_argument("--results", help="bench/RESULTS.md to update")
    ap.add_argument("--pg-uri", help="a PostgreSQL server (libpq URI): the store is a new "
                    "database there instead of a SQLite file")
    a = ap.parse_args()
    ctl, breachd = os.path.join(a.build, "breachctl"), os.path.join(a.build, "breachd")
    work = tempfile.mkdtemp(prefix="breachd-watch-bench-")
    if a.pg_uri:
        name = "watchbench_%d" % os.getpid()
        run(["psql", a.pg_uri, "-X", "-q", "-c", "CREATE DATABASE %s" % name])
        db = re.sub(r"(postgres(?:ql)?://[^/?]*)(/[^?]*)?", r"\1/" + name, a.pg_uri, count=1)
        sargs = ["--db", db, "--secret", os.path.join(work, "store.secret")]
    else:
        db = os.path.join(work, "store.db")
        sargs = ["--db", db]
    run([ctl, "init", *sargs])
    with open(os.path.join(work, "b.jsonl"), "w") as f:
        f.write(json.dumps({"uuid": BREACH, "source_name": "Bench", "date_leaked": "2020-01-01"}) + "\n")
    run([ctl, "import", "breaches", os.path.join(work, "b.jsonl"), *sargs])
    keys = [run([ctl, "keys", "create", *sargs, "--name", "k%d" % i, "--plan",
                 "enterprise"]).stdout.decode().strip() for i in range((a.watches + 99) // 100)]
    every = a.records // a.watches
    t0 = time.time()
    with open(os.path.join(work, "r.jsonl"), "w") as f:
        for j in range(a.records):
            if j % every == every // 2 and j // every < a.watches:
                email = "watch%d@bench.example" % (j // every)
            else:
                email = "user%d@corpus.example" % j
            f.write('{"breach_uuid":"%s","email":"%s","user_name":"u%d"}\n' % (BREACH, email, j))
    gen_s = time.time() - t0

    receiver = Receiver()
    log = open(os.path.join(work, "breachd.log"), "wb")
    srv = subprocess.Popen([breachd, *sargs, "--listen", "127.0.0.1:0", "--threads", "2",
                            "--webhook-allow", "127.0.0.0/8"], stderr=log)
    port = None
    for _ in range(500):
        m = re.search(rb"-> port (\d+)", open(log.name, "rb").read())
        if m:
            port = int(m.group(1))
            break
        time.sleep(0.02)
    assert port, open(log.name, "rb").read()
    for i in range(a.watches):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        conn.request("POST", "/v7/watches", body=json.dumps({
            "type": "email", "account": "watch%d@bench.example" % i,
            "url": "http://127.0.0.1:%d/hook" % receiver.port,
            "secret": "bench-signing-secret"}), headers={"x-api-key": keys[i // 100]})
        r = conn.getresponse()
        assert r.status == 201, (r.status, r.read())
        r.read()
        conn.close()

    seen, stop = {}, threading.Event()
    poller = threading.Thread(target=poll_pg if a.pg_uri else poll_alerts, args=(db, seen, stop),
                              daemon=True)
    poller.start()
    t0 = time.time()
    p = run([ctl, "import", "records", os.path.join(work, "r.jsonl"), *sargs])
    import_s = time.time() - t0
    deadline = time.time() + 60
    while time.time() < deadline:
        with receiver.lock:
            if len(receiver.arrived) >= a.watches and len(seen) >= a.watches:
                break
        time.sleep(0.05)
    stop.set()
    poller.join()
    srv.terminate()
    srv.wait()
    with receiver.lock:
        arrived = dict(receiver.arrived)
    lat = [arrived[e] - seen[e] for e in seen if e in arrived]
    missing = len(seen) - len(lat)
    summary = re.findall(rb"read \d+, imported \d+[^\n]*", p.stderr)
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    commit = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], capture_output=True).stdout.decode().strip()
    if subprocess.run(["git", "status", "--porcelain", "--", "src"], capture_output=True).stdout.strip():
        commit += " with uncommitted changes under src/"
    load = os.getloadavg()
    tag = "watch-pg" if a.pg_uri else "watch"
    store = "PostgreSQL store (a throwaway cluster, scripts/pg-cluster.sh)" if a.pg_uri else "SQLite store"
    out = [
        "<!-- bench:%s:begin -->" % tag,
        "## Watches%s: import commit to webhook received, %s" % (" on PostgreSQL" if a.pg_uri else "", when),
        "",
        "Command: `make bench-%s` (`bench/watch_latency.py --records %d --watches %d --build %s%s`), "
        "breachd at commit %s, %s, %d cores, load average %.2f at the end." % (
            tag, a.records, a.watches, a.build, " --pg-uri URI" if a.pg_uri else "", commit,
            store, os.cpu_count(), load[0]),
        "",
        "%d email watches (%d keys, 100 each) on one receiver (Python `ThreadingHTTPServer` on "
        "loopback); an import of %s records (generated in %.1f s), one in %d a watched email, so each "
        "of its 50,000-row batches matches %d watches and writes as many alerts in its "
        "transaction; breachd delivering with `--webhook-allow 127.0.0.0/8`, on the same 2 "
        "cores as the import." % (a.watches, len(keys), format(a.records, ","), gen_s, every,
                                  50000 // every),
        "",
        "| import | alerts | delivered | p50 | p99 | max | target |",
        "|---|--:|--:|--:|--:|--:|---|",
        "| %s in %.1f s | %d | %d | %.0f ms | %.0f ms | %.0f ms | p99 <= 2 s: **%s** |" % (
            summary[-1].decode() if summary else "?", import_s, len(seen), len(lat),
            pct(lat, 50) * 1000, pct(lat, 99) * 1000, max(lat) * 1000 if lat else float("nan"),
            "met" if lat and not missing and pct(lat, 99) <= 2.0 else "missed"),
        "",
        "Latency = when the receiver got the alert's first POST minus when the alert became "
        "visible in the store (a reader polling every 5 ms: the batch's commit, up to 5 ms "
        "late plus the poll's own time, so the figures are that much low).",
        "<!-- bench:%s:end -->" % tag,
    ]
    text = "\n".join(out) + "\n"
    print(text)
    if a.results:
        results_md.replace_section(a.results, tag, text)
    subprocess.run(["rm", "-rf", work])
    if a.pg_uri:
        subprocess.run(["psql", a.pg_uri, "-X", "-q", "-c",
                        "DROP DATABASE IF EXISTS %s WITH (FORCE)" % name])


if __name__ == "__main__":
    main()
