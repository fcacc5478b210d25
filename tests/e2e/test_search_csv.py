"""Accept: text/csv on breach-search and credit-card-search: the same page as the JSON one,
as CSV with a header row (parsed back with Python's csv module), the envelope's numbers in
X- headers, formula cells guarded, errors still JSON."""
import csv
import io
import json
import unittest
import urllib.parse

from harness import ServerTest, fixture

ALPHA = "11111111-1111-4111-8111-111111111111"
BETA = "22222222-2222-4222-8222-222222222222"
RECORD_COLUMNS = ["breach_id", "breach_name", "breach_date", "user_name", "first_name",
                  "last_name", "email", "email_domain", "phone_number", "ip_address",
                  "bitcoin_address", "password", "password_hash", "social_security_number",
                  "other_attributes", "severity"]
CARD_COLUMNS = ["id", "createdAt", "bank", "number", "owner", "cvv", "expireDate", "cvssScore",
                "leakId", "leakName", "leakPublishDate", "leakDiscoverDate", "leakSize",
                "leakTags"]
JSON_FIELD = {"password": "password", "social_security_number": "social_security_number"}

RECORDS = [
    {"breach_uuid": ALPHA, "email": "ann@csv.example", "password": "hunter22",
     "first_name": "=HYPERLINK(\"http://evil.example\")", "last_name": "O'Brien, Jr."},
    {"breach_uuid": ALPHA, "email": "bob@csv.example", "user_name": "+bob",
     "other_attributes": {"note": "two\nlines \"quoted\""}},
    {"breach_uuid": BETA, "email": "cy@csv.example", "phone_number": "+1 555 0100",
     "ip_address": "192.0.2.7"},
    {"breach_uuid": BETA, "email": "dee@csv.example", "social_security_number": "123-45-6789"},
    {"breach_uuid": BETA, "email": "eve@csv.example", "first_name": "@sum"},
]


def rows(body):
    return list(csv.reader(io.StringIO(body.decode("utf-8"), newline="")))


