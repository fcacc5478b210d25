#!/usr/bin/env python3
"""Bulk jobs against single searches (issue: bulk lookup jobs): on a store of the generated
corpus (1M records by default), the time of N breach-search requests for N emails over one
keep-alive connection, against the time of one job of the same N emails from its POST to
status done; each the median of --runs, alternating, and their ratio. The target: the job at
least 20 times faster. The job's results download (JSON Lines) is timed too, apart.

    jobs_bench.py --records 1000000 --emails 100000 --runs 3 --build build
                  [--corpus DIR] [--store-uri postgresql://...] [--results bench/RESULTS.md]

The single searches use a minimal HTTP/1.1 client (one socket, a request, its reply read by
Content-Length), so the client's own cost is as small as Python allows; the job is polled
every 10 ms. The corpus and the store are built in a temporary directory (the corpus is kept
when --corpus names a directory that holds one). --store-uri runs against a PostgreSQL
database instead (created and loaded here; the caller provides the server)."""
import argparse
import json
import os
import random
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def log(msg):
    print("[jobs-bench] " + msg, file=sys.stderr, flush=True)


class Client:
    """One keep-alive connection; request() returns (status, body bytes)."""

    def __init__(self, port, key):
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.key = key
        self.buf = b""

    def request(self, method, path, body=b"", ctype=None):
        head = "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nx-api-key: %s\r\n" % (method, path, self.key)
        if body:
            head += "Content-Type: %s\r\nContent-Length: %d\r\n" % (ctype, len(body))
        self.sock.sendall(head.encode() + b"\r\n" + body)
        while b"\r\n\r\n" not in self.buf:
            self.buf += self.recv()
        head, _, self.buf = self.buf.partition(b"\r\n\r\n")
        status = int(head.split(b" ", 2)[1])
        m = re.search(rb"(?i)\r\ncontent-length: *(\d+)", head)
        if m:
            n = int(m.group(1))
            while len(self.buf) < n:
                self.buf += self.recv()
            body, self.buf = self.buf[:n], self.buf[n:]
            return status, body
        assert re.search(rb"(?i)\r\ntransfer-encoding: *chunked", head), head
        out = bytearray()
        buf = bytearray(self.buf)
        at = 0
        while True:
            while buf.find(b"\r\n", at) < 0:
                buf += self.recv()
            eol = buf.find(b"\r\n", at)
            n = int(bytes(buf[at:eol]), 16)
            at = eol + 2
            while len(buf) < at + n + 2:
                buf += self.recv()
            out += buf[at:at + n]
            at += n + 2
            if at > (1 << 20):  # drop what was read, now and then
                del buf[:at]
                at = 0
            if n == 0:
                self.buf = bytes(buf[at:])
                return status, bytes(out)

    def recv(self):
        data = self.sock.recv(1 << 20)
        if not data:
            raise ConnectionError("the server closed the connection")
        return data

    def close(self):
        self.sock.close()


def singles(port, key, emails):
    c = Client(port, key)
    t0 = time.perf_counter()
    found = 0
    for e in emails:
        st, body = c.request("GET", "/v7/breach-search?type=email&account=" + e)
        if st == 200:
            found += 1
        elif st != 404:
            raise SystemExit("breach-search answered %d: %s" % (st, body[:200]))
    wall = time.perf_counter() - t0
    c.close()
    return wall, found


def job(port, key, emails):
    c = Client(port, key)
    body = ("\n".join(emails) + "\n").encode()
    t0 = time.perf_counter()
    st, raw = c.request("POST", "/v7/jobs?type=email", body, "text/plain")
    if st != 202:
        raise SystemExit("POST /v7/jobs answered %d: %s" % (st, raw[:300]))
    j = json.loads(raw)
    while j["status"] not in ("done", "failed"):
        time.sleep(0.01)
        st, raw = c.request("GET", "/v7/jobs/" + j["id"])
        j = json.loads(raw)
    wall = time.perf_counter() - t0
    if j["status"] != "done":
        raise SystemExit("the job failed: %s" % raw)
    t1 = time.perf_counter()
    st, results = c.request("GET", "/v7/jobs/%s/results" % j["id"])
    download = time.perf_counter() - t1
    c.close()
    lines = results.count(b"\n")
    found = sum(1 for line in results.splitlines() if b'"found":0,' not in line)
    if st != 200 or lines != len(emails):
        raise SystemExit("results: %d, %d lines for %d emails" % (st, lines, len(emails)))
    return wall, download, found, len(results)


def interference(port, key, emails, job_emails):
    """Single searches alone, then the same while jobs of job_emails run back to back on
    another connection: (searches/s alone, searches/s beside jobs, jobs finished meanwhile)."""
    import threading
    alone, _ = singles(port, key, emails)
    stop = threading.Event()
    done = [0]

    def jobs():
        while not stop.is_set():
            job(port, key, job_emails)
            done[0] += 1

    t = threading.Thread(target=jobs)
    t.start()
    time.sleep(0.2)
    beside, _ = singles(port, key, emails)
    stop.set()
    t.join()
    log("interference: %d searches alone %.2f s (%.0f/s), beside jobs %.2f s (%.0f/s); %d jobs "
        "of %d ran meanwhile" % (len(emails), alone, len(emails) / alone, beside,
                                 len(emails) / beside, done[0], len(job_emails)))
    return {"searches": len(emails), "alone_s": round(alone, 2), "beside_jobs_s": round(beside, 2),
            "jobs": done[0]}


