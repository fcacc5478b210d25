"""The HIBP API v3's stealer log calls over the website host kept with records (issue 35):
GET /api/v3/stealerlogsbyemail/{email} (the hosts of an address), /stealerlogsbywebsitedomain/
{domain} (the addresses of a website), /stealerlogsbyemaildomain/{domain} (each alias of an
email domain to its hosts): exact sorted answers, 404 with an empty body, 400, enterprise or
tenant keys only, a tenant key's scope (its emails, email domains and website hosts), and a
domain past --hibp-domain-max refused; on the store under test."""
import json
import unittest

from harness import Ctl, Server

STEALER = "57ea0000-0000-4000-8000-000000000001"
BREACHES = [{"uuid": STEALER, "source_name": "Stealer Logs Nov", "date_leaked": "2024-11-01",
             "is_stealer_log": "true"}]
STEALER_LOG = ("https://Accounts.Shop.Example:8443/login:ann@acme.example:pw-1\n"
               "https://netflix.example/login:ann@acme.example:pw-2\n"
               "https://netflix.example/login:Ann@Acme.example:pw-3\n"
               "https://accounts.shop.example/reset|bob@globex.example|pw-4\n"
               "https://acme.example/sso:carol@acme.example:pw-5\n"
               "https://acme.example/sso:dave@outsider.example:pw-6\n")
RECORDS = [{"breach_uuid": STEALER, "email": "erin@acme.example", "password": "no website"}]


class StealerLogs(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.ctl = ctl = Ctl().init()
        ctl.import_("breaches", ctl.write("b.jsonl", "\n".join(json.dumps(b) for b in BREACHES)))
        ctl.import_("records", ctl.write("s.txt", STEALER_LOG), "--format", "stealer",
                    "--breach", STEALER)
        ctl.import_("records", ctl.write("r.jsonl", "\n".join(json.dumps(r) for r in RECORDS)))
        tenant = ctl.run("tenants", "add", "acme", "--domain", "acme.example",
                         check=0).stdout.decode().strip()
        cls.op = ctl.key("operator", "--plan", "enterprise")
        cls.standard = ctl.key("std", "--plan", "standard")
        cls.ka = ctl.key("acme", "--tenant", tenant, "--types",
                         "email,email_domain,website_domain")
        cls.ka_default = ctl.key("acme-default", "--tenant", tenant)
        cls.srv = Server(ctl)

    @classmethod
    def tearDownClass(cls):
        rc = cls.srv.stop()
        cls.ctl.cleanup()
        assert rc == 0, "breachd exited %d on SIGTERM" % rc

    def get(self, path, key=None):
        st, _, raw = self.srv.request("/api/v3" + path, headers={"hibp-api-key": key or self.op})
        return st, (json.loads(raw) if raw else None)

    def error(self, path, key=None):
        st, body = self.get(path, key)
        return st, body["error"]

    def test_by_email(self):
        self.assertEqual(self.get("/stealerlogsbyemail/ANN%40acme.example"),
                         (200, ["accounts.shop.example", "netflix.example"]))
        self.assertEqual(self.get("/stealerlogsbyemail/erin@acme.example"), (404, None))
        self.assertEqual(self.get("/stealerlogsbyemail/nobody@acme.example"), (404, None))
        self.assertEqual(self.error("/stealerlogsbyemail/not-an-email"), (400, "bad_request"))

    def test_by_website_domain(self):
        self.assertEqual(self.get("/stealerlogsbywebsitedomain/Accounts.Shop.Example"),
                         (200, ["ann@acme.example", "bob@globex.example"]))
        self.assertEqual(self.get("/stealerlogsbywebsitedomain/acme.example"),
                         (200, ["carol@acme.example", "dave@outsider.example"]))
        self.assertEqual(self.get("/stealerlogsbywebsitedomain/none.example"), (404, None))
        self.assertEqual(self.error("/stealerlogsbywebsitedomain/a%20b"), (400, "bad_request"))

    def test_by_email_domain(self):
        self.assertEqual(self.get("/stealerlogsbyemaildomain/acme.example"), (200, {
            "ann": ["accounts.shop.example", "netflix.example"], "carol": ["acme.example"]}))
        self.assertEqual(self.get("/stealerlogsbyemaildomain/none.example"), (404, None))

    def test_who_may_ask(self):
        for path in ("/stealerlogsbyemail/ann@acme.example",
                     "/stealerlogsbywebsitedomain/acme.example",
                     "/stealerlogsbyemaildomain/acme.example"):
            self.assertEqual(self.error(path, self.standard), (403, "forbidden"), path)
        # a tenant key: its own emails, email domains and website hosts
        self.assertEqual(self.get("/stealerlogsbyemail/ann@acme.example", self.ka),
                         (200, ["accounts.shop.example", "netflix.example"]))
        self.assertEqual(self.error("/stealerlogsbyemail/bob@globex.example", self.ka),
                         (403, "out_of_scope"))
        self.assertEqual(self.get("/stealerlogsbywebsitedomain/acme.example", self.ka),
                         (200, ["carol@acme.example", "dave@outsider.example"]))
        self.assertEqual(self.error("/stealerlogsbywebsitedomain/netflix.example", self.ka),
                         (403, "out_of_scope"))
        self.assertEqual(self.error("/stealerlogsbyemaildomain/globex.example", self.ka),
                         (403, "out_of_scope"))
        # without the website_domain type (a tenant key's default: email, email_domain)
        self.assertEqual(self.error("/stealerlogsbywebsitedomain/acme.example", self.ka_default),
                         (403, "type_not_allowed"))

    def test_a_domain_past_the_maximum_is_refused(self):
        # acme.example has 5 records with an email (ann x3, carol, erin): more than 3
        self.assertEqual(self.error("/stealerlogsbyemaildomain/acme.example?x=1"),
                         (400, "bad_request"))
        srv = Server(self.ctl, "--hibp-domain-max", "4")
        try:
            st, _, raw = srv.request("/api/v3/stealerlogsbyemaildomain/acme.example",
                                     headers={"hibp-api-key": self.op})
            self.assertEqual((st, json.loads(raw)["error"]), (403, "domain_too_large"))
            st, _, raw = srv.request("/api/v3/stealerlogsbywebsitedomain/acme.example",
                                     headers={"hibp-api-key": self.op})
            self.assertEqual(st, 200)
        finally:
            self.assertEqual(srv.stop(), 0)


if __name__ == "__main__":
    unittest.main()
