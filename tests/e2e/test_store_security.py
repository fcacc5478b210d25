"""What an attacker with the store's directory, or a say over the operator's paths, must not
get: erased people in any file of the store, files readable by other users, a backup written
through a planted symbolic link."""
import glob
import json
import os
import socket
import sqlite3
import stat
import subprocess
import threading
import time
import unittest
import urllib.parse

from harness import STORE, Ctl, Server, binary, fixture, sqlite_only

BETA = "22222222-2222-4222-8222-222222222222"
GONE_BREACH = "66666666-6666-4666-8666-666666666666"

# One person erased by address (in two breaches), one breach erased whole, and one person
# who stays. Every value is unique, so finding its bytes anywhere means a copy survived.
ERASED_PERSON = {"email": "Quintessa.Vandermolen@erased-person.example",
                 "user_name": "zq_glimmer_7731", "first_name": "Quintessa",
                 "last_name": "Vandermolen", "other_attributes": {"nickname": "glimmerwolf42"}}
ERASED_BREACH_ROWS = [
    {"breach_uuid": GONE_BREACH, "email": "ottoline@gone-breach.example",
     "user_name": "yx_bracken_5520", "first_name": "Ottoline", "last_name": "Brackenridge",
     "other_attributes": {"pet": "snorkelbadger"}},
    {"breach_uuid": GONE_BREACH, "user_name": "yx_second_8812",
     "other_attributes": {"pet": "marmalade-ferret"}},
]
KEPT = {"breach_uuid": BETA, "email": "keeper@kept.example", "user_name": "kept_user_1234",
        "first_name": "Keeper", "last_name": "Stays"}

PERSON_NEEDLES = [b"quintessa.vandermolen@erased-person.example",
                  b"Quintessa.Vandermolen@erased-person.example", b"erased-person.example",
                  b"zq_glimmer_7731", b"Quintessa", b"Vandermolen", b"glimmerwolf42"]
BREACH_NEEDLES = [b"ottoline@gone-breach.example", b"gone-breach.example", b"yx_bracken_5520",
                  b"Ottoline", b"Brackenridge", b"snorkelbadger", b"yx_second_8812",
                  b"marmalade-ferret", b"Vanishing Leak", b"breach-description-9911"]


def store_files(ctl):
    """Every file that belongs to the store: the database, its -wal, -shm, journal, secret."""
    files = sorted(glob.glob(ctl.db + "*"))
    assert ctl.db in files
    return files


