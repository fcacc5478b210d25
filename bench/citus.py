#!/usr/bin/env python3
"""breachd on Citus beside breachd on single-node PostgreSQL (issue 37), in one run.

The same bench/gen_corpus.py corpus is imported by the build's breachctl into a database
of a single PostgreSQL server (scripts/pg-cluster.sh) and into a Citus coordinator with two
workers (scripts/citus-cluster.sh; `breachctl init` on the coordinator distributes the
tables), both clusters with bench/run.py's settings. A breachd on each serves scenarios 1-5
of bench/run.py (its wrk scripts, 64 connections), each --rounds times per store, the two
stores alternating and which goes first alternating too, so the machine's noise hits both;
then scenario 1 over one connection the same way. Medians of req/s, p50 and p99.

Then, from the coordinator: rows and bytes of each shard of the distributed tables
(citus_shards, run_command_on_shards), and how many shards each scenario's statements
touch (the Task Count of each statement's plan, logged by auto_explain for one request of
each scenario from a breachd of its own). Writes the 'citus' section of bench/RESULTS.md.

    bench/citus.py --records 200000 --cards 200000 --duration 10 --warmup 2 --rounds 3

Reuses bench/run.py's corpus, import, breachd and wrk helpers. Needs wrk, PostgreSQL 15 and
the Citus build of scripts/citus-cluster.sh (made once, cached)."""
import argparse
import json
import os
import re
import resource
import shlex
import shutil
import statistics
import sys
import time

import report
import results_md
import run
from procs import log, machine_info, pg_uri_db, proc_cpu_seconds, psql, sh
from report import SCENARIOS, fmt_int
from run import PG_SETTINGS, Bench

CITUS_CLUSTER = os.path.join(run.ROOT, "scripts", "citus-cluster.sh")
NODES = ("coord", "w1", "w2")
STORES = (("pg", "single-node PostgreSQL"), ("citus", "Citus, coordinator + 2 workers"))
RUN = [sc for sc in SCENARIOS if sc[0] in ("s1", "s2", "s3", "s4", "s5")]
DISTRIBUTED = ("records", "record_domains", "cards", "card_bins", "card_words",
               "card_owner_words")
T_P99_FACTOR = 2.0  # scenario 1's p99 on Citus at most this times single-node's
# Not judged on a busy machine: a load average above twice the cores before the run, or
# other processes taking more than half a core during scenario 1's runs (median).
BUSY_LOAD, BUSY_OTHER_CORES = 2.0, 0.5
# auto_explain for the probe's breachd only (its sessions' options): every statement's plan
# in JSON, where a Citus scan carries its Task Count.
EXPLAINED = ("-c session_preload_libraries=auto_explain -c auto_explain.log_min_duration=0 "
             "-c auto_explain.log_format=json")


def node_uri(d, node, db="postgres"):
    return "postgresql:///%s?host=%s&user=breachd" % (db, os.path.join(d, node))


def postmaster(d):
    with open(os.path.join(d, "data", "postmaster.pid")) as f:
        return int(f.readline())


def task_counts(plan):
    """Every Citus job's Task Count in a JSON plan (subplans included)."""
    out = []
    if isinstance(plan, dict):
        if "Task Count" in plan:
            out.append(int(plan["Task Count"]))
        for v in plan.values():
            out += task_counts(v)
    elif isinstance(plan, list):
        for v in plan:
            out += task_counts(v)
    return out


def logged_plans(text):
    """(ms, JSON plan) of each statement auto_explain wrote into a server log ('duration: X
    ms  plan:' then the JSON)."""
    dec, out = json.JSONDecoder(), []
    for m in re.finditer(r"duration: ([0-9.]+) ms\s+plan:\s*\n", text):
        at = text.find("{", m.end())
        try:
            out.append((float(m.group(1)), dec.raw_decode(text, at)[0]))
        except ValueError:
            continue
    return out


