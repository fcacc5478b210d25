"""GET /breach-search: every type and alias, filters, masking, order, and token paging."""
import json
import time
import unittest
import urllib.parse

from harness import ServerTest

S1 = "aaaaaaaa-0000-4000-8000-000000000001"  # 2024-01-10
S2 = "aaaaaaaa-0000-4000-8000-000000000002"  # 2022-06-01, imported before S3
S3 = "aaaaaaaa-0000-4000-8000-000000000003"  # 2022-06-01
S4 = "aaaaaaaa-0000-4000-8000-000000000004"  # 2015-03-03
BREACHES = [
    {"uuid": S1, "source_name": "Orbit", "site_domain": "orbit.example", "date_leaked": "2024-01-10",
     "breach_type": "Database", "site_logo": "https://orbit.example/logo.png"},
    {"uuid": S2, "source_name": "Nimbus", "date_leaked": "2022-06-01"},
    {"uuid": S3, "source_name": "Quartz", "date_leaked": "2022-06-01"},
    {"uuid": S4, "source_name": "Relic", "date_leaked": "03-Mar-2015"},
]
PLAINTEXT = ["pässwörd", "Winter2024!", "123-45-6789", "123456789", "987-65-4321"]


def records():
    out = [
        {"breach_uuid": S1, "email": "Jane.Doe@Example.COM", "password": "pässwörd",
         "ip_address": "2001:DB8::1", "phone_number": "+1 (555) 010-2030", "user_name": "JaneD",
         "first_name": "Jane", "last_name": "Doe", "other_attributes": {"city": "Springfield"}},
        {"breach_uuid": S2, "email": "jane.doe@example.com",
         "password_hash": "5F4DCC3B5AA765D61D8327DEB882CF99", "social_security_number": "123-45-6789"},
        {"breach_uuid": S3, "email": "jane.doe@example.com", "password": "ab", "ip_address": "192.0.2.10"},
        {"breach_uuid": S4, "email": "jane.doe@example.com", "password": "x",
         "bitcoin_address": "1BoatSLRHtKNngkdXEeobR76b53LETtpyT"},
        {"breach_uuid": S1, "email": "shadow@elsewhere.example", "user_name": "Shadow"},
        {"breach_uuid": S3, "user_name": "shadow", "password_hash": "$2b$12$AbCdEfGhIjKlMnOpQrStUu"},
        {"breach_uuid": S2, "phone_number": "+44 20 7946 0958", "social_security_number": "987654321"},
        {"breach_uuid": S4, "phone_number": "44-20-7946-0958"},
    ]
    for i in range(40):
        r = {"breach_uuid": [S1, S2, S3, S4][i % 4], "email": "user%02d@BigCorp.example" % i}
        if i % 10 == 3:
            r["password"] = "Winter2024!"
        elif i % 2 == 0:
            r["password"] = "pw-%d" % i
        if i % 3 == 0:
            r["ip_address"] = "198.51.100.%d" % i
        out.append(r)
    return out


def bigcorp_order():
    """Expected order for the bigcorp domain: breach date newest first, then id descending
    within a date. Ids follow the order records are written in: a file's records by email
    domain, then breach, then email (src/ingest/stage_order.c), so S3's records of
    2022-06-01 (the later uuid) come before S2's."""
    rows = [(i, [S1, S2, S3, S4][i % 4]) for i in range(40)]
    date = {S1: 20240110, S2: 20220601, S3: 20220601, S4: 20150303}
    written = {i: n for n, (i, b) in enumerate(sorted(rows, key=lambda r: (r[1], r[0])))}
    return [i for i, b in sorted(rows, key=lambda r: (-date[r[1]], -written[r[0]]))]