@sqlite_only
class EraseLeavesNothing(unittest.TestCase):
    """breachctl erase with breachd running and holding read views: afterwards no byte of
    the erased values is left in any file of the store (the main file, the write-ahead log,
    its index)."""

    def setUp(self):
        self.ctl = Ctl().init()
        self.ctl.import_("breaches", fixture("breaches.jsonl"))
        gone = {"uuid": GONE_BREACH, "source_name": "Vanishing Leak", "date_leaked": "2021-02-03",
                "description": "unique breach-description-9911"}
        self.ctl.import_("breaches", self.ctl.write("b.jsonl", json.dumps(gone) + "\n"))
        rows = [dict(ERASED_PERSON, breach_uuid=BETA),
                dict(ERASED_PERSON, breach_uuid="11111111-1111-4111-8111-111111111111"),
                KEPT] + ERASED_BREACH_ROWS
        self.key = self.ctl.key("erase", "--plan", "enterprise")
        self.srv = Server(self.ctl)
        # imported while the server runs, so the rows sit in the write-ahead log
        self.ctl.import_("records", self.ctl.write("r.jsonl", "\n".join(json.dumps(r) for r in rows)))
        for name in ("b.jsonl", "r.jsonl"):
            os.unlink(os.path.join(self.ctl.dir, name))

    def tearDown(self):
        self.assertEqual(self.srv.stop(), 0)
        self.ctl.cleanup()

    def found(self, type_, account):
        st, body = self.srv.get("/v7/breach-search?type=%s&account=%s" % (
            type_, urllib.parse.quote(account)), key=self.key)
        return body["records_found"] if st == 200 else 0

    def assertNowhere(self, needles):
        files = store_files(self.ctl)
        self.assertIn(self.ctl.db + "-wal", files)  # the server keeps the log open
        for path in files:
            with open(path, "rb") as f:
                data = f.read()
            for needle in needles:
                self.assertFalse(needle in data, "%r survives in %s" % (needle, path))

    def test_erase_email_leaves_no_copy_in_any_file_of_the_store(self):
        self.assertEqual(self.found("email", ERASED_PERSON["email"]), 2)
        self.assertEqual(self.found("username", "zq_glimmer_7731"), 2)
        with open(self.ctl.db + "-wal", "rb") as f:
            self.assertTrue(b"glimmerwolf42" in f.read())  # the log held the rows
        p = self.ctl.run("erase", "--email", ERASED_PERSON["email"], check=0)
        self.assertIn("erased 2 records of quintessa.vandermolen@erased-person.example",
                      p.stderr.decode())
        self.assertNowhere(PERSON_NEEDLES)
        self.assertEqual(self.found("username", "zq_glimmer_7731"), 0)
        self.assertEqual(self.found("username", "kept_user_1234"), 1)
        # the log is not empty again for long (the server writes its keys' usage counters
        # into it), but what it holds now is none of the erased person
        self.assertNowhere(PERSON_NEEDLES)

    def test_erase_breach_leaves_no_copy_in_any_file_of_the_store(self):
        self.assertEqual(self.found("username", "yx_bracken_5520"), 1)
        self.assertEqual(self.srv.get("/v7/breaches/" + GONE_BREACH, key=self.key)[0], 200)
        p = self.ctl.run("erase", "--breach", GONE_BREACH, check=0)
        self.assertIn("erased breach %s and its 2 records" % GONE_BREACH, p.stderr.decode())
        self.assertNowhere(BREACH_NEEDLES)
        self.assertEqual(self.srv.get("/v7/breaches/" + GONE_BREACH, key=self.key)[0], 404)
        self.assertEqual(self.found("username", "kept_user_1234"), 1)

    def test_erase_finishes_while_the_server_keeps_answering_searches(self):
        stop = threading.Event()
        answered = []

        def client():
            while not stop.is_set():
                answered.append(self.found("username", "kept_user_1234"))

        threads = [threading.Thread(target=client) for _ in range(4)]
        for t in threads:
            t.start()
        try:
            time.sleep(0.3)
            start = time.time()
            self.ctl.run("erase", "--email", ERASED_PERSON["email"], check=0)
            self.ctl.run("erase", "--breach", GONE_BREACH, check=0)
            self.assertLess(time.time() - start, 20)
        finally:
            stop.set()
            for t in threads:
                t.join()
        self.assertGreater(len(answered), 10)
        self.assertEqual(set(answered), {1})
        self.assertNowhere(PERSON_NEEDLES + BREACH_NEEDLES)

    def test_erase_gives_up_with_status_2_while_a_reader_holds_the_log_then_finishes(self):
        reader = sqlite3.connect(self.ctl.db, isolation_level=None)
        try:
            reader.execute("BEGIN")
            self.assertEqual(reader.execute("SELECT count(*) FROM records").fetchone()[0], 5)
            start = time.time()
            p = self.ctl.run("erase", "--email", ERASED_PERSON["email"], "--wait", "1", check=2)
            self.assertLess(time.time() - start, 10)
            err = p.stderr.decode()
            self.assertIn("erased 2 records of quintessa.vandermolen@erased-person.example", err)
            self.assertIn("copies of the erased rows remain in the write-ahead log", err)
        finally:
            reader.close()
        self.ctl.run("erase", "--email", ERASED_PERSON["email"], check=0)  # run again: done
        self.assertNowhere(PERSON_NEEDLES)


