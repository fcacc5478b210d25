"""The Have I Been Pwned API v3 under /api/v3, over the same corpus as the v7 API: every
endpoint's exact JSON, its filters, HIBP's status codes (404 with an empty body, 400 for a
bad account, 401 for a missing or bad key, 429 with retry-after) and the breach fields a
breaches import takes for it (Name, added and modified dates, flags)."""
import json
import re
import time
import unittest
import urllib.parse

from harness import Ctl, Server, ServerTest

A1 = "bbbbbbbb-0000-4000-8000-000000000001"
B2 = "bbbbbbbb-0000-4000-8000-000000000002"
A3 = "bbbbbbbb-0000-4000-8000-000000000003"
G4 = "bbbbbbbb-0000-4000-8000-000000000004"
BREACHES = [
    {"uuid": A1, "source_name": "Alpha Forum", "site_domain": "alpha.example",
     "date_leaked": "2019-05-01", "leaked_data_types": "email,username,password_hash",
     "description": "Alpha's \"users\".", "site_logo": "https://alpha.example/logo.png",
     "pwned_count": 1200, "added_date": "2019-06-01T12:30:00Z",
     "modified_date": "2020-01-02T03:04:05Z"},
    {"uuid": B2, "source_name": "Beta Shop", "site_domain": "beta.example",
     "date_leaked": "14-Feb-2021", "leaked_data_types": "email,password,phone_number,first_name",
     "is_verified": False, "is_spam_list": True},
    {"uuid": A3, "source_name": "alpha forum", "site_domain": "Alpha.Example",
     "date_leaked": "2020-01-01", "leaked_data_types": "email;favourite_colour",
     "is_sensitive": "true", "is_stealer_log": "1", "added_date": "2020-02-02"},
    {"uuid": G4, "source_name": "Gamma", "name": "GammaOfficial", "date_leaked": "2021-01-01",
     "is_retired": "yes", "is_malware": True, "is_fabricated": True,
     "is_subscription_free": True, "added_date": "2021-01-01 08:00:00", "pwned_count": 7},
]
RECORDS = [
    {"breach_uuid": A1, "email": "Jane@Example.com", "user_name": "jane"},
    {"breach_uuid": B2, "email": "jane@example.com", "password": "secret-1"},
    {"breach_uuid": B2, "email": "jane@example.com", "password": "secret-2"},
    {"breach_uuid": A3, "email": "jane@example.com"},
    {"breach_uuid": A1, "email": "bob@example.com"},
    {"breach_uuid": B2, "email": "carol@other.example"},
]

ALPHA = {"Name": "AlphaForum", "Title": "Alpha Forum", "Domain": "alpha.example",
         "BreachDate": "2019-05-01", "AddedDate": "2019-06-01T12:30:00Z",
         "ModifiedDate": "2020-01-02T03:04:05Z", "PwnCount": 1200,
         "Description": "Alpha's \"users\".", "LogoPath": "https://alpha.example/logo.png",
         "DataClasses": ["Email addresses", "Password hashes", "Usernames"],
         "IsVerified": True, "IsFabricated": False, "IsSensitive": False, "IsRetired": False,
         "IsSpamList": False, "IsMalware": False, "IsStealerLog": False,
         "IsSubscriptionFree": False}
ALPHA2 = {"Name": "AlphaForum2", "Title": "alpha forum", "Domain": "Alpha.Example",
          "BreachDate": "2020-01-01", "AddedDate": "2020-02-02T00:00:00Z",
          "ModifiedDate": "2020-02-02T00:00:00Z", "PwnCount": 1, "Description": "",
          "LogoPath": "", "DataClasses": ["Email addresses", "Favourite colour"],
          "IsVerified": True, "IsFabricated": False, "IsSensitive": True, "IsRetired": False,
          "IsSpamList": False, "IsMalware": False, "IsStealerLog": True,
          "IsSubscriptionFree": False}
GAMMA = {"Name": "GammaOfficial", "Title": "Gamma", "Domain": "", "BreachDate": "2021-01-01",
         "AddedDate": "2021-01-01T08:00:00Z", "ModifiedDate": "2021-01-01T08:00:00Z",
         "PwnCount": 7, "Description": "", "LogoPath": "", "DataClasses": [],
         "IsVerified": True, "IsFabricated": True, "IsSensitive": False, "IsRetired": True,
         "IsSpamList": False, "IsMalware": True, "IsStealerLog": False,
         "IsSubscriptionFree": True}


