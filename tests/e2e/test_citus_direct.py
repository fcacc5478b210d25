"""Direct reads on a Citus cluster (issue 37, docs/SCALING.md "Direct reads"): an email
search is read on the worker that holds the email's shard, from the shard's own table, and
answers exactly what the same search answers through the coordinator; a shard that moved is
never read where it was."""
import json
import os
import subprocess
import time
import unittest
import urllib.parse

from harness import CITUS_DIR, CITUS_SCRIPT, Ctl, Server, fixture, psql, under_load

BREACH = "11111111-1111-4111-8111-111111111111"
EMAILS = 24
APP = "breachd direct reads"


def records(n, per, tag="pw"):
    """per records (different passwords) for each of n emails."""
    return "".join(json.dumps({"breach_uuid": BREACH, "email": "user%d@example.com" % i,
                               "password": "%s%d-%d" % (tag, i, k)}) + "\n"
                   for i in range(n) for k in range(per))


def worker_uri(ctl, node):
    return "postgresql:///%s?host=%s&user=breachd" % (ctl.dbname, os.path.join(CITUS_DIR, node))


def direct_sessions(ctl, node):
    return int(psql(worker_uri(ctl, node), "SELECT count(*) FROM pg_stat_activity WHERE "
                    "datname = current_database() AND application_name = '%s'" % APP)[0][0])


def shard_of(ctl, email):
    """(shard id, node name, node port) of the records of email."""
    row = ctl.sql("SELECT s.shardid, p.nodename, p.nodeport FROM pg_dist_shard s "
                  "JOIN pg_dist_shard_placement p USING (shardid) "
                  "WHERE s.logicalrelid = 'records'::regclass AND s.shardid = "
                  "get_shard_id_for_distribution_column('records', (SELECT ok FROM records "
                  "WHERE email = '%s' LIMIT 1))" % email)[0]
    return int(row[0]), row[1], int(row[2])


def pages(srv, key, email):
    """Every page of one record of email's search, following its tokens (each shown as
    "(a token)")."""
    out, token = [], None
    while True:
        path = ("/v7/breach-search?type=email&number_of_records=1&account=" +
                urllib.parse.quote(email))
        if token:
            path += "&paging_token=" + urllib.parse.quote(token)
        st, _, body = srv.request(path, key=key)
        page = json.loads(body)
        token = page.get("pagination_token") if st == 200 else None
        if token:  # sealed with a fresh nonce each time: compared by its presence
            page["pagination_token"] = "(a token)"
        out.append((st, page))
        if not token:
            return out


def without_direct_reads(ctl):
    """A Server for ctl's store whose sessions have breachd.direct_reads off."""
    saved = ctl.db
    ctl.db = saved + "&options=" + urllib.parse.quote("-c breachd.direct_reads=off")
    try:
        return Server(ctl)
    finally:
        ctl.db = saved


