"""Bulk jobs (POST /v7/jobs, GET /v7/jobs/{id}, GET /v7/jobs/{id}/results): results equal to
breach-search's for the same identities, JSON / CSV / text input, CSV results parsed back by
Python's csv module with the formula guard, another key's job a 404, limits and quota, a
restart mid-job (kill -9) that the job survives, a job that keeps dying reported failed, and
expiry after a day."""
import csv
import http.client
import io
import json
import os
import signal
import time
import unittest
import urllib.parse

from harness import STORE, Ctl, Server

B1 = "aaaaaaaa-0000-4000-8000-000000000001"  # 2024-01-10
B2 = "aaaaaaaa-0000-4000-8000-000000000002"  # 2022-06-01
B3 = "aaaaaaaa-0000-4000-8000-000000000003"  # 2022-06-01
BREACHES = [
    {"uuid": B1, "source_name": "Orbit", "date_leaked": "2024-01-10"},
    {"uuid": B2, "source_name": "Nimbus", "date_leaked": "2022-06-01"},
    {"uuid": B3, "source_name": "Quartz", "date_leaked": "2022-06-01"},
]


WIDE = 250


def vm(pid, field):
    """A memory figure of /proc/PID/status in bytes (VmRSS, VmHWM)."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise AssertionError(field)


def records():
    out = [
        {"breach_uuid": B1, "email": "Jane.Doe@Example.COM", "password": "pässwörd",
         "user_name": "=HYPERLINK(\"http://evil\")", "first_name": "-5+3",
         "other_attributes": {"note": "a, \"quoted\"\nline"}},
        {"breach_uuid": B2, "email": "jane.doe@example.com", "password": "Winter2024!",
         "last_name": "@sum", "phone_number": "+1 (555) 010-2030"},
        {"breach_uuid": B3, "email": "jane.doe@example.com", "password": "ab"},
        {"breach_uuid": B2, "email": "jane.doe@example.com", "user_name": "second-in-nimbus"},
    ]
    for i in range(60):
        out.append({"breach_uuid": [B1, B2, B3][i % 3], "email": "user%02d@bigcorp.example" % (i % 20),
                    "password": "pw-%d" % i})
    for i in range(WIDE):  # one domain of many records: large results from few identities
        out.append({"breach_uuid": B1, "email": "w%03d@wide.example" % i, "user_name": "wide-%d" % i,
                    "other_attributes": {"pad": "x" * 200}})
    return out


def identities():
    ids = ["jane.doe@example.com", " JANE.DOE@example.com ", "nobody@nowhere.example"]
    ids += ["user%02d@bigcorp.example" % i for i in range(20)]
    ids += ["missing%d@example.org" % i for i in range(30)]
    return ids


def populated():
    """A store of the breaches and records above; (its Ctl, a key)."""
    ctl = Ctl().init()
    ctl.import_("breaches", ctl.write("b.jsonl", "\n".join(json.dumps(b) for b in BREACHES)))
    ctl.import_("records", ctl.write("r.jsonl", "\n".join(json.dumps(r) for r in records())))
    return ctl, ctl.key("jobs", "--plan", "enterprise")


class Jobs(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.ctl, cls.key = populated()
        cls.other = cls.ctl.key("other")
        # keys made before the server starts need no wait for its key refresh
        cls.keys = {name: cls.ctl.key(name, *flags) for name, flags in (
            ("rows-quota", ("--quota", "10/month")), ("rows-limit", ("--max-result-rows", "6")),
            ("hourly", ("--rate", "10/h")))}
        cls.srv = Server(cls.ctl)

    @classmethod
    def tearDownClass(cls):
        rc = cls.srv.stop()
        cls.ctl.cleanup()
        assert rc == 0, "breachd exited %d on SIGTERM" % rc

    # --- helpers ----------------------------------------------------------------------

    def call(self, method, path, body=None, ctype=None, key="__default__", accept=None, srv=None):
        h = {}
        if ctype:
            h["Content-Type"] = ctype
        if accept:
            h["Accept"] = accept
        return (srv or self.srv).request(path, key=self.key if key == "__default__" else key,
                                         method=method, headers=h, body=body, timeout=60)

    def submit(self, accounts, type_="email", srv=None, key="__default__", status=202):
        st, hdrs, raw = self.call("POST", "/v7/jobs", json.dumps({"type": type_, "accounts": accounts}),
                                  "application/json", srv=srv, key=key)
        body = json.loads(raw)
        self.assertEqual(st, status, body)
        if status == 202:
            self.assertEqual(hdrs["location"], "/v7/jobs/" + body["id"])
            self.assertEqual(body["results_url"], "/v7/jobs/%s/results" % body["id"])
            self.assertEqual(body["total"], len(accounts))
        return body

    def wait(self, job_id, srv=None, timeout=60, key="__default__"):
        deadline = time.time() + timeout
        while True:
            st, _, raw = self.call("GET", "/v7/jobs/" + job_id, srv=srv, key=key)
            body = json.loads(raw)
            self.assertEqual(st, 200, body)
            if body["status"] in ("done", "failed") or time.time() > deadline:
                return body
            time.sleep(0.05)

    def results(self, job_id, srv=None, accept=None):
        st, hdrs, raw = self.call("GET", "/v7/jobs/%s/results" % job_id, srv=srv, accept=accept)
        self.assertEqual(st, 200, raw[:300])
        if accept == "text/csv":
            self.assertEqual(hdrs["content-type"], "text/csv; charset=utf-8")
            return list(csv.DictReader(io.StringIO(raw.decode("utf-8"), newline="")))
        self.assertEqual(hdrs["content-type"], "application/x-ndjson")
        return [json.loads(line) for line in raw.decode("utf-8").splitlines()]

    def single(self, type_, account):
        """breach-search's answer for one identity: (records_found, records in order)."""
        path = "/v7/breach-search?" + urllib.parse.urlencode(
            {"type": type_, "account": account, "number_of_records": 1000})
        st, _, raw = self.call("GET", path)
        body = json.loads(raw)
        self.assertIn(st, (200, 404), body)
        return body["records_found"], body["data"]

    def expected_line(self, index, type_, account, normalised):
        found, data = self.single(type_, account)
        groups = {}
        for r in data:
            b = r["breach_details"]
            groups.setdefault(b["uuid"], {"breach_id": b["uuid"], "source_name": b["site_name"],
                                          "records": []})["records"].append(r["breached_data"])
        return {"index": index, "type": type_, "account": normalised, "found": found,
                "breaches": list(groups.values())}

    # --- results ----------------------------------------------------------------------

    def test_results_equal_single_searches(self):
        ids = identities()
        job = self.submit(ids)
        self.assertEqual(self.wait(job["id"])["status"], "done")
        lines = self.results(job["id"])
        self.assertEqual(len(lines), len(ids))
        for i, account in enumerate(ids):
            want = self.expected_line(i, "email", account, account.strip().lower())
            self.assertEqual(lines[i], want)
        jane = lines[0]
        self.assertEqual(jane["found"], 4)
        # newest breach first; Quartz and Nimbus share a date, and the breach whose records
        # were written last comes first: a file's records go by domain, then breach uuid
        self.assertEqual([b["source_name"] for b in jane["breaches"]], ["Orbit", "Quartz", "Nimbus"])
        self.assertEqual(len(jane["breaches"][2]["records"]), 2)

    def test_a_job_of_many_chunks_finishes_without_waiting_for_a_lease(self):
        # 12 chunks: chunk 10 must not be taken before chunk 2 (PostgreSQL once ordered the
        # chunk numbers as text and left 2..9 to a claim after the lease ran out)
        ids = ["jane.doe@example.com" if i % 1000 == 999 else "n%d@example.com" % i
               for i in range(11500)]
        job = self.submit(ids)
        t0 = time.time()
        st = self.wait(job["id"], timeout=30)
        self.assertEqual((st["status"], st["done"]), ("done", 11500))
        self.assertLess(time.time() - t0, 5)
        lines = self.results(job["id"])
        self.assertEqual([l["index"] for l in lines], list(range(11500)))
        self.assertEqual([l["index"] for l in lines if l["found"]], list(range(999, 11500, 1000)))

    def test_other_types_and_secret_accounts_not_echoed(self):
        job = self.submit(["Winter2024!", "pässwörd", "nope"], "password")
        self.assertEqual(self.wait(job["id"])["status"], "done")
        lines = self.results(job["id"])
        for i, account in enumerate(["Winter2024!", "pässwörd", "nope"]):
            self.assertEqual(lines[i], self.expected_line(i, "password", account, None))
        self.assertEqual([l["found"] for l in lines], [1, 1, 0])
        st, _, raw = self.call("GET", "/v7/jobs/%s/results" % job["id"], accept="text/csv")
        self.assertNotIn(b"Winter2024", raw)
        job = self.submit(["+15550102030"], "phonenumber")
        self.assertEqual(self.wait(job["id"])["type"], "phone_number")
        self.assertEqual(self.results(job["id"])[0]["found"], 1)

    def test_csv_and_text_bodies_give_the_json_results(self):
        ids = identities()[:10]
        ref = self.submit(ids)
        text = "\r\n".join(ids) + "\n\n"
        table = "email,comment\n" + "\n".join('"%s",x' % a.replace('"', '""') for a in ids) + "\n"
        got = []
        for body, ctype in ((text, "text/plain; charset=utf-8"), (table, "text/csv")):
            st, _, raw = self.call("POST", "/v7/jobs?type=email", body.encode(), ctype)
            self.assertEqual(st, 202, raw)
            got.append(json.loads(raw)["id"])
        self.wait(ref["id"])
        want = self.results(ref["id"])
        for job_id in got:
            self.assertEqual(self.wait(job_id)["total"], len(ids))
            self.assertEqual(self.results(job_id), want)

    def test_csv_results_parse_back_with_the_formula_guard(self):
        ids = ["jane.doe@example.com", "nobody@nowhere.example", "user01@bigcorp.example"]
        job = self.submit(ids)
        self.wait(job["id"])
        lines = self.results(job["id"])
        rows = self.results(job["id"], accept="text/csv")
        self.assertEqual(list(rows[0].keys()), [
            "index", "type", "account", "found", "breach_id", "source_name", "user_name",
            "first_name", "last_name", "email", "email_domain", "phone_number", "ip_address",
            "bitcoin_address", "password", "password_hash", "other_attributes",
            "social_security_number", "severity", "status"])
        want = []
        for line in lines:
            recs = [(b, r) for b in line["breaches"] for r in b["records"]]
            if not recs:
                want.append({"index": str(line["index"]), "type": "email", "account": line["account"],
                             "found": "0", **{k: "" for k in list(rows[0].keys())[4:]}})
            for b, r in recs:
                row = {"index": str(line["index"]), "type": "email", "account": line["account"],
                       "found": str(line["found"]), "breach_id": b["breach_id"],
                       "source_name": b["source_name"]}
                for k in list(rows[0].keys())[6:-1]:
                    v = r[k] if r[k] is not None else ""
                    row[k] = "'" + v if v[:1] in ("=", "+", "-", "@", "\t", "\r") else v
                row["status"] = ""  # out_of_scope only for a tenant key's lines outside it
                want.append(row)
        self.assertEqual(rows, want)
        guarded = [r for r in rows if r["user_name"].startswith("'=")]
        self.assertEqual(guarded[0]["user_name"], "'=HYPERLINK(\"http://evil\")")
        self.assertEqual(guarded[0]["first_name"], "'-5+3")
        self.assertTrue(any(r["last_name"] == "'@sum" for r in rows))
        # commas and quotes inside a cell come back whole
        self.assertTrue(any('a, \\"quoted\\"' in r["other_attributes"] for r in rows), rows)

    def test_large_results_are_streamed_in_bounded_slices(self):
        # 400 identities of 250 records each: ~45 MB of JSON Lines, once held whole per chunk
        # by each download (three at once: ~3 x 45 MB); now rendered a slice at a time
        job = self.submit(["wide.example"] * 400, "email_domain")
        self.assertEqual(self.wait(job["id"])["status"], "done")
        before = vm(self.srv.proc.pid, "VmRSS")
        conns, first = [], None
        for _ in range(3):
            c = http.client.HTTPConnection("127.0.0.1", self.srv.port, timeout=60)
            c.request("GET", "/v7/jobs/%s/results" % job["id"], headers={"x-api-key": self.key})
            r = c.getresponse()
            self.assertEqual(r.status, 200)
            first = r.readline()
            conns.append((c, r))
        time.sleep(0.5)  # the server has filled what the sockets take and waits
        held = vm(self.srv.proc.pid, "VmRSS") - before
        lines = 1
        for c, r in conns:
            lines += sum(1 for _ in r)
            c.close()
        self.assertLess(held, 24 << 20, "three slow downloads held %d MiB" % (held >> 20))
        self.assertEqual(lines, 3 * 400 - 2)
        line = json.loads(first)
        self.assertEqual((line["index"], line["found"], len(line["breaches"][0]["records"])),
                         (0, WIDE, WIDE))

    # --- ownership, errors, limits ------------------------------------------------------

    def test_another_keys_job_is_not_found(self):
        job = self.submit(["jane.doe@example.com"])
        self.wait(job["id"])
        for path in ("/v7/jobs/" + job["id"], "/v7/jobs/%s/results" % job["id"]):
            st, _, raw = self.call("GET", path, key=self.other)
            self.assertEqual((st, json.loads(raw)["error"]), (404, "not_found"))
        st, _, raw = self.call("GET", "/v7/jobs/not-a-uuid")
        self.assertEqual((st, json.loads(raw)["error"]), (404, "not_found"))

    def test_bad_bodies_are_clear_4xx(self):
        cases = [
            (b'{"type":"email","accounts":[]}', "application/json", 422, "validation_error"),
            (b'{"type":"shoe","accounts":["a@b.c"]}', "application/json", 422, "validation_error"),
            (b'{"type":"email","accounts":["a@b.c", 7]}', "application/json", 422, "validation_error"),
            (b'{"accounts":["a@b.c"]}', "application/json", 422, "validation_error"),
            (b'[1,2', "application/json", 422, "validation_error"),
            (b'a@b.c\n', "text/plain", 422, "validation_error"),  # no type
            (b'a@b.c\n', "application/xml", 415, "unsupported_media_type"),
            (b'"a@b.c\n', "text/csv", 422, "validation_error"),
        ]
        for body, ctype, status, code in cases:
            st, _, raw = self.call("POST", "/v7/jobs", body, ctype)
            self.assertEqual((st, json.loads(raw)["error"]), (status, code), (body, raw))
        st, _, raw = self.call("POST", "/v7/jobs", json.dumps(
            {"type": "email", "accounts": ["fine@example.com", "secret-not-an-email"]}), "application/json")
        msg = json.loads(raw)["message"]
        self.assertEqual(st, 422)
        self.assertIn("identity 1", msg)
        self.assertNotIn("secret-not-an-email", msg)
        st, hdrs, raw = self.call("GET", "/v7/jobs")
        self.assertEqual(st, 405)
        self.assertEqual(hdrs["allow"], "POST")

    def test_json_faults_are_placed_by_line_and_column_never_quoted(self):
        for body, where in ((b'{"type":"password","accounts":["FirstPassw0rd" "SecondPassw0rd"]}',
                             "(line 1, column 48)"),
                            (b'{"type":"password",\n"accounts":["Hunter2Secret\n"]}',
                             "(line 2, column 27)"),
                            (b'{"type":"password","accounts":["a"]} TrailingSecret',
                             "(line 1, column 38)")):
            st, _, raw = self.call("POST", "/v7/jobs", body, "application/json")
            msg = json.loads(raw)["message"]
            self.assertEqual((st, json.loads(raw)["error"]), (422, "validation_error"), raw)
            self.assertIn(where, msg)
            for secret in ("Passw0rd", "Hunter2", "Secret", "near"):
                self.assertNotIn(secret, msg)

    def test_a_body_of_millions_of_tiny_strings_is_refused_quickly_and_small(self):
        # 5,242,880 empty strings in 15 MiB: refused when the count passes 100,000, without
        # a document of them (jansson's took ~240 MB and 0.7 s)
        body = b'{"type":"email","accounts":[' + b",".join([b'""'] * (5 << 20)) + b"]}"
        self.assertLess(len(body), 16 << 20)
        before = vm(self.srv.proc.pid, "VmHWM")
        t0 = time.time()
        st, _, raw = self.call("POST", "/v7/jobs", body, "application/json")
        took = time.time() - t0
        self.assertEqual((st, json.loads(raw)["error"]), (413, "too_many_identities"), raw[:300])
        grew = vm(self.srv.proc.pid, "VmHWM") - before
        self.assertLess(grew, 48 << 20, "the server's peak memory grew %d MiB" % (grew >> 20))
        self.assertLess(took, 3)

    def test_more_than_100000_identities_is_413(self):
        ids = ["u%d@example.com" % i for i in range(100001)]
        st, _, raw = self.call("POST", "/v7/jobs?type=email", "\n".join(ids).encode(), "text/plain")
        body = json.loads(raw)
        self.assertEqual((st, body["error"]), (413, "too_many_identities"))
        self.assertIn("100000", body["message"])

    def test_each_identity_counts_against_the_monthly_quota(self):
        key = self.ctl.key("quota", "--quota", "10/month")
        time.sleep(1.5)  # the key refresh picks it up
        self.submit(["a%d@example.com" % i for i in range(8)], key=key)
        st, _, raw = self.call("GET", "/v7/usage", key=key)
        self.assertEqual(st, 200, (raw, self.srv.log()))
        self.assertEqual(json.loads(raw)["requests_this_month"], 8, raw)
        body = self.submit(["b%d@example.com" % i for i in range(5)], key=key, status=403)
        self.assertEqual(body["error"], "quota_exhausted")
        self.assertIn("5 identities", body["message"])
        # the refused POST counted as one request (9 used): one more identity fits
        self.submit(["c@example.com"], key=key)
        st, _, raw = self.call("GET", "/v7/usage", key=key)
        self.assertEqual(json.loads(raw)["requests_this_month"], 10, raw)

    # --- what a job costs, and a key's limits on its jobs --------------------------------

    def stored(self, job_id):
        """(status, result_rows, truncated) of a job once it ended, read from the store: a
        status request would count against the key's limits under test."""
        deadline = time.time() + 30
        while True:
            row = self.ctl.sql("SELECT status, result_rows, truncated FROM jobs WHERE uuid = '%s'"
                               % job_id)[0]
            if row[0] in ("2", "3") or time.time() > deadline:
                return ({"2": "done", "3": "failed"}.get(row[0], row[0]), int(row[1]), int(row[2]))
            time.sleep(0.05)

    def usage(self, key):
        st, _, raw = self.call("GET", "/v7/usage", key=key)
        self.assertEqual(st, 200, raw)
        return json.loads(raw)

    def test_result_rows_count_against_the_quota_and_are_cut_when_it_runs_out(self):
        key = self.keys["rows-quota"]
        # jane: 4 records, 4 rows; nobody: no record, 1 row
        job = self.submit(["jane.doe@example.com", "nobody@nowhere.example"], key=key)
        self.assertEqual(self.stored(job["id"]), ("done", 5, 0))
        self.assertEqual(self.usage(key)["requests_this_month"], 5)
        # 2 identities fit (7); of their 5 further rows the quota leaves 3: user00 keeps its 3
        # records, jane 2 of her 4 (found still 4)
        job = self.submit(["user00@bigcorp.example", "jane.doe@example.com"], key=key)
        self.assertEqual(self.stored(job["id"]), ("done", 5, 1))
        self.assertEqual(self.usage(key)["requests_this_month"], 10)
        st, _, raw = self.call("GET", "/v7/jobs/%s/results" % job["id"], key=key)
        self.assertEqual(st, 403, raw)  # the download is a request, and the quota is used up
        self.assertEqual(json.loads(raw)["error"], "quota_exhausted")
        self.ctl.run("keys", "set-quota", self.key_id("rows-quota"), "none", check=0)
        deadline = time.time() + 10
        while self.call("GET", "/v7/jobs/%s/results" % job["id"], key=key)[0] != 200:
            self.assertLess(time.time(), deadline)
            time.sleep(0.2)
        lines = [json.loads(l) for l in
                 self.call("GET", "/v7/jobs/%s/results" % job["id"], key=key)[2].splitlines()]
        self.assertEqual([(l["found"], sum(len(b["records"]) for b in l["breaches"])) for l in lines],
                         [(3, 3), (4, 2)])

    def test_a_keys_result_rows_are_cut_at_its_limit_then_its_jobs_refused(self):
        key = self.keys["rows-limit"]
        # 2 identities hold a row each; the 4 rows left: jane's 3 further, then 1 of user00's 2
        job = self.submit(["jane.doe@example.com", "user00@bigcorp.example"], key=key)
        st = self.wait(job["id"], key=key)
        self.assertEqual((st["status"], st["result_rows"], st["truncated"]), ("done", 6, 1))
        body = self.submit(["x@example.com"], key=key, status=429)
        self.assertEqual(body["error"], "result_rows_exhausted")
        self.assertIn("at most 6 result rows, and keep 6", body["message"])
        st, hdrs, _ = self.call("POST", "/v7/jobs", json.dumps({"type": "email", "accounts": ["x@e.com"]}),
                                "application/json", key=key)
        self.assertEqual(st, 429)
        self.assertTrue(86000 < int(hdrs["retry-after"]) <= 86400, hdrs)  # when the job goes
        body = self.submit(["x%d@example.com" % i for i in range(7)], key=key, status=413)
        self.assertEqual(body["error"], "too_many_identities")
        self.assertIn("at most 6 identities", body["message"])

    def test_the_hourly_limit_counts_identities_and_result_rows_by_the_thousand(self):
        key = self.keys["hourly"]
        ids = ["h%d@example.com" % i for i in range(3500)]
        st, hdrs, raw = self.call("POST", "/v7/jobs", json.dumps({"type": "email", "accounts": ids}),
                                  "application/json", key=key)
        self.assertEqual(st, 202, raw)
        self.assertEqual(hdrs["x-ratelimit-remaining"], "6")  # 4 for 3,500 identities
        job = json.loads(raw)
        self.assertEqual(self.stored(job["id"]), ("done", 3500, 0))
        st, hdrs, raw = self.call("GET", "/v7/jobs/%s/results" % job["id"], key=key)
        self.assertEqual(st, 200, raw[:200])
        self.assertEqual(hdrs["x-ratelimit-remaining"], "2")  # 4 for 3,500 rows
        st, hdrs, raw = self.call("GET", "/v7/jobs/%s/results" % job["id"], key=key)
        self.assertEqual((st, json.loads(raw)["error"]), (429, "rate_limited"))
        self.assertIn("4 requests for these", json.loads(raw)["message"])
        self.assertGreater(int(hdrs["retry-after"]), 360)  # two more requests' worth: ~720 s

    def key_id(self, name):
        for line in self.ctl.run("keys", "list", check=0).stdout.decode().splitlines()[1:]:
            if line.split()[1] == name:
                return line.split()[0]
        raise AssertionError(name)

    def test_job_limits_are_set_per_key_with_breachctl(self):
        self.ctl.key("limits")
        kid = self.key_id("limits")
        p = self.ctl.run("keys", "set-job-limits", kid, "--max-jobs", "3", check=0)
        self.assertEqual(p.stderr.decode(),
                         "breachctl: key %s may have 3 jobs queued or running, 200000 (the "
                         "default) identities waiting in them and 1000000 (the default) result "
                         "rows kept; servers apply it within a few seconds\n" % kid)
        p = self.ctl.run("keys", "set-job-limits", kid, "--max-jobs", "default",
                         "--max-result-rows", "50", check=0)
        self.assertIn("may have 10 (the default) jobs", p.stderr.decode())
        self.assertIn("and 50 result rows kept", p.stderr.decode())
        for bad in ("0", "-1", "1e3", "", "5/h", "1000000000001"):
            p = self.ctl.run("keys", "create", "--name", "x", "--max-queued-identities", bad, check=2)
            self.assertEqual(p.stdout, b"")
            self.assertEqual(p.stderr.decode(),
                             "breachctl keys create: --max-queued-identities is the most "
                             "identities of those not yet looked up, 1 to 1000000000000 (by "
                             "default 200000)\n")
        p = self.ctl.run("keys", "set-job-limits", kid, "--max-jobs", "0", check=2)
        self.assertIn("1 to 1000000000000, or default (by default 10)", p.stderr.decode())
        p = self.ctl.run("keys", "set-job-limits", "999", "--max-jobs", "2", check=2)
        self.assertEqual(p.stderr.decode(), "breachctl keys set-job-limits: no active key 999\n")
        p = self.ctl.run("keys", "set-job-limits", kid, check=2)
        self.assertIn("give the key's ID", p.stderr.decode())


