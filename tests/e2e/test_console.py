"""The web console's server side (issue 34): its files and their security headers, sessions
(sign-in, the cookie in place of a key, CSRF on writes, sign-out refused everywhere after),
alert triage (PATCH /alerts/{id}, scoped to the alert's key) and breachd --console off.
The pages themselves are driven in a browser by tests/console (make test-console)."""
import base64
import json
import os
import re
import time
import unittest

from harness import Ctl, Server, fixture

BREACH = "22222222-2222-4222-8222-222222222222"


def call(srv, method, path, key=None, body=None, cookie=None, csrf=None, raw_body=None):
    h = {}
    if cookie:
        h["cookie"] = cookie
    if csrf:
        h["x-csrf-token"] = csrf
    data = raw_body if raw_body is not None else (json.dumps(body).encode() if body is not None else None)
    if data is not None:
        h["content-type"] = "application/json"
    status, hdrs, raw = srv.request(path, key=key, method=method, headers=h, body=data)
    return status, hdrs, (json.loads(raw) if raw and hdrs.get("content-type", "").startswith("application/json") else raw)


def eventually(fetch, want, timeout=2.0):
    """fetch() until it returns want, for at most timeout seconds; its last value. A read
    sees the commits made more than 2 ms before it began (the workers share read views:
    http/worker.c), so a write's effect shows a moment later."""
    deadline = time.time() + timeout
    got = fetch()
    while got != want and time.time() < deadline:
        time.sleep(0.01)
        got = fetch()
    return got