class CitusBench(Bench):
    citus_dir = None
    worker_pids = ()

    # ---- the Citus cluster -------------------------------------------------------------
    def citus_start(self):
        """A coordinator and two workers in the work directory, each with the settings
        run.py gives its single server (ALTER SYSTEM, then every node restarted); returns
        the URI of database 'breachd' on the coordinator (the script created it on every
        node with the extension, the workers in its metadata)."""
        d = os.path.join(self.work, "citus")
        os.chmod(self.work, 0o711)
        self.citus_dir = d
        out, err, rc = sh([CITUS_CLUSTER, "start", d])
        if rc != 0 or not out.strip():
            raise SystemExit("scripts/citus-cluster.sh start failed:\n" + err + out)
        uri = out.strip().splitlines()[-1]
        for node in NODES:
            for k, v in PG_SETTINGS + (self.a.citus_setting if node == "coord" else []):
                psql(node_uri(d, node), "ALTER SYSTEM SET %s = '%s'" % (k, v))
        for node in NODES:
            sh([CITUS_CLUSTER, "pause", d, node])
        for node in NODES[1:] + NODES[:1]:  # the workers first
            out, err, rc = sh([CITUS_CLUSTER, "resume", d, node])
            if rc != 0:
                raise SystemExit("scripts/citus-cluster.sh resume %s failed:\n%s%s"
                                 % (node, err, out))
        c = self.r["citus"]
        c["version"] = psql(uri, "SELECT split_part(citus_version(), ' ', 2)")
        c["shard_count"] = psql(uri, "SHOW citus.shard_count")
        c["settings"] = {k: psql(uri, "SHOW %s" % k) for k, _ in PG_SETTINGS}
        c["coordinator_settings"] = {k: psql(uri, "SHOW %s" % k)
                                     for k, _ in self.a.citus_setting}
        c["workers"] = psql(uri, "SELECT count(*) FROM pg_dist_node WHERE noderole = "
                                 "'primary' AND shouldhaveshards AND groupid > 0")
        return uri

    def citus_stop(self):
        if not self.citus_dir:
            return
        src = os.path.join(self.citus_dir, "coord", "server.log")
        if os.path.exists(src):
            shutil.copy(src, os.path.join(self.logs, "citus-coord-server.log"))
        sh([CITUS_CLUSTER, "stop", self.citus_dir])
        self.citus_dir = None

    def cleanup(self):
        for p in list(self.children):
            self.stop(p)
        self.citus_stop()
        super().cleanup()

    # ---- measuring ---------------------------------------------------------------------
    def use(self, store):
        """What wrk's figures attribute to the database server, and the key, of a store."""
        s = self.stores[store]
        self.key, self.db_pid, self.worker_pids = s["key"], s["db_pid"], s["worker_pids"]

    def wrk(self, script, port, seconds, name, args=(), server_pid=None, connections=None):
        """bench/run.py's, with the Citus workers' CPU counted as the database's."""
        pids = self.worker_pids if server_pid else ()
        w0 = sum(proc_cpu_seconds(p) for p in pids)
        res = super().wrk(script, port, seconds, name, args, server_pid, connections)
        if pids:
            cores = (sum(proc_cpu_seconds(p) for p in pids) - w0) / res["seconds"]
            res["workers_cores"] = round(cores, 2)
            res["db_cores"] = round(res["db_cores"] + cores, 2)
            res["other_cores"] = round(max(0.0, res["other_cores"] - cores), 2)
        return res

    def alternate(self, sid, script, args, seconds, connections=None, tag=""):
        """--rounds runs on each store, alternating (and which goes first alternating);
        {store: {medians, runs}}."""
        runs = {st: [] for st, _ in STORES}
        for k in range(self.a.rounds):
            order = STORES if k % 2 == 0 else STORES[::-1]
            for st, _ in order:
                self.use(st)
                s = self.stores[st]
                runs[st].append(self.scenario(sid, script, args, s["port"], s["proc"].pid,
                                              seconds, name="%s-%s%s-%d" % (st, sid, tag, k + 1),
                                              connections=connections))
        med = lambda rs, k: statistics.median(x[k] for x in rs)
        return {st: {"rps": med(rs, "rps"), "p50_ms": med(rs, "p50_ms"),
                     "p99_ms": med(rs, "p99_ms"),
                     "bad": sum(x["non_2xx"] + sum(x["errors"].values()) for x in rs),
                     "runs": rs} for st, rs in runs.items()}

    # ---- what Citus did ----------------------------------------------------------------
    def fanout(self, db, secret):
        """One request of each scenario to a breachd of its own whose sessions log every
        plan (auto_explain); each statement naming a distributed table, with its Task
        Counts (the shards it ran on)."""
        logf = os.path.join(self.citus_dir, "coord", "server.log")
        os.environ["PGOPTIONS"] = EXPLAINED
        try:
            p, port = self.start_breachd("citus-explain", db=db, secret=secret)
        finally:
            del os.environ["PGOPTIONS"]
        self.use("citus")
        time.sleep(1.5)  # its startup statements logged before the first request
        out = {}
        for sid, path in self.request_paths().items():
            at = os.path.getsize(logf)
            st, _ = self.get(port, path)
            time.sleep(0.5)
            with open(logf, errors="replace") as f:
                f.seek(at)
                text = f.read()
            stmts = []
            for ms, j in logged_plans(text):
                q = j.get("Query Text", "")
                tables = [t for t in DISTRIBUTED if re.search(r"\b%s\b" % t, q)]
                if tables:
                    stmts.append({"tables": tables, "tasks": task_counts(j.get("Plan")),
                                  "ms": ms, "query": " ".join(q.split())[:400]})
            out[sid] = {"status": st, "statements": stmts}
            log("  %s: %s" % (sid, "; ".join("%s %s" % ("+".join(x["tables"]), x["tasks"])
                                             for x in stmts) or "no distributed statement"))
        self.stop(p)
        return out

    def shards(self, uri, single):
        """Rows and bytes per shard of each distributed table on the Citus store, beside the
        same table's rows and bytes on the single server."""
        out = {}
        for t in DISTRIBUTED:
            sizes = [int(x) for x in psql(uri, "SELECT shard_size FROM citus_shards WHERE "
                                               "table_name = '%s'::regclass" % t).split()]
            rows = [int(x) for x in psql(uri, "SELECT result FROM run_command_on_shards("
                                              "'%s', 'SELECT count(*) FROM %%s')" % t).split()]
            one = psql(single, "SELECT count(*), pg_total_relation_size('%s') FROM %s"
                       % (t, t)).split("|")
            out[t] = {"sizes": sorted(sizes), "rows": sorted(rows), "single_rows": int(one[0]),
                      "single_bytes": int(one[1])}
        out["_nodes"] = dict(x.split("|") for x in psql(
            uri, "SELECT nodename, sum(shard_size) FROM citus_shards WHERE citus_table_type "
                 "= 'distributed' GROUP BY 1 ORDER BY 1").splitlines())
        out["_reference"] = dict(x.split("|") for x in psql(
            uri, "SELECT table_name::text, max(shard_size) FROM citus_shards WHERE "
                 "citus_table_type = 'reference' GROUP BY 1 ORDER BY 1").splitlines())
        return out

    def citus_errors(self):
        """The coordinator's ERROR lines so far, each kind once with how often it came and
        the statement it names."""
        logf = os.path.join(self.citus_dir, "coord", "server.log")
        out = {}
        with open(logf, errors="replace") as f:
            lines = f.read().splitlines()
        for i, line in enumerate(lines):
            m = re.search(r"ERROR:\s+(.*)", line)
            if m:
                e = out.setdefault(m.group(1), {"error": m.group(1), "times": 0, "statement": ""})
                e["times"] += 1
                e["statement"] = e["statement"] or next(
                    (re.sub(r".*STATEMENT:\s+", "", x)[:600] for x in lines[i + 1:i + 4]
                     if "STATEMENT:" in x), "")
        return list(out.values())[:8]

    # ---- the run -----------------------------------------------------------------------
    def run(self):
        a = self.a
        self.r["machine"] = machine_info()
        self.r["pg"], self.r["citus"] = {}, {}
        t0 = time.monotonic()
        self.generate()
        flags = ["--bulk"] if a.bulk else []
        self.stores = {}
        log("single-node PostgreSQL in %s" % os.path.join(self.work, "pg"))
        root = self.pg_start()
        psql(root, "CREATE DATABASE bench")
        log("Citus: a coordinator and two workers in %s" % os.path.join(self.work, "citus"))
        citus_uri = self.citus_start()
        for st, db in (("pg", pg_uri_db(root, "bench")), ("citus", citus_uri)):
            secret = os.path.join(self.work, "%s.secret" % st)
            log("%s: import%s" % (st, " " + " ".join(flags) if flags else ""))
            self.r[st]["import"] = self.import_into(db, flags, "-" + st, secret=secret)
            self.stores[st] = {"db": db, "secret": secret,
                               "key": self.create_key(db, secret, "-" + st)}
        pids = {n: postmaster(os.path.join(self.work, "citus", n)) for n in NODES}
        self.stores["pg"].update(db_pid=self.db_pid, worker_pids=())
        self.stores["citus"].update(db_pid=pids["coord"], worker_pids=(pids["w1"], pids["w2"]))
        self.r["citus"]["layout"] = psql(citus_uri, "SELECT string_agg(logicalrelid::text, ' ' "
                                                    "ORDER BY logicalrelid::text) FROM "
                                                    "pg_dist_partition "
                                                    "WHERE partmethod = 'h'")
        if not all(t in self.r["citus"]["layout"].split() for t in DISTRIBUTED):
            raise SystemExit("breachctl init left the Citus store undistributed: %s"
                             % self.r["citus"]["layout"])
        for st, _ in STORES:
            s = self.stores[st]
            self.use(st)
            s["proc"], s["port"] = self.start_breachd(st, db=s["db"], secret=s["secret"])
            try:
                self.smoke(s["port"], record="smoke_" + st)
            except SystemExit as e:  # measured anyway: the runs count the error replies
                self.r["smoke_error_" + st] = str(e)
                log("%s: %s" % (st, e))
        self.r["machine"]["loadavg_runs"] = open("/proc/loadavg").read().split()[:3]
        log("scenarios 1-5: %d round(s) on each store, alternating, %d s after a %d s warm-up"
            % (a.rounds, a.duration, a.warmup))
        self.r["scenarios"] = {sid: self.alternate(sid, script, args, a.duration)
                               for sid, _, script, args in RUN}
        log("scenario 1, one connection")
        self.r["scenarios"]["s1_c1"] = self.alternate("s1", "s1_email.lua", [],
                                                      max(3, a.duration // 2), 1, "-c1")
        for st, _ in STORES:
            self.r[st]["breachd_exit"] = self.stop(self.stores[st]["proc"])
            with open(os.path.join(self.logs, "breachd-%s.stderr" % st), errors="replace") as f:
                # the lookup dispatcher batches email searches on one server, not when routed
                self.r[st]["dispatcher"] = "searches are routed on this store" not in f.read()
        self.r["citus"]["errors"] = self.citus_errors()
        log("the shards each scenario's statements ran on (auto_explain)")
        c = self.stores["citus"]
        self.r["citus"]["fanout"] = self.fanout(c["db"], c["secret"])
        self.r["citus"]["shards"] = self.shards(citus_uri, self.stores["pg"]["db"])
        self.r["machine"]["loadavg_end"] = open("/proc/loadavg").read().split()[:3]
        self.r["seconds"] = round(time.monotonic() - t0, 1)
        with open(os.path.join(self.work, "results.json"), "w") as f:
            json.dump(self.r, f, indent=1)
        results_md.replace_section(a.results, "citus", section(self.r) + "\n")
        log("wrote the citus section of %s (%.0f s)" % (a.results, self.r["seconds"]))


# ---- the report ----------------------------------------------------------------------------
def verdict(r):
    """(met | missed | not judged, why)."""
    s1 = r["scenarios"]["s1"]
    m = r["machine"]
    load = float(m["loadavg_start"][0])
    other = statistics.median(x["other_cores"] for st, _ in STORES for x in s1[st]["runs"])
    ratio = s1["citus"]["p99_ms"] / s1["pg"]["p99_ms"]
    if s1["citus"]["bad"]:
        return "missed", ratio, "%d error replies on Citus" % s1["citus"]["bad"]
    if load > BUSY_LOAD * m["nproc"] or other > BUSY_OTHER_CORES:
        # whether noise could account for the ratio: the best round against the worst
        spread = (min(x["p99_ms"] for x in s1["citus"]["runs"])
                  / max(x["p99_ms"] for x in s1["pg"]["runs"]))
        return ("not judged", ratio, "the machine was busy: load average %.2f before the run, "
                "other processes %.2f cores during scenario 1 (median); the best Citus round's "
                "p99 is %.2f x the worst single-node round's" % (load, other, spread))
    return ("met" if ratio <= T_P99_FACTOR else "missed"), ratio, (
        "load average %.2f before the run, other processes %.2f cores during scenario 1"
        % (load, other))


def mib(n):
    return "%.1f" % (n / 1048576)


def section(r):
    a, m, c = r["params"], r["machine"], r["citus"]
    sc = r["scenarios"]
    v, ratio, why = verdict(r)
    L = []
    w = L.append
    w(report.BEGIN % "citus")
    w("## Citus beside single-node PostgreSQL (issue 37), %s" % r["started"])
    w("")
    w("**Target %s**: scenario 1's p99 on Citus at most %g x single-node PostgreSQL's, "
      "same run: %.2f vs %.2f ms, %.2f x (%s)."
      % (v, T_P99_FACTOR, sc["s1"]["citus"]["p99_ms"],
         sc["s1"]["pg"]["p99_ms"], ratio, why))
    w("")
    w("Command: `%s` (%.0f s in all). Machine: %d cores (%s), %s GiB, %s; load average %s "
      "at the start, %s before the measured runs, %s at the end. breachd at commit %s (%s)."
      % (a["command"], r["seconds"], m["nproc"], m["cpu_model"], m["mem_gib"], m["os"],
         " ".join(m["loadavg_start"]), " ".join(m["loadavg_runs"]),
         " ".join(m["loadavg_end"]), m["commit"], "; ".join(r["binaries"].values())))
    w("")
    w("PostgreSQL %s. Single node: `scripts/pg-cluster.sh start`. Citus %s: "
      "`scripts/citus-cluster.sh start`, a coordinator and %s workers, %s shards per "
      "distributed table, laid out by `breachctl init` on the coordinator (distributed: %s). "
      "All four servers on this machine's cores with both breachd and wrk; each with the "
      "scripts' `fsync=off` and run.py's settings (%s)%s. Corpus `bench/gen_corpus.py --seed "
      "%d`: %s records, %s cards, imported into each with `breachctl import%s`. breachd "
      "`--threads %d` on each store; wrk `-t%d -c%d -d%ds` after a %d s warm-up; %d rounds "
      "per store, alternating (the first store alternating too); medians of the rounds.%s"
      % (r["pg"].get("version", "?"), c["version"], c["workers"], c["shard_count"],
         c["layout"], ", ".join("%s=%s" % kv for kv in c["settings"].items()),
         "; the coordinator also %s" % ", ".join("`%s=%s`" % kv for kv in
                                                 c["coordinator_settings"].items())
         if c.get("coordinator_settings") else "", a["seed"],
         fmt_int(a["records"]), fmt_int(a["cards"]), " --bulk" if a["bulk"] else "",
         a["threads"], a["wrk_threads"], a["connections"], a["duration"], a["warmup"],
         a["rounds"],
         " On the single node breachd's lookup dispatcher sends the email searches waiting at "
         "one moment as one statement; on the coordinator it runs each on its request's "
         "thread (its log: searches are routed on this store)."
         if r["pg"].get("dispatcher") and not c.get("dispatcher", True) else ""))
    w("")
    w("| import | lines | single node s | single node /s | Citus s | Citus /s |")
    w("|---|--:|--:|--:|--:|--:|")
    for kind in ("records", "cards"):
        p, q = r["pg"]["import"][kind], c["import"][kind]
        w("| %s | %s | %.1f | %s | %.1f | %s |" % (kind, fmt_int(p["read"]), p["seconds"],
                                                   fmt_int(p["per_s"]), q["seconds"],
                                                   fmt_int(q["per_s"])))
    w("")
    w("| scenario | single node req/s | Citus req/s | Citus ÷ single | single p50 ms | "
      "Citus p50 ms | single p99 ms | Citus p99 ms | p99 Citus ÷ single | database CPU "
      "µs per request (single / Citus) | errors: non-2xx + timeouts (single / Citus) |")
    w("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
    cpu = lambda x: "%.0f" % statistics.median(1e6 * y["db_cores"] / max(y["rps"], 0.1)
                                                for y in x["runs"])
    titles = {sid: t for sid, t, _, _ in RUN}
    titles["s1_c1"] = "breach-search by email, one connection"
    label = lambda sid: "1 (c1)" if sid == "s1_c1" else sid[1:]
    for sid in [x[0] for x in RUN] + ["s1_c1"]:
        p, q = sc[sid]["pg"], sc[sid]["citus"]
        w("| %s. %s | %s | %s | %.3f | %.2f | %.2f | %.2f | %.2f | %.2f | %s / %s | %d / %s |"
          % (label(sid), titles[sid], fmt_int(p["rps"]), fmt_int(q["rps"]),
             q["rps"] / p["rps"], p["p50_ms"], q["p50_ms"], p["p99_ms"], q["p99_ms"],
             q["p99_ms"] / p["p99_ms"], cpu(p), cpu(q), p["bad"],
             "**%d**" % q["bad"] if q["bad"] else "0"))
    w("")
    w("Each round (req/s, p99 ms; *db cores*: the PostgreSQL servers' CPU seconds per second, "
      "on Citus the coordinator's and both workers'; *other*: every other process on the "
      "machine):")
    w("")
    w("| scenario | store | rounds: req/s / p99 ms | breachd cores | db cores | wrk cores | "
      "other cores |")
    w("|---|---|---|---|---|---|---|")
    for sid in sc:
        for st, _ in STORES:
            rs = sc[sid][st]["runs"]
            w("| %s | %s | %s | %s | %s | %s | %s |" % (
                sid, st, ", ".join("%s / %.2f" % (fmt_int(x["rps"]), x["p99_ms"]) for x in rs),
                " ".join("%.2f" % x["server_cores"] for x in rs),
                " ".join("%.2f" % x["db_cores"] for x in rs),
                " ".join("%.2f" % x["wrk_cores"] for x in rs),
                " ".join("%.2f" % x["other_cores"] for x in rs)))
    w("")
    for st, _ in STORES:
        if r.get("smoke_error_" + st):
            w("Smoke test on %s failed: `%s`" % (st, r["smoke_error_" + st].splitlines()[0]))
            w("")
    same = all(r.get("smoke_pg", {}).get(sid, {}).get("found") == x.get("found")
               for sid, x in r.get("smoke_citus", {}).items())
    w("The smoke test's replies (one request of each scenario) found the same counts on both "
      "stores: %s." % ("yes" if same and r.get("smoke_citus") else "**no**"))
    w("")
    if c.get("errors"):
        w("The coordinator's errors during the run (its server.log; a background "
          "statement's error is no reply's):")
        w("")
        for e in c["errors"]:
            w("- %d x `%s`%s" % (e["times"], e["error"], ", statement `%s`" % e["statement"]
                                  if e["statement"] else ""))
        w("")
    sh_ = c["shards"]
    w("### Per shard (Citus, %s records + %s cards)" % (fmt_int(a["records"]),
                                                         fmt_int(a["cards"])))
    w("")
    w("Each shard's rows (`run_command_on_shards`) and bytes with its indexes and TOAST "
      "(`citus_shards.shard_size`), as the import left them (not vacuumed), beside the same "
      "table on the single node (`pg_total_relation_size`):")
    w("")
    w("| table | shards | rows | rows per shard: min / median / max | MiB per shard: min / "
      "median / max | bytes per row, Citus | bytes per row, single node |")
    w("|---|--:|--:|---|---|--:|--:|")
    for t in DISTRIBUTED:
        x = sh_[t]
        rows, sizes = x["rows"], x["sizes"]
        n = sum(rows)
        w("| `%s` | %d | %s | %s / %s / %s | %s / %s / %s | %s | %s |"
          % (t, len(sizes), fmt_int(n), fmt_int(rows[0]), fmt_int(rows[len(rows) // 2]),
             fmt_int(rows[-1]), mib(sizes[0]), mib(sizes[len(sizes) // 2]), mib(sizes[-1]),
             fmt_int(sum(sizes) / max(1, n)),
             fmt_int(x["single_bytes"] / max(1, x["single_rows"]))))
    w("")
    w("Distributed shards per worker: %s. Reference tables (a copy on every node): %s."
      % (", ".join("%s %s MiB" % (os.path.basename(k), mib(int(v)))
                   for k, v in sh_["_nodes"].items()),
         ", ".join("`%s` %s MiB" % (k, mib(int(v))) for k, v in sh_["_reference"].items())))
    w("")
    w("### Shards each request touches")
    w("")
    w("One request of each scenario through a breachd whose sessions log every plan "
      "(auto_explain); each statement naming a distributed table, with the Task Count of "
      "each Citus job in its plan (a task runs on one shard; %s shards per table):"
      % c["shard_count"])
    w("")
    w("| scenario | status | statement reads | tasks | ms (logged) |")
    w("|---|--:|---|--:|--:|")
    for sid, x in c["fanout"].items():
        if not x["statements"]:
            w("| %s | %d | no distributed table | - | - |" % (sid, x["status"]))
        for s in x["statements"]:
            w("| %s | %d | %s | %s | %.2f |" % (
                sid, x["status"], ", ".join("`%s`" % t for t in s["tables"]),
                " + ".join(str(n) for n in s["tasks"]) or "?", s["ms"]))
    fig = {"label": "citus", "records": a["records"], "cards": a["cards"], "verdict": v,
           "s1_p99_ratio": round(ratio, 3),
           **{sid: {st: {k: sc[sid][st][k] for k in ("rps", "p50_ms", "p99_ms")}
                    for st, _ in STORES} for sid in sc}}
    w(report.FIGURES % ("citus", json.dumps(fig)))
    w(report.END % "citus")
    return "\n".join(L)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--records", type=int, default=200_000)
    ap.add_argument("--cards", type=int, default=200_000)
    ap.add_argument("--breaches", type=int, default=200)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--duration", type=int, default=10, help="seconds per measured run")
    ap.add_argument("--warmup", type=int, default=2, help="seconds of discarded warm-up")
    ap.add_argument("--rounds", type=int, default=3, help="runs per scenario and store")
    ap.add_argument("--connections", type=int, default=64)
    ap.add_argument("--wrk-threads", type=int, default=2)
    ap.add_argument("--threads", type=int, default=2, help="breachd --threads")
    ap.add_argument("--bulk", action="store_true", help="import with --bulk")
    ap.add_argument("--citus-setting", metavar="NAME=VALUE", action="append", default=[],
                    help="a setting of the coordinator's (ALTER SYSTEM), e.g. "
                         "citus.max_adaptive_executor_pool_size=1; repeatable")
    ap.add_argument("--corpus", metavar="DIR")
    ap.add_argument("--build", default="build")
    ap.add_argument("--results", default=os.path.join(run.BENCH, "RESULTS.md"))
    ap.add_argument("--workdir")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--report-only", metavar="RESULTS_JSON",
                    help="only rewrite the section from a results.json of an earlier run")
    a = ap.parse_args()
    if a.report_only:
        with open(a.report_only) as f:
            results_md.replace_section(a.results, "citus", section(json.load(f)) + "\n")
        return
    a.command = "bench/citus.py " + " ".join(shlex.quote(x) for x in sys.argv[1:])
    a.citus_setting = [tuple(x.split("=", 1)) for x in a.citus_setting]
    if any(len(x) != 2 for x in a.citus_setting):
        raise SystemExit("bench: --citus-setting takes NAME=VALUE")
    # what run.Bench reads and this run does not use
    a.label, a.baseline_build, a.pg_config = "citus", None, "tuned"
    for tool in ("wrk", "psql"):
        if not shutil.which(tool):
            raise SystemExit("bench: %s is not installed" % tool)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = 65536 if hard == resource.RLIM_INFINITY else min(hard, 65536)
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    bench = CitusBench(a)
    try:
        bench.run()
    finally:
        bench.cleanup()


if __name__ == "__main__":
    main()