class Search(ServerTest):
    @classmethod
    def populate(cls, ctl):
        ctl.import_("breaches", ctl.write("b.jsonl", "\n".join(json.dumps(b) for b in BREACHES)))
        ctl.import_("records", ctl.write("r.jsonl", "\n".join(json.dumps(r) for r in records())))
        cls.bodies = []

    def search(self, status=200, key="__default__", **params):
        path = "/v7/breach-search?" + urllib.parse.urlencode(params)
        st, hdrs, raw = self.srv.request(path, key=self.key if key == "__default__" else key)
        self.bodies.append(raw)
        body = json.loads(raw)
        self.assertEqual(st, status, body)
        return body

    def emails(self, body):
        return [r["breached_data"]["email"] for r in body["data"]]

    def breaches(self, body):
        return [r["breach_details"]["site_name"] for r in body["data"]]

    # --- types, aliases, normalisation -------------------------------------------------

    def test_email_is_case_insensitive_and_ordered_newest_breach_first(self):
        body = self.search(type="email", account="  JANE.DOE@example.com ")
        self.assertEqual(body["records_found"], 4)
        self.assertIsNone(body["pagination_token"])
        # Nimbus and Quartz share a date: the later import (Quartz) comes first.
        self.assertEqual(self.breaches(body), ["Orbit", "Quartz", "Nimbus", "Relic"])

    def test_email_domain_drops_at_and_case(self):
        for account in ("bigcorp.example", "@BigCorp.Example"):
            self.assertEqual(self.search(type="email_domain", account=account)["records_found"], 40)

    def test_phone_number_and_alias_ignore_punctuation(self):
        for t in ("phone_number", "phonenumber"):
            for account in ("+44 20 7946 0958", "442079460958", "(44) 20.7946-0958"):
                body = self.search(type=t, account=account)
                self.assertEqual(body["records_found"], 2)
                self.assertEqual(self.breaches(body), ["Nimbus", "Relic"])

    def test_username_is_case_insensitive(self):
        body = self.search(type="username", account="SHADOW")
        self.assertEqual(self.breaches(body), ["Orbit", "Quartz"])
        self.assertEqual([r["breached_data"]["user_name"] for r in body["data"]], ["Shadow", "shadow"])

    def test_ip_address_and_alias_compare_canonical_forms(self):
        for t in ("ip_address", "ipaddress"):
            for account in ("2001:db8:0:0:0:0:0:1", "2001:DB8::1"):
                body = self.search(type=t, account=account)
                self.assertEqual(self.emails(body), ["jane.doe@example.com"])
                self.assertEqual(body["data"][0]["breached_data"]["ip_address"], "2001:db8::1")

    def test_ssn_with_or_without_dashes(self):
        for account in ("123-45-6789", "123456789", "123 45 6789"):
            body = self.search(type="social_security_number", account=account)
            self.assertEqual(self.breaches(body), ["Nimbus"])
            self.assertEqual(body["data"][0]["breached_data"]["social_security_number"], "*******89")

    def test_password_is_exact(self):
        body = self.search(type="password", account="Winter2024!")
        self.assertEqual(body["records_found"], 4)
        self.assertEqual(sorted(self.emails(body)),
                         ["user03@bigcorp.example", "user13@bigcorp.example",
                          "user23@bigcorp.example", "user33@bigcorp.example"])
        self.search(404, type="password", account="winter2024!")

    def test_password_hash_hex_is_case_insensitive_but_crypt_strings_are_exact(self):
        for account in ("5f4dcc3b5aa765d61d8327deb882cf99", "5F4DCC3B5AA765D61D8327DEB882CF99"):
            body = self.search(type="password_hash", account=account)
            self.assertEqual(self.breaches(body), ["Nimbus"])
        self.assertEqual(self.search(type="password_hash",
                                     account="$2b$12$AbCdEfGhIjKlMnOpQrStUu")["records_found"], 1)
        self.search(404, type="password_hash", account="$2b$12$abcdefghijklmnopqrstuu")

    def test_bitcoin_address_is_exact(self):
        body = self.search(type="bitcoin_address", account="1BoatSLRHtKNngkdXEeobR76b53LETtpyT")
        self.assertEqual(self.breaches(body), ["Relic"])
        self.search(404, type="bitcoin_address", account="1boatslrhtknngkdxeeobr76b53lettpyt")

    # --- the record shape and masking ---------------------------------------------------

    def test_record_shape_masking_and_severity(self):
        body = self.search(type="email", account="jane.doe@example.com")
        first = body["data"][0]
        self.assertEqual(list(first), ["breached_data", "breach_details", "severity"])
        self.assertEqual(first["severity"], "High")
        self.assertEqual(first["breached_data"], {
            "user_name": "JaneD", "first_name": "Jane", "last_name": "Doe",
            "email": "jane.doe@example.com", "email_domain": "example.com",
            "phone_number": "+1 (555) 010-2030", "ip_address": "2001:db8::1",
            "bitcoin_address": None, "password": "******rd", "password_hash": None,
            "other_attributes": "{\"city\":\"Springfield\"}", "social_security_number": None,
            "severity": "High"})
        self.assertEqual(list(first["breached_data"])[-2:], ["social_security_number", "severity"])
        self.assertEqual(first["breach_details"], {
            "uuid": S1, "site_name": "Orbit", "site_domain": "orbit.example",
            "date_leaked": "10-Jan-2024", "site_categories": "", "site_country": "",
            "site_language": "", "password_types": "", "leaked_data_types": "",
            "description": "", "service_article_url": None, "pwned_count": 12,
            "site_logo": "https://orbit.example/logo.png", "heroic_article_url": None})
        by_breach = {r["breach_details"]["site_name"]: r["breached_data"] for r in body["data"]}
        self.assertEqual(by_breach["Quartz"]["password"], "**")
        self.assertEqual(by_breach["Relic"]["password"], "*")
        self.assertEqual(by_breach["Nimbus"]["severity"], "High")  # SSN exposed
        self.assertEqual(self.search(type="username", account="shadow")["data"][1]
                         ["breached_data"]["severity"], "Medium")  # hash only
        self.assertEqual(self.search(type="username", account="shadow")["data"][0]
                         ["breached_data"]["severity"], "Low")

    # --- filters ------------------------------------------------------------------------

    def test_presence_filters(self):
        body = self.search(type="email", account="jane.doe@example.com", password="yes")
        self.assertEqual(self.breaches(body), ["Orbit", "Quartz", "Relic"])
        body = self.search(type="email", account="jane.doe@example.com", password="NO")
        self.assertEqual(self.breaches(body), ["Nimbus"])
        body = self.search(type="email", account="jane.doe@example.com", password="Yes",
                           ip_address="yes")
        self.assertEqual(self.breaches(body), ["Orbit", "Quartz"])
        body = self.search(type="email", account="jane.doe@example.com", bitcoin_address="yes")
        self.assertEqual(self.breaches(body), ["Relic"])

    def test_value_filters_are_normalised(self):
        body = self.search(type="email", account="jane.doe@example.com", password="ab")
        self.assertEqual(self.breaches(body), ["Quartz"])
        body = self.search(type="email", account="jane.doe@example.com",
                           ip_address="2001:db8:0::1", username="janed")
        self.assertEqual(self.breaches(body), ["Orbit"])
        body = self.search(type="email", account="jane.doe@example.com",
                           social_security_number="123 45 6789")
        self.assertEqual(self.breaches(body), ["Nimbus"])
        body = self.search(type="email", account="jane.doe@example.com",
                           phone_number="+1 555 010 2030")
        self.assertEqual(self.breaches(body), ["Orbit"])

    def test_rare_password_within_a_large_domain(self):
        body = self.search(type="email_domain", account="bigcorp.example", password="Winter2024!")
        self.assertEqual(body["records_found"], 4)
        body = self.search(type="email_domain", account="bigcorp.example", password="Winter2024!",
                           ip_address="yes")
        self.assertEqual(self.emails(body), ["user33@bigcorp.example", "user03@bigcorp.example"])

    def test_filters_that_match_nothing_are_404_with_an_empty_envelope(self):
        body = self.search(404, type="email", account="jane.doe@example.com", password="nope")
        self.assertEqual(body, {"error": "not_found", "message": "no records found",
                                "records_found": 0, "pagination_token": None, "data": []})

    # --- bad input ----------------------------------------------------------------------

    def test_validation_errors(self):
        cases = [
            dict(type="mail", account="a@example.com"),
            dict(type="email", account="not-an-email"),
            dict(type="email_domain", account="no_domain"),
            dict(type="phone_number", account="12345"),
            dict(type="phone_number", account="1234567890123456"),
            dict(type="phone_number", account="555-CALL-NOW"),
            dict(type="ip_address", account="300.1.1.1"),
            dict(type="ip_address", account="2001:db8::1/64"),
            dict(type="social_security_number", account="12345678"),
            dict(type="password", account=""),
            dict(type="email", account="jane.doe@example.com", email="maybe"),
            dict(type="email", account="jane.doe@example.com", bitcoin_address="1Boat"),
            dict(type="email", account="jane.doe@example.com", ip_address="not-an-ip"),
            dict(type="email", account="jane.doe@example.com", number_of_records="0"),
            dict(type="email", account="jane.doe@example.com", number_of_records="1001"),
        ]
        for params in cases:
            body = self.search(422, **params)
            self.assertEqual(body["error"], "validation_error", params)

    def test_bad_requests(self):
        for params in (dict(account="a@example.com"), dict(type="email"),
                       dict(type="email", account="a@example.com", passwrd="yes"),
                       dict(type="email", account="a@example.com", number_of_records="ten")):
            self.assertEqual(self.search(400, **params)["error"], "bad_request", params)
        st, _, raw = self.srv.request("/v7/breach-search?type=email&account=a@example.com&type=email",
                                      key=self.key)
        self.assertEqual(st, 400)

    # --- paging -------------------------------------------------------------------------

    def walk(self, size, **params):
        seen, pages, token = [], 0, None
        while True:
            p = dict(params, number_of_records=str(size))
            if token:
                p["paging_token"] = token
            body = self.search(**p)
            pages += 1
            self.assertEqual(body["records_found"], 40)
            self.assertLessEqual(len(body["data"]), size)
            seen += self.emails(body)
            token = body["pagination_token"]
            if token is None:
                return seen, pages
            self.assertRegex(token, r"^[A-Za-z0-9_-]+$")

    def test_walking_all_pages_returns_every_record_once_in_order(self):
        want = ["user%02d@bigcorp.example" % i for i in bigcorp_order()]
        for size, pages in ((1, 40), (7, 6), (40, 1), (100, 1)):
            seen, n = self.walk(size, type="email_domain", account="bigcorp.example")
            self.assertEqual(seen, want, "page size %d" % size)
            self.assertEqual(n, pages)

    def test_token_errors_say_which(self):
        first = self.search(type="email_domain", account="bigcorp.example", number_of_records="5")
        token = first["pagination_token"]
        base = dict(type="email_domain", account="bigcorp.example", number_of_records="5")
        msg = self.search(422, paging_token=token[:-2] + ("AA" if token[-2:] != "AA" else "BB"), **base)["message"]
        self.assertRegex(msg, "altered|malformed")
        self.assertIn("malformed", self.search(422, paging_token="abc", **base)["message"])
        other = dict(base, account="example.com")
        self.assertIn("different search", self.search(422, paging_token=token, **other)["message"])
        self.assertIn("different search",
                      self.search(422, paging_token=token, password="yes", **base)["message"])
        key2 = self.ctl.key("second")
        import time
        deadline = time.time() + 5
        while self.srv.request("/v7/breaches", key=key2)[0] != 200 and time.time() < deadline:
            time.sleep(0.1)
        self.assertIn("another API key",
                      self.search(422, key=key2, paging_token=token, **base)["message"])
        # a changed page size is allowed: the token marks a position, not a page number
        self.assertEqual(len(self.search(paging_token=token, type="email_domain",
                                         account="bigcorp.example", number_of_records="2")["data"]), 2)

    def test_pagination_token_sent_back_is_refused_naming_paging_token(self):
        first = self.search(type="email_domain", account="bigcorp.example", number_of_records="5")
        msg = self.assertError("/v7/breach-search?type=email_domain&account=bigcorp.example"
                               "&number_of_records=5&pagination_token=" + first["pagination_token"],
                               400, "bad_request")
        self.assertEqual(msg, "unknown query parameter 'pagination_token': a reply's "
                              "pagination_token goes back in paging_token")

    def test_no_response_body_holds_a_plaintext_secret(self):
        self.search(type="email_domain", account="bigcorp.example", number_of_records="1000")
        self.search(type="email", account="jane.doe@example.com")
        self.search(type="phone_number", account="442079460958")
        for raw in self.bodies:
            for secret in PLAINTEXT:
                self.assertNotIn(secret.encode(), raw)


