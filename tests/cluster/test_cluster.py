"""Many breachd instances on one corpus (issue 15): a PostgreSQL primary and a streaming-
replication hot standby on this machine (scripts/pg-cluster.sh run-standby), instance A
serving from the primary and instance B from the standby, with the same secret. Imports and
key changes go to the primary; both instances must answer the same within seconds, B must
survive its standby going away, and either must keep serving when the other is killed.

Real components only: the real breachctl and breachd, a real replica. Run by
tests/cluster/run.py (make test-cluster)."""
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "e2e"))
os.environ.setdefault("BREACHD_STORE", "pg")  # harness reads it at import

from harness import PG_SCHEMA_VERSION, ROOT, Ctl, Server, binary, fixture, psql  # noqa: E402

PRIMARY_URI = os.environ.get("BREACHD_PG_URI", "")
STANDBY_URI = os.environ.get("BREACHD_PG_STANDBY_URI", "")
STANDBY_DIR = os.environ.get("BREACHD_PG_STANDBY_DIR", "")
PRIMARY_DIR = os.environ.get("BREACHD_PG_DIR", "")

# Key changes reach a server within 5 s (it polls the key generation every second), plus
# replication lag, which on one machine is milliseconds: 3 s of slack for a loaded CI box.
KEY_DELAY = 5 + 3
# Imports: replication lag and the servers' caches following the data version.
DATA_DELAY = 10


def setUpModule():
    if not (PRIMARY_URI and PRIMARY_DIR and STANDBY_URI and STANDBY_DIR):
        raise unittest.SkipTest("needs a primary and a standby: scripts/pg-cluster.sh "
                                "run-standby python3 tests/cluster/run.py")


def standby_uri(dbname):
    """BREACHD_PG_STANDBY_URI with its database replaced by dbname."""
    m = re.match(r"(postgres(?:ql)?://[^/?]*)(/[^?]*)?(\?.*)?$", STANDBY_URI)
    assert m, STANDBY_URI
    return m.group(1) + "/" + dbname + (m.group(3) or "")


def cluster(action, directory):
    """pause or resume the cluster in directory."""
    subprocess.run([os.path.join(ROOT, "scripts", "pg-cluster.sh"), action, directory],
                   check=True, capture_output=True, timeout=60)


def wait_replayed(timeout=30):
    """Waits until the standby has replayed everything the primary has written so far: used
    only to set up (a server on the standby must find the store and keys there at start),
    never in place of what a test asserts."""
    lsn = psql(PRIMARY_URI, "SELECT pg_current_wal_lsn()")[0][0]
    deadline = time.time() + timeout
    while time.time() < deadline:
        if psql(STANDBY_URI, "SELECT pg_last_wal_replay_lsn() >= '%s'::pg_lsn" % lsn) == [["t"]]:
            return
        time.sleep(0.05)
    raise AssertionError("the standby did not replay %s within %d s" % (lsn, timeout))


class StoreView:
    """What Server needs of a Ctl (a private directory, the --db and --secret arguments) for
    a server on a given URI of the store: the primary's or the standby's."""

    def __init__(self, ctl, db, name):
        self.dir = tempfile.mkdtemp(prefix="%s-" % name, dir=ctl.dir)
        self.db = db
        self.secret = ctl.secret

    def store_args(self):
        return ["--db", self.db, "--secret", self.secret]


def on_primary(ctl, name="a", *extra):
    return Server(StoreView(ctl, ctl.db, name), *extra)


def on_standby(ctl, name="b", *extra):
    return Server(StoreView(ctl, standby_uri(ctl.dbname), name), *extra)


def stop_all(*servers):
    """Stops the servers that started; for a set-up that failed half way."""
    for srv in servers:
        if srv is not None:
            srv.stop()


def poll(fn, timeout, interval=0.1):
    """Calls fn until it returns something true or timeout seconds pass; returns (its last
    value, seconds taken)."""
    start = time.time()
    while True:
        v = fn()
        if v or time.time() - start >= timeout:
            return v, time.time() - start
        time.sleep(interval)


