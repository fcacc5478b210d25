"""What only a PostgreSQL store does: the secret beside it, backup by pg_dump, and the
server going away under a running breachd and coming back."""
import json
import os
import subprocess
import time
import unittest

from harness import ROOT, STORE, Ctl, Server, binary, fixture

PG_DIR = os.environ.get("BREACHD_PG_DIR", "")


def cluster(action):
    subprocess.run([os.path.join(ROOT, "scripts", "pg-cluster.sh"), action, PG_DIR], check=True,
                   capture_output=True, timeout=60)


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
