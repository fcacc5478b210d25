"""GET /range/{prefix}: Pwned Passwords k-anonymity ranges, fed by record imports that opt in
(--password-ranges) and by breachctl import pwned-passwords, on a real server and a store
built by the real CLI."""
import hashlib
import json
import os
import re
import unittest

from harness import Ctl, Server, ServerTest

B1 = "bbbbbbbb-0000-4000-8000-000000000001"
B2 = "bbbbbbbb-0000-4000-8000-000000000002"
PW_SHA1 = "5BAA61E4C9B93F3F0682250B6CF8331B7EE68FD8"  # SHA-1 of "password"
PW_NTLM = "8846F7EAEE8FB117AD06BDD830B7586C"  # NTLM of "password"


def sha1(pw):
    return hashlib.sha1(pw.encode()).hexdigest().upper()


def jsonl(rows):
    return "".join(json.dumps(r) + "\n" for r in rows)


def breaches(ctl):
    ctl.import_("breaches", ctl.write("b.jsonl", jsonl([
        {"uuid": B1, "source_name": "One", "date_leaked": "2020-01-01"},
        {"uuid": B2, "source_name": "Two", "date_leaked": "2021-01-01"}])))


RECORDS = [
    {"breach_uuid": B1, "email": "a@one.example", "password": "password"},
    {"breach_uuid": B1, "email": "b@one.example", "password": "password"},
    {"breach_uuid": B2, "email": "a@one.example", "password": "password"},
    {"breach_uuid": B2, "email": "c@one.example", "password": "Tr0ub4dor&3"},
    {"breach_uuid": B2, "email": "d@one.example"},  # no password
]


def lines(body):
    """The answer's lines; asserts CRLF between them and none at the end, as HIBP does."""
    text = body.decode("ascii")
    assert not text.endswith("\n"), text[-5:]
    assert "\n" not in text.replace("\r\n", ""), "a line break other than CRLF"
    return text.split("\r\n") if text else []


class Ranges(ServerTest):
    """A store of records with passwords, served with --range-auth none."""

    @classmethod
    def populate(cls, ctl):
        breaches(ctl)
        f = ctl.write("r.jsonl", jsonl(RECORDS))
        ctl.import_("records", f, extra=("--password-ranges",))
        # the same file again: duplicates, so no count moves
        ctl.import_("records", f, extra=("--password-ranges",))

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.srv.stop()
        cls.srv = Server(cls.ctl, "--range-auth", "none")

    def range(self, path, headers=None):
        st, hdrs, body = self.srv.request(path, headers=headers)
        self.assertEqual(st, 200, body)
        self.assertEqual(hdrs["content-type"], "text/plain")
        return lines(body)

    def test_sha1_range_of_password_holds_its_suffix_with_the_records_that_went_in(self):
        got = self.range("/range/5BAA6")
        self.assertEqual(got, [PW_SHA1[5:] + ":3"])

    def test_prefix_is_case_insensitive_and_answers_under_the_base_path_too(self):
        want = [PW_SHA1[5:] + ":3"]
        self.assertEqual(self.range("/range/5baa6"), want)
        self.assertEqual(self.range("/v7/range/5bAa6"), want)
        self.assertEqual(self.range("/range/5BAA6?mode=sha1"), want)

    def test_ntlm_range_of_password(self):
        self.assertEqual(self.range("/range/8846F?mode=ntlm"), [PW_NTLM[5:] + ":3"])
        self.assertEqual(self.range("/range/8846f?mode=ntlm"), [PW_NTLM[5:] + ":3"])

    def test_each_password_lands_in_its_own_range_only(self):
        other = sha1("Tr0ub4dor&3")
        self.assertEqual(self.range("/range/" + other[:5]), [other[5:] + ":1"])
        self.assertEqual(self.range("/range/00000"), [])

    def test_padding_fills_800_to_1000_sorted_lines_with_zero_counts_around_the_real_one(self):
        sizes = set()
        for _ in range(5):
            got = self.range("/range/5BAA6", headers={"Add-Padding": "true"})
            self.assertTrue(800 <= len(got) <= 1000, len(got))
            sizes.add(len(got))
            self.assertIn(PW_SHA1[5:] + ":3", got)
            suffixes = [line.split(":")[0] for line in got]
            self.assertEqual(suffixes, sorted(suffixes))
            self.assertEqual(len(set(suffixes)), len(suffixes))
            for line in got:
                self.assertRegex(line, r"^[0-9A-F]{35}:\d+$")
                if line != PW_SHA1[5:] + ":3":
                    self.assertTrue(line.endswith(":0"), line)
        self.assertGreater(len(sizes), 1)  # the total is random
        ntlm = self.range("/range/8846F?mode=ntlm", headers={"add-padding": "TRUE"})
        self.assertTrue(800 <= len(ntlm) <= 1000)
        self.assertTrue(all(re.match(r"^[0-9A-F]{27}:\d+$", line) for line in ntlm))
        self.assertIn(PW_NTLM[5:] + ":3", ntlm)

    def test_bad_prefixes_and_modes_are_400_with_our_error_body(self):
        for path in ("/range/XYZ12", "/range/5BAA", "/range/5BAA61", "/range/", "/range/5BA%20A",
                     "/range/5BAA6/x", "/v7/range/5BAA"):
            self.assertError(path, 400, "bad_request", key=None)
        msg = self.assertError("/range/5BAA6?mode=bogus", 400, "bad_request", key=None)
        self.assertNotIn("bogus", msg)
        self.assertError("/range/5BAA6?mode=sha1&mode=ntlm", 400, "bad_request", key=None)
        self.assertError("/range/5BAA6?moda=ntlm", 400, "bad_request", key=None)

    def test_other_methods_are_405(self):
        st, hdrs, _ = self.srv.request("/range/5BAA6", method="POST")
        self.assertEqual(st, 405)
        self.assertEqual(hdrs["allow"], "GET, HEAD")

    def test_head_answers_without_a_body(self):
        st, hdrs, body = self.srv.request("/range/5BAA6", method="HEAD")
        self.assertEqual((st, body), (200, b""))

    def test_metrics_count_the_range_route(self):
        self.range("/range/5BAA6")
        st, _, body = self.srv.request("/metrics")
        self.assertEqual(st, 200)
        self.assertRegex(body.decode(), r'breachd_requests_total\{route="range",status="200"\} \d+')


