"""HEROIC v7 as its clients see it (issue 16, section 3): the fields HEROIC's published
OpenAPI document (7.3.0) adds, token-only continuation, lenient parameters (empty means
absent, jQuery's `_`, case-insensitive types), --empty-search-status and CORS."""
import json
import subprocess
import time
import unittest
import urllib.parse

from harness import Ctl, Server, ServerTest, binary, fixture

B1 = "bbbbbbbb-0000-4000-8000-000000000001"  # 2024-03-05, with a logo and an article
B2 = "bbbbbbbb-0000-4000-8000-000000000002"  # 2020-07-08, neither
BREACHES = [
    {"uuid": B1, "source_name": "Harbor", "site_domain": "harbor.example",
     "date_leaked": "2024-03-05", "breach_type": "Database",
     "service_article_url": "https://breachd.example/a/harbor",
     "site_logo": "https://harbor.example/logo.png", "pwned_count": 77},
    {"uuid": B2, "source_name": "Lantern", "date_leaked": "2020-07-08"},
]


def records():
    out = [
        {"breach_uuid": B1, "email": "kim@corp.example", "password": "s3cret-kim"},
        {"breach_uuid": B2, "email": "kim@corp.example", "password_hash": "abcdef0123456789"},
    ]
    # 23 records of one domain: several pages at sizes 5 and 10
    for i in range(23):
        r = {"breach_uuid": [B1, B2][i % 2], "email": "u%02d@wide.example" % i,
             "user_name": "wide%02d" % i}
        if i % 3 == 0:
            r["password"] = "pw-%d" % i
        out.append(r)
    return out


def populate_store(ctl):
    ctl.import_("breaches", ctl.write("b.jsonl", "\n".join(json.dumps(b) for b in BREACHES)))
    ctl.import_("records", ctl.write("r.jsonl", "\n".join(json.dumps(r) for r in records())))
    ctl.import_("cards", fixture("cards.csv"))