def beta(imported_at):
    return {"Name": "BetaShop", "Title": "Beta Shop", "Domain": "beta.example",
            "BreachDate": "2021-02-14", "AddedDate": imported_at, "ModifiedDate": imported_at,
            "PwnCount": 2, "Description": "", "LogoPath": "",
            "DataClasses": ["Email addresses", "Names", "Passwords", "Phone numbers"],
            "IsVerified": False, "IsFabricated": False, "IsSensitive": False,
            "IsRetired": False, "IsSpamList": True, "IsMalware": False, "IsStealerLog": False,
            "IsSubscriptionFree": False}


class HibpV3(ServerTest):
    @classmethod
    def populate(cls, ctl):
        cls.before = int(time.time())
        ctl.import_("breaches", ctl.write("b.jsonl", "\n".join(json.dumps(b) for b in BREACHES)))
        cls.after = int(time.time())
        ctl.import_("records", ctl.write("r.jsonl", "\n".join(json.dumps(r) for r in RECORDS)))
        cls.standard = ctl.key("std", "--plan", "standard", "--expires", "2031-05-30")

    def v3(self, path, key="__default__", header="hibp-api-key", **params):
        """(status, headers, raw body) of GET /api/v3{path}."""
        if params:
            path += "?" + urllib.parse.urlencode(params)
        key = self.key if key == "__default__" else key
        return self.srv.request("/api/v3" + path, headers={header: key} if key else {})

    def ok(self, path, **kw):
        st, hdrs, raw = self.v3(path, **kw)
        self.assertEqual(st, 200, raw)
        self.assertEqual(hdrs["content-type"], "application/json; charset=utf-8")
        return json.loads(raw)

    def not_found(self, path, **kw):
        st, hdrs, raw = self.v3(path, **kw)
        self.assertEqual((st, raw), (404, b""))

    def error(self, path, status, code, **kw):
        st, hdrs, raw = self.v3(path, **kw)
        body = json.loads(raw)
        self.assertEqual((st, set(body), body["error"]), (status, {"error", "message"}, code))
        return body["message"], hdrs

    def beta_full(self):
        body = self.ok("/breach/BetaShop")
        added = body["AddedDate"]
        self.assertRegex(added, r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
        t = int(time.mktime(time.strptime(added, "%Y-%m-%dT%H:%M:%SZ")) - time.timezone)
        self.assertTrue(self.before <= t <= self.after, (self.before, t, self.after))
        return beta(added)

    # --- breachedaccount ----------------------------------------------------------------

    def test_account_lists_each_breach_once_by_name_truncated_by_default(self):
        self.assertEqual(self.ok("/breachedaccount/JANE%40example.com"),
                         [{"Name": "AlphaForum"}, {"Name": "AlphaForum2"}, {"Name": "BetaShop"}])
        self.assertEqual(self.ok("/breachedaccount/bob@example.com", truncateResponse="true"),
                         [{"Name": "AlphaForum"}])

    def test_account_full_breach_objects_without_truncation(self):
        self.assertEqual(self.ok("/breachedaccount/jane@example.com", truncateResponse="false"),
                         [ALPHA, ALPHA2, self.beta_full()])

    def test_account_domain_filter_compares_without_case(self):
        for domain in ("alpha.example", "ALPHA.example"):
            self.assertEqual(self.ok("/breachedaccount/jane@example.com", domain=domain),
                             [{"Name": "AlphaForum"}, {"Name": "AlphaForum2"}])
        self.not_found("/breachedaccount/jane@example.com", domain="gamma.example")

    def test_account_include_unverified_false_drops_unverified_breaches(self):
        self.assertEqual(self.ok("/breachedaccount/jane@example.com", includeUnverified="false"),
                         [{"Name": "AlphaForum"}, {"Name": "AlphaForum2"}])
        self.not_found("/breachedaccount/carol@other.example", includeUnverified="False")
        self.assertEqual(self.ok("/breachedaccount/carol@other.example", includeUnverified="true"),
                         [{"Name": "BetaShop"}])

    def test_unknown_account_is_404_with_an_empty_body(self):
        self.not_found("/breachedaccount/nobody@example.com")

    def test_bad_account_or_parameter_is_400(self):
        for account in ("not-an-email", "a@", "%40example.com", "a@b@c", "%FF@example.com"):
            self.error("/breachedaccount/" + account, 400, "bad_request")
        self.error("/breachedaccount/jane@example.com", 400, "bad_request",
                   truncateResponse="maybe")
        self.error("/breachedaccount/jane@example.com", 400, "bad_request", domain="")
        self.error("/breachedaccount/jane@example.com", 400, "bad_request", typo="1")

    # --- breaches, breach, dataclasses ----------------------------------------------------

    def test_breaches_lists_the_catalog_newest_first_with_filters(self):
        beta_full = self.beta_full()
        self.assertEqual(self.ok("/breaches"), [beta_full, GAMMA, ALPHA2, ALPHA])
        self.assertEqual(self.ok("/breaches", domain="alpha.EXAMPLE"), [ALPHA2, ALPHA])
        self.assertEqual(self.ok("/breaches", domain="none.example"), [])
        self.assertEqual(self.ok("/breaches?domain=%FF"), [])
        self.assertEqual(self.ok("/breaches", isSpamList="true"), [beta_full])

    def test_breach_by_name_ignores_case_and_unknown_is_404_empty(self):
        self.assertEqual(self.ok("/breach/AlphaForum"), ALPHA)
        self.assertEqual(self.ok("/breach/gammaofficial"), GAMMA)
        self.not_found("/breach/Gamma")
        self.not_found("/breach/Alpha%20Forum")
        self.not_found("/breach/%FF%FE")  # not UTF-8: never reaches a store that refuses it

    def test_dataclasses_is_the_sorted_set_of_every_breach(self):
        self.assertEqual(self.ok("/dataclasses"),
                         ["Email addresses", "Favourite colour", "Names", "Password hashes",
                          "Passwords", "Phone numbers", "Usernames"])

    def test_latest_breach_is_the_one_added_last(self):
        # BetaShop has no added_date: the time of its import, after every other AddedDate
        self.assertEqual(self.ok("/latestbreach"), self.beta_full())
        self.error("/latestbreach", 400, "bad_request", domain="alpha.example")

    # --- breacheddomain, subscription ------------------------------------------------------

    def test_breached_domain_maps_each_alias_to_its_breaches(self):
        self.assertEqual(self.ok("/breacheddomain/Example.com"),
                         {"bob": ["AlphaForum"],
                          "jane": ["AlphaForum", "AlphaForum2", "BetaShop"]})
        self.not_found("/breacheddomain/nobody.example")
        self.error("/breacheddomain/not%20a%20domain", 400, "bad_request")
        self.error("/breacheddomain/%FF.example", 400, "bad_request")

    def test_breached_domain_needs_an_enterprise_key(self):
        msg, _ = self.error("/breacheddomain/example.com", 403, "forbidden", key=self.standard)
        self.assertIn("enterprise", msg)

    def test_subscription_status_describes_the_calling_key(self):
        self.assertEqual(self.ok("/subscription/status"),
                         {"SubscriptionName": "enterprise",
                          "Description": "breachd enterprise plan: 10000 requests per hour, "
                                         "domain search",
                          "SubscribedUntil": None, "Rpm": 166,
                          "DomainSearchMaxBreachedAccounts": 10000, "MaxBreachedDomains": None,
                          "IncludesStealerLogs": True, "IncludesBulkDomainAdd": False,
                          "IncludesAutoSubdomainVerification": False,
                          "IncludesCustomerDomains": False, "IncludesKAnon": True})
        self.assertEqual(self.ok("/subscription/status", key=self.standard),
                         {"SubscriptionName": "standard",
                          "Description": "breachd standard plan: 1000 requests per hour",
                          "SubscribedUntil": "2031-05-30T00:00:00Z", "Rpm": 16,
                          "DomainSearchMaxBreachedAccounts": 0, "MaxBreachedDomains": None,
                          "IncludesStealerLogs": False, "IncludesBulkDomainAdd": False,
                          "IncludesAutoSubdomainVerification": False,
                          "IncludesCustomerDomains": False, "IncludesKAnon": False})

    # --- keys, methods, paths ----------------------------------------------------------

    def test_missing_or_bad_key_is_401(self):
        msg, _ = self.error("/breaches", 401, "unauthorized", key=None)
        self.assertIn("hibp-api-key", msg)
        msg, _ = self.error("/breaches", 401, "authentication_failed", key="bd_wrong")
        self.assertNotIn("bd_wrong", msg)
        self.error("/breachedaccount/jane@example.com", 401, "authentication_failed",
                   key=self.key + "x")
        # the v7 API keeps its 403 for a bad key
        st, _, _ = self.srv.request("/v7/breaches", key="bd_wrong")
        self.assertEqual(st, 403)

    def test_x_api_key_is_accepted_too(self):
        self.assertEqual(self.ok("/breach/AlphaForum", header="x-api-key"), ALPHA)

    def test_unknown_path_and_other_methods(self):
        # pasteaccount is answered since issue 35: no paste here, HIBP's empty 404
        self.not_found("/pasteaccount/jane@example.com")
        self.error("/nosuchcall/jane@example.com", 404, "not_found")
        self.error("/breach", 404, "not_found")
        st, hdrs, _ = self.srv.request("/api/v3/breaches", method="POST",
                                       headers={"hibp-api-key": self.key})
        self.assertEqual((st, hdrs.get("allow")), (405, "GET, HEAD"))


class HibpV3Limits(unittest.TestCase):
    """A rate-limited key gets HIBP's 429 with retry-after; a domain past the server's
    --hibp-domain-max is refused before it is read; the base path is configurable."""

    @classmethod
    def setUpClass(cls):
        cls.ctl = Ctl().init()
        cls.ctl.import_("breaches", cls.ctl.write("b.jsonl", json.dumps(BREACHES[0])))
        cls.ctl.import_("records", cls.ctl.write("r.jsonl", "\n".join(
            json.dumps({"breach_uuid": A1, "email": "u%d@big.example" % i}) for i in range(5))))
        cls.key = cls.ctl.key("big", "--plan", "enterprise")
        cls.slow = cls.ctl.key("slow", "--rate", "1/h")
        cls.srv = Server(cls.ctl, "--hibp-base-path", "/hibp/", "--hibp-domain-max", "4")

    @classmethod
    def tearDownClass(cls):
        rc = cls.srv.stop()
        cls.ctl.cleanup()
        assert rc == 0, "breachd exited %d on SIGTERM" % rc

    def test_domain_past_the_maximum_then_429_with_retry_after(self):
        st, _, raw = self.srv.request("/hibp/breacheddomain/big.example",
                                      headers={"hibp-api-key": self.key})
        body = json.loads(raw)
        self.assertEqual((st, body["error"]), (403, "domain_too_large"), body)
        self.assertIn("5", body["message"])
        st, _, raw = self.srv.request("/hibp/breach/AlphaForum", headers={"hibp-api-key": self.slow})
        self.assertEqual(json.loads(raw)["Name"], "AlphaForum")
        st, hdrs, raw = self.srv.request("/hibp/breaches", headers={"hibp-api-key": self.slow})
        self.assertEqual((st, json.loads(raw)["error"]), (429, "rate_limited"))
        self.assertTrue(re.fullmatch(r"[1-9][0-9]*", hdrs.get("retry-after", "")), hdrs)
        st, _, _ = self.srv.request("/api/v3/breaches", headers={"hibp-api-key": self.key})
        self.assertEqual(st, 404)  # the default base path is not served when moved


class HibpV3OpenCatalog(unittest.TestCase):
    """breachd --hibp-catalog-auth none: the catalog paths answer without a key, as HIBP's
    do; a request that sends a key is checked and charged as ever; the searches still need
    one."""

    @classmethod
    def setUpClass(cls):
        cls.ctl = Ctl().init()
        cls.ctl.import_("breaches", cls.ctl.write("b.jsonl", json.dumps(BREACHES[0])))
        cls.slow = cls.ctl.key("slow", "--rate", "1/h")
        cls.srv = Server(cls.ctl, "--hibp-catalog-auth", "none")

    @classmethod
    def tearDownClass(cls):
        rc = cls.srv.stop()
        cls.ctl.cleanup()
        assert rc == 0, "breachd exited %d on SIGTERM" % rc

    def test_catalog_without_a_key_and_searches_with_one(self):
        for path in ("/api/v3/breaches", "/api/v3/breach/AlphaForum", "/api/v3/dataclasses",
                     "/api/v3/latestbreach"):
            st, hdrs, raw = self.srv.request(path)
            self.assertEqual(st, 200, path)
            self.assertNotIn("x-ratelimit-limit", hdrs)
        self.assertEqual(json.loads(self.srv.request("/api/v3/breach/AlphaForum")[2])["Name"],
                         "AlphaForum")
        for path in ("/api/v3/breachedaccount/jane%40example.com",
                     "/api/v3/breacheddomain/example.com", "/api/v3/subscription/status",
                     "/v7/breaches"):
            self.assertEqual(self.srv.request(path)[0], 401, path)
        st, _, _ = self.srv.request("/api/v3/breaches", headers={"hibp-api-key": "bd_wrong"})
        self.assertEqual(st, 401)
        self.assertEqual(self.srv.request("/api/v3/dataclasses",
                                          headers={"hibp-api-key": self.slow})[0], 200)
        st, hdrs, _ = self.srv.request("/api/v3/dataclasses", headers={"hibp-api-key": self.slow})
        self.assertEqual(st, 429)
        self.assertEqual(self.srv.request("/api/v3/dataclasses")[0], 200)

    def test_a_bad_value_is_refused_at_start(self):
        with self.assertRaises(AssertionError) as cm:
            Server(self.ctl, "--hibp-catalog-auth", "open")
        self.assertIn("--hibp-catalog-auth", str(cm.exception))


class HibpImportFields(unittest.TestCase):
    def setUp(self):
        self.ctl = Ctl().init()

    def tearDown(self):
        self.ctl.cleanup()

    def test_bad_hibp_fields_are_rejected_with_a_reason(self):
        rows = [{"source_name": "A", "date_leaked": "2020-01-01", "name": "Not valid"},
                {"source_name": "B", "date_leaked": "2020-01-01", "is_verified": "maybe"},
                {"source_name": "C", "date_leaked": "2020-01-01", "added_date": "01-01-2020"},
                {"source_name": "D", "date_leaked": "2020-01-01", "added_date": "2020-02-01",
                 "modified_date": "2020-01-01"},
                {"source_name": "E", "date_leaked": "2020-01-01", "is_malware": "true"}]
        p = self.ctl.import_("breaches", self.ctl.write(
            "b.jsonl", "\n".join(json.dumps(r) for r in rows)), check=1)
        err = p.stderr.decode()
        self.assertIn("b.jsonl:1: rejected: name must be 1 to 64 ASCII letters and digits", err)
        self.assertIn("b.jsonl:2: rejected: is_verified must be true or false", err)
        self.assertIn("b.jsonl:3: rejected: added_date must be YYYY-MM-DD", err)
        self.assertIn("b.jsonl:4: rejected: modified_date is before added_date", err)
        self.assertIn("imported 1", err)

    def test_csv_takes_the_same_fields(self):
        csv = ("source_name,date_leaked,name,is_verified,is_spam_list,added_date\n"
               "Delta Leak,2022-03-04,DeltaX,false,1,2022-05-06T07:08:09Z\n")
        self.ctl.import_("breaches", self.ctl.write("b.csv", csv), extra=("--format", "csv"))
        key = self.ctl.key("k")
        srv = Server(self.ctl)
        try:
            st, _, raw = srv.request("/api/v3/breach/deltax", headers={"hibp-api-key": key})
            body = json.loads(raw)
            self.assertEqual((st, body["Name"], body["IsVerified"], body["IsSpamList"],
                              body["AddedDate"]),
                             (200, "DeltaX", False, True, "2022-05-06T07:08:09Z"))
        finally:
            self.assertEqual(srv.stop(), 0)


if __name__ == "__main__":
    unittest.main()
