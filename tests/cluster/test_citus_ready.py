"""The schema is ready for Citus as docs/SCALING.md says (issue 15). Citus is not packaged for
Debian 12, so this checks on plain PostgreSQL what Citus would enforce or depend on:

- the catalog: the tables SCALING.md distributes and replicates are every table of a store
  that `breachctl init` made; each distributed table's column exists, is NOT NULL and
  hashable; every unique index and constraint of a distributed table includes it; foreign
  keys only where Citus allows them; identity columns bigint; co-located tables share the
  column's type and collation;
- the searches: each request of SCALING.md's table is sent to a real breachd whose
  connections log every statement's plan (auto_explain, sequential scans disabled), and
  each plan's scans of distributed tables are checked against what the table says: "one
  shard" means the table's distribution column is fixed by an equality in the scan's
  condition, "the page's shards" that it is fixed to a list of values (`= ANY`, the ids a
  lookup returned), "every shard" that the scan is an index scan, and no other distributed
  table is read at all. Every hot search (a benchmark scenario) fixes the distribution
  column of every table it reads: none reads every shard.

The document is the specification: change the layout there and this test follows it."""
import json
import os
import re
import sys
import unittest
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "e2e"))
os.environ.setdefault("BREACHD_STORE", "pg")  # harness reads it at import

from harness import ROOT, Ctl, Server, fixture  # noqa: E402

PRIMARY_DIR = os.environ.get("BREACHD_PG_DIR", "")
SCALING = os.path.join(ROOT, "docs", "SCALING.md")

# Every statement breachd runs gets its plan logged, in JSON, with its parameters as $n (the
# store plans its statements generically). Sequential scans are priced out, so a scan of a
# whole table in a plan means no index could serve it. The searches are routed as on a Citus
# coordinator (breachd finds the extension there; here the setting asks for it).
EXPLAINED = ("-c session_preload_libraries=auto_explain -c auto_explain.log_min_duration=0 "
             "-c auto_explain.log_format=json -c enable_seqscan=off "
             "-c breachd.routed_searches=on")
SCANS = ("Seq Scan", "Index Scan", "Index Only Scan", "Bitmap Heap Scan", "Bitmap Index Scan")
INDEXED = ("Index Scan", "Index Only Scan", "Bitmap Heap Scan")


def layout():
    """SCALING.md's Citus section: ({distributed table: (column, colocated with)}, {reference
    tables}, {local tables}, [(hot search, request, {table: 'one shard'|'every shard'})])."""
    with open(SCALING, encoding="utf-8") as f:
        text = f.read()
    section = text[text.index("## More data than one machine: Citus"):]
    distributed, reference, local, searches = {}, set(), set(), []
    for m in re.finditer(r"create_distributed_table\('(\w+)', '(\w+)'"
                         r"(?:, colocate_with := '(\w+)')?", section):
        distributed[m.group(1)] = (m.group(2), m.group(3))
    for m in re.finditer(r"create_reference_table\('(\w+)'\)", section):
        reference.add(m.group(1))
    for m in re.finditer(r"^-- local: (\w+)", section, re.M):
        local.add(m.group(1))
    for m in re.finditer(r"^\| ([^|]+) \| `(/v7/[^`]+)` \| ([^|]+) \|$", section, re.M):
        reads = dict((t, how) for t, how in re.findall(
            r"`(\w+)`: (one shard|the page's shards|every shard)", m.group(3)))
        searches.append((m.group(1).strip(), m.group(2), reads))
    return distributed, reference, local, searches


DISTRIBUTED, REFERENCE, LOCAL, SEARCHES = layout()


def records():
    """Records with every searchable field, on the e2e fixture breaches."""
    alpha = "11111111-1111-4111-8111-111111111111"
    beta = "22222222-2222-4222-8222-222222222222"
    rows = [
        {"breach_uuid": alpha, "email": "alice@example.com", "user_name": "alice",
         "password_hash": "5f4dcc3b5aa765d61d8327deb882cf99", "ip_address": "192.0.2.7"},
        {"breach_uuid": beta, "email": "alice@example.com", "password": "hunter22",
         "phone_number": "+49 30 1234567", "social_security_number": "987-65-4320"},
        {"breach_uuid": beta, "user_name": "alice", "bitcoin_address":
         "1BoatSLRHtKNngkdXEeobR76b53LETtpyT"},
    ]
    # a stealer log's line with the website it was taken from (website domain, issue 35)
    rows.append({"breach_uuid": beta, "email": "bob@example.com", "password": "hunter33",
                 "website": "https://shop.example.com/login"})
    rows += [{"breach_uuid": alpha, "email": "user%d@example.com" % i, "password": "pw%d" % i}
             for i in range(40)]
    return rows


