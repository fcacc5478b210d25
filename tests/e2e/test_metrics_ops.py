"""The operations metrics (breachd_build_info, the data version and the last import, jobs
ended, the queues), and contrib/prometheus' alert rules: promtool checks them, a real
Prometheus scrapes a running breachd and loads them, and every metric they name is one a
running breachd exports (or a standard one: up)."""
import json
import os
import re
import shutil
import socket
import subprocess
import tempfile
import time
import unittest
import urllib.request

from harness import ROOT, Ctl, Server, binary, fixture

RULES = os.path.join(ROOT, "contrib", "prometheus", "breachd-alerts.yml")
DASHBOARD = os.path.join(ROOT, "contrib", "grafana", "breachd.json")
# exported only with --shared-limits, and once records or cards were imported
CONDITIONAL = {"breachd_shared_limits_up", "breachd_last_import_age_seconds",
               "breachd_last_import_timestamp_seconds"}


def metrics(srv):
    st, _, raw = srv.request("/metrics")
    assert st == 200, st
    return raw.decode()


def value(text, name):
    m = re.search(r"^%s (\S+)$" % re.escape(name), text, re.M)
    return None if m is None else float(m.group(1))


def exported_names(text):
    names = set()
    for n, kind in re.findall(r"^# TYPE (\S+) (\S+)$", text, re.M):
        names.add(n)
        if kind == "histogram":
            names |= {n + "_bucket", n + "_sum", n + "_count"}
    return names