def records():
    """Three records of alice on two of the e2e fixture breaches, one of bob."""
    beta = "22222222-2222-4222-8222-222222222222"
    alpha = "11111111-1111-4111-8111-111111111111"
    return [
        {"breach_uuid": alpha, "email": "alice@example.com", "user_name": "alice",
         "password_hash": "5f4dcc3b5aa765d61d8327deb882cf99"},
        {"breach_uuid": beta, "email": "Alice@Example.com", "password": "hunter22",
         "phone_number": "+49 30 1234567"},
        {"breach_uuid": beta, "email": "alice@example.com", "password": "s3cret!"},
        {"breach_uuid": beta, "email": "bob@example.com", "password": "bobpass"},
    ]


class TwoInstances(unittest.TestCase):
    """A store made on the primary with one key (KEY_ARGS), then A on the primary and B on
    the standby (each with SERVER_ARGS(ctl)), one secret; both must exit 0 at the end."""

    KEY_ARGS = ()

    @staticmethod
    def SERVER_ARGS(ctl):
        return ()

    @classmethod
    def setUpClass(cls):
        cls.ctl = Ctl()
        cls.a = cls.b = None
        try:
            cls.ctl.init()
            cls.key = cls.ctl.key("cluster", *cls.KEY_ARGS)
            wait_replayed()  # B must know the key at start: no request may probe for it
            cls.a = on_primary(cls.ctl, "a", *cls.SERVER_ARGS(cls.ctl))
            cls.b = on_standby(cls.ctl, "b", *cls.SERVER_ARGS(cls.ctl))
        except BaseException:
            stop_all(cls.a, cls.b)
            cls.ctl.cleanup()
            raise

    @classmethod
    def tearDownClass(cls):
        rc_a, rc_b = cls.a.stop(), cls.b.stop()
        cls.ctl.cleanup()
        assert rc_a == 0, "A exited %d on SIGTERM:\n%s" % (rc_a, cls.a.log()[-4000:])
        # B served through its standby's restart (test_standby_down...): the same process
        assert rc_b == 0, "B exited %d on SIGTERM:\n%s" % (rc_b, cls.b.log()[-4000:])


