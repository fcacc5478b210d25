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
import platform
import re
import resource
import shutil
import shlex
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

import pg_floors

BENCH = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(BENCH)
LUA = os.path.join(BENCH, "lua")

SCENARIOS = [
    # (id, title, lua script, script args)
    ("s1", "breach-search by email, 1 record (hot path)", "s1_email.lua", []),
    ("s2", "breach-search by email_domain, 100/page, following the token",
     "s2_domain_paging.lua", []),
    ("s3", "breach catalog, whole list", "s3_catalog.lua", []),
    ("s4", "card search number:<bin>*, page of 20 with count", "s4_bin.lua", []),
    ("s5", "card search owner word + expireDate range + sort", "s5_owner_expiry.lua", []),
    ("s6", "mix (60% s1, 10% s2, 5% s3, 15% s4, 10% s5)", "s6_mix.lua", []),
]

# Targets (they are stated for the 1M + 1M corpus on a 2-core machine).
T_S1_RATIO, T_S1_P99_MS = 0.7, 2.0
T_S4_RATIO = 0.3
T_S3_SAME_BYTES = 0.8  # scenario 3 vs nginx serving the same catalog bytes (issue 17)
T_S2_P99_MS = T_S5_P99_MS = 20.0
T_IMPORT_RECORDS, T_IMPORT_CARDS = 200_000, 100_000
T_RSS_MIB = 64.0
T_GROWTH = 1.5  # scenario 1 and 4 latency at 10M within this factor of 1M
T_AB_RATIO = 0.95  # A/B (issue 14): the candidate's req/s within 5% of the baseline's
# scenarios also measured with a single connection (latency without queueing)
UNLOADED = ("s1", "s2", "s4", "s5")
# PostgreSQL store (issue 14), same corpus and scenarios, after the SQLite part
T_PG_S1_RATIO = 0.35  # scenario 1 on PostgreSQL vs the nginx ceiling
T_PG_P99_FACTOR = 3.0  # every scenario's p99 on PostgreSQL within this factor of SQLite's
T_PG_BULK_RECORDS, T_PG_BULK_CARDS = 100_000, 50_000  # import --bulk into PostgreSQL
PG_CLUSTER = os.path.join(ROOT, "scripts", "pg-cluster.sh")
# The tables PostgreSQL alone rebuilds from their own rows for the floor of --bulk
FLOOR_TABLES = ("records", "cards", "card_words", "card_owner_words")
# The bench's tuning of the throwaway cluster, on top of what scripts/pg-cluster.sh sets on
# its command line (fsync, synchronous_commit and full_page_writes off, max_connections 200:
# those stay as the script sets them; a command-line setting wins over ALTER SYSTEM).
# Written with ALTER SYSTEM, then the cluster restarts (shared_buffers needs it).
PG_SETTINGS = [("shared_buffers", "1GB"), ("effective_cache_size", "8GB"),
               ("work_mem", "32MB"), ("maintenance_work_mem", "512MB"),
               ("max_wal_size", "8GB"), ("checkpoint_timeout", "30min"),
               ("random_page_cost", "1.1"), ("jit", "off")]
PG_SCRIPT_SETTINGS = ("fsync", "synchronous_commit", "full_page_writes", "max_connections")


def log(msg):
    print("bench: " + msg, file=sys.stderr, flush=True)


def sh(cmd, **kw):
    """Runs cmd, returns (stdout text, stderr text, returncode)."""
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    return p.stdout, p.stderr, p.returncode


def first_line(cmd):
    try:
        out, err, _ = sh(cmd)
        return (out or err).strip().splitlines()[0]
    except (OSError, IndexError):
        return "unknown"


class Child:
    """A child process whose CPU time we can read (wait4 gives its rusage)."""

    def __init__(self, cmd, env=None, stdout=None, stderr=None, cwd=None):
        self.t0 = time.monotonic()
        self.p = subprocess.Popen(cmd, env=env, stdout=stdout, stderr=stderr, cwd=cwd)

    def wait(self):
        _, status, ru = os.wait4(self.p.pid, 0)
        self.p.returncode = os.waitstatus_to_exitcode(status)
        self.wall = time.monotonic() - self.t0
        self.user, self.sys = ru.ru_utime, ru.ru_stime
        self.maxrss_kib = ru.ru_maxrss
        return self.p.returncode


def run_child(cmd, out_path, env=None, cwd=None):
    """Runs cmd with stdout and stderr into out_path; returns the finished Child."""
    with open(out_path, "wb") as f:
        c = Child(cmd, env=env, stdout=f, stderr=subprocess.STDOUT, cwd=cwd)
        c.wait()
    with open(out_path, "rb") as f:
        c.output = f.read().decode(errors="replace")
    return c


def proc_status(pid):
    """VmRSS, VmHWM, RssAnon, RssFile (KiB) and Threads of a live process."""
    d = {}
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            k, _, v = line.partition(":")
            if k in ("VmRSS", "VmHWM", "RssAnon", "RssFile", "RssShmem", "Threads"):
                d[k] = int(v.split()[0])
    # PSS counts a page once however many mappings share it: SQLite maps the store once
    # per connection (one per thread), and VmRSS counts a page once per mapping.
    try:
        with open("/proc/%d/smaps_rollup" % pid) as f:
            m = re.search(r"^Pss:\s+(\d+)", f.read(), re.M)
            d["Pss"] = int(m.group(1)) if m else None
    except OSError:
        d["Pss"] = None
    return d


