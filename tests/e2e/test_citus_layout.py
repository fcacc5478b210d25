"""The store laid out over a Citus cluster (issue 37, docs/SCALING.md "The layout"):
`breachctl init` on a coordinator distributes and replicates the tables as the document
says, `breachctl citus distribute` does the same for a store made before and changes nothing
when run again, and both refuse plainly where there is no cluster."""
import json
import os
import re
import subprocess
import unittest

from harness import CITUS_DIR, CITUS_SCRIPT, ROOT, STORE, Ctl, fixture

SCALING = os.path.join(ROOT, "docs", "SCALING.md")


def documented():
    """SCALING.md's layout: {table: (column or None, colocated with or None)}."""
    with open(SCALING, encoding="utf-8") as f:
        text = f.read()
    section = text[text.index("## More data than one machine: Citus"):]
    layout = {}
    for m in re.finditer(r"create_distributed_table\('(\w+)', '(\w+)'"
                         r"(?:, colocate_with := '(\w+)')?", section):
        layout[m.group(1)] = (m.group(2), m.group(3))
    for m in re.finditer(r"create_reference_table\('(\w+)'\)", section):
        layout[m.group(1)] = (None, None)
    return layout


def said(stderr):
    """breachctl's lines about each table: {table: (column or None, colocated or None, already)}."""
    out = {}
    for line in stderr.decode().splitlines():
        m = re.match(r"breachctl: (\w+) +(?:reference table|distributed by (\w+)"
                     r"(?:, co-located with (\w+))?)( \(already\))?$", line)
        if m:
            out[m.group(1)] = (m.group(2), m.group(3), bool(m.group(4)))
    return out


@unittest.skipIf(not CITUS_DIR, "a Citus cluster (make test-citus)")
class OnCitus(unittest.TestCase):
    def test_init_lays_the_store_out_as_documented_and_distribute_again_changes_nothing(self):
        ctl = Ctl()
        try:
            p = ctl.run("init", check=0)
            want = documented()
            self.assertEqual(len(want), 13)
            self.assertEqual({t: (c, w, False) for t, (c, w) in want.items()}, said(p.stderr))
            rows = ctl.sql("SELECT logicalrelid::text, partmethod, "
                           "coalesce(column_to_column_name(logicalrelid, partkey), '') "
                           "FROM pg_dist_partition ORDER BY 1")
            self.assertEqual(sorted([t, "n" if c is None else "h", c or ""]
                                    for t, (c, _) in want.items()), rows)
            # co-located as documented: each colocate_with table shares its group
            groups = dict(ctl.sql("SELECT logicalrelid::text, colocationid FROM pg_dist_partition"))
            for t, (_, with_) in want.items():
                if with_:
                    self.assertEqual(groups[t], groups[with_], t)
            # every table the layout does not name stays on the coordinator alone
            local = ctl.sql("SELECT count(*) FROM pg_tables WHERE schemaname = 'public' AND "
                            "tablename NOT IN (SELECT logicalrelid::text FROM pg_dist_partition)")
            self.assertGreater(int(local[0][0]), 10)
            p = ctl.run("citus", "distribute", check=0)
            self.assertEqual({t: (c, w, True) for t, (c, w) in want.items()}, said(p.stderr))
            self.assertIn("(0 tables changed)", p.stderr.decode())
        finally:
            ctl.cleanup()

    def test_distribute_lays_out_a_store_made_before_with_its_rows(self):
        ctl = Ctl()
        try:
            # a store made on the coordinator's database before it was one (no extension)
            ctl.sql("DROP EXTENSION citus")
            ctl.init()
            ctl.import_("breaches", fixture("breaches.jsonl"))
            ctl.import_("records", ctl.write("r.jsonl", "".join(
                json.dumps({"breach_uuid": "11111111-1111-4111-8111-111111111111",
                            "email": "user%d@example.com" % i}) + "\n" for i in range(20))))
            before = ctl.sql("SELECT count(*) FROM records")[0][0]
            subprocess.run([CITUS_SCRIPT, "attach", CITUS_DIR, ctl.dbname], check=True,
                           capture_output=True, timeout=60)
            p = ctl.run("citus", "distribute", check=0)
            want = documented()
            self.assertEqual({t: (c, w, False) for t, (c, w) in want.items()}, said(p.stderr))
            self.assertIn("(13 tables changed)", p.stderr.decode())
            self.assertEqual(before, ctl.sql("SELECT count(*) FROM records")[0][0])
            self.assertEqual([["h"]], ctl.sql("SELECT partmethod FROM pg_dist_partition "
                                              "WHERE logicalrelid = 'records'::regclass"))
        finally:
            ctl.cleanup()


class Elsewhere(unittest.TestCase):
    @unittest.skipIf(CITUS_DIR, "not on a Citus cluster")
    def test_distribute_refuses_where_there_is_no_cluster(self):
        ctl = Ctl().init()
        try:
            p = ctl.run("citus", "distribute", check=2)
            err = p.stderr.decode()
            if STORE == "pg":
                self.assertIn("is not a Citus coordinator (it has no citus extension", err)
            else:
                self.assertIn("is a SQLite store: only a PostgreSQL store on a Citus "
                              "coordinator is laid out over a cluster", err)
            self.assertEqual("", p.stdout.decode())
        finally:
            ctl.cleanup()

    def test_usage(self):
        ctl = Ctl()
        try:
            p = ctl.run("citus", check=2)
            self.assertEqual("usage: breachctl citus distribute --db URI --secret FILE\n",
                             p.stderr.decode())
        finally:
            ctl.cleanup()