class HeroicShapes(ServerTest):
    """Additive fields, lenient parameters and token-only paging, on a default server."""

    @classmethod
    def populate(cls, ctl):
        populate_store(ctl)

    def call(self, path, status=200, key="__default__"):
        st, hdrs, raw = self.srv.request(path, key=self.key if key == "__default__" else key)
        body = json.loads(raw)
        self.assertEqual(st, status, body)
        return body

    def search(self, status=200, **params):
        return self.call("/v7/breach-search?" + urllib.parse.urlencode(params), status)

    def emails(self, body):
        return [r["breached_data"]["email"] for r in body["data"]]

    # --- breach objects -----------------------------------------------------------------

    def test_catalog_entries_carry_site_name_logo_and_article(self):
        body = self.call("/v7/breaches")
        self.assertEqual([b["uuid"] for b in body], [B1, B2])
        self.assertEqual(list(body[0])[-4:],
                         ["pwned_count", "site_name", "site_logo", "heroic_article_url"])
        self.assertEqual((body[0]["source_name"], body[0]["site_name"], body[0]["site_logo"],
                          body[0]["heroic_article_url"], body[0]["service_article_url"]),
                         ("Harbor", "Harbor", "https://harbor.example/logo.png",
                          "https://breachd.example/a/harbor", "https://breachd.example/a/harbor"))
        self.assertEqual((body[1]["site_name"], body[1]["site_logo"], body[1]["heroic_article_url"]),
                         ("Lantern", None, None))
        self.assertEqual(body[0]["breach_type"], "Database")

    def test_single_breach_carries_logo_and_article(self):
        body = self.call("/v7/breaches/" + B1)
        self.assertEqual(list(body), [
            "uuid", "site_name", "site_domain", "date_leaked", "site_categories", "site_country",
            "site_language", "password_types", "leaked_data_types", "description",
            "service_article_url", "pwned_count", "site_logo", "heroic_article_url"])
        self.assertEqual((body["site_name"], body["site_logo"], body["heroic_article_url"]),
                         ("Harbor", "https://harbor.example/logo.png",
                          "https://breachd.example/a/harbor"))

    def test_search_record_has_severity_at_its_root_and_heroic_breach_details(self):
        body = self.search(type="email", account="kim@corp.example")
        self.assertEqual([list(r) for r in body["data"]],
                         [["breached_data", "breach_details", "severity"]] * 2)
        self.assertEqual([r["severity"] for r in body["data"]], ["High", "Medium"])
        self.assertEqual([r["breached_data"]["severity"] for r in body["data"]], ["High", "Medium"])
        details = body["data"][0]["breach_details"]
        self.assertEqual(details, self.call("/v7/breaches/" + B1))
        self.assertEqual(body["data"][1]["breach_details"]["heroic_article_url"], None)

    # --- a paging token on its own -------------------------------------------------------

    def walk(self, first, size, full=None):
        """Pages after first, asked with the token alone (full: with these params too)."""
        body, pages = first, [first]
        while body["pagination_token"]:
            p = dict(full or {}, paging_token=body["pagination_token"])
            if size is not None:
                p["number_of_records"] = str(size)
            body = self.search(**p)
            pages.append(body)
        return pages

    def test_token_alone_continues_exactly_as_the_full_request(self):
        full = dict(type="email_domain", account="wide.example", password="no")
        first = self.search(number_of_records="5", **full)
        self.assertEqual(first["records_found"], 15)
        alone = self.walk(first, 5)
        named = self.walk(first, 5, full)
        self.assertEqual([p["data"] for p in alone], [p["data"] for p in named])
        self.assertEqual([len(p["data"]) for p in alone], [5, 5, 5])
        self.assertEqual([p["records_found"] for p in alone], [15, 15, 15])
        want = ["u%02d@wide.example" % i for i in range(23) if i % 3]
        got = [e for p in alone for e in self.emails(p)]
        self.assertEqual(sorted(got), sorted(want))
        self.assertEqual(len(set(got)), 15)

    def test_token_alone_keeps_a_value_filter_and_allows_a_new_page_size(self):
        full = dict(type="email_domain", account="WIDE.example", username="WIDE04")
        first = self.search(**full)
        self.assertEqual(self.emails(first), ["u04@wide.example"])
        first = self.search(type="email_domain", account="wide.example", number_of_records="4")
        second = self.search(paging_token=first["pagination_token"], number_of_records="10")
        third = self.search(paging_token=second["pagination_token"])  # the default, 100
        self.assertEqual([len(first["data"]), len(second["data"]), len(third["data"])], [4, 10, 9])
        self.assertIsNone(third["pagination_token"])
        self.assertEqual(len(set(self.emails(first) + self.emails(second) + self.emails(third))), 23)

    def test_token_alone_ignores_empty_search_parameters(self):
        first = self.search(type="email_domain", account="wide.example", number_of_records="20")
        token = first["pagination_token"]
        body = self.search(paging_token=token, type="", account="", password="", _="17")
        self.assertEqual(body, self.search(paging_token=token))
        self.assertEqual(len(body["data"]), 3)

    def test_token_with_a_different_search_is_still_refused(self):
        first = self.search(type="email_domain", account="wide.example", number_of_records="5")
        token = first["pagination_token"]
        for other in (dict(type="email_domain", account="corp.example"),
                      dict(type="email_domain", account="wide.example", password="yes")):
            msg = self.search(422, paging_token=token, **other)["message"]
            self.assertIn("different search", msg)
        # naming only part of the search is a request that names its search: type and
        # account are then required
        self.assertEqual(self.search(400, paging_token=token, password="yes")["error"],
                         "bad_request")
        self.assertEqual(self.search(400, paging_token=token, type="email_domain")["error"],
                         "bad_request")

    def test_token_alone_is_still_bound_to_its_key(self):
        first = self.search(type="email_domain", account="wide.example", number_of_records="5")
        other = self.ctl.key("other-dashboard")
        st = 0
        for _ in range(50):  # the new key is seen within a second
            st, _, raw = self.srv.request("/v7/breaches", key=other)
            if st == 200:
                break
            import time
            time.sleep(0.1)
        body = self.call("/v7/breach-search?paging_token=" + first["pagination_token"], 422,
                         key=other)
        self.assertIn("another API key", body["message"])
        self.assertIn("malformed", self.search(422, paging_token="abc")["message"])

    # --- lenient parameters -------------------------------------------------------------

    def test_type_is_case_insensitive_aliases_too(self):
        for t in ("EMAIL", "Email", "eMaIl"):
            self.assertEqual(self.search(type=t, account="kim@corp.example")["records_found"], 2)
        self.assertEqual(self.search(type="Email_Domain", account="wide.example")["records_found"], 23)
        self.assertEqual(self.search(type="USERNAME", account="wide07")["records_found"], 1)
        self.assertEqual(self.search(422, type="E-MAIL", account="kim@corp.example")["error"],
                         "validation_error")

    def test_empty_optional_parameters_count_as_absent(self):
        full = self.search(type="email", account="kim@corp.example")
        body = self.search(type="email", account="kim@corp.example", password="", ip_address="",
                           number_of_records="", paging_token="")
        self.assertEqual(body, full)
        self.assertEqual(len(self.call("/v7/breaches?number_of_records=")), 2)
        cards = self.call("/v7/credit-card-search?page=&size=&sort=&query=")
        self.assertEqual((cards["number"], cards["size"], cards["totalElements"]), (0, 20, 8))
        # an empty value is no repeat: the one filled value counts
        body = self.search(type="email", account="kim@corp.example", password="yes")
        path = "/v7/breach-search?type=email&account=kim%40corp.example&password=&password=yes"
        self.assertEqual(self.call(path), body)
        self.assertEqual(self.emails(body), ["kim@corp.example"])

    def test_empty_required_parameters_are_still_refused(self):
        self.assertEqual(self.search(422, type="", account="kim@corp.example")["error"],
                         "validation_error")
        self.assertEqual(self.search(422, type="email", account="")["error"], "validation_error")

    def test_jquery_cache_buster_is_ignored_everywhere(self):
        for path in ("/v7/breaches?_=1700000000000",
                     "/v7/breaches/" + B1 + "?_=1700000000000",
                     "/v7/breach-search?type=email&account=kim%40corp.example&_=1700000000000",
                     "/v7/credit-card-search?query=411111*&_=1700000000000&_=1700000000001"):
            plain = path.split("?_=")[0].split("&_=")[0]
            self.assertEqual(self.call(path), self.call(plain), path)
        # only "_" itself: "__" and "_x" are still unknown parameters
        for name in ("__", "_x"):
            self.assertEqual(self.call("/v7/breaches?%s=1" % name, 400)["error"], "bad_request")

    def test_no_match_is_404_by_default(self):
        body = self.search(404, type="email", account="nobody@corp.example")
        self.assertEqual(body, {"error": "not_found", "message": "no records found",
                                "records_found": 0, "pagination_token": None, "data": []})


