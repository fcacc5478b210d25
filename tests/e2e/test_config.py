"""The configuration file (breachd.conf(5)), BREACHD_<OPTION> variables and flags: precedence
flag > environment > file, repeatable settings, each refusal with its file and line, a
password in a file every user can read, and breachctl taking its store and secret from the
file."""
import http.client
import os
import re
import signal
import subprocess
import time
import unittest

from harness import STORE, Ctl, binary, fixture

DASH = "https://dash.example.com"


def clean_env(**extra):
    """The environment without any BREACHD_ setting but the build's, plus extra."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("BREACHD_") or k in ("BREACHD_BUILD", "BREACHD_PG_URI")}
    env.update(extra)
    return env


class Config(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.ctl = Ctl().init()
        cls.ctl.import_("breaches", fixture("breaches.jsonl"))
        cls.key = cls.ctl.key("config")

    @classmethod
    def tearDownClass(cls):
        cls.ctl.cleanup()

    def conf(self, text, mode=0o600, name="breachd.conf"):
        path = os.path.join(self.ctl.dir, name)
        with open(path, "w") as f:
            f.write(text)
        os.chmod(path, mode)
        return path

    def store_lines(self):
        return "db = %s\nsecret = %s\n" % (self.ctl.db, self.ctl.secret_file)

    def start(self, *args, env=None):
        """Starts breachd with args; returns (proc, port, log) once it serves."""
        log = os.path.join(self.ctl.dir, "breachd-%d.log" % time.monotonic_ns())
        out = open(log, "wb")
        proc = subprocess.Popen([binary("breachd"), *args], stdout=subprocess.DEVNULL,
                                stderr=out, env=env or clean_env())
        out.close()
        deadline = time.time() + 15
        while time.time() < deadline:
            with open(log, "rb") as f:
                text = f.read().decode(errors="replace")
            m = re.search(r"-> port (\d+)", text)
            if m:
                self.addCleanup(self.stop, proc)
                return proc, int(m.group(1)), text
            if proc.poll() is not None:
                self.fail("breachd exited %d: %s" % (proc.returncode, text))
            time.sleep(0.02)
        proc.kill()
        self.fail("breachd did not start")

    def stop(self, proc):
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=15)
        self.assertEqual(proc.returncode, 0)

    def refused(self, *args, env=None):
        p = subprocess.run([binary("breachd"), *args], capture_output=True, timeout=30,
                           env=env or clean_env())
        self.assertEqual(p.returncode, 2, p.stderr)
        return p.stderr.decode()

    def base_path(self, log):
        return re.search(r"base path (\S+),", log).group(1)

    def test_precedence_flag_over_environment_over_file(self):
        path = self.conf(self.store_lines() + "listen = 127.0.0.1:0\nbase-path = /file\n")
        _, _, log = self.start("--config", path)
        self.assertEqual(self.base_path(log), "/file")
        _, _, log = self.start("--config", path, env=clean_env(BREACHD_BASE_PATH="/env"))
        self.assertEqual(self.base_path(log), "/env")
        _, _, log = self.start("--config", path, "--base-path", "/flag",
                               env=clean_env(BREACHD_BASE_PATH="/env"))
        self.assertEqual(self.base_path(log), "/flag")
        # BREACHD_CONFIG names the file as --config does
        _, _, log = self.start(env=clean_env(BREACHD_CONFIG=path))
        self.assertEqual(self.base_path(log), "/file")

    def preflight(self, port, origin):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        conn.request("OPTIONS", "/v7/breach-search", headers={
            "Origin": origin, "Access-Control-Request-Method": "GET"})
        resp = conn.getresponse()
        resp.read()
        conn.close()
        return resp.getheader("access-control-allow-origin")

    def test_repeatable_setting_replaced_whole_by_a_higher_level(self):
        path = self.conf(self.store_lines() + "listen = 127.0.0.1:0\n"
                         "cors-origin = %s\ncors-origin = https://b.example.com\n" % DASH)
        _, port, _ = self.start("--config", path)
        self.assertEqual(self.preflight(port, DASH), DASH)
        self.assertEqual(self.preflight(port, "https://b.example.com"), "https://b.example.com")
        env = clean_env(BREACHD_CORS_ORIGIN="https://c.example.com https://d.example.com")
        _, port, _ = self.start("--config", path, env=env)
        self.assertIsNone(self.preflight(port, DASH))
        self.assertEqual(self.preflight(port, "https://d.example.com"), "https://d.example.com")
        _, port, _ = self.start("--config", path, "--cors-origin", DASH, env=env)
        self.assertEqual(self.preflight(port, DASH), DASH)
        self.assertIsNone(self.preflight(port, "https://c.example.com"))

    def test_db_on_the_command_line_drops_the_files_db_file(self):
        uri_file = self.conf(self.ctl.db + "\n", name="db.uri")
        path = self.conf("db-file = %s\nsecret = %s\nlisten = 127.0.0.1:0\n" % (
            uri_file, self.ctl.secret_file))
        # --db given: the file's db-file is not also taken ("give --db or --db-file"); nor
        # is the file's secret, which goes with the file's store only (so a PostgreSQL
        # store, which has no secret beside it, names its own)
        self.start("--config", path, *self.ctl.store_args())
        self.start("--config", path)

    @unittest.skipIf(STORE == "pg", "a SQLite store's default secret beside it")
    def test_files_secret_goes_with_the_files_store_only(self):
        path = self.conf(self.store_lines() + "listen = 127.0.0.1:0\n")
        other = Ctl().init()
        try:
            # the other store's own secret (beside it), not the file's, which is another's
            self.start("--config", path, "--db", other.db)
            self.start("--config", path, env=clean_env(BREACHD_DB=other.db))
        finally:
            other.cleanup()

    def test_each_refusal_names_its_file_and_line(self):
        cases = [
            ("listen = 127.0.0.1:0\nthreads = many\n", "%s:2: bad or unknown option "
             "'--threads=many' (see breachd --help)"),
            ("\ncolour = blue\n", "%s:2: unknown setting 'colour' (breachd.conf(5) lists them)"),
            ("listen = 127.0.0.1:0\n# again\nlisten = 127.0.0.1:1\n",
             "%s:3: listen is set again (line 1 sets it)"),
            ("db = x\ndb-file = y\n", "%s:2: db-file is set again (line 1 sets it)"),
            ("threads 4\n", "%s:1: not a 'key = value' line"),
            ("threads =\n", "%s:1: no value after '=' (comment the line out to leave a "
             "setting unset)"),
            ("webhook-allow = 10.0.0.0/8\nwebhook-allow = nonsense\n",
             "%s:2: --webhook-allow takes a range like 10.0.0.0/8 or fd00::/8 (at most 32)"),
            ("help = yes\n", "%s:1: unknown setting 'help' (breachd.conf(5) lists them)"),
        ]
        for text, want in cases:
            path = self.conf(text)
            want = want % path
            self.assertEqual(self.refused("--config", path), "breachd: %s\n" % want)

    def test_environment_and_missing_file_refusals(self):
        self.assertEqual(
            self.refused(*self.ctl.store_args(), "--config", "none",
                         env=clean_env(BREACHD_THREADS="0")),
            "breachd: BREACHD_THREADS: bad or unknown option '--threads=0' "
            "(see breachd --help)\n")
        missing = os.path.join(self.ctl.dir, "missing.conf")
        self.assertEqual(self.refused("--config", missing),
                         "breachd: %s: No such file or directory\n" % missing)
        path = self.conf("listen = 127.0.0.1:0\n", mode=0o666)
        self.assertEqual(self.refused("--config", path),
                         "breachd: %s: writable by every user (chmod o-w it)\n" % path)

    def test_password_refused_in_a_file_every_user_reads(self):
        uri = "postgresql://breachd:Sw0rdfish@%2Fnonexistent/breachd"
        path = self.conf("db = %s\n" % uri, mode=0o644)
        err = self.refused("--config", path)
        self.assertEqual(err, "breachd: %s:1: db holds a password and %s is readable by every "
                         "user (chmod o-r it, or move the URI into a db-file)\n" % (path, path))
        os.chmod(path, 0o640)  # its group may read it: the password is not refused for that
        err = self.refused("--config", path)
        self.assertNotIn("readable by every user", err)
        self.assertNotIn("Sw0rdfish", err)
        # without a password, a file every user reads is fine
        path = self.conf(self.store_lines() + "listen = 127.0.0.1:0\n", mode=0o644)
        if "password" not in self.ctl.db and not re.search(r"://[^/@]*:[^/@]*@", self.ctl.db):
            self.start("--config", path)

    def test_breachctl_takes_store_and_secret_from_the_file(self):
        path = self.conf(self.store_lines())
        p = subprocess.run([binary("breachctl"), "stats", "--config", path], capture_output=True,
                           timeout=60, env=clean_env())
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue(p.stdout.decode().startswith(
            "00000000-0000-4000-8000-000000000001") or "total:" in p.stdout.decode(), p.stdout)
        p = subprocess.run([binary("breachctl"), "keys", "create", "--name", "from-conf"],
                           capture_output=True, timeout=60, env=clean_env(BREACHD_CONFIG=path))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(len(p.stdout.decode().splitlines()), 1)
        # the file's secret goes with the file's store only: another store gets its own
        other = Ctl()
        try:
            p = subprocess.run([binary("breachctl"), "init", "--config", path,
                                *other.store_args()], capture_output=True, timeout=60,
                               env=clean_env())
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIn("with secret %s " % other.secret_file, p.stderr.decode())
        finally:
            other.cleanup()
        # a refusal of the file stops breachctl too
        bad = self.conf("colour = blue\n", name="bad.conf")
        p = subprocess.run([binary("breachctl"), "stats", "--config", bad], capture_output=True,
                           timeout=60, env=clean_env())
        self.assertEqual(p.returncode, 2)
        self.assertEqual(p.stderr.decode(), "breachctl: %s:1: unknown setting 'colour' "
                         "(breachd.conf(5) lists them)\n" % bad)

    @unittest.skipIf(STORE == "pg", "a SQLite store's default secret path")
    def test_breachctl_without_store_says_where_to_set_it(self):
        p = subprocess.run([binary("breachctl"), "stats", "--config", "none"],
                           capture_output=True, timeout=60, env=clean_env())
        self.assertEqual(p.returncode, 2)
        self.assertEqual(p.stdout, b"")


if __name__ == "__main__":
    unittest.main()
