"""breachctl import: formats, bad lines, idempotence, strictness, and no plaintext at rest."""
import json
import os
import re
import unittest

from harness import STORE, Ctl, Server, fixture

BREACH = "22222222-2222-4222-8222-222222222222"
SECRETS = [b"S3cr3t-Passw0rd!", "pässwörd-unicode".encode(), b"123-45-6789", b"123456789",
           b"4111111111111111", b"4111 1111 1111 1111", b"378282246310005"]

RECORDS = "\n".join(json.dumps(r) for r in [
    {"breach_uuid": BREACH, "email": "Ann@Example.com", "password": "S3cr3t-Passw0rd!"},
    {"breach_uuid": BREACH, "email": "bob@example.com", "social_security_number": "123-45-6789"},
    {"breach_uuid": BREACH, "user_name": "carol", "password": "pässwörd-unicode"},
]) + "\n"


class Import(unittest.TestCase):
    def setUp(self):
        self.ctl = Ctl().init()
        self.ctl.import_("breaches", fixture("breaches.jsonl"))

    def tearDown(self):
        self.ctl.cleanup()

    def summary(self, p):
        return [l for l in p.stderr.decode().splitlines() if "read " in l][-1]

    def test_reimport_adds_nothing(self):
        f = self.ctl.write("r.jsonl", RECORDS)
        p = self.ctl.import_("records", f)
        self.assertIn("read 3, imported 3, duplicates 0, rejected 0", self.summary(p))
        p = self.ctl.import_("records", f)
        self.assertIn("read 3, imported 0, duplicates 3, rejected 0", self.summary(p))
        p = self.ctl.import_("breaches", fixture("breaches.jsonl"))
        self.assertIn("read 4, imported 0, duplicates 4, rejected 0", self.summary(p))
        self.assertEqual(p.stdout, b"")  # the generated uuid is only printed when new
        stats = self.ctl.run("stats", check=0).stdout.decode()
        self.assertIn("total: 3 breach records, 0 cards", stats)

    def test_breach_identity_counts_are_exact_after_every_kind_of_import(self):
        # A breach without an imported pwned_count shows its distinct identities: a record's
        # identity is its email, else user name, phone, IP, bitcoin address, SSN, hash.
        # An import into a breach with no records counts them as it writes; any other is
        # recounted by the store: both must give the same numbers.
        other = "33333333-3333-4333-8333-333333333333"
        first = [{"email": "a@example.com", "password": "one"},
                 {"email": "A@example.com", "password": "two"},
                 {"user_name": "dave"},
                 {"user_name": "dave", "ip_address": "192.0.2.7"},
                 {"ip_address": "192.0.2.7"},
                 {"social_security_number": "123-45-6789"},
                 {"password_hash": "5f4dcc3b5aa765d61d8327deb882cf99"},
                 {"phone_number": "+1 202 555 0100"},
                 {"user_name": "erin", "email": "erin@example.com"}]
        later = [{"email": "a@example.com", "password": "three"}, {"email": "new@example.com"},
                 {"user_name": "erin"}]

        def rows(breach, items):
            return "\n".join(json.dumps(dict(r, breach_uuid=breach)) for r in items) + "\n"

        key = self.ctl.key("counts")
        srv = Server(self.ctl)
        try:
            def count(breach):
                st, body = srv.get("/v7/breaches/" + breach, key=key)
                self.assertEqual(st, 200, body)
                return body["pwned_count"]
            self.ctl.import_("records", self.ctl.write("f.jsonl", rows(BREACH, first)))
            self.assertEqual(count(BREACH), 7)
            self.ctl.import_("records", self.ctl.write("l.jsonl", rows(BREACH, later)))
            self.assertEqual(count(BREACH), 9)
            self.ctl.import_("records", self.ctl.write("f.jsonl", rows(BREACH, first)))
            self.assertEqual(count(BREACH), 9)
            self.ctl.import_("records", self.ctl.write("o.jsonl", rows(other, first + first)), "--bulk")
            self.assertEqual(count(other), 7)
            self.ctl.import_("records", self.ctl.write("o2.jsonl", rows(other, later)), "--bulk")
            self.assertEqual(count(other), 9)
        finally:
            srv.stop()

    def test_a_large_file_loaded_on_two_threads_reports_and_stores_what_one_thread_does(self):
        # A bulk load or a dry run of a JSON Lines file of 8 MiB or more is read by two
        # threads in ranges cut at line breaks (ingest/stage.c); a plain import by one. The
        # three report the same lines at the same numbers, and the bulk load stores what the
        # plain import does, a duplicate two ranges apart counted once.
        pad = "x" * 1900
        lines = [json.dumps({"breach_uuid": BREACH, "email": "u%d@example.com" % i,
                             "password": "pw%d" % i, "other_attributes": json.dumps({"p": pad})})
                 for i in range(1, 7601)]
        lines[4] = json.dumps({"breach_uuid": BREACH, "email": "not an email"})
        lines[4999] = '{"breach_uuid": '
        lines[7399] = lines[9]  # line 7400 repeats line 10
        lines[7499] = json.dumps({"breach_uuid": "not-a-uuid", "email": "late@example.com"})
        path = self.ctl.write("big.jsonl", "\n".join(lines) + "\n")
        self.assertGreater(os.path.getsize(path), 14 << 20)

        def rejected(p):
            return [re.sub(r"^.*big\.jsonl:", "", l) for l in p.stderr.decode().splitlines()
                    if "rejected:" in l]
        dry = self.ctl.import_("records", path, "--dry-run", check=None)
        plain_store = Ctl().init()
        try:
            plain_store.import_("breaches", fixture("breaches.jsonl"))
            plain = plain_store.import_("records", path, check=None)
            bulk = self.ctl.import_("records", path, "--bulk", check=None)
            for p in (dry, plain, bulk):
                got = rejected(p)
                self.assertEqual(len(got), 3, p.stderr)
                self.assertTrue(got[0].startswith("5: rejected: "), got)
                self.assertTrue(got[1].startswith("5000: rejected: "), got)
                self.assertTrue(got[2].startswith("7500: rejected: "), got)
            self.assertEqual(rejected(dry), rejected(plain))
            self.assertEqual(rejected(bulk), rejected(plain))
            self.assertIn("read 7600, imported 7597, duplicates 0, rejected 3", self.summary(dry))
            self.assertIn("read 7600, imported 7596, duplicates 1, rejected 3",
                          self.summary(plain))
            self.assertIn("read 7600, imported 7596, duplicates 1, rejected 3",
                          self.summary(bulk))
            query = ("SELECT email, password_masked, other_attributes FROM records "
                     "ORDER BY email")
            self.assertEqual(self.ctl.sql(query), plain_store.sql(query))
            self.assertEqual(len(self.ctl.sql(query)), 7596)
        finally:
            plain_store.cleanup()

    def test_a_first_bulk_load_keeps_one_of_each_duplicate_and_counts_its_passwords_once(self):
        # A bulk load into an empty store builds its unique key before looking for
        # duplicates (PostgreSQL: the self-join runs only when the key finds one); with and
        # without duplicates in the file, every kept record, card and password counts once.
        import hashlib
        pw = "Bulk-Only-Pw-%d" % os.getpid()
        sha = hashlib.sha1(pw.encode()).hexdigest().upper()
        recs = [{"breach_uuid": BREACH, "email": "bulk%d@example.com" % i, "password": pw}
                for i in range(6)]
        cards = "id,createdAt,number,owner\n" + "".join(
            "c%d,2024-01-01 00:00:00,41111100000%05d,Ann Smith\n" % (i, i) for i in range(4))
        for dup in (False, True):
            with self.subTest(duplicates=dup):
                ctl = Ctl().init()
                try:
                    ctl.import_("breaches", fixture("breaches.jsonl"))
                    lines = recs + recs[:2] if dup else recs
                    f = ctl.write("r.jsonl", "".join(json.dumps(r) + "\n" for r in lines))
                    p = ctl.import_("records", f, extra=("--bulk", "--password-ranges"))
                    self.assertIn("read %d, imported 6, duplicates %d, rejected 0"
                                  % (len(lines), 2 if dup else 0), self.summary(p))
                    c = ctl.write("c.csv", cards + (cards.split("\n", 1)[1] if dup else ""))
                    p = ctl.import_("cards", c, extra=("--bulk",))
                    self.assertIn("imported 4, duplicates %d, rejected 0" % (4 if dup else 0),
                                  self.summary(p))
                    key = ctl.key("bulk")
                    srv = Server(ctl, "--range-auth", "none")
                    try:
                        st, body = srv.get("/v7/breach-search?type=email_domain&account="
                                           "example.com", key=key)
                        self.assertEqual((st, body["records_found"]), (200, 6), body)
                        st, body = srv.get("/v7/credit-card-search?query=owner:smith", key=key)
                        self.assertEqual((st, body["totalElements"]), (200, 4), body)
                        st, _, raw = srv.request("/range/" + sha[:5])
                        self.assertEqual(st, 200)
                        self.assertIn("%s:6" % sha[5:], raw.decode().split("\r\n"))
                    finally:
                        self.assertEqual(srv.stop(), 0)
                finally:
                    ctl.cleanup()

    def test_a_bulk_load_with_duplicates_into_a_stored_breach_answers_as_a_plain_import(self):
        # A bulk load gives its records their ids itself and streams their domain lookup
        # rows (PostgreSQL: record_domains) beside them; the duplicates it removes at its end
        # (of stored records and of its own) take their lookup rows with them, and the
        # breaches' identity counts are settled for all touched breaches at once, from the
        # records it kept of each. A domain search, with and without a field filter (on
        # PostgreSQL routed through the lookup rows, as on a Citus coordinator), the counts,
        # the change log and the totals must be what a plain import of the same files gives.
        other = "33333333-3333-4333-8333-333333333333"
        first = [{"breach_uuid": BREACH, "email": "u%d@dup.example" % i, "password": "pw%d" % i}
                 for i in range(5)]
        second = (first[1:3]  # stored already
                  + [{"breach_uuid": BREACH, "email": "v%d@dup.example" % i, "user_name": "v%d" % i}
                     for i in range(4)]
                  + [{"breach_uuid": other, "email": "w%d@dup.example" % i, "ip_address": "192.0.2.%d" % i}
                     for i in range(3)]
                  + [{"breach_uuid": other, "user_name": "nodomain"}])
        second += second[2:5]  # loaded twice in the same file
        files = ["".join(json.dumps(r) + "\n" for r in f) for f in (first, second)]
        paths = ["/v7/breach-search?type=email_domain&account=dup.example",
                 "/v7/breach-search?type=email_domain&account=dup.example&password=yes",
                 "/v7/breach-search?type=email_domain&account=dup.example&password=no",
                 "/v7/breach-search?type=email_domain&account=dup.example&username=yes",
                 "/v7/breaches/" + BREACH, "/v7/breaches/" + other]
        seen = {}
        for bulk in (False, True):
            ctl = Ctl().init()
            try:
                if STORE == "pg":
                    ctl.sql("ALTER DATABASE %s SET breachd.routed_searches = on" % ctl.dbname)
                ctl.import_("breaches", fixture("breaches.jsonl"))
                ctl.import_("records", ctl.write("a.jsonl", files[0]))
                p = ctl.import_("records", ctl.write("b.jsonl", files[1]),
                                extra=("--bulk",) if bulk else ())
                self.assertIn("read 13, imported 8, duplicates 5, rejected 0", self.summary(p))
                if STORE == "pg":  # a lookup row per record with an email domain, no more
                    self.assertEqual(ctl.sql("SELECT count(*) FROM record_domains"), [["12"]])
                self.assertIn("total: 13 breach records",
                              ctl.run("stats", check=0).stdout.decode())
                key = ctl.key("same")
                srv = Server(ctl)
                try:
                    seen[bulk] = [srv.get(path, key=key) for path in paths]
                    st, log = srv.get("/v7/changes?since=0&limit=1000", key=key)
                    self.assertEqual(st, 200, log)
                    seen[bulk].append([{k: v for k, v in c.items() if k not in ("seq", "at")}
                                       for c in log["changes"]])
                finally:
                    self.assertEqual(srv.stop(), 0)
            finally:
                ctl.cleanup()
        found = [body.get("records_found") for _, body in seen[False][:4]]
        self.assertEqual(found, [12, 5, 7, 4])
        self.assertEqual([body["pwned_count"] for _, body in seen[False][4:6]], [9, 4])
        added = [(c["breach_id"], c["count"]) for c in seen[False][6] if c["kind"] == "records_added"]
        self.assertEqual(added, [(BREACH, 5), (BREACH, 4), (other, 4)])
        self.assertEqual(seen[True], seen[False])

    def test_bad_lines_are_reported_by_number_and_the_rest_imported(self):
        lines = RECORDS.splitlines()
        text = "\n".join([lines[0], "{not json", lines[1],
                          json.dumps({"breach_uuid": BREACH, "email": "no-at-sign"}),
                          json.dumps({"breach_uuid": BREACH, "first_name": "Only"}),
                          json.dumps({"breach_uuid": BREACH, "email": "x@example.com", "colour": "red"}),
                          lines[2]]) + "\n"
        p = self.ctl.import_("records", self.ctl.write("r.jsonl", text), check=1)
        err = p.stderr.decode()
        self.assertIn("r.jsonl:2: rejected:", err)
        self.assertIn("r.jsonl:4: rejected: email:", err)
        self.assertIn("r.jsonl:5: rejected: a record needs at least one searchable field", err)
        self.assertIn("r.jsonl:6: rejected: unknown field 'colour'", err)
        self.assertIn("read 7, imported 3, duplicates 0, rejected 4", self.summary(p))

    def test_rejections_give_line_field_and_reason_but_never_the_password(self):
        # Old dumps are full of Latin-1 bytes and stray control characters in passwords; a
        # rejection line is printed and kept in logs, so it must not quote them.
        passwords = [b"Zq9#Pw\xe9Kv7Latin", b"Zq9#Pw\x01Kv7Ctrl", b"Zq9#PwKv7Trl", b"Zq9_PwKv7Bare"]
        head = b'{"breach_uuid":"' + BREACH.encode() + b'","email":"%d@example.com","password":'
        lines = [head % 1 + b'"' + passwords[0] + b'"}',
                 head % 2 + b'"' + passwords[1] + b'"}',
                 head % 3 + b'"' + passwords[2] + b'" trailing}',
                 head % 4 + passwords[3] + b'}',
                 head % 5 + b'"Zq9#PwKv7Good"}']
        p = self.ctl.import_("records", self.ctl.write("r.jsonl", b"\n".join(lines) + b"\n"), check=1)
        err = p.stderr
        self.assertIn(b'r.jsonl:1: rejected: not valid JSON in the value of "password": a byte that '
                      b'is not valid UTF-8\n', err)
        self.assertIn(b'r.jsonl:2: rejected: not valid JSON in the value of "password": a control '
                      b'character inside a string (it must be escaped)\n', err)
        self.assertIn(b'r.jsonl:3: rejected: not valid JSON after the value of "password": \',\' or '
                      b'\'}\' expected\n', err)
        self.assertIn(b'r.jsonl:4: rejected: not valid JSON in the value of "password": a word that '
                      b'is not JSON (text needs double quotes)\n', err)
        self.assertIn(b"read 5, imported 1, duplicates 0, rejected 4", err)
        for pw in passwords:
            for i in range(len(pw) - 3):
                self.assertNotIn(pw[i:i + 4], err + p.stdout)

    def test_a_csv_without_a_header_row_is_not_quoted_back_as_field_names(self):
        csv = "zoe@example.com,Zq9#Hdr7\nyan@example.com,Yq8#Hdr6\n"
        p = self.ctl.import_("records", self.ctl.write("h.csv", csv), check=1,
                             extra=("--breach", BREACH))
        self.assertIn("h.csv:2: rejected: unknown field number 1 (its name is not letters and "
                      "underscores: does the file start with a header row?)\n", p.stderr.decode())
        for value in (b"zoe@", b"Zq9#", b"Hdr7", b"yan@"):
            self.assertNotIn(value, p.stderr + p.stdout)

    def test_a_file_of_many_batches_keeps_every_row_and_line_number(self):
        # Records are checked by one thread in windows of 32,768 and written by another,
        # each window in its own order: bad lines on both sides of a window's edge, and one
        # only the writer can refuse (an unknown breach), must be reported by their own line
        # and every good row kept. The lines refused when read come first in a window, in the
        # file's order; the writer's refusals as it writes.
        unknown = "99999999-9999-4999-8999-999999999999"
        bad = {32768: "{broken", 32769: json.dumps({"breach_uuid": BREACH, "email": "no-at"}),
               32000: json.dumps({"breach_uuid": unknown, "email": "z@example.com"})}
        lines = [bad.get(n) or json.dumps({"breach_uuid": BREACH, "email": "u%d@example.com" % n})
                 for n in range(1, 40001)]
        f = self.ctl.write("many.jsonl", "\n".join(lines) + "\n")
        for extra in ((), ("--bulk",)):
            p = self.ctl.import_("records", f, check=1, extra=extra)
            err = p.stderr.decode()
            self.assertEqual(re.findall(r"many\.jsonl:(\d+): rejected: (\S+)", err),
                             [("32768", "not"), ("32000", "breach"), ("32769", "email:")])
            self.assertIn("many.jsonl:32000: rejected: breach %s does not exist" % unknown, err)
        self.assertIn("read 40000, imported 0, duplicates 39997, rejected 3", self.summary(p))
        self.assertIn("total: 39997 breach records",
                      self.ctl.run("stats", check=0).stdout.decode())
        p = self.ctl.import_("records", f, check=1, extra=("--strict",))
        self.assertIn("many.jsonl:32000:", p.stderr.decode())

    def test_records_are_written_by_domain_then_email_and_rejections_reported_in_order(self):
        # A window of records is written by email domain, then email (src/ingest/
        # stage_order.c): the records of a domain get neighbouring ids, so a domain's page
        # reads a few table pages, not one per record. The lines refused when read are
        # reported in the file's order.
        rows = [{"email": "zed@b.example"}, "{broken", {"email": "amy@a.example"},
                {"email": "bob@b.example"}, {"user_name": "carol"}, {"email": "no-at-sign"},
                {"email": "amy@c.example"}, {"email": "cat@a.example"}]
        text = "\n".join(r if isinstance(r, str) else json.dumps(dict(r, breach_uuid=BREACH))
                         for r in rows) + "\n"
        for extra in ((), ("--bulk",)):
            ctl = Ctl().init()
            try:
                ctl.import_("breaches", fixture("breaches.jsonl"))
                p = ctl.import_("records", ctl.write("o.jsonl", text), check=1, extra=extra)
                self.assertEqual(re.findall(r"o\.jsonl:(\d+): rejected", p.stderr.decode()),
                                 ["2", "6"])
                self.assertEqual([r[0] for r in ctl.sql(
                    "SELECT coalesce(email, user_name) FROM records ORDER BY id")],
                    ["carol", "amy@a.example", "cat@a.example", "bob@b.example",
                     "zed@b.example", "amy@c.example"], extra)
            finally:
                ctl.cleanup()

    def test_rows_with_large_values_cross_batches_intact(self):
        # about 12 MB of attribute values: the checker closes batches early by size
        rows = [{"breach_uuid": BREACH, "email": "big%d@example.com" % i,
                 "other_attributes": {"blob": ("%05d" % i) * 8000}} for i in range(300)]
        f = self.ctl.write("big.jsonl", "\n".join(json.dumps(r) for r in rows) + "\n")
        p = self.ctl.import_("records", f)
        self.assertIn("read 300, imported 300, duplicates 0, rejected 0", self.summary(p))
        key = self.ctl.key()
        srv = Server(self.ctl)
        try:
            for i in (0, 170, 299):
                st, _, body = srv.request("/v7/breach-search?type=email&account="
                                          "big%d@example.com" % i, key=key)
                self.assertEqual(st, 200)
                attrs = json.loads(body)["data"][0]["breached_data"]["other_attributes"]
                self.assertEqual(json.loads(attrs), {"blob": ("%05d" % i) * 8000})
        finally:
            self.assertEqual(srv.stop(), 0)

    def test_strict_stops_and_imports_nothing_from_the_file(self):
        text = RECORDS + "{broken\n"
        p = self.ctl.import_("records", self.ctl.write("r.jsonl", text), check=1,
                             extra=("--strict",))
        self.assertIn("r.jsonl:4:", p.stderr.decode())
        self.assertIn("total: 0 breach records", self.ctl.run("stats", check=0).stdout.decode())

    def test_unknown_breach_is_rejected(self):
        text = json.dumps({"breach_uuid": "99999999-9999-4999-8999-999999999999",
                           "email": "a@example.com"}) + "\n"
        p = self.ctl.import_("records", self.ctl.write("r.jsonl", text), check=1)
        self.assertIn("does not exist; import the breach first", p.stderr.decode())

    def test_breach_option_supplies_the_breach(self):
        text = json.dumps({"email": "a@example.com"}) + "\n"
        p = self.ctl.import_("records", self.ctl.write("r.jsonl", text), extra=("--breach", BREACH.upper()))
        self.assertIn("imported 1", self.summary(p))

    def test_csv_with_quotes_and_gzip_and_stdin(self):
        csv = ('email,password,other_attributes\n'
               'dan@example.com,"pa,ss""word","{""k"":""v""}"\n'
               'erin@example.com,,\n')
        f = self.ctl.write("r.csv.gz", csv, compress=True)
        p = self.ctl.import_("records", f, extra=("--breach", BREACH))
        self.assertIn("read 2, imported 2, duplicates 0, rejected 0", self.summary(p))
        p = self.ctl.run("import", "records", "-", "--format", "csv", "--breach", BREACH,
                         stdin=csv.encode(), check=0)
        self.assertIn("read 2, imported 0, duplicates 2, rejected 0", self.summary(p))

    def test_csv_unclosed_quote_costs_only_its_line(self):
        # One stray quote on line 2 used to swallow the other 19,999 rows into one bad record.
        lines = ["email,first_name", 'bad@example.com,"Unclosed'] + [
            "u%d@example.com,Name%d" % (i, i) for i in range(3, 20002)]
        self.assertEqual(len(lines), 20001)
        f = self.ctl.write("r.csv", "\n".join(lines) + "\n")
        p = self.ctl.import_("records", f, check=1, extra=("--breach", BREACH))
        err = p.stderr.decode()
        self.assertIn("r.csv:2: rejected: unclosed quote: a quoted cell starts on this line and is "
                      "not closed before the end of the input; reading resumes at the next line\n",
                      err)
        self.assertEqual(err.count("rejected:"), 1)
        self.assertIn("read 20000, imported 19999, duplicates 0, rejected 1", self.summary(p))
        self.assertIn("total: 19999 breach records", self.ctl.run("stats", check=0).stdout.decode())

    def test_csv_multi_line_cell_after_a_stray_quote_still_imports(self):
        csv = ('email,first_name\n'
               'a@example.com,"never closed\n'
               'b@example.com,"Two\nLines"\n'
               'c@example.com,Plain\n')
        p = self.ctl.import_("records", self.ctl.write("m.csv", csv), check=1,
                             extra=("--breach", BREACH))
        self.assertIn("m.csv:2: rejected: unclosed quote: a quoted cell starts on this line and "
                      "closes on a later line with text after the quote; reading resumes at the "
                      "next line", p.stderr.decode())
        self.assertIn("read 3, imported 2, duplicates 0, rejected 1", self.summary(p))
        key = self.ctl.key()
        srv = Server(self.ctl)
        try:
            st, _, body = srv.request("/v7/breach-search?type=email&account=b%40example.com", key=key)
            self.assertEqual(st, 200)
            self.assertEqual(json.loads(body)["data"][0]["breached_data"]["first_name"], "Two\nLines")
        finally:
            self.assertEqual(srv.stop(), 0)

    def test_cards_import_and_reimport(self):
        csv = ("createdAt,bank,number,owner,cvv,expireDate,cvssScore,leakId,leakName,"
               "leakPublishDate,leakDiscoverDate,leakSize,leakTags\n"
               "2024-01-02 03:04:05,Example Bank,4111 1111 1111 1111,Ann Example,123,12/27,7.5,"
               "L1,Leak one,2024-01-01,2024-01-03,2,\"paid,fresh\"\n"
               "2024-01-02,Test Bank,378282246310005,Bob Sample,1234,2026-05,1,L1,Leak one,,,,\n"
               "2024-01-02,Test Bank,1234,Short Number,123,2026-05,1,L1,Leak one,,,,\n")
        f = self.ctl.write("c.csv", csv)
        p = self.ctl.import_("cards", f, check=1)
        self.assertIn("c.csv:4: rejected: number must be 12 to 19 digits", p.stderr.decode())
        self.assertIn("read 3, imported 2, duplicates 0, rejected 1", self.summary(p))
        p = self.ctl.import_("cards", f, check=1)
        self.assertIn("read 3, imported 0, duplicates 2, rejected 1", self.summary(p))

    def test_store_file_holds_no_plaintext_secret(self):
        self.ctl.import_("records", self.ctl.write("r.jsonl", RECORDS))
        csv = ("createdAt,number,cvv\n2024-01-02,4111 1111 1111 1111,123\n"
               "2024-01-02,378282246310005,1234\n")
        self.ctl.import_("cards", self.ctl.write("c.csv", csv))
        for f in ("r.jsonl", "c.csv"):
            os.unlink(os.path.join(self.ctl.dir, f))
        data = self.ctl.store_bytes()
        self.assertIn(b"4111", data)  # the masked number's first digits are there
        for s in SECRETS:
            self.assertNotIn(s, data, "%s found in the store" % s)

    def test_csv_with_an_invalid_header_row_fails_with_status_2(self):
        p = self.ctl.import_("records", self.ctl.write("dup.csv", "email,email\na@example.com,b\n"),
                             check=2, extra=("--breach", BREACH))
        self.assertIn("breachctl import: columns 1 and 2 of the header have the same name\n",
                      p.stderr.decode())
        # a headerless file: its first row stands as the header, and a repeated cell there
        # (a password used twice) is named by position, never quoted back
        p = self.ctl.import_("records", self.ctl.write(
            "nohead.tsv", "ann@example.com\tPa55word!\tx\ty\tPa55word!\n"),
            check=2, extra=("--breach", BREACH))
        self.assertIn("breachctl import: columns 2 and 5 of the header have the same name\n",
                      p.stderr.decode())
        self.assertNotIn(b"Pa55word", p.stderr)

    def test_missing_file_fails_with_status_2(self):
        p = self.ctl.import_("records", os.path.join(self.ctl.dir, "nope.jsonl"), check=2)
        self.assertIn("nope.jsonl", p.stderr.decode())

    def test_usage_errors_exit_2(self):
        self.ctl.run("import", "widgets", "x.jsonl", check=2)
        self.ctl.run("frobnicate", check=2)


