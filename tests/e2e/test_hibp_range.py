"""The HIBP API v3's k-anonymity email search, GET /api/v3/breachedaccount/range/{prefix}:
the SHA-1 of each record's normalised email kept at import (and, for a store upgraded from
before it, at the upgrade), the suffixes under a 6-digit prefix with their breaches' Names,
a tenant key's own addresses only, 404 with an empty body when none, 400 for a bad prefix,
403 for a key of another plan, and an erased address forgotten."""
import hashlib
import json
import unittest

from harness import STORE, Ctl, Server

A1 = "4a4e0000-0000-4000-8000-000000000001"
B2 = "4a4e0000-0000-4000-8000-000000000002"
BREACHES = [
    {"uuid": A1, "source_name": "Alpha Forum", "date_leaked": "2019-05-01"},
    {"uuid": B2, "source_name": "Beta Shop", "date_leaked": "2021-02-14"},
]
RECORDS = [
    {"breach_uuid": A1, "email": "Jane@Acme.example"},
    {"breach_uuid": B2, "email": "jane@acme.example", "password": "x"},
    {"breach_uuid": B2, "email": "bob@acme.example"},
    {"breach_uuid": A1, "email": "eve@other.example"},
    {"breach_uuid": A1, "user_name": "no-email-here"},
]


# the schema step that made the pastes and the email hashes, on each store
HASHES_MIGRATION = {"sqlite": 19, "pg": 24}[STORE]


def sha1(email):
    return hashlib.sha1(email.encode()).hexdigest().upper()


def unused_prefix():
    used = {sha1(r["email"].lower())[:6] for r in RECORDS if "email" in r}
    return next(p for p in ("000000", "FFFFFF", "123456") if p not in used)


