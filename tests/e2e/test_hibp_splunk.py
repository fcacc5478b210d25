"""The Splunk app for Have I Been Pwned (Bre77/hibp, bin/hibp_domainsearch.py) replayed
against breachd: its first calls in its order and with the headers it sends. Without a
key (python-requests' own headers): GET /latestbreach, then GET /breaches when the Name
changed; then with a session's headers (hibp-api-key, user-agent HIBP-Splunk-App): GET
/subscribeddomains, and GET /breacheddomain/{domain} for each domain (404 is "no breached
account" to the app). The keyless catalog calls need breachd --hibp-catalog-auth none, as
docs/API.md says. Also /latestbreach on an empty corpus: HIBP's 404."""
import gzip
import json
import unittest

from harness import Ctl, Server

A1 = "5b1c0000-0000-4000-8000-000000000001"
B2 = "5b1c0000-0000-4000-8000-000000000002"
BREACHES = [
    {"uuid": A1, "source_name": "Old Forum", "site_domain": "old.example",
     "date_leaked": "2018-03-01", "leaked_data_types": "email,password",
     "added_date": "2018-04-01T00:00:00Z", "pwned_count": 10},
    {"uuid": B2, "source_name": "New Shop", "site_domain": "shop.example",
     "date_leaked": "2017-01-01", "leaked_data_types": "email,name",
     "added_date": "2024-07-01T10:00:00Z", "pwned_count": 20},
]
RECORDS = [
    {"breach_uuid": A1, "email": "alice@acme.example"},
    {"breach_uuid": B2, "email": "alice@acme.example"},
    {"breach_uuid": A1, "email": "bob@sales.acme.example"},
    {"breach_uuid": B2, "email": "carol@globex.example"},
]
NEW_SHOP = {"Name": "NewShop", "Title": "New Shop", "Domain": "shop.example",
            "BreachDate": "2017-01-01", "AddedDate": "2024-07-01T10:00:00Z",
            "ModifiedDate": "2024-07-01T10:00:00Z", "PwnCount": 20, "Description": "",
            "LogoPath": "", "DataClasses": ["Email addresses", "Names"], "IsVerified": True,
            "IsFabricated": False, "IsSensitive": False, "IsRetired": False,
            "IsSpamList": False, "IsMalware": False, "IsStealerLog": False,
            "IsSubscriptionFree": False}
# what python-requests sends by itself (requests.get without headers)
REQUESTS = {"User-Agent": "python-requests/2.31.0", "Accept-Encoding": "gzip, deflate",
            "Accept": "*/*", "Connection": "keep-alive"}


class SplunkApp(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.ctl = ctl = Ctl().init()
        ctl.import_("breaches", ctl.write("b.jsonl", "\n".join(json.dumps(b) for b in BREACHES)))
        ctl.import_("records", ctl.write("r.jsonl", "\n".join(json.dumps(r) for r in RECORDS)))
        tenant = ctl.run("tenants", "add", "acme", "--domain", "acme.example", "--domain",
                         "initech.example", check=0).stdout.decode().strip()
        cls.key = ctl.key("splunk", "--tenant", tenant)
        cls.srv = Server(ctl, "--hibp-catalog-auth", "none")

    @classmethod
    def tearDownClass(cls):
        rc = cls.srv.stop()
        cls.ctl.cleanup()
        assert rc == 0, "breachd exited %d on SIGTERM" % rc

    def call(self, path, headers):
        st, hdrs, raw = self.srv.request("/api/v3" + path, headers=headers)
        if hdrs.get("content-encoding") == "gzip":
            raw = gzip.decompress(raw)
        return st, hdrs, raw

    def test_the_apps_first_calls_in_its_order(self):
        st, hdrs, raw = self.call("/latestbreach", REQUESTS)
        self.assertEqual(st, 200)
        self.assertEqual(hdrs["content-type"], "application/json; charset=utf-8")
        self.assertEqual(json.loads(raw), NEW_SHOP)
        self.assertEqual(json.loads(raw)["Name"], "NewShop")  # what the app keeps
        st, _, raw = self.call("/breaches", REQUESTS)
        self.assertEqual((st, [b["Name"] for b in json.loads(raw)]), (200, ["OldForum", "NewShop"]))
        session = dict(REQUESTS, **{"hibp-api-key": self.key, "user-agent": "HIBP-Splunk-App"})
        del session["User-Agent"]  # the session's update replaces it (one header, any case)
        st, _, raw = self.call("/subscribeddomains", session)
        domains = json.loads(raw)
        self.assertEqual((st, domains), (200, [
            {"DomainName": d, "PwnCount": None, "PwnCountExcludingSpamLists": None,
             "PwnCountExcludingSpamListsAtLastSubscriptionRenewal": None,
             "NextSubscriptionRenewal": None} for d in ("acme.example", "initech.example")]))
        answers = {}
        for d in domains:
            st, _, raw = self.call("/breacheddomain/" + d["DomainName"], session)
            answers[d["DomainName"]] = (st, json.loads(raw) if raw else None)
        self.assertEqual(answers, {"acme.example": (200, {"alice": ["NewShop", "OldForum"]}),
                                   "initech.example": (404, None)})

    def test_without_the_key_the_domain_calls_are_refused(self):
        for path in ("/subscribeddomains", "/breacheddomain/acme.example"):
            st, _, raw = self.call(path, REQUESTS)
            self.assertEqual((st, json.loads(raw)["error"]), (401, "unauthorized"), path)


class EmptyCorpus(unittest.TestCase):
    def test_latest_breach_of_no_breach_is_404_with_an_empty_body(self):
        ctl = Ctl().init()
        srv = Server(ctl, "--hibp-catalog-auth", "none")
        try:
            st, _, raw = srv.request("/api/v3/latestbreach")
            self.assertEqual((st, raw), (404, b""))
        finally:
            rc = srv.stop()
            ctl.cleanup()
        self.assertEqual(rc, 0)


if __name__ == "__main__":
    unittest.main()