class ServedText(unittest.TestCase):
    """Imported bytes that are not UTF-8 are served as U+FFFD, never passed through."""

    def test_invalid_utf8_from_import_is_replaced(self):
        ctl = Ctl().init()
        try:
            csv = (b"uuid,source_name,date_leaked,description\n"
                   b"55555555-5555-4555-8555-555555555555,Bad\xffBytes,2020-01-01,ctl\x01char\n")
            ctl.import_("breaches", ctl.write("b.csv", csv))
            key = ctl.key()
            srv = Server(ctl)
            try:
                st, hdrs, body = srv.request("/v7/breaches", key=key)
                self.assertEqual(st, 200)
                self.assertIn(b'"source_name":"Bad\xef\xbf\xbdBytes"', body)
                self.assertIn(b'"description":"ctl\\u0001char"', body)
                body.decode("utf-8")
            finally:
                self.assertEqual(srv.stop(), 0)
        finally:
            ctl.cleanup()


def control_bytes(data):
    """The terminal control bytes in data: C0 (tab and newline aside), DEL, UTF-8 C1."""
    bad = [bytes([b]) for b in data if (b < 0x20 and b not in (0x09, 0x0A)) or b == 0x7F]
    return bad + re.findall(rb"\xc2[\x80-\x9f]", data)