class OperationsMetrics(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.ctl = Ctl().init()
        cls.ctl.import_("breaches", fixture("breaches.jsonl"))
        cls.key = cls.ctl.key("ops", "--plan", "enterprise")
        cls.srv = Server(cls.ctl)

    @classmethod
    def tearDownClass(cls):
        rc = cls.srv.stop()
        cls.ctl.cleanup()
        assert rc == 0, rc

    def test_build_info_is_the_version_and_commit(self):
        out = subprocess.run([binary("breachd"), "--version"], capture_output=True,
                             check=True).stdout.decode()
        version, commit = re.match(r"breachd (\S+) \(commit (\S+)\)", out).groups()
        self.assertEqual(value(metrics(self.srv), 'breachd_build_info{version="%s",commit="%s"}'
                               % (version, commit)), 1)

    def test_data_version_and_last_import(self):
        text = metrics(self.srv)
        st, status = self.srv.get("/v7/status", key=self.key)
        self.assertEqual(st, 200)
        self.assertEqual(value(text, "breachd_data_version"), status["data_version"])
        self.assertIsNone(value(text, "breachd_last_import_age_seconds"))  # breaches only
        before = int(time.time())
        self.ctl.import_("records", self.ctl.write("r.jsonl", json.dumps(
            {"breach_uuid": "11111111-1111-4111-8111-111111111111", "email": "a@b.example"})))
        text = metrics(self.srv)
        self.assertGreater(value(text, "breachd_data_version"), status["data_version"])
        at = value(text, "breachd_last_import_timestamp_seconds")
        self.assertTrue(before - 1 <= at <= time.time() + 1, at)
        self.assertTrue(0 <= value(text, "breachd_last_import_age_seconds") <= 60)

    def test_jobs_done_counted(self):
        done = value(metrics(self.srv), 'breachd_jobs_finished_total{outcome="done"}')
        self.assertEqual(value(metrics(self.srv), 'breachd_jobs_finished_total{outcome="failed"}'),
                         0)
        st, _, raw = self.srv.request("/v7/jobs", key=self.key, method="POST", body=json.dumps(
            {"type": "email", "accounts": ["x@y.example"]}), headers={
                "Content-Type": "application/json"})
        self.assertEqual(st, 202, raw)
        job = json.loads(raw)["id"]
        deadline = time.time() + 30
        while time.time() < deadline:
            st, body = self.srv.get("/v7/jobs/" + job, key=self.key)
            if body["status"] == "done":
                break
            time.sleep(0.05)
        self.assertEqual(value(metrics(self.srv), 'breachd_jobs_finished_total{outcome="done"}'),
                         done + 1)
        text = metrics(self.srv)
        self.assertEqual(value(text, "breachd_jobs_waiting"), 0)  # in the store: none left
        self.assertEqual(value(text, "breachd_alerts_pending"), 0)

    @unittest.skipUnless(shutil.which("promtool"), "promtool (Debian: prometheus) not installed")
    def test_alert_rules_check_and_name_exported_metrics(self):
        p = subprocess.run(["promtool", "check", "rules", RULES], capture_output=True,
                           timeout=60)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn(b"SUCCESS: 11 rules found", p.stdout)
        exported = exported_names(metrics(self.srv)) | CONDITIONAL
        with open(RULES) as f:
            rules = f.read()
        named = set(re.findall(r"\b(breachd_[a-z_]+)", rules))
        self.assertTrue(named)
        self.assertEqual(named - exported, set())

    @unittest.skipUnless(shutil.which("prometheus"), "prometheus (Debian: prometheus) not installed")
    def test_a_real_prometheus_scrapes_breachd_and_loads_the_rules(self):
        d = tempfile.mkdtemp(prefix="breachd-prom-")
        try:
            with socket.socket() as sock:
                sock.bind(("127.0.0.1", 0))
                port = sock.getsockname()[1]
            with open(os.path.join(d, "prometheus.yml"), "w") as f:
                f.write("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                        "rule_files: [%s]\n"
                        "scrape_configs:\n  - job_name: breachd\n"
                        "    static_configs: [{targets: ['127.0.0.1:%d']}]\n"
                        % (json.dumps(RULES), self.srv.port))
            log = open(os.path.join(d, "log"), "wb")
            prom = subprocess.Popen(
                ["prometheus", "--config.file", os.path.join(d, "prometheus.yml"),
                 "--storage.tsdb.path", os.path.join(d, "data"),
                 "--web.listen-address", "127.0.0.1:%d" % port], stdout=log, stderr=log)
            try:
                def api(path):
                    with urllib.request.urlopen("http://127.0.0.1:%d/api/v1/%s" % (port, path),
                                                timeout=5) as r:
                        return json.load(r)["data"]
                with open(RULES) as f:
                    named = set(re.findall(r"\b(breachd_[a-z_]+)", f.read()))
                # what a plain server exports: no shared limits, an import made or not;
                # breachd_requests_total from the second scrape on (the first is counted)
                deadline, up, names = time.time() + 60, None, set()
                while time.time() < deadline:
                    try:
                        up = api("query?query=up%7Bjob%3D%22breachd%22%7D")["result"]
                        names = set(api("label/__name__/values"))
                    except OSError:
                        pass
                    if up and up[0]["value"][1] == "1" and not named - names - CONDITIONAL:
                        break
                    time.sleep(0.2)
                self.assertEqual(up and up[0]["value"][1], "1", "breachd not scraped")
                self.assertEqual(named - names - CONDITIONAL, set())
                groups = api("rules")["groups"]
                self.assertEqual(sum(len(g["rules"]) for g in groups), 11)
                self.assertTrue(all(r["health"] != "err" for g in groups for r in g["rules"]))
            finally:
                prom.terminate()
                prom.wait(timeout=30)
                log.close()
        finally:
            shutil.rmtree(d, ignore_errors=True)

    def test_dashboard_is_json_of_exported_metrics(self):
        with open(DASHBOARD) as f:
            board = json.load(f)
        exprs = [t["expr"] for p in board["panels"] for t in p.get("targets", [])]
        self.assertGreaterEqual(len(exprs), 8)
        named = set(re.findall(r"\b(breachd_[a-z_]+)", " ".join(exprs)))
        exported = exported_names(metrics(self.srv)) | CONDITIONAL
        self.assertEqual(named - exported, set())
        self.assertIn("breachd_build_info", named)


if __name__ == "__main__":
    unittest.main()