class Console(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.ctl = Ctl().init()
        cls.ctl.import_("breaches", fixture("breaches.jsonl"))
        cls.key = cls.ctl.key("owner")
        cls.other = cls.ctl.key("other")
        cls.srv = Server(cls.ctl, "--webhook-allow", "127.0.0.0/8")
        st, _, w = call(cls.srv, "POST", "/v7/watches", key=cls.key,
                        body={"type": "email", "account": "alice@example.com",
                              "url": "http://127.0.0.1:9/hook", "secret": "whsec-0123456789abcdef"})
        assert st == 201, w
        f = cls.ctl.write("r.jsonl", json.dumps({"breach_uuid": BREACH, "email": "alice@example.com",
                                                 "password": "hunter2"}) + "\n")
        cls.ctl.import_("records", f)

    @classmethod
    def tearDownClass(cls):
        cls.srv.stop()
        cls.ctl.cleanup()

    def sign_in(self, key=None):
        st, hdrs, body = call(self.srv, "POST", "/console/session", key=key or self.key)
        self.assertEqual(st, 201, body)
        cookie = hdrs["set-cookie"]
        self.assertRegex(cookie, r"^breachd_session=[A-Za-z0-9_-]+; Path=/; Max-Age=43200; HttpOnly; SameSite=Strict$")
        self.assertNotIn(self.key, cookie)
        self.assertEqual(body["key"], {"name": "owner", "plan": "standard", "tenant": None, "role": "user"})
        self.assertEqual(body["api_base"], "/v7")
        self.assertEqual(body["idle_timeout"], 1800)
        return cookie.split(";")[0], body["csrf_token"]

    def alert_id(self):
        for _ in range(100):
            st, _, body = call(self.srv, "GET", "/v7/alerts", key=self.key)
            if body["alerts"]:
                return body["alerts"][0]["event_id"]
            time.sleep(0.05)
        self.fail("no alert")

    def test_files_and_headers(self):
        for path, ctype in (("/console/", "text/html; charset=utf-8"), ("/console/app.js", "text/javascript; charset=utf-8"),
                            ("/console/console.css", "text/css; charset=utf-8")):
            st, hdrs, body = self.srv.request(path)
            self.assertEqual(st, 200)
            self.assertEqual(hdrs["content-type"], ctype)
            self.assertTrue(hdrs["content-security-policy"].startswith("default-src 'self'; frame-ancestors 'none'"))
            self.assertEqual(hdrs["referrer-policy"], "no-referrer")
            self.assertEqual(hdrs["x-frame-options"], "DENY")
        st, hdrs, body = self.srv.request("/console/", headers={"accept-encoding": "gzip"})
        self.assertEqual(hdrs.get("content-encoding"), "gzip")
        st, hdrs, _ = self.srv.request("/console/", headers={"if-none-match": hdrs["etag"]})
        self.assertEqual(st, 304)
        st, _, body = self.srv.request("/console/index.html")
        self.assertNotIn(b"<script>", body)  # no inline script: the CSP would refuse it
        st, hdrs, _ = self.srv.request("/console/nothing.js")
        self.assertEqual(st, 404)
        self.assertEqual(hdrs["referrer-policy"], "no-referrer")

    def test_triage_scoped_to_its_key(self):
        eid = self.alert_id()
        triage = lambda: call(self.srv, "GET", "/v7/alerts", key=self.key)[2]["alerts"][0]["triage"]
        st, _, body = call(self.srv, "PATCH", "/v7/alerts/" + eid, key=self.key, body={"state": "new"})
        self.assertEqual((st, body), (200, {"event_id": eid, "triage": "new"}))
        self.assertEqual(eventually(triage, "new"), "new")
        st, _, body = call(self.srv, "PATCH", "/v7/alerts/" + eid, key=self.key, body={"state": "false_positive"})
        self.assertEqual((st, body), (200, {"event_id": eid, "triage": "false_positive"}))
        self.assertEqual(eventually(triage, "false_positive"), "false_positive")
        st, _, body = call(self.srv, "PATCH", "/v7/alerts/" + eid, key=self.other, body={"state": "resolved"})
        self.assertEqual((st, body["error"]), (404, "not_found"))
        time.sleep(0.05)
        self.assertEqual(triage(), "false_positive")  # untouched by the other key
        for bad, want in (({"state": "closed"}, 422), ({"state": "new", "x": 1}, 422), ({}, 422)):
            st, _, body = call(self.srv, "PATCH", "/v7/alerts/" + eid, key=self.key, body=bad)
            self.assertEqual((st, body["error"]), (want, "validation_error"), bad)
        st, _, body = call(self.srv, "PATCH", "/v7/alerts/" + eid, key=self.key, raw_body=b"{not json")
        self.assertEqual((st, body["error"]), (400, "invalid_json"))
        st, _, body = call(self.srv, "PATCH", "/v7/alerts/" + eid, key=self.key, body={"state": "new"})
        self.assertEqual(st, 200)

    def test_session_cookie_csrf_and_sign_out(self):
        cookie, csrf = self.sign_in()
        st, _, body = call(self.srv, "GET", "/v7/usage", cookie=cookie)
        self.assertEqual(st, 200, body)
        st, _, body = call(self.srv, "GET", "/console/session", cookie=cookie)
        self.assertEqual((st, body["csrf_token"]), (200, csrf))
        eid = self.alert_id()
        st, _, body = call(self.srv, "PATCH", "/v7/alerts/" + eid, cookie=cookie, body={"state": "acknowledged"})
        self.assertEqual((st, body["error"]), (403, "csrf_failed"))
        st, _, body = call(self.srv, "PATCH", "/v7/alerts/" + eid, cookie=cookie, csrf="0" * 32, body={"state": "acknowledged"})
        self.assertEqual((st, body["error"]), (403, "csrf_failed"))
        st, _, body = call(self.srv, "PATCH", "/v7/alerts/" + eid, cookie=cookie, csrf=csrf, body={"state": "acknowledged"})
        self.assertEqual((st, body["triage"]), (200, "acknowledged"))
        st, _, _ = call(self.srv, "DELETE", "/console/session", cookie=cookie)
        self.assertEqual(st, 403)  # sign-out is a write too
        st, hdrs, _ = call(self.srv, "DELETE", "/console/session", cookie=cookie, csrf=csrf)
        self.assertEqual(st, 204)
        self.assertEqual(hdrs["set-cookie"], "breachd_session=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict")
        for path in ("/v7/usage", "/console/session"):
            got = eventually(lambda: (lambda r: (r[0], r[2].get("error")))(
                call(self.srv, "GET", path, cookie=cookie)), (401, "session_expired"))
            self.assertEqual(got, (401, "session_expired"), path)
        # a cookie that is not ours, and the HIBP door, which takes keys only
        st, _, body = call(self.srv, "GET", "/v7/usage", cookie="breachd_session=AAAA" + "B" * 100)
        self.assertEqual((st, body["error"]), (401, "session_expired"))
        cookie2, _ = self.sign_in()
        st, _, body = call(self.srv, "GET", "/api/v3/subscription/status", cookie=cookie2)
        self.assertEqual(st, 401)

    def test_seen_cursor_per_key(self):
        """GET/PUT /v7/console/seen: the dashboard's "since the last visit" cursor, kept in
        the store per key (the browser keeps nothing beyond its session)."""
        version = call(self.srv, "GET", "/v7/status", key=self.key)[2]["data_version"]
        self.assertGreater(version, 0)
        seen = lambda k: call(self.srv, "GET", "/v7/console/seen", key=k)
        st, _, body = seen(self.other)
        self.assertEqual((st, body), (200, {"seen": None, "data_version": version}))
        st, _, body = call(self.srv, "PUT", "/v7/console/seen", key=self.key, body={"seen": version - 1})
        self.assertEqual((st, body), (200, {"seen": version - 1, "data_version": version}))
        self.assertEqual(eventually(lambda: seen(self.key)[2], {"seen": version - 1, "data_version": version}),
                         {"seen": version - 1, "data_version": version})
        time.sleep(0.05)
        self.assertEqual(seen(self.other)[2], {"seen": None, "data_version": version})  # per key
        cookie, csrf = self.sign_in()
        st, _, body = call(self.srv, "PUT", "/v7/console/seen", cookie=cookie, body={"seen": version})
        self.assertEqual((st, body["error"]), (403, "csrf_failed"))
        st, _, body = call(self.srv, "PUT", "/v7/console/seen", cookie=cookie, csrf=csrf, body={"seen": version})
        self.assertEqual((st, body), (200, {"seen": version, "data_version": version}))
        got = eventually(lambda: call(self.srv, "GET", "/v7/console/seen", cookie=cookie)[2],
                         {"seen": version, "data_version": version})
        self.assertEqual(got, {"seen": version, "data_version": version})
        for bad in ({"seen": -1}, {"seen": "3"}, {"seen": 1.5}, {"seen": None}, {"seen": 2 ** 53},
                    {"seen": 1, "x": 1}, {}):
            st, _, body = call(self.srv, "PUT", "/v7/console/seen", key=self.key, body=bad)
            self.assertEqual((st, body["error"]), (422, "validation_error"), bad)
        st, _, body = call(self.srv, "PUT", "/v7/console/seen", key=self.key, raw_body=b"{not json")
        self.assertEqual((st, body["error"]), (400, "invalid_json"))
        st, _, body = call(self.srv, "GET", "/v7/console/seen")
        self.assertEqual(st, 401)
        st, _, body = call(self.srv, "DELETE", "/v7/console/seen", key=self.key)
        self.assertEqual(st, 405)
        time.sleep(0.05)
        self.assertEqual(seen(self.key)[2], {"seen": version, "data_version": version})

    def test_sign_in_refusals(self):
        st, _, body = call(self.srv, "POST", "/console/session")
        self.assertEqual((st, body["error"]), (401, "unauthorized"))
        st, _, body = call(self.srv, "POST", "/console/session", key="bd_nope")
        self.assertEqual((st, body["error"]), (403, "authentication_failed"))
        st, _, body = call(self.srv, "GET", "/console/session")
        self.assertEqual((st, body["error"]), (401, "unauthorized"))


PNG_1PX = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGNYKCsLAAI+ANzO2lQjAAAAAElFTkSuQmCC")


class ConsoleLogos(unittest.TestCase):
    """breachd --console-logos DIR: the breach logos an operator placed, served under
    /console/logos/ (the console's CSP allows no other origin)."""

    def test_logos(self):
        ctl = Ctl().init()
        logos = os.path.join(ctl.dir, "logos")
        os.mkdir(logos)
        for name, data in (("beta.png", PNG_1PX), ("Beta_2-x.SVG", b"<svg xmlns='http://www.w3.org/2000/svg'/>"),
                           ("notes.txt", b"text"), (".hidden.png", PNG_1PX), ("big.png", b"x" * (512 * 1024 + 1))):
            with open(os.path.join(logos, name), "wb") as f:
                f.write(data)
        os.mkdir(os.path.join(logos, "dir.png"))
        with open(os.path.join(ctl.dir, "secret.png"), "wb") as f:
            f.write(PNG_1PX)
        srv = Server(ctl, "--console-logos", logos)
        plain = Server(ctl)
        try:
            st, hdrs, body = srv.request("/console/logos/beta.png")
            self.assertEqual((st, hdrs["content-type"], body), (200, "image/png", PNG_1PX))
            self.assertTrue(hdrs["content-security-policy"].startswith("default-src 'self'"))
            st, hdrs2, _ = srv.request("/console/logos/beta.png", headers={"if-none-match": hdrs["etag"]})
            self.assertEqual(st, 304)
            st, hdrs, body = srv.request("/console/logos/Beta_2-x.SVG")
            self.assertEqual((st, hdrs["content-type"]), (200, "image/svg+xml"))
            for bad in ("notes.txt", ".hidden.png", "big.png", "dir.png", "missing.png",
                        "-x.png", "a%20b.png"):
                st, hdrs, body = srv.request("/console/logos/" + bad)
                self.assertEqual((st, json.loads(body)["error"]), (404, "not_found"), bad)
            st, _, _ = srv.request("/console/logos/../secret.png")
            self.assertEqual(st, 404)
            st, _, body = plain.request("/console/logos/beta.png")  # without the setting
            self.assertEqual((st, json.loads(body)["error"]), (404, "not_found"))
        finally:
            srv.stop()
            plain.stop()
            ctl.cleanup()


class ConsoleOff(unittest.TestCase):
    def test_off(self):
        ctl = Ctl().init()
        key = ctl.key("k")
        srv = Server(ctl, "--console", "off")
        try:
            st, hdrs, body = srv.request("/console/")
            self.assertEqual(st, 404)
            st, hdrs, body = call(srv, "POST", "/console/session", key=key)
            self.assertEqual(st, 404)
            # a cookie (say, minted before a restart with the console off) is no key
            st, _, body = call(srv, "GET", "/v7/usage", cookie="breachd_session=abc")
            self.assertEqual((st, body["error"]), (401, "unauthorized"))
        finally:
            srv.stop()
            ctl.cleanup()


if __name__ == "__main__":
    unittest.main()
