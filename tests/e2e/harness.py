"""Black-box helpers for the end-to-end tests: build a store with the real breachctl, start
the real breachd on a free loopback port, and talk HTTP to it. Standard library only."""
import atexit
import contextlib
import glob
import gzip
import http.client
import json
import os
import re
import shutil
import signal
import sqlite3
import threading
import subprocess
import sys
import tempfile
import time
import unittest

import openapi_check
from openapi_check import DEFAULT_BASE, DEFAULT_HIBP_BASE

BUILD = os.environ.get("BREACHD_BUILD", "build")
# The suites name every setting themselves: a configuration file installed on the machine
# (/etc/breachd/breachd.conf, breachd.conf(5)) is not read unless a test asks for one.
os.environ.setdefault("BREACHD_CONFIG", "none")
# The store every test runs on: "sqlite" (a file per test) or "pg" (a database per test on
# the throwaway cluster whose URI is in BREACHD_PG_URI; scripts/pg-cluster.sh starts it).
STORE = os.environ.get("BREACHD_STORE", "sqlite")
PG_URI = os.environ.get("BREACHD_PG_URI", "")
assert STORE in ("sqlite", "pg"), STORE
assert STORE != "pg" or PG_URI, "BREACHD_STORE=pg needs BREACHD_PG_URI"
# On a Citus cluster (make test-citus): the directory scripts/citus-cluster.sh started it in;
# BREACHD_PG_URI is then the coordinator's, and each test's database is made on every node.
CITUS_DIR = os.environ.get("BREACHD_CITUS_DIR", "")
CITUS_SCRIPT = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "scripts", "citus-cluster.sh")
# For tests of what only the SQLite store has (its files, its log, its migrations by hand).
sqlite_only = unittest.skipIf(STORE != "sqlite", "SQLite store only")


def psql(uri, sql):
    """Runs SQL on a PostgreSQL database; returns the rows as lists of text. On a Citus
    coordinator, psql sends the statements one by one (Citus takes DDL on a distributed
    table only as a command of its own), each in its own transaction."""
    how = ["-f", "-"] if CITUS_DIR else ["-c", sql]
    p = subprocess.run(["psql", uri, "-X", "-q", "-A", "-t", "-F", "\t", "-v",
                        "ON_ERROR_STOP=1", *how], input=sql.encode() if CITUS_DIR else None,
                       capture_output=True, timeout=60)
    if p.returncode != 0:
        raise AssertionError("psql: %s" % p.stderr.decode(errors="replace"))
    return [line.split("\t") for line in p.stdout.decode().splitlines()]


def pg_database_uri(name):
    """BREACHD_PG_URI with its database replaced by name."""
    m = re.match(r"(postgres(?:ql)?://[^/?]*)(/[^?]*)?(\?.*)?$", PG_URI)
    assert m, PG_URI
    return m.group(1) + "/" + name + (m.group(3) or "")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")


def binary(name):
    return os.path.join(ROOT, BUILD, name)


@contextlib.contextmanager
def under_load(clients, step, stride):
    """For the block's duration, clients threads each calling step(i) in a loop, client k
    with i = k, k + stride, k + 2 stride, ..."""
    stop = threading.Event()

    def run(i):
        while not stop.is_set():
            step(i)
            i += stride

    threads = [threading.Thread(target=run, args=(k,)) for k in range(clients)]
    for t in threads:
        t.start()
    try:
        yield
    finally:
        stop.set()
        for t in threads:
            t.join()


def fixture(name):
    return os.path.join(FIXTURES, name)


# Dropping a database on Citus waits about 0.1 s a node for the extension's maintenance
# daemon to leave it (PostgreSQL polls for other sessions every 100 ms): nothing a test
# waits for, so those drops run behind the next tests, reaped as they end and waited for
# when the suite exits.
_drops = []


def _drop_in_background(cmd):
    _drops[:] = [p for p in _drops if p.poll() is None]
    _drops.append(subprocess.Popen(cmd, stdout=subprocess.DEVNULL))


@atexit.register
def _wait_for_drops():
    for p in _drops:
        p.wait(timeout=120)


