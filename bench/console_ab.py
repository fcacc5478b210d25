#!/usr/bin/env python3
"""Issue 34's A/B: whether the web console costs the API anything. Scenario 1 (breach-search
by email, bench/lua/s1_email.lua) with wrk against breachd builds and flags in turn, variants
alternating each round, on SQLite stores of the same bench/gen_corpus.py corpus; breachd's
own CPU per request (from /proc) and req/s, medians. A store is opened by each build (a
newer build migrates it, so give the build before the console a store of its own).

    console_ab.py --corpus DIR [--rounds 7] \\
        NAME=BREACHD=STORE=KEYFILE=EXTRA_FLAGS ...

e.g. base=/tmp/base/breachd=base.db=base.key=  on=build/breachd=new.db=new.key=
     off=build/breachd=new.db=new.key=--console off
Standard library only; wrk on PATH."""
import argparse
import os
import re
import signal
import statistics
import subprocess
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def cpu(pid):
    x = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
    return (int(x[11]) + int(x[12])) / os.sysconf("SC_CLK_TCK")


def wrk(url, env, seconds):
    return subprocess.run(["wrk", "-t1", "-c16", "-d%ds" % seconds, "-s",
                           os.path.join(HERE, "lua", "s1_email.lua"), url],
                          env=env, capture_output=True, text=True).stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--seconds", type=int, default=4)
    ap.add_argument("variants", nargs="+")
    a = ap.parse_args()
    variants = [v.split("=", 4) for v in a.variants]
    base_env = dict(os.environ, BENCH_DATA=a.corpus, BENCH_LUA=os.path.join(HERE, "lua"),
                    BREACHD_CONFIG="none")
    res = {v[0]: [] for v in variants}
    for _ in range(a.rounds):
        for name, binary, db, keyfile, extra in variants:
            env = dict(base_env, BENCH_KEY=open(keyfile).read().strip())
            log = "/tmp/console_ab.%d.%s.err" % (os.getpid(), name)
            with open(log, "wb") as err:
                p = subprocess.Popen([binary, "--db", db, "--listen", "127.0.0.1:0",
                                      "--threads", "2"] + extra.split(), stderr=err, env=env)
            port = None
            for _ in range(500):
                m = re.search(rb"-> port (\d+)", open(log, "rb").read())
                if m:
                    port = int(m.group(1))
                    break
                time.sleep(0.02)
            url = "http://127.0.0.1:%d" % port
            wrk(url, env, 1)  # warm-up
            c0 = cpu(p.pid)
            out = wrk(url, env, a.seconds)
            c1 = cpu(p.pid)
            n = int(re.search(r"(\d+) requests in", out).group(1))
            rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
            bad = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
            res[name].append((rps, (c1 - c0) / n * 1e6, int(bad.group(1)) if bad else 0))
            p.send_signal(signal.SIGTERM)
            p.wait()
            os.unlink(log)
    print("| variant | req/s (median) | rounds | CPU us/request (median) | rounds | non-2xx |")
    print("|---|--:|---|--:|---|--:|")
    for name, r in res.items():
        print("| %s | %.0f | %s | %.1f | %s | %d |" % (
            name, statistics.median(x[0] for x in r), " ".join("%.0f" % x[0] for x in r),
            statistics.median(x[1] for x in r), " ".join("%.1f" % x[1] for x in r),
            sum(x[2] for x in r)))


if __name__ == "__main__":
    main()
