"""The website of a stealer log, searchable (issue 35): records imported with a website (a
stealer log's URL, a CSV column mapped to `website`, JSON Lines' website or other_attributes
site) keep its host (lower-cased, IDNA to ASCII, no scheme, user info, port or path) as
website_domain: searched through v7 breach-search, as a =yes/=no filter, a bulk job and a
watch, scoped by tenant like the other non-email types; on the store under test."""
import json
import time
import unittest
import urllib.parse

from harness import STORE, Ctl, Server
from test_watches import SIGNING, Receiver, call

STEALER = "3e5a0000-0000-4000-8000-000000000001"
COMBOS = "3e5a0000-0000-4000-8000-000000000002"
BREACHES = [
    {"uuid": STEALER, "source_name": "Stealer Logs Nov", "site_domain": "stealer.example",
     "date_leaked": "2024-11-01", "leaked_data_types": "email,username,password",
     "is_stealer_log": "true"},
    {"uuid": COMBOS, "source_name": "Old Combos", "site_domain": "combos.example",
     "date_leaked": "2020-01-01", "leaked_data_types": "email,password"},
]
STEALER_LOG = ("https://Accounts.Shop.Example:8443/login:ann@acme.example:pw-ann-1\n"
               "https://accounts.shop.example/reset|bob@globex.example|pw-bob-2\n"
               "android://key==@com.example.app/:carol@acme.example:pw-carol-3\n"
               "https://b\u00fccher.example/konto:dave@outsider.example:pw-dave-4\n"
               "http://under_score.example/:erin@acme.example:pw-erin-5\n")
MAPPED_CSV = ("URL,Email,Pass\n"
              "https://frank:x@ACCOUNTS.shop.example/,frank@acme.example,pw-frank-6\n")


def search(srv, key, **params):
    st, body = srv.get("/v7/breach-search?" + urllib.parse.urlencode(params), key=key)
    return st, body


def emails(body):
    return sorted(r["breached_data"]["email"] for r in body["data"])


