#!/usr/bin/env python3
"""breachd cluster benchmark (issue 15): scenario 1 on a PostgreSQL primary with one
streaming-replication hot standby, all on this machine, measured in one run:

  one      wrk -> breachd on the primary
  shared   wrk -> breachd on the primary with --shared-limits (the primary)
  lb-one   wrk -> nginx (load balancer) -> breachd on the primary
  lb-two   wrk -> nginx (load balancer) -> breachd on the primary + breachd on the standby

Rounds alternate the four setups --ratio-runs times; the report gives each one's median
req/s and p99 and the two ratios: shared / one (the cost of --shared-limits; target: at
most 15%) and lb-two / lb-one (what a second instance adds when both share this machine's
two cores with PostgreSQL, nginx and wrk). Writes the 'cluster' section of RESULTS.md.

    bench/cluster.py --records 50000 --cards 1000 --duration 6 --warmup 2 --ratio-runs 3

Reuses bench/run.py's corpus, import, breachd and wrk helpers. Needs wrk, nginx and
PostgreSQL (bench/install-bench-deps.sh, scripts/install-deps.sh)."""
import argparse
import json
import os
import re
import resource
import shlex
import shutil
import sys
import time

import procs
import report
import run
from procs import log, pg_uri_db, psql, sh
from report import fmt_int, fmt_ratio, median_run
from run import Bench

T_SHARED_COST = 0.15  # --shared-limits may cost at most this share of scenario 1's req/s
SETUPS = [
    ("one", "breachd on the primary"),
    ("shared", "breachd on the primary, --shared-limits on the primary"),
    ("lb-one", "nginx -> breachd on the primary"),
    ("lb-two", "nginx -> breachd on the primary + breachd on the standby"),
]

NGINX_LB = """daemon off;
master_process on;
worker_processes 1;
pid @PREFIX@/nginx.pid;
error_log @PREFIX@/error.log warn;
worker_rlimit_nofile 65536;
events { worker_connections 4096; multi_accept on; }
http {
    access_log off;
    client_body_temp_path @PREFIX@/tmp/body;
    proxy_temp_path @PREFIX@/tmp/proxy;
    fastcgi_temp_path @PREFIX@/tmp/fastcgi;
    uwsgi_temp_path @PREFIX@/tmp/uwsgi;
    scgi_temp_path @PREFIX@/tmp/scgi;
    keepalive_requests 100000000;
    keepalive_timeout 75s;
    upstream one { server 127.0.0.1:@P1@; keepalive 64; keepalive_requests 100000000; }
    upstream two { server 127.0.0.1:@P1@; server 127.0.0.1:@P2@; keepalive 64;
                   keepalive_requests 100000000; }
    server {
        listen 127.0.0.1:@LB1@;
        location / { proxy_pass http://one; proxy_http_version 1.1;
                     proxy_set_header Connection ""; }
    }
    server {
        listen 127.0.0.1:@LB2@;
        location / { proxy_pass http://two; proxy_http_version 1.1;
                     proxy_set_header Connection ""; }
    }
}
"""


