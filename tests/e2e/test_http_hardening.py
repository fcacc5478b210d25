"""The attacks of issue 13 on the HTTP layer, replayed: request smuggling shapes, NUL bytes,
parameter floods, missing Host, information in ids and messages, and a slow-request flood."""
import json
import os
import re
import socket
import subprocess
import sys
import time
import unittest

from harness import Ctl, Server, fixture

INSTRUMENTED = bool(os.environ.get("BREACHD_INSTRUMENTED"))


def raw(port, data, wait=5.0):
    """Sends raw bytes; returns (everything the server sent, whether it closed)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=wait)
    s.sendall(data)
    out = b""
    closed = False
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                closed = True
                break
            out += chunk
            if b"\r\n\r\n" in out:
                head, _, body = out.partition(b"\r\n\r\n")
                m = re.search(rb"(?i)content-length:\s*(\d+)", head)
                if m and len(body) >= int(m.group(1)):
                    s.settimeout(0.3)  # the reply is whole: does the server close?
    except socket.timeout:
        pass
    s.close()
    return out, closed


def parse(out):
    head, _, body = out.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    status = int(lines[0].split()[1])
    hdrs = {k.lower(): v.strip() for k, _, v in (l.partition(":") for l in lines[1:])}
    return status, hdrs, body


class Framing(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.ctl = Ctl().init()
        cls.ctl.import_("breaches", fixture("breaches.jsonl"))
        cls.key = cls.ctl.key("hard")
        cls.srv = Server(cls.ctl)

    @classmethod
    def tearDownClass(cls):
        assert cls.srv.stop() == 0
        cls.ctl.cleanup()

    def req(self, head, body=b""):
        return b"GET /v7/breaches?number_of_records=1 HTTP/1.1\r\nHost: x\r\nx-api-key: " + \
            self.key.encode() + b"\r\n" + head + b"\r\n" + body

    def assert_json_error(self, out, status, error, closed=None):
        st, hdrs, body = parse(out)
        self.assertEqual(st, status, out[:300])
        self.assertEqual(hdrs["content-type"], "application/json; charset=utf-8")
        self.assertEqual(json.loads(body)["error"], error)
        return hdrs

    def test_two_content_lengths_get_400_and_the_body_never_runs(self):
        smuggled = b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"
        out, closed = raw(self.srv.port, self.req(
            b"Content-Length: 0\r\nContent-Length: %d\r\n" % len(smuggled), smuggled))
        hdrs = self.assert_json_error(out, 400, "bad_request")
        self.assertEqual(hdrs["connection"], "close")
        self.assertTrue(closed)
        self.assertEqual(out.count(b"HTTP/1.1 "), 1)  # no second reply for the body
        self.assertNotIn(b"breachd_requests_total", out)

    def test_content_length_with_chunked_gets_400_and_close(self):
        out, closed = raw(self.srv.port, self.req(
            b"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n", b"0\r\n\r\n"))
        self.assert_json_error(out, 400, "bad_request")
        self.assertTrue(closed)

    def test_unknown_transfer_codings_get_501_at_once(self):
        for te in (b"xchunked", b"gzip, chunked", b"chunked, chunked", b"identity"):
            start = time.time()
            out, closed = raw(self.srv.port, self.req(b"Transfer-Encoding: " + te + b"\r\n"))
            self.assertLess(time.time() - start, 2.0, te)
            self.assert_json_error(out, 501, "not_implemented")
            self.assertTrue(closed, te)

    def test_a_body_announced_over_16_mib_gets_413_before_it_is_sent(self):
        start = time.time()
        out, closed = raw(self.srv.port, self.req(b"Content-Length: %d\r\n" % (16 * 2**20 + 1)))
        self.assertLess(time.time() - start, 2.0)
        hdrs = self.assert_json_error(out, 413, "payload_too_large")
        self.assertEqual(hdrs["connection"], "close")
        self.assertTrue(closed)
        # a body within the cap is read (and, on a GET, ignored)
        out, _ = raw(self.srv.port, self.req(b"Content-Length: 16\r\n", b"x" * 16))
        self.assertEqual(parse(out)[0], 200)

    def test_plain_chunked_request_is_still_served(self):
        out, _ = raw(self.srv.port, self.req(b"Transfer-Encoding: chunked\r\n", b"0\r\n\r\n"))
        self.assertEqual(parse(out)[0], 200)

    def test_nul_in_the_path_is_400(self):
        for path in (b"/metrics%00", b"/v7/breaches%00.css", b"/healthz%00x"):
            out, _ = raw(self.srv.port, b"GET " + path + b" HTTP/1.1\r\nHost: x\r\nx-api-key: " +
                         self.key.encode() + b"\r\n\r\n")
            self.assert_json_error(out, 400, "bad_request")

    def test_http11_without_host_is_400_but_http10_is_served(self):
        out, _ = raw(self.srv.port, b"GET /healthz HTTP/1.1\r\n\r\n")
        self.assert_json_error(out, 400, "bad_request")
        out, _ = raw(self.srv.port, b"GET /healthz HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n")
        self.assert_json_error(out, 400, "bad_request")
        out, _ = raw(self.srv.port, b"GET /healthz HTTP/1.0\r\n\r\n")
        self.assertEqual(parse(out)[0], 200)

    def test_three_hundred_parameters_get_400_at_once(self):
        for n in (65, 300, 600, 9000):
            # 9000: one parameter in a query past the 8 KiB head limit
            query = b"x=" + b"a" * n if n > 600 else b"&".join(b"a%d=1" % i for i in range(n))
            start = time.time()
            out, _ = raw(self.srv.port, b"GET /v7/breaches?" + query + b" HTTP/1.1\r\nHost: x\r\n"
                         b"x-api-key: " + self.key.encode() + b"\r\n\r\n")
            self.assertLess(time.time() - start, 2.0, n)
            st, _, body = parse(out)
            if n <= 600:
                self.assertEqual((st, json.loads(body)["message"]),
                                 (400, "too many query parameters (at most 64)"))
            else:
                self.assertEqual((st, json.loads(body)["error"]), (431, "header_too_large"))

    def test_every_reply_says_nosniff(self):
        for path, key in (("/v7/breaches", self.key), ("/v7/breaches", None), ("/healthz", None),
                          ("/metrics", None), ("/nope", None)):
            _, hdrs, _ = self.srv.request(path, key=key)
            self.assertEqual(hdrs.get("x-content-type-options"), "nosniff", path)

    def test_request_ids_reveal_no_counter(self):
        ids = [self.srv.request("/healthz")[1]["x-request-id"] for _ in range(20)]
        self.assertEqual(len(set(ids)), 20)
        self.assertTrue(all(re.fullmatch(r"[0-9a-f]{16}", i) for i in ids), ids)
        # The old ids were a fixed prefix and a counter: no two share half their digits now.
        self.assertEqual(len({i[:8] for i in ids}), 20, ids)


def head(method, path, key=None, extra=b""):
    """A request head of HTTP/1.1 with an optional key, ending the header block."""
    h = b"%s %s HTTP/1.1\r\nHost: x\r\n" % (method, path)
    if key:
        h += b"x-api-key: " + key.encode() + b"\r\n"
    return h + extra + b"\r\n"


NEAR_16_MIB = b"Content-Length: %d\r\n" % (16 * 2**20 - 1)
WATCH = json.dumps({"type": "email", "account": "a@example.com",
                    "url": "https://hooks.example.com/in", "secret": "whsec-0123456789abcdef"})


class BodiesWaitForTheKey(unittest.TestCase):
    """Issue 29, finding 1: a request announcing a body is authenticated and routed as soon
    as its head is in. A refusal goes out before a byte of the body is read (no 100
    Continue), and the connection closes; the bodies held at once across the server are
    capped (--max-upload-memory, at its least of 16 MiB here)."""

    @classmethod
    def setUpClass(cls):
        cls.ctl = Ctl().init()
        cls.ctl.import_("breaches", fixture("breaches.jsonl"))
        cls.key = cls.ctl.key("bodies")
        cls.counted = cls.ctl.key("counted", "--rate", "50/h", "--quota", "50/month")
        cls.srv = Server(cls.ctl, "--max-upload-memory", "16")

    @classmethod
    def tearDownClass(cls):
        assert cls.srv.stop() == 0
        cls.ctl.cleanup()

    def refused_at_once(self, data, status, error):
        """Sends a head alone; the refusal must come within 2 s, without 100 Continue."""
        start = time.time()
        out, closed = raw(self.srv.port, data, wait=4.0)
        self.assertLess(time.time() - start, 2.0, data[:80])
        self.assertTrue(out, "no answer without the body: %r" % data[:80])
        self.assertNotIn(b"100 Continue", out)
        st, hdrs, body = parse(out)
        self.assertEqual((st, json.loads(body)["error"]), (status, error), out[:400])
        self.assertEqual(hdrs["content-type"], "application/json; charset=utf-8")
        self.assertEqual(hdrs["connection"], "close")
        self.assertTrue(closed)
        self.assertEqual(out.count(b"HTTP/1.1 "), 1)
        return hdrs, json.loads(body)

    def test_no_key_gets_401_before_the_body(self):
        for expect in (b"", b"Expect: 100-continue\r\n"):
            _, body = self.refused_at_once(head(b"POST", b"/v7/jobs", None, NEAR_16_MIB + expect),
                                           401, "unauthorized")
            self.assertEqual(body["message"], "send your API key in the x-api-key header")
        for method in (b"PUT", b"PATCH", b"DELETE"):
            self.refused_at_once(head(method, b"/v7/watches/1", None, NEAR_16_MIB), 401,
                                 "unauthorized")
        # the HIBP API v3 and /range/ the same, with their own answers
        self.refused_at_once(head(b"POST", b"/api/v3/breaches", None, NEAR_16_MIB), 401,
                             "unauthorized")
        self.refused_at_once(head(b"POST", b"/range/ABCDE", None, NEAR_16_MIB), 401,
                             "unauthorized")

    def test_a_bad_key_gets_403_before_the_body(self):
        self.refused_at_once(head(b"POST", b"/v7/jobs", "bd_" + "A" * 43,
                                  NEAR_16_MIB + b"Expect: 100-continue\r\n"),
                             403, "authentication_failed")

    def test_an_unknown_path_gets_404_before_the_body(self):
        self.refused_at_once(head(b"POST", b"/v7/no-such-thing", self.key, NEAR_16_MIB), 404,
                             "not_found")
        self.refused_at_once(head(b"POST", b"/v6/jobs", None, NEAR_16_MIB), 404, "not_found")

    def test_a_wrong_method_gets_405_with_allow_before_the_body(self):
        for method, path, allow in ((b"POST", b"/v7/breaches", "GET, HEAD"),
                                    (b"PUT", b"/v7/jobs", "POST"),
                                    (b"POST", b"/v7/watches/7", "DELETE"),
                                    (b"DELETE", b"/healthz", "GET, HEAD")):
            hdrs, _ = self.refused_at_once(head(method, path, self.key, NEAR_16_MIB), 405,
                                           "method_not_allowed")
            self.assertEqual(hdrs["allow"], allow, path)

    def test_a_body_over_the_resource_limit_gets_413_at_once(self):
        _, body = self.refused_at_once(
            head(b"POST", b"/v7/watches", self.key, b"Content-Length: %d\r\n" % (64 * 1024 + 1)),
            413, "payload_too_large")
        self.assertEqual(body["message"], "the request body is larger than 64 KiB")

    def test_the_early_answers_are_the_ones_sent_after_a_body(self):
        """The same bytes as the answer to the same request without a body (but for the
        request id, the connection's close and the key's budget, one request further)."""
        def strip(out):
            st, hdrs, body = parse(out)
            for h in ("x-request-id", "connection", "date", "x-ratelimit-remaining",
                      "x-ratelimit-reset"):
                hdrs.pop(h, None)
            return st, hdrs, body
        for path, key in ((b"/v7/jobs", None), (b"/v7/breaches", self.key),
                          (b"/v7/nope", self.key)):
            early, _ = raw(self.srv.port, head(b"POST", path, key, NEAR_16_MIB))
            late, _ = raw(self.srv.port, head(b"POST", path, key, b"Content-Length: 0\r\n"))
            self.assertEqual(strip(early), strip(late), path)

    def test_a_request_with_a_body_is_counted_once(self):
        """Against the key's hourly budget and its monthly quota, whether it is answered
        after its body or refused before it (after the key was checked, as before)."""
        st, hdrs, body = self.srv.request("/v7/watches", key=self.counted, method="POST",
                                          headers={"content-type": "application/json"},
                                          body=WATCH.encode())
        self.assertEqual((st, hdrs["x-ratelimit-remaining"]), (201, "49"), body)
        hdrs, _ = self.refused_at_once(head(b"POST", b"/v7/nope", self.counted, NEAR_16_MIB),
                                       404, "not_found")
        self.assertEqual(hdrs["x-ratelimit-remaining"], "48")
        st, hdrs, _ = self.srv.request("/v7/breaches?number_of_records=1", key=self.counted)
        self.assertEqual((st, hdrs["x-ratelimit-remaining"]), (200, "47"))
        st, u = self.srv.get("/v7/usage", key=self.counted)
        self.assertEqual((st, u["requests_this_month"], u["monthly_remaining"]), (200, 3, 47))

    def test_an_accepted_head_gets_100_continue_and_its_answer(self):
        s = socket.create_connection(("127.0.0.1", self.srv.port), timeout=5)
        try:
            s.sendall(head(b"POST", b"/v7/watches", self.key,
                           b"Content-Type: application/json\r\nExpect: 100-continue\r\n"
                           b"Content-Length: %d\r\n" % len(WATCH.replace("a@", "b@"))))
            self.assertEqual(s.recv(100), b"HTTP/1.1 100 Continue\r\n\r\n")
            s.sendall(WATCH.replace("a@", "b@").encode())
            out = b""
            while b"}" not in out:
                out += s.recv(65536)
            self.assertEqual(parse(out)[0], 201, out)
        finally:
            s.close()

    def test_bodies_past_the_server_budget_are_refused_at_once(self):
        held = socket.create_connection(("127.0.0.1", self.srv.port), timeout=5)
        try:
            # the whole 16 MiB budget, announced (and so set aside), then held back
            held.sendall(head(b"POST", b"/v7/jobs", self.key,
                              b"Content-Type: text/plain\r\nContent-Length: %d\r\n" % (16 << 20))
                         + b"a@example.com\n")
            time.sleep(0.3)
            for expect in (b"", b"Expect: 100-continue\r\n"):
                hdrs, body = self.refused_at_once(
                    head(b"POST", b"/v7/jobs", self.key, b"Content-Type: text/plain\r\n" +
                         expect + b"Content-Length: 20\r\n"), 503, "unavailable")
                self.assertEqual(hdrs["retry-after"], "1")
                self.assertEqual(body["message"], "the server is receiving too many request "
                                                  "bodies at once; retry in a moment")
            # a chunked body takes its share as it comes: refused once it arrives
            out, closed = raw(self.srv.port, head(b"POST", b"/v7/watches", self.key,
                                                  b"Transfer-Encoding: chunked\r\n")
                              + b"5\r\n{\"a\":\r\n0\r\n\r\n")
            st, hdrs, body = parse(out)
            self.assertEqual((st, json.loads(body)["error"], hdrs["connection"]),
                             (503, "unavailable", "close"))
            # a request without a body is served as ever
            st, _, _ = self.srv.request("/v7/breaches?number_of_records=1", key=self.key)
            self.assertEqual(st, 200)
            self.assertEqual(self.uploads(), (16 << 20, 16 << 20))
        finally:
            held.close()
        # the abandoned body's share comes back when its connection closes
        deadline, out = time.time() + 3, b""
        while time.time() < deadline:
            s = socket.create_connection(("127.0.0.1", self.srv.port), timeout=5)
            s.sendall(head(b"POST", b"/v7/jobs", self.key, b"Content-Type: text/plain\r\n"
                           b"Expect: 100-continue\r\nContent-Length: %d\r\n" % (16 << 20)))
            out = s.recv(100)
            s.close()
            if out.startswith(b"HTTP/1.1 100 "):
                break
            time.sleep(0.1)
        self.assertEqual(out, b"HTTP/1.1 100 Continue\r\n\r\n")
        poll = time.time() + 3
        while self.uploads()[0] and time.time() < poll:
            time.sleep(0.05)
        self.assertEqual(self.uploads(), (0, 16 << 20))

    def uploads(self):
        """(breachd_upload_bytes_held, breachd_upload_bytes_limit) from /metrics."""
        _, _, body = self.srv.request("/metrics")
        m = dict(l.rsplit(" ", 1) for l in body.decode().splitlines()
                 if l and not l.startswith("#"))
        return int(m["breachd_upload_bytes_held"]), int(m["breachd_upload_bytes_limit"])


class Keys(unittest.TestCase):
    def test_an_expired_key_gets_the_same_answer_as_an_unknown_one(self):
        ctl = Ctl().init()
        try:
            old = ctl.key("old", "--expires", "2099-01-01")
            # let it expire: the CLI refuses past dates
            ctl.sql("UPDATE api_keys SET expires_at = 1000 WHERE name = 'old'")
            srv = Server(ctl)
            try:
                st1, body1 = srv.get("/v7/breaches", key=old)
                st2, body2 = srv.get("/v7/breaches", key="bd_" + "A" * 43)
                self.assertEqual((st1, body1), (st2, body2))
                self.assertEqual(st1, 403)
            finally:
                self.assertEqual(srv.stop(), 0)
        finally:
            ctl.cleanup()


class SlowFlood(unittest.TestCase):
    def test_a_slow_flood_from_one_address_does_not_starve_another(self):
        """4,200 connections from 127.0.0.1 each sending a byte a second, under the default
        settings, while 127.0.0.2 asks every 300 ms: every answer within 100 ms (500 ms
        under a sanitizer), and the slow connections are cut at the header deadline."""
        ctl = Ctl().init()
        try:
            ctl.import_("breaches", fixture("breaches.jsonl"))
            key = ctl.key("victim")
            srv = Server(ctl)
            flood = subprocess.Popen([sys.executable, os.path.join(os.path.dirname(__file__),
                                                                   "slowloris.py"),
                                      str(srv.port), "4200"], stdout=subprocess.PIPE)
            try:
                self.assertTrue(flood.stdout.readline().startswith(b"open"))
                time.sleep(1.0)
                worst = 0.0
                end = time.time() + 13  # past the 10 s header deadline
                while time.time() < end:
                    t = time.time()
                    st, _, _ = srv.request(source="127.0.0.2", path="/v7/breaches?number_of_records=1",
                                                key=key)
                    worst = max(worst, time.time() - t)
                    self.assertEqual(st, 200)
                    time.sleep(0.3)
                self.assertLess(worst, 0.5 if INSTRUMENTED else 0.1)
                _, _, body = srv.request(source="127.0.0.2", path="/metrics")
                metrics = dict(l.rsplit(" ", 1) for l in body.decode().splitlines()
                               if l and not l.startswith("#"))
                self.assertLessEqual(int(metrics["breachd_open_connections"]), 128 + 2)
                self.assertGreater(int(metrics["breachd_connections_cut_total"]), 0)
            finally:
                flood.kill()
                flood.wait()
                self.assertEqual(srv.stop(), 0)
        finally:
            ctl.cleanup()


if __name__ == "__main__":
    unittest.main()