class WebsiteDomain(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.ctl = ctl = Ctl().init()
        ctl.import_("breaches", ctl.write("b.jsonl", "\n".join(json.dumps(b) for b in BREACHES)))
        ctl.import_("records", ctl.write("s.txt", STEALER_LOG), "--format", "stealer",
                    "--breach", STEALER)
        ctl.import_("records", ctl.write("m.csv", MAPPED_CSV), "--breach", STEALER,
                    "--map", "URL=website,Email=email,Pass=password")
        ctl.import_("records", ctl.write("r.jsonl", "\n".join(json.dumps(r) for r in [
            {"breach_uuid": COMBOS, "email": "ann@acme.example", "password": "old-ann"},
            {"breach_uuid": COMBOS, "email": "gina@acme.example", "password": "pw-gina",
             "other_attributes": {"site": "Forum.Example.org", "browser": "Chrome"}},
            {"breach_uuid": COMBOS, "user_name": "hank", "website": "https://www.example.net/a",
             "other_attributes": {"site": "shown.example"}}])))
        cls.acme = int(ctl.run("tenants", "add", "acme", "--domain", "acme.example",
                               check=0).stdout.decode().strip())
        cls.op = ctl.key("operator", "--plan", "enterprise")
        cls.ka = ctl.key("acme", "--tenant", str(cls.acme), "--types", "email,website_domain")
        cls.ka_default = ctl.key("acme-default", "--tenant", str(cls.acme))
        cls.only_email = ctl.key("emails", "--types", "email")
        cls.srv = Server(ctl)

    @classmethod
    def tearDownClass(cls):
        rc = cls.srv.stop()
        cls.ctl.cleanup()
        assert rc == 0, "breachd exited %d on SIGTERM" % rc

    def test_import_keeps_the_normalised_host_and_shows_the_site_as_before(self):
        rows = self.ctl.sql("SELECT coalesce(email, user_name), coalesce(website_domain, '-'), "
                            "coalesce(other_attributes, '-') FROM records")
        # each record's values; the order records are written in is test_import's
        self.assertEqual(sorted(tuple(r) for r in rows), sorted([
            ("ann@acme.example", "accounts.shop.example", '{"site":"accounts.shop.example"}'),
            ("bob@globex.example", "accounts.shop.example", '{"site":"accounts.shop.example"}'),
            ("carol@acme.example", "com.example.app", '{"site":"com.example.app"}'),
            ("dave@outsider.example", "xn--bcher-kva.example", '{"site":"b\u00fccher.example"}'),
            # a host that is no host name stays shown and is not searchable
            ("erin@acme.example", "-", '{"site":"under_score.example"}'),
            ("frank@acme.example", "accounts.shop.example", '{"site":"accounts.shop.example"}'),
            ("ann@acme.example", "-", "-"),
            ("gina@acme.example", "forum.example.org",
             '{"site":"Forum.Example.org","browser":"Chrome"}'),
            ("hank", "www.example.net", '{"site":"shown.example"}')]))

    def test_a_bad_website_column_rejects_its_row(self):
        f = self.ctl.write("bad.jsonl", json.dumps({"breach_uuid": COMBOS, "email": "x@y.example",
                                                    "website": "https://[2001:db8::1]/"}) + "\n")
        p = self.ctl.import_("records", f, "--dry-run", check=1)
        self.assertIn("bad.jsonl:1: rejected: website: a website domain must be a host name, "
                      "not an IPv6 address\n", p.stderr.decode())

    def test_v7_search_by_website_domain(self):
        st, body = search(self.srv, self.op, type="website_domain",
                          account="HTTPS://user@Accounts.Shop.Example:443/any/path?q=1")
        self.assertEqual(st, 200, body)
        self.assertEqual(body["records_found"], 3)
        self.assertEqual(emails(body), ["ann@acme.example", "bob@globex.example",
                                        "frank@acme.example"])
        for r in body["data"]:
            self.assertEqual(r["breached_data"]["other_attributes"],
                             '{"site":"accounts.shop.example"}')
            self.assertEqual(r["breach_details"]["uuid"], STEALER)
        for account in ("b\u00fccher.example", "https://B\u00dcCHER.example/", "xn--bcher-kva.example"):
            st, body = search(self.srv, self.op, type="WEBSITE_DOMAIN", account=account)
            self.assertEqual((st, emails(body)), (200, ["dave@outsider.example"]), account)
        st, body = search(self.srv, self.op, type="website_domain", account="shop.example")
        self.assertEqual((st, body["records_found"]), (404, 0))  # a host, not its parents

    def test_paging_a_website_domain_search(self):
        st, first = search(self.srv, self.op, type="website_domain",
                           account="accounts.shop.example", number_of_records=2)
        self.assertEqual((st, len(first["data"]), first["records_found"]), (200, 2, 3))
        st, rest = search(self.srv, self.op, paging_token=first["pagination_token"])
        self.assertEqual(st, 200, rest)
        self.assertEqual(sorted(emails(first) + emails(rest)),
                         ["ann@acme.example", "bob@globex.example", "frank@acme.example"])

    def test_bad_website_domain_is_a_422(self):
        for account, why in (("localhost", "a website domain must be a host name like "
                              "example.com, or a URL whose host is one"),
                             ("https://[::1]/", "a website domain must be a host name, not an "
                              "IPv6 address")):
            st, body = search(self.srv, self.op, type="website_domain", account=account)
            self.assertEqual(st, 422, body)
            self.assertEqual(body["error"], "validation_error")
            self.assertIn(why, body["message"])

    def test_website_domain_yes_and_no_filters(self):
        st, body = search(self.srv, self.op, type="email", account="ann@acme.example",
                          website_domain="yes")
        self.assertEqual((st, body["records_found"]), (200, 1))
        self.assertEqual(body["data"][0]["breach_details"]["uuid"], STEALER)
        st, body = search(self.srv, self.op, type="email", account="ann@acme.example",
                          website_domain="NO")
        self.assertEqual((st, body["records_found"]), (200, 1))
        self.assertEqual(body["data"][0]["breach_details"]["uuid"], COMBOS)
        st, body = search(self.srv, self.op, type="email_domain", account="acme.example",
                          website_domain="yes")
        self.assertEqual((st, emails(body)), (200, ["ann@acme.example", "carol@acme.example",
                                                    "frank@acme.example", "gina@acme.example"]))
        st, body = search(self.srv, self.op, type="email_domain", account="acme.example",
                          website_domain="no")
        self.assertEqual((st, emails(body)), (200, ["ann@acme.example", "erin@acme.example"]))
        st, body = search(self.srv, self.op, type="email_domain", account="acme.example",
                          website_domain="shop.example")
        self.assertEqual(st, 422, body)

    def test_tenant_key_sees_its_domains_records_only(self):
        st, body = search(self.srv, self.ka, type="website_domain",
                          account="accounts.shop.example")
        self.assertEqual(st, 200, body)
        self.assertEqual((body["records_found"], emails(body)),
                         (2, ["ann@acme.example", "frank@acme.example"]))
        st, body = search(self.srv, self.ka, type="website_domain", account="b\u00fccher.example")
        self.assertEqual((st, body["records_found"]), (404, 0))
        for key in (self.ka_default, self.only_email):
            st, body = search(self.srv, key, type="website_domain",
                              account="accounts.shop.example")
            self.assertEqual(st, 403, body)
            self.assertEqual(body["error"], "type_not_allowed")

    def test_key_types_name_website_domain(self):
        rows = {r[0]: r[1] for r in self.ctl.sql("SELECT name, types FROM api_keys")}
        self.assertEqual(rows["acme"], str(1 | 1 << 10))  # email, and website_domain's bit 10
        self.assertEqual(rows["emails"], "1")
        p = self.ctl.run("keys", "list", check=0).stdout.decode()
        self.assertIn("email,website_domain", p)

    def test_a_bulk_job_of_website_domains(self):
        accounts = ["https://Accounts.Shop.Example/", "com.example.app", "nothing.example"]
        st, body = call(self.srv, "POST", "/jobs", self.op,
                        {"type": "website_domain", "accounts": accounts})
        self.assertEqual(st, 202, body)
        deadline = time.time() + 60
        while True:
            st, job = call(self.srv, "GET", "/jobs/" + body["id"], self.op)
            if job["status"] in ("done", "failed") or time.time() > deadline:
                break
            time.sleep(0.05)
        self.assertEqual(job["status"], "done", job)
        _, _, raw = self.srv.request("/v7/jobs/%s/results" % body["id"], key=self.op)
        lines = [json.loads(line) for line in raw.decode().splitlines()]
        self.assertEqual([(l["index"], l["type"], l["account"], l["found"]) for l in lines], [
            (0, "website_domain", "accounts.shop.example", 3),
            (1, "website_domain", "com.example.app", 1),
            (2, "website_domain", "nothing.example", 0)])
        self.assertEqual(sorted(r["email"] for r in lines[0]["breaches"][0]["records"]),
                         ["ann@acme.example", "bob@globex.example", "frank@acme.example"])
        st, body = call(self.srv, "POST", "/jobs", self.op,
                        {"type": "website_domain", "accounts": ["localhost"]})
        self.assertEqual(st, 422, body)


class WebsiteWatch(unittest.TestCase):
    def setUp(self):
        self.ctl = Ctl().init()
        self.ctl.import_("breaches",
                         self.ctl.write("b.jsonl", "\n".join(json.dumps(b) for b in BREACHES)))
        self.key = self.ctl.key("owner")
        self.receiver = Receiver()
        self.srv = Server(self.ctl, "--webhook-allow", "127.0.0.0/8")

    def tearDown(self):
        rc = self.srv.stop()
        self.receiver.stop()
        self.ctl.cleanup()
        self.assertEqual(rc, 0, "breachd exited %d on SIGTERM" % rc)

    def test_a_watch_on_a_website_domain_is_alerted_by_a_later_import(self):
        st, watch = call(self.srv, "POST", "/watches", self.key,
                         {"type": "website_domain", "account": "https://Portal.Bank.Example/",
                          "secret": SIGNING,
                          "url": "http://127.0.0.1:%d/hook" % self.receiver.port})
        self.assertEqual(st, 201, watch)
        self.assertEqual((watch["type"], watch["value"]), ("website_domain", "portal.bank.example"))
        st, bin_watch = call(self.srv, "POST", "/watches", self.key,
                             {"type": "bin", "account": "411111", "secret": SIGNING,
                              "url": "http://127.0.0.1:%d/bin" % self.receiver.port})
        self.assertEqual(st, 201, bin_watch)
        self.assertEqual(bin_watch["type"], "bin")
        self.ctl.import_("records", self.ctl.write("s.txt", (
            "https://portal.bank.example:443/login:ivy@acme.example:pw-ivy-1\n"
            "https://other.bank.example/:jack@acme.example:pw-jack-2\n"
            "https://PORTAL.bank.example/2fa|kim|pw-kim-3\n")), "--format", "stealer",
            "--breach", STEALER)
        got = self.receiver.wait(1)
        time.sleep(1.5)  # a second delivery would have come by now
        got = self.receiver.deliveries()
        self.assertEqual(len(got), 1, got)
        alert = json.loads(got[0][1])
        self.assertEqual(alert["watch"], {"id": watch["id"], "type": "website_domain",
                                          "value": "portal.bank.example"})
        self.assertEqual(alert["counts"], {"records": 2})
        self.assertEqual(alert["breach"]["id"], STEALER)
        # the watches list shows both, each with its own type (the BIN's moved from 9 to 10)
        st, listed = call(self.srv, "GET", "/watches", self.key)
        self.assertEqual(sorted((w["type"], w["value"]) for w in listed["watches"]),
                         [("bin", "411111"), ("website_domain", "portal.bank.example")])


class BulkLoad(unittest.TestCase):
    """A --bulk load drops the record indexes, records_by_website among them, and builds
    them again at its end (PostgreSQL: COPY straight into records)."""

    def test_a_bulk_stealer_load_is_searchable_by_website_domain(self):
        ctl = Ctl().init()
        try:
            ctl.import_("breaches", ctl.write("b.jsonl", "\n".join(json.dumps(b) for b in BREACHES)))
            ctl.import_("records", ctl.write("s.txt", STEALER_LOG), "--format", "stealer",
                        "--breach", STEALER, "--bulk")
            key = ctl.key("bulk")
            srv = Server(ctl)
            try:
                st, body = search(srv, key, type="website_domain",
                                  account="accounts.shop.example")
                self.assertEqual((st, emails(body)),
                                 (200, ["ann@acme.example", "bob@globex.example"]))
                st, body = search(srv, key, type="email_domain", account="acme.example",
                                  website_domain="no")
                self.assertEqual((st, emails(body)), (200, ["erin@acme.example"]))
            finally:
                self.assertEqual(srv.stop(), 0)
        finally:
            ctl.cleanup()


# The migration that made records' website_domain: SQLite's 18th, PostgreSQL's 23rd
# (tests/e2e/harness.py SCHEMA_VERSION and PG_SCHEMA_VERSION name them).
WEBSITE_MIGRATION = {"sqlite": 18, "pg": 23}[STORE]
OLD_RECORDS = [
    {"breach_uuid": STEALER, "email": "ann@acme.example", "password": "pw-ann",
     "other_attributes": {"site": "https://Accounts.Shop.Example:8443/login"}},
    {"breach_uuid": STEALER, "email": "bob@acme.example", "password": "pw-bob",
     "other_attributes": {"site": "http://under_score.example/", "browser": "Edge"}},
    {"breach_uuid": STEALER, "email": "carol@acme.example", "password": "pw-carol",
     "other_attributes": {"browser": "Chrome"}},
    {"breach_uuid": STEALER, "user_name": "dave", "password": "pw-dave",
     "other_attributes": {"site": "b\u00fccher.example"}},
    {"breach_uuid": COMBOS, "email": "erin@acme.example", "password": "pw-erin"},
]


class WebsiteBackfill(unittest.TestCase):
    """A store whose records were imported before the migration that made website_domain:
    its upgrade gives them the host of their other_attributes' site, as an import would."""

    def setUp(self):
        self.ctl = ctl = Ctl().init()
        ctl.import_("breaches", ctl.write("b.jsonl", "\n".join(json.dumps(b) for b in BREACHES)))
        ctl.import_("records", ctl.write("r.jsonl",
                                         "\n".join(json.dumps(r) for r in OLD_RECORDS)))
        self.op = ctl.key("operator", "--plan", "enterprise")
        # back to the version before the migration: no column, no index, no bit 9
        ctl.sql("DROP INDEX records_by_website")
        ctl.sql("ALTER TABLE records DROP COLUMN website_domain")
        if STORE == "pg":
            ctl.sql("UPDATE record_domains SET present = present & 511")
            # domain searches routed through record_domains, as on a Citus coordinator, so
            # that the filters below read its bit 9
            ctl.sql("ALTER DATABASE %s SET breachd.routed_searches = on" % ctl.dbname)
            ctl.sql("UPDATE meta SET value = '%d' WHERE key = 'schema_version'"
                    % (WEBSITE_MIGRATION - 1))
        else:
            ctl.sql("PRAGMA user_version = %d" % (WEBSITE_MIGRATION - 1))
        self.assertEqual(ctl.sql("SELECT count(*) FROM meta WHERE key = "
                                 "'pending_website_domains'"), [["0"]])

    def tearDown(self):
        self.ctl.cleanup()

    def test_the_upgrade_fills_website_domain_from_the_site_shown(self):
        self.ctl.run("stats", check=0)  # opens the store for writing: the upgrade
        rows = self.ctl.sql("SELECT coalesce(email, user_name), coalesce(website_domain, '-')"
                            " FROM records ORDER BY 1")
        self.assertEqual([tuple(r) for r in rows], [
            ("ann@acme.example", "accounts.shop.example"),
            ("bob@acme.example", "-"),  # no host name: shown only, as an import keeps it
            ("carol@acme.example", "-"),
            ("dave", "xn--bcher-kva.example"),
            ("erin@acme.example", "-")])
        self.assertEqual(self.ctl.sql("SELECT value FROM meta WHERE key = "
                                      "'pending_website_domains'"), [["0"]])
        srv = Server(self.ctl)
        try:
            st, body = search(srv, self.op, type="website_domain",
                              account="https://accounts.shop.example/")
            self.assertEqual((st, body["records_found"]), (200, 1), body)
            rec = body["data"][0]
            self.assertEqual(rec["breached_data"]["email"], "ann@acme.example")
            self.assertEqual(rec["breach_details"]["uuid"], STEALER)
            self.assertEqual(json.loads(rec["breached_data"]["other_attributes"]),
                             {"site": "https://Accounts.Shop.Example:8443/login"})
            st, body = search(srv, self.op, type="website_domain", account="b\u00fccher.example")
            self.assertEqual((st, [r["breached_data"]["user_name"] for r in body["data"]]),
                             (200, ["dave"]))
            st, body = search(srv, self.op, type="website_domain", account="under_score.example")
            self.assertEqual(st, 422, body)
            # the filters count it too (PostgreSQL: the records' lookup rows' bit 9)
            st, body = search(srv, self.op, type="email_domain", account="acme.example",
                              website_domain="yes")
            self.assertEqual((st, emails(body)), (200, ["ann@acme.example"]))
            st, body = search(srv, self.op, type="email_domain", account="acme.example",
                              website_domain="no")
            self.assertEqual((st, emails(body)), (200, ["bob@acme.example", "carol@acme.example",
                                                        "erin@acme.example"]))
        finally:
            self.assertEqual(srv.stop(), 0)


if __name__ == "__main__":
    unittest.main()
