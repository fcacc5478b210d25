#!/usr/bin/env python3
"""CPU per request, A/B: breachd's own CPU and PostgreSQL's (postmaster and backends) per
request of one wrk scenario against builds of breachd in turn, on a store already loaded
(PostgreSQL, or SQLite: then breachd's CPU alone), alternating builds each round; medians. On a shared machine the req/s of a run moves
with the other processes' load far more than the CPU each request costs, so this tells a
change's effect where bench/run.py's A/B cannot (issue 31).

    cpu_per_request.py --uri URI --secret FILE --key KEY --corpus DIR --pg-pid PID \\
        --build base=OLD/breachd --build new=build/breachd [--script s1_email.lua]
        [--rounds 7] [--connections 16] [--seconds 4] [--threads 2]
    cpu_per_request.py --uri STORE.db --key KEY --corpus DIR --build ... (a SQLite store)

The corpus directory is bench/gen_corpus.py's (the wrk scripts read its sample lists); the
key one `breachctl keys create` printed for the store, with a rate that wrk cannot reach;
--pg-pid the postmaster's (its data directory's postmaster.pid), left out for a SQLite
store. Standard library only."""
import argparse
import os
import re
import signal
import statistics
import subprocess
import sys
import time

import pg_floors

HERE = os.path.dirname(os.path.abspath(__file__))


def proc_cpu(pid):
    with open("/proc/%d/stat" % pid) as f:
        x = f.read().rsplit(")", 1)[1].split()
    return (int(x[11]) + int(x[12])) / os.sysconf("SC_CLK_TCK")


def pg_cpu(a):
    return pg_floors._cpu(a.pg_pid) if a.pg_pid else 0.0


def wrk(a, env, port, seconds):
    return subprocess.run(["wrk", "-t1", "-c%d" % a.connections, "-d%ds" % seconds, "--latency",
                           "-s", os.path.join(HERE, "lua", a.script),
                           "http://127.0.0.1:%d" % port],
                          env=env, capture_output=True, text=True).stdout


def one_run(a, env, binary, port):
    secret = ["--secret", a.secret] if a.secret else []
    p = subprocess.Popen([binary, "--db", a.uri] + secret + ["--listen",
                          "127.0.0.1:%d" % port, "--threads", str(a.threads)],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(0.7)
        wrk(a, env, port, 1)  # warm-up: connections, prepared statements, caches
        c0, g0 = proc_cpu(p.pid), pg_cpu(a)
        out = wrk(a, env, port, a.seconds)
        c1, g1 = proc_cpu(p.pid), pg_cpu(a)
    finally:
        p.send_signal(signal.SIGTERM)
        p.wait()
    m = re.search(r"(\d+) requests in", out)
    if not m or "Non-2xx" in out:
        raise SystemExit("wrk failed or saw errors:\n" + out)
    n = int(m.group(1))
    q = re.search(r"^\s+99%\s+([\d.]+)(us|ms|s)\b", out, re.M)
    p99 = float(q.group(1)) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[q.group(2)]
    return {"rps": n / a.seconds, "breachd_us": 1e6 * (c1 - c0) / n,
            "postgres_us": 1e6 * (g1 - g0) / n, "p99_ms": p99}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    for k in ("uri", "key", "corpus"):
        ap.add_argument("--" + k, required=True)
    ap.add_argument("--secret", help="the store's secret file (a SQLite store's is found "
                    "beside it)")
    ap.add_argument("--pg-pid", type=int, help="the postmaster's; leave out for SQLite")
    ap.add_argument("--build", action="append", required=True, metavar="NAME=BREACHD")
    ap.add_argument("--script", default="s1_email.lua")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--connections", type=int, default=16)
    ap.add_argument("--seconds", type=int, default=4)
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    builds = [b.split("=", 1) for b in a.build]
    env = dict(os.environ, BENCH_KEY=a.key, BENCH_DATA=a.corpus,
               BENCH_LUA=os.path.join(HERE, "lua"), BENCH_SEED="7")
    runs = {name: [] for name, _ in builds}
    for _ in range(a.rounds):
        for i, (name, binary) in enumerate(builds):
            runs[name].append(one_run(a, env, binary, 18940 + i))
    # Other processes only add to a request's CPU (caches, migrations), so the least of the
    # runs is the estimate least moved by them; the median is printed beside it.
    for name, rs in runs.items():
        med = {k: round(statistics.median(r[k] for r in rs), 2) for k in rs[0]}
        low = {k: min(r[k] for r in rs) for k in ("breachd_us", "postgres_us")}
        pg = ("  postgres us/req %6.1f (least %.1f)" % (med["postgres_us"], low["postgres_us"])
              if a.pg_pid else "")
        print("%-10s req/s %9.0f  breachd us/req %6.1f (least %.1f)%s  p99 ms %7.2f"
              % (name, med["rps"], med["breachd_us"], low["breachd_us"], pg, med["p99_ms"]))
        print("  runs (req/s, breachd us%s): " % (", postgres us" if a.pg_pid else "")
              + ", ".join("(%.0f, %.1f%s)" % (r["rps"], r["breachd_us"],
                                               ", %.1f" % r["postgres_us"] if a.pg_pid else "")
                          for r in rs))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
