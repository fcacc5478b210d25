"""Usage and monthly quotas (issue 17): exact at the boundary, 403 quota_exhausted with the
reset date, counters that survive a restart and that several servers of one store share,
GET /v7/usage, keys without a quota untouched, breachctl's --quota and keys set-quota."""
import collections
import datetime
import json
import threading
import time
import unittest

from harness import Ctl, Server

QUOTA_HELP = "is requests per calendar month (UTC), 1 to 1000000000000, like 10000/month"


def reset_at():
    """The first second of the next UTC month, as the server says it."""
    now = datetime.datetime.now(datetime.timezone.utc)
    y, m = (now.year + 1, 1) if now.month == 12 else (now.year, now.month + 1)
    return "%04d-%02d-01T00:00:00Z" % (y, m)


class Quotas(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.ctl = Ctl().init()
        cls.keys = {name: cls.ctl.key(name, *extra) for name, extra in {
            "five": ("--quota", "5/month"),
            "ten": ("--quota", "10/month", "--plan", "enterprise", "--expires", "2099-01-02"),
            "hibp": ("--quota", "2/month"),
            "range": ("--quota", "1/month"),
            "free": (),
            "raise": ("--quota", "1/month"),
        }.items()}
        cls.srv = Server(cls.ctl)

    @classmethod
    def tearDownClass(cls):
        rc = cls.srv.stop()
        cls.ctl.cleanup()
        assert rc == 0, rc

    def assertExhausted(self, status, hdrs, body, quota):
        self.assertEqual(status, 403, body)
        self.assertEqual(json.loads(body), {
            "error": "quota_exhausted",
            "message": "this key's quota of %d requests a month is used up; it resets at %s"
                       % (quota, reset_at())})
        self.assertEqual(hdrs["x-quota-reset"], reset_at())

    def usage(self, key):
        st, body = self.srv.get("/v7/usage", key=key)
        self.assertEqual(st, 200, body)
        return body

    def test_a_quota_of_5_admits_exactly_5_then_403_with_the_reset_date(self):
        key = self.keys["five"]
        for i in range(5):
            st, hdrs, body = self.srv.request("/v7/breaches", key=key)
            self.assertEqual(st, 200, (i, body))
            self.assertNotIn("x-quota-reset", hdrs)
        for _ in range(3):  # refusals do not count, and stay refusals
            st, hdrs, body = self.srv.request("/v7/breaches", key=key)
            self.assertExhausted(st, hdrs, body, 5)
            self.assertEqual(hdrs["x-ratelimit-limit"], "1000")  # the key checked out
        u = self.usage(key)
        self.assertEqual((u["requests_today"], u["requests_this_month"], u["monthly_quota"],
                          u["monthly_remaining"]), (5, 5, 5, 0))

    def test_usage_reports_exact_numbers_and_is_not_counted_itself(self):
        key = self.keys["ten"]
        self.assertEqual(self.usage(key), {
            "plan": "enterprise", "hourly_limit": 10000, "hourly_remaining": 9999,
            "requests_today": 0, "requests_this_month": 0, "monthly_quota": 10,
            "monthly_remaining": 10, "month_resets_at": reset_at(),
            "expires_at": "2099-01-02T00:00:00Z"})
        for path in ("/v7/breaches", "/v7/breaches", "/v7/no-such-path"):
            self.srv.request(path, key=key)  # a 404 past the key counts, as the hourly limit does
        u = self.usage(key)
        self.assertEqual((u["hourly_remaining"], u["requests_today"], u["requests_this_month"],
                          u["monthly_remaining"]), (10000 - 5, 3, 3, 7))
        u = self.usage(key)  # asking again changes nothing but the hourly budget
        self.assertEqual((u["hourly_remaining"], u["requests_today"], u["monthly_remaining"]),
                         (10000 - 6, 3, 7))
        st, body = self.srv.get("/v7/usage?x=1", key=key)
        self.assertEqual((st, body["error"]), (400, "bad_request"))

    def test_a_key_without_quota_is_counted_and_never_refused(self):
        key = self.keys["free"]
        for _ in range(30):
            st, hdrs, _ = self.srv.request("/v7/breaches", key=key)
            self.assertEqual(st, 200)
            self.assertNotIn("x-quota-reset", hdrs)
        u = self.usage(key)
        self.assertEqual((u["plan"], u["monthly_quota"], u["monthly_remaining"], u["expires_at"],
                          u["requests_today"], u["requests_this_month"]),
                         ("standard", None, None, None, 30, 30))

    def test_the_hibp_api_and_range_answer_an_exhausted_quota_with_403(self):
        key = self.keys["hibp"]
        for _ in range(2):
            st, _, _ = self.srv.request("/api/v3/breaches", headers={"hibp-api-key": key})
            self.assertEqual(st, 200)
        st, hdrs, body = self.srv.request("/api/v3/breaches", headers={"hibp-api-key": key})
        self.assertExhausted(st, hdrs, body, 2)
        st, hdrs, body = self.srv.request("/api/v3/subscription/status",
                                          headers={"hibp-api-key": key})
        self.assertExhausted(st, hdrs, body, 2)
        key = self.keys["range"]
        st, _, _ = self.srv.request("/range/21BD1", headers={"hibp-api-key": key})
        self.assertEqual(st, 200)
        st, hdrs, body = self.srv.request("/range/21BD1", headers={"hibp-api-key": key})
        self.assertExhausted(st, hdrs, body, 1)

    def test_set_quota_applies_to_running_servers(self):
        key = self.keys["raise"]
        self.assertEqual(self.srv.request("/v7/breaches", key=key)[0], 200)
        self.assertEqual(self.srv.request("/v7/breaches", key=key)[0], 403)
        kid = self.key_id("raise")
        self.ctl.run("keys", "set-quota", kid, "2/month", check=0)
        self.assertEqual(self.wait_status(key, 200), 200)  # the second of 2
        self.assertEqual(self.srv.request("/v7/breaches", key=key)[0], 403)
        p = self.ctl.run("keys", "set-quota", kid, "none", check=0)
        self.assertEqual(p.stdout, b"")
        self.assertEqual(self.wait_status(key, 200), 200)
        self.assertEqual(self.usage(key)["monthly_quota"], None)
        self.assertEqual(self.usage(key)["requests_this_month"], 3)

    def wait_status(self, key, want):
        deadline = time.time() + 10
        while True:
            st = self.srv.request("/v7/breaches", key=key)[0]
            if st == want or time.time() > deadline:
                return st
            time.sleep(0.2)

    def key_id(self, name):
        for line in self.ctl.run("keys", "list", check=0).stdout.decode().splitlines()[1:]:
            cols = line.split()
            if cols[1] == name:
                return cols[0]
        raise AssertionError(name)

    def test_keys_list_shows_the_quota(self):
        lines = self.ctl.run("keys", "list", check=0).stdout.decode().splitlines()
        self.assertEqual(lines[0].split(), ["ID", "NAME", "PLAN", "RATE/H", "EXACT/DAY",
                                            "QUOTA/MONTH", "CREATED", "EXPIRES", "STATUS",
                                            "TENANT", "TYPES", "ALLOW_IP", "ROLE"])
        rows = {l.split()[1]: l.split() for l in lines[1:]}
        self.assertEqual(rows["five"][5], "5")
        self.assertEqual(rows["free"][5], "-")
        self.assertEqual(rows["ten"][2:6], ["enterprise", "10000", "20", "10"])


class Command(unittest.TestCase):
    def setUp(self):
        self.ctl = Ctl().init()

    def tearDown(self):
        self.ctl.cleanup()

    def test_bad_quotas_exit_2_with_a_clear_message(self):
        for bad in ("0/month", "abc", "5/week", "", "-1/month", "5/month/month",
                    "1000000000001/month"):
            p = self.ctl.run("keys", "create", "--name", "x", "--quota", bad, check=2)
            self.assertEqual(p.stdout, b"")
            self.assertEqual(p.stderr.decode(), "breachctl keys create: --quota %s\n" % QUOTA_HELP)
        self.ctl.key("one")
        for bad in ("0/month", "abc", "5/week"):
            p = self.ctl.run("keys", "set-quota", "1", bad, check=2)
            self.assertEqual(p.stderr.decode(),
                             "breachctl keys set-quota: the quota %s, or none\n" % QUOTA_HELP)
        p = self.ctl.run("keys", "set-quota", "7", "5/month", check=2)
        self.assertEqual(p.stderr.decode(), "breachctl keys set-quota: no active key 7\n")
        p = self.ctl.run("keys", "set-quota", "1", check=2)
        self.assertIn("give the key's ID", p.stderr.decode())
        self.assertEqual(len(self.ctl.run("keys", "list", check=0).stdout.splitlines()), 2)

    def test_create_with_a_quota_prints_the_key_alone(self):
        p = self.ctl.run("keys", "create", "--name", "q", "--quota", "7/month", check=0)
        self.assertRegex(p.stdout.decode(), r"^bd_[A-Za-z0-9_-]{43}\n$")
        self.assertIn("7 requests/month", p.stderr.decode())


class Persistence(unittest.TestCase):
    def setUp(self):
        self.ctl = Ctl().init()
        self.servers = []

    def tearDown(self):
        for s in self.servers:
            s.stop()
        self.ctl.cleanup()

    def start(self):
        s = Server(self.ctl)
        self.servers.append(s)
        return s

    def test_counts_survive_a_restart(self):
        quota, free = self.ctl.key("q", "--quota", "3/month"), self.ctl.key("free")
        srv = self.start()
        statuses = [srv.request("/v7/breaches", key=quota)[0] for _ in range(4)]
        self.assertEqual(statuses, [200, 200, 200, 403])
        for _ in range(4):
            srv.request("/v7/breaches", key=free)
        self.assertEqual(srv.stop(), 0)  # writes what it counted in memory
        srv = self.start()
        st, hdrs, body = srv.request("/v7/breaches", key=quota)
        self.assertEqual((st, json.loads(body)["error"]), (403, "quota_exhausted"))
        st, u = srv.get("/v7/usage", key=free)
        self.assertEqual((u["requests_today"], u["requests_this_month"]), (4, 4))
        st, u = srv.get("/v7/usage", key=quota)
        self.assertEqual((u["requests_this_month"], u["monthly_remaining"]), (3, 0))

    def test_two_servers_share_a_quota_exactly(self):
        key = self.ctl.key("shared", "--quota", "20/month")
        servers = [self.start(), self.start()]
        statuses, lock = collections.Counter(), threading.Lock()

        def client(i):
            for j in range(10):
                st = servers[(i + j) % 2].request("/v7/breaches", key=key)[0]
                with lock:
                    statuses[st] += 1

        threads = [threading.Thread(target=client, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(statuses, {200: 20, 403: 20})
        for s in servers:
            st, u = s.get("/v7/usage", key=key)
            self.assertEqual((u["requests_this_month"], u["monthly_remaining"]), (20, 0))

    def test_two_servers_add_up_the_counts_of_keys_without_quota(self):
        key = self.ctl.key("free")
        a, b = self.start(), self.start()
        for i in range(6):
            self.assertEqual((a if i % 3 else b).request("/v7/breaches", key=key)[0], 200)
        time.sleep(2.5)  # each writes what it counted within a second or so
        for s in (a, b):
            st, u = s.get("/v7/usage", key=key)
            self.assertEqual((u["requests_today"], u["requests_this_month"]), (6, 6))


if __name__ == "__main__":
    unittest.main()
