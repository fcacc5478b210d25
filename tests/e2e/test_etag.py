"""ETag and If-None-Match on the replies a client may revalidate: the catalog, one breach,
the HIBP catalog, one HIBP breach and the data classes."""
import json
import unittest

from harness import ServerTest, Server, fixture

CATALOG = "/v7/breaches"


class Etag(ServerTest):
    @classmethod
    def populate(cls, ctl):
        ctl.import_("breaches", fixture("breaches.jsonl"))
        with open(fixture("breaches.jsonl")) as f:
            cls.uuid = json.loads(f.readline())["uuid"]

    def fetch(self, path, inm=None, method="GET", ae=None):
        h = {}
        if inm is not None:
            h["If-None-Match"] = inm
        if ae:
            h["Accept-Encoding"] = ae
        return self.srv.request(path, key=self.key, method=method, headers=h)

    def paths(self):
        st, _, body = self.fetch("/api/v3/breaches")
        name = json.loads(body)[0]["Name"]
        return [CATALOG, CATALOG + "?number_of_records=1", "/v7/breaches/" + self.uuid,
                "/api/v3/breaches", "/api/v3/breach/" + name, "/api/v3/dataclasses"]

    def test_each_revalidated_reply_has_a_stable_weak_tag_and_may_be_kept(self):
        for path in self.paths():
            st, hdrs, body = self.fetch(path)
            self.assertEqual(st, 200, path)
            self.assertRegex(hdrs["etag"], r'^W/"[0-9a-f]{32}"$', path)
            self.assertEqual(hdrs["cache-control"], "private, no-cache", path)
            st2, hdrs2, body2 = self.fetch(path)
            self.assertEqual((hdrs2["etag"], body2), (hdrs["etag"], body), path)

    def test_a_matching_if_none_match_gets_304_without_a_body(self):
        for path in self.paths():
            tag = self.fetch(path)[1]["etag"]
            strong = tag[2:]
            for inm in (tag, strong, '"other", ' + tag, "*", 'W/"x",W/"y" ,' + strong):
                st, hdrs, body = self.fetch(path, inm)
                self.assertEqual(st, 304, (path, inm))
                self.assertEqual(body, b"", (path, inm))
                self.assertEqual(hdrs["etag"], tag)
                self.assertNotIn("content-type", hdrs)
            st, hdrs, body = self.fetch(path, tag, method="HEAD")
            self.assertEqual((st, body), (304, b""))

    def test_another_tag_or_garbage_gets_the_whole_reply(self):
        st, hdrs, body = self.fetch(CATALOG)
        for inm in ('W/"00000000000000000000000000000000"', "", "garbage", hdrs["etag"][:-2] + '"'):
            st2, hdrs2, body2 = self.fetch(CATALOG, inm)
            self.assertEqual((st2, body2), (200, body), inm)

    def test_different_replies_have_different_tags_and_searches_have_none(self):
        a = self.fetch(CATALOG)[1]["etag"]
        b = self.fetch(CATALOG + "?number_of_records=1")[1]["etag"]
        self.assertNotEqual(a, b)
        st, hdrs, _ = self.fetch("/v7/breach-search?type=email&account=nobody@nowhere.example")
        self.assertNotIn("etag", hdrs)
        self.assertEqual(hdrs["cache-control"], "no-store")
        st, hdrs, _ = self.fetch("/v7/breaches/00000000-0000-4000-8000-000000000000")
        self.assertEqual(st, 404)
        self.assertNotIn("etag", hdrs)

    def test_the_tag_is_the_same_gzipped_and_on_another_instance(self):
        tag = self.fetch(CATALOG)[1]["etag"]
        self.assertEqual(self.fetch(CATALOG, ae="gzip")[1]["etag"], tag)
        other = Server(self.ctl)
        try:
            st, hdrs, _ = other.request(CATALOG, key=self.key)
            self.assertEqual(hdrs["etag"], tag)
            st, _, _ = other.request(CATALOG, key=self.key, headers={"If-None-Match": tag})
            self.assertEqual(st, 304)
        finally:
            self.assertEqual(other.stop(), 0)

    def test_a_new_breach_changes_the_catalog_tag(self):
        tag = self.fetch(CATALOG)[1]["etag"]
        self.ctl.import_("breaches", self.ctl.write("more.jsonl", json.dumps(
            {"uuid": "bbbbbbbb-0000-4000-8000-00000000e7a9", "source_name": "Etag Test",
             "date_leaked": "2001-01-01"}) + "\n"))
        st, hdrs, _ = self.fetch(CATALOG, tag)
        self.assertEqual(st, 200)
        self.assertNotEqual(hdrs["etag"], tag)


if __name__ == "__main__":
    unittest.main()
