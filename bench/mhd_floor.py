#!/usr/bin/env python3
"""Scenario 1's floor under libmicrohttpd: nginx, libmicrohttpd alone answering a fixed
reply (bench/mhd_floor.c, with breachd's flags and pool, once with a response shared by every
request and once with a response and breachd's headers made per request, and with a 16 KiB
pool), and breachd, in turn, each round, with the scenario-1 wrk script; medians and each
one's ratio to nginx. It tells how much of the gap between breachd and nginx is the HTTP
library and how much is breachd's own work per request (issue 31).

    mhd_floor.py --workdir DIR [--corpus DIR] [--build build] [--rounds 3] [--seconds 8]

DIR is a work directory that bench/run.py kept (--workdir or --keep): its store.db, the
key in logs/key.txt and, unless --corpus names it, its corpus/. The body served by nginx and
libmicrohttpd is breachd's scenario-1 reply of median size over 41 sample emails.
Standard library only; needs wrk and nginx (bench/install-bench-deps.sh)."""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import procs  # noqa: E402


def start_breachd(a, log_path):
    with open(log_path, "w") as log:
        p = subprocess.Popen([os.path.join(a.build, "breachd"), "--db", a.db, "--listen",
                              "127.0.0.1:0", "--threads", str(a.threads)], stderr=log)
    deadline = time.time() + 30
    while time.time() < deadline:
        with open(log_path) as f:
            m = re.search(r"-> port (\d+)", f.read())
        if m:
            return p, int(m.group(1))
        time.sleep(0.05)
    p.kill()
    raise SystemExit("breachd did not start; see " + log_path)


def start_floor(a, mode, kib, body_path):
    p = subprocess.Popen([os.path.join(a.build, "mhd_floor"), "0", str(a.threads), str(kib),
                          body_path, mode], stdout=subprocess.PIPE, text=True)
    return p, int(p.stdout.readline().split()[1])


def wrk(a, env, port, seconds):
    out = subprocess.run(["wrk", "-t2", "-c64", "-d%ds" % seconds, "-s",
                          os.path.join(HERE, "lua", "s1_email.lua"), "http://127.0.0.1:%d" % port],
                         env=env, capture_output=True, text=True).stdout
    m = re.search(r"Requests/sec:\s+([\d.]+)", out)
    if not m or "Non-2xx" in out:
        raise SystemExit("wrk failed or saw errors:\n" + out)
    return float(m.group(1))


def median_reply(a, key, port):
    with open(os.path.join(a.corpus, "emails.txt")) as f:
        emails = [line.strip() for line in f][:41]
    bodies = []
    for e in emails:
        url = ("http://127.0.0.1:%d/v7/breach-search?type=email&account=%s&number_of_records=1"
               % (port, urllib.parse.quote(e)))
        bodies.append(urllib.request.urlopen(
            urllib.request.Request(url, headers={"x-api-key": key})).read())
    return sorted(bodies, key=len)[len(bodies) // 2]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--corpus")
    ap.add_argument("--build", default="build")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=8)
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    a.db = os.path.join(a.workdir, "store.db")
    a.corpus = a.corpus or os.path.join(a.workdir, "corpus")
    with open(os.path.join(a.workdir, "logs", "key.txt")) as f:
        key = f.readline().strip()
    env = dict(os.environ, BENCH_KEY=key, BENCH_DATA=a.corpus,
               BENCH_LUA=os.path.join(HERE, "lua"), BENCH_SEED="7")
    work = os.path.join(a.workdir, "mhd-floor")
    os.makedirs(work, exist_ok=True)
    p, port = start_breachd(a, os.path.join(work, "breachd.log"))
    body = median_reply(a, key, port)
    p.terminate()
    p.wait()
    body_path = os.path.join(work, "body.json")
    with open(body_path, "wb") as f:
        f.write(body)
    print("scenario-1 reply of median size: %d bytes" % len(body))
    servers = ("nginx", "libmicrohttpd, one shared response", "libmicrohttpd, breachd's replies",
               "libmicrohttpd, breachd's replies, 16 KiB pool", "breachd")
    got = {s: [] for s in servers}
    for _ in range(a.rounds):
        for s in servers:
            if s == "nginx":
                p, port = procs.start_nginx(work, body, a.threads)
            elif s == "breachd":
                p, port = start_breachd(a, os.path.join(work, "breachd.log"))
            else:
                p, port = start_floor(a, "shared" if "shared" in s else "breachd",
                                      16 if "16 KiB" in s else 48, body_path)
            try:
                wrk(a, env, port, 2)  # warm-up, discarded
                got[s].append(wrk(a, env, port, a.seconds))
            finally:
                p.terminate()
                p.wait()
    ceiling = statistics.median(got["nginx"])
    print("| server | req/s (median) | ÷ nginx | each round |")
    print("|---|--:|--:|---|")
    for s in servers:
        m = statistics.median(got[s])
        print("| %s | %s | %.3f | %s |" % (s, format(round(m), ","), m / ceiling,
                                          " / ".join(format(round(x), ",") for x in got[s])))


if __name__ == "__main__":
    main()
