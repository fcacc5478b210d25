"""gzip replies: bodies over 1 KiB compressed when Accept-Encoding allows it, byte for byte
the plain body once inflated; small bodies, q=0 and no header left alone."""
import gzip
import json
import unittest

from harness import ServerTest, fixture

DOMAIN_ROWS = 60


def same_page(a, b):
    """Two replies of one page: equal but for the paging token, which is fresh every time."""
    a, b = json.loads(a), json.loads(b)
    a.pop("pagination_token", None)
    b.pop("pagination_token", None)
    return a == b


class Gzip(ServerTest):
    @classmethod
    def populate(cls, ctl):
        ctl.import_("breaches", fixture("breaches.jsonl"))
        with open(fixture("breaches.jsonl")) as f:
            breach = json.loads(f.readline())["uuid"]
        rows = [{"breach_uuid": breach, "email": "staff%02d@gzip.example" % i,
                 "password": "Secret-%d" % i} for i in range(DOMAIN_ROWS)]
        ctl.import_("records", ctl.write("r.jsonl", "\n".join(json.dumps(r) for r in rows)))

    PAGE = "/v7/breach-search?type=email_domain&account=gzip.example&number_of_records=50"
    SMALL = "/v7/breach-search?type=email&account=staff07@gzip.example"

    def fetch(self, path, ae=None, method="GET"):
        return self.srv.request(path, key=self.key, method=method,
                                headers={"Accept-Encoding": ae} if ae is not None else None)

    def test_a_large_page_comes_gzipped_and_inflates_to_the_plain_bytes(self):
        st, plain_hdrs, plain = self.fetch(self.PAGE)
        self.assertEqual(st, 200)
        self.assertGreater(len(plain), 1024)
        self.assertNotIn("content-encoding", plain_hdrs)
        self.assertEqual(plain_hdrs["vary"], "Accept, Accept-Encoding")  # CSV or JSON too
        for ae in ("gzip", "gzip, deflate, br", "br;q=1.0, gzip;q=0.5", "*", "x-gzip"):
            st, hdrs, body = self.fetch(self.PAGE, ae)
            self.assertEqual(st, 200, ae)
            self.assertEqual(hdrs.get("content-encoding"), "gzip", ae)
            self.assertEqual(hdrs["content-type"], "application/json; charset=utf-8")
            self.assertEqual(int(hdrs["content-length"]), len(body))
            self.assertLess(len(body), len(plain) // 3)
            self.assertTrue(same_page(gzip.decompress(body), plain), ae)

    def test_gzip_refused_or_not_asked_gets_the_plain_body(self):
        st, _, plain = self.fetch(self.PAGE)
        for ae in ("gzip;q=0", "identity", "deflate, br", "gzip;q=0, *", ""):
            st, hdrs, body = self.fetch(self.PAGE, ae)
            self.assertEqual(st, 200, ae)
            self.assertNotIn("content-encoding", hdrs, ae)
            self.assertTrue(same_page(body, plain), ae)

    def test_a_body_of_1_kib_or_less_is_sent_as_it_is(self):
        st, hdrs, body = self.fetch(self.SMALL, "gzip")
        self.assertEqual(st, 200)
        self.assertLessEqual(len(body), 1024)
        self.assertNotIn("content-encoding", hdrs)
        self.assertEqual(json.loads(body)["records_found"], 1)

    def test_head_has_the_gzipped_length_and_no_body(self):
        st, hdrs, body = self.fetch(self.PAGE, "gzip", method="HEAD")
        st2, hdrs2, body2 = self.fetch(self.PAGE, "gzip")
        self.assertEqual((st, st2), (200, 200))
        self.assertEqual(body, b"")
        self.assertEqual(hdrs["content-encoding"], "gzip")
        # the same page but for its fresh paging token, compressed alike
        self.assertLess(abs(int(hdrs["content-length"]) - len(body2)), 64)

    def test_the_catalog_and_errors_follow_the_same_rule(self):
        st, hdrs, body = self.fetch("/v7/breaches", "gzip")
        self.assertEqual(st, 200)
        st2, _, plain = self.fetch("/v7/breaches")
        if len(plain) > 1024:
            self.assertEqual(gzip.decompress(body), plain)
        else:
            self.assertEqual(body, plain)
        st, hdrs, body = self.fetch("/v7/breach-search?type=nope&account=x", "gzip")
        self.assertEqual(st, 422)
        self.assertNotIn("content-encoding", hdrs)  # a short error stays plain
        self.assertEqual(json.loads(body)["error"], "validation_error")


if __name__ == "__main__":
    unittest.main()
