"""What only a PostgreSQL store does: the secret beside it, backup by pg_dump, and the
server going away under a running breachd and coming back."""
import json
import os
import subprocess
import time
import unittest

from harness import CITUS_DIR, CITUS_SCRIPT, ROOT, STORE, Ctl, Server, binary, fixture

PG_DIR = os.environ.get("BREACHD_PG_DIR", "")


def cluster(action, node="coord"):
    """Stops (pause) or starts (resume) the server the store is on; on a Citus cluster, the
    node named (the coordinator unless told)."""
    if CITUS_DIR:
        cmd = [CITUS_SCRIPT, action, CITUS_DIR, node]
    else:
        cmd = [os.path.join(ROOT, "scripts", "pg-cluster.sh"), action, PG_DIR]
    subprocess.run(cmd, check=True, capture_output=True, timeout=60)


@unittest.skipIf(STORE != "pg" or not PG_DIR, "PostgreSQL store with a cluster of the tests' own")
class ServerRestarts(unittest.TestCase):
    def test_503_while_postgresql_is_down_then_serving_again_by_itself(self):
        ctl = Ctl().init()
        try:
            ctl.import_("breaches", fixture("breaches.jsonl"))
            key = ctl.key("faults")
            srv = Server(ctl)
            try:
                self.assertEqual(srv.request("/v7/breaches", key=key)[0], 200)
                cluster("pause")
                try:
                    for path in ("/v7/breaches", "/v7/breach-search?type=email&account=a%40b.example",
                                 "/healthz"):
                        st, hdrs, body = srv.request(path, key=key)
                        self.assertEqual(st, 503, (path, body))
                        self.assertEqual(hdrs["retry-after"], "1")
                        self.assertEqual(json.loads(body)["error"], "unavailable")
                finally:
                    cluster("resume")
                deadline = time.time() + 10
                while srv.request("/healthz")[0] != 200 and time.time() < deadline:
                    time.sleep(0.1)
                self.assertEqual(srv.request("/healthz")[0], 200)
                self.assertEqual(srv.request("/v7/breaches", key=key)[0], 200)
            finally:
                status = srv.stop()
                self.assertEqual(status, 0, srv.log()[-4000:])  # one process served throughout
        finally:
            ctl.cleanup()


def spread_records(n):
    """n records of n emails in one fixture breach: owner keys all over the shards."""
    return "".join(json.dumps({"breach_uuid": "11111111-1111-4111-8111-111111111111",
                               "email": "user%d@example.com" % i, "password": "pw%d" % i}) + "\n"
                   for i in range(n))


@unittest.skipIf(not CITUS_DIR, "a Citus cluster (make test-citus)")
class WorkerDown(unittest.TestCase):
    """A worker stopped while breachd serves: a request that needs its shards gets 503 with
    the JSON body and Retry-After, one that needs none is answered, and service comes back
    when the worker does, without restarting breachd."""

    def shard_node(self, ctl, table, value):
        return ctl.sql("SELECT nodename FROM pg_dist_shard_placement p JOIN pg_dist_shard s "
                       "USING (shardid) WHERE s.logicalrelid = '%s'::regclass AND "
                       "get_shard_id_for_distribution_column('%s', %s) = s.shardid"
                       % (table, table, value))[0][0]

    def test_503_for_a_stopped_workers_shards_then_serving_again(self):
        ctl = Ctl().init()
        try:
            ctl.import_("breaches", fixture("breaches.jsonl"))
            ctl.import_("records", ctl.write("r.jsonl", spread_records(40)))
            key = ctl.key("faults")
            emails = [r[0] for r in ctl.sql("SELECT DISTINCT email FROM records "
                                             "WHERE email IS NOT NULL ORDER BY 1")]
            where = {e: self.shard_node(ctl, "records", "(SELECT ok FROM records WHERE "
                                        "email = '%s' LIMIT 1)" % e) for e in emails}
            node = os.path.basename(where[emails[0]])
            down = [e for e in emails if where[e].endswith("/" + node)]
            up = [e for e in emails if not where[e].endswith("/" + node)]
            srv = Server(ctl)
            try:
                def search(e):
                    return srv.request("/v7/breach-search?type=email&account=" + e, key=key)
                want = {e: json.loads(search(e)[2]) for e in emails}
                cluster("pause", node)
                try:
                    st, hdrs, body = search(down[0])
                    self.assertEqual(st, 503, body)
                    self.assertEqual(hdrs["retry-after"], "1")
                    self.assertEqual(json.loads(body)["error"], "unavailable")
                    if up:  # its shard is on the other worker: Citus answers without this one
                        st, _, body = search(up[0])
                        self.assertEqual(st, 200, body)
                        self.assertEqual(want[up[0]], json.loads(body))
                    st, _, body = srv.request("/v7/breaches", key=key)  # a reference table
                    self.assertEqual(st, 200, body)
                finally:
                    cluster("resume", node)
                deadline = time.time() + 15
                while search(down[0])[0] != 200 and time.time() < deadline:
                    time.sleep(0.2)
                for e in emails:
                    st, _, body = search(e)
                    self.assertEqual((st, want[e]), (200, json.loads(body)), e)
            finally:
                status = srv.stop()
                self.assertEqual(status, 0, srv.log()[-4000:])
        finally:
            ctl.cleanup()


@unittest.skipIf(STORE != "pg", "PostgreSQL store")
class Operations(unittest.TestCase):
    def setUp(self):
        self.ctl = Ctl().init()

    def tearDown(self):
        self.ctl.cleanup()

    def run_ctl(self, *args, secret=None):
        return subprocess.run([binary("breachctl"), *args, "--db", self.ctl.db,
                               *(["--secret", secret] if secret else [])],
                              capture_output=True, timeout=60)

    def test_init_again_changes_nothing_and_says_so(self):
        p = self.run_ctl("init", secret=self.ctl.secret)
        self.assertEqual(p.returncode, 2)
        self.assertIn(b"is already a breachd store", p.stderr)
        self.assertEqual(self.run_ctl("stats", secret=self.ctl.secret).returncode, 0)

    def test_the_secret_is_required_and_a_foreign_one_refused(self):
        p = self.run_ctl("stats")
        self.assertEqual(p.returncode, 2)
        self.assertIn(b"--secret PATH is required", p.stderr)
        other = os.path.join(self.ctl.dir, "other.secret")
        with open(other, "w") as f:
            f.write("00" * 32 + "\n")
        os.chmod(other, 0o600)
        p = self.run_ctl("stats", secret=other)
        self.assertEqual(p.returncode, 2)
        self.assertIn(b"does not belong to the store", p.stderr)
        p = subprocess.run([binary("breachd"), "--db", self.ctl.db, "--secret", other,
                            "--listen", "127.0.0.1:0"], capture_output=True, timeout=30)
        self.assertEqual(p.returncode, 2)
        self.assertIn(b"does not belong to the store", p.stderr)
        p = subprocess.run([binary("breachd"), "--db", self.ctl.db, "--listen", "127.0.0.1:0"],
                           capture_output=True, timeout=30)
        self.assertEqual(p.returncode, 2)
        self.assertIn(b"--secret FILE is required", p.stderr)

    def test_backup_points_to_pg_dump_and_writes_nothing(self):
        dest = os.path.join(self.ctl.dir, "copy.db")
        p = self.run_ctl("backup", "--to", dest, secret=self.ctl.secret)
        self.assertEqual(p.returncode, 2)
        self.assertIn(b"pg_dump", p.stderr)
        self.assertFalse(os.path.exists(dest))


if __name__ == "__main__":
    unittest.main()