class Ctl:
    """Runs breachctl against one store in a private temporary directory."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="breachd-e2e-")
        if STORE == "pg":
            self.dbname = "e2e_" + os.urandom(6).hex()
            if CITUS_DIR:
                subprocess.run([CITUS_SCRIPT, "createdb", CITUS_DIR, self.dbname], check=True,
                               capture_output=True, timeout=120)
            else:
                psql(PG_URI, "CREATE DATABASE %s" % self.dbname)
            self.db = pg_database_uri(self.dbname)
            self.secret = os.path.join(self.dir, "store.secret")
        else:
            self.db = os.path.join(self.dir, "store.db")
            self.secret = None

    @property
    def secret_file(self):
        return self.secret or self.db + ".secret"

    def store_bytes(self):
        """Everything the store holds at rest, as bytes: every file of a SQLite store but the
        secret, or a plain dump of the PostgreSQL database."""
        if STORE == "pg":
            p = subprocess.run(["pg_dump", "--no-owner", self.db], capture_output=True,
                               timeout=120, check=True)
            return p.stdout
        data = b""
        for path in sorted(glob.glob(self.db + "*")):
            if not path.endswith(".secret"):
                with open(path, "rb") as f:
                    data += f.read()
        return data

    def store_args(self):
        """--db, and --secret where the store has no default secret file."""
        return ["--db", self.db] + (["--secret", self.secret] if self.secret else [])

    def sql(self, statement):
        """Runs SQL on the store, whichever it is; returns the rows as lists of text."""
        if STORE == "pg":
            return psql(self.db, statement)
        db = sqlite3.connect(self.db, timeout=10)
        try:
            rows = db.execute(statement).fetchall()
            db.commit()
            return [[str(v) for v in row] for row in rows]
        finally:
            db.close()

    def run(self, *args, stdin=None, check=None):
        p = subprocess.run([binary("breachctl"), *args, *self.store_args()], input=stdin,
                           capture_output=True, timeout=120)
        if check is not None and p.returncode != check:
            raise AssertionError("breachctl %s exited %d, want %d\nstdout: %s\nstderr: %s" % (
                " ".join(args), p.returncode, check, p.stdout.decode(errors="replace"),
                p.stderr.decode(errors="replace")))
        return p

    def init(self):
        self.run("init", check=0)
        return self

    def import_(self, kind, *files, check=0, extra=()):
        return self.run("import", kind, *files, *extra, check=check)

    def key(self, name="e2e", *extra):
        p = self.run("keys", "create", "--name", name, *extra, check=0)
        lines = p.stdout.decode().splitlines()
        assert len(lines) == 1, p.stdout
        return lines[0]

    def write(self, name, text, compress=False):
        path = os.path.join(self.dir, name)
        data = text.encode() if isinstance(text, str) else text
        if compress:
            with gzip.open(path, "wb") as f:
                f.write(data)
        else:
            with open(path, "wb") as f:
                f.write(data)
        return path

    def cleanup(self):
        shutil.rmtree(self.dir, ignore_errors=True)
        if STORE == "pg" and CITUS_DIR:
            _drop_in_background([CITUS_SCRIPT, "dropdb", CITUS_DIR, self.dbname])
        elif STORE == "pg":
            psql(PG_URI, "DROP DATABASE IF EXISTS %s WITH (FORCE)" % self.dbname)


class Server:
    """A breachd process on 127.0.0.1 with a kernel-chosen port."""

    def __init__(self, ctl, *extra):
        self.ctl = ctl
        self.stderr_path = os.path.join(ctl.dir, "breachd.stderr")
        self.stderr = open(self.stderr_path, "wb")
        # BREACHD_WRAPPER runs the server under a tool, e.g. "valgrind --error-exitcode=99".
        wrapper = os.environ.get("BREACHD_WRAPPER", "").split()
        self.proc = subprocess.Popen(
            [*wrapper, binary("breachd"), *ctl.store_args(), "--listen", "127.0.0.1:0",
             "--threads", "2", *extra], stdout=subprocess.DEVNULL, stderr=self.stderr)
        self.port = None
        self.base, self.hibp_base = DEFAULT_BASE, DEFAULT_HIBP_BASE
        for i, arg in enumerate(extra[:-1]):
            if arg == "--base-path":
                self.base = extra[i + 1].rstrip("/") or DEFAULT_BASE
            if arg == "--hibp-base-path":
                self.hibp_base = extra[i + 1].rstrip("/") or DEFAULT_HIBP_BASE
        deadline = time.time() + (60 if wrapper else 15)
        while time.time() < deadline and self.port is None:
            with open(self.stderr_path, "rb") as f:
                m = re.search(rb"-> port (\d+)", f.read())
            if m:
                self.port = int(m.group(1))
                break
            if self.proc.poll() is not None:
                break
            time.sleep(0.02)
        if self.port is None:
            self.proc.kill()
            with open(self.stderr_path, "rb") as f:
                raise AssertionError("breachd did not start: %s" % f.read().decode(errors="replace"))

    def request(self, path, key=None, method="GET", headers=None, source=None, body=None,
                timeout=30):
        """Returns (status, headers dict with lower-case names, raw body bytes). source: send
        from another loopback address (127.0.0.2, ...), as another client would."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout,
                                          source_address=(source, 0) if source else None)
        h = dict(headers or {})
        if key is not None:
            h["x-api-key"] = key
        conn.request(method, path, body=body, headers=h)
        resp = conn.getresponse()
        body = resp.read()
        hdrs = {k.lower(): v for k, v in resp.getheaders()}
        conn.close()
        openapi_check.check(method, path, resp.status, hdrs, body, self.base, self.hibp_base)
        return resp.status, hdrs, body

    def get(self, path, key=None, **kw):
        """Returns (status, parsed JSON body); asserts the body is JSON with our headers."""
        status, hdrs, body = self.request(path, key=key, **kw)
        assert hdrs.get("content-type") == "application/json; charset=utf-8", hdrs
        assert re.fullmatch(r"[0-9a-f]{16}", hdrs.get("x-request-id", "")), hdrs
        return status, json.loads(body.decode("utf-8"))

    def stop(self):
        """SIGTERM; returns the exit status."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=60 if os.environ.get("BREACHD_WRAPPER") else 15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                raise AssertionError("breachd did not stop within 15 s of SIGTERM")
        self.stderr.close()
        if self.proc.returncode != 0:  # what the server said goes with the failure it causes
            sys.stderr.write("breachd exited %d; the end of its log:\n%s\n"
                             % (self.proc.returncode, self.log()[-4000:]))
        return self.proc.returncode

    def log(self):
        with open(self.stderr_path, "rb") as f:
            return f.read().decode(errors="replace")


class ServerTest(unittest.TestCase):
    """One store and one server per test class; subclasses fill the store in populate()."""

    @classmethod
    def populate(cls, ctl):
        pass

    @classmethod
    def setUpClass(cls):
        cls.ctl = Ctl().init()
        cls.populate(cls.ctl)
        cls.key = cls.ctl.key("e2e", "--plan", "enterprise")
        cls.srv = Server(cls.ctl)

    @classmethod
    def tearDownClass(cls):
        rc = cls.srv.stop()
        cls.ctl.cleanup()
        assert rc == 0, "breachd exited %d on SIGTERM" % rc

    def assertError(self, path, status, code, key="__default__", **kw):
        st, body = self.srv.get(path, key=self.key if key == "__default__" else key, **kw)
        self.assertEqual(st, status, body)
        self.assertEqual(set(body), {"error", "message"}, body)
        self.assertEqual(body["error"], code)
        self.assertIsInstance(body["message"], str)
        self.assertTrue(body["message"])
        return body["message"]


# The newest store schema version (issue 35's three: 17 watches' alert format, 18 records'
# website_domain, 19 pastes; 22 the records' key as an index of its own), and ways back to version 2
# (before the owner-word table and the domain counts) and version 4 (before the keys'
# exact-lookup budget), for testing that an upgrade in place rebuilds what they hold.
SCHEMA_VERSION = 23
# The newest PostgreSQL schema version (22 watches' alert format, 23 records' website_domain,
# 24 pastes, 25 card counts held in their key; src/store/pg/schema.c).
PG_SCHEMA_VERSION = 26
# Takes SQLite's migrations 15 (tenants, scoped keys, audit, lookups), 16 (the console's
# alert triage and signed-out sessions) and 17 (watches' alert format) back out: a way back
# replays them, and SQLite adds a column only to a table that lacks it.
TENANTS_OUT = ("DROP TABLE IF EXISTS pastes;"  # issue 35's pastes (created IF NOT EXISTS)
               "DROP TABLE IF EXISTS paste_emails;"
               "DROP TABLE IF EXISTS email_hashes;"
               "ALTER TABLE watches DROP COLUMN format;"
               # issue 35's website of a stealer log (a card BIN watch's type back to 9)
               "DROP INDEX IF EXISTS records_by_website;"
               "ALTER TABLE records DROP COLUMN website_domain;"
               "UPDATE watches SET type = 9 WHERE type = 10;"
               "UPDATE alerts SET watch_type = 9 WHERE watch_type = 10;"
               "ALTER TABLE alerts DROP COLUMN triage;"
               "DROP TABLE IF EXISTS console_signouts;"
               "DROP TABLE IF EXISTS tenants;"
               "DROP TABLE IF EXISTS tenant_domains;"
               "DROP TABLE IF EXISTS audit;"
               "DROP TABLE IF EXISTS lookups;"
               "ALTER TABLE api_keys DROP COLUMN tenant_id;"
               "ALTER TABLE api_keys DROP COLUMN types;"
               "ALTER TABLE api_keys DROP COLUMN allow_ip;"
               "ALTER TABLE api_keys DROP COLUMN role;")
# Takes SQLite's migration 13 (job limits and turns) back out, and those after it: what a way
# back to an older version runs first, since SQLite adds a column only to a table that lacks it.
JOB_LIMITS_OUT = TENANTS_OUT + ("DROP INDEX IF EXISTS jobs_by_key;"
                  "ALTER TABLE jobs DROP COLUMN result_rows;"
                  "ALTER TABLE jobs DROP COLUMN truncated;"
                  "ALTER TABLE jobs DROP COLUMN served;"
                  "ALTER TABLE api_keys DROP COLUMN max_jobs;"
                  "ALTER TABLE api_keys DROP COLUMN max_queued_identities;"
                  "ALTER TABLE api_keys DROP COLUMN max_result_rows;")


def downgrade_to_v5(db_path):
    """Back to before the breach fields of the HIBP API v3 (migration 6), the password
    ranges (7), usage and quotas (8), bulk jobs (9), keyed CVVs (12; the masks stay, the
    CVVs in clear are gone) and job limits (13)."""
    db = sqlite3.connect(db_path)
    try:
        db.executescript(JOB_LIMITS_OUT +
                         "DROP INDEX IF EXISTS cards_by_cvv_hmac;"
                         "ALTER TABLE cards DROP COLUMN cvv_hmac;"
                         "CREATE INDEX IF NOT EXISTS cards_by_cvv ON cards(cvv) WHERE cvv IS NOT NULL;"
                         "DROP TABLE IF EXISTS job_chunks;"
                         "DROP TABLE IF EXISTS jobs;"
                         "DROP TABLE IF EXISTS key_usage;"
                         "ALTER TABLE api_keys DROP COLUMN quota_per_month;"
                         "DROP TABLE IF EXISTS password_ranges;"
                         "DROP INDEX breaches_by_name;"
                         "ALTER TABLE breaches DROP COLUMN name;"
                         "ALTER TABLE breaches DROP COLUMN added_at;"
                         "ALTER TABLE breaches DROP COLUMN modified_at;"
                         "ALTER TABLE breaches DROP COLUMN hibp_flags;"
                         "PRAGMA user_version = 5;")
    finally:
        db.close()


def downgrade_to_v4(db_path):
    downgrade_to_v5(db_path)
    db = sqlite3.connect(db_path)
    try:
        db.executescript("ALTER TABLE api_keys DROP COLUMN exact_per_day;"
                         "PRAGMA user_version = 4;")
    finally:
        db.close()


def downgrade_to_v2(db_path):
    downgrade_to_v4(db_path)
    db = sqlite3.connect(db_path)
    try:
        db.executescript("DROP TABLE card_owner_words;"
                         "DROP TABLE domain_counts;"
                         "PRAGMA user_version = 2;")
    finally:
        db.close()
