"""The change log's API: GET /v7/status (data version, last import, counts) and
GET /v7/changes (what was added, changed or removed, since a cursor), with the catalog
kept per data version: a new import shows at once, in every reply."""
import json
import unittest

from harness import ServerTest, Server, Ctl, fixture

ALPHA = "11111111-1111-4111-8111-111111111111"
BETA = "22222222-2222-4222-8222-222222222222"

RECORDS = "".join(json.dumps(r) + "\n" for r in [
    {"breach_uuid": ALPHA, "email": "a1@corp.example", "password": "hunter22"},
    {"breach_uuid": ALPHA, "email": "a2@corp.example"},
    {"breach_uuid": BETA, "email": "b1@corp.example"},
])
CARDS = ("id,createdAt,number,owner,expireDate,leakId,leakName\n"
         "k1,2024-01-01 10:00:00,4111111111111111,Ann Lee,2027-01-31,L9,Leak Nine\n"
         "k2,2024-01-02 10:00:00,5500000000000004,Bob Ray,2027-02-28,L9,Leak Nine\n"
         "k3,2024-01-03 10:00:00,340000000000009,Cy Dee,2027-03-31,,\n")


class Changes(ServerTest):
    @classmethod
    def populate(cls, ctl):
        ctl.import_("breaches", fixture("breaches.jsonl"))
        with open(fixture("breaches.jsonl")) as f:
            cls.breaches = [json.loads(line) for line in f if line.strip()]

    def get(self, path, **kw):
        st, hdrs, body = self.srv.request(path, key=self.key, **kw)
        return st, hdrs, json.loads(body) if body else None

    def changes(self, since=0, limit=None):
        q = "/v7/changes?since=%d" % since + ("&limit=%d" % limit if limit else "")
        st, _, body = self.get(q)
        self.assertEqual(st, 200, body)
        return body

    def all_changes(self, since=0):
        out = []
        while True:
            page = self.changes(since, 2)
            out += page["changes"]
            since = page["next"]
            if not page["more"]:
                return out, since

    def test_a_store_of_breaches_only(self):
        st, hdrs, s = self.get("/v7/status")
        self.assertEqual(st, 200)
        n = len(self.breaches)
        self.assertEqual(s, {"data_version": s["data_version"], "last_change_at": s["last_change_at"],
                             "last_import_at": None, "breaches": n, "records": 0, "cards": 0})
        self.assertGreaterEqual(s["data_version"], n)
        self.assertRegex(s["last_change_at"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
        self.assertRegex(hdrs["etag"], r'^W/"[0-9a-f]{32}"$')
        st, _, _ = self.srv.request("/v7/status", key=self.key,
                                    headers={"If-None-Match": hdrs["etag"]})
        self.assertEqual(st, 304)

    def test_the_log_pages_by_cursor_and_misses_nothing(self):
        whole = self.changes(0, 1000)
        self.assertFalse(whole["more"])
        added = [c for c in whole["changes"] if c["kind"] == "breach_added"]
        self.assertEqual(len(added), len(self.breaches))
        given = [b["uuid"] for b in self.breaches if "uuid" in b]  # one gets a generated id
        self.assertEqual([c["breach_id"] for c in added][:len(given)], given)
        self.assertEqual(added[0], {"seq": added[0]["seq"], "at": added[0]["at"],
                                    "kind": "breach_added", "breach_id": ALPHA,
                                    "source_name": "Alpha Forum", "count": 1})
        paged, last = self.all_changes()
        self.assertEqual(paged, whole["changes"])
        self.assertEqual(last, whole["changes"][-1]["seq"])
        seqs = [c["seq"] for c in paged]
        self.assertEqual(seqs, sorted(set(seqs)))
        tail = self.changes(last)
        self.assertEqual((tail["changes"], tail["next"], tail["more"]), ([], last, False))

    def test_bad_cursors_and_limits_are_4xx(self):
        self.assertError("/v7/changes?since=-1", 422, "validation_error")
        self.assertError("/v7/changes?since=abc", 400, "bad_request")
        self.assertError("/v7/changes?limit=0", 422, "validation_error")
        self.assertError("/v7/changes?limit=1001", 422, "validation_error")
        self.assertError("/v7/changes?cursor=1", 400, "bad_request")
        self.assertError("/v7/status?x=1", 400, "bad_request")


class ImportsShow(unittest.TestCase):
    """One store, changed while a server runs: the status, the log and the catalog follow."""

    def setUp(self):
        self.ctl = Ctl().init()
        self.ctl.import_("breaches", fixture("breaches.jsonl"))
        self.key = self.ctl.key()
        self.srv = Server(self.ctl)

    def tearDown(self):
        self.srv.stop()
        self.ctl.cleanup()

    def get(self, path):
        st, hdrs, body = self.srv.request(path, key=self.key)
        self.assertEqual(st, 200, body)
        return hdrs, json.loads(body)

    def test_records_cards_and_erasure_in_the_log_status_and_catalog(self):
        _, before = self.get("/v7/status")
        etag, catalog = self.get("/v7/breaches")
        beta = [b for b in catalog if b["uuid"] == BETA][0]
        self.assertEqual(beta["pwned_count"], 0)
        self.ctl.import_("records", self.ctl.write("r.jsonl", RECORDS))
        self.ctl.import_("cards", self.ctl.write("c.csv", CARDS))
        _, after = self.get("/v7/status")
        self.assertEqual((after["records"], after["cards"], after["breaches"]),
                         (3, 3, before["breaches"]))
        self.assertGreater(after["data_version"], before["data_version"])
        self.assertIsNotNone(after["last_import_at"])
        log = self.get("/v7/changes?since=%d" % before["data_version"])[1]["changes"]
        got = sorted((c["kind"], c.get("breach_id", c.get("leak_id")) or "", c["count"])
                     for c in log)
        self.assertEqual(got, sorted([
            ("records_added", ALPHA, 2), ("records_added", BETA, 1),
            ("breach_changed", BETA, 1),  # Alpha's count is the imported 1200: unchanged
            ("cards_added", "L9", 2), ("cards_added", "", 1)]))
        cards = [c for c in log if c["kind"] == "cards_added" and c["leak_id"] == "L9"]
        self.assertEqual(cards[0]["leak_name"], "Leak Nine")
        # the catalog kept by the server moved with the data version
        etag2, catalog2 = self.get("/v7/breaches")
        self.assertNotEqual(etag2["etag"], etag["etag"])
        self.assertEqual([b for b in catalog2 if b["uuid"] == BETA][0]["pwned_count"], 1)
        # a second import of the same files adds nothing, and says nothing
        self.ctl.import_("records", self.ctl.write("r.jsonl", RECORDS))
        self.ctl.import_("cards", self.ctl.write("c.csv", CARDS))
        _, again = self.get("/v7/status")
        self.assertEqual(again["data_version"], after["data_version"])
        # erasures are changes too
        self.ctl.run("erase", "--email", "a1@corp.example", check=0)
        self.ctl.run("erase", "--breach", BETA, check=0)
        log = self.get("/v7/changes?since=%d" % after["data_version"])[1]["changes"]
        got = [(c["kind"], c["breach_id"], c["count"]) for c in log]
        self.assertEqual(got, [("records_removed", ALPHA, 1), ("breach_removed", BETA, 1)])
        _, final = self.get("/v7/status")
        self.assertEqual((final["records"], final["breaches"]), (1, after["breaches"] - 1))
        _, catalog3 = self.get("/v7/breaches")
        self.assertEqual(len(catalog3), final["breaches"])


if __name__ == "__main__":
    unittest.main()