class Cluster(TwoInstances):
    """A on the primary, B on the standby, one store, one secret."""

    KEY_ARGS = ("--plan", "enterprise")

    def both(self, path, key="__default__"):
        """(A's (status, body bytes), B's (status, body bytes)) for one request."""
        key = self.key if key == "__default__" else key
        out = []
        for srv in (self.a, self.b):
            st, hdrs, body = srv.request(path, key=key)
            out.append((st, body))
        return tuple(out)

    def assertSameWithin(self, path, timeout=DATA_DELAY):
        """Polls until B answers path with A's status and body; returns A's parsed body."""
        start = time.time()
        while True:
            ra, rb = self.both(path)
            if ra == rb or time.time() - start >= timeout:
                break
            time.sleep(0.1)
        self.assertEqual(ra[0], 200, ra)
        self.maxDiff = None
        self.assertEqual(rb, ra, "B still differs from A after %.1f s on %s" % (
            time.time() - start, path))
        return json.loads(ra[1])

    def test_a_import_on_the_primary_is_served_the_same_by_both(self):
        self.ctl.import_("breaches", fixture("breaches.jsonl"))
        self.ctl.import_("records", self.ctl.write(
            "r.jsonl", "\n".join(json.dumps(r) for r in records())))
        self.ctl.import_("cards", fixture("cards.csv"))

        catalog = self.assertSameWithin("/v7/breaches")
        self.assertEqual([b["source_name"] for b in catalog],
                         ["Delta Leak", "Beta Shop", "Gamma Games", "Alpha Forum"])
        self.assertEqual([b["pwned_count"] for b in catalog], [5000, 2, 0, 1200])

        found = self.assertSameWithin(
            "/v7/breach-search?type=email&account=alice%40example.com")
        self.assertEqual(found["records_found"], 3)
        self.assertEqual([(r["breach_details"]["site_name"], r["breached_data"]["password"],
                           r["breached_data"]["password_hash"]) for r in found["data"]],
                         [("Beta Shop", "*****t!", None), ("Beta Shop", "******22", None),
                          ("Alpha Forum", None, "5f4dcc3b5aa765d61d8327deb882cf99")])

        cards = self.assertSameWithin("/v7/credit-card-search?" + urllib.parse.urlencode(
            {"query": "number:411111*", "size": "10"}))
        self.assertEqual(cards["totalElements"], 3)
        self.assertEqual([(c["id"], c["number"]) for c in cards["content"]],
                         [("c02", "411111XXXXXX1111"), ("c01", "411111XXXXXX1111"),
                          ("c03", "411111XXXXXXXXX1111")])

        # A paging token made by one instance is good on the other: both seal it with the
        # one secret. Tokens hold a random nonce, so the two pages differ only there.
        page1 = "/v7/breach-search?type=email&account=alice%40example.com&number_of_records=1"
        (ra, rb) = self.both(page1)
        self.assertEqual((ra[0], rb[0]), (200, 200), (ra, rb))
        token_a = json.loads(ra[1])["pagination_token"]
        token_b = json.loads(rb[1])["pagination_token"]
        for token, srv in ((token_a, self.b), (token_b, self.a)):
            st, body = srv.get(page1 + "&" + urllib.parse.urlencode({"paging_token": token}),
                               key=self.key)
            self.assertEqual(st, 200, body)
            self.assertEqual(body["records_found"], 3)
            self.assertEqual([r["breached_data"]["password"] for r in body["data"]],
                             ["******22"])

    def test_b_keys_created_and_revoked_on_the_primary_reach_both(self):
        key = self.ctl.key("late")
        # 0.25 s between tries: every refusal counts against the address's failed-key
        # throttle (60 a minute), and this test must stay well under it.
        accepted, took = poll(lambda: self.statuses(key) == [200, 200], KEY_DELAY, 0.25)
        self.assertTrue(accepted, "a new key not accepted by both %.1f s after its creation"
                        % took)

        listing = self.ctl.run("keys", "list", check=0).stdout.decode().splitlines()
        ids = [line.split()[0] for line in listing[1:] if line.split()[1] == "late"]
        self.assertEqual(len(ids), 1, listing)
        self.ctl.run("keys", "revoke", ids[0], check=0)
        refused, took = poll(lambda: self.statuses(key) == [403, 403], KEY_DELAY, 0.25)
        for srv, name in ((self.a, "A"), (self.b, "B")):
            st, body = srv.get("/v7/breaches", key=key)
            self.assertEqual(st, 403, "%s %.1f s after the revocation: %r" % (name, took, body))
            self.assertEqual(body["error"], "authentication_failed")
        # the class's own key was not touched
        self.assertEqual(self.statuses(self.key), [200, 200])

    def statuses(self, key):
        return [srv.request("/v7/breaches", key=key)[0] for srv in (self.a, self.b)]

    def test_c_standby_down_b_answers_503_and_recovers_while_a_serves(self):
        seen_by_a = []
        stop = threading.Event()

        def keep_asking_a():
            while not stop.is_set():
                seen_by_a.append(self.a.request("/v7/breaches", key=self.key)[0])
                seen_by_a.append(self.a.request("/healthz")[0])
                time.sleep(0.02)

        asker = threading.Thread(target=keep_asking_a)
        asker.start()
        try:
            self.assertEqual(self.b.request("/v7/breaches", key=self.key)[0], 200)
            cluster("pause", STANDBY_DIR)
            try:
                for path in ("/v7/breaches",
                             "/v7/breach-search?type=email&account=alice%40example.com",
                             "/healthz"):
                    st, hdrs, body = self.b.request(path, key=self.key)
                    self.assertEqual(st, 503, (path, body))
                    self.assertEqual(hdrs["retry-after"], "1", path)
                    self.assertEqual(hdrs["content-type"], "application/json; charset=utf-8")
                    err = json.loads(body)
                    self.assertEqual(set(err), {"error", "message"}, err)
                    self.assertEqual(err["error"], "unavailable", path)
                # a second round: still 503, not a hang or a crash once reconnecting fails
                self.assertEqual(self.b.request("/v7/breaches", key=self.key)[0], 503)
            finally:
                cluster("resume", STANDBY_DIR)
            (st, took) = poll(lambda: self.b.request("/healthz")[0] == 200, 10)
            self.assertTrue(st, "B's /healthz not 200 within 10 s of the standby's return")
            # every worker thread of B, not only the one that answered the poll, serves at
            # once: one whose connection the restart closed must not answer a 503 first
            statuses = [self.b.request("/v7/breaches", key=self.key)[0] for _ in range(20)]
            self.assertEqual(statuses, [200] * 20)
            self.assertIsNone(self.b.proc.poll(), "B is the same process throughout")
        finally:
            stop.set()
            asker.join()
        self.assertGreater(len(seen_by_a), 10)
        self.assertEqual(set(seen_by_a), {200}, "A answered other than 200 while B's standby "
                         "was down: %r" % sorted(set(seen_by_a)))

    def test_d_kill_9_one_instance_and_the_other_serves(self):
        # Instances of this test's own, so that A and B stay up for the class.
        for victim_side in ("primary", "standby"):
            with self.subTest(killed=victim_side):
                if victim_side == "primary":
                    victim, other = on_primary(self.ctl, "kp"), on_standby(self.ctl, "ks")
                else:
                    victim, other = on_standby(self.ctl, "ks"), on_primary(self.ctl, "kp")
                try:
                    self.assertEqual(victim.request("/v7/breaches", key=self.key)[0], 200)
                    seen = []
                    stop = threading.Event()

                    def keep_asking():
                        while not stop.is_set():
                            seen.append(other.request("/v7/breaches", key=self.key)[0])
                            time.sleep(0.01)

                    asker = threading.Thread(target=keep_asking)
                    asker.start()
                    try:
                        time.sleep(0.2)
                        victim.proc.send_signal(signal.SIGKILL)
                        self.assertEqual(victim.proc.wait(timeout=10), -signal.SIGKILL)
                        time.sleep(0.5)
                    finally:
                        stop.set()
                        asker.join()
                    self.assertGreater(len(seen), 5)
                    self.assertEqual(set(seen), {200})
                    self.assertEqual(other.request("/v7/breaches", key=self.key)[0], 200)
                    self.assertEqual(other.request("/healthz")[0], 200)
                finally:
                    victim.stop()
                    self.assertEqual(other.stop(), 0)

    def test_e_primary_down_b_keeps_serving_reads_from_the_standby(self):
        # The other way round from test_c: a hot standby answers reads on its own while its
        # primary is away, so B serves what it has; A answers 503 and comes back.
        (ra, rb) = self.both("/v7/breaches")
        self.assertEqual((ra[0], rb[0]), (200, 200))
        cluster("pause", PRIMARY_DIR)
        try:
            for _ in range(3):
                st, hdrs, body = self.b.request("/v7/breaches", key=self.key)
                self.assertEqual((st, body), (200, rb[1]))
                self.assertEqual(self.b.request("/healthz")[0], 200)
                st, hdrs, body = self.a.request("/v7/breaches", key=self.key)
                self.assertEqual(st, 503, body)
                self.assertEqual(json.loads(body)["error"], "unavailable")
                self.assertEqual(hdrs["retry-after"], "1")
        finally:
            cluster("resume", PRIMARY_DIR)
        back, took = poll(lambda: self.a.request("/healthz")[0] == 200, 10)
        self.assertTrue(back, "A's /healthz not 200 within 10 s of the primary's return")
        self.assertEqual(self.both("/v7/breaches"), (ra, rb))


