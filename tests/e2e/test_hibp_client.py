"""A published HIBP client library, `hibp` from npm (its version pinned in
tests/hibp-client/package-lock.json, installed there by make npm-deps), run against
breachd through its baseUrl options (the v3 API's, and the Pwned Passwords ranges'
at the server's root): what it returns for each call, including its own
handling of 404 (null), 401 and 429 (RateLimitError with retryAfterSeconds). Skipped when
node or the installed package is missing."""
import json
import os
import shutil
import subprocess
import unittest

from harness import ROOT, Ctl, Server
from test_hibp_v3 import ALPHA, ALPHA2, B2, BREACHES, RECORDS, beta

CLIENT = os.path.join(ROOT, "tests", "hibp-client")
# "password" in three records (of one breach), for the ranges: its SHA-1 is
# 5BAA61E4C9B93F3F0682250B6CF8331B7EE68FD8, its NTLM 8846F7EAEE8FB117AD06BDD830B7586C
PASSWORD_RECORDS = [{"breach_uuid": b, "email": "pw%d@range.example" % i, "password": "password"}
                    for i, b in enumerate((B2, B2, B2))]
PASTE = {"source": "Pastebin", "id": "8Q0BvKD8", "title": "syslog",
         "date": "2014-03-04T19:14:54Z", "email_count": 139, "emails": ["jane@example.com"]}
PASTE_HIBP = {"Source": "Pastebin", "Id": "8Q0BvKD8", "Title": "syslog",
              "Date": "2014-03-04T19:14:54Z", "EmailCount": 139}
STEALER_BREACH = {"uuid": "5eea0000-0000-4000-8000-000000000001", "source_name": "Stealer",
                  "date_leaked": "2010-01-01", "added_date": "2010-01-01",
                  "is_stealer_log": "true"}
STEALER_LOG = ("https://shop.example/login:sam@stealer.example:pw-1\n"
               "https://video.example/:sam@stealer.example:pw-2\n"
               "https://Shop.Example/account:tom@stealer.example:pw-3\n")
HAVE_CLIENT = shutil.which("node") and os.path.isdir(os.path.join(CLIENT, "node_modules", "hibp"))


# scripts/test.sh sets BREACHD_REQUIRE_CLIENTS: there a missing client fails the run
@unittest.skipUnless(HAVE_CLIENT or os.environ.get("BREACHD_REQUIRE_CLIENTS"),
                     "node or tests/hibp-client/node_modules/hibp missing (make npm-deps)")
