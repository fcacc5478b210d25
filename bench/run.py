#!/usr/bin/env python3
"""breachd benchmark: generate a corpus, import it with build/breachctl (timed), run the wrk
load scenarios against a real build/breachd on loopback, measure an nginx static-file
ceiling under the same conditions, check memory with 1,000 idle keep-alive connections,
and write the run's section of bench/RESULTS.md.

    bench/run.py --label quick --records 50000 --cards 50000 --duration 8 --warmup 2
    bench/run.py --label full  --records 1000000 --cards 1000000 --duration 20 --warmup 5
    bench/run.py --label ab --baseline-build /tmp/base/build --baseline-label HEAD~1

With --baseline-build DIR it runs an A/B comparison instead: the same store, imported once
with the candidate's breachctl (--build), served in turn by DIR/breachd (the baseline) and
by the candidate's breachd, scenarios 1, 4 and 5 (--ab-scenarios) alternating baseline and
candidate --ratio-runs times each; no nginx ceiling, no single-connection runs, no memory
check, no bulk import.

Standard library only. Needs wrk and nginx on PATH (bench/install-bench-deps.sh) and the
binaries in build/ (make all). Everything it starts listens on 127.0.0.1 only and is
stopped before it exits; the corpus and the store live in a temporary directory that is
removed at the end unless --keep is given."""
import argparse
import datetime
import hashlib
import http.client
import json
import os
import re
import resource
import shutil
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import time

import one_conn_paths
import pg_floors
from procs import (all_tasks_cpu, is_pg, log, machine_cpu, machine_info, pg_uri_db,
                   proc_cpu_seconds, proc_parent, proc_status, psql, run_child, sh,
                   start_nginx, top_others)
from report import (SCENARIOS, UNLOADED, ab_summary, evaluate, median_run, read_figures,
                    write_report)

BENCH = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(BENCH)
LUA = os.path.join(BENCH, "lua")

PG_CLUSTER = os.path.join(ROOT, "scripts", "pg-cluster.sh")
# The tables PostgreSQL alone rebuilds from their own rows for the floor of --bulk
FLOOR_TABLES = ("records", "record_domains", "email_hashes", "cards", "card_bins",
                "card_words", "card_owner_words")
# The bench's tuning of the throwaway cluster, on top of what scripts/pg-cluster.sh sets on
# its command line (fsync, synchronous_commit and full_page_writes off, max_connections 200:
# those stay as the script sets them; a command-line setting wins over ALTER SYSTEM).
# Written with ALTER SYSTEM, then the cluster restarts (shared_buffers needs it).
PG_SETTINGS = [("shared_buffers", "1GB"), ("effective_cache_size", "8GB"),
               ("work_mem", "32MB"), ("maintenance_work_mem", "512MB"),
               ("max_wal_size", "8GB"), ("checkpoint_timeout", "30min"),
               ("random_page_cost", "1.1"), ("jit", "off")]
# --pg-config general: a general-purpose cluster, PostgreSQL's defaults but for memory and
# WAL (what any installation sizes to its machine), so random_page_cost stays 4 and jit on:
# what a user who installs PostgreSQL and points breachd at it has (issue 31).
PG_GENERAL_KEYS = ("shared_buffers", "effective_cache_size", "work_mem",
                   "maintenance_work_mem", "max_wal_size", "checkpoint_timeout")
PG_SHOWN = ("random_page_cost", "jit")  # reported whichever configuration ran
PG_SCRIPT_SETTINGS = ("fsync", "synchronous_commit", "full_page_writes", "max_connections")