class RangeAuth(unittest.TestCase):
    """--range-auth key (the default): the API's keys and budgets, in x-api-key or
    hibp-api-key; none: no key asked, while the rest of the API still wants one."""

    @classmethod
    def setUpClass(cls):
        cls.ctl = Ctl().init()
        breaches(cls.ctl)
        cls.ctl.import_("records", cls.ctl.write("r.jsonl", jsonl(RECORDS)),
                        extra=("--password-ranges",))
        cls.key = cls.ctl.key("hibp", "--rate", "3/h")

    @classmethod
    def tearDownClass(cls):
        cls.ctl.cleanup()

    def test_key_mode_wants_a_key_in_either_header_and_spends_its_budget(self):
        srv = Server(self.ctl)
        try:
            st, _ = srv.get("/range/5BAA6")
            self.assertEqual(st, 401)
            st, _ = srv.get("/range/5BAA6", key="not-a-key")
            self.assertEqual(st, 401)  # as HIBP answers a bad key (and /api/v3 does)
            st, hdrs, body = srv.request("/range/5BAA6", key=self.key)
            self.assertEqual((st, lines(body)), (200, [PW_SHA1[5:] + ":3"]))
            self.assertEqual(hdrs["x-ratelimit-limit"], "3")
            st, hdrs, body = srv.request("/v7/range/5BAA6", headers={"hibp-api-key": self.key})
            self.assertEqual((st, lines(body)), (200, [PW_SHA1[5:] + ":3"]))
            self.assertEqual(hdrs["x-ratelimit-remaining"], "1")
            srv.request("/range/5BAA6", key=self.key)
            st, _ = srv.get("/range/5BAA6", key=self.key)
            self.assertEqual(st, 429)
        finally:
            self.assertEqual(srv.stop(), 0)

    def test_none_mode_answers_without_a_key_and_keeps_the_api_keyed(self):
        srv = Server(self.ctl, "--range-auth", "none")
        try:
            st, hdrs, body = srv.request("/range/5BAA6")
            self.assertEqual((st, lines(body)), (200, [PW_SHA1[5:] + ":3"]))
            self.assertNotIn("x-ratelimit-limit", hdrs)
            st, _ = srv.get("/v7/breaches")
            self.assertEqual(st, 401)
        finally:
            self.assertEqual(srv.stop(), 0)

    def test_a_bad_range_auth_value_is_a_usage_error(self):
        import subprocess
        from harness import binary
        p = subprocess.run([binary("breachd"), *self.ctl.store_args(), "--range-auth", "maybe"],
                           capture_output=True, timeout=30)
        self.assertEqual(p.returncode, 2, p.stderr)