# A record of each kind of first identity, for the owner keys migration 8 computes.
IDENTITIES = [
    {"breach_uuid": "22222222-2222-4222-8222-222222222222", **identity} for identity in (
        {"user_name": "Zoë_Owner"}, {"phone_number": "+1 555 0100 0000"},
        {"ip_address": "2001:db8::7"}, {"bitcoin_address": "1BoatSLRHtKNngkdXEeobR76b53LETtpyT"},
        {"social_security_number": "987-65-4320"},
        {"password_hash": "5f4dcc3b5aa765d61d8327deb882cf99"}, {"password": "only-a-password"})
]

# Migration 8 taken back (schema.c), as a store of the release before it was.
UNDO_8 = ("ALTER TABLE records DROP CONSTRAINT records_pkey, DROP CONSTRAINT "
          "records_dedup_key; ALTER TABLE records DROP COLUMN ok, ADD PRIMARY KEY (id), "
          "ADD CONSTRAINT records_dedup_key UNIQUE (dedup); DROP INDEX cards_by_id; "
          "ALTER TABLE cards DROP CONSTRAINT cards_pkey, ADD PRIMARY KEY (id), "
          "ADD CONSTRAINT cards_card_id_key UNIQUE (card_id);")
# Migration 9 (the breach fields of the HIBP API v3) taken back out.
UNDO_9 = ("DROP INDEX breaches_by_name; ALTER TABLE breaches DROP COLUMN name, "
          "DROP COLUMN added_at, DROP COLUMN modified_at, DROP COLUMN hibp_flags;")