class TerminalOutput(unittest.TestCase):
    """Text from imported files reaches the operator's terminal escaped: a breach named with
    an escape sequence cannot retitle the window or rewrite the screen through stats, erase,
    rejection lines, generated ids or keys list."""
    EVIL = "Evil\x1b]0;pwned\x07Name\u009b31m"  # OSC title + BEL, then a C1 CSI
    SHOWN = b"Evil\\x1b]0;pwned\\x07Name\\xc2\\x9b31m"
    UUID = "77777777-7777-4777-8777-777777777777"

    def test_data_derived_text_is_printed_without_control_bytes(self):
        ctl = Ctl().init()
        try:
            rows = [{"uuid": self.UUID, "source_name": self.EVIL, "date_leaked": "2020-01-01"},
                    {"source_name": "Gen\x1b[31mRed", "date_leaked": "2020-01-02"}]
            p = ctl.import_("breaches", ctl.write("b.jsonl", "\n".join(json.dumps(r) for r in rows)))
            self.assertRegex(p.stdout, rb"^[0-9a-f-]{36}\tGen\\x1b\[31mRed\n$")
            recs = [{"breach_uuid": self.UUID, "email": "e@example.com"},
                    {"breach_uuid": self.UUID, "email": "f@example.com", "\x1b[2Jx\x07": "1"}]
            p = ctl.import_("records", ctl.write("r.jsonl", "\n".join(json.dumps(r) for r in recs)),
                            check=1)
            self.assertIn(b"r.jsonl:2: rejected: unknown field number 3 (its name is not letters "
                          b"and underscores: does the file start with a header row?)\n", p.stderr)
            self.assertEqual(control_bytes(p.stderr), [])
            p = ctl.import_("records", ctl.write("h.csv", '"\x1b[2Jx\x07","\x1b[2Jx\x07"\n'), check=2)
            self.assertIn(b"breachctl import: columns 1 and 2 of the header have the same name\n",
                          p.stderr)
            self.assertEqual(control_bytes(p.stderr), [])
            ctl.run("keys", "create", "--name", "ops\x1b[8mhidden", check=0)
            outputs = {"stats": ctl.run("stats", check=0).stdout,
                       "keys list": ctl.run("keys", "list", check=0).stdout,
                       "erase --email": ctl.run("erase", "--email", "e@example.com", check=0).stdout,
                       "erase --breach": ctl.run("erase", "--breach", self.UUID, check=0)}
            outputs["erase --breach"] = outputs["erase --breach"].stdout + outputs["erase --breach"].stderr
            for what, out in outputs.items():
                self.assertEqual(control_bytes(out), [], what)
            self.assertIn(self.UUID.encode() + b"           1 records           1 identities  " +
                          self.SHOWN + b"\n", outputs["stats"])
            self.assertIn(self.UUID.encode() + b"  1 records  " + self.SHOWN + b"\n",
                          outputs["erase --email"])
            self.assertIn(b"ops\\x1b[8mhidden", outputs["keys list"])
        finally:
            ctl.cleanup()