class Cluster(Bench):
    def start_standby(self):
        d = os.path.join(self.work, "pg-standby")
        self.standby_dir = d
        out, err, rc = sh([run.PG_CLUSTER, "standby", self.pg_dir, d])
        if rc != 0 or not out.strip():
            raise SystemExit("scripts/pg-cluster.sh standby failed:\n" + err + out)
        return out.strip().splitlines()[-1]

    def wait_replayed(self, primary, standby, timeout=600):
        """Until the standby has replayed everything the primary wrote so far."""
        lsn = psql(primary, "SELECT pg_current_wal_lsn()")
        deadline = time.time() + timeout
        while time.time() < deadline:
            if psql(standby, "SELECT pg_last_wal_replay_lsn() >= '%s'::pg_lsn" % lsn) == "t":
                return
            time.sleep(0.5)
        raise SystemExit("the standby did not catch up within %d s" % timeout)

    def start_lb(self, p1, p2):
        prefix = os.path.join(self.work, "nginx-lb")
        os.makedirs(os.path.join(prefix, "tmp"), exist_ok=True)
        os.chmod(self.work, 0o711)
        os.chmod(prefix, 0o755)
        lb1, lb2 = procs.free_port(), procs.free_port()
        conf = (NGINX_LB.replace("@PREFIX@", prefix).replace("@P1@", str(p1))
                .replace("@P2@", str(p2)).replace("@LB1@", str(lb1)).replace("@LB2@", str(lb2)))
        p = procs.run_nginx(prefix, conf, (lb1, lb2))
        self.children.append(p)
        return p, lb1, lb2

    def leases(self, port):
        st, body = self.get(port, "/metrics")
        m = re.search(rb"^breachd_shared_limits_leases_total (\d+)", body, re.M)
        return int(m.group(1)) if st == 200 and m else None

    def run(self):
        a = self.a
        self.r["machine"] = procs.machine_info()
        self.r["mode"] = "cluster"
        self.r["pg"] = pg = {}
        self.standby_dir = None
        t0 = time.monotonic()
        self.generate()
        try:
            log("PostgreSQL: primary in %s" % os.path.join(self.work, "pg"))
            primary_root = self.pg_start()
            psql(primary_root, "CREATE DATABASE bench")
            primary = pg_uri_db(primary_root, "bench")
            secret = os.path.join(self.work, "pg-bench.secret")
            pg["import"] = self.import_into(primary, ["--bulk"], "-pg", secret=secret)
            self.key = self.create_key(primary, secret, "-pg")
            log("PostgreSQL: standby (pg_basebackup -R) in %s"
                % os.path.join(self.work, "pg-standby"))
            standby = pg_uri_db(self.start_standby(), "bench")
            self.wait_replayed(primary_root, standby)
            p_one, port_one = self.start_breachd("primary", db=primary, secret=secret)
            p_sby, port_sby = self.start_breachd("standby", db=standby, secret=secret)
            p_sh, port_sh = self.start_breachd("shared", db=primary, secret=secret,
                                               extra=["--shared-limits", primary])
            for port in (port_one, port_sby, port_sh):
                self.smoke(port, record="smoke-%d" % port)
            same = [self.s1_body(port) for port in (port_one, port_sby)]
            self.r["same_answers"] = same[0] == same[1]
            lb, lb1, lb2 = self.start_lb(port_one, port_sby)
            targets = {"one": (port_one, p_one.pid), "shared": (port_sh, p_sh.pid),
                       "lb-one": (lb1, p_one.pid), "lb-two": (lb2, p_one.pid)}
            leases0 = self.leases(port_sh)
            runs = {sid: [] for sid, _ in SETUPS}
            script = "s1_email.lua"
            for k in range(a.ratio_runs):
                for sid, _ in SETUPS:
                    port, pid = targets[sid]
                    runs[sid].append(self.scenario(sid, script, [], port, pid, a.duration,
                                                   name="%s-%d" % (sid, k + 1)))
            shared_requests = sum(r["requests"] for r in runs["shared"])
            leases1 = self.leases(port_sh)
            self.r["setups"] = {sid: dict(median_run(rs), runs=rs) for sid, rs in runs.items()}
            self.r["leases"] = {"leases": leases1 - leases0, "requests": shared_requests}
            self.r["exits"] = {tag: self.stop(p) for tag, p in
                               (("primary", p_one), ("standby", p_sby), ("shared", p_sh))}
            self.stop(lb)
        finally:
            if self.standby_dir:
                sh([run.PG_CLUSTER, "stop", self.standby_dir])
            self.pg_stop()
        self.r["seconds"] = round(time.monotonic() - t0, 1)
        with open(os.path.join(self.work, "results.json"), "w") as f:
            json.dump(self.r, f, indent=1)
        write_section(self.r, self.a.results)
        log("wrote the cluster section of %s" % self.a.results)

    def s1_body(self, port):
        """A scenario-1 reply, parsed, without its paging token (sealed with a fresh nonce
        each time, so two tokens for the same position differ in their bytes)."""
        from urllib.parse import quote
        e = self.lines("emails.txt")[0]
        body = json.loads(self.get(
            port, "/v7/breach-search?type=email&account=%s&number_of_records=1" % quote(e))[1])
        body.pop("pagination_token", None)
        return body


def verdicts(r):
    s = r["setups"]
    cost = 1 - s["shared"]["rps"] / s["one"]["rps"]
    gain = s["lb-two"]["rps"] / s["lb-one"]["rps"]
    return cost, gain