@sqlite_only
class FileModes(unittest.TestCase):
    """Every file of the store and every backup is 0600 whatever the umask."""

    def setUp(self):
        self.old_umask = os.umask(0o022)
        self.ctl = Ctl()

    def tearDown(self):
        os.umask(self.old_umask)
        self.ctl.cleanup()

    def ctl_run(self, *args, check=0):
        p = subprocess.run([binary("breachctl"), *args, "--db", self.ctl.db], capture_output=True,
                           timeout=120, preexec_fn=lambda: os.umask(0o022))
        self.assertEqual(p.returncode, check, p.stderr.decode(errors="replace"))
        return p

    def mode(self, path):
        return stat.S_IMODE(os.stat(path).st_mode)

    def test_store_log_index_and_backup_are_0600_under_umask_022(self):
        self.ctl_run("init")
        self.assertEqual(self.mode(self.ctl.db), 0o600)
        self.ctl_run("import", "breaches", fixture("breaches.jsonl"))
        key = self.ctl_run("keys", "create", "--name", "modes").stdout.decode().strip()
        srv = Server(self.ctl)  # holds the log and its index open
        try:
            self.assertEqual(srv.request("/v7/breaches", key=key)[0], 200)
            rec = self.ctl.write("r.jsonl", json.dumps({"breach_uuid": BETA, "email": "m@example.com"}))
            self.ctl_run("import", "records", rec)
            for suffix in ("", "-wal", "-shm", ".secret"):
                self.assertEqual(self.mode(self.ctl.db + suffix), 0o600, suffix)
            dest = os.path.join(self.ctl.dir, "copy.db")
            self.ctl_run("backup", "--to", dest)
            self.assertEqual(self.mode(dest), 0o600)
        finally:
            self.assertEqual(srv.stop(), 0)

    def test_a_store_readable_by_others_is_tightened_when_opened_for_writing(self):
        self.ctl_run("init")
        keep = sqlite3.connect(self.ctl.db)  # keeps -wal and -shm in place between commands
        try:
            keep.execute("SELECT count(*) FROM meta").fetchone()
            for suffix in ("", "-wal", "-shm"):
                os.chmod(self.ctl.db + suffix, 0o644)
            self.ctl_run("stats")
            for suffix in ("", "-wal", "-shm"):
                self.assertEqual(self.mode(self.ctl.db + suffix), 0o600, suffix)
        finally:
            keep.close()


@sqlite_only
class BackupTarget(unittest.TestCase):
    """backup --to creates its file itself, exclusively, never through a link."""

    def setUp(self):
        self.ctl = Ctl().init()
        self.ctl.import_("breaches", fixture("breaches.jsonl"))

    def tearDown(self):
        self.ctl.cleanup()

    def test_a_dangling_symlink_is_refused_and_its_target_not_created(self):
        target = os.path.join(self.ctl.dir, "elsewhere.db")
        link = os.path.join(self.ctl.dir, "backup.db")
        os.symlink(target, link)
        p = self.ctl.run("backup", "--to", link, check=2)
        self.assertIn("is a symbolic link", p.stderr.decode())
        self.assertFalse(os.path.lexists(target))
        self.assertTrue(os.path.islink(link))

    def test_an_existing_file_is_refused_and_left_untouched(self):
        dest = self.ctl.write("taken.db", b"not yours")
        p = self.ctl.run("backup", "--to", dest, check=2)
        self.assertIn("exists", p.stderr.decode())
        with open(dest, "rb") as f:
            self.assertEqual(f.read(), b"not yours")

    def test_a_symlink_to_an_existing_file_is_refused_and_the_file_untouched(self):
        target = self.ctl.write("victim.db", b"precious")
        link = os.path.join(self.ctl.dir, "b2.db")
        os.symlink(target, link)
        self.ctl.run("backup", "--to", link, check=2)
        with open(target, "rb") as f:
            self.assertEqual(f.read(), b"precious")

    def test_a_new_file_gets_a_working_copy_of_mode_0600(self):
        dest = os.path.join(self.ctl.dir, "copy.db")
        self.ctl.run("backup", "--to", dest, check=0)
        self.assertEqual(glob.glob(dest + "*"), [dest])  # no journal or log made by name
        self.assertEqual(stat.S_IMODE(os.lstat(dest).st_mode), 0o600)
        db = sqlite3.connect("file:%s?mode=ro" % dest, uri=True)
        try:
            self.assertEqual(db.execute("PRAGMA integrity_check").fetchone()[0], "ok")
            self.assertEqual(db.execute("SELECT count(*) FROM breaches").fetchone()[0], 4)
        finally:
            db.close()