class UpgradeOrder(unittest.TestCase):
    """A newer breachd on a standby whose store is at an older schema cannot migrate it (a
    standby is read-only and follows its primary): it must say so and what to do, and
    serve once the primary is upgraded."""

    def test_standby_at_an_older_schema_is_refused_until_the_primary_is_upgraded(self):
        ctl = Ctl()
        srv = None
        try:
            ctl.init()
            key = ctl.key("upgrade")
            ctl.import_("breaches", fixture("breaches.jsonl"))
            ctl.import_("records", ctl.write(
                "r.jsonl", "\n".join(json.dumps(r) for r in records() + IDENTITIES)))
            owners = psql(ctl.db, "SELECT id, ok FROM records ORDER BY id")
            # the store as an older release left it: before migrations 7 to 14
            psql(ctl.db, "DROP TABLE job_chunks; DROP TABLE jobs; DROP TABLE alerts; DROP TABLE watches; DROP TABLE changes; DROP TABLE key_usage; ALTER TABLE api_keys DROP COLUMN quota_per_month; "
                         "DROP TABLE password_ranges; " + UNDO_9 + UNDO_8 + "DROP TABLE rate_limits; "
                         "UPDATE meta SET value = '6' WHERE key = 'schema_version'")
            self.assertEqual(psql(ctl.db, "SELECT count(*) FROM information_schema.columns "
                                          "WHERE table_name = 'records' AND column_name = "
                                          "'ok'"), [["0"]])
            wait_replayed()
            with self.assertRaises(AssertionError) as cm:
                on_standby(ctl, "old")
            self.assertIn("has schema version 6 and this program needs %d; it is a read-only "
                          "standby, which follows its primary: upgrade the primary first "
                          "(breachctl init --db PRIMARY_URI --secret FILE)" % PG_SCHEMA_VERSION,
                          str(cm.exception))
            self.assertNotIn("schema migration 7 failed", str(cm.exception))
            # breachctl on the primary upgrades the store; the standby follows
            p = subprocess.run([binary("breachctl"), "stats",
                                *ctl.store_args()], capture_output=True, timeout=60)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(psql(ctl.db, "SELECT value FROM meta WHERE key = "
                                          "'schema_version'"), [[str(PG_SCHEMA_VERSION)]])
            # migration 12 seeded the change log with what the store held
            self.assertEqual(psql(ctl.db, "SELECT sum(n) FROM changes WHERE kind = 4"),
                             [[str(len(owners))]])
            # migration 8 gave each record the owner key the program gives it
            self.assertEqual(psql(ctl.db, "SELECT id, ok FROM records ORDER BY id"), owners)
            self.assertEqual(len(owners), 4 + len(IDENTITIES))
            wait_replayed()
            srv = on_standby(ctl, "new")
            self.assertEqual(srv.request("/v7/breaches", key=key)[0], 200)
            st, body = srv.get("/v7/breach-search?type=email&account=alice%40example.com",
                               key=key)
            self.assertEqual((st, body["records_found"]), (200, 3))
        finally:
            if srv is not None:
                self.assertEqual(srv.stop(), 0)
            ctl.cleanup()


