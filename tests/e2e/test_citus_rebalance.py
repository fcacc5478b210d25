"""A Citus cluster grown while it serves (issue 37): a third worker added and the shards
rebalanced onto it (citus_rebalance_start) while clients search by email as the
benchmark's scenario 1 does. No reply may be an error or differ from the answer of a
single-node store loaded with the same files (a plain database on the coordinator's server,
the same secret), and no row may be lost: the same counts after the move as before it."""
import json
import os
import subprocess
import time
import unittest
import urllib.parse

import shutil
import tempfile

from harness import (CITUS_DIR, CITUS_SCRIPT, PG_URI, Ctl, Server, binary, fixture,
                     pg_database_uri, psql, under_load)

EMAILS = 200


def records():
    return "".join(json.dumps({"breach_uuid": "11111111-1111-4111-8111-111111111111",
                               "email": "user%d@example.com" % i, "password": "pw%d" % i,
                               "user_name": "user%d" % i}) + "\n" for i in range(EMAILS))


class PlainStore:
    """A single-node store beside the cluster's: a database without the citus extension on
    the coordinator's server, made with the Citus store's secret (so its keyed hashes are
    the same), for Server() as a Ctl would be."""

    def __init__(self, secret):
        self.dir = tempfile.mkdtemp(prefix="breachd-e2e-plain-")
        self.dbname = "plain_" + os.urandom(6).hex()
        psql(PG_URI, "CREATE DATABASE %s" % self.dbname)
        self.db = pg_database_uri(self.dbname)
        self.secret = secret

    def store_args(self):
        return ["--db", self.db, "--secret", self.secret]

    def run(self, *args):
        p = subprocess.run([binary("breachctl"), *args, *self.store_args()],
                           capture_output=True, timeout=120)
        assert p.returncode == 0, p.stderr
        return p

    def cleanup(self):
        shutil.rmtree(self.dir, ignore_errors=True)
        psql(PG_URI, "DROP DATABASE IF EXISTS %s WITH (FORCE)" % self.dbname)


@unittest.skipIf(not CITUS_DIR, "a Citus cluster (make test-citus)")
class Rebalance(unittest.TestCase):
    def test_rebalancing_onto_a_new_worker_under_load_loses_nothing(self):
        ctl = Ctl().init()
        try:
            ctl.import_("breaches", fixture("breaches.jsonl"))
            ctl.import_("records", ctl.write("r.jsonl", records()))
            key = ctl.key("load", "--rate", "100000000/h")
            single = self.single_node_answers(ctl)
            counts = {t: ctl.sql("SELECT count(*) FROM %s" % t)[0][0]
                      for t in ("records", "record_domains", "password_ranges")}
            srv = Server(ctl)
            try:
                def search(i):
                    return srv.request("/v7/breach-search?type=email&account=" +
                                       urllib.parse.quote("user%d@example.com" % i), key=key)
                want = {}
                for i in range(EMAILS):
                    st, _, body = search(i)
                    self.assertEqual(st, 200, body)
                    want[i] = json.loads(body)
                    self.assertEqual(single[i], want[i], i)
                wrong, done = [], [0]

                def client(i):
                    st, _, body = search(i % EMAILS)
                    if st != 200 or json.loads(body) != want[i % EMAILS]:
                        wrong.append((i % EMAILS, st, body[:300]))
                    done[0] += 1

                with under_load(4, client, 7):
                    time.sleep(0.5)
                    subprocess.run([CITUS_SCRIPT, "add-worker", CITUS_DIR, "w3", ctl.dbname],
                                   check=True, capture_output=True, timeout=120)
                    ctl.sql("SELECT citus_rebalance_start(shard_transfer_mode := 'block_writes')")
                    ctl.sql("SELECT citus_rebalance_wait()")
                    time.sleep(0.5)
                self.assertEqual([], wrong[:5])
                self.assertGreater(done[0], 100)
                moved = ctl.sql("SELECT count(*) FROM pg_dist_shard_placement "
                                "WHERE nodename = '%s/w3'" % CITUS_DIR)
                self.assertGreater(int(moved[0][0]), 0)
                for i in range(EMAILS):
                    st, _, body = search(i)
                    self.assertEqual((200, want[i]), (st, json.loads(body)), i)
            finally:
                self.assertEqual(0, srv.stop(), srv.log()[-4000:])
            for t, n in counts.items():
                self.assertEqual(n, ctl.sql("SELECT count(*) FROM %s" % t)[0][0], t)
        finally:
            ctl.cleanup()

    def single_node_answers(self, ctl):
        """Each email's search as a single-node store with the same files answers it."""
        plain = PlainStore(ctl.secret)
        try:
            plain.run("init")
            plain.run("import", "breaches", fixture("breaches.jsonl"))
            plain.run("import", "records", os.path.join(ctl.dir, "r.jsonl"))
            key = plain.run("keys", "create", "--name", "plain").stdout.decode().strip()
            srv = Server(plain)
            try:
                out = {}
                for i in range(EMAILS):
                    st, _, body = srv.request("/v7/breach-search?type=email&account=" +
                                              urllib.parse.quote("user%d@example.com" % i),
                                              key=key)
                    self.assertEqual(st, 200, body)
                    out[i] = json.loads(body)
                return out
            finally:
                self.assertEqual(0, srv.stop(), srv.log()[-4000:])
        finally:
            plain.cleanup()