@unittest.skipIf(not CITUS_DIR, "a Citus cluster (make test-citus)")
class DirectReads(unittest.TestCase):
    maxDiff = None
    def setUp(self):
        self.ctl = Ctl().init()
        self.addCleanup(self.ctl.cleanup)
        self.ctl.import_("breaches", fixture("breaches.jsonl"))
        self.ctl.import_("records", self.ctl.write("r.jsonl", records(EMAILS, 3)))
        self.key = self.ctl.key("direct")

    def serve(self, srv):
        self.addCleanup(lambda: self.assertEqual(0, srv.stop(), srv.log()[-4000:]))
        return srv

    # Each test twice: a search alone runs on its request's thread (the default), and every
    # search goes through the lookup dispatcher (--pg-dispatch always), whose batches are
    # read on the workers too (store/pg/batch_direct.c).
    THREAD = ("--threads", "1")
    DISPATCHER = ("--pg-dispatch", "always")

    def test_pages_are_read_on_the_shards_worker_and_equal_the_coordinators(self):
        self.pages_are_read_on_the_shards_worker(self.THREAD)

    def test_pages_the_dispatcher_reads_on_the_shards_worker_equal_the_coordinators(self):
        self.pages_are_read_on_the_shards_worker(self.DISPATCHER)

    def test_a_moved_shard_is_read_where_it_went(self):
        self.moved_shard_is_read_where_it_went(self.THREAD)

    def test_a_moved_shard_is_read_where_it_went_by_the_dispatcher(self):
        self.moved_shard_is_read_where_it_went(self.DISPATCHER)

    def pages_are_read_on_the_shards_worker(self, args):
        off = self.serve(without_direct_reads(self.ctl))
        want = {i: pages(off, self.key, "user%d@example.com" % i) for i in range(EMAILS)}
        self.assertEqual(3, want[0][0][1]["records_found"], want[0])
        self.assertEqual([(200, 1)] * 3, [(st, len(b["data"])) for st, b in want[0]])
        self.assertEqual((0, 0), (direct_sessions(self.ctl, "w1"),
                                  direct_sessions(self.ctl, "w2")))
        srv = self.serve(Server(self.ctl, *args))
        _, node, _ = shard_of(self.ctl, "user0@example.com")
        here, other = os.path.basename(node), {"w1": "w2", "w2": "w1"}[os.path.basename(node)]
        self.assertEqual(want[0], pages(srv, self.key, "user0@example.com"))
        self.assertEqual((1, 0), (direct_sessions(self.ctl, here),
                                  direct_sessions(self.ctl, other)))
        for i in range(EMAILS):
            self.assertEqual(want[i], pages(srv, self.key, "user%d@example.com" % i), i)
        self.assertEqual((1, 1), (direct_sessions(self.ctl, "w1"),
                                  direct_sessions(self.ctl, "w2")))
        st, _, body = srv.request("/v7/breach-search?type=email&account=nobody@example.com",
                                  key=self.key)
        self.assertEqual((404, "not_found"), (st, json.loads(body)["error"]))
        self.assertNotIn("direct reads from worker", srv.log())

    def moved_shard_is_read_where_it_went(self, args):
        srv = self.serve(Server(self.ctl, *args))
        email = "user0@example.com"
        first = pages(srv, self.key, email)
        self.assertEqual(3, first[0][1]["records_found"])
        shard, node, port = shard_of(self.ctl, email)
        target = os.path.join(CITUS_DIR, {"w1": "w2", "w2": "w1"}[os.path.basename(node)])
        self.ctl.sql("SELECT citus_move_shard_placement(%d, '%s', %d, '%s', %d, "
                     "shard_transfer_mode := 'block_writes')" % (shard, node, port, target, port))
        # The placement left behind waits for Citus's deferred cleanup: a read there would
        # miss what lands after the move.
        old = psql(worker_uri(self.ctl, os.path.basename(node)),
                   "SELECT to_regclass('records_%d') IS NOT NULL" % shard)
        self.assertEqual([["t"]], old)
        self.ctl.import_("records", self.ctl.write("more.jsonl", json.dumps(
            {"breach_uuid": BREACH, "email": email, "password": "after the move"}) + "\n"))
        after = pages(srv, self.key, email)
        self.assertEqual(4, after[0][1]["records_found"])
        self.assertEqual([(200, 1)] * 4, [(st, len(b["data"])) for st, b in after])
        deadline = time.time() + 5  # the next read goes to the new worker directly
        while direct_sessions(self.ctl, os.path.basename(target)) == 0 and time.time() < deadline:
            pages(srv, self.key, email)
        # (a thread that read it through the coordinator after the move, knowing no map
        # before it, reads there directly as well)
        self.assertGreaterEqual(direct_sessions(self.ctl, os.path.basename(target)), 1)

    def test_a_worker_restarted_under_load_answers_503_or_the_right_page(self):
        """Clients search every email at once while one worker is stopped and started
        again: each reply is the page a store with direct reads off gives, or for an email
        on the stopped worker a 503 with Retry-After; once it is back, every email is
        answered again by the same process, and no row is lost."""
        self.key = self.ctl.key("load", "--rate", "100000000/h")
        off = self.serve(without_direct_reads(self.ctl))
        emails = ["user%d@example.com" % i for i in range(EMAILS)]
        path = "/v7/breach-search?type=email&account="
        want = {e: json.loads(off.request(path + e, key=self.key)[2]) for e in emails}
        rows = self.ctl.sql("SELECT count(*) FROM records")[0][0]
        srv = self.serve(Server(self.ctl))
        node = os.path.basename(shard_of(self.ctl, emails[0])[1])
        on_node = {e for e in emails if os.path.basename(shard_of(self.ctl, e)[1]) == node}
        wrong, seen = [], {"ok": 0, "503": 0}

        def client(i):
            e = emails[i % EMAILS]
            st, hdrs, body = srv.request(path + e, key=self.key)
            if st == 200 and json.loads(body) == want[e]:
                seen["ok"] += 1
            elif (st == 503 and e in on_node and hdrs.get("retry-after") == "1"
                  and json.loads(body)["error"] == "unavailable"):
                seen["503"] += 1
            else:
                wrong.append((e, st, body[:300]))

        with under_load(6, client, 5):
            time.sleep(0.5)
            cluster("pause", node)
            try:
                time.sleep(2)
            finally:
                cluster("resume", node)
            deadline = time.time() + 15
            while time.time() < deadline and not all(
                    srv.request(path + e, key=self.key)[0] == 200 for e in sorted(on_node)[:3]):
                time.sleep(0.2)
            time.sleep(0.5)
        self.assertEqual([], wrong[:5])
        self.assertGreater(seen["ok"], 100)
        self.assertGreater(seen["503"], 0)  # the stop was seen
        for e in emails:
            st, _, body = srv.request(path + e, key=self.key)
            self.assertEqual((200, want[e]), (st, json.loads(body)), e)
        self.assertEqual(rows, self.ctl.sql("SELECT count(*) FROM records")[0][0])


def cluster(action, node):
    subprocess.run([CITUS_SCRIPT, action, CITUS_DIR, node], check=True, capture_output=True,
                   timeout=60)


if __name__ == "__main__":
    unittest.main()
