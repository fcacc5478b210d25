"""Per-key rate limits and the failed-key throttle, seen from a client."""
import json
import threading
import time
import unittest

from harness import Ctl, Server, fixture


class KeyRateLimit(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.ctl = Ctl().init()
        cls.ctl.import_("breaches", fixture("breaches.jsonl"))
        cls.five = cls.ctl.key("five", "--rate", "5/h")
        cls.hundred = cls.ctl.key("hundred", "--rate", "100/h")
        cls.srv = Server(cls.ctl)

    @classmethod
    def tearDownClass(cls):
        assert cls.srv.stop() == 0
        cls.ctl.cleanup()

    def test_budget_of_five_then_429_with_retry_after(self):
        seen = []
        for i in range(5):
            st, hdrs, _ = self.srv.request("/v7/breaches", key=self.five)
            self.assertEqual(st, 200)
            seen.append(int(hdrs["x-ratelimit-remaining"]))
            self.assertEqual(hdrs["x-ratelimit-limit"], "5")
            reset = int(hdrs["x-ratelimit-reset"])
            self.assertTrue(time.time() < reset <= time.time() + 3600 + 2, reset)
        self.assertEqual(seen, [4, 3, 2, 1, 0])
        st, body = self.srv.get("/v7/breaches", key=self.five)
        self.assertEqual(st, 429)
        self.assertEqual(body["error"], "rate_limited")
        st, hdrs, _ = self.srv.request("/v7/breaches", key=self.five)
        self.assertEqual(st, 429)
        self.assertEqual(hdrs["x-ratelimit-remaining"], "0")
        self.assertTrue(700 <= int(hdrs["retry-after"]) <= 720, hdrs["retry-after"])
        # Every authenticated reply counts and carries the headers, errors included.
        st, hdrs, _ = self.srv.request("/v7/no-such-path", key=self.five)
        self.assertEqual(st, 429)

    def test_twenty_concurrent_clients_share_one_budget_exactly(self):
        counts = {"ok": 0, "limited": 0, "other": 0}
        lock = threading.Lock()

        def client():
            for _ in range(10):
                st, _, _ = self.srv.request("/v7/breaches?number_of_records=1", key=self.hundred)
                with lock:
                    counts["ok" if st == 200 else "limited" if st == 429 else "other"] += 1

        threads = [threading.Thread(target=client) for _ in range(20)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(counts, {"ok": 100, "limited": 100, "other": 0})


class FailedKeyThrottle(unittest.TestCase):
    def test_engages_spares_good_keys_and_releases(self):
        ctl = Ctl().init()
        try:
            good = ctl.key("good")
            srv = Server(ctl, "--auth-fail-limit", "60/min")
            try:
                self.assertEqual(srv.request("/v7/breaches", key=good)[0], 200)
                for i in range(60):
                    st, _ = srv.get("/v7/breaches", key="bd_wrong%d" % i)
                    self.assertEqual(st, 403, i)
                st, hdrs, _ = srv.request("/v7/breaches", key="bd_wrong")
                self.assertEqual(st, 429)
                self.assertEqual(hdrs["retry-after"], "1")
                self.assertEqual(srv.request("/v7/breaches")[0], 429)  # no key is a failure too
                # A key that already worked from this address keeps working.
                self.assertEqual(srv.request("/v7/breaches", key=good)[0], 200)
                time.sleep(1.2)
                self.assertEqual(srv.request("/v7/breaches", key="bd_wrong")[0], 403)
            finally:
                self.assertEqual(srv.stop(), 0)
        finally:
            ctl.cleanup()

    def test_a_throttled_address_learns_nothing_from_a_right_guess(self):
        """The attack: thousands of guesses from one address with the real key among them.
        Once throttled, the real key (never used from there) gets the same 429 as every
        wrong one, so the answer says nothing about which guess was right."""
        ctl = Ctl().init()
        try:
            secret_key = ctl.key("victim")
            srv = Server(ctl, "--auth-fail-limit", "10/min")
            try:
                answers = {}
                guesses = ["bd_guess%03d" % i for i in range(40)]
                guesses.insert(25, secret_key)
                for g in guesses:
                    st, hdrs, body = srv.request("/v7/breaches", key=g)
                    answers[g] = (st, json.loads(body)["error"] if st != 200 else None)
                self.assertEqual([answers[g][0] for g in guesses[:10]], [403] * 10)
                self.assertEqual({answers[g] for g in guesses[10:]}, {(429, "rate_limited")})
                # From another address the key is fine: the throttle is per address.
                st, _, _ = srv.request(source="127.0.0.2", path="/v7/breaches", key=secret_key)
                self.assertEqual(st, 200)
            finally:
                self.assertEqual(srv.stop(), 0)
        finally:
            ctl.cleanup()


if __name__ == "__main__":
    unittest.main()