class FlagServer(unittest.TestCase):
    """One store and one server started with FLAGS."""
    FLAGS = ()

    @classmethod
    def setUpClass(cls):
        cls.ctl = Ctl().init()
        populate_store(cls.ctl)
        cls.key = cls.ctl.key("e2e", "--plan", "enterprise")
        cls.srv = Server(cls.ctl, *cls.FLAGS)

    @classmethod
    def tearDownClass(cls):
        rc = cls.srv.stop()
        cls.ctl.cleanup()
        assert rc == 0, "breachd exited %d on SIGTERM" % rc

    def wait_for_key(self, key):
        deadline = time.time() + 5
        while self.srv.request("/v7/breaches", key=key)[0] != 200:
            self.assertLess(time.time(), deadline, "a new key was not accepted within 5 s")
            time.sleep(0.1)


class EmptySearchStatus200(FlagServer):
    FLAGS = ("--empty-search-status", "200")

    def test_no_match_is_200_with_the_empty_envelope(self):
        st, hdrs, raw = self.srv.request(
            "/v7/breach-search?type=email&account=nobody%40corp.example", key=self.key)
        self.assertEqual(st, 200)
        self.assertEqual(hdrs["content-type"], "application/json; charset=utf-8")
        self.assertEqual(raw, b'{"records_found":0,"pagination_token":null,"data":[]}')
        st, _, raw = self.srv.request(
            "/v7/breach-search?type=email&account=kim%40corp.example&password=no", key=self.key)
        self.assertEqual((st, json.loads(raw)["records_found"]), (200, 1))

    def test_other_404s_are_unchanged(self):
        for path in ("/v7/breaches/bbbbbbbb-0000-4000-8000-00000000000f", "/v7/nothing-here"):
            st, _, raw = self.srv.request(path, key=self.key)
            self.assertEqual((st, json.loads(raw)["error"]), (404, "not_found"), path)

    def test_card_search_without_a_match_is_200_either_way(self):
        st, _, raw = self.srv.request("/v7/credit-card-search?query=leakId:NOPE", key=self.key)
        self.assertEqual(st, 200)
        self.assertEqual(json.loads(raw), {
            "number": 0, "size": 20, "totalElements": 0, "totalPages": 0, "numberOfElements": 0,
            "first": True, "last": True, "hasContent": False, "content": []})


DASH = "https://dash.example.com"
LAN = "http://10.0.0.5:8080"
CORS_NAMES = ("access-control-allow-origin", "access-control-expose-headers",
              "access-control-allow-methods", "access-control-allow-headers",
              "access-control-max-age")