class StorePasswordOutOfSight(unittest.TestCase):
    """A store's password never shows in /proc/PID/cmdline (what ps shows every local user)
    nor in a message; the URI can come from a file (--db-file, --shared-limits-file) or the
    environment (BREACHD_DB, BREACHD_SHARED_LIMITS) instead of the command line."""

    @classmethod
    def setUpClass(cls):
        cls.ctl = Ctl().init()
        cls.key = cls.ctl.key("uri", "--plan", "enterprise")

    @classmethod
    def tearDownClass(cls):
        cls.ctl.cleanup()

    def cmdline_while_connecting(self, program, *args, env=None):
        """Starts program with args ('{port}' stands for a listener that accepts and never
        answers), waits until it connects there (its options are parsed by then), and
        returns its /proc/PID/cmdline."""
        silent = socket.socket()
        silent.bind(("127.0.0.1", 0))
        silent.listen(4)
        silent.settimeout(15)
        port = silent.getsockname()[1]
        argv = [binary(program)] + [a.replace("{port}", str(port)) for a in args]
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                env=env)
        try:
            conn, _ = silent.accept()
            with open("/proc/%d/cmdline" % proc.pid, "rb") as f:
                cmdline = f.read()
            conn.close()
            return cmdline
        finally:
            proc.kill()
            proc.communicate()
            silent.close()

    def test_breachd_db_password_is_overwritten_in_cmdline(self):
        line = self.cmdline_while_connecting(
            "breachd", "--db", "postgresql://u:pw-db-7731@127.0.0.1:{port}/x",
            "--listen", "127.0.0.1:0")
        self.assertNotIn(b"pw-db-7731", line)
        self.assertIn(b"\x00--db\x00postgresql://u@127.0.0.1:", line)
        self.assertIn(b"\x00--listen\x00127.0.0.1:0\x00", line)

    def test_breachd_shared_limits_password_is_overwritten_in_cmdline(self):
        line = self.cmdline_while_connecting(
            "breachd", *self.ctl.store_args(), "--listen", "127.0.0.1:0", "--shared-limits",
            "postgresql://u@127.0.0.1:{port}/x?sslmode=disable&password=pw-limits-4410")
        self.assertNotIn(b"pw-limits-4410", line)
        self.assertIn(b"\x00--shared-limits\x00postgresql://u@127.0.0.1:", line)

    def test_a_keyword_string_password_is_overwritten_in_cmdline(self):
        line = self.cmdline_while_connecting(
            "breachctl", "stats", "--db=host=127.0.0.1 port={port} password=pw-kw-5521 "
            "dbname=x", "--secret", "/nonexistent")
        self.assertNotIn(b"pw-kw-5521", line)
        self.assertIn(b"\x00--db=host=127.0.0.1 port=", line)
        self.assertIn(b" dbname=x", line)

    def test_breachctl_db_password_is_overwritten_in_cmdline(self):
        line = self.cmdline_while_connecting(
            "breachctl", "keys", "list", "--db", "postgres://u:pw-ctl-8842@127.0.0.1:{port}/x",
            "--secret", "/nonexistent")
        self.assertNotIn(b"pw-ctl-8842", line)
        self.assertIn(b"\x00--db\x00postgres://u@127.0.0.1:", line)

    @unittest.skipIf(STORE != "pg", "a PostgreSQL store")
    def test_a_server_started_with_a_password_serves_and_hides_it(self):
        uri = self.ctl.db + "&password=pw-real-3391"
        srv = Server(self.ctl, "--db", uri)  # the later --db wins
        try:
            with open("/proc/%d/cmdline" % srv.proc.pid, "rb") as f:
                line = f.read()
            self.assertNotIn(b"pw-real-3391", line)
            self.assertEqual(srv.request("/v7/breaches", key=self.key)[0], 200)
        finally:
            self.assertEqual(srv.stop(), 0)
        self.assertNotIn("pw-real-3391", srv.log())

    def uri_file(self, name, text, mode=0o600):
        path = self.ctl.write(name, text)
        os.chmod(path, mode)
        return path

    def start_without_db(self, *args, env=None):
        """A server whose store comes from args or env instead of --db."""
        secret = ["--secret", self.ctl.secret] if self.ctl.secret else []
        saved = self.ctl.store_args
        self.ctl.store_args = lambda: [*args, *secret]
        old = dict(os.environ)
        os.environ.update(env or {})
        try:
            return Server(self.ctl)
        finally:
            os.environ.clear()
            os.environ.update(old)
            self.ctl.store_args = saved

    def serves(self, srv):
        try:
            self.assertEqual(srv.request("/v7/breaches", key=self.key)[0], 200)
        finally:
            self.assertEqual(srv.stop(), 0)

    def test_db_file_and_environment_name_the_store(self):
        path = self.uri_file("db.uri", self.ctl.db + "\n")
        self.serves(self.start_without_db("--db-file", path))
        self.serves(self.start_without_db(env={"BREACHD_DB": self.ctl.db}))
        secret = ["--secret", self.ctl.secret] if self.ctl.secret else []
        p = subprocess.run([binary("breachctl"), "keys", "list", "--db-file", path, *secret],
                           capture_output=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn(b"uri", p.stdout)
        p = subprocess.run([binary("breachctl"), "stats", *secret], capture_output=True,
                           timeout=60, env=dict(os.environ, BREACHD_DB=self.ctl.db))
        self.assertEqual(p.returncode, 0, p.stderr)

    def test_shared_limits_file_and_environment_name_the_store(self):
        away = "postgresql://u:pw-away-1184@127.0.0.1:1/x"
        path = self.uri_file("limits.uri", away + "\n")
        for extra, env in ((["--shared-limits-file", path], None),
                           ([], dict(os.environ, BREACHD_SHARED_LIMITS=away))):
            err = self.refused("breachd", *self.ctl.store_args(), "--listen", "127.0.0.1:0",
                               *extra, env=env)
            self.assertIn("cannot connect to postgresql://u@127.0.0.1:1/x: ", err)
            self.assertNotIn("pw-away", err)
        if STORE != "pg":
            return  # shared limits live in a PostgreSQL store
        self.serves(Server(self.ctl, "--shared-limits-file", self.uri_file("ok.uri", self.ctl.db)))
        os.environ["BREACHD_SHARED_LIMITS"] = self.ctl.db
        try:
            srv = Server(self.ctl)
        finally:
            os.environ.pop("BREACHD_SHARED_LIMITS")
        self.serves(srv)

    def refused(self, program, *args, env=None):
        p = subprocess.run([binary(program), *args], capture_output=True, timeout=60, env=env)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertEqual(p.stdout, b"")
        return p.stderr.decode()

    def test_uri_file_refusals_say_why(self):
        loose = self.uri_file("loose.uri", self.ctl.db, 0o644)
        empty = self.uri_file("empty.uri", "\n")
        good = self.uri_file("good.uri", self.ctl.db)
        missing = os.path.join(self.ctl.dir, "missing.uri")
        for program, cmd in (("breachd", []), ("breachctl", ["stats"])):
            err = self.refused(program, *cmd, "--db-file", loose)
            self.assertIn("--db-file: %s is open to other users (chmod 600 it)" % loose, err)
            err = self.refused(program, *cmd, "--db-file", empty)
            self.assertIn("--db-file: %s holds no store URI" % empty, err)
            err = self.refused(program, *cmd, "--db-file", missing)
            self.assertIn("--db-file: cannot read %s: No such file or directory" % missing, err)
            err = self.refused(program, *cmd, "--db-file", good, "--db", self.ctl.db)
            self.assertIn("give --db or --db-file, not both", err)

    def test_a_keyword_string_is_a_postgres_store_named_without_its_password(self):
        kw = "host=127.0.0.1 port=1 password=pw-kw-6123 dbname=x connect_timeout=5"
        for program, cmd in (("breachd", ["--listen", "127.0.0.1:0"]), ("breachctl", ["stats"])):
            err = self.refused(program, *cmd, "--db", kw)
            self.assertIn("cannot connect to host=127.0.0.1 port=1 dbname=x connect_timeout=5: ",
                          err)
            self.assertIn("refused", err)  # libpq's reason
            self.assertNotIn("pw-kw-6123", err)
        err = self.refused("breachctl", "stats", "--db",
                           "host=127.0.0.1 port=1 password='pw-kw 7734")  # unterminated
        self.assertIn("cannot connect to host=127.0.0.1 port=1 ...: ", err)
        self.assertNotIn("pw-kw", err)
        self.assertNotIn("7734", err)


if __name__ == "__main__":
    unittest.main()