class HibpClientLibrary(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.ctl = Ctl().init()
        cls.ctl.import_("breaches", cls.ctl.write(
            "b.jsonl", "\n".join(json.dumps(b) for b in BREACHES)))
        cls.ctl.import_("records", cls.ctl.write(
            "r.jsonl", "\n".join(json.dumps(r) for r in RECORDS + PASSWORD_RECORDS)),
            extra=("--password-ranges",))
        key = cls.ctl.key("lib", "--plan", "enterprise")
        slow = cls.ctl.key("slow", "--rate", "1/h")
        tenant = cls.ctl.run("tenants", "add", "ex", "--domain", "example.com",
                             check=0).stdout.decode().strip()
        tenant_key = cls.ctl.key("tenant", "--tenant", tenant)
        cls.ctl.import_("pastes", cls.ctl.write("p.jsonl", json.dumps(PASTE)))
        # stealer log lines (website hosts) of a breach added long ago and of addresses of
        # their own, so the other calls' answers stay as they are
        cls.ctl.import_("breaches", cls.ctl.write("s.jsonl", json.dumps(STEALER_BREACH)))
        cls.ctl.import_("records", cls.ctl.write("s.txt", STEALER_LOG), extra=(
            "--format", "stealer", "--breach", STEALER_BREACH["uuid"]))
        # the catalog without a key, as HIBP serves it: this library sends none with breaches()
        cls.srv = Server(cls.ctl, "--hibp-catalog-auth", "none", "--range-auth", "none")
        cls.direct = cls.srv.get("/api/v3/breaches?domain=alpha.example", key=key)
        env = dict(os.environ, HIBP_BASE="http://127.0.0.1:%d/api/v3" % cls.srv.port,
                   HIBP_KEY=key, HIBP_SLOW_KEY=slow, HIBP_TENANT_KEY=tenant_key,
                   PW_BASE="http://127.0.0.1:%d" % cls.srv.port)
        p = subprocess.run(["node", "check.mjs"], cwd=CLIENT, env=env, capture_output=True,
                           timeout=60)
        assert p.returncode == 0, p.stderr.decode(errors="replace")
        cls.out = json.loads(p.stdout)

    @classmethod
    def tearDownClass(cls):
        rc = cls.srv.stop()
        cls.ctl.cleanup()
        assert rc == 0, "breachd exited %d on SIGTERM" % rc

    def test_account_searches(self):
        self.assertEqual(self.out["truncated"]["value"],
                         [{"Name": "AlphaForum"}, {"Name": "AlphaForum2"}, {"Name": "BetaShop"}])
        self.assertEqual(self.out["full"]["value"], [ALPHA, ALPHA2])
        self.assertEqual(self.out["unknown"], {"value": None})
        self.assertEqual(self.out["bad"]["error"], "Error")

    def test_catalog_calls(self):
        self.assertEqual(self.out["breach"]["value"], ALPHA)
        self.assertEqual(self.out["noBreach"], {"value": None})
        self.assertEqual(self.out["dataClasses"]["value"],
                         ["Email addresses", "Favourite colour", "Names", "Password hashes",
                          "Passwords", "Phone numbers", "Usernames"])

    def test_breaches_is_the_catalog_served_without_a_key(self):
        # This library sends no key with breaches(), as HIBP serves its catalog to anyone:
        # here breachd runs with --hibp-catalog-auth none (docs/API.md)
        self.assertEqual(self.direct[0], 200)
        self.assertEqual(self.out["breaches"]["value"], self.direct[1])
        self.assertEqual([b["Name"] for b in self.out["breaches"]["value"]],
                         [b["Name"] for b in self.direct[1]])
        self.assertIn("AlphaForum", [b["Name"] for b in self.out["breaches"]["value"]])

    def test_password_ranges_sha1_ntlm_padding(self):
        self.assertEqual(self.out["rangeSha1"], {"value": {"1E4C9B93F3F0682250B6CF8331B7EE68FD8": 3}})
        self.assertEqual(self.out["rangeNtlm"], {"value": {"7EAEE8FB117AD06BDD830B7586C": 3}})
        padded = self.out["rangePadded"]["value"]
        self.assertTrue(800 <= len(padded) <= 1000, len(padded))
        self.assertEqual(padded.pop("1E4C9B93F3F0682250B6CF8331B7EE68FD8"), 3)
        self.assertEqual(set(padded.values()), {0})
        self.assertEqual((self.out["pwned"], self.out["notPwned"]), ({"value": 3}, {"value": 0}))
        self.assertEqual(self.out["badPrefix"]["error"], "Error")

    def test_domain_and_subscription(self):
        self.assertEqual(self.out["domain"]["value"],
                         {"bob": ["AlphaForum"],
                          "jane": ["AlphaForum", "AlphaForum2", "BetaShop"]})
        self.assertEqual(self.out["subscription"]["value"], {
            "SubscriptionName": "enterprise",
            "Description": "breachd enterprise plan: 10000 requests per hour, domain search",
            "SubscribedUntil": None, "Rpm": 166, "DomainSearchMaxBreachedAccounts": 10000,
            "MaxBreachedDomains": None, "IncludesStealerLogs": True,
            "IncludesBulkDomainAdd": False, "IncludesAutoSubdomainVerification": False,
            "IncludesCustomerDomains": False, "IncludesKAnon": True})
        self.assertEqual(self.out["noDomains"], {"value": []})
        self.assertEqual(self.out["tenantDomains"], {"value": [{
            "DomainName": "example.com", "PwnCount": None, "PwnCountExcludingSpamLists": None,
            "PwnCountExcludingSpamListsAtLastSubscriptionRenewal": None,
            "NextSubscriptionRenewal": None}]})

    def test_pastes_and_search(self):
        self.assertEqual(self.out["pastes"], {"value": [PASTE_HIBP]})
        self.assertEqual(self.out["noPastes"], {"value": None})
        # search(): breachedAccount (truncated, as the library asks) and pasteAccount at once
        self.assertEqual(self.out["searched"], {"value": {
            "breaches": [{"Name": "AlphaForum"}, {"Name": "AlphaForum2"}, {"Name": "BetaShop"}],
            "pastes": [PASTE_HIBP]}})
        self.assertEqual(self.out["searchedNothing"],
                         {"value": {"breaches": None, "pastes": None}})

    def test_stealer_logs(self):
        self.assertEqual(self.out["stealerByEmail"], {"value": ["shop.example", "video.example"]})
        self.assertEqual(self.out["stealerByWebsite"],
                         {"value": ["sam@stealer.example", "tom@stealer.example"]})
        self.assertEqual(self.out["stealerByEmailDomain"], {"value": {
            "sam": ["shop.example", "video.example"], "tom": ["shop.example"]}})
        self.assertEqual(self.out["noStealer"], {"value": None})

    def test_latest_breach(self):
        # BetaShop has no added_date: the time of its import, after every other AddedDate
        latest = self.out["latest"]["value"]
        self.assertRegex(latest["AddedDate"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
        # its 2 records of RECORDS and the 3 of PASSWORD_RECORDS
        self.assertEqual(latest, dict(beta(latest["AddedDate"]), PwnCount=5))

    def test_bad_key_and_rate_limit_errors(self):
        self.assertEqual(self.out["badKey"]["error"], "Error")
        self.assertIn("not valid", self.out["badKey"]["message"])
        limited = self.out["limited"]
        self.assertEqual(limited["error"], "RateLimitError")
        self.assertGreater(limited["retryAfterSeconds"], 0)
        self.assertIn("limit", limited["message"])


if __name__ == "__main__":
    unittest.main()
