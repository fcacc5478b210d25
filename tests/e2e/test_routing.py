"""Authentication, routing, methods, parameters and headers common to every operation."""
import time
import unittest

from harness import ServerTest, fixture


class Routing(ServerTest):
    @classmethod
    def populate(cls, ctl):
        ctl.import_("breaches", fixture("breaches.jsonl"))

    def test_missing_key_is_401(self):
        self.assertError("/v7/breaches", 401, "unauthorized", key=None)

    def test_empty_key_is_401(self):
        self.assertError("/v7/breaches", 401, "unauthorized", key="")

    def test_unknown_key_is_403(self):
        self.assertError("/v7/breaches", 403, "authentication_failed", key="bd_" + "A" * 43)

    def test_header_name_is_case_insensitive(self):
        st, _ = self.srv.get("/v7/breaches", headers={"X-API-KEY": self.key})
        self.assertEqual(st, 200)

    def test_auth_comes_before_routing(self):
        self.assertError("/v7/no-such-thing", 401, "unauthorized", key=None)
        self.assertError("/v7/no-such-thing", 404, "not_found")

    def test_path_outside_base_is_404(self):
        self.assertError("/v6/breaches", 404, "not_found", key=None)
        self.assertError("/", 404, "not_found", key=None)
        self.assertError("/v7", 404, "not_found")

    def test_trailing_slash_is_not_a_route(self):
        self.assertError("/v7/breaches/", 404, "not_found")

    def test_other_methods_are_405_with_allow(self):
        for method in ("POST", "PUT", "DELETE", "PATCH"):
            st, hdrs, body = self.srv.request("/v7/breaches", key=self.key, method=method)
            self.assertEqual(st, 405, method)
            self.assertEqual(hdrs.get("allow"), "GET, HEAD")
            self.assertIn(b'"error":"method_not_allowed"', body)

    def test_head_has_get_headers_and_no_body(self):
        st, hdrs, body = self.srv.request("/v7/breaches", key=self.key, method="HEAD")
        st2, hdrs2, body2 = self.srv.request("/v7/breaches", key=self.key)
        self.assertEqual((st, st2), (200, 200))
        self.assertEqual(body, b"")
        self.assertEqual(int(hdrs["content-length"]), len(body2))
        self.assertEqual(hdrs["content-type"], "application/json; charset=utf-8")

    def test_request_ids_differ(self):
        ids = {self.srv.request("/v7/breaches", key=self.key)[1]["x-request-id"] for _ in range(5)}
        self.assertEqual(len(ids), 5)

    def test_unknown_parameter_is_400(self):
        msg = self.assertError("/v7/breaches?Number_of_records=1", 400, "bad_request")
        self.assertIn("Number_of_records", msg)

    def test_repeated_parameter_is_400(self):
        self.assertError("/v7/breaches?number_of_records=1&number_of_records=2", 400,
                         "bad_request")

    def test_nul_byte_in_parameter_is_400(self):
        self.assertError("/v7/breaches?number_of_records=1%00", 400, "bad_request")

    def test_healthz_needs_no_key(self):
        st, body = self.srv.get("/healthz")
        self.assertEqual((st, body), (200, {"status": "ok"}))

    def test_revoked_key_is_refused_within_5_seconds(self):
        key = self.ctl.key("short-lived")
        deadline = time.time() + 5
        while self.srv.get("/v7/breaches", key=key)[0] != 200:
            self.assertLess(time.time(), deadline, "a new key was not accepted within 5 s")
            time.sleep(0.1)
        listing = self.ctl.run("keys", "list", check=0).stdout.decode()
        kid = [l.split()[0] for l in listing.splitlines() if "short-lived" in l][0]
        self.ctl.run("keys", "revoke", kid, check=0)
        deadline = time.time() + 5
        while self.srv.get("/v7/breaches", key=key)[0] != 403:
            self.assertLess(time.time(), deadline, "a revoked key still worked after 5 s")
            time.sleep(0.1)
        self.assertEqual(self.srv.get("/v7/breaches", key=self.key)[0], 200)


if __name__ == "__main__":
    unittest.main()
