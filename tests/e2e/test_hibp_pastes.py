"""Pastes: `breachctl import pastes` (JSON Lines: source, id, title, date, email_count,
emails) and the HIBP API v3's GET /pasteaccount/{email} (HIBP's paste model, newest first,
404 with an empty body when none, 400 for a bad address), scoped by tenant like
breachedaccount; a re-import adds nothing; refused lines named on stderr with exit 1."""
import json
import unittest

from harness import Ctl, Server

PASTES = [
    {"source": "Pastebin", "id": "8Q0BvKD8", "title": "syslog", "date": "2014-03-04T19:14:54Z",
     "email_count": 139, "emails": ["Jane@Acme.example", "bob@acme.example"]},
    {"source": "Pastie", "id": "7152479", "date": "2013-03-28", "emails": ["jane@acme.example"]},
    {"source": "AdHocUrl", "id": "http://example.net/dump.txt", "title": None,
     "emails": ["jane@acme.example", "eve@other.example"]},
]
JANE = [
    {"Source": "Pastebin", "Id": "8Q0BvKD8", "Title": "syslog", "Date": "2014-03-04T19:14:54Z",
     "EmailCount": 139},
    {"Source": "Pastie", "Id": "7152479", "Title": None, "Date": "2013-03-28T00:00:00Z",
     "EmailCount": 1},
    {"Source": "AdHocUrl", "Id": "http://example.net/dump.txt", "Title": None, "Date": None,
     "EmailCount": 2},
]


class Pastes(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.ctl = ctl = Ctl().init()
        cls.first = ctl.import_("pastes", ctl.write("p.jsonl", "\n".join(
            json.dumps(p) for p in PASTES)))
        cls.again = ctl.import_("pastes", ctl.write("p2.jsonl", json.dumps(PASTES[0])))
        tenant = ctl.run("tenants", "add", "acme", "--domain", "acme.example",
                         check=0).stdout.decode().strip()
        cls.key = ctl.key("ops", "--plan", "enterprise")
        cls.tenant_key = ctl.key("acme", "--tenant", tenant)
        cls.srv = Server(ctl)

    @classmethod
    def tearDownClass(cls):
        rc = cls.srv.stop()
        cls.ctl.cleanup()
        assert rc == 0, "breachd exited %d on SIGTERM" % rc

    def get(self, path, key=None):
        st, hdrs, raw = self.srv.request("/api/v3" + path,
                                         headers={"hibp-api-key": key or self.key})
        return st, (json.loads(raw) if raw else None)

    def test_import_counts(self):
        self.assertIn(b"3 pastes imported, 0 already there", self.first.stderr)
        self.assertIn(b"0 pastes imported, 1 already there", self.again.stderr)

    def test_an_address_lists_its_pastes_newest_first(self):
        self.assertEqual(self.get("/pasteaccount/JANE%40acme.example"), (200, JANE))
        self.assertEqual(self.get("/pasteaccount/bob@acme.example"), (200, [JANE[0]]))

    def test_none_is_404_with_an_empty_body_and_a_bad_address_400(self):
        self.assertEqual(self.get("/pasteaccount/nobody@acme.example"), (404, None))
        st, body = self.get("/pasteaccount/not-an-email")
        self.assertEqual((st, body["error"]), (400, "bad_request"))
        st, body = self.get("/pasteaccount/jane@acme.example?truncateResponse=true")
        self.assertEqual((st, body["error"]), (400, "bad_request"))

    def test_a_tenant_key_sees_its_own_emails_only(self):
        self.assertEqual(self.get("/pasteaccount/jane@acme.example", self.tenant_key),
                         (200, JANE))
        st, body = self.get("/pasteaccount/eve@other.example", self.tenant_key)
        self.assertEqual((st, body["error"]), (403, "out_of_scope"))
        self.assertEqual(self.get("/pasteaccount/eve@other.example"), (200, [JANE[2]]))

    def test_refused_lines_are_named(self):
        bad = [{"id": "x", "emails": ["a@b.example"]},
               {"source": "S", "id": "y", "emails": []},
               {"source": "S", "id": "z", "emails": ["nope"]},
               {"source": "S", "id": "w", "date": "yesterday", "emails": ["a@b.example"]},
               {"source": "S", "id": "v", "email_count": 0, "emails": ["a@b.example"]}]
        p = self.ctl.import_("pastes", self.ctl.write("bad.jsonl", "\n".join(
            json.dumps(b) for b in bad) + "\n{not json"), check=1)
        err = p.stderr.decode()
        for line in range(1, 7):
            self.assertIn("bad.jsonl:%d: paste refused: " % line, err)
        self.assertIn("0 pastes imported, 0 already there (their emails added), 6 refused", err)
        p = self.ctl.import_("pastes", self.ctl.write("x.jsonl", "{}"), "--bulk", check=2)
        self.assertIn(b"no option", p.stderr)


if __name__ == "__main__":
    unittest.main()
