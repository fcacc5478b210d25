"""Webhooks to IPv6 literals: a delivery to http://[::1]:PORT/ reaches a receiver bound to
::1 (with --webhook-allow ::1/128), and IPv4 addresses written inside IPv6 ones are judged
as those IPv4 addresses. (tests/e2e/test_watches.py covers watches as a whole.)"""
import http.server
import json
import socket
import threading
import time
import unittest

from harness import Ctl, Server, fixture

BREACH = "22222222-2222-4222-8222-222222222222"


def ipv6_loopback():
    try:
        with socket.socket(socket.AF_INET6) as s:
            s.bind(("::1", 0))
        return True
    except OSError:
        return False


class Receiver6(http.server.HTTPServer):
    address_family = socket.AF_INET6


class IPv6Webhooks(unittest.TestCase):
    def setUp(self):
        self.ctl = Ctl().init()
        self.ctl.import_("breaches", fixture("breaches.jsonl"))
        self.key = self.ctl.key("owner")
        self.srv = None

    def tearDown(self):
        rc = self.srv.stop() if self.srv else 0
        self.ctl.cleanup()
        self.assertEqual(rc, 0)

    def add_watch(self, url):
        body = json.dumps({"type": "email", "account": "v6@example.com", "url": url,
                           "secret": "whsec-0123456789abcdef"}).encode()
        st, _, raw = self.srv.request(self.srv.base + "/watches", key=self.key, method="POST",
                                      headers={"content-type": "application/json"}, body=body)
        return st, json.loads(raw)

    def test_ipv4_inside_ipv6_is_refused_like_that_ipv4(self):
        self.srv = Server(self.ctl)
        for host in ("::169.254.169.254", "::ffff:0:127.0.0.1", "::ffff:0:10.0.0.1"):
            st, body = self.add_watch("http://[%s]:8080/hook" % host)
            self.assertEqual((st, body["error"]), (422, "destination_not_allowed"), host)

    @unittest.skipUnless(ipv6_loopback(), "no IPv6 loopback on this machine")
    def test_delivery_to_an_ipv6_literal(self):
        got = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                got.append(json.loads(self.rfile.read(int(self.headers["content-length"]))))
                self.send_response(200)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        receiver = Receiver6(("::1", 0), Handler)
        threading.Thread(target=receiver.serve_forever, daemon=True).start()
        try:
            self.srv = Server(self.ctl, "--webhook-allow", "::1/128")
            st, watch = self.add_watch("http://[::1]:%d/hook" % receiver.server_address[1])
            self.assertEqual(st, 201, watch)
            rec = {"breach_uuid": BREACH, "email": "v6@example.com", "user_name": "v6"}
            self.ctl.import_("records", self.ctl.write("r.jsonl", json.dumps(rec) + "\n"))
            deadline = time.time() + 15
            while not got and time.time() < deadline:
                time.sleep(0.05)
            self.assertEqual(len(got), 1, self.srv.log())
            self.assertEqual(got[0]["watch"]["id"], watch["id"])
            self.assertEqual(got[0]["identities"], ["v6@example.com"])
        finally:
            receiver.shutdown()
            receiver.server_close()


if __name__ == "__main__":
    unittest.main()