class Cors(FlagServer):
    FLAGS = ("--cors-origin", DASH, "--cors-origin", "HTTP://10.0.0.5:8080")

    def preflight(self, origin, path="/v7/breach-search", method="GET"):
        return self.srv.request(path, method="OPTIONS", headers={
            "Origin": origin, "Access-Control-Request-Method": method,
            "Access-Control-Request-Headers": "x-api-key"})

    def assertCors(self, hdrs, origin):
        self.assertEqual(hdrs.get("access-control-allow-origin"), origin)
        # the searches answer CSV or JSON by Accept: they vary on it too
        self.assertIn(hdrs.get("vary"), ("Origin, Accept-Encoding", "Origin, Accept, Accept-Encoding"))
        exposed = [h.strip() for h in hdrs["access-control-expose-headers"].split(",")]
        for name in ("X-Request-Id", "X-RateLimit-Limit", "X-RateLimit-Remaining",
                     "X-RateLimit-Reset", "Retry-After", "ETag", "X-Quota-Reset", "X-Records-Found",
                     "X-Pagination-Token", "X-Total-Elements"):
            self.assertIn(name, exposed)

    def test_allowed_origin_reads_replies(self):
        for origin in (DASH, LAN):
            st, hdrs, raw = self.srv.request("/v7/breaches", key=self.key,
                                             headers={"Origin": origin})
            self.assertEqual(st, 200)
            self.assertCors(hdrs, origin)
            self.assertNotIn("access-control-allow-methods", hdrs)

    def test_other_origins_get_no_cors_headers_but_are_served(self):
        for origin in ("https://evil.example", DASH + "/", "https://dash.example.com:8443",
                       "http://dash.example.com", "null"):
            st, hdrs, _ = self.srv.request("/v7/breaches", key=self.key, headers={"Origin": origin})
            self.assertEqual(st, 200, origin)
            self.assertEqual([h for h in CORS_NAMES if h in hdrs], [], origin)
            self.assertEqual(hdrs.get("vary"), "Origin, Accept-Encoding")
        st, hdrs, _ = self.srv.request("/v7/breaches", key=self.key)
        self.assertEqual([h for h in CORS_NAMES if h in hdrs], [])

    def test_preflight_is_answered_without_a_key(self):
        for path in ("/v7/breach-search", "/v7/breaches", "/v7/credit-card-search",
                     "/v7/breaches/" + B1):
            st, hdrs, raw = self.preflight(DASH, path)
            self.assertEqual((st, raw), (204, b""), path)
            self.assertEqual(hdrs["access-control-allow-origin"], DASH)
            self.assertEqual(hdrs["access-control-allow-methods"], "GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS")
            allowed = [h.strip() for h in hdrs["access-control-allow-headers"].split(",")]
            self.assertEqual(allowed, ["x-api-key", "hibp-api-key", "content-type", "accept",
                                       "accept-language", "cache-control", "x-requested-with"])
            self.assertEqual(hdrs["access-control-max-age"], "7200")
            self.assertEqual(hdrs["vary"], "Origin, Accept-Encoding")
            self.assertNotIn("content-type", hdrs)
            self.assertNotIn("x-ratelimit-remaining", hdrs)

    def test_a_dashboard_can_create_and_delete_a_watch(self):
        # what a browser does for a JSON POST: the preflight, then the request with Origin
        st, hdrs, _ = self.preflight(DASH, "/v7/watches", method="POST")
        self.assertEqual(st, 204)
        self.assertIn("POST", [m.strip() for m in hdrs["access-control-allow-methods"].split(",")])
        body = json.dumps({"type": "email", "account": "kim@corp.example",
                           "url": "https://hooks.example.com/breachd", "secret": "s" * 32})
        st, hdrs, raw = self.srv.request("/v7/watches", key=self.key, method="POST", body=body,
                                         headers={"Origin": DASH, "Content-Type": "application/json"})
        self.assertEqual(st, 201, raw)
        self.assertCors(hdrs, DASH)
        exposed = [h.strip() for h in hdrs["access-control-expose-headers"].split(",")]
        self.assertIn("Location", exposed)
        watch = str(json.loads(raw)["id"])
        st, hdrs, _ = self.preflight(DASH, "/v7/watches/" + watch, method="DELETE")
        self.assertEqual(st, 204)
        st, hdrs, _ = self.srv.request("/v7/watches/" + watch, key=self.key, method="DELETE",
                                       headers={"Origin": DASH})
        self.assertEqual(st, 204)
        self.assertEqual(hdrs["access-control-allow-origin"], DASH)

    def test_preflight_from_another_origin_is_a_403_without_cors_headers(self):
        st, hdrs, raw = self.preflight("https://evil.example")
        body = json.loads(raw)
        self.assertEqual(st, 403)
        self.assertEqual(body["error"], "origin_not_allowed")
        self.assertNotIn("evil", body["message"])
        self.assertEqual([h for h in CORS_NAMES if h in hdrs], [])

    def test_options_that_is_not_a_preflight_behaves_as_before(self):
        st, hdrs, raw = self.srv.request("/v7/breaches", method="OPTIONS",
                                         headers={"Origin": DASH})
        self.assertEqual((st, json.loads(raw)["error"]), (401, "unauthorized"))
        self.assertCors(hdrs, DASH)
        st, hdrs, raw = self.srv.request("/v7/breaches", method="OPTIONS", key=self.key)
        self.assertEqual((st, hdrs["allow"]), (405, "GET, HEAD"))

    def test_errors_to_an_allowed_origin_carry_cors_headers(self):
        h = {"Origin": DASH}
        cases = [("/v7/breaches", None, 401), ("/v7/breaches", "bd_" + "A" * 43, 403),
                 ("/v7/nothing-here", self.key, 404), ("/nothing", None, 404),
                 ("/v7/breach-search?type=email&account=nobody%40corp.example", self.key, 404),
                 ("/v7/breach-search?type=mail&account=x", self.key, 422),
                 ("/v7/breaches?bogus=1", self.key, 400)]
        for path, key, status in cases:
            st, hdrs, raw = self.srv.request(path, key=key, headers=h)
            self.assertEqual(st, status, path)
            self.assertCors(hdrs, DASH)
            self.assertIn(b'"error"', raw)
        one = self.ctl.key("one-an-hour", "--rate", "1/h")
        self.wait_for_key(one)
        st, hdrs, raw = self.srv.request("/v7/breaches", key=one, headers=h)
        self.assertEqual((st, json.loads(raw)["error"]), (429, "rate_limited"))
        self.assertCors(hdrs, DASH)
        self.assertIn("retry-after", hdrs)


