"""Watches and webhook alerts: a real receiver (http.server on loopback, started here), the
real breachctl importing, the real breachd delivering with --webhook-allow 127.0.0.0/8."""
import hashlib
import hmac
import http.server
import json
import os
import socket
import subprocess
import threading
import time
import unittest

from harness import STORE, Ctl, Server, binary, fixture

BREACH = "22222222-2222-4222-8222-222222222222"
SIGNING = "whsec-0123456789abcdef"
ALLOW = ("--webhook-allow", "127.0.0.0/8")


def records(*emails):
    return "".join(json.dumps({"breach_uuid": BREACH, "email": e, "user_name": "u" + str(i),
                               "password": "pw-%d-secret" % i}) + "\n"
                   for i, e in enumerate(emails))


class Receiver:
    """Records every POST it gets; answers status (200), with a Location when redirect, after
    delay seconds."""

    def __init__(self, port=0, status=200, redirect=None, delay=0):
        self.got = []
        self.lock = threading.Lock()
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("content-length", "0")))
                with outer.lock:
                    outer.got.append(({k.lower(): v for k, v in self.headers.items()}, body))
                time.sleep(delay)
                self.send_response(status)
                if redirect:
                    self.send_header("location", redirect)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        http.server.HTTPServer.allow_reuse_address = True
        self.httpd = http.server.HTTPServer(("127.0.0.1", port), Handler)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def deliveries(self):
        with self.lock:
            return list(self.got)

    def wait(self, n, timeout=15):
        deadline = time.time() + timeout
        while time.time() < deadline and len(self.deliveries()) < n:
            time.sleep(0.05)
        return self.deliveries()

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def call(srv, method, path, key, body=None):
    """(status, parsed JSON or None) of one request with an optional JSON body."""
    data = json.dumps(body).encode() if isinstance(body, dict) else body
    h = {"content-type": "application/json"} if data is not None else {}
    status, _, raw = srv.request(srv.base + path, key=key, method=method, headers=h, body=data)
    return status, (json.loads(raw) if raw else None)