class Bench:
    def __init__(self, a):
        self.a = a
        self.work = a.workdir or tempfile.mkdtemp(prefix="breachd-bench-", dir="/tmp")
        os.makedirs(self.work, exist_ok=True)
        self.logs = os.path.join(self.work, "logs")
        os.makedirs(self.logs, exist_ok=True)
        self.corpus = a.corpus or os.path.join(self.work, "corpus")
        self.db = os.path.join(self.work, "store.db")
        self.children = []  # live processes to stop on the way out
        self.db_pid = None  # the PostgreSQL postmaster while the PostgreSQL part runs
        self.pg_dir = None  # the PostgreSQL cluster's directory while it runs
        self.has_bulk = False
        self.r = {"label": a.label, "started": datetime.datetime.now().astimezone()
                  .strftime("%Y-%m-%d %H:%M %Z"), "params": vars(a).copy()}
        # Others may rebuild build/ while a long run goes on: run private copies, so one
        # run measures one build from start to end.
        bindir = os.path.join(self.work, "bin")
        os.makedirs(bindir, exist_ok=True)
        self.binaries = {}
        for b in ("breachctl", "breachd"):
            src = os.path.join(ROOT, a.build, b)
            shutil.copy2(src, os.path.join(bindir, b))
            with open(src, "rb") as f:
                digest = hashlib.sha256(f.read()).hexdigest()[:12]
            self.binaries[b] = "%s sha256 %s, built %s" % (
                b, digest, time.strftime("%H:%M", time.localtime(os.path.getmtime(src))))
        self.breachctl = os.path.join(bindir, "breachctl")
        self.breachd = os.path.join(bindir, "breachd")
        # PostgreSQL alone (bench/pg_floor.c, built by the bench targets)
        self.floor_bin = os.path.join(ROOT, a.build, "pg_floor")
        self.one_conn_bin = os.path.join(ROOT, a.build, "one_conn")
        self.r["binaries"] = self.binaries
        if a.baseline_build:
            # A/B: the baseline's server only; the store is built by the candidate's breachctl
            src = os.path.join(ROOT, a.baseline_build, "breachd")
            self.breachd_base = os.path.join(bindir, "breachd-baseline")
            shutil.copy2(src, self.breachd_base)
            with open(src, "rb") as f:
                digest = hashlib.sha256(f.read()).hexdigest()[:12]
            self.r["binaries_baseline"] = {"breachd": "breachd sha256 %s, built %s" % (
                digest, time.strftime("%H:%M", time.localtime(os.path.getmtime(src))))}

    # ---- corpus and import -------------------------------------------------------------
    def generate(self):
        a = self.a
        manifest = os.path.join(self.corpus, "manifest.json")
        if a.corpus and os.path.exists(manifest):
            # a corpus generated earlier: the same seed and sizes give the same files
            with open(manifest) as f:
                self.manifest = json.load(f)
            want = {"seed": a.seed, "records": a.records, "cards": a.cards,
                    "breaches": a.breaches}
            have = {k: self.manifest.get(k) for k in want}
            if have != want:
                raise SystemExit("%s holds a corpus of %s, not %s" % (a.corpus, have, want))
            log("reusing the corpus in %s" % self.corpus)
            self.r["corpus"] = {"seconds": 0.0, "reused": True, "manifest": self.manifest,
                                "bytes": {k: os.path.getsize(os.path.join(self.corpus,
                                                                          k + ".jsonl"))
                                          for k in ("breaches", "records", "cards")}}
            return
        log("generating %d records and %d cards (seed %d) in %s"
            % (a.records, a.cards, a.seed, self.corpus))
        c = run_child([sys.executable, os.path.join(BENCH, "gen_corpus.py"), "--records",
                       str(a.records), "--cards", str(a.cards), "--breaches", str(a.breaches),
                       "--seed", str(a.seed), "--out", self.corpus],
                      os.path.join(self.logs, "gen.txt"))
        if c.p.returncode != 0:
            raise SystemExit("gen_corpus.py failed:\n" + c.output)
        with open(os.path.join(self.corpus, "manifest.json")) as f:
            self.manifest = json.load(f)
        sizes = {k: os.path.getsize(os.path.join(self.corpus, k + ".jsonl"))
                 for k in ("breaches", "records", "cards")}
        self.r["corpus"] = {"seconds": round(c.wall, 1), "manifest": self.manifest,
                            "bytes": sizes}

    def ctl(self, *args, name, db=None, secret=None):
        c = run_child([self.breachctl, *args, "--db", db or self.db]
                      + (["--secret", secret] if secret else []),
                      os.path.join(self.logs, name))
        return c

    def store_bytes(self, db):
        if is_pg(db):
            return int(psql(db, "SELECT pg_database_size(current_database())"))
        return os.path.getsize(db)

    def import_into(self, db, extra, tag, secret=None):
        """breachctl init, then import breaches, records and cards into db with the extra
        flags (for records and cards), each timed. Returns {kind: figures}."""
        c = self.ctl("init", name="init%s.txt" % tag, db=db, secret=secret)
        if c.p.returncode != 0:
            raise SystemExit("breachctl init failed:\n" + c.output)
        imports = {}
        for kind in ("breaches", "records", "cards"):
            path = os.path.join(self.corpus, kind + ".jsonl")
            flags = extra if kind != "breaches" else []
            log("importing %s%s" % (kind, " " + " ".join(flags) if flags else ""))
            c = self.ctl("import", kind, path, *flags, name="import-%s%s.txt" % (kind, tag),
                         db=db, secret=secret)
            m = re.search(r"read (\d+), imported (\d+), duplicates (\d+), rejected (\d+)",
                          c.output)
            if c.p.returncode != 0 or not m:
                raise SystemExit("breachctl import %s failed (exit %d):\n%s"
                                 % (kind, c.p.returncode, c.output[-3000:]))
            read, imported, dups, rejected = (int(x) for x in m.groups())
            imports[kind] = {"read": read, "imported": imported, "duplicates": dups,
                             "rejected": rejected, "seconds": round(c.wall, 3),
                             "user_s": round(c.user, 2), "sys_s": round(c.sys, 2),
                             "per_s": round(imported / c.wall) if c.wall > 0 else 0,
                             "maxrss_mib": round(c.maxrss_kib / 1024, 1),
                             "db_bytes_after": self.store_bytes(db)}
            log("  %d %s in %.2f s: %d/s" % (imported, kind, c.wall, imports[kind]["per_s"]))
        return imports

    def import_all(self):
        # The plain import is the store the load scenarios run on; --bulk (when this
        # breachctl has it) loads the same corpus into a second, fresh store, timed the
        # same way, and that store is removed again.
        if self.a.bulk_only:
            self.r["import"] = self.import_into(self.db, ["--bulk"], "-bulk")
            self.r["import_mode"] = "bulk"
        else:
            self.r["import"] = self.import_into(self.db, [], "")
        usage = run_child([self.breachctl, "import"], os.path.join(self.logs, "usage.txt"))
        self.has_bulk = "--bulk" in usage.output
        if self.has_bulk and not self.a.no_bulk and not self.a.bulk_only:
            bulk_db = os.path.join(self.work, "store-bulk.db")
            self.r["import_bulk"] = self.import_into(bulk_db, ["--bulk"], "-bulk")
            for suffix in ("", "-wal", "-shm", ".secret"):
                if os.path.exists(bulk_db + suffix):
                    os.remove(bulk_db + suffix)
        self.key = self.create_key()

    def create_key(self, db=None, secret=None, tag=""):
        c = self.ctl("keys", "create", "--name", "bench", "--rate", "1000000000/h",
                     name="key%s.txt" % tag, db=db, secret=secret)
        lines = [l for l in c.output.splitlines() if l.startswith("bd_")]
        if c.p.returncode != 0 or len(lines) != 1:
            raise SystemExit("breachctl keys create failed:\n" + c.output)
        return lines[0].strip()

    # ---- servers -----------------------------------------------------------------------
    def start_breachd(self, tag, binary=None, db=None, secret=None, extra=()):
        err = os.path.join(self.logs, "breachd-%s.stderr" % tag)
        f = open(err, "wb")
        # The memory check holds 1,000 connections from one address: lift the default cap.
        p = subprocess.Popen([binary or self.breachd, "--db", db or self.db]
                             + (["--secret", secret] if secret else [])
                             + ["--listen", "127.0.0.1:0", "--threads", str(self.a.threads),
                                "--max-connections-per-ip", "0", *extra],
                             stdout=subprocess.DEVNULL, stderr=f)
        self.children.append(p)
        deadline = time.time() + 20
        while time.time() < deadline:
            with open(err, "rb") as g:
                m = re.search(rb"-> port (\d+)", g.read())
            if m:
                return p, int(m.group(1))
            if p.poll() is not None:
                break
            time.sleep(0.02)
        with open(err, "rb") as g:
            raise SystemExit("breachd did not start:\n" + g.read().decode(errors="replace"))

    def stop(self, p, sig=signal.SIGTERM):
        if p.poll() is None:
            p.send_signal(sig)
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        if p in self.children:
            self.children.remove(p)
        return p.returncode

    def start_nginx(self, body):
        p, port = start_nginx(self.work, body, self.a.threads)
        self.children.append(p)
        return p, port

    # ---- requests ----------------------------------------------------------------------
    def get(self, port, path):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        conn.request("GET", path, headers={"x-api-key": self.key})
        resp = conn.getresponse()
        body = resp.read()
        conn.close()
        return resp.status, body

    def lines(self, name):
        with open(os.path.join(self.corpus, name)) as f:
            return [l.strip() for l in f if l.strip()]

    def request_paths(self):
        """One request of each scenario 1-5, on the corpus's first email, domain, BIN and
        owner word."""
        from urllib.parse import quote
        e = self.lines("emails.txt")[0]
        d = self.lines("domains.txt")[0]
        b = self.lines("bins.txt")[0]
        o = self.lines("owners.txt")[0]
        return {
            "s1": "/v7/breach-search?type=email&account=%s&number_of_records=1" % quote(e),
            "s2": "/v7/breach-search?type=email_domain&account=%s&number_of_records=100"
                  % quote(d),
            "s3": "/v7/breaches",
            "s4": "/v7/credit-card-search?query=%s&size=20" % quote("number:%s*" % b),
            "s5": "/v7/credit-card-search?query=%s&sort=%s&size=20"
                  % (quote("owner:%s AND expireDate:[2026-01-01 TO *]" % o, safe=""),
                     quote("expireDate,asc", safe="")),
        }

    def smoke(self, port, record="smoke"):
        """One request of each kind must answer 200 before any load is measured."""
        from urllib.parse import quote
        paths = self.request_paths()
        out = {}
        for sid, path in paths.items():
            st, body = self.get(port, path)
            if st != 200:
                raise SystemExit("smoke test %s: %s answered %d: %s"
                                 % (sid, path, st, body[:300]))
            j = json.loads(body)
            found = len(j) if isinstance(j, list) else j.get("records_found",
                                                             j.get("totalElements"))
            out[sid] = {"bytes": len(body), "found": found}
        # the token of page 1 must lead to page 2
        j = json.loads(self.get(port, paths["s2"])[1])
        st, _ = self.get(port, paths["s2"] + "&paging_token=" + quote(j["pagination_token"]))
        if st != 200:
            raise SystemExit("smoke test s2: following the token answered %d" % st)
        self.r[record] = out

    def s1_body(self, port):
        """A scenario-1 reply of median size over a sample of the rotation: the nginx
        ceiling serves exactly those bytes."""
        from urllib.parse import quote
        emails = self.lines("emails.txt")
        step = max(1, len(emails) // 200)
        bodies = []
        for e in emails[::step][:200]:
            st, body = self.get(port, "/v7/breach-search?type=email&account=%s"
                                      "&number_of_records=1" % quote(e))
            if st == 200:
                bodies.append(body)
        bodies.sort(key=len)
        sizes = [len(b) for b in bodies]
        self.r["s1_body"] = {"sampled": len(bodies), "min": sizes[0], "max": sizes[-1],
                             "median": sizes[len(sizes) // 2]}
        return bodies[len(bodies) // 2]

    # ---- wrk ---------------------------------------------------------------------------
    def wrk(self, script, port, seconds, name, args=(), server_pid=None, connections=None):
        env = dict(os.environ, BENCH_KEY=self.key, BENCH_DATA=self.corpus, BENCH_LUA=LUA,
                   BENCH_SEED=str(self.a.seed))
        conns = connections or self.a.connections
        cmd = ["wrk", "-t%d" % min(self.a.wrk_threads, conns), "-c%d" % conns,
               "-d%ds" % seconds, "--timeout", "10s", "--latency", "-s",
               os.path.join(LUA, script), "http://127.0.0.1:%d" % port]
        if args:
            cmd += ["--", *args]
        # One connection: bench/one_conn times every request on its own (wrk's one-
        # connection percentiles did not add up with its own rate: RESULTS.md, the growth
        # run's notes); the same paths, from the same sample files.
        one = one_conn_paths.write(self.corpus, script, self.work) if conns == 1 else None
        if one and os.access(self.one_conn_bin, os.X_OK):
            cmd = [self.one_conn_bin, str(port), str(seconds), one[0], self.key]
            if one[1]:
                cmd.append(str(args[0] if args else one[1]))
        # On PostgreSQL the database server's CPU (postmaster and its backends) is counted
        # apart from breachd's and from "other processes".
        db_pid = self.db_pid if server_pid else None
        db0 = proc_cpu_seconds(db_pid) if db_pid else 0.0
        srv0 = proc_cpu_seconds(server_pid) if server_pid else 0.0
        tasks0 = all_tasks_cpu()
        m0, irq0, st0 = machine_cpu()
        c = run_child(cmd, os.path.join(self.logs, name + ".txt"), env=env)
        m1, irq1, st1 = machine_cpu()
        tasks1 = all_tasks_cpu()
        srv1 = proc_cpu_seconds(server_pid) if server_pid else 0.0
        db1 = proc_cpu_seconds(db_pid) if db_pid else 0.0
        exclude = {os.getpid(), c.p.pid}
        for q in (server_pid, db_pid):
            if q:
                exclude |= {q} | {pid for pid in tasks1 if proc_parent(pid) == q}
        if c.p.returncode != 0:
            raise SystemExit("wrk failed (%s):\n%s" % (name, c.output[-2000:]))
        line = [l for l in c.output.splitlines() if l.startswith("BENCH ")]
        if not line:
            raise SystemExit("wrk printed no BENCH line (%s):\n%s" % (name, c.output[-2000:]))
        j = json.loads(line[-1][6:])
        dur = j["duration_us"] / 1e6
        non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", c.output)
        wrk_cpu = c.user + c.sys
        srv_cpu = srv1 - srv0
        db_cpu = db1 - db0
        return {
            "tool": os.path.basename(cmd[0]),
            "rps": round(j["requests"] / dur, 1),
            "requests": j["requests"],
            "seconds": round(dur, 2),
            "p50_ms": j["lat_p50_us"] / 1000, "p90_ms": j["lat_p90_us"] / 1000,
            "p99_ms": j["lat_p99_us"] / 1000, "p999_ms": j["lat_p999_us"] / 1000,
            "max_ms": j["lat_max_us"] / 1000, "mean_ms": round(j["lat_mean_us"] / 1000, 3),
            "bytes_per_resp": round(j["bytes"] / max(1, j["requests"])),
            "errors": {k[4:]: j[k] for k in j if k.startswith("err_") and j[k]},
            "non_2xx": int(non2xx.group(1)) if non2xx else 0,
            "first_pages": j["first_pages"], "followed": j["followed"],
            # CPU seconds per wall second (1.0 = one core busy), to see who used the cores
            "server_cores": round(srv_cpu / dur, 2) if server_pid else None,
            "wrk_cores": round(wrk_cpu / dur, 2),
            "db_cores": round(db_cpu / dur, 2) if db_pid else None,
            "other_cores": round(max(0.0, (m1 - m0) - srv_cpu - db_cpu - wrk_cpu) / dur, 2)
            if server_pid else None,
            "other_top": top_others(tasks0, tasks1, exclude, dur),
            "irq_cores": round((irq1 - irq0) / dur, 2),
            "steal_cores": round((st1 - st0) / dur, 2),
        }

    def scenario(self, sid, script, args, port, pid, seconds, name=None, connections=None):
        name = name or sid
        if self.a.warmup > 0:
            self.wrk(script, port, self.a.warmup, name + "-warmup", args, pid, connections)
        res = self.wrk(script, port, seconds, name, args, pid, connections)
        if name.startswith("nginx") and (res["errors"] or res["non_2xx"]):
            with open(os.path.join(self.work, "nginx", "error.log")) as f:
                raise SystemExit("the nginx ceiling answered errors (%s, non-2xx %d):\n%s"
                                 % (res["errors"], res["non_2xx"], f.read()[-2000:]))
        st = proc_status(pid)
        res["rss_mib"] = round(st["VmRSS"] / 1024, 1)
        res["hwm_mib"] = round(st["VmHWM"] / 1024, 1)
        res["rss_anon_mib"] = round(st.get("RssAnon", 0) / 1024, 1)
        res["rss_file_mib"] = round(st.get("RssFile", 0) / 1024, 1)
        res["pss_mib"] = round(st["Pss"] / 1024, 1) if st.get("Pss") else None
        log("  %-6s %9.0f req/s  p50 %7.2f ms  p99 %7.2f ms  RSS %6.1f MiB%s"
            % (name, res["rps"], res["p50_ms"], res["p99_ms"], res["rss_mib"],
               "  ERRORS %s non-2xx %d" % (res["errors"], res["non_2xx"])
               if res["errors"] or res["non_2xx"] else ""))
        return res

    # ---- memory check ------------------------------------------------------------------
    def idle_connections(self, port, pid, n):
        """Opens n keep-alive connections, each completing one scenario-1 request, and
        reads the server's VmRSS while they all sit idle."""
        from urllib.parse import quote
        emails = self.lines("emails.txt")
        before = proc_status(pid)
        socks = []
        ok = 0
        try:
            for i in range(n):
                s = socket.create_connection(("127.0.0.1", port), timeout=10)
                e = emails[i % len(emails)]
                req = ("GET /v7/breach-search?type=email&account=%s&number_of_records=1 "
                       "HTTP/1.1\r\nHost: 127.0.0.1\r\nx-api-key: %s\r\n"
                       "Connection: keep-alive\r\n\r\n" % (quote(e), self.key)).encode()
                s.sendall(req)
                buf = b""
                while b"\r\n\r\n" not in buf:
                    chunk = s.recv(65536)
                    if not chunk:
                        break
                    buf += chunk
                head, _, rest = buf.partition(b"\r\n\r\n")
                m = re.search(rb"(?i)content-length:\s*(\d+)", head)
                need = int(m.group(1)) if m else 0
                while len(rest) < need:
                    chunk = s.recv(65536)
                    if not chunk:
                        break
                    rest += chunk
                if head.startswith(b"HTTP/1.1 200"):
                    ok += 1
                socks.append(s)
            time.sleep(1.0)
            alive = 0
            for s in socks:  # a closed connection would be readable (EOF)
                s.setblocking(False)
                try:
                    alive += 0 if s.recv(1) == b"" else 1
                except BlockingIOError:
                    alive += 1
                except OSError:
                    pass
            st = proc_status(pid)
            gauge = None
            try:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
                conn.request("GET", "/metrics")
                m = re.search(rb"^breachd_open_connections\s+(\d+)",
                              conn.getresponse().read(), re.M)
                gauge = int(m.group(1)) - 1 if m else None  # less the /metrics request
                conn.close()
            except OSError:
                pass
        finally:
            for s in socks:
                s.close()
        mib = lambda kib: round(kib / 1024, 1)
        return {"connections": n, "answered_200": ok, "still_open": alive,
                "server_gauge": gauge,
                "rss_before_mib": mib(before["VmRSS"]), "rss_mib": mib(st["VmRSS"]),
                "rss_anon_mib": mib(st.get("RssAnon", 0)),
                "rss_file_mib": mib(st.get("RssFile", 0)),
                "pss_mib": mib(st["Pss"]) if st.get("Pss") else None,
                "per_conn_kib": round((st["VmRSS"] - before["VmRSS"]) / n, 1),
                "threads": st.get("Threads")}

    # ---- the run -----------------------------------------------------------------------
    def run(self):
        a = self.a
        if a.baseline_build:
            return self.run_ab()
        self.r["machine"] = machine_info()
        t_start = time.monotonic()
        self.generate()
        self.import_all()

        p, port = self.start_breachd("load")
        self.smoke(port)
        body = self.s1_body(port)
        pid = p.pid
        self.r["rss_start_mib"] = round(proc_status(pid)["VmRSS"] / 1024, 1)
        results = {}
        ngx_runs, s1_runs = [], []
        ngx, ngx_port = None, None
        log("scenarios: %d s each after a %d s warm-up, %d connections, wrk -t%d, "
            "breachd --threads %d" % (a.duration, a.warmup, a.connections, a.wrk_threads,
                                      a.threads))
        for sid, title, script, args in SCENARIOS:
            if sid == "s1":
                # Scenario 1 and the nginx ceiling alternate, --ratio-runs times each, so
                # that both see the same background noise; the medians make the ratio.
                ngx, ngx_port = self.start_nginx(body)
                for k in range(a.ratio_runs):
                    r = self.scenario("nginx", "s1_email.lua", [], ngx_port, ngx.pid,
                                      a.duration, name="nginx-%d" % (k + 1))
                    ngx_runs.append(r)
                    s1_runs.append(self.scenario(sid, script, args, port, pid, a.duration,
                                                 name="s1-%d" % (k + 1)))
                self.stop(ngx, signal.SIGQUIT)
                results[sid] = dict(median_run(s1_runs))
                results[sid]["runs"] = s1_runs
            elif sid == "s3":
                # The catalog against nginx serving its very bytes, alternating likewise.
                st, catalog = self.get(port, "/v7/breaches")
                if st != 200:
                    raise SystemExit("the catalog answered %d" % st)
                ngx3, ngx3_port = self.start_nginx(catalog)
                same, s3_runs = [], []
                for k in range(a.ratio_runs):
                    same.append(self.scenario("nginx", script, args, ngx3_port, ngx3.pid,
                                              a.duration, name="nginx-s3-%d" % (k + 1)))
                    s3_runs.append(self.scenario(sid, script, args, port, pid, a.duration,
                                                 name="s3-%d" % (k + 1)))
                self.stop(ngx3, signal.SIGQUIT)
                results[sid] = dict(median_run(s3_runs))
                results[sid]["runs"] = s3_runs
                ceiling3 = dict(median_run(same))
                ceiling3["runs"] = same
                ceiling3["body_bytes"] = len(catalog)
                self.r["nginx_s3"] = ceiling3
            else:
                results[sid] = self.scenario(sid, script, args, port, pid, a.duration)
        ceiling = dict(median_run(ngx_runs))
        ceiling["runs"] = ngx_runs
        self.r["nginx"] = ceiling
        for sid in results:
            results[sid]["ratio"] = round(results[sid]["rps"] / ceiling["rps"], 6)
        self.r["scenarios"] = results

        # The same requests one at a time: what a single pipeline caller waits, with no
        # queue in front of it. Under 64 connections a request waits behind the others
        # (Little's law: mean latency = connections / throughput).
        log("one connection at a time: %s" % ", ".join(UNLOADED))
        self.r["unloaded"] = {}
        for sid, title, script, args in SCENARIOS:
            if sid in UNLOADED:
                self.r["unloaded"][sid] = self.scenario(
                    sid, script, args, port, pid, max(3, a.duration // 2),
                    name=sid + "-c1", connections=1)

        log("memory check: %d idle keep-alive connections" % a.idle_connections)
        self.r["memory_loaded"] = self.idle_connections(port, pid, a.idle_connections)
        rc = self.stop(p)
        self.r["breachd_exit"] = rc
        # The same check on a fresh server, to separate per-connection cost from the page
        # cache the load scenarios filled.
        p2, port2 = self.start_breachd("fresh")
        time.sleep(0.3)
        self.r["memory_fresh"] = self.idle_connections(port2, p2.pid, a.idle_connections)
        self.stop(p2)
        self.r["sqlite_seconds"] = round(time.monotonic() - t_start, 1)
        if not a.no_pg:
            self.run_pg()
        self.r["machine"]["loadavg_end"] = open("/proc/loadavg").read().split()[:3]
        self.r["total_seconds"] = round(time.monotonic() - t_start, 1)
        if a.growth_base:
            self.r["growth_base"] = a.growth_base
        evaluate(self.r)
        with open(os.path.join(self.work, "results.json"), "w") as f:
            json.dump(self.r, f, indent=1)
        write_report(self.r, a.results)
        kept = a.keep or a.workdir
        log("done in %.0f s; wrote %s (%s)" % (
            self.r["total_seconds"], a.results,
            "raw figures and wrk logs in " + self.work if kept else
            "the work directory is removed; --keep keeps it"))
        if self.r.get("pg", {}).get("error"):
            raise SystemExit("bench: the PostgreSQL part failed (the report says so): "
                             + self.r["pg"]["error"].splitlines()[0])

    # ---- PostgreSQL (issue 14) ---------------------------------------------------------
    def pg_start(self):
        """A throwaway cluster in the work directory (scripts/pg-cluster.sh), tuned with
        PG_SETTINGS and restarted; returns its URI."""
        d = os.path.join(self.work, "pg")
        # The cluster runs as 'postgres' when we are root: it must reach its directory
        # inside the private (0700) work directory.
        os.chmod(self.work, 0o711)
        self.pg_dir = d
        out, err, rc = sh([PG_CLUSTER, "start", d])
        if rc != 0 or not out.strip():
            raise SystemExit("scripts/pg-cluster.sh start failed:\n" + err + out)
        uri = out.strip().splitlines()[-1]
        settings = [kv for kv in PG_SETTINGS
                    if self.a.pg_config == "tuned" or kv[0] in PG_GENERAL_KEYS]
        for k, v in settings:
            psql(uri, "ALTER SYSTEM SET %s = '%s'" % (k, v))
        for step in ("pause", "resume"):
            out, err, rc = sh([PG_CLUSTER, step, d])
            if rc != 0:
                raise SystemExit("scripts/pg-cluster.sh %s failed:\n%s%s" % (step, err, out))
        with open(os.path.join(d, "data", "postmaster.pid")) as f:
            self.db_pid = int(f.readline())
        pg = self.r["pg"]
        pg["version"] = psql(uri, "SHOW server_version")
        pg["config"] = self.a.pg_config
        pg["settings"] = {k: psql(uri, "SHOW %s" % k)
                          for k in [k for k, _ in settings] + [k for k in PG_SHOWN
                                                                if k not in dict(settings)]}
        pg["script_settings"] = {k: psql(uri, "SHOW %s" % k) for k in PG_SCRIPT_SETTINGS}
        return uri

    def pg_floor_s1(self, db):
        """PostgreSQL alone executing scenario 1's statement (pg_floors.serve), with as
        many connections as breachd holds (one per thread) and as wrk keeps open, each
        --ratio-runs times; the better median is the floor. Its CPU per statement, with
        what the nginx ceiling's run spent per request on HTTP (nginx, wrk, loopback
        softirq), gives the most requests per second the cores could serve."""
        a = self.a
        params = pg_floors.write_s1_params(self.lines("emails.txt"),
                                           os.path.join(self.work, "pg-s1-params.tsv"))
        out = {"by_connections": {}}
        for conns in sorted({a.threads, a.connections}):
            log("PostgreSQL alone (bench/pg_floor): scenario 1's statement, %d connections, "
                "%d thread(s), %d round(s)" % (conns, min(conns, a.wrk_threads), a.ratio_runs))
            runs = [pg_floors.serve(self.floor_bin, db, pg_floors.S1_SQL, params, a.duration,
                                    conns, min(conns, a.wrk_threads), self.db_pid)
                    for _ in range(a.ratio_runs)]
            for x in runs:
                log("  floor  %9.0f statements/s  postgres cores %.2f  client cores %.2f"
                    % (x["per_second"], x["db_cores"], x["client_cores"]))
            med = dict(sorted(runs, key=lambda x: x["per_second"])[len(runs) // 2])
            med["runs"] = runs
            out["by_connections"][str(conns)] = med
        # The same lookups pg_floors.S1_BATCH to a statement, with as many connections as
        # breachd holds: the floor a dispatcher batching the lookups waiting at one moment
        # into one statement would move to (issue 31).
        bparams = pg_floors.write_s1_batch_params(
            self.lines("emails.txt"), os.path.join(self.work, "pg-s1-batch-params.tsv"))
        log("PostgreSQL alone: scenario 1's lookups %d to a statement, %d connections, "
            "%d round(s)" % (pg_floors.S1_BATCH, a.threads, a.ratio_runs))
        runs = [pg_floors.serve(self.floor_bin, db, pg_floors.S1_BATCH_SQL, bparams,
                                a.duration, a.threads, min(a.threads, a.wrk_threads),
                                self.db_pid)
                for _ in range(a.ratio_runs)]
        for x in runs:
            log("  batch  %9.0f lookups/s  postgres cores %.2f  client cores %.2f"
                % (x["per_second"] * pg_floors.S1_BATCH, x["db_cores"], x["client_cores"]))
        med = dict(sorted(runs, key=lambda x: x["per_second"])[len(runs) // 2])
        out["batch"] = {"per_statement": pg_floors.S1_BATCH,
                        "lookups_per_s": round(med["per_second"] * pg_floors.S1_BATCH),
                        "postgres_us_per_lookup": round(
                            1e6 * med["db_cores"] / (med["per_second"] * pg_floors.S1_BATCH), 1),
                        "runs": runs}
        best = max(out["by_connections"].values(), key=lambda x: x["per_second"])
        ngx = self.r["nginx"]
        us = lambda cores, rate: 1e6 * cores / rate
        out["budget_us"] = {
            "postgres": round(us(best["db_cores"], best["per_second"]), 1),
            "libpq client": round(us(best["client_cores"], best["per_second"]), 1),
            "nginx": round(us(ngx["server_cores"], ngx["rps"]), 1),
            "wrk": round(us(ngx["wrk_cores"], ngx["rps"]), 1),
            "softirq": round(us(ngx["irq_cores"], ngx["rps"]), 1)}
        out["cores"] = os.cpu_count()
        out["bound_rps"] = round(out["cores"] * 1e6 / sum(out["budget_us"].values()), 1)
        out["per_second"] = best["per_second"]
        out["ratio"] = round(best["per_second"] / ngx["rps"], 6)
        out["bound_ratio"] = round(out["bound_rps"] / ngx["rps"], 6)
        return out

    def pg_files(self):
        """A directory the database server may write files into (it runs as 'postgres'
        when we are root)."""
        d = os.path.join(self.work, "pg-files")
        os.makedirs(d, exist_ok=True)
        os.chmod(d, 0o777)
        return d

    def pg_stop(self):
        if not self.pg_dir:
            return
        for name in ("server.log", "initdb.log"):
            src = os.path.join(self.pg_dir, name)
            if os.path.exists(src):
                shutil.copy(src, os.path.join(self.logs, "pg-" + name))
        sh([PG_CLUSTER, "stop", self.pg_dir])
        self.pg_dir = None
        self.db_pid = None

    def run_pg(self):
        """The PostgreSQL store: the same timed imports (a database per store) and the same
        scenarios against a breachd on it. The nginx ceiling and the memory check are not
        repeated: scenario 1 is judged against the ceiling measured above. A failure is
        recorded in the report (and the run exits non-zero); the cluster is stopped
        whatever happens."""
        a = self.a
        self.r["pg"] = pg = {}
        t0 = time.monotonic()
        key_sqlite, p = self.key, None
        try:
            log("PostgreSQL: starting a cluster in %s" % os.path.join(self.work, "pg"))
            uri = self.pg_start()
            log("PostgreSQL %s: %s" % (pg["version"], ", ".join(
                "%s=%s" % kv for kv in list(pg["settings"].items())
                + list(pg["script_settings"].items()))))
            stores = [("bench", [], "-pg")] if not a.bulk_only else []
            if self.has_bulk and (a.bulk_only or not a.no_bulk):
                stores.append(("bench_bulk" if not a.bulk_only else "bench", ["--bulk"],
                               "-pg-bulk"))
            load_db = load_secret = None
            for name, flags, tag in stores:
                psql(uri, "CREATE DATABASE %s" % name)
                # each load timed from a quiet server: the one before leaves gigabytes of
                # dirty buffers and WAL, whose checkpoint would otherwise land in this one
                psql(uri, "CHECKPOINT")
                db = pg_uri_db(uri, name)
                secret = os.path.join(self.work, "pg-%s.secret" % name)
                log("PostgreSQL store %s: import%s" % (name, " " + " ".join(flags)
                                                        if flags else ""))
                figures = self.import_into(db, flags, tag, secret=secret)
                pg["import_bulk" if flags and not a.bulk_only else "import"] = figures
                if name == "bench":
                    load_db, load_secret = db, secret
                    pg["store_bytes"] = self.store_bytes(db)
                else:
                    pg["bulk_store_bytes"] = self.store_bytes(db)
                    log("PostgreSQL alone: the same tables rebuilt from their own rows")
                    pg["load_floor"] = pg_floors.load(db, FLOOR_TABLES, self.pg_files())
                    psql(uri, "DROP DATABASE %s WITH (FORCE)" % name)
            pg["import_mode"] = "bulk" if a.bulk_only else "plain"
            self.key = self.create_key(load_db, load_secret, "-pg")
            p, port = self.start_breachd("pg", db=load_db, secret=load_secret)
            self.smoke(port, record="pg_smoke")
            pid = p.pid
            pg["rss_start_mib"] = round(proc_status(pid)["VmRSS"] / 1024, 1)
            log("PostgreSQL scenarios: %d s each after a %d s warm-up" % (a.duration,
                                                                          a.warmup))
            results = {}
            for sid, title, script, args in SCENARIOS:
                if sid == "s1":
                    runs = [self.scenario(sid, script, args, port, pid, a.duration,
                                          name="pg-s1-%d" % (k + 1))
                            for k in range(a.ratio_runs)]
                    results[sid] = dict(median_run(runs))
                    results[sid]["runs"] = runs
                else:
                    results[sid] = self.scenario(sid, script, args, port, pid, a.duration,
                                                 name="pg-" + sid)
                results[sid]["ratio"] = round(results[sid]["rps"] / self.r["nginx"]["rps"], 6)
            pg["scenarios"] = results
            log("PostgreSQL, one connection at a time: %s" % ", ".join(UNLOADED))
            pg["unloaded"] = {}
            for sid, title, script, args in SCENARIOS:
                if sid in UNLOADED:
                    pg["unloaded"][sid] = self.scenario(
                        sid, script, args, port, pid, max(3, a.duration // 2),
                        name="pg-" + sid + "-c1", connections=1)
            pg["breachd_exit"] = self.stop(p)
            pg["floor_s1"] = self.pg_floor_s1(load_db)
        except (SystemExit, Exception) as e:
            pg["error"] = str(e) or type(e).__name__
            log("PostgreSQL part FAILED: %s" % pg["error"])
        finally:
            self.key = key_sqlite
            if p is not None and p.poll() is None:
                self.stop(p)
            self.pg_stop()
            pg["seconds"] = round(time.monotonic() - t0, 1)

    def run_ab(self):
        """A/B: the baseline's breachd and the candidate's on the same store, the chosen
        scenarios alternating baseline, candidate, --ratio-runs rounds each."""
        a = self.a
        self.r["mode"] = "ab"
        self.r["machine"] = machine_info()
        self.r["candidate_label"] = a.candidate_label or "commit " + self.r["machine"]["commit"]
        self.r["baseline_label"] = a.baseline_label
        t_start = time.monotonic()
        self.generate()
        db = secret = None
        self.r["ab_store"] = a.ab_store
        if a.ab_store == "pg":
            # one database on a throwaway cluster, imported once by the candidate's breachctl
            self.r["pg"] = {}
            uri = self.pg_start()
            psql(uri, "CREATE DATABASE bench")
            db = pg_uri_db(uri, "bench")
            secret = os.path.join(self.work, "pg-bench.secret")
            log("PostgreSQL %s: import" % self.r["pg"]["version"])
            self.r["import"] = self.import_into(db, [], "-pg", secret=secret)
            self.r["store_bytes"] = self.store_bytes(db)
            self.key = self.create_key(db, secret, "-pg")
        else:
            self.import_all()  # once, with the candidate's breachctl (no --bulk store)
            self.r["store_bytes"] = os.path.getsize(self.db)
        # Both servers open the same store (SQLite: query_only readers, WAL) and are
        # started up front, each on its own port; the one not under load sits idle.
        sides = (("baseline", self.breachd_base), ("candidate", self.breachd))
        procs = {}
        for side, binary in sides:
            p, port = self.start_breachd(side, binary, db=db, secret=secret)
            procs[side] = (p, port)
            log("smoke test of the %s (port %d)" % (side, port))
            self.smoke(port, record="smoke" if db is None else "pg_smoke_" + side)
        log("A/B: %s, %d round(s) of baseline then candidate, %d s each after a %d s warm-up, "
            "%d connections, wrk -t%d, breachd --threads %d"
            % (", ".join(a.ab_scenarios), a.ratio_runs, a.duration, a.warmup, a.connections,
               a.wrk_threads, a.threads))
        by_id = {sc[0]: sc for sc in SCENARIOS}
        self.r["ab"] = {}
        for sid in a.ab_scenarios:
            _, title, script, args = by_id[sid]
            runs = {"baseline": [], "candidate": []}
            for k in range(a.ratio_runs):
                for side, _ in sides:
                    p, port = procs[side]
                    runs[side].append(self.scenario(sid, script, args, port, p.pid, a.duration,
                                                    name="%s-%s-%d" % (sid, side, k + 1)))
            self.r["ab"][sid] = ab_summary(runs)
            x = self.r["ab"][sid]
            log("  %s: candidate/baseline %.3f req/s, %.3f p99: %s"
                % (sid, x["rps_ratio"], x["p99_ratio"], "met" if x["met"] else "MISSED"))
        self.r["breachd_exit"] = {side: self.stop(procs[side][0]) for side, _ in sides}
        if a.ab_store == "pg":
            self.pg_stop()
        self.r["machine"]["loadavg_end"] = open("/proc/loadavg").read().split()[:3]
        self.r["total_seconds"] = round(time.monotonic() - t_start, 1)
        with open(os.path.join(self.work, "results.json"), "w") as f:
            json.dump(self.r, f, indent=1)
        write_report(self.r, a.results)
        kept = a.keep or a.workdir
        log("done in %.0f s; wrote %s (%s)" % (
            self.r["total_seconds"], a.results,
            "raw figures and wrk logs in " + self.work if kept else
            "the work directory is removed; --keep keeps it"))

    def cleanup(self):
        for p in list(self.children):
            self.stop(p, signal.SIGKILL if p.poll() is None else signal.SIGTERM)
        self.pg_stop()  # when the PostgreSQL part was interrupted
        if not self.a.keep and not self.a.workdir:
            shutil.rmtree(self.work, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--label", help="report section: quick (the default), full, growth, or "
                                    "ab (the default with --baseline-build)")
    ap.add_argument("--records", type=int, default=50_000)
    ap.add_argument("--cards", type=int, default=50_000)
    ap.add_argument("--breaches", type=int, default=200)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--duration", type=int, default=8, help="seconds per measured run")
    ap.add_argument("--warmup", type=int, default=2, help="seconds of discarded warm-up")
    ap.add_argument("--ratio-runs", type=int, default=None,
                    help="alternating scenario-1 / nginx runs (default 1), or with "
                         "--baseline-build the rounds of baseline / candidate runs per "
                         "scenario (default 3); the medians make the ratio")
    ap.add_argument("--connections", type=int, default=64)
    ap.add_argument("--wrk-threads", type=int, default=2)
    ap.add_argument("--threads", type=int, default=2, help="breachd --threads = nginx workers")
    ap.add_argument("--idle-connections", type=int, default=1000)
    ap.add_argument("--bulk-only", action="store_true",
                    help="build the load store with import --bulk only (for very large runs)")
    ap.add_argument("--compare-with", metavar="LABEL",
                    help="judge the growth target against that section's figures")
    ap.add_argument("--no-bulk", action="store_true",
                    help="skip the second, breachctl import --bulk, load into a fresh store")
    ap.add_argument("--no-pg", action="store_true",
                    help="skip the PostgreSQL part (a throwaway cluster in the work directory: "
                         "the same imports and scenarios on the PostgreSQL store)")
    ap.add_argument("--corpus", metavar="DIR",
                    help="generate the corpus here, or reuse the one already here")
    ap.add_argument("--build", default="build")
    ap.add_argument("--baseline-build", metavar="DIR",
                    help="A/B run only: DIR/breachd (baseline) against --build's breachd "
                         "(candidate) on one store, the --ab-scenarios alternating; skips "
                         "the other scenarios, the nginx ceiling, the single-connection "
                         "runs, the memory check and the bulk import")
    ap.add_argument("--baseline-label", metavar="TEXT",
                    help="the baseline's name in the report (default: DIR's git commit)")
    ap.add_argument("--candidate-label", metavar="TEXT",
                    help="the candidate's name in the report (default: this tree's commit)")
    ap.add_argument("--ab-scenarios", default="s1,s4,s5",
                    help="the scenarios of an A/B run, comma-separated (default s1,s4,s5)")
    ap.add_argument("--ab-store", choices=("sqlite", "pg"), default="sqlite",
                    help="the store of an A/B run: a SQLite file (the default) or a database "
                         "on a throwaway PostgreSQL cluster in the work directory")
    ap.add_argument("--pg-config", choices=("tuned", "general"), default="tuned",
                    help="the throwaway cluster's settings: the benchmark's tuning (the "
                         "default), or a general-purpose cluster, PostgreSQL's defaults but "
                         "for memory and WAL (jit on, random_page_cost 4)")
    ap.add_argument("--results", default=os.path.join(BENCH, "RESULTS.md"))
    ap.add_argument("--workdir", help="use this directory (kept) instead of a temporary one")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    ap.add_argument("--report-only", metavar="RESULTS_JSON",
                    help="only rewrite the report from a results.json of an earlier run")
    a = ap.parse_args()
    if a.report_only:
        with open(a.report_only) as f:
            write_report(json.load(f), a.results)
        return
    a.command = "bench/run.py " + " ".join(shlex.quote(x) for x in sys.argv[1:])
    if a.label is None:
        a.label = ("ab-pg" if a.ab_store == "pg" else "ab") if a.baseline_build else "quick"
    if a.ratio_runs is None:
        a.ratio_runs = 3 if a.baseline_build else 1
    if a.ratio_runs < 1:
        raise SystemExit("bench: --ratio-runs must be at least 1")
    known = [sc[0] for sc in SCENARIOS]
    a.ab_scenarios = [x.strip() for x in a.ab_scenarios.split(",") if x.strip()]
    if not a.ab_scenarios or any(x not in known for x in a.ab_scenarios):
        raise SystemExit("bench: --ab-scenarios takes a list of %s" % ",".join(known))
    if a.baseline_build:
        a.no_bulk = True
        a.no_pg = True
        if not os.access(os.path.join(ROOT, a.baseline_build, "breachd"), os.X_OK):
            raise SystemExit("bench: %s/breachd is missing" % a.baseline_build)
        if not a.baseline_label:
            where = os.path.join(ROOT, a.baseline_build)
            commit = sh(["git", "-C", where, "rev-parse", "--short=12", "HEAD"])
            dirty = sh(["git", "-C", where, "status", "--porcelain", "--untracked-files=no",
                        "--", ":/src"])[0]
            a.baseline_label = ("commit " + commit[0].strip()
                                + (" (src/ modified locally)" if dirty.strip() else "")
                                if commit[2] == 0 else a.baseline_build)
        if a.compare_with:
            raise SystemExit("bench: --compare-with does not apply to an A/B run")
    for tool in ("wrk",) if a.baseline_build else ("wrk", "nginx"):
        if not shutil.which(tool):
            raise SystemExit("bench: %s is not installed (run bench/install-bench-deps.sh)"
                             % tool)
    for b in ("breachd", "breachctl"):
        if not os.access(os.path.join(ROOT, a.build, b), os.X_OK):
            raise SystemExit("bench: %s/%s is missing (make all)" % (a.build, b))
    if not a.no_pg:
        # checked up front: the PostgreSQL part runs after the whole SQLite part
        import glob
        if not shutil.which("psql") or not glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"):
            raise SystemExit("bench: PostgreSQL is not installed (apt install postgresql); "
                             "--no-pg skips the PostgreSQL part")
    # 1,000 idle connections plus wrk's need more descriptors than the usual soft limit.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = 65536 if hard == resource.RLIM_INFINITY else min(hard, 65536)
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    a.growth_base = read_figures(a.results, a.compare_with) if a.compare_with else None
    bench = Bench(a)
    # MiB, roughly, from the 10M run's sizes per line: the corpus 270 B (unless one is
    # reused), a SQLite store 750 B (two of them unless --bulk-only), a PostgreSQL store 1,500 B
    # and its WAL, as much again up to max_wal_size (8 GB)
    lines = a.records + a.cards
    reused = a.corpus and os.path.exists(os.path.join(a.corpus, "manifest.json"))
    need = lines * ((0 if reused else 280) + 800 * (1 if a.bulk_only else 2)) // 1048576 + 200
    if not a.no_pg:
        need += lines * 1600 // 1048576 + min(8192, lines * 1600 // 1048576)
    free = shutil.disk_usage(bench.work).free // 1048576
    if free < need:
        raise SystemExit("bench: %s has %d MiB free, about %d MiB needed" % (bench.work, free,
                                                                              need))
    try:
        bench.run()
    finally:
        bench.cleanup()


if __name__ == "__main__":
    main()
