"""GET /range/{prefix} for caches: every answer tagged with the store's range version (ETag,
304 on If-None-Match, Cache-Control by --range-auth), on both stores; and on PostgreSQL the
local snapshot (--range-snapshot-dir) that /range/ serves from, answering what the store
holds before and after an import, swapped when the range version moves, kept across a
restart and written again when it is not whole."""
import os
import re
import time
import unittest

from harness import STORE, Ctl, Server
from test_ranges import PW_NTLM, PW_SHA1, RECORDS, breaches, jsonl, lines, sha1

pg_only = unittest.skipIf(STORE != "pg", "the snapshot is PostgreSQL's")

PREFIXES = ["/range/5BAA6", "/range/8846F?mode=ntlm", "/range/" + sha1("letmein")[:5],
            "/range/00000", "/range/FFFFF?mode=ntlm"]
TAG = re.compile(r'W/"r(\d+)"')


def download(pairs):
    return "".join("%s:%d\r\n" % (h, n) for h, n in sorted(pairs))


class RangeTags(unittest.TestCase):
    """The range version as ETag and what a cache is told, on either store."""

    def setUp(self):
        self.ctl = Ctl().init()
        breaches(self.ctl)
        self.ctl.import_("records", self.ctl.write("r.jsonl", jsonl(RECORDS)),
                         extra=("--password-ranges",))
        self.servers = []

    def tearDown(self):
        for s in self.servers:
            self.assertEqual(s.stop(), 0)
        self.ctl.cleanup()

    def serve(self, *extra):
        s = Server(self.ctl, *extra)
        self.servers.append(s)
        return s

    def test_the_tag_is_the_range_version_and_names_a_304_until_an_import_moves_it(self):
        srv = self.serve("--range-auth", "none")
        st, h, body = srv.request("/range/5BAA6")
        self.assertEqual(st, 200, body)
        self.assertEqual(lines(body), [PW_SHA1[5:] + ":3"])
        m = TAG.fullmatch(h["etag"])
        self.assertTrue(m, h["etag"])
        self.assertEqual(h["cache-control"], "public, max-age=300")
        self.assertEqual(h["vary"], "Accept-Encoding, Add-Padding")
        tag = h["etag"]
        # the store's own record of it
        self.assertEqual(self.ctl.sql("SELECT value FROM meta WHERE key = 'range_version'"),
                         [[m.group(1)]])
        # the same version for every prefix and mode, and for a padded answer
        for path in PREFIXES:
            st, h, _ = srv.request(path, headers={"Add-Padding": "true"})
            self.assertEqual((st, h["etag"]), (200, tag), path)
        # revalidation: 304 with no body, the tag and the policy again
        for inm in (tag, '"other", ' + tag, "*"):
            st, h, body = srv.request("/range/5BAA6", headers={"If-None-Match": inm})
            self.assertEqual((st, body, h["etag"], h["cache-control"]),
                             (304, b"", tag, "public, max-age=300"), inm)
        st, _, body = srv.request("/range/5BAA6", headers={"If-None-Match": 'W/"r999999"'})
        self.assertEqual(st, 200)
        # an import that adds no password leaves the version alone
        self.ctl.import_("records", self.ctl.write("n.jsonl", jsonl(
            [{"breach_uuid": RECORDS[0]["breach_uuid"], "email": "x@one.example"}])),
            extra=("--password-ranges",))
        st, h, _ = srv.request("/range/5BAA6", headers={"If-None-Match": tag})
        self.assertEqual((st, h["etag"]), (304, tag))
        # one that changes a range moves it: the old tag gets the new answer
        self.ctl.import_("pwned-passwords", self.ctl.write("p.txt", download(
            [(PW_SHA1, 50), (sha1("letmein"), 4)])))
        st, h, body = srv.request("/range/5BAA6", headers={"If-None-Match": tag})
        self.assertEqual((st, lines(body)), (200, [PW_SHA1[5:] + ":50"]))
        self.assertNotEqual(h["etag"], tag)
        self.assertGreater(int(TAG.fullmatch(h["etag"]).group(1)), int(m.group(1)))
        st, h2, body = srv.request("/range/5BAA6", headers={"If-None-Match": h["etag"]})
        self.assertEqual((st, body), (304, b""))

    def test_an_answer_that_needs_a_key_is_the_client_s_alone(self):
        key = self.ctl.key("e2e")
        srv = self.serve()
        st, h, body = srv.request("/range/5BAA6", key=key)
        self.assertEqual(st, 200, body)
        self.assertEqual(h["cache-control"], "private, no-cache")
        self.assertTrue(TAG.fullmatch(h["etag"]), h["etag"])
        st, h2, body = srv.request("/range/5BAA6", key=key, headers={"If-None-Match": h["etag"]})
        self.assertEqual((st, body, h2["cache-control"]), (304, b"", "private, no-cache"))
        # no key: 401, untagged and not to be kept
        st, h, _ = srv.request("/range/5BAA6", headers={"If-None-Match": h["etag"]})
        self.assertEqual((st, h["cache-control"]), (401, "no-store"))
        self.assertNotIn("etag", h)

    def test_a_refused_request_carries_no_tag(self):
        srv = self.serve("--range-auth", "none")
        st, h, _ = srv.request("/range/5BAA")
        self.assertEqual((st, h["cache-control"]), (400, "no-store"))
        self.assertNotIn("etag", h)