class Keys(unittest.TestCase):
    def test_keys_create_prints_only_the_key_and_list_never_shows_it(self):
        ctl = Ctl().init()
        try:
            p = ctl.run("keys", "create", "--name", "ci", "--rate", "5/h", "--expires",
                        "2099-01-01", check=0)
            key = p.stdout.decode()
            self.assertRegex(key, r"^bd_[A-Za-z0-9_-]{43}\n$")
            listing = ctl.run("keys", "list", check=0).stdout.decode()
            self.assertIn("custom", listing)
            self.assertIn("2099-01-01", listing)
            self.assertNotIn(key.strip(), listing)
            self.assertNotIn(key.strip().encode(), ctl.store_bytes())
            ctl.run("keys", "create", "--name", "x", "--plan", "gold", check=2)
            ctl.run("keys", "create", "--name", "x", "--expires", "2001-01-01", check=2)
            ctl.run("keys", "revoke", "999", check=2)
        finally:
            ctl.cleanup()

    def test_secret_file_is_0600_and_refused_when_readable_by_others(self):
        ctl = Ctl().init()
        try:
            secret = ctl.secret_file
            self.assertEqual(os.stat(secret).st_mode & 0o777, 0o600)
            os.chmod(secret, 0o644)
            p = ctl.run("stats", check=2)
            self.assertIn("chmod 600", p.stderr.decode())
        finally:
            ctl.cleanup()

    def test_demo_prints_one_key_and_loads_every_kind(self):
        ctl = Ctl()
        try:
            p = ctl.run("demo", check=0)
            self.assertRegex(p.stdout.decode(), r"^bd_[A-Za-z0-9_-]{43}\n$")
            stats = ctl.run("stats", check=0).stdout.decode()
            self.assertIn("total: 1188 breach records, 360 cards", stats)
        finally:
            ctl.cleanup()


if __name__ == "__main__":
    unittest.main()