def section(r):
    m, a = r["machine"], r["params"]
    s = r["setups"]
    cost, gain = verdicts(r)
    L = []
    w = L.append
    w("## Cluster run, %s" % r["started"])
    w("")
    w("Command: `%s` (%.0f s in all)." % (a["command"], r["seconds"]))
    w("")
    w("Machine: %d cores (%s), %s GiB, %s; commit %s. PostgreSQL %s, primary and one hot "
      "standby (`scripts/pg-cluster.sh standby`: pg_basebackup -R, streaming replication) "
      "on this machine, the bench's settings on both; store imported with `--bulk` "
      "(%s records, %s cards). breachd `--threads %d` each; nginx 1 worker as the load "
      "balancer, keep-alive to the upstreams. wrk `-t%d -c%d -d%ds`, scenario 1 (breach "
      "search by email, one record), after a %d s warm-up; the four setups alternate, %d "
      "round(s); medians." % (m["nproc"], m["cpu_model"], m["mem_gib"], m["os"], m["commit"],
                              r["pg"].get("version", "?"), fmt_int(a["records"]),
                              fmt_int(a["cards"]), a["threads"], a["wrk_threads"],
                              a["connections"], a["duration"], a["warmup"], a["ratio_runs"]))
    w("")
    w("| setup | req/s | p50 ms | p99 ms | errors | breachd cores (first) | primary's "
      "PostgreSQL cores | wrk cores | runs, req/s | other processes' cores, by run |")
    w("|---|--:|--:|--:|--:|--:|--:|--:|---|---|")
    for sid, title in SETUPS:
        x = s[sid]
        w("| %s: %s | %s | %.2f | %.2f | %d | %s | %s | %.2f | %s | %s |"
          % (sid, title, fmt_int(x["rps"]), x["p50_ms"], x["p99_ms"],
             sum(x["errors"].values()) + x["non_2xx"], x["server_cores"], x["db_cores"],
             x["wrk_cores"], ", ".join(fmt_int(y["rps"]) for y in x["runs"]),
             ", ".join("%.2f" % y["other_cores"] for y in x["runs"])))
    w("")
    w("*Other processes* is every CPU second of the machine not spent by the first breachd, "
      "the primary's PostgreSQL or wrk: in lb-two that includes the second breachd, the "
      "standby's PostgreSQL and nginx, in lb-one nginx; elsewhere it is the machine's "
      "noise.")
    w("")
    lz = r["leases"]
    w("| target | measured | verdict |")
    w("|---|---|---|")
    w("| `--shared-limits` costs at most %d%% of scenario 1's req/s | %.1f%% (%s vs %s req/s); "
      "%s leases for %s requests | %s |"
      % (T_SHARED_COST * 100, cost * 100, fmt_int(s["shared"]["rps"]), fmt_int(s["one"]["rps"]),
         fmt_int(lz["leases"]), fmt_int(lz["requests"]),
         "met" if cost <= T_SHARED_COST else "**missed**"))
    w("| two instances (primary + standby) against one, behind the same balancer | "
      "%s x (%s vs %s req/s) | recorded (no target: one machine's two cores) |"
      % (fmt_ratio(gain), fmt_int(s["lb-two"]["rps"]), fmt_int(s["lb-one"]["rps"])))
    w("")
    w("The standby's breachd gave the same scenario-1 reply as the primary's (its paging "
      "token aside): %s."
      % ("yes" if r.get("same_answers") else "**no**"))
    return "\n".join(L)


def write_section(r, path):
    label = "cluster"
    text = open(path).read() if os.path.exists(path) else report.HEADER
    cost, gain = verdicts(r)
    fig = {"label": label, "shared_cost": round(cost, 4), "two_vs_one": round(gain, 4),
           **{sid: {"rps": x["rps"], "p99_ms": x["p99_ms"]} for sid, x in r["setups"].items()}}
    block = (report.BEGIN % label + "\n" + section(r) + "\n" + report.FIGURES % (label, json.dumps(fig))
             + "\n" + report.END % label)
    b, e = report.BEGIN % label, report.END % label
    if b in text and e in text:
        text = text[:text.index(b)] + block + text[text.index(e) + len(e):]
    else:
        notes = text.find("\n## Notes")
        at = notes + 1 if notes >= 0 else len(text)
        text = text[:at].rstrip("\n") + "\n\n" + block + "\n\n" + text[at:].lstrip("\n")
    with open(path, "w") as f:
        f.write(text.rstrip("\n") + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--records", type=int, default=50_000)
    ap.add_argument("--cards", type=int, default=1_000)
    ap.add_argument("--breaches", type=int, default=200)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--duration", type=int, default=6)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--ratio-runs", type=int, default=3)
    ap.add_argument("--connections", type=int, default=64)
    ap.add_argument("--wrk-threads", type=int, default=2)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--corpus", metavar="DIR")
    ap.add_argument("--build", default="build")
    ap.add_argument("--results", default=os.path.join(procs.BENCH, "RESULTS.md"))
    ap.add_argument("--workdir")
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()
    a.command = "bench/cluster.py " + " ".join(shlex.quote(x) for x in sys.argv[1:])
    # what run.Bench reads and this run does not use
    a.label, a.baseline_build, a.bulk_only, a.no_bulk, a.no_pg = "cluster", None, True, True, False
    for tool in ("wrk", "nginx", "psql"):
        if not shutil.which(tool):
            raise SystemExit("bench: %s is not installed" % tool)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = 65536 if hard == resource.RLIM_INFINITY else min(hard, 65536)
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    bench = Cluster(a)
    try:
        bench.run()
    finally:
        bench.cleanup()


if __name__ == "__main__":
    main()