class Watches(unittest.TestCase):
    def setUp(self):
        self.ctl = Ctl().init()
        self.ctl.import_("breaches", fixture("breaches.jsonl"))
        self.key = self.ctl.key("owner")
        self.srv = None
        self.receiver = None

    def tearDown(self):
        rc = self.srv.stop() if self.srv else 0
        if self.receiver:
            self.receiver.stop()
        self.ctl.cleanup()
        self.assertEqual(rc, 0, "breachd exited %d on SIGTERM" % rc)  # sanitizer findings too

    def start(self, *extra):
        self.srv = Server(self.ctl, *extra)
        return self.srv

    def add_watch(self, port, type_="email", account="Alice@Example.com", key=None):
        st, body = call(self.srv, "POST", "/watches", key or self.key,
                        {"type": type_, "account": account, "secret": SIGNING,
                         "url": "http://127.0.0.1:%d/hook?t=1" % port})
        self.assertEqual(st, 201, body)
        return body

    def import_records(self, text, name="r.jsonl"):
        return self.ctl.import_("records", self.ctl.write(name, text))

    def alerts(self, since=0):
        st, body = call(self.srv, "GET", "/alerts?since=%d" % since, self.key)
        self.assertEqual(st, 200, (body, self.srv.log()))
        return body

    def settle(self, timeout=30):
        """Waits until no alert is pending: a delivered alert gets no further attempt, so a
        second delivery could come only from one in flight at once, which the short wait
        after still sees (in place of sleeping past the retry schedule)."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            alerts = self.alerts()["alerts"]
            if alerts and all(a["delivery"] != "pending" for a in alerts):
                break
            time.sleep(0.05)
        time.sleep(0.2)

    def assertSigned(self, headers, body):
        ts = headers["x-breachd-timestamp"]
        want = hmac.new(SIGNING.encode(), ts.encode() + b"." + body, hashlib.sha256).hexdigest()
        self.assertEqual(headers["x-breachd-signature"], "v1=" + want)
        self.assertLess(abs(int(ts) - time.time()), 60)

    def test_matching_import_gives_one_signed_delivery(self):
        self.receiver = Receiver()
        self.start(*ALLOW)
        watch = self.add_watch(self.receiver.port)
        self.assertEqual((watch["type"], watch["value"]), ("email", "alice@example.com"))
        self.assertNotIn("secret", watch)
        f = self.ctl.write("r.jsonl", records("alice@example.com", "bob@example.com",
                                              "ALICE@example.com "))
        self.ctl.import_("records", f)
        self.receiver.wait(1)
        self.settle()
        got = self.receiver.deliveries()
        self.assertEqual(len(got), 1)
        headers, body = got[0]
        self.assertSigned(headers, body)
        alert = json.loads(body)
        self.assertEqual(headers["x-breachd-event-id"], alert["event_id"])
        self.assertEqual(headers["content-type"], "application/json")
        self.assertEqual(alert["event"], "watch.match")
        self.assertEqual(alert["watch"], {"id": watch["id"], "type": "email",
                                          "value": "alice@example.com"})
        self.assertEqual(alert["breach"]["id"], BREACH)
        self.assertEqual(alert["breach"]["name"], "BetaShop")
        self.assertEqual(alert["counts"], {"records": 2})
        self.assertEqual(alert["identities"], ["alice@example.com"])
        # the same alert for pipelines without a receiver, marked delivered
        listed = self.alerts()
        self.assertEqual(len(listed["alerts"]), 1)
        item = listed["alerts"][0]
        self.assertEqual(item["event_id"], alert["event_id"])
        self.assertEqual((item["delivery"], item["attempts"]), ("delivered", 1))
        self.assertEqual(listed["next_cursor"], item["cursor"])
        self.assertEqual(self.alerts(item["cursor"]), {"alerts": [], "next_cursor": item["cursor"]})
        st, _, metrics = self.srv.request("/metrics")
        self.assertIn(b"\nbreachd_webhook_deliveries_total 1\n", metrics)
        self.assertIn(b"\nbreachd_webhook_failed_attempts_total 0\n", metrics)
        # importing the same file again lands nothing, so it alerts nothing
        self.ctl.import_("records", f)
        self.assertEqual(len(self.alerts()["alerts"]), 1)  # the import writes its alerts
        time.sleep(0.3)  # and a delivery comes only from an alert
        self.assertEqual(len(self.receiver.deliveries()), 1)

    def test_settled_alerts_past_the_retention_are_removed_pending_ones_kept(self):
        self.receiver = Receiver()
        self.start(*ALLOW)
        self.add_watch(self.receiver.port)
        self.import_records(records("alice@example.com"), "a.jsonl")
        self.assertEqual(len(self.receiver.wait(1)), 1)
        self.import_records(records("x@example.com", "alice@example.com"), "b.jsonl")
        self.assertEqual(len(self.receiver.wait(2)), 2)
        self.settle()  # the outcomes are recorded
        self.assertEqual([a["delivery"] for a in self.alerts()["alerts"]],
                         ["delivered", "delivered"])
        self.assertEqual(self.srv.stop(), 0)
        # the first alert written 31 days ago, the second 29; then a pending one as old
        first, second = [a["cursor"] for a in self.alerts_via_sql()]
        day = 86400
        self.ctl.sql("UPDATE alerts SET created_at = %d WHERE key_seq = %d"
                     % (int(time.time()) - 31 * day, first))
        self.ctl.sql("UPDATE alerts SET created_at = %d, state = 0, next_attempt_ms = %d "
                     "WHERE key_seq = %d" % (int(time.time()) - 31 * day,
                                             (int(time.time()) + 3600) * 1000, second))
        self.start(*ALLOW)  # the default retention: 30 days, pruned at start
        pruned = "removed 1 delivered or failed alerts older than 30 days"
        deadline = time.time() + 20  # the deliverer's first round, on a loaded machine too
        while pruned not in self.srv.log() and time.time() < deadline:
            time.sleep(0.1)
        self.assertIn(pruned, self.srv.log())
        self.assertEqual([a["cursor"] for a in self.alerts()["alerts"]], [second])
        self.srv.stop()
        self.start(*ALLOW, "--alert-retention", "0")  # kept for ever: nothing is removed
        self.srv.stop()
        self.assertEqual(len(self.alerts_via_sql()), 1)
        self.srv = None

    @unittest.skipIf(STORE == "pg", "the bytes of a SQLite store's files")
    def test_a_pruned_alert_leaves_the_store_file_and_its_log(self):
        self.receiver = Receiver()
        self.start(*ALLOW)
        self.add_watch(self.receiver.port)
        self.import_records(records("alice@example.com"))
        self.assertEqual(len(self.receiver.wait(1)), 1)
        deadline = time.time() + 10
        while time.time() < deadline and self.alerts()["alerts"][0]["delivery"] != "delivered":
            time.sleep(0.1)
        self.assertEqual(self.srv.stop(), 0)
        # an identity found nowhere else in the store, in an alert past the retention
        marker = "pruned-%s@example.com" % os.urandom(6).hex()
        self.ctl.sql("UPDATE alerts SET identities = '[\"%s\"]', created_at = %d"
                     % (marker, int(time.time()) - 31 * 86400))
        self.assertTrue(marker.encode() in self.ctl.store_bytes())
        self.start(*ALLOW)  # prunes at start
        # The prune's line first: reading the file and then its log can miss a marker that a
        # checkpoint moves between the two reads, so its absence alone proves nothing yet.
        pruned = "removed 1 delivered or failed alerts older than 30 days"
        deadline = time.time() + 20
        while time.time() < deadline and pruned not in self.srv.log():
            time.sleep(0.1)
        self.assertIn(pruned, self.srv.log())
        while time.time() < deadline and marker.encode() in self.ctl.store_bytes():
            time.sleep(0.2)
        self.assertEqual(self.alerts()["alerts"], [])
        self.assertFalse(marker.encode() in self.ctl.store_bytes(), "in the main file or the log")

    def alerts_via_sql(self):
        return [{"cursor": int(r[0])} for r in self.ctl.sql(
            "SELECT key_seq FROM alerts ORDER BY seq")]

    def test_a_slow_receiver_does_not_hold_back_other_watches(self):
        slow = Receiver(delay=6)  # answers within the 10 s timeout: delivered, late
        self.receiver = Receiver()
        try:
            self.start(*ALLOW)
            self.add_watch(slow.port, account="alice@example.com")
            self.add_watch(self.receiver.port, account="bob@example.com")
            # alice's alert comes first (one alert per watch, in watch order)
            self.import_records(records("alice@example.com", "bob@example.com"))
            got = self.receiver.wait(1, timeout=3)
            self.assertEqual(len(got), 1, "bob's alert waited behind alice's slow receiver")
            # alice's is being sent meanwhile: the two go out side by side, so under load
            # hers may reach its receiver a moment after bob's reached his
            self.assertEqual(len(slow.wait(1, timeout=3)), 1)
            self.assertEqual(json.loads(got[0][1])["watch"]["value"], "bob@example.com")
            deadline = time.time() + 10
            while time.time() < deadline and sum(
                    a["delivery"] == "delivered" for a in self.alerts()["alerts"]) < 2:
                time.sleep(0.2)
            self.assertEqual(sorted(a["delivery"] for a in self.alerts()["alerts"]),
                             ["delivered", "delivered"])
            self.assertEqual(len(slow.deliveries()), 1)  # a slow 2xx is not sent again
        finally:
            slow.stop()

    def test_a_bulk_reimport_alerts_nothing(self):
        self.receiver = Receiver()
        self.start(*ALLOW)
        self.add_watch(self.receiver.port)
        f = self.ctl.write("r.jsonl", records("alice@example.com", "bob@example.com"))
        self.ctl.import_("records", f, extra=("--bulk",))
        self.assertEqual(len(self.receiver.wait(1)), 1)
        self.ctl.import_("records", f, extra=("--bulk",))
        time.sleep(1.0)
        self.assertEqual(len(self.receiver.deliveries()), 1)
        self.assertEqual(len(self.alerts()["alerts"]), 1)

    def test_erasure_reaches_the_alerts(self):
        self.receiver = Receiver()
        self.start(*ALLOW)
        self.add_watch(self.receiver.port, "email_domain", "example.com")
        self.import_records(records("alice@example.com", "bob@example.com"))
        self.assertEqual(len(self.receiver.wait(1)), 1)
        self.assertEqual(self.alerts()["alerts"][0]["identities"],
                         ["alice@example.com", "bob@example.com"])
        self.ctl.run("erase", "--email", "alice@example.com", check=0)
        item = self.alerts()["alerts"][0]
        self.assertEqual(item["identities"], ["[erased]", "bob@example.com"])
        self.assertEqual(item["counts"], {"records": 2})  # what the import found, as it was
        self.assertNotIn(b"alice@example.com", self.ctl.store_bytes())
        # erasing the breach takes its identities and its name out of the alert
        breach = item["breach"]
        name = breach["name"].encode()
        self.ctl.run("erase", "--breach", breach["id"], check=0)
        item = self.alerts()["alerts"][0]
        self.assertEqual((item["identities"], item["breach"]["name"]), ([], None))
        self.assertNotIn(b"bob@example.com", self.ctl.store_bytes())
        self.assertNotIn(name, self.ctl.store_bytes())

    def test_non_matching_import_gives_none(self):
        self.receiver = Receiver()
        self.start(*ALLOW)
        self.add_watch(self.receiver.port)
        self.add_watch(self.receiver.port, "email_domain", "other.example")
        self.import_records(records("bob@example.com", "carol@example.org"))
        self.assertEqual(self.alerts()["alerts"], [])  # the import writes its alerts
        time.sleep(0.3)  # and a delivery comes only from an alert
        self.assertEqual(self.receiver.deliveries(), [])

    def test_domain_username_and_password_watches(self):
        self.receiver = Receiver()
        self.start(*ALLOW)
        self.add_watch(self.receiver.port, "email_domain", "@Example.COM")
        self.add_watch(self.receiver.port, "username", "U1")
        self.add_watch(self.receiver.port, "password", "pw-2-secret")
        self.import_records(records("a@example.com", "b@example.com", "c@other.example"))
        got = self.receiver.wait(3)
        time.sleep(0.5)
        got = {json.loads(b)["watch"]["type"]: json.loads(b) for _, b in self.receiver.deliveries()}
        self.assertEqual(sorted(got), ["email_domain", "password", "username"])
        self.assertEqual(got["email_domain"]["counts"], {"records": 2})
        self.assertEqual(got["email_domain"]["identities"], ["a@example.com", "b@example.com"])
        self.assertEqual(got["username"]["identities"], ["u1"])
        self.assertEqual(got["password"]["watch"]["value"], "*********et")
        self.assertEqual(got["password"]["identities"], ["*********et"])

    def test_receiver_down_gets_retries_then_the_delivery(self):
        port = free_port()
        self.start(*ALLOW)
        self.add_watch(port)
        self.import_records(records("alice@example.com"))
        deadline = time.time() + 10
        while time.time() < deadline:
            items = self.alerts()["alerts"]
            if items and items[0]["attempts"] >= 2:
                break
            time.sleep(0.2)
        self.assertEqual(items[0]["delivery"], "pending")
        self.assertGreaterEqual(items[0]["attempts"], 2)
        self.receiver = Receiver(port)
        got = self.receiver.wait(1, timeout=20)
        self.assertEqual(len(got), 1)
        self.assertSigned(*got[0])
        time.sleep(0.5)
        self.assertEqual(self.alerts()["alerts"][0]["delivery"], "delivered")

    def test_restart_between_retries_still_delivers(self):
        port = free_port()
        self.start(*ALLOW)
        self.add_watch(port)
        self.import_records(records("alice@example.com"))
        deadline = time.time() + 10
        while time.time() < deadline and not self.alerts()["alerts"][0]["attempts"]:
            time.sleep(0.1)
        self.assertEqual(self.srv.stop(), 0)
        self.srv = None
        self.receiver = Receiver(port)
        time.sleep(0.5)
        self.assertEqual(self.receiver.deliveries(), [])  # nobody delivers while it is down
        self.start(*ALLOW)
        got = self.receiver.wait(1, timeout=20)
        self.assertEqual(len(got), 1)
        self.assertEqual(json.loads(got[0][1])["counts"], {"records": 1})

    def wait_attempts(self, n, timeout=10):
        deadline = time.time() + timeout
        while time.time() < deadline:
            items = self.alerts()["alerts"]
            if items and items[0]["attempts"] >= n:
                return items[0]
            time.sleep(0.1)
        self.fail("no %d attempts: %s" % (n, self.alerts()))

    def test_redirects_are_not_followed_and_errors_are_retried(self):
        target = Receiver()
        self.receiver = Receiver(status=302, redirect="http://127.0.0.1:%d/else" % target.port)
        try:
            self.start(*ALLOW)
            self.add_watch(self.receiver.port)
            self.import_records(records("alice@example.com"))
            item = self.wait_attempts(2)
            self.assertEqual(item["delivery"], "pending")
            self.assertEqual(len(self.receiver.deliveries()), item["attempts"])
            self.assertEqual(target.deliveries(), [])  # the redirect's target: never
            ids = {h["x-breachd-event-id"] for h, _ in self.receiver.deliveries()}
            self.assertEqual(ids, {item["event_id"]})  # one event id on every attempt
        finally:
            target.stop()

    def test_an_alert_is_given_up_24_hours_after_it_was_written(self):
        port = free_port()
        self.start(*ALLOW)
        self.add_watch(port)
        self.import_records(records("alice@example.com"))
        self.wait_attempts(1)
        self.ctl.sql("UPDATE alerts SET created_at = created_at - 86400")
        deadline = time.time() + 10
        while time.time() < deadline and self.alerts()["alerts"][0]["delivery"] != "failed":
            time.sleep(0.2)
        self.assertEqual(self.alerts()["alerts"][0]["delivery"], "failed")
        self.assertIn("given up after 24 h", self.srv.log())
        _, _, metrics = self.srv.request("/metrics")
        self.assertIn(b"\nbreachd_webhook_given_up_total 1\n", metrics)

    def key_id(self, name):
        return int(self.ctl.sql("SELECT id FROM api_keys WHERE name = '%s'" % name)[0][0])

    def alert_states(self, key_id):
        return [int(r[0]) for r in self.ctl.sql(
            "SELECT state FROM alerts WHERE key_id = %d ORDER BY seq" % key_id)]

    def check_an_ended_keys_watches_go_quiet(self, name, end_key):
        """A key's alert pending (its receiver down), then the key ended by end_key(id): the
        pending alert is given up instead of delivered once the receiver is back, and a later
        matching import writes no alert for it, while another key's watch on the same value
        is delivered."""
        owner = self.key_id(name)
        other = self.ctl.key("other")
        port = free_port()
        self.start(*ALLOW)
        self.add_watch(port)
        self.import_records(records("alice@example.com"), "a.jsonl")
        self.wait_attempts(1)
        end_key(owner)
        live = Receiver()
        try:
            self.add_watch(live.port, key=other)
            self.receiver = Receiver(port)
            deadline = time.time() + 10  # the retry is due within 2 s of the first attempt
            while (time.time() < deadline and self.alert_states(owner) != [2]
                   and not self.receiver.deliveries()):
                time.sleep(0.1)
            self.assertEqual(self.receiver.deliveries(), [])
            self.assertEqual(self.alert_states(owner), [2])  # given up, not delivered
            self.import_records(records("bob@example.com", "alice@example.com"), "b.jsonl")
            got = live.wait(1)
            self.assertEqual(len(got), 1)
            self.assertEqual(json.loads(got[0][1])["identities"], ["alice@example.com"])
            time.sleep(1.0)
            self.assertEqual(self.receiver.deliveries(), [])
            self.assertEqual(self.alert_states(owner), [2])  # nothing new was written
            self.assertEqual(len(live.deliveries()), 1)
        finally:
            live.stop()

    def test_a_revoked_keys_watches_neither_match_nor_deliver(self):
        self.check_an_ended_keys_watches_go_quiet(
            "owner", lambda key_id: self.ctl.run("keys", "revoke", str(key_id), check=0))

    def test_an_expired_keys_watches_neither_match_nor_deliver(self):
        self.key = self.ctl.key("expiring", "--expires", time.strftime(
            "%Y-%m-%d", time.gmtime(time.time() + 3 * 86400)))

        def expire(key_id):  # as if its date had passed
            self.ctl.sql("UPDATE api_keys SET expires_at = %d WHERE id = %d"
                         % (int(time.time()) - 1, key_id))

        self.check_an_ended_keys_watches_go_quiet("expiring", expire)

    def test_watch_on_a_private_address_is_refused(self):
        self.start()  # no --webhook-allow
        for url in ("http://127.0.0.1:9/hook", "http://10.1.2.3/hook", "http://[::1]:8080/",
                    "http://192.168.1.1/", "http://169.254.169.254/latest/meta-data",
                    "http://localhost:8080/", "http://[::ffff:127.0.0.1]/",
                    "http://2130706433/", "http://0x7f.1/", "http://LOCALHOST./"):
            st, body = call(self.srv, "POST", "/watches", self.key,
                            {"type": "email", "account": "a@example.com", "url": url,
                             "secret": SIGNING})
            self.assertEqual((st, body["error"]), (422, "destination_not_allowed"), url)
        st, body = call(self.srv, "GET", "/watches", self.key)
        self.assertEqual((st, body), (200, {"watches": []}))

    def test_every_delivery_checks_the_address_again(self):
        self.receiver = Receiver()
        self.start(*ALLOW)
        self.add_watch(self.receiver.port)
        self.assertEqual(self.srv.stop(), 0)
        self.start()  # the same watch, but loopback is no longer allowed
        self.import_records(records("alice@example.com"))
        deadline = time.time() + 10
        while time.time() < deadline and not self.alerts()["alerts"][0]["attempts"]:
            time.sleep(0.1)
        time.sleep(0.5)
        self.assertEqual(self.receiver.deliveries(), [])
        item = self.alerts()["alerts"][0]
        self.assertEqual(item["delivery"], "pending")
        self.assertGreaterEqual(item["attempts"], 1)
        self.assertIn("private, loopback", self.srv.log())
        self.assertNotIn("127.0.0.1:%d" % self.receiver.port, self.srv.log())  # no URL logged

    def test_bad_requests_are_clear_4xx(self):
        self.start(*ALLOW)
        good = {"type": "email", "account": "a@example.com", "url": "http://127.0.0.1:9/",
                "secret": SIGNING}
        cases = [
            (None, 400, "missing_body"),
            (b"not json", 400, "invalid_json"),
            (dict(good, type="shoe_size"), 422, "validation_error"),
            (dict(good, account="not-an-email"), 422, "validation_error"),
            (dict(good, url="ftp://127.0.0.1/"), 422, "validation_error"),
            (dict(good, url="http://user:pw@127.0.0.1/"), 422, "validation_error"),
            (dict(good, url="http://127.0.0.1/" + "a" * 2048), 422, "validation_error"),
            (dict(good, secret="short"), 422, "validation_error"),
            (dict(good, extra="x"), 422, "validation_error"),
            ({k: v for k, v in good.items() if k != "url"}, 422, "validation_error"),
            (dict(good, type="bin", account="4111"), 422, "validation_error"),
        ]
        for body, status, code in cases:
            st, reply = call(self.srv, "POST", "/watches", self.key, body)
            self.assertEqual((st, reply["error"]), (status, code), body)
            self.assertNotIn(SIGNING, json.dumps(reply))
        st, reply = call(self.srv, "POST", "/watches", self.key, good)
        self.assertEqual(st, 201)
        st, reply = call(self.srv, "POST", "/watches", self.key, good)
        self.assertEqual((st, reply["error"]), (409, "watch_exists"))
        st, reply = call(self.srv, "GET", "/alerts?since=x", self.key)
        self.assertEqual(st, 400)

    def test_a_key_sees_and_changes_only_its_own_watches(self):
        other = self.ctl.key("other")
        self.start(*ALLOW)
        mine = self.add_watch(9)
        st, body = call(self.srv, "GET", "/watches", other)
        self.assertEqual((st, body), (200, {"watches": []}))
        st, body = call(self.srv, "DELETE", "/watches/%d" % mine["id"], other)
        self.assertEqual((st, body["error"]), (404, "not_found"))
        st, body = call(self.srv, "GET", "/watches", self.key)
        self.assertEqual([w["id"] for w in body["watches"]], [mine["id"]])
        self.assertEqual(set(body["watches"][0]),
                         {"id", "type", "value", "url", "format", "created_at"})
        st, body = call(self.srv, "DELETE", "/watches/%d" % mine["id"], self.key)
        self.assertEqual((st, body), (204, None))
        st, body = call(self.srv, "DELETE", "/watches/%d" % mine["id"], self.key)
        self.assertEqual(st, 404)

    def test_a_new_keys_watch_ids_tell_it_nothing_of_other_keys(self):
        other = self.ctl.key("other")
        self.start(*ALLOW)
        mine = [self.add_watch(9, "username", "user%d" % i)["id"] for i in range(3)]
        theirs = self.add_watch(9, "username", "user0", key=other)["id"]
        for i in mine + [theirs]:
            self.assertTrue(1 <= i < 2 ** 53, i)  # exact as a JSON number
        self.assertNotEqual(theirs, 4)  # not a count of the watches held before
        self.assertNotIn(theirs, (max(mine) + 1, mine[-1] + 1))
        gaps = sorted(abs(a - b) for a, b in zip(mine + [theirs], mine[1:] + [theirs]))
        self.assertGreater(gaps[0], 1, (mine, theirs))  # not a sequence
        st, body = call(self.srv, "GET", "/watches", other)
        self.assertEqual([w["id"] for w in body["watches"]], [theirs])
        st, body = call(self.srv, "GET", "/watches", self.key)
        self.assertEqual([w["id"] for w in body["watches"]], sorted(mine))  # by id

    def test_alert_cursors_are_each_keys_own(self):
        other = self.ctl.key("other")
        self.receiver = Receiver()
        self.start(*ALLOW)
        self.add_watch(self.receiver.port, "email_domain", "example.com")
        self.add_watch(self.receiver.port, "email", "bob@example.com", key=other)
        self.import_records(records("alice@example.com"), "a.jsonl")  # the first key's only
        self.import_records(records("carol@example.com"), "b.jsonl")
        self.import_records(records("bob@example.com"), "c.jsonl")  # both keys
        self.assertEqual(len(self.receiver.wait(4)), 4)
        mine = self.alerts()
        st, theirs = call(self.srv, "GET", "/alerts", other)
        self.assertEqual(st, 200)
        self.assertEqual([a["cursor"] for a in mine["alerts"]], [1, 2, 3])
        # the other key's first alert is its cursor 1, not 4: nothing of the first key's three
        self.assertEqual([(a["cursor"], a["identities"]) for a in theirs["alerts"]],
                         [(1, ["bob@example.com"])])
        self.assertEqual(theirs["next_cursor"], 1)
        st, page = call(self.srv, "GET", "/alerts?since=1", other)
        self.assertEqual(page, {"alerts": [], "next_cursor": 1})
        self.assertEqual([a["identities"] for a in self.alerts(1)["alerts"]],
                         [["carol@example.com"], ["bob@example.com"]])

    def test_a_key_holds_at_most_100_watches(self):
        self.start(*ALLOW)
        for i in range(100):
            self.add_watch(9, "username", "user%d" % i)
        st, body = call(self.srv, "POST", "/watches", self.key,
                        {"type": "username", "account": "one-more", "secret": SIGNING,
                         "url": "http://127.0.0.1:9/"})
        self.assertEqual((st, body["error"]), (409, "watch_limit_reached"))


class Cli(unittest.TestCase):
    """breachctl watch add|list|remove and its scripting contract."""

    def setUp(self):
        self.ctl = Ctl().init()
        self.ctl.key("owner")

    def tearDown(self):
        self.ctl.cleanup()

    def watch(self, *args):
        server_secret = ["--server-secret", self.ctl.secret] if self.ctl.secret else []
        return subprocess.run([binary("breachctl"), "watch", *args, "--db", self.ctl.db,
                               *server_secret], capture_output=True, timeout=60)

    def test_add_prints_the_id_alone_and_list_hides_the_secret(self):
        ids = []
        for type_, account in (("EMAIL", " A@Example.com"), ("bin", "411111")):
            p = self.watch("add", "--key", "1", "--type", type_, "--account", account,
                           "--url", "http://127.0.0.1:9/", "--secret", SIGNING, *ALLOW)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertRegex(p.stdout, rb"^[1-9][0-9]*\n$")  # the id alone: random, 1..2^53-1
            ids.append(int(p.stdout))
            self.assertLess(ids[-1], 2 ** 53)
        self.assertNotEqual(ids[0], ids[1])
        p = self.ctl.run("watch", "list", check=0)
        out = p.stdout.decode()
        self.assertIn("a@example.com", out)
        self.assertIn("411111", out)
        self.assertIn(str(ids[0]), out)
        self.assertNotIn(SIGNING, out + p.stderr.decode())
        p = self.ctl.run("watch", "remove", str(ids[0]), check=0)
        p = self.ctl.run("watch", "remove", str(ids[0]), check=2)

    def test_the_signing_secret_from_a_private_file(self):
        path = os.path.join(self.ctl.dir, "signing")
        with open(path, "w") as f:
            f.write(SIGNING + "\n")
        os.chmod(path, 0o600)
        base = ["add", "--key", "1", "--type", "email", "--account", "a@example.com",
                "--url", "http://127.0.0.1:9/", *ALLOW]
        p = self.watch(*base, "--secret-file", path)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertRegex(p.stdout, rb"^[1-9][0-9]*\n$")
        self.assertEqual(self.ctl.sql("SELECT secret FROM watches"), [[SIGNING]])
        p = self.watch(*base, "--secret-file", path, "--secret", SIGNING)
        self.assertEqual((p.returncode, p.stdout), (2, b""))
        self.assertIn(b"give --secret or --secret-file, not both", p.stderr)
        os.chmod(path, 0o644)
        p = self.watch(*base, "--secret-file", path)
        self.assertEqual((p.returncode, p.stdout), (2, b""))
        self.assertIn(b"is open to other users (chmod 600 it)", p.stderr)
        self.assertNotIn(SIGNING.encode(), p.stderr)

    def test_a_signing_secret_on_the_command_line_is_wiped_from_cmdline(self):
        silent = socket.socket()  # a PostgreSQL "server" that accepts and never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(4)
        silent.settimeout(15)
        uri = "postgresql://u@127.0.0.1:%d/x" % silent.getsockname()[1]
        proc = subprocess.Popen([binary("breachctl"), "watch", "add", "--db", uri, "--key", "1",
                                 "--type", "email", "--account", "a@example.com",
                                 "--url", "http://127.0.0.1:9/", "--secret", SIGNING,
                                 "--server-secret", "/nonexistent", *ALLOW],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            conn, _ = silent.accept()  # its arguments are parsed by now
            with open("/proc/%d/cmdline" % proc.pid, "rb") as f:
                line = f.read()
            conn.close()
        finally:
            proc.kill()
            proc.communicate()
            silent.close()
        self.assertNotIn(SIGNING.encode(), line)
        self.assertIn(b"\x00--secret\x00\x00", line)

    def test_refusals(self):
        base = ["--key", "1", "--type", "email", "--account", "a@example.com", "--secret", SIGNING]
        p = self.watch("add", *base, "--url", "http://127.0.0.1:9/")  # no --webhook-allow
        self.assertEqual((p.returncode, p.stdout), (2, b""))
        self.assertIn(b"private, loopback", p.stderr)
        p = self.watch("add", *base[:1], "7", *base[2:], "--url", "http://127.0.0.1:9/", *ALLOW)
        self.assertEqual((p.returncode, p.stdout), (2, b""))
        self.assertIn(b"no active key 7", p.stderr)


if __name__ == "__main__":
    unittest.main()
