"""The store is laid out for Citus as docs/SCALING.md says (issues 15 and 37). On plain
PostgreSQL (make test-cluster) this checks what Citus would enforce or depend on:

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

On a Citus cluster (BREACHD_CITUS_DIR set: scripts/citus-cluster.sh run, make test-citus)
`breachctl init` distributed the store on the coordinator, and the same searches are checked
against Citus's own plans, logged by auto_explain on the coordinator (the workers plan with
sequential scans disabled too, set on the database, which Citus sends to every node):

- the layout: Citus's catalog (pg_dist_partition) holds each table where the document puts
  it: distributed by its column, co-located as it says, reference, or not at all (local);
- the searches: each statement's distributed plan (Custom Scan, Citus Adaptive, and those of
  its subplans) shows its number of tasks, one per shard (Task Count), and a task's remote
  plan, whose scans name the shards' tables. "One shard" is a Task Count of 1 for every
  statement reading the table; "the page's shards" is exactly the number of shards holding
  the keys the statement fixes (the array of its `= ANY` condition), which are at most the
  page's rows (and the one a breach search reads ahead); "every shard" is allowed only where
  the table says so, each task's scan an index scan; no other distributed table is read.
  No hot search (a benchmark scenario) reads a table on every shard. The Task Counts
  measured are written to stderr at the end.

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

from harness import ROOT, Ctl, Server, fixture, psql  # noqa: E402

PRIMARY_DIR = os.environ.get("BREACHD_PG_DIR", "")  # on Citus: the coordinator's
CITUS_DIR = os.environ.get("BREACHD_CITUS_DIR", "")
SCALING = os.path.join(ROOT, "docs", "SCALING.md")

# Every statement breachd runs gets its plan logged, in JSON, with its parameters as $n (the
# store plans its statements generically). Sequential scans are priced out, so a scan of a
# whole table in a plan means no index could serve it. The searches are routed as on a Citus
# coordinator (breachd finds the extension there; here the setting asks for it). On Citus an
# email search is read on its shard's worker, from that shard's table by name (SCALING.md,
# "Direct reads"; tests/e2e/test_citus_direct.py): direct reads are off here, so that the
# statement that answers it through the coordinator when the worker cannot is checked.
EXPLAINED = ("-c session_preload_libraries=auto_explain -c auto_explain.log_min_duration=0 "
             "-c auto_explain.log_format=json -c enable_seqscan=off "
             "-c breachd.routed_searches=on -c breachd.direct_reads=off")
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
MEASURED = []  # on Citus: (search, table, as documented, Task Count, its shards, keys)


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
            raise unittest.SkipTest("needs the primary of scripts/pg-cluster.sh run-standby "
                                    "or the coordinator of scripts/citus-cluster.sh run")
        # Citus's default of 32 shards for this store, whatever the suite's cluster uses
        # (make test-citus: 8): a page of 100 owners then lands on fewer shards than all,
        # which is what "the page's shards" is checked against
        before = os.environ.get("PGOPTIONS")
        if CITUS_DIR:
            os.environ["PGOPTIONS"] = "-c citus.shard_count=32"
        try:
            cls.ctl = Ctl().init()
        finally:
            if before is None:
                os.environ.pop("PGOPTIONS", None)
            else:
                os.environ["PGOPTIONS"] = before
        cls.srv = None
        if CITUS_DIR:
            # the workers plan each task as the primary does here: a scan of a shard's
            # whole table only where no index serves (Citus sends the setting to every
            # node; it applies to the sessions opened after, the ones of breachd's tasks)
            cls.ctl.sql("ALTER DATABASE %s SET enable_seqscan = off" % cls.ctl.dbname)
            # the workers of this database's own metadata (a worker a test added for its own
            # database, as the rebalance test does, has none of this one)
            for (node,) in cls.ctl.sql("SELECT nodename FROM pg_dist_node WHERE groupid > 0"):
                assert psql("postgresql:///%s?host=%s&user=breachd" % (
                    cls.ctl.dbname, node), "SHOW enable_seqscan") == [["off"]]
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
        cls.report_tasks()
        if cls.srv:
            cls.srv.stop()
        cls.ctl.cleanup()

    def test_the_document_names_a_layout(self):
        self.assertEqual(sorted(DISTRIBUTED), ["card_bins", "card_owner_words", "card_words",
                                               "cards", "password_ranges", "record_domains",
                                               "records"])
        self.assertGreaterEqual(len(REFERENCE), 5)
        self.assertEqual(LOCAL, {"api_keys", "rate_limits", "key_usage", "changes", "watches", "alerts",
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

    def test_citus_holds_each_table_where_the_document_puts_it(self):
        if not CITUS_DIR:
            self.skipTest("on a Citus cluster only (make test-citus)")
        placed = {r[0]: r[1:] for r in self.ctl.sql(
            "SELECT logicalrelid::regclass::text, CASE WHEN partmethod = 'h' THEN "
            "column_to_column_name(logicalrelid, partkey) ELSE '' END, partmethod, "
            "colocationid FROM pg_dist_partition")}
        self.assertEqual({t for t, r in placed.items() if r[1] == "h"}, set(DISTRIBUTED))
        self.assertEqual({t for t, r in placed.items() if r[1] == "n"}, REFERENCE)
        self.assertEqual(set(placed) & LOCAL, set(), "tables the document keeps local")
        for table, (col, colocate) in DISTRIBUTED.items():
            self.assertEqual(placed[table][0], col, table)
            if colocate:
                self.assertEqual(placed[table][2], placed[colocate][2],
                                 "%s is not co-located with %s" % (table, colocate))
            self.assertGreater(self.shard_count(table), 1, table)

    def test_identity_columns_of_distributed_tables_are_bigint(self):
        for table in DISTRIBUTED:
            for name, kind in self.ctl.sql(
                    "SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute "
                    "WHERE attrelid = '%s'::regclass AND attidentity <> ''" % table):
                self.assertEqual(kind, "bigint", "%s.%s" % (table, name))

    # -- the hot searches -----------------------------------------------------------------

    def plans_of(self, path):
        """The JSON plans the server's statements logged while it answered path, and the
        answer's body."""
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
        plans = [p for p in plans if p.get("Query Text", "").lstrip().upper().startswith(
            ("SELECT", "WITH"))]
        return plans, json.loads(body) if body.startswith(b"{") else None

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
        plans, body = self.plans_of(urllib.parse.quote(path, safe="/?&=%*:,[]"))
        if CITUS_DIR:
            self.check_tasks(name, plans, body, reads)
            return
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

    # -- on Citus: the distributed plans --------------------------------------------------

    def shard_count(self, table):
        return int(self.ctl.sql("SELECT count(*) FROM pg_dist_shard WHERE logicalrelid = "
                                "'%s'::regclass" % table)[0][0])

    @staticmethod
    def jobs(node, out):
        """[(Task Count, {distributed table: [scans of the shown task's remote plan]})] of
        every distributed plan under node: a statement's own and those of its subplans
        (which Citus runs first, e.g. an IN subquery or a count beside the page)."""
        if isinstance(node, dict):
            if "Task Count" in node:
                scans = CitusReadiness.relation_scans(node.get("Tasks", []), [])
                tables = {}
                for scan in scans:
                    table = re.sub(r"_\d+$", "", scan["Relation Name"])  # a shard's name
                    if table in DISTRIBUTED:
                        tables.setdefault(table, []).append(scan)
                out.append((node["Task Count"], node.get("Tasks Shown", ""), tables))
            for key, value in node.items():
                if key != "Tasks":
                    CitusReadiness.jobs(value, out)
        elif isinstance(node, list):
            for value in node:
                CitusReadiness.jobs(value, out)
        return out

    @staticmethod
    def relation_scans(node, out):
        if isinstance(node, dict):
            if node.get("Relation Name"):
                out.append(node)
            for value in node.values():
                CitusReadiness.relation_scans(value, out)
        elif isinstance(node, list):
            for value in node:
                CitusReadiness.relation_scans(value, out)
        return out

    def page_keys(self, table, col, scans):
        """(distinct keys, distinct shards of them) of the list a task's scan fixes col to:
        Citus sends each task the statement with its values, the whole array."""
        for scan in scans:
            m = re.search(r"(?:^|[(\s.])%s = ANY \(('(?:[^']|'')*'::[\w ]+\[\])\)" % col,
                          self.conditions(scan))
            if m:
                keys, shards = self.ctl.sql(
                    "SELECT count(DISTINCT v), count(DISTINCT "
                    "get_shard_id_for_distribution_column('%s', v)) FROM unnest(%s) AS v"
                    % (table, m.group(1)))[0]
                return int(keys), int(shards)
        self.fail("no scan of %s fixes %s to a list: %s" % (table, col, json.dumps(scans)[:600]))

    def check_tasks(self, name, plans, body, reads):
        seen = {}
        for plan in plans:
            for count, shown, tables in self.jobs(plan["Plan"], []):
                if count and not tables and shown.startswith("None"):
                    self.fail("%s: a distributed plan shows none of its %d tasks: %s"
                              % (name, count, plan.get("Query Text", "")[:300]))
                for table, scans in tables.items():
                    seen.setdefault(table, []).append((count, scans))
        self.assertEqual(sorted(seen), sorted(reads), "%s: distributed tables read" % name)
        # the rows a page's statement may name: a search's page, and past it the one row a
        # breach search reads ahead when there is a next page (its pagination token)
        if body and "data" in body:
            on_page = len(body["data"]) + (1 if body.get("pagination_token") else 0)
        else:
            on_page = (body or {}).get("numberOfElements")
        for table, how in reads.items():
            col, shards = DISTRIBUTED[table][0], self.shard_count(table)
            for count, scans in seen[table]:
                MEASURED.append((name, table, how, count, shards, ""))
                detail = json.dumps(scans)[:400]
                if how == "one shard":
                    self.assertEqual(count, 1, "%s reads %s on %d shards: %s"
                                     % (name, table, count, detail))
                elif how == "the page's shards":
                    keys, holding = self.page_keys(table, col, scans)
                    MEASURED[-1] = MEASURED[-1][:5] + (" (the page's %d keys)" % keys,)
                    self.assertGreater(keys, 0, name)
                    self.assertLessEqual(keys, on_page, "%s: more keys than the page has rows"
                                         " (and the one read ahead)" % name)
                    self.assertEqual(count, holding, "%s reads %s on %d shards, the page's %d "
                                     "keys are on %d" % (name, table, count, keys, holding))
                else:
                    self.assertLessEqual(count, shards, name)
                    for scan in scans:
                        self.assertIn(scan["Node Type"], INDEXED, "%s scans all of a shard of "
                                      "%s: %s" % (name, table, json.dumps(scan)[:400]))
                if "(scenario" in name:
                    self.assertLess(count, shards, "%s, a hot search, reads %s on every shard"
                                    % (name, table))

    @classmethod
    def report_tasks(cls):
        """The Task Counts measured, on stderr (the test's log in CI)."""
        if MEASURED:
            sys.stderr.write("\nCitus tasks per statement (search: table, as documented: "
                             "tasks of shards)\n")
            for name, table, how, count, shards, keys in MEASURED:
                sys.stderr.write("  %s: %s, %s: %d of %d%s\n" % (name, table, how, count,
                                                                 shards, keys))

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
