"""Per-key rate limits and the failed-key throttle, seen from a client."""
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
                for i in range(60):
                    st, _ = srv.get("/v7/breaches", key="bd_wrong%d" % i)
                    self.assertEqual(st, 403, i)
                st, hdrs, _ = srv.request("/v7/breaches", key="bd_wrong")
                self.assertEqual(st, 429)
                self.assertEqual(hdrs["retry-after"], "1")
                self.assertEqual(srv.request("/v7/breaches")[0], 429)  # no key is a failure too
                self.assertEqual(srv.request("/v7/breaches", key=good)[0], 200)
                time.sleep(1.2)
                self.assertEqual(srv.request("/v7/breaches", key="bd_wrong")[0], 403)
            finally:
                self.assertEqual(srv.stop(), 0)
        finally:
            ctl.cleanup()


if __name__ == "__main__":
    unittest.main()
