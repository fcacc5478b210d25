"""Per-key budgets shared by several breachd processes (--shared-limits): exact across
servers, kept per process while the shared store cannot be reached, and refused at start on
a store that cannot keep them."""
import collections
import json
import os
import subprocess
import threading
import time
import unittest
import urllib.parse

from harness import STORE, PG_URI, Ctl, Server, binary, fixture, psql

AMEX = "378282246310005"


def hammer(servers, key, clients, per_client, path="/v7/breaches"):
    """clients threads, each sending per_client requests alternately to the servers; returns
    a Counter of statuses and the bodies of the refusals."""
    statuses, refusals, lock = collections.Counter(), [], threading.Lock()

    def client(i):
        for j in range(per_client):
            st, _, body = servers[(i + j) % len(servers)].request(path, key=key)
            with lock:
                statuses[st] += 1
                if st != 200:
                    refusals.append(body)

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return statuses, refusals


def metric(srv, name):
    st, _, body = srv.request("/metrics")
    assert st == 200
    for line in body.decode().splitlines():
        if line.startswith(name + " "):
            return int(line.split()[1])
    return None


class RefusedOnSQLite(unittest.TestCase):
    def test_a_sqlite_store_cannot_keep_shared_limits(self):
        ctl, other = Ctl().init(), Ctl().init()
        try:
            if STORE == "sqlite":
                target = other.db
            else:  # a SQLite store beside the PostgreSQL one
                target = os.path.join(ctl.dir, "limits.db")
                subprocess.run([binary("breachctl"), "init", "--db", target], check=True,
                               capture_output=True, timeout=60)
            with self.assertRaises(AssertionError) as cm:
                Server(ctl, "--shared-limits", target)
            self.assertIn("--shared-limits: the store at %s cannot keep shared rate limits; "
                          "name a PostgreSQL store (its primary)" % target, str(cm.exception))
        finally:
            ctl.cleanup()
            other.cleanup()


@unittest.skipIf(STORE != "pg", "PostgreSQL store")
class SharedAcrossServers(unittest.TestCase):
    # made before the servers start: a key made later works only once they reloaded keys
    KEYS = {"forty": ("--rate", "40/h"), "three-hundred": ("--rate", "300/h"),
            "exact": ("--exact-lookups", "3/day")}

    @classmethod
    def setUpClass(cls):
        cls.ctl = Ctl().init()
        cls.ctl.import_("cards", fixture("cards.csv"))
        cls.keys = {name: cls.ctl.key(name, *extra) for name, extra in cls.KEYS.items()}
        cls.servers = [Server(cls.ctl, "--shared-limits", cls.ctl.db) for _ in range(2)]

    @classmethod
    def tearDownClass(cls):
        codes = [s.stop() for s in cls.servers]
        cls.ctl.cleanup()
        assert codes == [0, 0], codes

    def test_40_an_hour_is_40_in_all_whichever_server_answers(self):
        key = self.keys["forty"]
        statuses, refusals = hammer(self.servers, key, clients=20, per_client=6)
        self.assertEqual(statuses, {200: 40, 429: 80})
        for body in refusals:
            err = json.loads(body)
            self.assertEqual(err["error"], "rate_limited")
            self.assertRegex(err["message"], r"^this key's limit of 40 requests per hour is used "
                                             r"up; retry in (89|90) seconds$")

    def test_a_large_budget_is_leased_never_exceeded(self):
        key = self.keys["three-hundred"]
        before = sum(metric(s, "breachd_shared_limits_leases_total") for s in self.servers)
        statuses, _ = hammer(self.servers, key, clients=10, per_client=40)
        self.assertEqual(statuses[200] + statuses[429], 400)
        # never more than the budget; fewer only by what a lease held when the load stopped
        self.assertLessEqual(statuses[200], 300)
        self.assertGreaterEqual(statuses[200], 300 - 2 * 4)
        leases = sum(metric(s, "breachd_shared_limits_leases_total") for s in self.servers)
        self.assertLess(leases - before, 400)  # batches, not a lease per request

    def test_the_daily_budget_of_exact_card_lookups_is_shared_too(self):
        key = self.keys["exact"]
        path = "/v7/credit-card-search?" + urllib.parse.urlencode({"query": "number:" + AMEX})
        statuses, refusals = hammer(self.servers, key, clients=4, per_client=3, path=path)
        self.assertEqual(statuses, {200: 3, 429: 9})
        self.assertIn(b"daily budget of 3 card lookups", refusals[0])


@unittest.skipIf(STORE != "pg", "PostgreSQL store")
class SharedStoreUnreachable(unittest.TestCase):
    """The limits live in a database of their own here, so that it can go away while the
    store that serves stays up."""

    def test_budgets_are_kept_per_process_until_it_answers_again(self):
        ctl, limits = Ctl().init(), Ctl().init()
        servers = []
        keys = [ctl.key(name, "--rate", "5/h") for name in ("five", "five-again")]
        try:
            servers = [Server(ctl, "--shared-limits", limits.db) for _ in range(2)]
            self.assertEqual(metric(servers[0], "breachd_shared_limits_up"), 1)
            psql(PG_URI, "ALTER DATABASE %s ALLOW_CONNECTIONS false" % limits.dbname)
            psql(PG_URI, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                         "WHERE datname = '%s'" % limits.dbname)
            key = keys[0]
            # fail open to per-process budgets: 5 an hour from each server
            statuses, _ = hammer(servers, key, clients=4, per_client=5)
            self.assertEqual(statuses, {200: 10, 429: 10})
            for srv in servers:
                self.assertEqual(metric(srv, "breachd_shared_limits_up"), 0)
                self.assertGreaterEqual(metric(srv, "breachd_shared_limits_errors_total"), 1)
                self.assertIn("shared limits at %s unreachable" % limits.db, srv.log())
            psql(PG_URI, "ALTER DATABASE %s ALLOW_CONNECTIONS true" % limits.dbname)
            deadline = time.time() + 10
            while (time.time() < deadline and
                   any(metric(s, "breachd_shared_limits_up") != 1 for s in servers)):
                time.sleep(0.2)
            for srv in servers:
                self.assertEqual(metric(srv, "breachd_shared_limits_up"), 1)
                self.assertIn("shared limits at %s answer again" % limits.db, srv.log())
            # shared again: a new key's 5 are 5 in all
            key = keys[1]
            statuses, _ = hammer(servers, key, clients=4, per_client=5)
            self.assertEqual(statuses, {200: 5, 429: 15})
        finally:
            psql(PG_URI, "ALTER DATABASE %s ALLOW_CONNECTIONS true" % limits.dbname)
            codes = [s.stop() for s in servers]
            ctl.cleanup()
            limits.cleanup()
            self.assertEqual(codes, [0] * len(servers))


if __name__ == "__main__":
    unittest.main()