def proc_cpu_seconds(pid):
    """CPU time (user + system, all threads) of pid and its child processes (nginx's
    workers), so far."""
    total = 0
    pids = [pid]
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            pids += [int(x) for x in f.read().split()]
    except OSError:
        pass
    for q in pids:
        try:
            with open("/proc/%d/stat" % q) as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        # fields[11], fields[12] are utime, stime (the 14th and 15th of the whole line).
        total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def machine_cpu():
    """(task busy s, irq + softirq s, steal s) of the whole machine so far, all cores.
    Loopback traffic is largely softirq work, which is not charged to any process."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    tck = os.sysconf("SC_CLK_TCK")
    user, nice, system, idle, iowait, irq, softirq, steal = v[:8]
    return (user + nice + system) / tck, (irq + softirq) / tck, steal / tck


def all_tasks_cpu():
    """{pid: (comm, cpu ticks)} for every process now."""
    out = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                text = f.read()
        except OSError:
            continue
        comm = text[text.index("(") + 1:text.rindex(")")]
        fields = text.rsplit(")", 1)[1].split()
        out[int(d)] = (comm, int(fields[11]) + int(fields[12]))
    return out


def top_others(before, after, exclude, seconds):
    """The other processes that used the most CPU between two all_tasks_cpu() snapshots
    (processes born and gone in between are missed: they are in the unattributed rest)."""
    tck = os.sysconf("SC_CLK_TCK")
    use = {}
    for pid, (comm, t) in after.items():
        if pid in exclude:
            continue
        d = t - before.get(pid, (comm, 0))[1]
        if d > 0:
            use[comm] = use.get(comm, 0) + d
    top = sorted(use.items(), key=lambda kv: -kv[1])[:3]
    return ", ".join("%s %.2f" % (c, t / tck / seconds) for c, t in top
                     if t / tck / seconds >= 0.02)


def proc_parent(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def pg_uri_db(uri, name):
    """A libpq URI with its database replaced by name."""
    m = re.match(r"(postgres(?:ql)?://[^/?]*)(/[^?]*)?(\?.*)?$", uri)
    if not m:
        raise SystemExit("bench: cannot read the PostgreSQL URI %r" % uri)
    return m.group(1) + "/" + name + (m.group(3) or "")


def psql(uri, sql):
    """One SQL command through psql; returns its unaligned output, exits on failure."""
    out, err, rc = sh(["psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d", uri,
                       "-c", sql])
    if rc != 0:
        raise SystemExit("psql %s: %s" % (sql, (err or out).strip()))
    return out.strip()


def is_pg(db):
    return db.startswith(("postgresql://", "postgres://"))


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def start_nginx(work, body, threads, content_type=None):
    """nginx serving body as a static file from work/nginx, with threads workers and the
    extra headers of nginx.conf.in (content_type: another Content-Type than JSON's);
    returns (process, port)."""
    prefix = os.path.join(work, "nginx")
    for d in ("www", "tmp"):
        os.makedirs(os.path.join(prefix, d), exist_ok=True)
    # Started as root, nginx's workers run as nobody: they must be able to reach the file
    # (the work directory is private, 0700, from mkdtemp; the store secret in it stays 0600).
    os.chmod(work, 0o711)
    os.chmod(prefix, 0o755)
    os.chmod(os.path.join(prefix, "www"), 0o755)
    with open(os.path.join(prefix, "www", "body.json"), "wb") as f:
        f.write(body)
    port = free_port()
    with open(os.path.join(BENCH, "nginx.conf.in")) as f:
        conf = (f.read().replace("@PREFIX@", prefix).replace("@PORT@", str(port))
                .replace("@WORKERS@", str(threads)))
    if content_type:
        conf = conf.replace('"application/json; charset=utf-8"', '"%s"' % content_type)
    conf_path = os.path.join(prefix, "nginx.conf")
    with open(conf_path, "w") as f:
        f.write(conf)
    p = subprocess.Popen(["nginx", "-p", prefix + "/", "-c", conf_path, "-e",
                          os.path.join(prefix, "error.log")],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if not wait_port(port, p):
        raise SystemExit("nginx did not start; see %s/error.log" % prefix)
    return p, port


def wait_port(port, proc, timeout=15):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            return False
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return True
        except OSError:
            time.sleep(0.05)
    return False


def machine_info():
    model = "unknown"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    mem_kib = 0
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal"):
                mem_kib = int(line.split()[1])
    osname = "unknown"
    try:
        with open("/etc/os-release") as f:
            m = re.search(r'^PRETTY_NAME="?([^"\n]*)', f.read(), re.M)
            osname = m.group(1) if m else osname
    except OSError:
        pass
    commit = first_line(["git", "-C", ROOT, "rev-parse", "--short=12", "HEAD"])
    dirty = sh(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no", "src"])[0]
    return {
        "nproc": os.cpu_count(),
        "cpu_model": model,
        "mem_gib": round(mem_kib / 1048576, 1),
        "kernel": platform.release(),
        "os": osname,
        "wrk": first_line(["wrk", "-v"]).split(" [")[0],
        "nginx": first_line(["nginx", "-v"]).replace("nginx version: ", ""),
        "cc": first_line(["cc", "--version"]),
        "sqlite": first_line(["pkg-config", "--modversion", "sqlite3"]),
        "libmicrohttpd": first_line(["pkg-config", "--modversion", "libmicrohttpd"]),
        "commit": commit + (" (src/ modified locally)" if dirty.strip() else ""),
        "loadavg_start": open("/proc/loadavg").read().split()[:3],
    }


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

    def smoke(self, port, record="smoke"):
        """One request of each kind must answer 200 before any load is measured."""
        from urllib.parse import quote
        e = self.lines("emails.txt")[0]
        d = self.lines("domains.txt")[0]
        b = self.lines("bins.txt")[0]
        o = self.lines("owners.txt")[0]
        paths = {
            "s1": "/v7/breach-search?type=email&account=%s&number_of_records=1" % quote(e),
            "s2": "/v7/breach-search?type=email_domain&account=%s&number_of_records=100"
                  % quote(d),
            "s3": "/v7/breaches",
            "s4": "/v7/credit-card-search?query=%s&size=20" % quote("number:%s*" % b),
            "s5": "/v7/credit-card-search?query=%s&sort=%s&size=20"
                  % (quote("owner:%s AND expireDate:[2026-01-01 TO *]" % o, safe=""),
                     quote("expireDate,asc", safe="")),
        }
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
        self.evaluate()
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
        for k, v in PG_SETTINGS:
            psql(uri, "ALTER SYSTEM SET %s = '%s'" % (k, v))
        for step in ("pause", "resume"):
            out, err, rc = sh([PG_CLUSTER, step, d])
            if rc != 0:
                raise SystemExit("scripts/pg-cluster.sh %s failed:\n%s%s" % (step, err, out))
        with open(os.path.join(d, "data", "postmaster.pid")) as f:
            self.db_pid = int(f.readline())
        pg = self.r["pg"]
        pg["version"] = psql(uri, "SHOW server_version")
        pg["settings"] = {k: psql(uri, "SHOW %s" % k) for k, _ in PG_SETTINGS}
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
        self.import_all()  # once, with the candidate's breachctl (no --bulk store)
        self.r["store_bytes"] = os.path.getsize(self.db)
        # Both servers open the same store read-only (query_only readers, WAL) and are
        # started up front, each on its own port; the one not under load sits idle.
        sides = (("baseline", self.breachd_base), ("candidate", self.breachd))
        procs = {}
        for side, binary in sides:
            p, port = self.start_breachd(side, binary)
            procs[side] = (p, port)
            log("smoke test of the %s (port %d)" % (side, port))
            self.smoke(port)
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

    def evaluate(self):
        s, imp, ngx = self.r["scenarios"], self.r["import"], self.r["nginx"]
        # "page cache aside": the file-backed part of VmRSS is the store, mapped by the
        # readers from the page cache, which the kernel reclaims at will; the target is
        # judged on what breachd itself allocated (anonymous memory).
        mem = self.r["memory_loaded"]["rss_anon_mib"]
        t = []

        def target(what, measured, goal, met, run=None):
            # a scenario that answered errors meets nothing: fast 404s are not throughput
            if run is not None and error_count(run):
                measured += " (%d failed requests)" % error_count(run)
                met = False
            t.append({"what": what, "measured": measured, "target": goal, "met": bool(met)})

        target("Scenario 1 throughput vs nginx", "%s x (%s vs %s req/s)"
               % (fmt_ratio(s["s1"]["ratio"]), fmt_int(s["s1"]["rps"]), fmt_int(ngx["rps"])),
               ">= %.1f x" % T_S1_RATIO, s["s1"]["ratio"] >= T_S1_RATIO, s["s1"])
        target("Scenario 1 p99 latency", "%.2f ms" % s["s1"]["p99_ms"],
               "<= %.0f ms" % T_S1_P99_MS, s["s1"]["p99_ms"] <= T_S1_P99_MS, s["s1"])
        target("Scenario 4 throughput vs nginx", "%s x (%s req/s)"
               % (fmt_ratio(s["s4"]["ratio"]), fmt_rate(s["s4"]["rps"])),
               ">= %.1f x" % T_S4_RATIO, s["s4"]["ratio"] >= T_S4_RATIO, s["s4"])
        if self.r.get("nginx_s3"):
            n3 = self.r["nginx_s3"]
            ratio3 = s["s3"]["rps"] / n3["rps"] if n3["rps"] else 0.0
            target("Scenario 3 (whole catalog) vs nginx serving the same %s bytes"
                   % fmt_int(n3["body_bytes"]), "%s x (%s vs %s req/s)"
                   % (fmt_ratio(ratio3), fmt_int(s["s3"]["rps"]), fmt_int(n3["rps"])),
                   ">= %.1f x" % T_S3_SAME_BYTES, ratio3 >= T_S3_SAME_BYTES, s["s3"])
        target("Scenario 2 p99 latency", "%.1f ms" % s["s2"]["p99_ms"],
               "<= %.0f ms" % T_S2_P99_MS, s["s2"]["p99_ms"] <= T_S2_P99_MS, s["s2"])
        target("Scenario 5 p99 latency", "%.1f ms" % s["s5"]["p99_ms"],
               "<= %.0f ms" % T_S5_P99_MS, s["s5"]["p99_ms"] <= T_S5_P99_MS, s["s5"])
        modes = [(" (--bulk)" if self.r.get("import_mode") == "bulk" else "", imp)]
        if self.r.get("import_bulk"):
            modes.append((" (--bulk)", self.r["import_bulk"]))
        for mode, i in modes:
            target("Import, breach records" + mode,
                   "%s records/s" % fmt_int(i["records"]["per_s"]),
                   ">= %s/s" % fmt_int(T_IMPORT_RECORDS),
                   i["records"]["per_s"] >= T_IMPORT_RECORDS)
            target("Import, cards" + mode, "%s cards/s" % fmt_int(i["cards"]["per_s"]),
                   ">= %s/s" % fmt_int(T_IMPORT_CARDS), i["cards"]["per_s"] >= T_IMPORT_CARDS)
        target("RSS with %d idle keep-alive connections, page cache aside (anonymous)"
               % self.a.idle_connections,
               "%.1f MiB (VmRSS %.1f MiB with the mapped store)"
               % (mem, self.r["memory_loaded"]["rss_mib"]),
               "<= %.0f MiB" % T_RSS_MIB, mem <= T_RSS_MIB)
        base = self.r.get("growth_base")
        if base:
            u = self.r.get("unloaded", {})
            for sid in ("s1", "s4"):
                # at 64 connections, and over one connection when the base run measured it
                for key, run, how in ((sid, s[sid], ""),
                                      (sid + "_c1", u.get(sid), ", 1 connection")):
                    if key not in base or not run:
                        continue
                    for q in ("p50_ms", "p99_ms"):
                        was = base[key][q]
                        f = run[q] / was if was else float("inf")
                        target("Growth: scenario %s %s latency%s vs the %s run"
                               % (sid[1], q[:3], how, base["label"]),
                               "%.2f x (%.2f vs %.2f ms)" % (f, run[q], was),
                               "<= %.1f x" % T_GROWTH, f <= T_GROWTH, run)
        pg = self.r.get("pg")
        if pg is not None:
            self.evaluate_pg(pg, target)
        self.r["targets"] = t

    def evaluate_pg(self, pg, target):
        """Issue 14's four PostgreSQL targets; not measured (an error) counts as missed."""
        s, ps, ngx = self.r["scenarios"], pg.get("scenarios"), self.r["nginx"]
        names = ("PostgreSQL: scenario 1 throughput vs nginx",
                 "PostgreSQL: every scenario's p99 vs SQLite's",
                 "PostgreSQL: import --bulk, breach records",
                 "PostgreSQL: import --bulk, cards")
        goals = (">= %.2f x" % T_PG_S1_RATIO, "<= %.0f x each" % T_PG_P99_FACTOR,
                 ">= %s/s" % fmt_int(T_PG_BULK_RECORDS), ">= %s/s" % fmt_int(T_PG_BULK_CARDS))
        if ps:
            s1 = ps["s1"]
            floor = pg.get("floor_s1")
            target(names[0], "%s x (%s vs %s req/s)%s"
                   % (fmt_ratio(s1["ratio"]), fmt_int(s1["rps"]), fmt_int(ngx["rps"]),
                      "; PostgreSQL alone %s x, the CPU budget's bound %s x"
                      % (fmt_ratio(floor["ratio"]), fmt_ratio(floor["bound_ratio"]))
                      if floor else ""),
                   goals[0], s1["ratio"] >= T_PG_S1_RATIO, s1)
            ratios = {sid: pg_p99_ratio(s[sid], ps[sid]) for sid in ps}
            worst = max(ratios, key=ratios.get)
            failed = sum(error_count(ps[sid]) for sid in ps)
            target(names[1], "worst %s %.2f x (%.2f vs %.2f ms); %s"
                   % (worst, ratios[worst], ps[worst]["p99_ms"], s[worst]["p99_ms"],
                      ", ".join("%s %.2f" % (sid, ratios[sid]) for sid in ps))
                   + (" (%d failed requests)" % failed if failed else ""),
                   goals[1], ratios[worst] <= T_PG_P99_FACTOR and not failed)
        else:
            for i in (0, 1):
                target(names[i], "not measured", goals[i], False)
        bulk = pg.get("import_bulk") or (pg.get("import") if pg.get("import_mode") == "bulk"
                                         else None)
        for i, kind, goal in ((2, "records", T_PG_BULK_RECORDS), (3, "cards", T_PG_BULK_CARDS)):
            floor = load_floor_rate(pg, kind)
            if bulk:
                target(names[i], "%s %s/s%s" % (fmt_int(bulk[kind]["per_s"]), kind,
                                                "; PostgreSQL alone %s/s" % fmt_int(floor)
                                                if floor else ""),
                       goals[i], bulk[kind]["per_s"] >= goal)
            else:
                target(names[i], "not measured", goals[i], False)

    def cleanup(self):
        for p in list(self.children):
            self.stop(p, signal.SIGKILL if p.poll() is None else signal.SIGTERM)
        self.pg_stop()  # when the PostgreSQL part was interrupted
        if not self.a.keep and not self.a.workdir:
            shutil.rmtree(self.work, ignore_errors=True)


def error_count(run):
    """Failed requests of a wrk run: socket errors plus HTTP errors (wrk counts a status
    above 399 both in errors.status and in its Non-2xx line, so take that once)."""
    e = run["errors"]
    return sum(v for k, v in e.items() if k != "status") + max(e.get("status", 0),
                                                                run["non_2xx"])


def ab_summary(runs):
    """Medians of each side's runs, candidate ÷ baseline, and the issue-14 verdict: the
    candidate's median req/s at least T_AB_RATIO of the baseline's, with no failed
    requests on either side."""
    out = {}
    for side, rs in runs.items():
        rps = [r["rps"] for r in rs]
        med = statistics.median(rps)
        out[side] = {"rps": round(med, 1),
                     "p50_ms": round(statistics.median(r["p50_ms"] for r in rs), 3),
                     "p99_ms": round(statistics.median(r["p99_ms"] for r in rs), 3),
                     # (max - min) / median of the side's runs: the noise the ratio sits in
                     "spread": round((max(rps) - min(rps)) / med, 4) if med else 0.0,
                     "errors": sum(error_count(r) for r in rs),
                     "runs": rs}
    b, c = out["baseline"], out["candidate"]
    out["rps_ratio"] = round(c["rps"] / b["rps"], 4) if b["rps"] else float("inf")
    out["p99_ratio"] = round(c["p99_ms"] / b["p99_ms"], 4) if b["p99_ms"] else float("inf")
    out["round_ratios"] = [round(rc["rps"] / rb["rps"], 3) if rb["rps"] else None
                           for rb, rc in zip(b["runs"], c["runs"])]
    out["met"] = out["rps_ratio"] >= T_AB_RATIO and not b["errors"] and not c["errors"]
    return out


def load_floor_rate(pg, kind):
    """Rows per second of PostgreSQL alone rebuilding a kind's tables (pg_floors.load):
    records are the records table; cards are cards with their word tables."""
    f = pg.get("load_floor")
    if not f:
        return None
    tables = ("records",) if kind == "records" else ("cards", "card_words", "card_owner_words")
    seconds = sum(f["tables"][t]["seconds"] for t in tables)
    return f["tables"][tables[0]]["rows"] / seconds if seconds else None


def pg_p99_ratio(sqlite_run, pg_run):
    return pg_run["p99_ms"] / sqlite_run["p99_ms"] if sqlite_run["p99_ms"] else float("inf")


def median_run(runs):
    """The run with the median requests/s (the run itself, so its figures belong together)."""
    runs = sorted(runs, key=lambda r: r["rps"])
    return runs[len(runs) // 2]


def fmt_ratio(x):
    return "%.3f" % x if x >= 0.01 else "%.2g" % x


def fmt_rate(x):
    return fmt_int(x) if x >= 10 else "%.1f" % x


def fmt_int(n):
    return "{:,}".format(int(round(n)))


# ---- the report ----------------------------------------------------------------------------
BEGIN = "<!-- bench:%s:begin -->"
END = "<!-- bench:%s:end -->"
# A section's headline figures in machine-readable form, for --compare-with.
FIGURES = "<!-- bench:%s:figures %s -->"


def figures(r):
    if r.get("mode") == "ab":
        f = {"label": r["label"], "mode": "ab", "records": r["params"]["records"],
             "cards": r["params"]["cards"], "baseline": r["baseline_label"],
             "candidate": r["candidate_label"]}
        for sid, x in r["ab"].items():
            f[sid] = {"baseline_rps": x["baseline"]["rps"], "candidate_rps": x["candidate"]["rps"],
                      "rps_ratio": x["rps_ratio"], "baseline_p99_ms": x["baseline"]["p99_ms"],
                      "candidate_p99_ms": x["candidate"]["p99_ms"], "p99_ratio": x["p99_ratio"],
                      "met": x["met"]}
        return f
    f = {"label": r["label"], "records": r["params"]["records"], "cards": r["params"]["cards"]}
    for sid, sc in r["scenarios"].items():
        f[sid] = {"rps": sc["rps"], "p50_ms": sc["p50_ms"], "p99_ms": sc["p99_ms"]}
    for sid, sc in r.get("unloaded", {}).items():
        f[sid + "_c1"] = {"rps": sc["rps"], "p50_ms": sc["p50_ms"], "p99_ms": sc["p99_ms"]}
    pg = r.get("pg") or {}
    if pg.get("scenarios"):
        f["pg"] = {sid: {"rps": sc["rps"], "p50_ms": sc["p50_ms"], "p99_ms": sc["p99_ms"]}
                   for sid, sc in pg["scenarios"].items()}
        for sid, sc in pg.get("unloaded", {}).items():
            f["pg"][sid + "_c1"] = {"rps": sc["rps"], "p50_ms": sc["p50_ms"],
                                    "p99_ms": sc["p99_ms"]}
    return f


def read_figures(path, label):
    """The figures another section of RESULTS.md recorded, or exit when it has none."""
    text = open(path).read() if os.path.exists(path) else ""
    m = re.search(r"<!-- bench:%s:figures (\{.*?\}) -->" % re.escape(label), text)
    if not m:
        raise SystemExit("%s has no figures for the '%s' run; run that one first" % (path, label))
    return json.loads(m.group(1))

HEADER = """# breachd benchmark results

Written by `bench/run.py` (see bench/README.md): `make bench` replaces the *full* section,
`make bench-quick` the *quick* one; the notes at the end are written by hand. Targets are
stated for the full corpus (1M breach records and 1M cards) on a 2-core machine; the quick
run marks them too, for orientation only.

"""


def section(r):
    m, p = r["machine"], r["params"]
    imp, sc, ngx = r["import"], r["scenarios"], r["nginx"]
    man = r["corpus"]["manifest"]
    L = []
    w = L.append
    w("## %s run, %s" % (r["label"].capitalize(), r["started"]))
    w("")
    w("Command: `%s` (%s s in all, build and install excluded)."
      % (p["command"], fmt_int(r["total_seconds"])))
    w("")
    w("Machine: %d cores (%s), %.1f GiB memory, %s, kernel %s; load average %s at the start, "
      "%s at the end. breachd at commit %s (%s; %s; SQLite %s, libmicrohttpd %s); %s; %s."
      % (m["nproc"], m["cpu_model"], m["mem_gib"], m["os"], m["kernel"],
         " ".join(m["loadavg_start"]), " ".join(m.get("loadavg_end", ["?"])), m["commit"],
         "; ".join(r.get("binaries", {}).values()) or "binaries not recorded",
         m["cc"], m["sqlite"], m["libmicrohttpd"], m["wrk"], m["nginx"]))
    w("")
    w("Load: wrk `-t%d -c%d -d%ds --latency`, keep-alive, each scenario after a %d s warm-up "
      "run that is discarded; breachd `--threads %d`, nginx `worker_processes %d`. wrk and the "
      "server share the same %d cores (loopback), so every server figure is what is left "
      "after the load generator's share; the *cores* columns show who used the CPU."
      % (p["wrk_threads"], p["connections"], p["duration"], p["warmup"], p["threads"],
         p["threads"], m["nproc"]))
    w("")
    w("### Corpus and import")
    w("")
    w("Generated by `bench/gen_corpus.py --seed %d` %s: %s breaches, %s breach records "
      "(%s identities, 1-5 breaches each; largest domain %s with %s records), %s cards "
      "(%d%% on BIN 411111). JSONL sizes: records %.0f MB, cards %.0f MB."
      % (man["seed"], "before the run (`--corpus`)" if r["corpus"].get("reused") else
         "in %.1f s" % r["corpus"]["seconds"], fmt_int(man["breaches"]), fmt_int(man["records"]),
         fmt_int(man["identities"]), man["top_domains"][0][0], fmt_int(man["top_domains"][0][1]),
         fmt_int(man["cards"]), round(100 * man["bin_shares"]["411111"]),
         r["corpus"]["bytes"]["records"] / 1e6, r["corpus"]["bytes"]["cards"] / 1e6))
    w("")
    w("| `breachctl import` | lines | wall s | user s | sys s | per second | peak RSS | store after |")
    w("|---|--:|--:|--:|--:|--:|--:|--:|")
    for mode, figures in (("", imp), (" --bulk", r.get("import_bulk"))):
        if not figures:
            continue
        for kind in ("breaches", "records", "cards"):
            i = figures[kind]
            w("| %s%s | %s | %.2f | %.2f | %.2f | **%s** | %.0f MiB | %.0f MiB |"
              % (kind, mode if kind != "breaches" else (" (bulk store)" if mode else ""),
                 fmt_int(i["imported"]), i["seconds"], i["user_s"], i["sys_s"],
                 fmt_int(i["per_s"]), i["maxrss_mib"], i["db_bytes_after"] / 1048576))
    if r.get("import_mode") == "bulk":
        w("")
        w("The load store was built with `import --bulk` alone (`--bulk-only`): a plain "
          "import of this size takes hours. Each line is one `breachctl import` process, end "
          "to end: read, parse, normalise, mask, hash, insert, index, commit.")
    if r.get("import_bulk"):
        w("")
        w("The plain import built the store the load scenarios use; `--bulk` loaded the same "
          "files into a second, fresh store (then deleted). Each line is one `breachctl "
          "import` process, end to end: read, parse, normalise, mask, hash, insert, index, "
          "commit.")
    w("")
    w("### Load scenarios")
    w("")
    w("nginx ceiling: the scenario-1 wrk script, unchanged, against nginx serving one static "
      "file of the median scenario-1 body (%d bytes; sampled %d replies, %d-%d bytes) with "
      "breachd's extra headers; run %d time(s), alternating with scenario 1, medians shown."
      % (r["s1_body"]["median"], r["s1_body"]["sampled"], r["s1_body"]["min"],
         r["s1_body"]["max"], p["ratio_runs"]))
    w("")
    w("| scenario | req/s | p50 ms | p99 ms | RSS after | ÷ nginx |")
    w("|---|--:|--:|--:|--:|--:|")
    w("| nginx static ceiling | %s | %.2f | %.2f | n/a | 1 |"
      % (fmt_int(ngx["rps"]), ngx["p50_ms"], ngx["p99_ms"]))
    for sid, title, _, _ in SCENARIOS:
        s = sc[sid]
        w("| %s. %s | %s | %.2f | %.2f | %.1f MiB | %s |"
          % (sid[1:], title, fmt_int(s["rps"]), s["p50_ms"], s["p99_ms"], s["rss_mib"],
             fmt_ratio(s["ratio"])))
    w("")
    w("Details (RSS split into anonymous memory and mapped files, mostly the store; PSS "
      "counts a page mapped by both SQLite connections once; *cores* = CPU seconds "
      "per second of wall time: the server (breachd, or nginx with its workers), wrk, kernel "
      "softirq (loopback TCP), other processes on the machine (the busiest named), and "
      "hypervisor steal):")
    w("")
    w("| scenario | requests | p90 ms | p99.9 ms | max ms | bytes/reply | errors | RSS anon + file | PSS | HWM | server cores | wrk cores | softirq cores | other processes, cores | steal |")
    w("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
    rows = [("nginx-%d" % (k + 1), run) for k, run in enumerate(ngx["runs"])]
    for sid, _, _, _ in SCENARIOS:
        if sid == "s1":
            rows += [("s1-%d" % (k + 1), run) for k, run in enumerate(sc[sid]["runs"])]
        else:
            rows.append((sid, sc[sid]))
    for name, s in rows:
        errs = error_count(s)
        w("| %s | %s | %.2f | %.2f | %.1f | %s | %s | %s | %s | %s | %s | %.2f | %.2f | %s | %.2f |"
          % (name, fmt_int(s["requests"]), s["p90_ms"], s["p999_ms"], s["max_ms"],
             fmt_int(s["bytes_per_resp"]), errs,
             "n/a" if name.startswith("nginx") else
             "%.1f + %.1f MiB" % (s["rss_anon_mib"], s["rss_file_mib"]),
             "n/a" if name.startswith("nginx") or not s.get("pss_mib") else
             "%.1f MiB" % s["pss_mib"],
             "n/a" if name.startswith("nginx") else "%.1f MiB" % s["hwm_mib"],
             "n/a" if s["server_cores"] is None else "%.2f" % s["server_cores"],
             s["wrk_cores"], s["irq_cores"],
             "n/a" if s["other_cores"] is None else "%.2f%s" % (
                 s["other_cores"], " (%s)" % s["other_top"] if s["other_top"] else ""),
             s["steal_cores"]))
    for name, s in rows:
        if s["errors"].get("timeout"):
            w("")
            w("%s: %s requests got no reply within wrk's 10 s timeout; wrk leaves them out of "
              "its latency percentiles, so the real p99 of that run is higher than shown."
              % (name, fmt_int(s["errors"]["timeout"])))
    if r.get("unloaded"):
        w("")
        w("The same scenarios over **one connection** (wrk `-t1 -c1`, %d s after the warm-up): "
          "the latency of a request that does not queue behind 63 others. With 64 "
          "connections a request's mean latency is 64 ÷ throughput (Little's law), so the "
          "64-connection p99 of a scenario that saturates the cores measures the queue."
          % max(3, p["duration"] // 2))
        w("")
        w("| scenario | req/s, 1 connection | p50 ms | p90 ms | p99 ms | max ms | 64 ÷ req/s at 64 connections |")
        w("|---|--:|--:|--:|--:|--:|--:|")
        for sid, title, _, _ in SCENARIOS:
            u = r["unloaded"].get(sid)
            if u:
                w("| %s. %s | %s | %.2f | %.2f | %.2f | %.1f | %.2f ms |"
                  % (sid[1:], title, fmt_int(u["rps"]), u["p50_ms"], u["p90_ms"], u["p99_ms"],
                     u["max_ms"], 1000.0 * p["connections"] / sc[sid]["rps"]))
    s2, s6 = sc["s2"], sc["s6"]
    w("")
    w("Scenario 2 sent %s first pages (which count `records_found`) and %s token-following "
      "pages; the mix sent %s and %s. Domains paged: %s with at least 200 records (%s to %s "
      "records each)."
      % (fmt_int(s2["first_pages"]), fmt_int(s2["followed"]), fmt_int(s6["first_pages"]),
         fmt_int(s6["followed"]), fmt_int(man["pageable_domains"]),
         fmt_int(man["pageable_domain_records"]["min"]),
         fmt_int(man["pageable_domain_records"]["max"])))
    w("")
    w("### Memory with idle keep-alive connections")
    w("")
    w("A Python client opens %d connections, each completes one scenario-1 request and stays "
      "open; VmRSS is read from /proc/PID/status a second later."
      % r["memory_loaded"]["connections"])
    w("")
    w("| server | RSS before | RSS with the connections | anon + file | PSS | per connection | answered 200 | still open | server's gauge |")
    w("|---|--:|--:|--:|--:|--:|--:|--:|--:|")
    for name, mm in (("after the load scenarios", r["memory_loaded"]),
                     ("freshly started", r["memory_fresh"])):
        w("| %s | %.1f MiB | **%.1f MiB** | %.1f + %.1f MiB | %s | %.1f KiB | %d | %d | %s |"
          % (name, mm["rss_before_mib"], mm["rss_mib"], mm["rss_anon_mib"], mm["rss_file_mib"],
             "%.1f MiB" % mm["pss_mib"] if mm.get("pss_mib") else "?", mm["per_conn_kib"], mm["answered_200"], mm["still_open"],
             "?" if mm["server_gauge"] is None else mm["server_gauge"]))
    if r.get("pg") is not None:
        L += section_pg(r)
    w("")
    w("### Targets")
    w("")
    w("| target | measured | goal | |")
    w("|---|--:|--:|---|")
    for t in r["targets"]:
        w("| %s | %s | %s | %s |" % (t["what"], t["measured"], t["target"],
                                     "met" if t["met"] else "**missed**"))
    w("")
    return "\n".join(L)


def section_pg(r):
    """The PostgreSQL store beside SQLite: imports, scenarios, one-connection runs."""
    pg, p, sc, ngx = r["pg"], r["params"], r["scenarios"], r["nginx"]
    L = []
    w = L.append
    w("")
    w("### SQLite and PostgreSQL side by side")
    w("")
    if pg.get("version"):
        w("After the SQLite part (%s s), a throwaway PostgreSQL %s cluster "
          "(`scripts/pg-cluster.sh start` in the work directory, Unix socket, trust "
          "authentication) ran on the same machine and cores as breachd and wrk. The script "
          "sets %s on its command line, kept as it sets them (**fsync is off**: no "
          "durability, commits do not wait for the disk); the bench added %s (ALTER SYSTEM, then a restart). A database per store "
          "(`CREATE DATABASE`, `breachctl init --db URI --secret FILE`): the plain import "
          "built the store the scenarios ran on, `--bulk` a second one (then dropped). "
          "breachd `--threads %d` on that store, the same wrk scripts, runs and warm-ups; the "
          "nginx ceiling is the one measured above (not run again), and the memory check is "
          "SQLite's only. The PostgreSQL part took %s s."
          % (fmt_int(r.get("sqlite_seconds", 0)), pg["version"],
             ", ".join("`%s=%s`" % kv for kv in pg["script_settings"].items()),
             ", ".join("`%s=%s`" % kv for kv in pg["settings"].items()), p["threads"],
             fmt_int(pg.get("seconds", 0))))
        w("")
    if pg.get("error"):
        w("**The PostgreSQL part failed**, so its figures below are incomplete: `%s` "
          "(the wrk outputs and the cluster's server log are in the work directory's "
          "`logs/` with `--keep`)." % pg["error"].strip().splitlines()[0][:300])
        w("")
    if pg.get("import_mode") == "bulk":  # --bulk-only: both load stores built by --bulk
        imports = [(" --bulk", r["import"], pg.get("import"))]
    else:
        imports = [("", r["import"], pg.get("import")),
                   (" --bulk", r.get("import_bulk"), pg.get("import_bulk"))]
    if any(b for _, _, b in imports):
        w("| `breachctl import` | SQLite per second | PostgreSQL per second | PostgreSQL ÷ "
          "SQLite | PostgreSQL wall s | user + sys s (breachctl) | PostgreSQL store after |")
        w("|---|--:|--:|--:|--:|--:|--:|")
        for mode, a, b in imports:
            if not b:
                continue
            for kind in ("records", "cards"):
                x, y = (a or {}).get(kind), b[kind]
                w("| %s%s | %s | **%s** | %s | %.2f | %.2f | %.0f MiB |"
                  % (kind, mode, fmt_int(x["per_s"]) if x else "n/a", fmt_int(y["per_s"]),
                     "%.3f" % (y["per_s"] / x["per_s"]) if x and x["per_s"] else "n/a",
                     y["seconds"], y["user_s"] + y["sys_s"], y["db_bytes_after"] / 1048576))
        w("")
    ps = pg.get("scenarios")
    if ps:
        w("Each scenario on both stores (scenario 1: median of %d runs each); *÷ nginx* is "
          "PostgreSQL's req/s over the nginx ceiling's (%s req/s). Issue 14's targets: "
          "scenario 1 on PostgreSQL at least %.2f × nginx, every p99 within %.0f × SQLite's."
          % (p["ratio_runs"], fmt_int(ngx["rps"]), T_PG_S1_RATIO, T_PG_P99_FACTOR))
        w("")
        w("| scenario | SQLite req/s | PostgreSQL req/s | PostgreSQL ÷ SQLite | SQLite p50 ms "
          "| PostgreSQL p50 ms | SQLite p99 ms | PostgreSQL p99 ms | p99 PostgreSQL ÷ SQLite "
          "| PostgreSQL ÷ nginx |")
        w("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
        rows = [(sid, title, sc[sid], ps[sid], "") for sid, title, _, _ in SCENARIOS
                if sid in ps]
        rows += [(sid, title + ", 1 connection", r["unloaded"][sid], pg["unloaded"][sid], "c1")
                 for sid, title, _, _ in SCENARIOS
                 if sid in pg.get("unloaded", {}) and sid in r.get("unloaded", {})]
        for sid, title, a, b, c1 in rows:
            f = pg_p99_ratio(a, b)
            judged = not c1
            w("| %s. %s | %s | %s | %.3f | %.2f | %.2f | %.2f | %.2f | %s | %s |"
              % (sid[1:], title, fmt_int(a["rps"]), fmt_int(b["rps"]),
                 b["rps"] / a["rps"] if a["rps"] else float("inf"), a["p50_ms"], b["p50_ms"],
                 a["p99_ms"], b["p99_ms"],
                 ("**%.2f**" % f if f > T_PG_P99_FACTOR else "%.2f" % f) if judged
                 else "%.2f" % f,
                 ("**%s**" if sid == "s1" else "%s") % fmt_ratio(b["ratio"])
                 if judged else "n/a"))
        w("")
        w("Details of the PostgreSQL runs (*breachd cores* and *postgres cores*: CPU seconds "
          "per second of wall time of breachd and of the PostgreSQL server with its "
          "backends; RSS is breachd's alone, the database's memory is its own):")
        w("")
        w("| run | requests | p90 ms | p99.9 ms | max ms | errors | breachd RSS anon + file "
          "| breachd cores | postgres cores | wrk cores | softirq cores "
          "| other processes, cores | steal |")
        w("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
        runs = []
        for sid, _, _, _ in SCENARIOS:
            if sid == "s1":
                runs += [("s1-%d" % (k + 1), x) for k, x in enumerate(ps[sid]["runs"])]
            elif sid in ps:
                runs.append((sid, ps[sid]))
        runs += [(sid + ", 1 connection", x) for sid, x in pg.get("unloaded", {}).items()]
        for name, x in runs:
            w("| %s | %s | %.2f | %.2f | %.1f | %s | %.1f + %.1f MiB | %s | %s | %.2f | %.2f "
              "| %s | %.2f |"
              % (name, fmt_int(x["requests"]), x["p90_ms"], x["p999_ms"], x["max_ms"],
                 error_count(x), x["rss_anon_mib"], x["rss_file_mib"],
                 "n/a" if x["server_cores"] is None else "%.2f" % x["server_cores"],
                 "n/a" if x.get("db_cores") is None else "%.2f" % x["db_cores"],
                 x["wrk_cores"], x["irq_cores"],
                 "n/a" if x["other_cores"] is None else "%.2f%s" % (
                     x["other_cores"], " (%s)" % x["other_top"] if x["other_top"] else ""),
                 x["steal_cores"]))
        for name, x in runs:
            if x["errors"].get("timeout"):
                w("")
                w("PostgreSQL %s: %s requests got no reply within wrk's 10 s timeout; the real "
                  "p99 is higher than shown." % (name, fmt_int(x["errors"]["timeout"])))
    L += section_pg_floors(r)
    smoke, pgsmoke = r.get("smoke") or {}, pg.get("pg_smoke") or {}
    if pgsmoke:
        differ = ["%s (%s vs %s found, %s vs %s bytes)"
                  % (sid, smoke[sid]["found"], pgsmoke[sid]["found"], fmt_int(smoke[sid]["bytes"]),
                     fmt_int(pgsmoke[sid]["bytes"]))
                  for sid in pgsmoke if sid in smoke and smoke[sid] != pgsmoke[sid]]
        w("")
        w("Smoke test before the load, one request per scenario on each store: %s."
          % ("the same counts and reply sizes on both" if not differ else
             "**replies differ**: " + "; ".join(differ)))
    return L


def section_pg_floors(r):
    """What PostgreSQL alone did in the same run (bench/pg_floors.py): the floors under the
    PostgreSQL targets."""
    pg, p, ngx = r["pg"], r["params"], r["nginx"]
    floor, lf = pg.get("floor_s1"), pg.get("load_floor")
    if not floor and not lf:
        return []
    L = ["", "#### PostgreSQL alone: the floor under the targets", ""]
    w = L.append
    if floor:
        s1 = pg["scenarios"]["s1"]
        w("`bench/pg_floor` (bench/pg_floor.c) executed scenario 1's very statement, prepared, "
          "with the scenario's emails in turn, from threads that do nothing else (libpq's "
          "asynchronous calls), %d s per run, after breachd had stopped: with as many "
          "connections as breachd holds (one per thread) and as wrk keeps open. breachd "
          "sends that statement and does more per request, beside wrk on the same cores, "
          "so the better of the two rates bounds scenario 1's." % p["duration"])
        w("")
        w("| | per second (median) | ÷ nginx ceiling (%s req/s) | postgres cores | client cores "
          "| runs |" % fmt_int(ngx["rps"]))
        w("|---|--:|--:|--:|--:|---|")
        for conns, x in floor["by_connections"].items():
            w("| PostgreSQL alone, %s connections | **%s** | **%s** | %.2f | %.2f | %s |"
              % (conns, fmt_int(x["per_second"]), fmt_ratio(x["per_second"] / ngx["rps"]),
                 x["db_cores"], x["client_cores"],
                 ", ".join(fmt_int(y["per_second"]) for y in x["runs"])))
        w("| breachd on PostgreSQL, scenario 1 | %s | %s | %s | %.2f (breachd) | %s |"
          % (fmt_int(s1["rps"]), fmt_ratio(s1["ratio"]),
             "n/a" if s1.get("db_cores") is None else "%.2f" % s1["db_cores"],
             s1["server_cores"] or 0.0, ", ".join(fmt_int(x["rps"]) for x in s1["runs"])))
        w("| target | %s | %.2f | | | |" % (fmt_int(T_PG_S1_RATIO * ngx["rps"]), T_PG_S1_RATIO))
        w("")
        b = floor["budget_us"]
        w("CPU per request, in microseconds: PostgreSQL's and the client's per statement at "
          "the better rate above; nginx's, wrk's and the loopback's (softirq) per request in "
          "the ceiling's run. A server that answered each request with that statement and "
          "spent on HTTP no more than nginx spends serving a file could serve at most "
          "%d cores ÷ their sum:" % floor["cores"])
        w("")
        w("| %s | sum | most requests/s | ÷ nginx |" % " | ".join(b))
        w("|%s--:|--:|--:|" % ("--:|" * len(b)))
        w("| %s | %.1f | **%s** | **%s** |"
          % (" | ".join("%.1f" % v for v in b.values()), sum(b.values()),
             fmt_int(floor["bound_rps"]), fmt_ratio(floor["bound_ratio"])))
        w("")
    if lf:
        w("PostgreSQL alone making the `--bulk` store's tables queryable again from their own "
          "rows (`COPY ... TO` a binary file, then timed by the server: `COPY ... FROM` it "
          "into a table without indexes, each index of the real table built on it, "
          "`ANALYZE`): what a bulk load cannot avoid asking of the server, without reading, "
          "parsing, hashing or sending a row, removing duplicates or counting.")
        w("")
        w("| table | rows | indexes | COPY s | indexes s | ANALYZE s | total s |")
        w("|---|--:|--:|--:|--:|--:|--:|")
        for t, f in lf["tables"].items():
            w("| %s | %s | %d | %.2f | %.2f | %.2f | %.2f |"
              % (t, fmt_int(f["rows"]), f["indexes"], f["copy_s"], f["index_s"],
                 f["analyze_s"], f["seconds"]))
        w("")
        bulk = pg.get("import_bulk") or {}
        w("| kind | PostgreSQL alone, per second | `import --bulk`, per second | target |")
        w("|---|--:|--:|--:|")
        for kind, goal in (("records", T_PG_BULK_RECORDS), ("cards", T_PG_BULK_CARDS)):
            rate = load_floor_rate(pg, kind)
            w("| %s | **%s** | %s | %s |" % (kind, fmt_int(rate) if rate else "n/a",
                                             fmt_int(bulk[kind]["per_s"]) if kind in bulk
                                             else "n/a", fmt_int(goal)))
        w("")
    return L


def section_ab(r):
    m, p, man = r["machine"], r["params"], r["corpus"]["manifest"]
    titles = {sc[0]: sc[1] for sc in SCENARIOS}
    L = []
    w = L.append
    w("## A/B: %s vs %s, %s" % (r["candidate_label"], r["baseline_label"], r["started"]))
    w("")
    w("Command: `%s` (%s s in all, build and install excluded)."
      % (p["command"], fmt_int(r["total_seconds"])))
    w("")
    base_bin = r["binaries_baseline"]["breachd"]
    cand_bin = r["binaries"]["breachd"]
    same = base_bin.split(",")[0] == cand_bin.split(",")[0]
    w("Machine: %d cores (%s), %.1f GiB memory, %s, kernel %s; load average %s at the start, "
      "%s at the end; %s; SQLite %s, libmicrohttpd %s; %s. Baseline `%s/breachd`: %s. "
      "Candidate `%s/breachd` (built from this tree, commit %s): %s%s."
      % (m["nproc"], m["cpu_model"], m["mem_gib"], m["os"], m["kernel"],
         " ".join(m["loadavg_start"]), " ".join(m.get("loadavg_end", ["?"])), m["cc"],
         m["sqlite"], m["libmicrohttpd"], m["wrk"], p["baseline_build"], base_bin,
         p["build"], m["commit"], cand_bin,
         " (the same binary as the baseline: the ratios below are the run's noise)"
         if same else ""))
    w("")
    imp = r["import"]
    w("Store: `bench/gen_corpus.py --seed %d` (%s breaches, %s breach records, %s cards), "
      "imported once by the candidate's `breachctl import`%s (records %.1f s, cards %.1f s), "
      "%.0f MiB. Both servers open that one store read-only, started up front on their own "
      "loopback ports; the one not under load is idle."
      % (man["seed"], fmt_int(man["breaches"]), fmt_int(man["records"]), fmt_int(man["cards"]),
         " --bulk" if r.get("import_mode") == "bulk" else "", imp["records"]["seconds"],
         imp["cards"]["seconds"], r["store_bytes"] / 1048576))
    w("")
    w("Load: wrk `-t%d -c%d -d%ds --latency`, keep-alive, each run after a %d s warm-up run "
      "that is discarded; breachd `--threads %d`. Scenario by scenario the runs alternate "
      "baseline, candidate, %d round(s); the table shows each side's median req/s and median "
      "p99. Target (issue 14): the candidate's req/s at least %.0f%% of the baseline's in each "
      "scenario, with no failed requests. *Spread* is (max - min) ÷ median of a side's "
      "req/s: a ratio closer to 1 than the spread is within this run's noise."
      % (p["wrk_threads"], p["connections"], p["duration"], p["warmup"], p["threads"],
         p["ratio_runs"], 100 * T_AB_RATIO))
    w("")
    w("| scenario | baseline req/s | candidate req/s | candidate ÷ baseline | baseline p99 ms "
      "| candidate p99 ms | p99 candidate ÷ baseline | spread baseline / candidate "
      "| within %.0f%% |" % (100 - 100 * T_AB_RATIO))
    w("|---|--:|--:|--:|--:|--:|--:|--:|---|")
    for sid, x in r["ab"].items():
        b, c = x["baseline"], x["candidate"]
        errs = b["errors"] + c["errors"]
        w("| %s. %s | %s | %s | **%.3f** | %.2f | %.2f | %.3f | %.1f%% / %.1f%% | %s |"
          % (sid[1:], titles[sid], fmt_int(b["rps"]), fmt_int(c["rps"]), x["rps_ratio"],
             b["p99_ms"], c["p99_ms"], x["p99_ratio"], 100 * b["spread"], 100 * c["spread"],
             ("met" if x["met"] else "**missed**")
             + (" (%d failed requests)" % errs if errs else "")))
    noisy = ["%s (%.0f%%)" % (sid, 100 * max(x["baseline"]["spread"], x["candidate"]["spread"]))
             for sid, x in r["ab"].items()
             if max(x["baseline"]["spread"], x["candidate"]["spread"]) > 1 - T_AB_RATIO]
    if noisy:
        w("")
        w("The runs of %s spread wider than the %.0f%% being judged, so %s verdict is within "
          "this run's noise: see the *other processes* column below, and repeat on a quiet "
          "machine or with more `--ratio-runs`."
          % (", ".join(noisy), 100 - 100 * T_AB_RATIO, "that" if len(noisy) == 1 else "their"))
    w("")
    w("Every run, in the order they ran (candidate ÷ baseline per round: %s):"
      % "; ".join("%s %s" % (sid, ", ".join("%.3f" % q for q in x["round_ratios"]))
                  for sid, x in r["ab"].items()))
    w("")
    w("| run | req/s | p50 ms | p99 ms | max ms | errors | RSS anon + file | server cores "
      "| wrk cores | softirq cores | other processes, cores | steal |")
    w("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
    for sid, x in r["ab"].items():
        for k in range(len(x["baseline"]["runs"])):
            for side in ("baseline", "candidate"):
                s = x[side]["runs"][k]
                w("| %s %s %d | %s | %.2f | %.2f | %.1f | %s | %.1f + %.1f MiB | %s | %.2f | "
                  "%.2f | %s | %.2f |"
                  % (sid, side, k + 1, fmt_int(s["rps"]), s["p50_ms"], s["p99_ms"],
                     s["max_ms"], error_count(s), s["rss_anon_mib"], s["rss_file_mib"],
                     "n/a" if s["server_cores"] is None else "%.2f" % s["server_cores"],
                     s["wrk_cores"], s["irq_cores"],
                     "n/a" if s["other_cores"] is None else "%.2f%s" % (
                         s["other_cores"], " (%s)" % s["other_top"] if s["other_top"] else ""),
                     s["steal_cores"]))
    w("")
    return "\n".join(L)


def write_report(r, path):
    label = r["label"]
    text = ""
    if os.path.exists(path):
        with open(path) as f:
            text = f.read()
    if not text.startswith("# breachd benchmark results"):
        text = HEADER + text
    body = section_ab(r) if r.get("mode") == "ab" else section(r)
    block = (BEGIN % label + "\n" + body + "\n" + FIGURES % (label, json.dumps(figures(r)))
             + "\n" + END % label)
    b, e = BEGIN % label, END % label
    if b in text and e in text:
        text = text[:text.index(b)] + block + text[text.index(e) + len(e):]
    else:
        # full before quick, both before the hand-written notes
        notes = text.find("\n## Notes")
        other = BEGIN % ("quick" if label == "full" else "full")
        if label == "full" and other in text:
            at = text.index(other)
        elif notes >= 0:
            at = notes + 1
        else:
            at = len(text)
        text = text[:at].rstrip("\n") + "\n\n" + block + "\n\n" + text[at:].lstrip("\n")
    with open(path, "w") as f:
        f.write(text.rstrip("\n") + "\n")


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
        a.label = "ab" if a.baseline_build else "quick"
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
    need = (a.records + a.cards) * 1800 // 1048576 + 200  # MiB: corpus, two stores, roughly
    if not a.no_pg:
        need += (a.records + a.cards) * 2500 // 1048576 + 100  # a PostgreSQL store at a time
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