class CitusReadiness(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not PRIMARY_DIR:
            raise unittest.SkipTest("needs the primary of scripts/pg-cluster.sh run-standby")
        cls.ctl = Ctl().init()
        cls.srv = None
        cls.ctl.import_("breaches", fixture("breaches.jsonl"))
        cls.ctl.import_("records", cls.ctl.write(
            "r.jsonl", "\n".join(json.dumps(r) for r in records())))
        cls.ctl.import_("cards", fixture("cards.csv"))
        cls.key = cls.ctl.key("citus", "--plan", "enterprise")
        before = os.environ.get("PGOPTIONS")
        os.environ["PGOPTIONS"] = EXPLAINED
        try:
            cls.srv = Server(cls.ctl)
        finally:
            if before is None:
                del os.environ["PGOPTIONS"]
            else:
                os.environ["PGOPTIONS"] = before

    @classmethod
    def tearDownClass(cls):
        if cls.srv:
            cls.srv.stop()
        cls.ctl.cleanup()

    def test_the_document_names_a_layout(self):
        self.assertEqual(sorted(DISTRIBUTED), ["card_bins", "card_owner_words", "card_words",
                                               "cards", "password_ranges", "record_domains",
                                               "records"])
        self.assertGreaterEqual(len(REFERENCE), 5)
        self.assertEqual(LOCAL, {"rate_limits", "key_usage", "changes", "watches", "alerts",
                                 "alert_cursors", "jobs", "job_chunks", "audit", "lookups",
                                 "console_signouts", "pastes", "paste_emails",
                                 "email_hashes"})
        self.assertGreaterEqual(len(SEARCHES), 18)
        hot = [name for name, _, _ in SEARCHES if "(scenario" in name]
        self.assertEqual(len(hot), 4, hot)  # 3 (the catalog) reads reference tables, 6 mixes
        for name, _, reads in SEARCHES:
            self.assertTrue(reads, name)
            for table in reads:
                self.assertIn(table, DISTRIBUTED, name)
            if name in hot:
                self.assertNotIn("every shard", reads.values(), name)

    # -- the catalog ----------------------------------------------------------------------

    def test_every_table_of_the_store_has_its_place_in_the_layout(self):
        tables = {r[0] for r in self.ctl.sql(
            "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p')")}
        declared = set(DISTRIBUTED) | REFERENCE | LOCAL
        self.assertEqual(tables - declared, set(), "tables the layout does not place")
        self.assertEqual(declared - tables, set(), "tables the layout names that do not exist")
        self.assertEqual(set(DISTRIBUTED) & REFERENCE, set())

    def column(self, table, name):
        """(type, collation, not null) of a column, or None."""
        rows = self.ctl.sql(
            "SELECT format_type(a.atttypid, a.atttypmod), coalesce(co.collname, ''), "
            "a.attnotnull FROM pg_attribute a LEFT JOIN pg_collation co ON co.oid = "
            "a.attcollation WHERE a.attrelid = '%s'::regclass AND a.attname = '%s' "
            "AND NOT a.attisdropped" % (table, name))
        return tuple(rows[0]) if rows else None

    def test_distribution_columns_are_not_null_hashable_and_match_their_colocation(self):
        for table, (col, colocate) in DISTRIBUTED.items():
            c = self.column(table, col)
            self.assertIsNotNone(c, "%s.%s" % (table, col))
            self.assertEqual(c[2], "t", "%s.%s may be NULL" % (table, col))
            hashable = self.ctl.sql(
                "SELECT count(*) FROM pg_opclass oc JOIN pg_am am ON am.oid = oc.opcmethod "
                "WHERE am.amname = 'hash' AND oc.opcdefault AND oc.opcintype = "
                "(SELECT atttypid FROM pg_attribute WHERE attrelid = '%s'::regclass "
                "AND attname = '%s')" % (table, col))
            self.assertEqual(hashable, [["1"]], "%s.%s has no hash function" % (table, col))
            if colocate:
                other = self.column(colocate, DISTRIBUTED[colocate][0])
                self.assertEqual(c[:2], other[:2], "%s cannot be co-located with %s" % (
                    table, colocate))

    def test_every_unique_key_of_a_distributed_table_holds_its_distribution_column(self):
        checked = 0
        for table, (col, _) in DISTRIBUTED.items():
            rows = self.ctl.sql(
                "SELECT i.indexrelid::regclass, i.indexprs IS NOT NULL, coalesce(("
                "SELECT string_agg(a.attname, ',') FROM unnest(i.indkey) AS k(n) "
                "JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.n), '') "
                "FROM pg_index i WHERE i.indrelid = '%s'::regclass AND i.indisunique "
                "UNION ALL SELECT c.conname::regclass, false, '' FROM pg_constraint c "
                "WHERE c.conrelid = '%s'::regclass AND c.contype = 'x'" % (table, table))
            for name, expression, cols in rows:
                checked += 1
                self.assertIn(col, cols.split(","), "unique index %s of %s (%s) lacks %s" % (
                    name, table, cols, col))
                self.assertEqual(expression, "f", "unique index %s is on an expression" % name)
        # records: (id, ok) and (ok, dedup); cards: (card_id); each word table, card_bins
        # and record_domains: its key; password_ranges: (bucket)
        self.assertEqual(checked, 8)

    def test_foreign_keys_only_where_citus_allows_them(self):
        for src, dst, cols in self.ctl.sql(
                "SELECT conrelid::regclass, confrelid::regclass, (SELECT string_agg(attname, "
                "',') FROM pg_attribute WHERE attrelid = conrelid AND attnum = ANY(conkey)) "
                "FROM pg_constraint WHERE contype = 'f' AND connamespace = "
                "(SELECT oid FROM pg_namespace WHERE nspname = current_schema())"):
            if dst in REFERENCE:
                continue  # distributed or reference to reference: allowed
            self.assertIn(src, DISTRIBUTED, "%s -> %s: a reference table may not point at "
                          "a distributed one" % (src, dst))
            self.assertIn(dst, DISTRIBUTED, "%s -> %s" % (src, dst))
            self.assertEqual(cols, DISTRIBUTED[src][0], "%s -> %s not along the "
                             "distribution column" % (src, dst))

    def test_identity_columns_of_distributed_tables_are_bigint(self):
        for table in DISTRIBUTED:
            for name, kind in self.ctl.sql(
                    "SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute "
                    "WHERE attrelid = '%s'::regclass AND attidentity <> ''" % table):
                self.assertEqual(kind, "bigint", "%s.%s" % (table, name))

    # -- the hot searches -----------------------------------------------------------------

    def plans_of(self, path):
        """The JSON plans the server's statements logged while it answered path."""
        log = os.path.join(PRIMARY_DIR, "server.log")
        at = os.path.getsize(log)
        status, _, body = self.srv.request(path, key=self.key)
        self.assertEqual(status, 200, (path, body[:300]))
        with open(log, "rb") as f:
            f.seek(at)
            text = f.read().decode(errors="replace")
        plans = []
        for m in re.finditer(r"LOG:  duration: [0-9.]+ ms  plan:\n((?:\t.*\n?)+)", text):
            plans.append(json.loads("".join(line[1:] + "\n" for line in
                                            m.group(1).splitlines())))
        return [p for p in plans if p.get("Query Text", "").lstrip().upper().startswith(
            ("SELECT", "WITH"))]

    @staticmethod
    def scans(node, out):
        if node.get("Node Type") in SCANS and node.get("Relation Name"):
            out.append(node)
        for child in node.get("Plans", []):
            CitusReadiness.scans(child, out)
        return out

    @staticmethod
    def conditions(node):
        return " ".join(node.get(k, "") for k in ("Index Cond", "Recheck Cond", "Filter"))

    @staticmethod
    def fixes(node, col):
        """Whether the scan's conditions fix col by an equality to one value."""
        cond = CitusReadiness.conditions(node)
        return re.search(r"(^|[(\s.])%s = (?!ANY)" % col, cond) is not None or \
            re.search(r" = (\w+\.)?%s\)" % col, cond) is not None

    @staticmethod
    def fixes_to_a_list(node, col):
        """Whether the scan's conditions fix col to the values of an array parameter."""
        cond = CitusReadiness.conditions(node)
        return re.search(r"(^|[(\s.])%s = ANY \(\$\d+\)" % col, cond) is not None

    def check_reads(self, name, path, reads):
        plans = self.plans_of(urllib.parse.quote(path, safe="/?&=%*:,[]"))
        seen = {}
        for plan in plans:
            for scan in self.scans(plan["Plan"], []):
                table = scan["Relation Name"]
                if table not in DISTRIBUTED:
                    continue
                seen.setdefault(table, []).append(scan)
        self.assertEqual(sorted(seen), sorted(reads), "distributed tables read")
        for table, how in reads.items():
            col = DISTRIBUTED[table][0]
            for scan in seen[table]:
                detail = json.dumps(scan)[:400]
                if how == "one shard":
                    self.assertTrue(self.fixes(scan, col), "%s does not fix %s.%s: %s"
                                    % (name, table, col, detail))
                elif how == "the page's shards":
                    self.assertTrue(self.fixes_to_a_list(scan, col), "%s does not fix "
                                    "%s.%s to a list: %s" % (name, table, col, detail))
                else:
                    self.assertIn(scan["Node Type"], INDEXED + ("Bitmap Index Scan",),
                                  "%s scans all of %s: %s" % (name, table, detail))

    def test_each_search_reads_the_shards_the_document_says(self):
        for name, path, reads in SEARCHES:
            with self.subTest(name):
                self.check_reads(name, path, reads)

    def test_a_following_domain_page_reads_the_shards_its_first_page_does(self):
        first = [(p, r) for n, p, r in SEARCHES if n.endswith("(scenario 2)")]
        self.assertEqual(len(first), 1)
        path, reads = first[0]
        path = path.replace("number_of_records=100", "number_of_records=10")
        status, _, body = self.srv.request(path, key=self.key)
        self.assertEqual(status, 200, body[:300])
        token = json.loads(body)["pagination_token"]
        self.assertTrue(token)
        self.check_reads("the next page", path + "&paging_token=" +
                         urllib.parse.quote(token, safe=""), reads)


if __name__ == "__main__":
    unittest.main()