class RangeImports(unittest.TestCase):
    """What imports put in the ranges: a records import only with --password-ranges, and Pwned
    Passwords downloads in both layouts, plain and gzipped, whose re-import changes nothing."""

    def setUp(self):
        self.ctl = Ctl().init()
        breaches(self.ctl)

    def tearDown(self):
        self.ctl.cleanup()

    def serve(self):
        return Server(self.ctl, "--range-auth", "none")

    def ranges(self, *paths):
        srv = self.serve()
        try:
            out = []
            for p in paths:
                st, _, body = srv.request(p)
                self.assertEqual(st, 200, body)
                out.append(lines(body))
            return out
        finally:
            self.assertEqual(srv.stop(), 0)

    def test_records_count_in_the_ranges_only_with_password_ranges(self):
        f = self.ctl.write("r.jsonl", jsonl(RECORDS[:2]))
        p = self.ctl.import_("records", f)  # the default: the ranges are left out
        self.assertIn(b"imported 2", p.stderr)
        self.assertEqual(self.ctl.sql("SELECT count(*) FROM password_ranges"), [["0"]])
        self.assertEqual(self.ranges("/range/5BAA6", "/range/8846F?mode=ntlm"), [[], []])
        # all duplicates now: nothing counted, with the option either
        self.ctl.import_("records", f, extra=("--password-ranges",))
        self.assertEqual(self.ranges("/range/5BAA6"), [[]])
        g = self.ctl.write("s.jsonl", jsonl(RECORDS[2:]))
        p = self.ctl.import_("records", g, extra=("--no-password-ranges",))  # still accepted
        self.assertIn(b"imported 3", p.stderr)
        self.assertEqual(self.ranges("/range/5BAA6"), [[]])
        h = self.ctl.write("t.jsonl", jsonl([dict(r, email="n" + r["email"]) for r in RECORDS]))
        self.ctl.import_("records", h, extra=("--password-ranges",))
        self.assertEqual(self.ranges("/range/5BAA6", "/range/8846F?mode=ntlm"),
                         [[PW_SHA1[5:] + ":3"], [PW_NTLM[5:] + ":3"]])
        p = self.ctl.import_("records", h, check=2,
                             extra=("--password-ranges", "--no-password-ranges"))
        self.assertIn(b"give --password-ranges or --no-password-ranges, not both", p.stderr)

    def test_a_sha1_download_loads_and_a_second_load_keeps_the_counts(self):
        text = "".join("%s:%d\r\n" % (h, n) for h, n in sorted([
            (PW_SHA1, 10437277), (sha1("letmein"), 5), ("5BAA6" + "0" * 35, 1)]))
        f = self.ctl.write("pwned-sha1.txt", text)
        p = self.ctl.import_("pwned-passwords", f)
        self.assertIn(b"read 3, imported 3, rejected 0", p.stderr)
        self.ctl.import_("pwned-passwords", self.ctl.write("again.txt.gz", text, compress=True))
        got = self.ranges("/range/5BAA6", "/range/" + sha1("letmein")[:5])
        self.assertEqual(got, [["0" * 35 + ":1", PW_SHA1[5:] + ":10437277"],
                               [sha1("letmein")[5:] + ":5"]])
        # a breach import that opts in then adds to the download's total
        self.ctl.import_("records", self.ctl.write("r.jsonl", jsonl(RECORDS[:1])),
                         extra=("--password-ranges",))
        self.assertEqual(self.ranges("/range/5BAA6")[0][1], PW_SHA1[5:] + ":10437278")

    def test_an_ntlm_download_is_detected_and_bad_lines_are_rejected_by_number(self):
        text = "%s:7\n\nnot a line\n%s:0\n%s:8\n%s:x\n" % (
            PW_NTLM, "1" * 32, PW_SHA1, "2" * 32)
        f = self.ctl.write("pwned-ntlm.txt", text)
        p = self.ctl.import_("pwned-passwords", f, check=1)
        err = p.stderr.decode()
        self.assertIn("read 5, imported 1, rejected 4", err)
        self.assertIn("pwned-ntlm.txt:3: rejected: expected HASH:COUNT", err)
        self.assertIn("pwned-ntlm.txt:4: rejected: the count is 0", err)
        self.assertIn("pwned-ntlm.txt:5: rejected: not an NTLM hash", err)
        self.assertIn("pwned-ntlm.txt:6: rejected: the count is not a whole number", err)
        self.assertNotIn(PW_SHA1, err)  # no hash is ever quoted back
        self.assertEqual(self.ranges("/range/8846F?mode=ntlm", "/range/5BAA6"),
                         [[PW_NTLM[5:] + ":7"], []])

    def test_mode_given_rejects_the_other_length(self):
        f = self.ctl.write("p.txt", "%s:3\n%s:4\n" % (PW_SHA1, PW_NTLM))
        p = self.ctl.import_("pwned-passwords", f, check=1, extra=("--mode", "ntlm"))
        self.assertIn(b"imported 1, rejected 1", p.stderr)
        self.assertEqual(self.ranges("/range/8846F?mode=ntlm"), [[PW_NTLM[5:] + ":4"]])
        p = self.ctl.import_("pwned-passwords", f, check=2, extra=("--mode", "md5"))

    def test_the_per_prefix_layout_loads_each_file_under_its_prefix(self):
        d = os.path.join(self.ctl.dir, "ranges")
        os.mkdir(d)
        with open(os.path.join(d, "5BAA6.txt"), "w") as out:
            out.write("%s:12\r\n%s:2\r\n" % ("0" * 35, PW_SHA1[5:]))
        with open(os.path.join(d, "00000"), "w") as out:
            out.write("%s:1\n" % ("A" * 35))
        with open(os.path.join(d, "README"), "w") as out:
            out.write("not a range file\n")
        p = self.ctl.import_("pwned-passwords", d)
        self.assertIn(b"read 3, imported 3, rejected 0", p.stderr)
        self.ctl.import_("pwned-passwords", d)
        got = self.ranges("/range/5BAA6", "/range/00000")
        self.assertEqual(got, [["0" * 35 + ":12", PW_SHA1[5:] + ":2"], ["A" * 35 + ":1"]])


if __name__ == "__main__":
    unittest.main()