class SearchWhileImporting(ServerTest):
    """Records imported between two page requests never cause a repeat or a skip."""

    @classmethod
    def populate(cls, ctl):
        ctl.import_("breaches", ctl.write("b.jsonl", "\n".join(json.dumps(b) for b in BREACHES)))
        rows = [{"breach_uuid": [S1, S2, S4][i % 3], "email": "p%02d@paging.example" % i}
                for i in range(30)]
        ctl.import_("records", ctl.write("r.jsonl", "\n".join(json.dumps(r) for r in rows)))

    def page(self, token=None):
        q = {"type": "email_domain", "account": "paging.example", "number_of_records": "4"}
        if token:
            q["paging_token"] = token
        st, body = self.srv.get("/v7/breach-search?" + urllib.parse.urlencode(q), key=self.key)
        self.assertEqual(st, 200, body)
        return body

    def test_import_between_pages(self):
        body = self.page()
        seen = [r["breached_data"]["email"] for r in body["data"]]
        # New records in the newest breach (already passed) and in the oldest (still ahead).
        rows = [{"breach_uuid": S1, "email": "new-ahead-of-cursor@paging.example"},
                {"breach_uuid": S4, "email": "new-behind-cursor@paging.example"}]
        self.ctl.import_("records", self.ctl.write("more.jsonl", "\n".join(json.dumps(r) for r in rows)))
        token = body["pagination_token"]
        while token:
            body = self.page(token)
            self.assertEqual(body["records_found"], 30)
            seen += [r["breached_data"]["email"] for r in body["data"]]
            token = body["pagination_token"]
        original = {"p%02d@paging.example" % i for i in range(30)}
        self.assertEqual(len(seen), len(set(seen)), "a record was repeated")
        self.assertTrue(original <= set(seen), "a record was skipped")
        self.assertIn("new-behind-cursor@paging.example", seen)
        self.assertNotIn("new-ahead-of-cursor@paging.example", seen)