class JobTurns(unittest.TestCase):
    """A slow runner (BREACHD_TEST_JOB_PAUSE_MS): jobs stay waiting long enough for a key's
    limits on them to be met, and keys take turns."""

    @classmethod
    def setUpClass(cls):
        cls.ctl, cls.key = populated()
        cls.keys = {name: cls.ctl.key(name, *flags) for name, flags in (
            ("small", ()), ("default-limits", ()),
            ("waiting", ("--max-jobs", "2", "--max-queued-identities", "2500")))}
        os.environ["BREACHD_TEST_JOB_PAUSE_MS"] = "400"
        try:
            cls.srv = Server(cls.ctl)
        finally:
            del os.environ["BREACHD_TEST_JOB_PAUSE_MS"]

    @classmethod
    def tearDownClass(cls):
        rc = cls.srv.stop()
        cls.ctl.cleanup()
        assert rc == 0, "breachd exited %d on SIGTERM" % rc

    call = Jobs.call
    submit = Jobs.submit
    wait = Jobs.wait

    def status(self, job_id, key):
        return json.loads(self.call("GET", "/v7/jobs/" + job_id, key=key)[2])

    def test_two_keys_jobs_take_turns(self):
        other = self.keys["small"]
        big = self.submit(["n%d@example.com" % i for i in range(8000)])  # 8 chunks: 4 turns
        small = self.submit(["jane.doe@example.com"], key=other)
        st = self.wait(small["id"], key=other, timeout=30)
        self.assertEqual((st["status"], st["done"]), ("done", 1))
        # the small job was done in its turn, while the big one still runs
        big_now = self.status(big["id"], self.key)
        self.assertEqual(big_now["status"], "running")
        self.assertLess(big_now["done"], 8000)
        self.assertEqual(self.wait(big["id"], timeout=60)["done"], 8000)

    def test_a_keys_jobs_waiting_and_their_identities_are_limited(self):
        key = self.keys["waiting"]
        first = self.submit(["a%d@example.com" % i for i in range(2000)], key=key)
        body = self.submit(["b%d@example.com" % i for i in range(600)], key=key, status=429)
        self.assertEqual(body["error"], "too_many_queued_identities")
        self.assertIn("at most 2500 identities not yet looked up, and hold 2000", body["message"])
        second = self.submit(["c%d@example.com" % i for i in range(400)], key=key)
        st, hdrs, raw = self.call("POST", "/v7/jobs", json.dumps({"type": "email", "accounts": ["d@e.com"]}),
                                  "application/json", key=key)
        self.assertEqual((st, json.loads(raw)["error"]), (429, "too_many_jobs"))
        self.assertIn("at most 2 jobs queued or running at once, and has 2", json.loads(raw)["message"])
        self.assertEqual(hdrs["retry-after"], "5")
        body = self.submit(["e%d@example.com" % i for i in range(2501)], key=key, status=413)
        self.assertEqual(body["error"], "too_many_identities")
        for job in (first, second):
            self.assertEqual(self.wait(job["id"], key=key, timeout=60)["status"], "done")
        self.submit(["f@example.com"], key=key)  # room again

    def test_a_key_has_ten_jobs_waiting_at_most_by_default(self):
        key = self.keys["default-limits"]
        jobs = [self.submit(["g%d@example.com" % i], key=key) for i in range(10)]
        body = self.submit(["g10@example.com"], key=key, status=429)
        self.assertEqual(body["error"], "too_many_jobs")
        self.assertIn("at most 10 jobs", body["message"])
        self.assertEqual(self.wait(jobs[-1]["id"], key=key, timeout=60)["status"], "done")