class Range(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.ctl = ctl = Ctl().init()
        ctl.import_("breaches", ctl.write("b.jsonl", "\n".join(json.dumps(b) for b in BREACHES)))
        ctl.import_("records", ctl.write("r.jsonl", "\n".join(json.dumps(r) for r in RECORDS)))
        tenant = ctl.run("tenants", "add", "acme", "--domain", "acme.example",
                         check=0).stdout.decode().strip()
        cls.key = ctl.key("ops", "--plan", "enterprise")
        cls.standard = ctl.key("std", "--plan", "standard")
        cls.tenant_key = ctl.key("acme", "--tenant", tenant)
        cls.srv = Server(ctl)

    @classmethod
    def tearDownClass(cls):
        rc = cls.srv.stop()
        cls.ctl.cleanup()
        assert rc == 0, "breachd exited %d on SIGTERM" % rc

    def get(self, prefix, key=None):
        st, _, raw = self.srv.request("/api/v3/breachedaccount/range/" + prefix,
                                      headers={"hibp-api-key": key or self.key})
        return st, (json.loads(raw) if raw else None)

    def entry(self, email, names):
        return {"hashSuffix": sha1(email)[6:], "websites": names}

    def test_a_prefix_lists_its_suffixes_with_their_breach_names(self):
        jane = sha1("jane@acme.example")
        self.assertEqual(self.get(jane[:6]),
                         (200, [self.entry("jane@acme.example", ["AlphaForum", "BetaShop"])]))
        self.assertEqual(self.get(jane[:6].lower()), self.get(jane[:6]))
        eve = sha1("eve@other.example")
        self.assertEqual(self.get(eve[:6]), (200, [self.entry("eve@other.example",
                                                               ["AlphaForum"])]))

    def test_none_is_404_empty_and_a_bad_prefix_400(self):
        self.assertEqual(self.get(unused_prefix()), (404, None))
        for bad in ("12345", "1234567", "GGGGGG", "12%2045"):
            st, body = self.get(bad)
            self.assertEqual((st, body["error"]), (400, "bad_request"), bad)
        st, body = self.get("ABCDEF?truncateResponse=false")
        self.assertEqual((st, body["error"]), (400, "bad_request"))

    def test_who_may_ask(self):
        jane = sha1("jane@acme.example")[:6]
        st, body = self.get(jane, self.standard)
        self.assertEqual((st, body["error"]), (403, "forbidden"))
        # a tenant key: its tenant's addresses, the others left out
        self.assertEqual(self.get(jane, self.tenant_key),
                         (200, [self.entry("jane@acme.example", ["AlphaForum", "BetaShop"])]))
        self.assertEqual(self.get(sha1("eve@other.example")[:6], self.tenant_key), (404, None))

    def test_the_hashes_kept(self):
        rows = self.ctl.sql("SELECT sha1, email FROM email_hashes ORDER BY sha1")
        want = sorted([sha1(e), e] for e in ("jane@acme.example", "bob@acme.example",
                                             "eve@other.example"))
        self.assertEqual(rows, want)


class RangeErasureAndUpgrade(unittest.TestCase):
    def setUp(self):
        self.ctl = ctl = Ctl().init()
        ctl.import_("breaches", ctl.write("b.jsonl", "\n".join(json.dumps(b) for b in BREACHES)))
        ctl.import_("records", ctl.write("r.jsonl", "\n".join(json.dumps(r) for r in RECORDS)))
        self.key = ctl.key("ops", "--plan", "enterprise")

    def tearDown(self):
        self.ctl.cleanup()

    def served(self, email):
        srv = Server(self.ctl)
        try:
            st, _, raw = srv.request("/api/v3/breachedaccount/range/" + sha1(email)[:6],
                                     headers={"hibp-api-key": self.key})
        finally:
            self.assertEqual(srv.stop(), 0)
        return st, (json.loads(raw) if raw else None)

    def test_an_erased_address_is_forgotten(self):
        self.ctl.run("erase", "--email", "JANE@acme.example", check=0)
        self.assertEqual(self.served("jane@acme.example"), (404, None))
        self.assertEqual(self.ctl.sql("SELECT count(*) FROM email_hashes WHERE email = "
                                      "'jane@acme.example'"), [["0"]])

    def test_a_load_after_the_newest_records_were_erased_hashes_its_emails(self):
        # The emails are hashed up to a record id, which the erased records had reached: a
        # bulk load (PostgreSQL gives its records their ids itself) must give ids past every
        # one given before, as the identity's sequence does, not past the greatest left;
        # SQLite gives the ids past the greatest left, and its erasure brings the mark back
        # to it. Plain and --bulk, after erasing a breach and after erasing an email.
        self.ctl.run("erase", "--breach", A1, check=0)
        late = "late@new.example"
        self.ctl.import_("records", self.ctl.write("late.jsonl", json.dumps(
            {"breach_uuid": B2, "email": late})), extra=("--bulk",))
        self.assertEqual(self.served(late),
                         (200, [{"hashSuffix": sha1(late)[6:], "websites": ["BetaShop"]}]))
        self.ctl.run("erase", "--email", late, check=0)
        later = "later@new.example"
        self.ctl.import_("records", self.ctl.write("later.jsonl", json.dumps(
            {"breach_uuid": B2, "email": later})))
        self.assertEqual(self.served(later),
                         (200, [{"hashSuffix": sha1(later)[6:], "websites": ["BetaShop"]}]))

    def test_a_store_from_before_the_hashes_gets_them_at_its_upgrade(self):
        # back to the version before the migration that made the hashes
        version = HASHES_MIGRATION
        if STORE == "pg":
            self.ctl.sql("DROP TABLE email_hashes; DROP TABLE pastes; DROP TABLE paste_emails;"
                         "DELETE FROM meta WHERE key IN ('email_hashes_upto',"
                         " 'pending_email_hashes');"
                         "UPDATE meta SET value = '%d' WHERE key = 'schema_version'" % (version - 1))
        else:
            self.ctl.sql("DROP TABLE email_hashes")
            self.ctl.sql("DROP TABLE pastes")
            self.ctl.sql("DROP TABLE paste_emails")
            self.ctl.sql("DELETE FROM meta WHERE key IN ('email_hashes_upto',"
                         " 'pending_email_hashes')")
            self.ctl.sql("PRAGMA user_version = %d" % (version - 1))
        self.ctl.run("stats", check=0)  # opens the store for writing: the upgrade
        self.assertEqual(self.served("jane@acme.example"),
                         (200, [{"hashSuffix": sha1("jane@acme.example")[6:],
                                 "websites": ["AlphaForum", "BetaShop"]}]))
        self.assertEqual(self.ctl.sql("SELECT value FROM meta WHERE key = "
                                      "'pending_email_hashes'"), [["0"]])


class RangeOfALargeImport(unittest.TestCase):
    """An import's hashes go in as one sorted statement: a first load into an empty table
    builds its key after filling it (from 100,000 new hashes), the PostgreSQL store stages
    them in several COPYs (4 MiB each), and a later import merges its own with them."""
    EMAILS = 60000

    def test_every_distinct_email_hashed_once(self):
        ctl = Ctl().init()
        self.addCleanup(ctl.cleanup)
        ctl.import_("breaches", ctl.write("b.jsonl", "\n".join(json.dumps(b) for b in BREACHES)))
        # two records for each address (one per breach), the second written in upper case:
        # 120,000 records, 60,000 distinct normalised emails
        emails = ["user%05d@bulk-%d.example" % (i, i % 7) for i in range(self.EMAILS)]
        lines = [json.dumps({"breach_uuid": A1, "email": e}) for e in emails]
        lines += [json.dumps({"breach_uuid": B2, "email": e.upper()}) for e in emails]
        ctl.import_("records", ctl.write("many.jsonl", "\n".join(lines)), extra=("--bulk",))
        self.assertEqual(ctl.sql("SELECT count(*), count(DISTINCT email) FROM email_hashes"),
                         [[str(self.EMAILS), str(self.EMAILS)]])
        later = ["late%d@other.example" % i for i in range(3)] + emails[:2]
        ctl.import_("records", ctl.write("later.jsonl", "\n".join(
            json.dumps({"breach_uuid": B2, "email": e, "password": "p"}) for e in later)))
        want = sorted([sha1(e), e] for e in set(emails) | set(later))
        self.assertEqual(ctl.sql("SELECT sha1, email FROM email_hashes ORDER BY sha1"), want)
        last = ctl.sql("SELECT max(id) FROM records")
        self.assertEqual(ctl.sql("SELECT value FROM meta WHERE key = 'email_hashes_upto'"), last)


if __name__ == "__main__":
    unittest.main()