class BreachDetails(ServerTest):
    """Each record carries its own breach's details, however many breaches share a page
    and after a breach changes while the server runs."""
    N = 300  # more breaches than the server's per-thread cache has slots (256)

    @staticmethod
    def uuid(i):
        return "bbbbbbbb-0000-4000-8000-%012d" % i

    @classmethod
    def populate(cls, ctl):
        breaches = [{"uuid": cls.uuid(i), "source_name": "Source %d" % i,
                     "date_leaked": "2020-01-01", "description": "breach number %d" % i}
                    for i in range(cls.N)]
        ctl.import_("breaches", ctl.write("b.jsonl", "\n".join(json.dumps(b) for b in breaches)))
        # breaches i and i+256 share a cache slot: interleave their records
        order = [i for k in range(256) for i in (k, k + 256) if i < cls.N]
        order += [i for i in range(cls.N) if i not in order]
        rows = [{"breach_uuid": cls.uuid(i), "email": "m%03d@many.example" % i} for i in order]
        rows += [{"breach_uuid": cls.uuid(7), "email": "grow%d@many.example" % i} for i in range(3)]
        ctl.import_("records", ctl.write("r.jsonl", "\n".join(json.dumps(r) for r in rows)))

    def domain_pages(self):
        seen, token = [], None
        while True:
            q = {"type": "email_domain", "account": "many.example", "number_of_records": "100"}
            if token:
                q["paging_token"] = token
            st, body = self.srv.get("/v7/breach-search?" + urllib.parse.urlencode(q), key=self.key)
            self.assertEqual(st, 200, body)
            seen += body["data"]
            token = body["pagination_token"]
            if not token:
                return seen

    def test_every_record_has_its_own_breach(self):
        for _ in range(2):  # the second pass is answered from the cache
            seen = self.domain_pages()
            self.assertEqual(len(seen), self.N + 3)
            for r in seen:
                email = r["breached_data"]["email"]
                d = r["breach_details"]
                i = 7 if email.startswith("grow") else int(email[1:4])
                self.assertEqual(d["uuid"], self.uuid(i), email)
                self.assertEqual(d["site_name"], "Source %d" % i)
                self.assertEqual(d["description"], "breach number %d" % i)
                self.assertEqual(d["date_leaked"], "01-Jan-2020")

    def test_details_follow_an_import_made_while_serving(self):
        def pwned():
            st, body = self.srv.get("/v7/breach-search?type=email&account=grow0@many.example",
                                    key=self.key)
            self.assertEqual(st, 200, body)
            return body["data"][0]["breach_details"]["pwned_count"]
        before = pwned()
        self.assertEqual(pwned(), before)
        rows = [{"breach_uuid": self.uuid(7), "email": "late%d@other.example" % i} for i in range(5)]
        self.ctl.import_("records", self.ctl.write("late.jsonl", "\n".join(json.dumps(r) for r in rows)))
        deadline = time.monotonic() + 5
        while pwned() == before and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.01)  # past the 2 ms a read view is shared: both threads see the import
        for _ in range(6):  # each worker thread has its own cache
            self.assertEqual(pwned(), before + 5)


if __name__ == "__main__":
    unittest.main()