class JobRestart(unittest.TestCase):
    """A server killed mid-job: the next one finishes the job from its progress."""

    @classmethod
    def setUpClass(cls):
        cls.ctl, cls.key = populated()

    @classmethod
    def tearDownClass(cls):
        cls.ctl.cleanup()

    call = Jobs.call
    submit = Jobs.submit
    wait = Jobs.wait
    results = Jobs.results

    def slow_server(self):
        os.environ["BREACHD_TEST_JOB_PAUSE_MS"] = "300"
        try:
            return Server(self.ctl)
        finally:
            del os.environ["BREACHD_TEST_JOB_PAUSE_MS"]

    def status(self, srv, job_id):
        return json.loads(self.call("GET", "/v7/jobs/" + job_id, srv=srv)[2])

    def kill_mid_job(self, ids):
        srv = self.slow_server()
        try:
            job = self.submit(ids, srv=srv)
            deadline = time.time() + 30
            while self.status(srv, job["id"])["done"] < 1000 and time.time() < deadline:
                time.sleep(0.05)
            st = self.status(srv, job["id"])
            self.assertEqual(st["status"], "running")
            self.assertGreaterEqual(st["done"], 1000)
            self.assertLess(st["done"], len(ids))
        finally:  # killed however the checks went: no server outlives the test
            srv.proc.send_signal(signal.SIGKILL)
            srv.proc.wait()
            srv.stderr.close()
        # the dead runner's lease (10 s after its last chunk, jobs/runner.c) has run out:
        # moved back rather than waited for, 20 s of each pass of the suite
        self.ctl.sql("UPDATE jobs SET lease_until = lease_until - 10 WHERE uuid = '%s'" % job["id"])
        return job, st["done"]

    def test_kill_mid_job_and_the_next_server_finishes_it(self):
        ids = ["user%02d@bigcorp.example" % (i % 25) if i % 7 == 0 else "n%d@example.com" % i
               for i in range(5000)]
        job, done_before = self.kill_mid_job(ids)
        srv = Server(self.ctl)
        try:
            st = self.wait(job["id"], srv=srv, timeout=60)
            self.assertEqual((st["status"], st["done"], st["total"]), ("done", 5000, 5000))
            lines = self.results(job["id"], srv=srv)
            self.assertEqual([l["index"] for l in lines], list(range(5000)))
            fresh = self.submit(ids, srv=srv)
            self.wait(fresh["id"], srv=srv)
            self.assertEqual(lines, self.results(fresh["id"], srv=srv))
        finally:
            self.assertEqual(srv.stop(), 0)

    def test_a_job_that_keeps_dying_is_reported_failed(self):
        ids = ["n%d@example.com" % i for i in range(3000)]
        job, _ = self.kill_mid_job(ids)
        # as its runner left it, dead mid-turn with the lease it held: the kill may also land
        # in the instant between a turn's yield (lease 0, taken back without counting an
        # attempt) and the next claim, which made this test pass the job as done on Citus
        self.ctl.sql("UPDATE jobs SET attempts = 5, lease = CASE WHEN lease = 0 THEN 77 "
                     "ELSE lease END WHERE uuid = '%s'" % job["id"])
        srv = Server(self.ctl)
        try:
            st = self.wait(job["id"], srv=srv, timeout=60)
            self.assertEqual(st["status"], "failed")
            self.assertIsNotNone(st["finished_at"])
            code, _, raw = self.call("GET", "/v7/jobs/%s/results" % job["id"], srv=srv)
            self.assertEqual((code, json.loads(raw)["error"]), (409, "job_failed"))
        finally:
            self.assertEqual(srv.stop(), 0)

    def test_jobs_are_deleted_after_a_day(self):
        srv = Server(self.ctl)
        unique = b"expiring-identity-5521@nowhere.example"
        try:
            job = self.submit(["jane.doe@example.com", unique.decode()], srv=srv)
            self.wait(job["id"], srv=srv)
            if STORE == "sqlite":  # a PostgreSQL dump shows the results' bytes in hex
                self.assertTrue(unique in self.ctl.store_bytes(), "the job is not in the files")
        finally:
            self.assertEqual(srv.stop(), 0)
        self.ctl.sql("UPDATE jobs SET created_at = created_at - 86401 WHERE uuid = '%s'" % job["id"])
        srv = Server(self.ctl)  # the runner deletes expired jobs when it starts
        try:
            deadline = time.time() + 10
            while time.time() < deadline:
                code, _, raw = self.call("GET", "/v7/jobs/" + job["id"], srv=srv)
                if code == 404:
                    break
                time.sleep(0.1)
            self.assertEqual(code, 404)
            self.assertEqual(self.ctl.sql("SELECT count(*) FROM job_chunks WHERE job = '%s'" % job["id"]),
                             [["0"]])
            # nothing of the job is left readable in the store's files (SQLite: the freed
            # pages overwritten, the write-ahead log emptied; PostgreSQL: see OPERATIONS.md)
            deadline = time.time() + 5
            while unique in self.ctl.store_bytes() and time.time() < deadline:
                time.sleep(0.1)
            self.assertFalse(unique in self.ctl.store_bytes(), "the expired job is still in the files")
        finally:
            self.assertEqual(srv.stop(), 0)


if __name__ == "__main__":
    unittest.main()
