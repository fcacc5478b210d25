"""A Citus cluster grown while it serves (issue 37): a third worker added and the shards
rebalanced onto it (citus_rebalance_start) while clients search by email as the
benchmark's scenario 1 does. No reply may be an error or differ from the answer before, and
no row may be lost: the same searches and counts after the move as before it."""
import json
import os
import subprocess
import threading
import time
import unittest
import urllib.parse

from harness import CITUS_DIR, CITUS_SCRIPT, Ctl, Server, fixture

EMAILS = 200


def records():
    return "".join(json.dumps({"breach_uuid": "11111111-1111-4111-8111-111111111111",
                               "email": "user%d@example.com" % i, "password": "pw%d" % i,
                               "user_name": "user%d" % i}) + "\n" for i in range(EMAILS))


@unittest.skipIf(not CITUS_DIR, "a Citus cluster (make test-citus)")
class Rebalance(unittest.TestCase):
    def test_rebalancing_onto_a_new_worker_under_load_loses_nothing(self):
        ctl = Ctl().init()
        try:
            ctl.import_("breaches", fixture("breaches.jsonl"))
            ctl.import_("records", ctl.write("r.jsonl", records()))
            key = ctl.key("load", "--rate", "100000000/h")
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
                stop = threading.Event()
                wrong, done = [], [0]

                def client(start):
                    i = start
                    while not stop.is_set():
                        st, _, body = search(i % EMAILS)
                        if st != 200 or json.loads(body) != want[i % EMAILS]:
                            wrong.append((i % EMAILS, st, body[:300]))
                        done[0] += 1
                        i += 7

                clients = [threading.Thread(target=client, args=(k,)) for k in range(4)]
                for c in clients:
                    c.start()
                try:
                    time.sleep(0.5)
                    subprocess.run([CITUS_SCRIPT, "add-worker", CITUS_DIR, "w3", ctl.dbname],
                                   check=True, capture_output=True, timeout=120)
                    ctl.sql("SELECT citus_rebalance_start(shard_transfer_mode := 'block_writes')")
                    ctl.sql("SELECT citus_rebalance_wait()")
                    time.sleep(0.5)
                finally:
                    stop.set()
                    for c in clients:
                        c.join()
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
