"""Exact card lookups (a full number or Hash:) are yes/no tests of a card's hidden digits: a
query may hold only one, and each key has a small daily budget of them, so a masked number
seen in a reply cannot be turned back into the card with its CVV, expiry and owner."""
import hashlib
import json
import re
import sqlite3
import time
import unittest
import urllib.parse

from harness import SCHEMA_VERSION, Ctl, Server, downgrade_to_v4, fixture, sqlite_only

AMEX = "378282246310005"  # c04 in cards.csv, shown as 378282XXXXX0005
AMEX_SECRETS = [AMEX.encode(), b"Amex Holder", b"1234"]
DAY = 86400


def exhausted(per_day):
    """The 429 message once a key's daily budget is used up, as a pattern; its group is the wait."""
    return ("this key's daily budget of %d card lookups by full number or Hash: is used up; "
            r"retry in (\d+) seconds, or search by pattern \(e\.g\. number:411111\*1111\)" % per_day)


DISABLED = re.escape("card lookups by full number or Hash: are disabled for this key; search by "
                     "pattern (e.g. number:411111*1111) or ask your administrator")


def candidates(masked, n):
    """The first n full numbers a masked number could stand for."""
    hidden = masked.count("X")
    head, tail = masked[:6], masked[6 + hidden:]
    return [head + "%0*d" % (hidden, i) + tail for i in range(n)]