class SearchCsv(ServerTest):
    @classmethod
    def populate(cls, ctl):
        ctl.import_("breaches", fixture("breaches.jsonl"))
        ctl.import_("records", ctl.write("r.jsonl", "".join(json.dumps(r) + "\n"
                                                             for r in RECORDS)))
        ctl.import_("cards", fixture("cards.csv"))

    def csv_get(self, path, accept="text/csv"):
        return self.srv.request(path, key=self.key, headers={"Accept": accept})

    def json_get(self, path):
        st, _, body = self.srv.request(path, key=self.key)
        self.assertEqual(st, 200, body)
        return json.loads(body)

    def expected_rows(self, page):
        out = []
        for rec in page["data"]:
            d, b = rec["breached_data"], rec["breach_details"]
            day, mon, year = b["date_leaked"].split("-")
            month = "%02d" % (["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep",
                               "Oct", "Nov", "Dec"].index(mon) + 1)
            row = [b["uuid"], b["site_name"], "%s-%s-%s" % (year, month, day)]
            for col in RECORD_COLUMNS[3:]:
                v = d.get(JSON_FIELD.get(col, col))
                v = "" if v is None else v
                if v and v[0] in "=+-@\t\r":
                    v = "'" + v
                row.append(v)
            out.append(row)
        return out

    def test_a_domain_page_equals_the_json_page_and_its_token_continues_it(self):
        q = "/v7/breach-search?type=email_domain&account=csv.example&number_of_records=2"
        page = self.json_get(q)
        st, hdrs, body = self.csv_get(q)
        self.assertEqual(st, 200, body)
        self.assertEqual(hdrs["content-type"], "text/csv; charset=utf-8")
        self.assertEqual(hdrs["vary"], "Accept, Accept-Encoding")
        self.assertTrue(body.endswith(b"\r\n"))
        got = rows(body)
        self.assertEqual(got[0], RECORD_COLUMNS)
        self.assertEqual(got[1:], self.expected_rows(page))
        self.assertEqual(int(hdrs["x-records-found"]), page["records_found"])
        self.assertEqual(page["records_found"], 5)
        token = hdrs["x-pagination-token"]
        seen = got[1:]
        while token:
            nq = "/v7/breach-search?paging_token=" + urllib.parse.quote(token) + \
                 "&number_of_records=2"
            st, hdrs, body = self.csv_get(nq)
            self.assertEqual(st, 200)
            more = rows(body)
            self.assertEqual(more[0], RECORD_COLUMNS)
            self.assertEqual(more[1:], self.expected_rows(self.json_get(nq)))
            seen += more[1:]
            token = hdrs.get("x-pagination-token")
        self.assertEqual(sorted(r[6] for r in seen),
                         ["ann@csv.example", "bob@csv.example", "cy@csv.example",
                          "dee@csv.example", "eve@csv.example"])

    def test_cells_are_quoted_and_formulas_guarded(self):
        st, _, body = self.csv_get("/v7/breach-search?type=email&account=ann@csv.example")
        r = dict(zip(RECORD_COLUMNS, rows(body)[1]))
        self.assertEqual(r["first_name"], "'=HYPERLINK(\"http://evil.example\")")
        self.assertEqual(r["last_name"], "O'Brien, Jr.")
        masked = self.json_get("/v7/breach-search?type=email&account=ann@csv.example")
        self.assertEqual(r["password"], masked["data"][0]["breached_data"]["password"])
        self.assertTrue(r["password"].startswith("*"))
        self.assertNotIn("hunter22", body.decode())
        self.assertIn(b'"\'=HYPERLINK(""http://evil.example"")"', body)
        st, _, body = self.csv_get("/v7/breach-search?type=email&account=bob@csv.example")
        r = dict(zip(RECORD_COLUMNS, rows(body)[1]))
        self.assertEqual(r["user_name"], "'+bob")
        self.assertEqual(json.loads(r["other_attributes"]), {"note": "two\nlines \"quoted\""})
        st, _, body = self.csv_get("/v7/breach-search?type=email&account=dee@csv.example")
        r = dict(zip(RECORD_COLUMNS, rows(body)[1]))
        self.assertNotIn("6789", r["social_security_number"][:-4])
        self.assertEqual(r["breach_name"], "Beta Shop")

    def test_accept_decides_and_errors_stay_json(self):
        q = "/v7/breach-search?type=email&account=cy@csv.example"
        for accept, is_csv in (("text/csv", True), ("text/csv, */*", True),
                               ("application/json;q=0.9, text/csv", True),
                               ("TEXT/CSV;q=1.0", True), ("application/json", False),
                               ("*/*", False), ("text/csv;q=0.5, application/json", False),
                               ("text/csv;q=0", False), ("text/html", False),
                               ("text/csv;q=oops", False), (",,;;", False)):
            st, hdrs, body = self.csv_get(q, accept)
            self.assertEqual(st, 200, accept)
            self.assertEqual(hdrs["content-type"].startswith("text/csv"), is_csv, accept)
        st, hdrs, body = self.csv_get("/v7/breach-search?type=email&account=nobody@csv.example")
        self.assertEqual(st, 404)
        self.assertEqual(hdrs["content-type"], "application/json; charset=utf-8")
        self.assertEqual(json.loads(body)["error"], "not_found")
        self.assertNotIn("x-records-found", hdrs)
        st, hdrs, body = self.csv_get("/v7/breach-search?type=email&account=not-an-email")
        self.assertEqual(st, 422)
        self.assertEqual(json.loads(body)["error"], "validation_error")

    def test_a_card_page_equals_the_json_page(self):
        q = "/v7/credit-card-search?" + urllib.parse.urlencode(
            {"query": "number:4*", "size": "2", "page": "0", "sort": "createdAt,asc"})
        page = self.json_get(q)
        st, hdrs, body = self.csv_get(q)
        self.assertEqual(st, 200, body)
        got = rows(body)
        self.assertEqual(got[0], CARD_COLUMNS)
        want = []
        for c in page["content"]:
            row = []
            for col in CARD_COLUMNS:
                v = c[col]
                row.append("" if v is None else (("%g" % v) if col == "cvssScore" else str(v)))
            want.append(row)
        self.assertEqual(got[1:], want)
        self.assertEqual((int(hdrs["x-total-elements"]), int(hdrs["x-total-pages"]),
                          int(hdrs["x-page-number"]), int(hdrs["x-page-size"]),
                          int(hdrs["x-number-of-elements"])),
                         (page["totalElements"], page["totalPages"], 0, 2,
                          page["numberOfElements"]))
        self.assertGreater(page["totalElements"], 2)
        empty = "/v7/credit-card-search?" + urllib.parse.urlencode({"query": "cvv:9999"})
        st, hdrs, body = self.csv_get(empty)
        self.assertEqual((st, rows(body)), (200, [CARD_COLUMNS]))
        self.assertEqual(hdrs["x-total-elements"], "0")


if __name__ == "__main__":
    unittest.main()
