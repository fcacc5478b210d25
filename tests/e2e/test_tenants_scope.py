"""Tenants and scoped keys enforced on every route (issue 33), on the store under test: two
tenants (acme.example, globex.example) whose people share one breach, with outsiders beside
them; the store built with the real breachctl (tenants add, keys create --tenant/--types/
--allow-ip). Each tenant's key is tried against the other's identities, domains and ids, and
every answer is compared with exactly what it may see: records, counts, pages, tokens, CSV,
job results, watches, the HIBP door, status and changes. Then --allow-ip, and a proxy's
X-Forwarded-For with and without --trusted-proxy."""
import csv
import io
import json
import time
import unittest
import urllib.parse

from harness import Ctl, Server

SHARED = "5c0e0000-0000-4000-8000-000000000001"  # holds both tenants' people and outsiders
ACME_ONLY = "5c0e0000-0000-4000-8000-000000000002"
OTHER = "5c0e0000-0000-4000-8000-000000000003"
BREACHES = [
    {"uuid": SHARED, "source_name": "Shared Dump", "site_domain": "shared.example",
     "date_leaked": "2023-03-01", "leaked_data_types": "email,username,password,ip_address"},
    {"uuid": ACME_ONLY, "source_name": "Acme Leak", "site_domain": "acme-leak.example",
     "date_leaked": "2022-02-01", "leaked_data_types": "email,password"},
    {"uuid": OTHER, "source_name": "Other Leak", "site_domain": "other.example",
     "date_leaked": "2021-01-01", "leaked_data_types": "email,username"},
]


def records():
    rows = [
        {"breach_uuid": SHARED, "email": "alice@acme.example", "user_name": "alice",
         "password": "pw-alice-1", "ip_address": "192.0.2.10"},
        {"breach_uuid": ACME_ONLY, "email": "alice@acme.example", "password": "pw-alice-2"},
        {"breach_uuid": SHARED, "email": "bob@mail.acme.example", "user_name": "shared_user"},
        {"breach_uuid": SHARED, "email": "carol@globex.example", "user_name": "shared_user",
         "ip_address": "192.0.2.10"},
        {"breach_uuid": OTHER, "email": "carol@globex.example", "user_name": "carol"},
        {"breach_uuid": SHARED, "email": "eve@outsider.example", "user_name": "shared_user",
         "ip_address": "192.0.2.10"},
        {"breach_uuid": SHARED, "email": "mallory@notacme.example", "user_name": "shared_user"},
    ]
    # a username both tenants' people share, to page through: 7 at globex, 5 at acme
    for i in range(7):
        rows.append({"breach_uuid": [SHARED, OTHER][i % 2], "email": "g%02d@globex.example" % i,
                     "user_name": "pager"})
    for i in range(5):
        rows.append({"breach_uuid": [SHARED, ACME_ONLY][i % 2], "email": "a%02d@acme.example" % i,
                     "user_name": "pager"})
    return rows


def emails(body):
    return sorted(r["breached_data"]["email"] for r in body["data"])


