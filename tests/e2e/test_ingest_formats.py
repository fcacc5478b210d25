"""breachctl import formats: combo lists, stealer logs, CSV/TSV with --map, --columns and
--drop-unmapped, compressed inputs (magic bytes win), UTF-8 (--lossy), BOM and CRLF,
--dry-run, and several files, directories and globs in one command. Exact stored values are
read back from the store, so the same assertions hold on SQLite and PostgreSQL."""
import bz2
import gzip
import lzma
import os
import shutil
import subprocess
import unittest
import zlib

from harness import Ctl, binary, fixture

BREACH = "22222222-2222-4222-8222-222222222222"
ROWS = ("SELECT COALESCE(email, '-'), COALESCE(user_name, '-'), COALESCE(password_masked, '-'), "
        "COALESCE(ip_address, '-'), COALESCE(other_attributes, '-') FROM records ORDER BY id")


def zstd_frame(data):
    """A zstd frame holding data in one raw block (RFC 8878), made without a zstd library:
    single segment, a one-byte content size, no checksum."""
    assert len(data) < 256
    block = 1 | (len(data) << 3)  # last block, raw
    return (b"\x28\xb5\x2f\xfd" + bytes([0x20, len(data)]) +
            block.to_bytes(3, "little") + data)


def xz_declaring(code, data):
    """An xz stream of data whose block header declares an LZMA2 dictionary of
    (2 | (code & 1)) << (code // 2 + 11) bytes, its CRC32 made right again."""
    z = bytearray(lzma.compress(data, preset=1))  # a 1 MiB dictionary
    size, flags, p = (z[12] + 1) * 4, z[13], 14
    for bit in (0x40, 0x80):  # compressed and uncompressed sizes, when present
        if flags & bit:
            while z[p] & 0x80:
                p += 1
            p += 1
    assert z[p:p + 2] == b"\x21\x01", z[12:12 + size]  # LZMA2, one byte of properties
    z[p + 2] = code
    z[12 + size - 4:12 + size] = zlib.crc32(bytes(z[12:12 + size - 4])).to_bytes(4, "little")
    return bytes(z)


