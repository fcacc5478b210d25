"""What an attacker with the store's directory, or a say over the operator's paths, must not
get: files readable by other users, a backup written through a planted symbolic link."""
import glob
import json
import os
import sqlite3
import stat
import subprocess
import unittest

from harness import Ctl, Server, binary, fixture

BETA = "22222222-2222-4222-8222-222222222222"


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


if __name__ == "__main__":
    unittest.main()