class StandbyQuotas(TwoInstances):
    """Issue 29, finding 8: B on the standby without --shared-limits cannot count a request in
    the store, so it must not serve a key with a monthly quota (it served 15 of a 10/month
    key's requests); a key without a quota it serves as before, and A enforces the quota."""

    KEY_ARGS = ("--quota", "10/month")

    def test_a_standby_refuses_a_quota_key_it_cannot_count(self):
        free = self.ctl.key("free")
        wait_replayed()
        # B loads keys once a second: the quota-free key reaches it within KEY_DELAY (asked
        # twice a second, far below the failed-key throttle)
        ok, _ = poll(lambda: self.b.request("/v7/breaches", key=free)[0] == 200, KEY_DELAY,
                     interval=0.5)
        self.assertTrue(ok, "B did not load the new key")
        for _ in range(15):
            st, hdrs, body = self.b.request("/v7/breaches", key=self.key)
            self.assertEqual((st, json.loads(body)), (503, {
                "error": "quota_unavailable",
                "message": "this instance cannot count requests against this key's monthly "
                           "quota: it serves a read-only replica; send the request to an "
                           "instance on the primary"}))
            self.assertEqual(hdrs["retry-after"], "60")
        st, hdrs, body = self.b.request("/api/v3/breaches", key=self.key)
        self.assertEqual((st, json.loads(body)["error"]), (503, "quota_unavailable"))
        st, u = self.b.get("/v7/usage", key=self.key)  # usage is read, not counted
        self.assertEqual((st, u["requests_this_month"], u["monthly_quota"]), (200, 0, 10))
        statuses = [self.a.request("/v7/breaches", key=self.key)[0] for _ in range(11)]
        self.assertEqual(statuses, [200] * 10 + [403])
        for _ in range(3):
            self.assertEqual(self.b.request("/v7/breaches", key=free)[0], 200)
        self.assertIn("usage counters: the store at %s takes no writes" %
                      standby_uri(self.ctl.dbname), self.b.log())


class SharedLimits(TwoInstances):
    """--shared-limits: one key's hourly budget holds across both instances."""

    CLIENTS = 20
    EACH = 6  # requests per client, alternately to A and B: 120 in all

    KEY_ARGS = ("--rate", "40/h")

    @staticmethod
    def SERVER_ARGS(ctl):
        return ("--shared-limits", ctl.db)

    def test_a_standby_cannot_keep_them(self):
        with self.assertRaises(AssertionError) as cm:
            on_primary(self.ctl, "sby", "--shared-limits", standby_uri(self.ctl.dbname))
        self.assertIn("--shared-limits: the store at %s did not take a write; name the "
                      "primary, not a standby" % standby_uri(self.ctl.dbname),
                      str(cm.exception))

    def test_20_clients_on_2_instances_get_40_or_41_of_a_40_per_hour_key(self):
        results = []
        lock = threading.Lock()
        start = threading.Barrier(self.CLIENTS)

        def client(i):
            servers = (self.a, self.b) if i % 2 == 0 else (self.b, self.a)
            start.wait()
            for n in range(self.EACH):
                st, hdrs, body = servers[n % 2].request("/v7/breaches", key=self.key)
                with lock:
                    results.append((st, body))

        threads = [threading.Thread(target=client, args=(i,)) for i in range(self.CLIENTS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

        self.assertEqual(len(results), self.CLIENTS * self.EACH)
        ok = sum(1 for st, _ in results if st == 200)
        refused = [(st, json.loads(body)) for st, body in results if st != 200]
        self.assertTrue(40 <= ok <= 41, "%d requests succeeded, want 40 or 41" % ok)
        self.assertEqual({st for st, _ in refused}, {429})
        self.assertEqual({body["error"] for _, body in refused}, {"rate_limited"})


if __name__ == "__main__":
    unittest.main()
