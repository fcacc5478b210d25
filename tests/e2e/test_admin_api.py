"""The admin API (/v7/admin/...): tenants, keys, usage, the audit trail and the lookup log,
with an admin key made by breachctl; every other key (a tenant's, a user's) refused on every
admin route. Each write's audit row is checked exactly, and no audit row holds a key's text."""
import json
import re
import time
import unittest

from harness import STORE, Ctl, Server, fixture

KEY_RE = re.compile(r"bd_[A-Za-z0-9_-]{43}")
WHEN_RE = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")

# every admin route: (method, path with an id where it takes one)
ROUTES = [("GET", "/v7/admin/tenants"), ("POST", "/v7/admin/tenants"),
          ("GET", "/v7/admin/tenants/1"), ("PATCH", "/v7/admin/tenants/1"),
          ("DELETE", "/v7/admin/tenants/1"), ("GET", "/v7/admin/tenants/1/usage"),
          ("GET", "/v7/admin/keys"), ("POST", "/v7/admin/keys"), ("GET", "/v7/admin/keys/1"),
          ("PATCH", "/v7/admin/keys/1"), ("DELETE", "/v7/admin/keys/1"),
          ("GET", "/v7/admin/audit"), ("POST", "/v7/admin/lookups")]


class Admin(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.ctl = Ctl().init()
        cls.ctl.import_("breaches", fixture("breaches.jsonl"))
        p = cls.ctl.run("tenants", "add", "acme", "--domain", "acme.example", check=0)
        cls.acme = int(p.stdout.decode().strip())
        # keys made before the server starts need no wait for its key refresh
        cls.admin = cls.ctl.key("root", "--role", "admin")
        cls.user = cls.ctl.key("user", "--plan", "enterprise")
        cls.user2 = cls.ctl.key("user2", "--plan", "enterprise")
        cls.tenant_key = cls.ctl.key("acme-key", "--tenant", str(cls.acme))
        cls.srv = Server(cls.ctl)
        keys = cls.call_as(cls.admin, "GET", "/v7/admin/keys")[1]["keys"]
        cls.ids = {k["name"]: k["id"] for k in keys}

    @classmethod
    def tearDownClass(cls):
        rc = cls.srv.stop()
        cls.ctl.cleanup()
        assert rc == 0, "breachd exited %d on SIGTERM" % rc

    # --- helpers ----------------------------------------------------------------------

    @classmethod
    def call_as(cls, key, method, path, body=None, raw=False):
        data = body if isinstance(body, (bytes, type(None))) else json.dumps(body).encode()
        st, hdrs, out = cls.srv.request(path, key=key, method=method, body=data,
                                        headers={"Content-Type": "application/json"} if data
                                        is not None else None)
        if raw:
            return st, hdrs, out
        return st, (json.loads(out) if out else None)

    def call(self, method, path, body=None):
        return self.call_as(self.admin, method, path, body)

    def assertError(self, got, status, code):
        st, body = got
        self.assertEqual(st, status, body)
        self.assertEqual(set(body), {"error", "message"}, body)
        self.assertEqual(body["error"], code, body)
        self.assertTrue(body["message"])

    def audit_of(self, kind, target):
        """The admin key's audit rows about a tenant or key (kind) id, newest first."""
        st, page = self.call("GET", "/v7/admin/audit?limit=1000")
        self.assertEqual(st, 200, page)
        return [r for r in page["audit"] if r["target"] == str(target) and
                r["action"].startswith(kind + ".") and r["key_id"] == self.ids["root"]]

    def check_row(self, row, action, target, before, after):
        self.assertEqual(set(row), {"id", "at", "key_id", "address", "action", "target",
                                    "before", "after"})
        self.assertRegex(row["at"], WHEN_RE)
        self.assertEqual((row["key_id"], row["address"], row["action"], row["target"],
                          row["before"], row["after"]),
                         (self.ids["root"], "127.0.0.1", action, str(target), before, after))

    def new_tenant(self, name, domains):
        st, t = self.call("POST", "/v7/admin/tenants", {"name": name, "domains": domains})
        self.assertEqual(st, 201, t)
        return t

    # --- access -----------------------------------------------------------------------

    def test_every_admin_route_refuses_every_other_key(self):
        before = self.call("GET", "/v7/admin/audit?limit=1000")[1]["audit"]
        for key in (self.user, self.tenant_key):
            for method, path in ROUTES:
                body = {"name": "x"} if method in ("POST", "PATCH") else None
                self.assertError(self.call_as(key, method, path, body), 403, "forbidden")
        for method, path in ROUTES:  # no key, a wrong key: as everywhere under /v7
            self.assertError(self.call_as(None, method, path), 401, "unauthorized")
            self.assertError(self.call_as("bd_" + "A" * 43, method, path), 403,
                             "authentication_failed")
        # nothing was done: no audit row, no tenant x
        self.assertEqual(self.call("GET", "/v7/admin/audit?limit=1000")[1]["audit"], before)
        names = [t["name"] for t in self.call("GET", "/v7/admin/tenants")[1]["tenants"]]
        self.assertNotIn("x", names)

    def test_methods_a_route_does_not_answer_get_405(self):
        st, hdrs, _ = self.call_as(self.admin, "PUT", "/v7/admin/tenants", raw=True)
        self.assertEqual((st, hdrs["allow"]), (405, "GET, HEAD, POST"))
        st, hdrs, _ = self.call_as(self.admin, "GET", "/v7/admin/lookups", raw=True)
        self.assertEqual((st, hdrs["allow"]), (405, "POST"))

    # --- tenants ----------------------------------------------------------------------

    def test_tenant_create_change_delete_and_their_audit_rows(self):
        st, hdrs, raw = self.call_as(self.admin, "POST", "/v7/admin/tenants",
                                     {"name": "globex", "domains": [" Globex.Example",
                                                                    "@mail.initech.example",
                                                                    "globex.example"]},
                                     raw=True)
        t = json.loads(raw)
        self.assertEqual(st, 201, t)
        tid = t["id"]
        self.assertEqual(hdrs["location"], "/v7/admin/tenants/%d" % tid)
        self.assertRegex(t["created_at"], WHEN_RE)
        created = {"id": tid, "name": "globex", "domains": ["globex.example",
                                                            "mail.initech.example"],
                   "created_at": t["created_at"]}
        self.assertEqual(t, created)
        self.assertEqual(self.call("GET", "/v7/admin/tenants/%d" % tid), (200, created))
        listed = self.call("GET", "/v7/admin/tenants")[1]["tenants"]
        self.assertIn(created, listed)
        self.assertIn({"id": self.acme, "name": "acme", "domains": ["acme.example"],
                       "created_at": listed[[x["id"] for x in listed].index(self.acme)][
                           "created_at"]}, listed)

        st, renamed = self.call("PATCH", "/v7/admin/tenants/%d" % tid, {"name": "globex2"})
        self.assertEqual((st, renamed), (200, dict(created, name="globex2")))
        st, moved = self.call("PATCH", "/v7/admin/tenants/%d" % tid,
                              {"domains": ["globex.test", "globex.example"]})
        after = dict(created, name="globex2", domains=["globex.example", "globex.test"])
        self.assertEqual((st, moved), (200, after))
        self.assertEqual(self.call("DELETE", "/v7/admin/tenants/%d" % tid), (204, None))
        self.assertError(self.call("GET", "/v7/admin/tenants/%d" % tid), 404, "not_found")
        self.assertError(self.call("DELETE", "/v7/admin/tenants/%d" % tid), 404, "not_found")

        rows = self.audit_of("tenant", tid)
        self.assertEqual(len(rows), 4, rows)
        self.check_row(rows[3], "tenant.create", tid, None, created)
        self.check_row(rows[2], "tenant.update", tid, created, dict(created, name="globex2"))
        self.check_row(rows[1], "tenant.update", tid, dict(created, name="globex2"), after)
        self.check_row(rows[0], "tenant.delete", tid, after, None)
        self.assertEqual([r["id"] for r in rows], sorted((r["id"] for r in rows), reverse=True))

    def test_tenant_conflicts_change_nothing(self):
        t = self.new_tenant("initrode", ["initrode.example"])
        self.assertError(self.call("POST", "/v7/admin/tenants", {"name": "initrode"}), 409,
                         "tenant_exists")
        # a subdomain of another tenant's domain: refused, and the tenant not made either
        self.assertError(self.call("POST", "/v7/admin/tenants",
                                   {"name": "sub", "domains": ["ok.example", "x.acme.example"]}),
                         409, "domain_taken")
        self.assertError(self.call("POST", "/v7/admin/tenants",
                                   {"name": "parent", "domains": ["example"]}), 422,
                         "validation_error")  # one label: not a domain name
        names = [x["name"] for x in self.call("GET", "/v7/admin/tenants")[1]["tenants"]]
        self.assertNotIn("sub", names)
        self.assertError(self.call("PATCH", "/v7/admin/tenants/%d" % t["id"],
                                   {"name": "other", "domains": ["acme.example"]}), 409,
                         "domain_taken")
        self.assertError(self.call("PATCH", "/v7/admin/tenants/%d" % t["id"], {"name": "acme"}),
                         409, "tenant_exists")
        self.assertEqual(self.call("GET", "/v7/admin/tenants/%d" % t["id"]), (200, t))
        # the tenant with an active key cannot go
        self.assertError(self.call("DELETE", "/v7/admin/tenants/%d" % self.acme), 409,
                         "tenant_has_keys")
        self.assertEqual(len(self.audit_of("tenant", t["id"])), 1)  # its create alone
        self.assertEqual(self.audit_of("tenant", self.acme), [])

    def test_tenant_bad_input(self):
        for body, status, code in (
                (b"{", 400, "invalid_json"), (b"[]", 400, "invalid_json"),
                ({"domains": ["a.example"]}, 422, "validation_error"),
                ({"name": ""}, 422, "validation_error"),
                ({"name": "n" * 65}, 422, "validation_error"),
                ({"name": "a\nb"}, 422, "validation_error"),
                ({"name": "ok", "domains": "a.example"}, 422, "validation_error"),
                ({"name": "ok", "domains": [1]}, 422, "validation_error"),
                ({"name": "ok", "domains": ["x.example"] * 101}, 422, "validation_error"),
                ({"name": "ok", "extra": 1}, 422, "validation_error")):
            self.assertError(self.call("POST", "/v7/admin/tenants", body), status, code)
        self.assertError(self.call("PATCH", "/v7/admin/tenants/%d" % self.acme, {}), 422,
                         "validation_error")
        self.assertError(self.call("POST", "/v7/admin/tenants", b"{" + b" " * 70000 + b"}"),
                         413, "payload_too_large")
        for path in ("/v7/admin/tenants/abc", "/v7/admin/tenants/0", "/v7/admin/tenants/99999",
                     "/v7/admin/tenants/99999/usage", "/v7/admin/keys/x1",
                     "/v7/admin/keys/99999"):
            self.assertError(self.call("GET", path), 404, "not_found")

    # --- keys -------------------------------------------------------------------------

    def test_key_create_change_revoke_and_their_audit_rows(self):
        st, hdrs, raw = self.call_as(self.admin, "POST", "/v7/admin/keys", {
            "name": "svc", "plan": "enterprise", "tenant": self.acme,
            "types": ["email", "username"], "allow_ip": ["127.0.0.0/8", "::1"],
            "quota": 1000, "expires_at": "2099-01-02"}, raw=True)
        k = json.loads(raw)
        self.assertEqual(st, 201, k)
        kid = k["id"]
        self.assertEqual(hdrs["location"], "/v7/admin/keys/%d" % kid)
        text = k.pop("key")
        self.assertRegex(text, "^" + KEY_RE.pattern + "$")
        shown = {"id": kid, "name": "svc", "plan": "enterprise", "role": "user",
                 "tenant": self.acme, "types": ["email", "username"],
                 "allow_ip": ["127.0.0.0/8", "::1/128"], "rate_per_hour": k["rate_per_hour"],
                 "quota_per_month": 1000, "created_at": k["created_at"],
                 "expires_at": "2099-01-02T00:00:00Z", "revoked_at": None, "status": "active"}
        self.assertEqual(k, shown)
        self.assertGreater(k["rate_per_hour"], 0)
        self.assertEqual(self.call("GET", "/v7/admin/keys/%d" % kid), (200, shown))
        # the new key works once the servers' keyrings reload (within a few seconds)
        deadline = time.time() + 10
        while self.call_as(text, "GET", "/v7/usage")[0] != 200 and time.time() < deadline:
            time.sleep(0.2)
        self.assertEqual(self.call_as(text, "GET", "/v7/usage")[0], 200)

        st, changed = self.call("PATCH", "/v7/admin/keys/%d" % kid, {
            "name": "svc2", "plan": "standard", "rate": 50, "quota": None, "types": None,
            "allow_ip": [], "expires_at": "2098-05-06T07:08:09Z"})
        after = dict(shown, name="svc2", plan="standard", rate_per_hour=50,
                     quota_per_month=None, types=["email", "email_domain"], allow_ip=[],
                     expires_at="2098-05-06T07:08:09Z")
        self.assertEqual((st, changed), (200, after))
        self.assertEqual(self.call("DELETE", "/v7/admin/keys/%d" % kid), (204, None))
        st, revoked = self.call("GET", "/v7/admin/keys/%d" % kid)
        self.assertEqual(revoked["status"], "revoked")
        self.assertRegex(revoked["revoked_at"], WHEN_RE)
        self.assertError(self.call("DELETE", "/v7/admin/keys/%d" % kid), 404, "not_found")
        self.assertError(self.call("PATCH", "/v7/admin/keys/%d" % kid, {"name": "z"}), 404,
                         "not_found")
        deadline = time.time() + 10
        while self.call_as(text, "GET", "/v7/usage")[0] == 200 and time.time() < deadline:
            time.sleep(0.2)
        self.assertError(self.call_as(text, "GET", "/v7/usage"), 403, "authentication_failed")

        rows = self.audit_of("key", kid)
        self.assertEqual(len(rows), 3, rows)
        self.check_row(rows[2], "key.create", kid, None, shown)
        self.check_row(rows[1], "key.update", kid, shown, after)
        self.check_row(rows[0], "key.revoke", kid, after, revoked)
        # the key's text is in no audit row and in no listing
        st, _, audit_raw = self.call_as(self.admin, "GET", "/v7/admin/audit?limit=1000", raw=True)
        self.assertNotIn(text.encode(), audit_raw)
        self.assertNotIn(text[3:].encode(), audit_raw)
        st, _, list_raw = self.call_as(self.admin, "GET", "/v7/admin/keys", raw=True)
        self.assertNotIn(text.encode(), list_raw)
        self.assertEqual(KEY_RE.findall(audit_raw.decode() + list_raw.decode()), [])
        for item in json.loads(list_raw)["keys"]:
            self.assertNotIn("key", item)

    def test_an_admin_key_made_by_the_api_can_use_the_api(self):
        st, k = self.call("POST", "/v7/admin/keys", {"name": "ops", "role": "admin"})
        self.assertEqual(st, 201, k)
        self.assertEqual((k["role"], k["tenant"], k["plan"]), ("admin", None, "standard"))
        deadline = time.time() + 10
        while self.call_as(k["key"], "GET", "/v7/admin/keys")[0] != 200 and \
                time.time() < deadline:
            time.sleep(0.2)
        self.assertEqual(self.call_as(k["key"], "GET", "/v7/admin/keys")[0], 200)

    def test_key_bad_input(self):
        for body in ({"plan": "standard"}, {"name": "x", "plan": "gold"},
                     {"name": "x", "role": "admin", "tenant": self.acme},
                     {"name": "x", "role": "root"}, {"name": "x", "tenant": 99999},
                     {"name": "x", "tenant": "1"}, {"name": "x", "types": ["nope"]},
                     {"name": "x", "types": []}, {"name": "x", "allow_ip": ["10.0.0.1/8"]},
                     {"name": "x", "allow_ip": ["10.0.0.0/8"] * 17},
                     {"name": "x", "quota": 0}, {"name": "x", "quota": 1.5},
                     {"name": "x", "expires_at": "2001-01-01"},
                     {"name": "x", "expires_at": "tomorrow"}, {"name": "x", "secret": "s"},
                     {"name": "x", "rate": 0}):
            self.assertError(self.call("POST", "/v7/admin/keys", body), 422, "validation_error")
        self.assertError(self.call("POST", "/v7/admin/keys", b"not json"), 400, "invalid_json")
        uid = self.ids["user"]
        for body in ({}, {"tenant": 1}, {"role": "admin"}, {"quota": -1}, {"types": ["x"]}):
            self.assertError(self.call("PATCH", "/v7/admin/keys/%d" % uid, body), 422,
                             "validation_error")
        names = [k["name"] for k in self.call("GET", "/v7/admin/keys")[1]["keys"]]
        self.assertNotIn("x", names)
        self.assertEqual(self.audit_of("key", uid), [])

    # --- usage ------------------------------------------------------------------------

    def test_tenant_usage_sums_its_keys(self):
        t = self.new_tenant("umbrella", ["umbrella.example"])
        a = self.call("POST", "/v7/admin/keys", {"name": "u-a", "tenant": t["id"]})[1]
        b = self.call("POST", "/v7/admin/keys", {"name": "u-b", "tenant": t["id"]})[1]
        deadline = time.time() + 10
        while self.call_as(b["key"], "GET", "/v7/usage")[0] != 200 and time.time() < deadline:
            time.sleep(0.2)
        for key, n in ((a["key"], 3), (b["key"], 2)):
            for _ in range(n):
                self.assertEqual(self.call_as(key, "GET", "/v7/breaches")[0], 200)
        st, use = self.call("GET", "/v7/admin/tenants/%d/usage" % t["id"])
        self.assertEqual(st, 200, use)
        self.assertRegex(use.pop("month_resets_at"), WHEN_RE)
        self.assertEqual(use, {"tenant": t["id"], "requests_today": 5, "requests_this_month": 5,
                               "keys": [{"id": a["id"], "name": "u-a", "revoked": False,
                                         "requests_today": 3, "requests_this_month": 3},
                                        {"id": b["id"], "name": "u-b", "revoked": False,
                                         "requests_today": 2, "requests_this_month": 2}]})

    # --- audit paging -----------------------------------------------------------------

    def test_audit_pages_newest_first(self):
        for i in range(3):
            self.new_tenant("page%d" % i, [])
        st, whole = self.call("GET", "/v7/admin/audit?limit=1000")
        ids = [r["id"] for r in whole["audit"]]
        self.assertEqual(ids, sorted(ids, reverse=True))
        self.assertIsNone(whole["next_before"])
        st, first = self.call("GET", "/v7/admin/audit?limit=2")
        self.assertEqual([r["id"] for r in first["audit"]], ids[:2])
        self.assertEqual(first["next_before"], ids[1])
        st, second = self.call("GET", "/v7/admin/audit?limit=2&before=%d" % ids[1])
        self.assertEqual([r["id"] for r in second["audit"]], ids[2:4])
        for q in ("limit=0", "limit=1001", "before=0", "before=x", "other=1"):
            st, body = self.call("GET", "/v7/admin/audit?" + q)
            self.assertIn(st, (400, 422), (q, body))

    # --- lookup log -------------------------------------------------------------------

    def test_lookups_find_the_searches_of_two_keys(self):
        who = "Lookup.Person@Example.com"
        self.assertIn(self.call_as(self.user, "GET",
                                   "/v7/breach-search?type=email&account=" + who)[0], (200, 404))
        st, _, _ = self.srv.request("/api/v3/breachedaccount/lookup.person@example.com",
                                    key=self.user2)
        self.assertIn(st, (200, 404))
        st, _, _ = self.srv.request("/v7/jobs", key=self.user2, method="POST",
                                    headers={"Content-Type": "application/json"},
                                    body=json.dumps({"type": "email",
                                                     "accounts": [" LOOKUP.person@example.com",
                                                                  "someone@else.example"]}))
        self.assertEqual(st, 202)
        self.call_as(self.user, "GET", "/v7/breach-search?type=username&account=lookup.person")
        st, found = self.call("POST", "/v7/admin/lookups",
                              {"type": "email", "account": " lookup.person@EXAMPLE.com"})
        self.assertEqual(st, 200, found)
        got = [(r["key_id"], r["key_name"], r["type"]) for r in found["lookups"]]
        self.assertEqual(sorted(got), sorted([
            (self.ids["user"], "user", "email"), (self.ids["user2"], "user2", "email"),
            (self.ids["user2"], "user2", "email")]))
        self.assertFalse(found["truncated"])
        for r in found["lookups"]:
            self.assertRegex(r["at"], WHEN_RE)
        # the username search is another identity; a third nobody searched finds nothing
        st, found = self.call("POST", "/v7/admin/lookups",
                              {"type": "username", "account": "Lookup.Person"})
        self.assertEqual([(r["key_id"], r["type"]) for r in found["lookups"]],
                         [(self.ids["user"], "username")])
        self.assertEqual(self.call("POST", "/v7/admin/lookups",
                                   {"type": "email", "account": "nobody@x.example"}),
                         (200, {"lookups": [], "truncated": False}))
        # the log holds the identity only as its keyed hash
        col = "hex(hash)" if STORE == "sqlite" else "encode(hash, 'hex')"
        for (h,) in self.ctl.sql("SELECT %s FROM lookups" % col):
            self.assertRegex(h.lower(), "^[0-9a-f]{64}$")
        for body in ({"type": "nope", "account": "a"}, {"type": "email", "account": "no-at"},
                     {"type": "email"}, {"type": "email", "account": 5},
                     {"type": "email", "account": "a@b.example", "more": 1}):
            self.assertError(self.call("POST", "/v7/admin/lookups", body), 422,
                             "validation_error")


class LookupRetention(unittest.TestCase):
    """--lookup-retention DAYS: rows older than that are deleted at start (and daily); 0
    keeps nothing and logs nothing."""

    def setUp(self):
        self.ctl = Ctl().init()
        self.admin = self.ctl.key("root", "--role", "admin")
        self.user = self.ctl.key("user")
        now = int(time.time())
        blob = ("X'%s'" if STORE == "sqlite" else "'\\x%s'::bytea")
        for at, fill in ((now - 3 * 86400, "aa"), (now - 2 * 86400 + 600, "bb"), (now - 60, "cc")):
            self.ctl.sql("INSERT INTO lookups (at, key_id, type, hash) VALUES (%d, 2, 0, %s)"
                         % (at, blob % (fill * 32)))

    def tearDown(self):
        self.ctl.cleanup()

    def hashes(self):
        col = "hex(hash)" if STORE == "sqlite" else "encode(hash, 'hex')"
        return sorted(r[0].lower()[:2] for r in self.ctl.sql("SELECT %s FROM lookups" % col))

    def test_rows_past_the_retention_go_at_start(self):
        self.assertEqual(self.hashes(), ["aa", "bb", "cc"])
        srv = Server(self.ctl, "--lookup-retention", "2")
        try:
            self.assertEqual(self.hashes(), ["bb", "cc"])
            st, _, _ = srv.request("/v7/breach-search?type=email&account=kept@x.example",
                                   key=self.user)
            self.assertIn(st, (200, 404))
            st, _, raw = srv.request("/v7/admin/lookups", key=self.admin, method="POST",
                                     body=json.dumps({"type": "email",
                                                      "account": "kept@x.example"}).encode())
            self.assertEqual((st, len(json.loads(raw)["lookups"])), (200, 1))
        finally:
            self.assertEqual(srv.stop(), 0)
        self.assertEqual(len(self.hashes()), 3)

    def test_zero_keeps_nothing(self):
        srv = Server(self.ctl, "--lookup-retention", "0")
        try:
            self.assertEqual(self.hashes(), [])
            st, _, _ = srv.request("/v7/breach-search?type=email&account=gone@x.example",
                                   key=self.user)
            self.assertIn(st, (200, 404))
            st, _, raw = srv.request("/v7/admin/lookups", key=self.admin, method="POST",
                                     body=json.dumps({"type": "email",
                                                      "account": "gone@x.example"}).encode())
            self.assertEqual((st, json.loads(raw)), (200, {"lookups": [], "truncated": False}))
        finally:
            self.assertEqual(srv.stop(), 0)
        self.assertEqual(self.hashes(), [])

    def test_the_last_searches_are_written_at_stop(self):
        srv = Server(self.ctl)
        try:
            for i in range(5):
                st, _, _ = srv.request("/v7/breach-search?type=email&account=s%d@x.example" % i,
                                       key=self.user)
                self.assertIn(st, (200, 404))
        finally:
            self.assertEqual(srv.stop(), 0)
        self.assertEqual(len(self.hashes()), 3 + 5)


if __name__ == "__main__":
    unittest.main()