class CorsAnyOrigin(FlagServer):
    FLAGS = ("--cors-origin", "*")

    def test_every_origin_may_read_and_nothing_varies(self):
        for origin in ("https://anything.example", "null"):
            st, hdrs, _ = self.srv.request("/v7/breaches", key=self.key, headers={"Origin": origin})
            self.assertEqual(st, 200)
            self.assertEqual(hdrs["access-control-allow-origin"], "*")
            self.assertEqual(hdrs["vary"], "Accept-Encoding")  # not on Origin
        st, hdrs, _ = self.srv.request("/v7/breaches", method="OPTIONS", headers={
            "Origin": "https://anything.example", "Access-Control-Request-Method": "GET"})
        self.assertEqual((st, hdrs["access-control-allow-origin"]), (204, "*"))


class NoCors(ServerTest):
    """Without --cors-origin nothing changes: no CORS headers, OPTIONS needs a key."""

    def test_no_cors_headers_and_preflight_is_unauthenticated_options(self):
        st, hdrs, _ = self.srv.request("/v7/breaches", key=self.key, headers={"Origin": DASH})
        self.assertEqual(st, 200)
        self.assertEqual([h for h in CORS_NAMES if h in hdrs], [])
        self.assertEqual(hdrs["vary"], "Accept-Encoding")
        st, hdrs, raw = self.srv.request("/v7/breaches", method="OPTIONS", headers={
            "Origin": DASH, "Access-Control-Request-Method": "GET"})
        self.assertEqual((st, json.loads(raw)["error"]), (401, "unauthorized"))
        self.assertNotIn("access-control-allow-origin", hdrs)


class BadFlags(unittest.TestCase):
    # one store for every start: each is refused before it serves, and a store per start
    # cost the Citus suite 20 s
    @classmethod
    def setUpClass(cls):
        cls.ctl = Ctl().init()

    @classmethod
    def tearDownClass(cls):
        cls.ctl.cleanup()

    def start(self, *flags):
        return subprocess.run([binary("breachd"), *self.ctl.store_args(), "--listen",
                               "127.0.0.1:0", *flags], capture_output=True, timeout=30)

    def test_bad_values_stop_the_server_at_start(self):
        for flags in (("--empty-search-status", "500"), ("--empty-search-status", "ok"),
                      ("--cors-origin", DASH + "/"), ("--cors-origin", "dash.example.com"),
                      ("--cors-origin", "https://dash.example.com/app"),
                      ("--cors-origin", "ftp://dash.example.com"),
                      ("--cors-origin", "https://dash.example.com:99999")):
            p = self.start(*flags)
            self.assertEqual(p.returncode, 2, flags)
            self.assertIn(b"breachd:", p.stderr)
        p = self.start("--cors-origin", DASH + "/")
        self.assertIn(b"--cors-origin must be an origin like https://dash.example.com", p.stderr)


if __name__ == "__main__":
    unittest.main()