class TenantScope(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.ctl = ctl = Ctl().init()
        ctl.import_("breaches", ctl.write("b.jsonl", "\n".join(json.dumps(b) for b in BREACHES)))
        ctl.import_("records", ctl.write("r.jsonl", "\n".join(json.dumps(r) for r in records())))
        cls.acme = int(ctl.run("tenants", "add", "acme", "--domain", "acme.example",
                               check=0).stdout.decode().strip())
        cls.globex = int(ctl.run("tenants", "add", "globex", "--domain", "globex.example",
                                 check=0).stdout.decode().strip())
        cls.op = ctl.key("operator", "--plan", "enterprise")
        cls.ka = ctl.key("acme", "--tenant", str(cls.acme))  # email, email_domain
        cls.kb = ctl.key("globex", "--tenant", str(cls.globex), "--types",
                         "email,email_domain,username,ip_address,password")
        cls.ka_cards = ctl.key("acme-cards", "--tenant", str(cls.acme), "--types",
                               "email,cards")
        cls.only_user = ctl.key("usernames", "--types", "username")
        cls.from_two = ctl.key("from-127.0.0.2", "--allow-ip", "127.0.0.2/32")
        cls.behind = ctl.key("behind-proxy", "--allow-ip", "198.51.100.7",
                             "--allow-ip", "2001:db8::/32")
        cls.srv = Server(ctl, "--webhook-allow", "127.0.0.0/8")

    @classmethod
    def tearDownClass(cls):
        rc = cls.srv.stop()
        cls.ctl.cleanup()
        assert rc == 0, "breachd exited %d on SIGTERM" % rc

    # --- helpers ----------------------------------------------------------------------

    def search(self, key, status=200, headers=None, **params):
        path = "/v7/breach-search?" + urllib.parse.urlencode(params)
        st, body = self.srv.get(path, key=key, headers=headers)
        self.assertEqual(st, status, body)
        return body

    def refused(self, key, code, **params):
        body = self.search(key, 403, **params)
        self.assertEqual(set(body), {"error", "message"}, body)
        self.assertEqual(body["error"], code, body)
        self.assertTrue(body["message"])

    def call(self, key, method, path, body=None, headers=None, hibp=False):
        h = dict(headers or {})
        if hibp:
            h["hibp-api-key"] = key
            key = None
        data = json.dumps(body).encode() if isinstance(body, (dict, list)) else body
        if data is not None and "Content-Type" not in h:
            h["Content-Type"] = "application/json"
        return self.srv.request(path, key=key, method=method, body=data, headers=h)

    def hibp(self, key, path):
        st, hdrs, raw = self.call(key, "GET", "/api/v3" + path, hibp=True)
        return st, (json.loads(raw) if raw else None)

    def metric(self, reason):
        st, _, raw = self.srv.request("/metrics")
        self.assertEqual(st, 200)
        line = 'breachd_scope_refusals_total{reason="%s"} ' % reason
        for row in raw.decode().splitlines():
            if row.startswith(line):
                return int(row[len(line):])
        self.fail("no %s line in /metrics" % line)

    # --- breach-search ------------------------------------------------------------------

    def test_email_in_scope_gives_exactly_its_records(self):
        body = self.search(self.ka, type="email", account="Alice@Acme.example")
        self.assertEqual(body["records_found"], 2)
        self.assertEqual(emails(body), ["alice@acme.example"] * 2)
        self.assertEqual(sorted(r["breach_details"]["uuid"] for r in body["data"]),
                         sorted([SHARED, ACME_ONLY]))
        # a subdomain is in scope with its domain
        body = self.search(self.ka, type="email", account="bob@mail.acme.example")
        self.assertEqual((body["records_found"], emails(body)), (1, ["bob@mail.acme.example"]))
        # the other tenant's own people
        body = self.search(self.kb, type="email", account="carol@globex.example")
        self.assertEqual((body["records_found"], emails(body)),
                         (2, ["carol@globex.example"] * 2))

    def test_email_out_of_scope_is_refused_before_the_store(self):
        before = self.metric("out_of_scope")
        for account in ("carol@globex.example", "eve@outsider.example",
                        "mallory@notacme.example", "nobody@acme.example.evil"):
            self.refused(self.ka, "out_of_scope", type="email", account=account)
        for account in ("alice@acme.example", "bob@mail.acme.example"):
            self.refused(self.kb, "out_of_scope", type="email", account=account)
        # an address nobody holds answers the same: the refusal says nothing of the store
        self.refused(self.ka, "out_of_scope", type="email", account="x@globex.example")
        self.assertEqual(self.metric("out_of_scope"), before + 7)
        # the operator's key sees all of them
        body = self.search(self.op, type="email", account="carol@globex.example")
        self.assertEqual(body["records_found"], 2)

    def test_email_domain_scope(self):
        body = self.search(self.ka, type="email_domain", account="acme.example",
                           number_of_records=1000)
        self.assertEqual(body["records_found"], 7)
        self.assertEqual(emails(body), ["a%02d@acme.example" % i for i in range(5)] +
                         ["alice@acme.example"] * 2)
        body = self.search(self.ka, type="email_domain", account="@MAIL.acme.example")
        self.assertEqual((body["records_found"], emails(body)), (1, ["bob@mail.acme.example"]))
        for domain in ("globex.example", "outsider.example", "notacme.example", "example.com"):
            self.refused(self.ka, "out_of_scope", type="email_domain", account=domain)
        self.refused(self.kb, "out_of_scope", type="email_domain", account="acme.example")

    def test_types_the_key_was_not_given(self):
        before = self.metric("type_not_allowed")
        self.refused(self.ka, "type_not_allowed", type="username", account="shared_user")
        self.refused(self.ka, "type_not_allowed", type="password", account="pw-alice-1")
        self.refused(self.ka_cards, "type_not_allowed", type="email_domain",
                     account="acme.example")
        self.refused(self.only_user, "type_not_allowed", type="email",
                     account="alice@acme.example")
        self.assertEqual(self.metric("type_not_allowed"), before + 4)
        # a key without a tenant given a type sees the whole corpus for it
        body = self.search(self.only_user, type="username", account="shared_user")
        self.assertEqual(body["records_found"], 4)

    def test_other_types_are_filtered_to_the_tenants_records(self):
        body = self.search(self.kb, type="username", account="shared_user")
        self.assertEqual((body["records_found"], emails(body)), (1, ["carol@globex.example"]))
        body = self.search(self.kb, type="ip_address", account="192.0.2.10")
        self.assertEqual((body["records_found"], emails(body)), (1, ["carol@globex.example"]))
        # alice's password is in the corpus but not in globex's records: nothing found
        body = self.search(self.kb, 404, type="password", account="pw-alice-1")
        self.assertEqual((body["records_found"], body["data"]), (0, []))
        body = self.search(self.op, type="password", account="pw-alice-1")
        self.assertEqual(body["records_found"], 1)
        # the operator's key sees every record of them
        body = self.search(self.op, type="ip_address", account="192.0.2.10")
        self.assertEqual(body["records_found"], 3)

    def test_pages_counts_and_tokens_hold_the_filtered_set(self):
        seen, token, pages = [], None, 0
        while True:
            params = {"type": "username", "account": "pager", "number_of_records": 3}
            if token:
                params = {"paging_token": token, "number_of_records": 3}
            body = self.search(self.kb, **params)
            self.assertEqual(body["records_found"], 7)  # the first page's count, carried
            seen += emails(body)
            pages += 1
            token = body["pagination_token"]
            if not token:
                break
        self.assertEqual(pages, 3)
        self.assertEqual(sorted(seen), ["g%02d@globex.example" % i for i in range(7)])
        # the operator pages through all twelve
        body = self.search(self.op, type="username", account="pager", number_of_records=1000)
        self.assertEqual(body["records_found"], 12)
        # a token of one tenant's key replayed with the other's, or the operator's: refused
        first = self.search(self.kb, type="username", account="pager", number_of_records=3)
        for key in (self.ka, self.op, self.ka_cards):
            st, body = self.srv.get("/v7/breach-search?" + urllib.parse.urlencode(
                {"paging_token": first["pagination_token"]}), key=key)
            self.assertEqual(st, 422, body)
            self.assertEqual(body["error"], "validation_error")
        acme = self.search(self.ka, type="email_domain", account="acme.example",
                           number_of_records=2)
        st, body = self.srv.get("/v7/breach-search?" + urllib.parse.urlencode(
            {"paging_token": acme["pagination_token"]}), key=self.kb)
        self.assertEqual((st, body["error"]), (422, "validation_error"))
        # the same token with the key it was made for goes on
        body = self.search(self.ka, paging_token=acme["pagination_token"], number_of_records=2)
        self.assertEqual(len(body["data"]), 2)

    def test_csv_pages_are_filtered_too(self):
        st, hdrs, raw = self.srv.request(
            "/v7/breach-search?" + urllib.parse.urlencode(
                {"type": "username", "account": "pager", "number_of_records": 100}),
            key=self.kb, headers={"Accept": "text/csv"})
        self.assertEqual(st, 200, raw)
        self.assertEqual(hdrs["x-records-found"], "7")
        self.assertNotIn("x-pagination-token", hdrs)
        rows = list(csv.DictReader(io.StringIO(raw.decode(), newline="")))
        self.assertEqual(sorted(r["email"] for r in rows),
                         ["g%02d@globex.example" % i for i in range(7)])

    def test_card_search_needs_cards(self):
        st, body = self.srv.get("/v7/credit-card-search", key=self.ka)
        self.assertEqual((st, body["error"]), (403, "type_not_allowed"))
        st, body = self.srv.get("/v7/credit-card-search", key=self.kb)
        self.assertEqual((st, body["error"]), (403, "type_not_allowed"))
        st, body = self.srv.get("/v7/credit-card-search", key=self.ka_cards)
        self.assertEqual(st, 200, body)
        st, body = self.srv.get("/v7/credit-card-search", key=self.op)
        self.assertEqual(st, 200, body)

    # --- the HIBP door ------------------------------------------------------------------

    def test_hibp_breachedaccount(self):
        st, body = self.hibp(self.ka, "/breachedaccount/alice%40acme.example")
        self.assertEqual((st, body), (200, [{"Name": "AcmeLeak"}, {"Name": "SharedDump"}]))
        st, body = self.hibp(self.kb, "/breachedaccount/carol%40globex.example")
        self.assertEqual((st, body), (200, [{"Name": "OtherLeak"}, {"Name": "SharedDump"}]))
        for key, account in ((self.ka, "carol%40globex.example"),
                             (self.kb, "alice%40acme.example"),
                             (self.ka, "eve%40outsider.example"),
                             (self.ka, "nobody%40globex.example")):
            st, body = self.hibp(key, "/breachedaccount/" + account)
            self.assertEqual((st, body["error"]), (403, "out_of_scope"), account)
            self.assertEqual(set(body), {"error", "message"})
        st, body = self.hibp(self.only_user, "/breachedaccount/alice%40acme.example")
        self.assertEqual((st, body["error"]), (403, "type_not_allowed"))

    def test_hibp_breacheddomain_only_the_tenants_domains(self):
        # a tenant key of the standard plan may search its own domains
        st, body = self.hibp(self.ka, "/breacheddomain/acme.example")
        self.assertEqual((st, body), (200, {
            "a00": ["SharedDump"], "a01": ["AcmeLeak"], "a02": ["SharedDump"],
            "a03": ["AcmeLeak"], "a04": ["SharedDump"], "alice": ["AcmeLeak", "SharedDump"]}))
        st, body = self.hibp(self.ka, "/breacheddomain/mail.acme.example")
        self.assertEqual((st, body), (200, {"bob": ["SharedDump"]}))
        for key, domain in ((self.ka, "globex.example"), (self.kb, "acme.example"),
                            (self.ka, "outsider.example"), (self.ka, "notacme.example")):
            st, body = self.hibp(key, "/breacheddomain/" + domain)
            self.assertEqual((st, body["error"]), (403, "out_of_scope"), domain)
        st, body = self.hibp(self.kb, "/breacheddomain/globex.example")
        self.assertEqual(st, 200)
        self.assertEqual(sorted(body), ["carol"] + ["g%02d" % i for i in range(7)])
        # a key without a tenant: the enterprise plan, every domain, as before
        st, body = self.hibp(self.op, "/breacheddomain/outsider.example")
        self.assertEqual((st, body), (200, {"eve": ["SharedDump"]}))
        st, body = self.hibp(self.ka_cards, "/breacheddomain/acme.example")
        self.assertEqual((st, body["error"]), (403, "type_not_allowed"))

    def test_hibp_subscribeddomains(self):
        st, body = self.hibp(self.ka, "/subscribeddomains")
        self.assertEqual((st, body), (200, [{
            "DomainName": "acme.example", "PwnCount": None, "PwnCountExcludingSpamLists": None,
            "PwnCountExcludingSpamListsAtLastSubscriptionRenewal": None,
            "NextSubscriptionRenewal": None}]))
        st, body = self.hibp(self.kb, "/subscribeddomains")
        self.assertEqual([d["DomainName"] for d in body], ["globex.example"])
        st, body = self.hibp(self.op, "/subscribeddomains")
        self.assertEqual((st, body), (200, []))
        st, body = self.hibp(self.ka, "/subscription/status")
        self.assertEqual(body["DomainSearchMaxBreachedAccounts"], 10000)

    # --- watches --------------------------------------------------------------------------

    def watch(self, key, type_, account):
        st, _, raw = self.call(key, "POST", "/v7/watches", {
            "type": type_, "account": account, "url": "http://127.0.0.1:9/hook",
            "secret": "s" * 32})
        return st, json.loads(raw) if raw else None

    def test_watches_only_in_scope_and_per_key(self):
        for type_, account in (("email", "carol@globex.example"),
                               ("email_domain", "globex.example"),
                               ("email", "mallory@notacme.example")):
            st, body = self.watch(self.ka, type_, account)
            self.assertEqual((st, body["error"]), (403, "out_of_scope"), account)
        for type_, account in (("username", "alice"), ("bin", "411111")):
            st, body = self.watch(self.ka, type_, account)
            self.assertEqual((st, body["error"]), (403, "type_not_allowed"), type_)
        # a tenant key given usernames still watches only emails and domains: an alert is
        # sent as records land, before any search could filter them
        st, body = self.watch(self.kb, "username", "carol")
        self.assertEqual((st, body["error"]), (403, "type_not_allowed"))
        st, mine = self.watch(self.ka, "email_domain", "mail.acme.example")
        self.assertEqual(st, 201, mine)
        st, theirs = self.watch(self.kb, "email", "carol@globex.example")
        self.assertEqual(st, 201, theirs)
        st, _, raw = self.call(self.kb, "GET", "/v7/watches")
        self.assertEqual([w["id"] for w in json.loads(raw)["watches"]], [theirs["id"]])
        st, _, raw = self.call(self.kb, "DELETE", "/v7/watches/%d" % mine["id"])
        self.assertEqual(st, 404, raw)
        st, _, raw = self.call(self.ka, "GET", "/v7/watches")
        self.assertEqual([w["id"] for w in json.loads(raw)["watches"]], [mine["id"]])
        st, _, raw = self.call(self.ka, "DELETE", "/v7/watches/%d" % mine["id"])
        self.assertEqual(st, 204, raw)

    # --- jobs -------------------------------------------------------------------------

    def submit(self, key, type_, ids):
        st, _, raw = self.call(key, "POST", "/v7/jobs?type=" + type_, "\n".join(ids).encode(),
                               headers={"Content-Type": "text/plain"})
        return st, json.loads(raw)

    def wait(self, key, job_id):
        deadline = time.time() + 30
        while time.time() < deadline:
            st, _, raw = self.call(key, "GET", "/v7/jobs/" + job_id)
            self.assertEqual(st, 200, raw)
            job = json.loads(raw)
            if job["status"] == "done":
                return job
            time.sleep(0.05)
        self.fail("job %s not done" % job_id)

    def results(self, key, job_id, accept=None):
        st, hdrs, raw = self.call(key, "GET", "/v7/jobs/%s/results" % job_id,
                                  headers={"Accept": accept} if accept else None)
        self.assertEqual(st, 200, raw)
        if accept == "text/csv":
            return list(csv.DictReader(io.StringIO(raw.decode(), newline="")))
        return [json.loads(line) for line in raw.decode().splitlines()]

    def test_job_lines_out_of_scope(self):
        ids = ["alice@acme.example", "carol@globex.example", "bob@mail.acme.example",
               "mallory@notacme.example", "ghost@acme.example"]
        st, job = self.submit(self.ka, "email", ids)
        self.assertEqual(st, 202, job)
        self.assertEqual(self.wait(self.ka, job["id"])["total"], 5)
        lines = self.results(self.ka, job["id"])
        self.assertEqual([(l["index"], l["account"], l.get("status"), l["found"]) for l in lines],
                         [(0, "alice@acme.example", None, 2),
                          (1, "carol@globex.example", "out_of_scope", 0),
                          (2, "bob@mail.acme.example", None, 1),
                          (3, "mallory@notacme.example", "out_of_scope", 0),
                          (4, "ghost@acme.example", None, 0)])
        self.assertEqual([l["breaches"] for l in lines if l.get("status")], [[], []])
        self.assertEqual(sorted(b["source_name"] for b in lines[0]["breaches"]),
                         ["Acme Leak", "Shared Dump"])
        rows = self.results(self.ka, job["id"], accept="text/csv")
        self.assertEqual(list(rows[0])[-2:], ["severity", "status"])
        self.assertEqual([(r["index"], r["found"], r["status"]) for r in rows],
                         [("0", "2", ""), ("0", "2", ""), ("1", "0", "out_of_scope"),
                          ("2", "1", ""), ("3", "0", "out_of_scope"), ("4", "0", "")])
        self.assertEqual([r["email"] for r in rows if r["status"]], ["", ""])
        # another tenant cannot see, read or guess the job
        for path in ("/v7/jobs/" + job["id"], "/v7/jobs/%s/results" % job["id"]):
            st, _, raw = self.call(self.kb, "GET", path)
            self.assertEqual((st, json.loads(raw)["error"]), (404, "not_found"))

    def test_job_of_other_types_runs_in_the_tenants_records(self):
        st, job = self.submit(self.kb, "username", ["shared_user", "pager", "alice"])
        self.assertEqual(st, 202, job)
        self.wait(self.kb, job["id"])
        lines = self.results(self.kb, job["id"])
        self.assertEqual([(l["account"], l["found"]) for l in lines],
                         [("shared_user", 1), ("pager", 7), ("alice", 0)])
        got = sorted(r["email"] for b in lines[1]["breaches"] for r in b["records"])
        self.assertEqual(got, ["g%02d@globex.example" % i for i in range(7)])
        # the operator's job of the same identities sees every record
        st, job = self.submit(self.op, "username", ["shared_user", "pager", "alice"])
        self.wait(self.op, job["id"])
        self.assertEqual([l["found"] for l in self.results(self.op, job["id"])], [4, 12, 1])

    def test_job_of_a_type_the_key_lacks_is_refused_whole(self):
        for key, type_, ident in ((self.ka, "username", "alice"),
                                  (self.ka_cards, "email_domain", "acme.example"),
                                  (self.only_user, "email", "alice@acme.example")):
            st, body = self.submit(key, type_, [ident])
            self.assertEqual((st, body["error"]), (403, "type_not_allowed"), type_)

    # --- status and changes ---------------------------------------------------------------

    def test_status_and_changes_for_a_tenant_key(self):
        st, mine = self.srv.get("/v7/status", key=self.ka)
        st2, full = self.srv.get("/v7/status", key=self.op)
        self.assertEqual((st, st2), (200, 200))
        self.assertEqual((mine["breaches"], mine["records"], mine["cards"]), (3, None, None))
        self.assertEqual((full["breaches"], full["records"], full["cards"]), (3, 19, 0))
        self.assertEqual(mine["data_version"], full["data_version"])
        # again, from the reply cache: still the tenant's shape
        self.assertEqual(self.srv.get("/v7/status", key=self.ka)[1], mine)
        self.assertEqual(self.srv.get("/v7/status", key=self.op)[1], full)
        st, all_ = self.srv.get("/v7/changes?limit=1000", key=self.op)
        kinds = sorted({c["kind"] for c in all_["changes"]})
        self.assertIn("records_added", kinds)
        st, feed = self.srv.get("/v7/changes?limit=1000", key=self.ka)
        want = [c for c in all_["changes"] if c["kind"].startswith("breach_")]
        # each breach added, then its identity count changed by the records import
        self.assertEqual(sorted(c["kind"] for c in want),
                         ["breach_added"] * 3 + ["breach_changed"] * 3)
        self.assertEqual(feed["changes"], want)
        self.assertEqual(feed["more"], False)
        # paged one at a time, a tenant's feed gives the same rows
        got, since = [], 0
        while True:
            st, page = self.srv.get("/v7/changes?limit=1&since=%d" % since, key=self.ka)
            got += page["changes"]
            since = page["next"]
            if not page["more"]:
                break
        self.assertEqual(got, want)

    # --- who may call from where ----------------------------------------------------------

    def test_allow_ip(self):
        before = self.metric("ip_not_allowed")
        q = "/v7/breach-search?type=email&account=alice%40acme.example"
        st, body = self.srv.get(q, key=self.from_two)
        self.assertEqual((st, body["error"]), (403, "ip_not_allowed"))
        st, body = self.srv.get(q, key=self.from_two, source="127.0.0.2")
        self.assertEqual((st, body["records_found"]), (200, 2))
        st, _, raw = self.call(self.from_two, "GET", "/api/v3/breachedaccount/alice%40acme.example",
                               hibp=True)
        self.assertEqual((st, json.loads(raw)["error"]), (403, "ip_not_allowed"))
        # without --trusted-proxy, a forwarded address is the client's own words
        st, body = self.srv.get(q, key=self.behind, headers={"X-Forwarded-For": "198.51.100.7"})
        self.assertEqual((st, body["error"]), (403, "ip_not_allowed"))
        self.assertEqual(self.metric("ip_not_allowed"), before + 3)

    def test_trusted_proxy(self):
        srv = Server(self.ctl, "--trusted-proxy", "127.0.0.1", "--access-log",
                     self.ctl.dir + "/proxy-access.log")
        try:
            q = "/v7/breach-search?type=email&account=alice%40acme.example"

            def get(xff=None, source=None, key=self.behind):
                h = {"X-Forwarded-For": xff} if xff is not None else None
                return srv.get(q, key=key, headers=h, source=source)

            self.assertEqual(get("198.51.100.7")[0], 200)
            self.assertEqual(get("203.0.113.1, 198.51.100.7")[0], 200)  # forged left part
            self.assertEqual(get("2001:db8::77")[0], 200)
            for xff in (None, "198.51.100.7, 203.0.113.1", "198.51.100.8", "unknown", ""):
                st, body = get(xff)
                self.assertEqual((st, body["error"]), (403, "ip_not_allowed"), xff)
            # a peer that is no trusted proxy: its header is not believed
            st, body = get("198.51.100.7", source="127.0.0.2")
            self.assertEqual((st, body["error"]), (403, "ip_not_allowed"))
            # behind the proxy, the key limited to 127.0.0.2 is refused: its client is not
            self.assertEqual(get("198.51.100.7", key=self.from_two)[0], 403)
            # the access log names the client, not the proxy
            st, _, _ = srv.request("/healthz", headers={"X-Forwarded-For": "192.0.2.55"})
            self.assertEqual(st, 200)
        finally:
            self.assertEqual(srv.stop(), 0)
        with open(self.ctl.dir + "/proxy-access.log") as f:
            lines = [json.loads(line) for line in f]
        self.assertEqual([l["client"] for l in lines][:3],
                         ["198.51.100.7", "198.51.100.7", "2001:db8::77"])
        self.assertEqual(lines[-1]["client"], "192.0.2.55")


if __name__ == "__main__":
    unittest.main()