@pg_only
class RangeSnapshot(unittest.TestCase):
    """/range/ from the local snapshot: the same answers as the store gives, before and after
    an import; the store's own bytes are not read once the snapshot serves."""

    def setUp(self):
        self.ctl = Ctl().init()
        breaches(self.ctl)
        self.ctl.import_("records", self.ctl.write("r.jsonl", jsonl(RECORDS)),
                         extra=("--password-ranges",))
        self.ctl.import_("pwned-passwords", self.ctl.write("p.txt", download(
            [(sha1("letmein"), 5), ("0" * 40, 2)])))
        self.ctl.import_("pwned-passwords", self.ctl.write("n.txt", download(
            [("FFFFF" + "1" * 27, 9)])))  # NTLM: the last bucket key
        self.dir = os.path.join(self.ctl.dir, "ranges")
        self.servers = []

    def tearDown(self):
        for s in self.servers:
            if s.proc.poll() is None:
                self.assertEqual(s.stop(), 0)
        self.ctl.cleanup()

    def serve(self, *extra):
        s = Server(self.ctl, "--range-auth", "none", *extra)
        self.servers.append(s)
        return s

    def version(self):
        return int(self.ctl.sql("SELECT value FROM meta WHERE key = 'range_version'")[0][0])

    def wait_log(self, srv, text, timeout=20):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if text in srv.log():
                return
            time.sleep(0.05)
        self.fail("no %r in the log:\n%s" % (text, srv.log()))

    def answers(self, srv):
        out = []
        for p in PREFIXES:
            st, h, body = srv.request(p)
            self.assertEqual(st, 200, body)
            out.append((lines(body), h["etag"]))
        return out

    def test_the_snapshot_answers_what_the_store_holds_and_swaps_at_an_import(self):
        store = self.serve()  # reads the store: the reference
        snap = self.serve("--range-snapshot-dir", self.dir)
        v1 = self.version()
        self.wait_log(snap, "range snapshot of range version %d written" % v1)
        self.assertTrue(os.path.isfile(os.path.join(self.dir, "ranges.snapshot")))
        want = self.answers(store)
        self.assertEqual(want[0][0], [PW_SHA1[5:] + ":3"])
        self.assertEqual(want[3][0], ["0" * 35 + ":2"])
        self.assertEqual({t for _, t in want}, {'W/"r%d"' % v1})
        self.assertEqual(self.answers(snap), want)
        # served from the map, not the table: a change behind breachd's back (no version
        # moved) shows on the store's reader only
        self.ctl.sql("UPDATE password_ranges SET hashes = ''::bytea WHERE bucket = %d"
                     % int("5BAA6", 16))
        self.assertEqual(lines(store.request("/range/5BAA6")[2]), [])
        self.assertEqual(lines(snap.request("/range/5BAA6")[2]), [PW_SHA1[5:] + ":3"])
        # an import moves the version: the snapshot is written again and swapped in
        self.ctl.import_("pwned-passwords", self.ctl.write("q.txt", download(
            [(PW_SHA1, 70), (sha1("letmein"), 6), ("F" * 40, 1)])))
        v2 = self.version()
        self.assertGreater(v2, v1)
        self.wait_log(snap, "range snapshot of range version %d written" % v2)
        want = self.answers(store)
        self.assertEqual(want[0][0], [PW_SHA1[5:] + ":70"])
        self.assertEqual(want[4][0], ["1" * 27 + ":9"])  # NTLM FFFFF kept
        self.assertEqual({t for _, t in want}, {'W/"r%d"' % v2})
        self.assertEqual(self.answers(snap), want)

    def test_a_restart_serves_the_file_left_and_rewrites_one_that_is_not_whole(self):
        snap = self.serve("--range-snapshot-dir", self.dir)
        v = self.version()
        self.wait_log(snap, "range snapshot of range version %d written" % v)
        want = self.answers(snap)
        self.assertEqual(snap.stop(), 0)
        path = os.path.join(self.dir, "ranges.snapshot")
        again = self.serve("--range-snapshot-dir", self.dir)
        self.wait_log(again, "serving /range/ from %s (range version %d)" % (path, v))
        self.assertNotIn("written", again.log())
        self.assertEqual(self.answers(again), want)
        self.assertEqual(again.stop(), 0)
        # one byte of the text changed: refused whole, written again from the store
        with open(path, "r+b") as f:
            f.seek(-3, os.SEEK_END)
            c = f.read(1)
            f.seek(-3, os.SEEK_END)
            f.write(bytes([c[0] ^ 0xFF]))
        third = self.serve("--range-snapshot-dir", self.dir)
        self.wait_log(third, "range snapshot of range version %d written" % v)
        self.assertIn("is not whole", third.log())
        self.assertEqual(self.answers(third), want)


if __name__ == "__main__":
    unittest.main()