def sh(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if p.returncode != 0:
        raise SystemExit("%s failed (%d):\n%s%s" % (" ".join(cmd), p.returncode, p.stdout[-2000:],
                                                    p.stderr[-2000:]))
    return p.stdout + p.stderr


def corpus(a, work):
    d = a.corpus or os.path.join(work, "corpus")
    if not os.path.exists(os.path.join(d, "records.jsonl")):
        log("generating %d records into %s" % (a.records, d))
        os.makedirs(d, exist_ok=True)
        sh([sys.executable, os.path.join(HERE, "gen_corpus.py"), "--records", str(a.records),
            "--cards", "1000", "--out", d])
    return d


def pick_emails(path, n, seed):
    """n distinct emails that the corpus holds (each a hit), in a shuffled order."""
    emails = set()
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.search(r'"email": ?"([^"]+)"', line)
            if m:
                emails.add(m.group(1).lower())
    emails = sorted(emails)
    random.Random(seed).shuffle(emails)
    if len(emails) < n:
        raise SystemExit("the corpus holds %d emails, fewer than %d" % (len(emails), n))
    return [e.replace("+", "%2B") for e in emails[:n]], emails[:n]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--records", type=int, default=1000000)
    ap.add_argument("--emails", type=int, default=100000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--build", default="build")
    ap.add_argument("--corpus")
    ap.add_argument("--store-uri", help="a PostgreSQL database URI to load and serve from")
    ap.add_argument("--results", help="append the figures to this markdown file's jobs section")
    ap.add_argument("--label", default="sqlite")
    ap.add_argument("--interference", action="store_true",
                    help="also time 20,000 searches alone and beside jobs running back to back")
    a = ap.parse_args()
    ctl, breachd = (os.path.join(ROOT, a.build, b) for b in ("breachctl", "breachd"))
    work = tempfile.mkdtemp(prefix="breachd-jobs-bench-")
    srv = None
    try:
        d = corpus(a, work)
        db = a.store_uri or os.path.join(work, "store.db")
        store = ["--db", db] + (["--secret", os.path.join(work, "store.secret")] if a.store_uri else [])
        log("loading the store (%s)" % ("PostgreSQL" if a.store_uri else "SQLite"))
        t = time.time()
        sh([ctl, "init", *store])
        sh([ctl, "import", "breaches", os.path.join(d, "breaches.jsonl"), *store])
        sh([ctl, "import", "records", os.path.join(d, "records.jsonl"), "--bulk", *store])
        log("  loaded in %.0f s" % (time.time() - t))
        # the job limits of a key past what any number of runs takes (their defaults would
        # refuse the eleventh job of 100,000 within a day: docs/API.md, "A key's limits")
        key = [l for l in sh([ctl, "keys", "create", "--name", "bench", "--rate", "1000000000/h",
                              "--max-jobs", "1000", "--max-queued-identities", "1000000000",
                              "--max-result-rows", "1000000000000",
                              *store]).splitlines() if l.startswith("bd_")][0].strip()
        quoted, plain = pick_emails(os.path.join(d, "records.jsonl"), a.emails, 7)
        err = open(os.path.join(work, "breachd.stderr"), "wb")
        srv = subprocess.Popen([breachd, *store, "--listen", "127.0.0.1:0"], stderr=err,
                               stdout=subprocess.DEVNULL)
        port = None
        for _ in range(500):
            with open(os.path.join(work, "breachd.stderr"), "rb") as f:
                m = re.search(rb"-> port (\d+)", f.read())
            if m:
                port = int(m.group(1))
                break
            time.sleep(0.02)
        if not port:
            raise SystemExit("breachd did not start")
        log("warm-up: 2,000 single searches and a job of 2,000")
        singles(port, key, quoted[:2000])
        job(port, key, plain[:2000])
        s_runs, j_runs, d_runs = [], [], []
        for i in range(a.runs):
            w, found_s = singles(port, key, quoted)
            s_runs.append(w)
            log("run %d: %d single searches in %.2f s (%d found)" % (i + 1, len(quoted), w, found_s))
            w, dl, found_j, size = job(port, key, plain)
            j_runs.append(w)
            d_runs.append(dl)
            log("run %d: a job of %d in %.2f s (%d found), results (%.1f MB) downloaded in %.2f s"
                % (i + 1, len(plain), w, found_j, size / 1e6, dl))
            if found_j != found_s:
                raise SystemExit("the job found %d identities, the searches %d" % (found_j, found_s))
        inter = interference(port, key, quoted[:20000], plain) if a.interference else None
        s_med, j_med, d_med = (statistics.median(x) for x in (s_runs, j_runs, d_runs))
        ratio = s_med / j_med
        rec = {"label": a.label, "records": a.records, "emails": a.emails, "runs": a.runs,
               "singles_s": [round(x, 2) for x in s_runs], "job_s": [round(x, 2) for x in j_runs],
               "download_s": [round(x, 2) for x in d_runs], "singles_median_s": round(s_med, 2),
               "job_median_s": round(j_med, 2), "download_median_s": round(d_med, 2),
               "ratio": round(ratio, 1), "met": ratio >= 20, "interference": inter}
        print(json.dumps(rec))
        log("median: singles %.2f s (%.0f/s), job %.2f s (%.0f identities/s): %.1fx (target 20x: %s)"
            % (s_med, a.emails / s_med, j_med, a.emails / j_med, ratio, "met" if ratio >= 20 else "missed"))
    finally:
        if srv:
            srv.terminate()
            srv.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