class ExactLookups(unittest.TestCase):
    """One server; every test spends the exact budget of its own key."""

    KEYS = {"attacker": ("--rate", "10/h", "--exact-lookups", "3/day"),
            "default": (),
            "disabled": ("--exact-lookups", "0/day"),
            "patterns": ("--exact-lookups", "3/day"),
            "untouched": ("--exact-lookups", "3/day"),
            "bystander": ("--exact-lookups", "1/day")}

    @classmethod
    def setUpClass(cls):
        cls.ctl = Ctl().init()
        cls.ctl.import_("cards", fixture("cards.csv"))
        cls.keys = {name: cls.ctl.key(name, *extra) for name, extra in cls.KEYS.items()}
        cls.srv = Server(cls.ctl)

    @classmethod
    def tearDownClass(cls):
        rc = cls.srv.stop()
        cls.ctl.cleanup()
        assert rc == 0, "breachd exited %d on SIGTERM" % rc

    def search(self, key, query, status=200):
        st, hdrs, raw = self.srv.request("/v7/credit-card-search?" + urllib.parse.urlencode(
            {"query": query, "size": "100"}), key=self.keys[key])
        body = json.loads(raw)
        self.assertEqual(st, status, (query[:80], body))
        return hdrs, body, raw

    def ids(self, key, query):
        return sorted(c["id"] for c in self.search(key, query)[1]["content"])

    def refused(self, key, query, message):
        """A 429 whose message matches message and that carries nothing of the card; returns
        its headers and Retry-After (None when absent), which must equal the wait the message
        names."""
        hdrs, body, raw = self.search(key, query, 429)
        self.assertEqual(set(body), {"error", "message"})
        self.assertEqual(body["error"], "rate_limited")
        m = re.fullmatch(message, body["message"])
        self.assertIsNotNone(m, body["message"])
        for secret in AMEX_SECRETS:
            self.assertNotIn(secret, raw)
        retry = hdrs.get("retry-after")
        self.assertEqual(retry, m.group(1) if m.groups() else None)
        return hdrs, retry

    def test_attack_from_a_masked_number_is_stopped(self):
        # 1. a pattern search shows the masked number (first 6 and last 4 digits)
        hdrs, body, _ = self.search("attacker", "number:378282*0005")
        self.assertEqual([(c["id"], c["number"]) for c in body["content"]],
                         [("c04", "378282XXXXX0005")])
        # 2. 64 candidates in one query: refused at the second one, before any lookup
        guesses = candidates("378282XXXXX0005", 64)
        guesses[63] = AMEX
        _, body, raw = self.search("attacker", " OR ".join("number:" + g for g in guesses), 422)
        self.assertEqual(body["error"], "validation_error")
        self.assertEqual(body["message"],
                         "query: one exact card lookup too many at 26: a query may hold at most "
                         "1 full card number or Hash: term; send one query per card")
        self.assertNotIn(b"Amex Holder", raw)
        # 3. one candidate per request: three wrong guesses use up the key's 3 a day
        for g in guesses[:3]:
            self.assertEqual(self.search("attacker", "number:" + g)[1]["totalElements"], 0)
        # 4. the right number now gets a 429 that reveals nothing, and so does its Hash:
        now = int(time.time())
        hdrs, retry = self.refused("attacker", "number:" + AMEX, exhausted(3))
        self.assertTrue(DAY // 3 - 10 <= int(retry) <= DAY // 3, retry)
        self.refused("attacker", "Hash:" + hashlib.sha256(AMEX.encode()).hexdigest(), exhausted(3))
        # The X-RateLimit headers still describe the key's hourly request budget (10/h): this
        # 429 was the key's 6th request, so 4 are left and the bucket is full 6 x 360 s later.
        self.assertEqual(hdrs["x-ratelimit-limit"], "10")
        self.assertEqual(hdrs["x-ratelimit-remaining"], "4")
        self.assertTrue(now + 6 * 360 - 2 <= int(hdrs["x-ratelimit-reset"]) <= now + 6 * 360 + 2,
                        (now, hdrs["x-ratelimit-reset"]))
        # Other keys' budgets are their own.
        self.assertEqual(self.ids("bystander", AMEX), ["c04"])

    def test_default_key_gets_20_exact_lookups_a_day(self):
        digest = hashlib.sha256(b"4111111111111111").hexdigest()
        for i in range(20):
            query = "4111111111111111" if i % 2 else "Hash:" + digest
            self.assertEqual(self.ids("default", query), ["c01"], i)
        _, retry = self.refused("default", "4111111111111111", exhausted(20))
        self.assertTrue(DAY // 20 - 10 <= int(retry) <= DAY // 20, retry)

    def test_zero_a_day_disables_exact_lookups(self):
        for query in ("4111111111111111", "Hash:" + hashlib.sha256(AMEX.encode()).hexdigest(),
                      "NOT " + AMEX, "owner:amex AND " + AMEX):
            self.refused("disabled", query, DISABLED)
        self.assertEqual(self.ids("disabled", "411111*1111"), ["c01", "c02", "c03"])

    def test_pattern_queries_work_after_the_exact_budget_is_spent(self):
        for g in candidates("378282XXXXX0005", 3):
            self.search("patterns", g)
        self.refused("patterns", AMEX, exhausted(3))
        self.assertEqual(self.ids("patterns", "number:378282*0005"), ["c04"])
        self.assertEqual(self.ids("patterns", "378282XXXXX0005"), ["c04"])
        self.assertEqual(self.ids("patterns", "owner:john"), ["c01", "c05"])
        self.assertEqual(self.ids("patterns", "NOT leakId:L1 AND cvv:1234"), ["c04"])

    def test_only_queries_with_an_exact_term_are_charged(self):
        for query in ("411111*", "*0005", "cvv:123", "NOT leakId:L2", "", "378282XXXXX0005"):
            self.search("untouched", query)
        for query in (AMEX + " OR 378282000000005", "NOT " + AMEX + " NOT 378282000000005",
                      "(" + AMEX):
            self.assertEqual(self.search("untouched", query, 422)[1]["error"], "validation_error")
        self.assertEqual(self.ids("untouched", AMEX), ["c04"])
        self.assertEqual(self.ids("untouched", "NOT " + AMEX), ["c01", "c02", "c03", "c05", "c06",
                                                               "c07", "c08"])
        self.assertEqual(self.ids("untouched", "378282* AND " + AMEX), ["c04"])
        self.refused("untouched", AMEX, exhausted(3))


class ExactLookupMetrics(unittest.TestCase):
    def test_refused_exact_lookups_are_counted_apart(self):
        ctl = Ctl().init()
        try:
            ctl.import_("cards", fixture("cards.csv"))
            key = ctl.key("one", "--exact-lookups", "1/day")
            srv = Server(ctl)
            try:
                path = "/v7/credit-card-search?query=4111111111111111"
                self.assertEqual(srv.request(path, key=key)[0], 200)
                self.assertEqual(srv.request(path, key=key)[0], 429)
                self.assertEqual(srv.request(path, key=key)[0], 429)
                text = srv.request("/metrics")[2].decode()
                self.assertIn('breachd_rate_limited_total{reason="exact_lookups"} 2\n', text)
                self.assertIn('breachd_rate_limited_total{reason="key_budget"} 0\n', text)
            finally:
                self.assertEqual(srv.stop(), 0)
        finally:
            ctl.cleanup()


class ExactLookupKeys(unittest.TestCase):
    """breachctl keys create --exact-lookups N/day, keys list, and the upgrade of an older
    store whose keys had no such budget."""

    def setUp(self):
        self.ctl = Ctl().init()

    def tearDown(self):
        self.ctl.cleanup()

    def listing(self):
        lines = self.ctl.run("keys", "list", check=0).stdout.decode().splitlines()
        self.assertEqual(lines[0].split(), ["ID", "NAME", "PLAN", "RATE/H", "EXACT/DAY",
                                            "QUOTA/MONTH", "CREATED", "EXPIRES", "STATUS",
                                            "TENANT", "TYPES", "ALLOW_IP", "ROLE"])
        return {l.split()[1]: (l.split()[3], l.split()[4]) for l in lines[1:]}

    def test_create_takes_a_daily_budget_and_list_shows_it(self):
        self.ctl.key("plain")
        self.ctl.key("three", "--exact-lookups", "3/day")
        self.ctl.key("none", "--exact-lookups", "0/day")
        self.ctl.key("bare", "--exact-lookups", "7", "--plan", "enterprise")
        self.ctl.key("most", "--exact-lookups", "1000000/day")
        self.assertEqual(self.listing(), {"plain": ("1000", "20"), "three": ("1000", "3"),
                                          "none": ("1000", "0"), "bare": ("10000", "7"),
                                          "most": ("1000", "1000000")})
        for bad in ("-1/day", "1000001/day", "3/h", "x/day", "", "3/day/day"):
            p = self.ctl.run("keys", "create", "--name", "bad", "--exact-lookups", bad, check=2)
            self.assertEqual(p.stdout, b"")
            self.assertIn(b"--exact-lookups is card lookups by full number or Hash: per day, 0 to "
                          b"1000000, like 20/day", p.stderr)
        self.assertNotIn("bad", self.listing())

    @sqlite_only
    def test_an_older_store_is_upgraded_and_its_keys_get_20_a_day(self):
        self.ctl.import_("cards", fixture("cards.csv"))
        key = self.ctl.key("old", "--exact-lookups", "2/day")
        downgrade_to_v4(self.ctl.db)
        db = sqlite3.connect(self.ctl.db)
        columns = [r[1] for r in db.execute("PRAGMA table_info(api_keys)")]
        db.close()
        self.assertNotIn("exact_per_day", columns)
        srv = Server(self.ctl)
        try:
            for i in range(20):
                st, body = srv.get("/v7/credit-card-search?query=" + AMEX, key=key)
                self.assertEqual((st, body["totalElements"]), (200, 1), i)
            st, body = srv.get("/v7/credit-card-search?query=" + AMEX, key=key)
            self.assertEqual(st, 429, body)
        finally:
            self.assertEqual(srv.stop(), 0)
        db = sqlite3.connect(self.ctl.db)
        self.assertEqual(db.execute("PRAGMA user_version").fetchone()[0], SCHEMA_VERSION)
        self.assertGreaterEqual(SCHEMA_VERSION, 5)  # migration 5 added the budget
        self.assertEqual(db.execute("SELECT name, exact_per_day FROM api_keys").fetchall(),
                         [("old", 20)])
        db.close()
        self.assertEqual(self.listing(), {"old": ("1000", "20")})

    @sqlite_only
    def test_init_on_an_existing_store_changes_nothing(self):
        self.ctl.key("three", "--exact-lookups", "3/day")
        before = open(self.ctl.db, "rb").read()
        p = self.ctl.run("init", check=2)
        self.assertIn(b"is already a breachd store", p.stderr)
        self.assertEqual(open(self.ctl.db, "rb").read(), before)
        self.assertEqual(self.listing(), {"three": ("1000", "3")})


if __name__ == "__main__":
    unittest.main()