class Formats(unittest.TestCase):
    def setUp(self):
        self.ctl = Ctl().init()
        self.ctl.import_("breaches", fixture("breaches.jsonl"))

    def tearDown(self):
        self.ctl.cleanup()

    def rows(self):
        return [tuple(r) for r in self.ctl.sql(ROWS)]

    def records(self, *files, check=0, extra=()):
        p = self.ctl.import_("records", *files, check=check, extra=("--breach", BREACH) + extra)
        return p.stderr.decode()

    # ---- combo lists ------------------------------------------------------------------

    def test_combo_splits_at_the_first_separator_and_rejects_bad_logins_by_line(self):
        text = ("ann@example.com:pa:ss\n"   # the password keeps its ':'
                "bob:hunter2\n"
                "\n"
                "no separator here\n"
                ":empty-login\n"
                "bad@:pw\n"
                "carol:\n")
        err = self.records(self.ctl.write("c.txt", text), check=1, extra=("--format", "combo"))
        self.assertIn("c.txt:4: rejected: no separator on the line (login, separator, password "
                      "expected)\n", err)
        self.assertIn("c.txt:5: rejected: the login before the separator is empty\n", err)
        self.assertIn("c.txt:6: rejected: email: an email address must look like "
                      "name@example.com\n", err)
        self.assertIn("c.txt:7: rejected: the password after the separator is empty\n", err)
        self.assertIn("c.txt: read 6, imported 2, duplicates 0, rejected 4\n", err)
        # a file's records are written by email domain, then email: bob's (none) first
        self.assertEqual(self.rows(), [("-", "bob", "*****r2", "-", "-"),
                                       ("ann@example.com", "-", "***ss", "-", "-")])
        for secret in ("pa:ss", "hunter2", "empty-login"):
            self.assertNotIn(secret, err)

    def test_combo_separator_is_detected_per_file_or_given(self):
        a = self.ctl.write("a.txt", "ann@example.com;pw:1\nbob;pw2\n")
        b = self.ctl.write("b.txt", "carol|pw|3\ndave|pw4\n")
        t = self.ctl.write("t.txt", "erin\tpw5\n")
        err = self.records(a, b, t, extra=("--format", "combo"))
        self.assertIn("total: read 5, imported 5, duplicates 0, rejected 0\n", err)
        self.assertEqual([r[:3] for r in self.rows()], [
            ("-", "bob", "*w2"), ("ann@example.com", "-", "**:1"),
            ("-", "carol", "**|3"), ("-", "dave", "*w4"), ("-", "erin", "*w5")])
        # given, the separator is not detected: ';' then splits "frank:x;y" at the ';'
        f = self.ctl.write("f.txt", "frank:x;wxyz\n")
        self.records(f, extra=("--format", "combo", "--separator", ";"))
        self.assertEqual(self.rows()[-1][:3], ("-", "frank:x", "**yz"))

    def test_combo_needs_a_breach_and_records(self):
        f = self.ctl.write("c.txt", "ann@example.com:pw\n")
        p = self.ctl.import_("records", f, "--format", "combo", check=2)
        self.assertIn(b"need --breach UUID", p.stderr)
        p = self.ctl.import_("cards", f, "--format", "combo", "--breach", BREACH, check=2)
        self.assertIn(b"need --breach UUID", p.stderr)
        p = self.ctl.import_("records", self.ctl.write("n.txt", "nothing\nhere\n"),
                             "--format", "combo", "--breach", BREACH, check=2)
        self.assertIn(b"cannot tell the separator of", p.stderr)

    # ---- stealer logs -----------------------------------------------------------------

    def test_stealer_lines_in_each_separator_keep_the_site(self):
        text = ("https://Shop.Example.com:8443/login:ann@example.com:pw:1\n"
                "android://key==@com.example.app/|bob|p|w\n"
                "http://forum.example.org/x carol pass word\n"
                "example.net:dave:pw4\n"
                "not a url at all\n"
                "https://example.com/only\n")
        err = self.records(self.ctl.write("s.txt", text), check=1, extra=("--format", "stealer"))
        self.assertIn("s.txt:5: rejected: the line does not start with a URL (a scheme like "
                      "https:// or a host)\n", err)
        self.assertIn("s.txt:6: rejected: no separator after the URL (URL, login, password "
                      "expected)\n", err)
        self.assertIn("s.txt: read 6, imported 4, duplicates 0, rejected 2\n", err)
        self.assertEqual(self.rows(), [
            ("-", "bob", "*|w", "-", '{"site":"com.example.app"}'),
            ("-", "carol", "*******rd", "-", '{"site":"forum.example.org"}'),
            ("-", "dave", "*w4", "-", '{"site":"example.net"}'),
            ("ann@example.com", "-", "**:1", "-", '{"site":"shop.example.com"}')])

    # ---- CSV and TSV: --map, --columns, --drop-unmapped --------------------------------

    def test_csv_map_renames_and_keeps_unmapped_columns_in_other_attributes(self):
        csv = ("Mail,Pass,IP,City,user_name\n"
               "ann@example.com,hunter2,192.0.2.1,Paris,ann\n"
               "bob@example.com,pw,198.51.100.7,,\n")
        f = self.ctl.write("m.csv", csv)
        err = self.records(f, extra=("--map", "Mail=email,Pass=password,IP=ip_address"))
        self.assertIn("m.csv: read 2, imported 2, duplicates 0, rejected 0\n", err)
        self.assertEqual(self.rows(), [
            ("ann@example.com", "ann", "*****r2", "192.0.2.1", '{"City":"Paris"}'),
            ("bob@example.com", "-", "**", "198.51.100.7", "-")])

    def test_csv_drop_unmapped_drops_the_other_columns(self):
        csv = "Mail,Junk,Pass\nann@example.com,x,hunter2\n"
        self.records(self.ctl.write("d.csv", csv),
                     extra=("--map", "Mail=email,Pass=password", "--drop-unmapped"))
        self.assertEqual(self.rows(), [("ann@example.com", "-", "*****r2", "-", "-")])

    def test_map_errors_stop_before_any_row(self):
        f = self.ctl.write("e.csv", "Mail,Pass\nann@example.com,pw\n")
        p = self.ctl.import_("records", f, "--breach", BREACH, "--map", "Email=email", check=2)
        self.assertIn(b"--map: the file has no column 'Email'", p.stderr)
        p = self.ctl.import_("records", f, "--breach", BREACH, "--map", "Mail=colour", check=2)
        self.assertIn(b"--map: 'colour' is not a field of this import", p.stderr)
        p = self.ctl.import_("records", f, "--breach", BREACH, "--map", "Mail", check=2)
        self.assertIn(b"--map: pair 1 has no '=' (Column=field expected)", p.stderr)
        self.assertEqual(self.rows(), [])

    def test_cards_through_a_map(self):
        csv = ("Card,When,Holder,Extra\n"
               "4111 1111 1111 1111,2024-01-01 10:00:00,John Smith,x\n")
        f = self.ctl.write("cards.csv", csv)
        p = self.ctl.import_("cards", f, "--map", "Card=number,When=createdAt,Holder=owner",
                             check=2)
        self.assertIn(b"this import has no other_attributes for the unmapped columns", p.stderr)
        p = self.ctl.import_("cards", f, "--map", "Card=number,When=createdAt,Holder=owner",
                             "--drop-unmapped", check=0)
        self.assertIn(b"read 1, imported 1, duplicates 0, rejected 0", p.stderr)
        self.assertEqual(self.ctl.sql("SELECT number_masked, owner, created_at FROM cards"),
                         [["411111XXXXXX1111", "John Smith", "2024-01-01 10:00:00"]])

    def test_tsv_with_columns_for_a_headerless_file(self):
        tsv = 'ann@example.com\t"quoted" pw\t203.0.113.9\r\nbob@example.com\tpw2\t\r\n'
        f = self.ctl.write("h.tsv", tsv)
        err = self.records(f, extra=("--columns", "email,password,ip_address"))
        self.assertIn("h.tsv: read 2, imported 2, duplicates 0, rejected 0\n", err)
        self.assertEqual(self.rows(), [
            ("ann@example.com", "-", "*********pw", "203.0.113.9", "-"),
            ("bob@example.com", "-", "*w2", "-", "-")])
        # --format tsv for a name that says nothing, with a header row and a map
        g = self.ctl.write("dump.txt", "E\tP\tCountry\ncarol@example.com\tpw3\tFR\n")
        self.records(g, extra=("--format", "tsv", "--map", "E=email,P=password"))
        self.assertEqual(self.rows()[-1], ("carol@example.com", "-", "*w3", "-",
                                           '{"Country":"FR"}'))

    # ---- compression ------------------------------------------------------------------

    def test_every_compression_kind_by_magic_bytes(self):
        text = b"ann@example.com:pw1\nbob:pw2\n"
        files = []
        for name, data in (("c.gz", gzip.compress(text)), ("c.zst", zstd_frame(text)),
                           ("c.xz", lzma.compress(text)), ("c.bz2", bz2.compress(text)),
                           ("gzip-without-extension", gzip.compress(text)),
                           ("plain.gz", text)):  # a plain file named .gz stays plain
            files.append(self.ctl.write(name, data))
        for f in files:
            p = self.ctl.import_("records", f, "--format", "combo", "--breach", BREACH, check=0)
            want = "read 2, imported %d, duplicates %d, rejected 0" % (
                (2, 0) if f == files[0] else (0, 2))
            self.assertIn(want, p.stderr.decode(), f)
        self.assertEqual([r[:3] for r in self.rows()],
                         [("-", "bob", "*w2"), ("ann@example.com", "-", "*w1")])
        if shutil.which("zstd"):  # and a frame the zstd program compressed
            z = self.ctl.write("z.txt", b"carol:pw3\n" * 1000)
            subprocess.run(["zstd", "-q", "-f", z, "-o", z + ".zst"], check=True)
            p = self.ctl.import_("records", z + ".zst", "--format", "combo", "--breach", BREACH,
                                 check=0)
            self.assertIn(b"read 1000, imported 1, duplicates 999, rejected 0", p.stderr)

    def test_compressed_csv_and_jsonl_by_extension_and_a_corrupt_stream(self):
        csv = b"email,password\nann@example.com,pw1\n"
        self.ctl.import_("records", self.ctl.write("r.csv.xz", lzma.compress(csv)),
                         "--breach", BREACH, check=0)
        jsonl = b'{"email":"bob@example.com","password":"pw2"}\n'
        self.ctl.import_("records", self.ctl.write("r.jsonl.bz2", bz2.compress(jsonl)),
                         "--breach", BREACH, check=0)
        self.assertEqual([r[:3] for r in self.rows()],
                         [("ann@example.com", "-", "*w1"), ("bob@example.com", "-", "*w2")])
        lines = b"".join(b"carol%d:%s\n" % (i, os.urandom(8).hex().encode())
                         for i in range(5000))
        whole = gzip.compress(lines)
        cut = whole[:len(whole) // 2]
        p = self.ctl.import_("records", self.ctl.write("cut.gz", cut), "--format", "combo",
                             "--breach", BREACH, check=2)
        self.assertIn(b"unexpected end of file (the gzip data is truncated)", p.stderr)

    def test_decompression_memory_is_limited(self):
        text = b"ann@example.com:pw1\n"
        huge = self.ctl.write("huge.xz", xz_declaring(34, text))  # a 512 MiB dictionary
        combo = ("--format", "combo", "--breach", BREACH)
        p = self.ctl.import_("records", huge, *combo, check=2)
        self.assertIn(b"huge.xz: read 0, imported 0, duplicates 0, rejected 0\n"
                      b"breachctl import: decompression failed: the xz data needs 513 MiB of "
                      b"memory, more than the limit of 256 MiB (--decompress-memory-limit "
                      b"raises it)\n", p.stderr)
        honest = self.ctl.write("honest.xz", xz_declaring(16, text))  # 1 MiB, as made
        p = self.ctl.import_("records", honest, *combo, "--decompress-memory-limit", "1",
                             check=2)
        self.assertIn(b"the xz data needs 2 MiB of memory, more than the limit of 1 MiB",
                      p.stderr)
        p = self.ctl.import_("records", honest, *combo, "--decompress-memory-limit", "2")
        self.assertIn(b"honest.xz: read 1, imported 1, duplicates 0, rejected 0\n", p.stderr)
        self.assertEqual([r[:3] for r in self.rows()], [("ann@example.com", "-", "*w1")])
        for bad in ("0", "65537", "1.5", "-1", "1M", ""):
            p = self.ctl.import_("records", honest, *combo, "--decompress-memory-limit", bad,
                                 check=2)
            self.assertEqual(p.stderr, b"breachctl import: --decompress-memory-limit is a "
                                       b"number of MiB from 1 to 65536\n", bad)
        p = self.ctl.import_("pwned-passwords", honest, "--decompress-memory-limit", "64",
                             check=2)
        self.assertIn(b"pwned-passwords takes none of", p.stderr)

    # ---- encodings, BOM and CRLF -------------------------------------------------------

    def test_invalid_utf8_is_rejected_by_line_or_repaired_with_lossy(self):
        data = b"ann@example.com:pw\xff1\nbob:fine\n"
        f = self.ctl.write("u.txt", data)
        err = self.records(f, check=1, extra=("--format", "combo"))
        self.assertIn("u.txt:1: rejected: password is not valid UTF-8 (--lossy stores it with "
                      "U+FFFD)\n", err)
        self.assertIn("u.txt: read 2, imported 1, duplicates 0, rejected 1\n", err)
        err = self.records(f, extra=("--format", "combo", "--lossy"))
        self.assertIn("u.txt: read 2, imported 1, duplicates 1, rejected 0\n", err)
        self.assertEqual([r[:3] for r in self.rows()],
                         [("-", "bob", "**ne"), ("ann@example.com", "-", "**\ufffd1")])
        csv = b"email,first_name\ncarol@example.com,Jos\xe9\n"
        c = self.ctl.write("l.csv", csv)
        err = self.records(c, check=1)
        self.assertIn("l.csv:2: rejected: first_name is not valid UTF-8", err)
        self.records(c, extra=("--lossy",))
        self.assertEqual(self.ctl.sql("SELECT first_name FROM records WHERE email = "
                                      "'carol@example.com'"), [["Jos\ufffd"]])
        # a headerless file's first row stands as its header: a name that may be a password
        # is not quoted back, only its number
        h = self.ctl.write("hl.csv", b"x@example.com,hunter2\nbob@example.com,p\xffw\n")
        err = self.records(h, check=1)
        self.assertIn("hl.csv:2: rejected: field number 2 is not valid UTF-8 (--lossy stores it "
                      "with U+FFFD)\n", err)
        self.assertNotIn("hunter2", err)

    def test_bom_and_crlf_in_every_format(self):
        bom = b"\xef\xbb\xbf"
        inputs = [
            ("b.jsonl", b'{"email":"a1@example.com","password":"pw"}\r\n', ()),
            ("b.csv", b"email,password\r\na2@example.com,pw\r\n", ()),
            ("b.tsv", b"email\tpassword\r\na3@example.com\tpw\r\n", ()),
            ("b.txt", b"a4@example.com:pw\r\n", ("--format", "combo")),
            ("s.txt", b"https://example.com/:a5@example.com:pw\r\n", ("--format", "stealer")),
        ]
        for name, data, extra in inputs:
            err = self.records(self.ctl.write(name, bom + data), extra=extra)
            self.assertIn("%s: read 1, imported 1, duplicates 0, rejected 0\n" % name, err)
        self.assertEqual([r[:3] for r in self.rows()],
                         [("a%d@example.com" % i, "-", "**") for i in range(1, 6)])

    # ---- dry run ----------------------------------------------------------------------

    def test_dry_run_counts_and_reports_but_writes_nothing(self):
        f = self.ctl.write("c.txt", "ann@example.com:pw\nbad-line\nbob:pw2\n")
        before = self.ctl.sql("SELECT COUNT(*) FROM records")
        p = self.ctl.import_("records", f, "--format", "combo", "--breach", BREACH,
                             "--dry-run", check=1)
        err = p.stderr.decode()
        self.assertIn("c.txt:2: rejected: no separator on the line", err)
        self.assertIn("c.txt: read 3, imported 2, duplicates 0, rejected 1 "
                      "(dry run: nothing written)\n", err)
        self.assertEqual(self.ctl.sql("SELECT COUNT(*) FROM records"), before)
        self.assertEqual(before, [["0"]])
        unknown = "99999999-9999-4999-8999-999999999999"
        p = self.ctl.import_("records", f, "--format", "combo", "--breach", unknown,
                             "--dry-run", check=1)
        self.assertIn("c.txt:1: rejected: breach %s does not exist" % unknown, p.stderr.decode())
        self.assertIn("read 3, imported 0, duplicates 0, rejected 3 (dry run",
                      p.stderr.decode())
        # and the real import then does what the dry run said
        err = self.records(f, check=1, extra=("--format", "combo"))
        self.assertIn("c.txt: read 3, imported 2, duplicates 0, rejected 1\n", err)

    # ---- several files, directories, globs ---------------------------------------------

    def test_a_directory_imports_its_regular_files_sorted_by_name(self):
        d = os.path.join(self.ctl.dir, "dump")
        os.makedirs(os.path.join(d, "sub"))
        for name, text in (("b.txt", "bob:pw2\n"), ("a.txt", "ann@example.com:pw1\n"),
                           ("c.txt.gz", None), ("sub/z.txt", "zed:pw9\n"), (".hidden", "h:p\n")):
            path = os.path.join(d, name)
            with open(path, "wb") as fh:
                fh.write(gzip.compress(b"carol:pw3\n") if text is None else text.encode())
        err = self.records(d, extra=("--format", "combo"))
        lines = [l for l in err.splitlines() if "read " in l]
        self.assertEqual(lines, [
            "%s/a.txt: read 1, imported 1, duplicates 0, rejected 0" % d,
            "%s/b.txt: read 1, imported 1, duplicates 0, rejected 0" % d,
            "%s/c.txt.gz: read 1, imported 1, duplicates 0, rejected 0" % d,
            "total: read 3, imported 3, duplicates 0, rejected 0"])
        self.assertEqual([r[:2] for r in self.rows()],
                         [("ann@example.com", "-"), ("-", "bob"), ("-", "carol")])
        # a quoted glob is expanded by breachctl, in name order
        err = self.records(os.path.join(d, "[ab].txt"), extra=("--format", "combo"))
        self.assertIn("total: read 2, imported 0, duplicates 2, rejected 0\n", err)

    # ---- symbolic links ----------------------------------------------------------------

    def test_symbolic_links_are_skipped_unless_follow_links(self):
        """A dump may hold links to files elsewhere (b.txt -> /etc/shadow): none is read,
        whether breachctl walks the directory, expands a quoted glob or the shell names it,
        until --follow-links; a link to a directory is passed over like a subdirectory."""
        combo = ("--format", "combo", "--breach", BREACH)
        outside = self.ctl.write("shadow", "deploy:CorrectHorseBatteryStaple\n")
        other = os.path.join(self.ctl.dir, "elsewhere")
        os.makedirs(other)
        with open(os.path.join(other, "x.txt"), "w") as fh:
            fh.write("root:ToorToor\n")
        d = os.path.join(self.ctl.dir, "dump")
        os.makedirs(d)
        with open(os.path.join(d, "a.txt"), "w") as fh:
            fh.write("ann@example.com:pw1\n")
        os.symlink(outside, os.path.join(d, "b.txt"))
        os.symlink(other, os.path.join(d, "c"))
        skip = "breachctl import: skipping %s: a symbolic link (--follow-links follows links)\n"
        imported_a = "%s/a.txt: read 1, imported %d, duplicates %d, rejected 0\n"
        for args, want in (((d,), (1, 0)),                               # a directory
                           ((os.path.join(d, "*.txt"),), (0, 1)),         # a quoted glob
                           ((os.path.join(d, "a.txt"), os.path.join(d, "b.txt")), (0, 1))):
            p = self.ctl.import_("records", *args, *combo, check=1)
            err = p.stderr.decode()
            self.assertEqual(err, skip % os.path.join(d, "b.txt") + imported_a % ((d,) + want),
                             args)
        # a glob through a linked directory reads nothing behind it either
        p = self.ctl.import_("records", os.path.join(d, "*", "x.txt"), *combo, check=2)
        self.assertEqual(p.stderr.decode(),
                         "breachctl import: skipping %s/c/x.txt: %s/c is a symbolic link "
                         "(--follow-links follows links)\n"
                         "breachctl import: no files to import\n" % (d, d))
        # nor a named link to a directory
        p = self.ctl.import_("records", os.path.join(d, "c"), *combo, check=2)
        self.assertEqual(p.stderr.decode(), skip % os.path.join(d, "c") +
                         "breachctl import: no files to import\n")
        self.assertEqual([r[:3] for r in self.rows()], [("ann@example.com", "-", "*w1")])
        # a pipe the shell names (process substitution: /dev/fd/N, a link) is still read
        r, w = os.pipe()
        os.write(w, b"pipe@example.com:pw2\n")
        os.close(w)
        p = subprocess.run([binary("breachctl"), "import", "records", "/dev/fd/%d" % r, *combo,
                            *self.ctl.store_args()], pass_fds=(r,), capture_output=True,
                           timeout=60)
        os.close(r)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn(b"read 1, imported 1, duplicates 0, rejected 0\n", p.stderr)
        # --follow-links reads what the links lead to; a linked directory is still not walked
        p = self.ctl.import_("records", d, *combo, "--follow-links")
        self.assertEqual(p.stderr.decode(),
                         imported_a % (d, 0, 1) +
                         "%s/b.txt: read 1, imported 1, duplicates 0, rejected 0\n" % d +
                         "total: read 2, imported 1, duplicates 1, rejected 0\n")
        p = self.ctl.import_("records", os.path.join(d, "*", "x.txt"), *combo, "--follow-links")
        self.assertEqual(p.stderr.decode(),
                         "%s/c/x.txt: read 1, imported 1, duplicates 0, rejected 0\n" % d)
        self.assertEqual([r[:3] for r in self.rows()],
                         [("ann@example.com", "-", "*w1"), ("pipe@example.com", "-", "*w2"),
                          ("-", "deploy", "*" * 23 + "le"),
                          ("-", "root", "******or")])

    def test_a_pwned_passwords_directory_passes_over_its_links(self):
        suffix = "0" * 34 + "1:5\n"  # a SHA-1 suffix of 35 hex digits, count 5
        outside = self.ctl.write("elsewhere.txt", suffix)
        d = os.path.join(self.ctl.dir, "ranges")
        os.makedirs(d)
        with open(os.path.join(d, "AAAAA.txt"), "w") as fh:
            fh.write(suffix)
        os.symlink(outside, os.path.join(d, "BBBBB.txt"))
        with open(outside, "rb") as fh:  # and a gzip one, read by a gzip child
            self.ctl.write("elsewhere.gz", gzip.compress(fh.read()))
        os.symlink(os.path.join(self.ctl.dir, "elsewhere.gz"), os.path.join(d, "CCCCC.gz"))
        p = self.ctl.import_("pwned-passwords", d, check=1)
        self.assertEqual(p.stderr.decode(),
                         "skipping %s/BBBBB.txt: a symbolic link (--follow-links follows links)\n"
                         "skipping %s/CCCCC.gz: a symbolic link (--follow-links follows links)\n"
                         "%s: read 1, imported 1, rejected 0\n" % (d, d, d))
        link = os.path.join(d, "BBBBB.txt")
        p = self.ctl.import_("pwned-passwords", link, check=2)
        self.assertEqual(p.stderr.decode(), "breachctl import: skipping %s: a symbolic link "
                         "(--follow-links follows links)\nbreachctl import: no files to "
                         "import\n" % link)
        p = self.ctl.import_("pwned-passwords", d, "--follow-links")
        self.assertEqual(p.stderr.decode(), "%s: read 3, imported 3, rejected 0\n" % d)


if __name__ == "__main__":
    unittest.main()
