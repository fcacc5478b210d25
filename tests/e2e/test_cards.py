"""GET /credit-card-search: the query language end to end, sort, pages and the envelope."""
import csv
import hashlib
import io
import json
import sqlite3
import unittest
import urllib.parse

from harness import (JOB_LIMITS_OUT, STORE, SCHEMA_VERSION, Ctl, Server, ServerTest, downgrade_to_v2, fixture,
                     sqlite_only)

ALL = ["c01", "c02", "c03", "c04", "c05", "c06", "c07", "c08"]
# createdAt descending, the default order
BY_CREATED_DESC = ["c08", "c02", "c01", "c05", "c03", "c04", "c06", "c07"]


class CardSearch(ServerTest):
    @classmethod
    def populate(cls, ctl):
        ctl.import_("cards", fixture("cards.csv"))

    def page(self, status=200, **params):
        st, hdrs, raw = self.srv.request("/v7/credit-card-search?" + urllib.parse.urlencode(params, doseq=True),
                                         key=self.key)
        body = json.loads(raw)
        self.assertEqual(st, status, body)
        for digits in ("4111111111111111", "378282246310005", "5555555555554444", "6011111111111117"):
            self.assertNotIn(digits.encode(), raw)
        return body

    def ids(self, query, **params):
        body = self.page(query=query, size="100", **params)
        return [c["id"] for c in body["content"]]

    def same(self, query, want):
        self.assertEqual(sorted(self.ids(query)), sorted(want), query)

    def test_empty_query_matches_everything_newest_first(self):
        self.assertEqual(self.ids(""), BY_CREATED_DESC)
        body = self.page()
        self.assertEqual(body["totalElements"], 8)
        self.assertEqual([c["id"] for c in body["content"]], BY_CREATED_DESC)

    def test_card_record_has_every_field_and_a_masked_number(self):
        body = self.page(query="leakId:L1 AND cvv:123")
        self.assertEqual(body["content"], [{
            "id": "c01", "createdAt": "2024-01-01 10:00:00", "bank": "Example Bank",
            "number": "411111XXXXXX1111", "owner": "John Smith", "cvv": "***",
            "expireDate": "2026-01-31", "cvssScore": 7.5, "leakId": "L1", "leakName": "Leak One",
            "leakPublishDate": "2024-01-02", "leakDiscoverDate": "2024-01-03", "leakSize": 10,
            "leakTags": "paid,fresh"}])
        masked = {c["id"]: c["number"] for c in self.page(size="100")["content"]}
        self.assertEqual(masked["c04"], "378282XXXXX0005")
        self.assertEqual(masked["c03"], "411111XXXXXXXXX1111")
        expiry = {c["id"]: c["expireDate"] for c in self.page(size="100")["content"]}
        self.assertEqual(expiry["c02"], "2025-06-30")  # MM/YY: the month's last day
        self.assertEqual(expiry["c03"], "2027-12-31")  # YYYY-MM likewise

    def test_number_patterns(self):
        self.same("411111*", ["c01", "c02", "c03"])
        self.same("number:411111*", ["c01", "c02", "c03"])
        self.same("411111*1111", ["c01", "c02", "c03"])
        self.same("*1111", ["c01", "c02", "c03", "c05"])
        self.same("*4444", ["c06", "c07"])
        self.same("411111XXXXXX1111", ["c01", "c02"])
        self.same("411111??????1111", ["c01", "c02"])
        self.same("378282XXXXX0005", ["c04"])
        self.same("3782*", ["c04", "c05"])
        self.same("55555?*", ["c06", "c07"])

    def test_whole_bin_pages_in_created_order(self):
        # A lone six-digit BIN in createdAt order is read off the (bin, created_at) index.
        bin_desc = [c for c in BY_CREATED_DESC if c in ("c01", "c02", "c03")]
        self.assertEqual(self.ids("number:411111*"), bin_desc)
        self.assertEqual(self.ids("number:411111*", sort="createdAt,asc"), bin_desc[::-1])
        pages = [self.page(query="number:411111*", size="1", page=str(n)) for n in range(4)]
        self.assertEqual([c["id"] for p in pages for c in p["content"]], bin_desc)
        self.assertEqual([p["totalElements"] for p in pages], [3, 3, 3, 3])
        self.assertEqual(self.ids("number:555555*"), ["c06", "c07"])

    def test_pattern_pinning_a_hidden_digit_is_refused(self):
        for q in ("4111112*", "411111X1XXXX1111", "*11111111"):
            body = self.page(422, query=q)
            self.assertEqual(body["error"], "validation_error")
            self.assertIn("hidden", body["message"])

    def test_full_number_and_hash(self):
        self.same("4111111111111111", ["c01"])
        self.same('number:"4111 1111 1111 1111"', ["c01"])
        self.same('"4111-1111-1111-1111"', ["c01"])
        self.same("4111111111111112", [])
        digest = hashlib.sha256(b"4111110000000001111").hexdigest()
        self.same("Hash:" + digest, ["c03"])
        self.same("hash:" + digest.upper(), ["c03"])

    def test_owner_and_bank_words(self):
        self.same("owner:john", ["c01", "c05"])
        self.same("owner:JOHN", ["c01", "c05"])
        self.same("owner:jo*", ["c01", "c02", "c05", "c07"])
        self.same('owner:"john smith"', ["c01"])
        self.same("owner:smith", ["c01", "c03", "c06"])
        self.same('owner:"jane smith"', ["c03", "c06"])
        self.same("owner:jose", ["c07"])
        self.same('bank:"example bank"', ["c01", "c02", "c08"])
        self.same("bank:demo", ["c06", "c07"])

    def test_exact_fields(self):
        self.same("cvv:123", ["c01", "c05"])
        self.same("cvv:1234", ["c04"])
        self.same("leakId:L2", ["c03", "c04", "c08"])
        self.same("leakId:l2", [])

    def test_ranges(self):
        self.same("expireDate:[2026-01-31 TO *]", ["c01", "c03", "c05", "c07", "c08"])
        self.same("expireDate:{2026-01-31 TO *]", ["c03", "c07", "c08"])
        self.same("expireDate:[* TO 2024-12-31]", ["c04", "c06"])
        self.same("expireDate:[* TO 2024-12-31}", ["c06"])
        self.same("createdAt:2024-01-01", ["c01", "c05"])
        self.same('createdAt:["2024-01-01 00:00:01" TO "2024-02-01 09:30:00"]', ["c01", "c02"])
        self.same("cvv:123 AND expireDate:[2026-01-01 TO *]", ["c01", "c05"])

    def test_boolean_precedence(self):
        self.same("cvv:123 OR cvv:456 AND leakId:L1", ["c01", "c05", "c02"])
        self.same("(cvv:123 OR cvv:456) AND leakId:L1", ["c01", "c02"])
        self.same("cvv:123 || cvv:456 && leakId:L1", ["c01", "c05", "c02"])
        self.same("owner:smith bank:demo", ["c06"])
        self.same("NOT leakId:L1", ["c03", "c04", "c05", "c06", "c08"])
        self.same("!leakId:L1 AND NOT owner:smith", ["c04", "c05", "c08"])
        self.same("411111* AND NOT owner:john", ["c02", "c03"])

    def test_query_errors_give_a_position(self):
        body = self.page(422, query="(owner:john")
        self.assertRegex(body["message"], r"\d")
        body = self.page(422, query="colour:red")
        self.assertIn("colour", body["message"])
        self.page(422, query="owner:[a TO b]")
        self.page(422, query="x" * 4097)

    def test_sort_both_ways_with_pages_that_never_overlap(self):
        for sort, want in (("cvssScore,desc", ["c03", "c07", "c01", "c05", "c02", "c06", "c08", "c04"]),
                           ("cvssScore", ["c04", "c08", "c06", "c02", "c05", "c01", "c07", "c03"]),
                           ("owner,asc", ["c04", "c06", "c05", "c01", "c02", "c07", "c03", "c08"])):
            seen = []
            for p in range(3):
                seen += [c["id"] for c in self.page(sort=sort, size="3", page=str(p))["content"]]
            self.assertEqual(seen, want, sort)
        # ties (same leakName) are broken by id, in the first key's direction
        self.assertEqual(self.ids("", sort=["leakName,asc"]),
                         ["c01", "c02", "c07", "c05", "c06", "c03", "c04", "c08"])
        self.assertEqual(self.ids("", sort=["leakSize,desc", "createdAt,asc"]),
                         ["c06", "c05", "c04", "c03", "c08", "c07", "c01", "c02"])

    def test_envelope_arithmetic(self):
        def env(page):
            b = self.page(size="3", page=str(page))
            del b["content"]
            return b
        base = {"size": 3, "totalElements": 8, "totalPages": 3}
        self.assertEqual(env(0), dict(base, number=0, numberOfElements=3, first=True, last=False, hasContent=True))
        self.assertEqual(env(1), dict(base, number=1, numberOfElements=3, first=False, last=False, hasContent=True))
        self.assertEqual(env(2), dict(base, number=2, numberOfElements=2, first=False, last=True, hasContent=True))
        self.assertEqual(env(3), dict(base, number=3, numberOfElements=0, first=False, last=True, hasContent=False))
        body = self.page(query="owner:nobody")
        self.assertEqual(body, {"number": 0, "size": 20, "totalElements": 0, "totalPages": 0,
                                "numberOfElements": 0, "first": True, "last": True,
                                "hasContent": False, "content": []})
        self.assertEqual(list(self.page().keys()), ["number", "size", "totalElements", "totalPages",
                                                    "numberOfElements", "first", "last",
                                                    "hasContent", "content"])

    def test_parameter_validation(self):
        for params in (dict(size="0"), dict(size="1001"), dict(page="-1"),
                       dict(page="100", size="1001"), dict(page="101", size="1000"),
                       dict(sort="number"), dict(sort="createdAt,up"),
                       dict(sort=["owner", "owner,desc"])):
            self.assertEqual(self.page(422, **params)["error"], "validation_error", params)
        self.assertEqual(self.page(page="100", size="1000")["numberOfElements"], 0)
        self.assertEqual(self.page(400, size="ten")["error"], "bad_request")
        self.assertEqual(self.page(400, qeury="x")["error"], "bad_request")
        self.assertEqual(self.page(400, query=["a", "b"])["error"], "bad_request")


class DigitPrefixesAndTails(ServerTest):
    """Counts and rows of number patterns whose digits sit at the edges of a digit range.

    A plain digit prefix (or reversed-tail prefix) is searched and counted as a range up to
    the prefix with its last digit raised by one, so prefixes ending in 9 and neighbours
    like 419999 / 420000 are where a wrong bound would show."""
    NUMBERS = ["4199999999999999", "4200000000000000", "4199990000009990", "4111119999990999",
               "4999990000000009", "5000000000000000", "4190000000001999", "4299990000000000",
               "4209999999991000", "3999990000000990", "4199999999990099"]

    @classmethod
    def populate(cls, ctl):
        rows = ["id,createdAt,number"]
        rows += ["n%02d,2024-01-%02d 00:00:00,%s" % (i, i + 1, n) for i, n in enumerate(cls.NUMBERS)]
        ctl.import_("cards", ctl.write("edges.csv", "\n".join(rows) + "\n"))

    def check(self, query, want_numbers):
        st, hdrs, raw = self.srv.request("/v7/credit-card-search?" + urllib.parse.urlencode(
            {"query": query, "size": "100"}), key=self.key)
        body = json.loads(raw)
        self.assertEqual(st, 200, body)
        want = sorted("n%02d" % self.NUMBERS.index(n) for n in want_numbers)
        self.assertEqual(sorted(c["id"] for c in body["content"]), want, query)
        self.assertEqual(body["totalElements"], len(want), query)

    def test_prefixes(self):
        for p in ("4", "41", "419", "4199", "41999", "419999", "42", "420000", "4299",
                  "49", "499999", "5", "39", "3", "9", "499", "43"):
            want = [n for n in self.NUMBERS if n.startswith(p)]
            self.check(p + "*", want)
            # not a lone pattern: counted through the indexes instead of card_counts
            self.check("%s* AND NOT cvv:000" % p, want)

    def test_tails(self):
        for t in ("9", "99", "999", "9999", "0", "00", "000", "0000", "1999", "0999", "9990",
                  "1000", "0009", "0990", "0099", "1"):
            want = [n for n in self.NUMBERS if n.endswith(t)]
            self.check("*" + t, want)
            self.check("*%s AND NOT cvv:000" % t, want)

    def test_prefix_and_tail_together(self):
        for p, t in (("419", "99"), ("4199", "9990"), ("42", "000"), ("4", "9"), ("41999", "0099")):
            want = [n for n in self.NUMBERS if n.startswith(p) and n.endswith(t)]
            self.check("%s*%s" % (p, t), want)


class OwnerWordWithExpiry(ServerTest):
    """owner:WORD AND expireDate ranges: the count comes from the owner-word table, the page
    from the FTS5 index, and both must agree with a plain reading of the cards."""
    CARDS = [  # id, owner, expireDate ("" = none)
        ("w01", "John Smith", "2026-01-31"), ("w02", "JOHN john Johnson", "2027-06-30"),
        ("w03", "Jöhn Ñandú", "2028-02-29"), ("w04", "john", ""), ("w05", "Mary-John O'Neil", "2026-01-31"),
        ("w06", "Johnny Smith", "2029-12-31"), ("w07", "Smith, John", "2025-12-31"),
        ("w08", "", "2026-05-31"), ("w09", "john  smith", "2030-01-31"), ("w10", "Émile Zola", "2027-01-31"),
        ("w00", "Smith John", "2027-06-30"), ("w11", "John Smith-Jones", "2026-01-31"),
    ]
    # the words each owner holds, as the FTS5 unicode61 tokenizer with diacritics removed reads them
    WORDS = {"w01": {"john", "smith"}, "w02": {"john", "johnson"}, "w03": {"john", "nandu"},
             "w04": {"john"}, "w05": {"mary", "john", "o", "neil"}, "w06": {"johnny", "smith"},
             "w07": {"smith", "john"}, "w08": set(), "w09": {"john", "smith"}, "w10": {"emile", "zola"},
             "w00": {"smith", "john"}, "w11": {"john", "smith", "jones"}}

    @classmethod
    def populate(cls, ctl):
        rows = ["id,createdAt,number,owner,expireDate"]
        for i, (cid, owner, exp) in enumerate(cls.CARDS):
            rows.append('%s,2024-01-%02d 00:00:00,41111100000%05d,"%s",%s' % (cid, i + 1, i, owner, exp))
        ctl.import_("cards", ctl.write("owners.csv", "\n".join(rows) + "\n"))

    def get(self, **params):
        st, hdrs, raw = self.srv.request("/v7/credit-card-search?" + urllib.parse.urlencode(params),
                                         key=self.key)
        body = json.loads(raw)
        self.assertEqual(st, 200, body)
        return body

    def check(self, query, word, *ranges):
        want = []
        for cid, owner, exp in self.CARDS:
            if word in self.WORDS[cid] and exp and all(
                    (lo is None or (exp >= lo if li else exp > lo)) and
                    (hi is None or (exp <= hi if hi_inc else exp < hi))
                    for lo, li, hi, hi_inc in ranges):
                want.append((exp, cid))
        for sort, rows in (("expireDate,asc", sorted(want)), ("expireDate,desc", sorted(want, reverse=True))):
            body = self.get(query=query, size="100", sort=sort)
            self.assertEqual([c["id"] for c in body["content"]], [cid for exp, cid in rows], (query, sort))
            self.assertEqual(body["totalElements"], len(want), query)
            # pages of two, read one after the other, are the same rows in the same order
            paged = [c["id"] for n in range((len(want) + 1) // 2)
                     for c in self.get(query=query, size="2", page=str(n), sort=sort)["content"]]
            self.assertEqual(paged, [cid for exp, cid in rows], (query, sort))
        # in another order the word index is not used for the page: the same set
        body = self.get(query=query, size="100")
        self.assertEqual(sorted(c["id"] for c in body["content"]), sorted(cid for exp, cid in want), query)
        return len(want)

    def test_counts_agree_with_the_rows(self):
        n = self.check("owner:john AND expireDate:[2026-01-01 TO *]", "john", ("2026-01-01", True, None, True))
        self.assertEqual(n, 7)  # w00 w01 w02 w03 w05 w09 w11: w07 expires in 2025, w04 never
        self.check("owner:john AND expireDate:[2026-01-31 TO 2028-02-29]", "john",
                   ("2026-01-31", True, "2028-02-29", True))
        self.check("owner:john AND expireDate:{2026-01-31 TO 2028-02-29}", "john",
                   ("2026-01-31", False, "2028-02-29", False))
        self.check("owner:john AND expireDate:[* TO 2026-01-31}", "john", (None, True, "2026-01-31", False))
        self.check("owner:john AND expireDate:*", "john", (None, True, None, True))
        self.check("owner:JOHN AND expireDate:[2020-01-01 TO *] AND expireDate:[* TO 2027-12-31]",
                   "john", ("2020-01-01", True, None, True), (None, True, "2027-12-31", True))
        self.check("owner:smith AND expireDate:[2026-01-01 TO *]", "smith", ("2026-01-01", True, None, True))
        self.check("owner:nandu AND expireDate:[2020-01-01 TO *]", "nandu", ("2020-01-01", True, None, True))
        self.check("owner:ñandú AND expireDate:[2020-01-01 TO *]", "nandu", ("2020-01-01", True, None, True))
        self.check("owner:emile AND expireDate:[2027-01-31 TO 2027-01-31]", "emile",
                   ("2027-01-31", True, "2027-01-31", True))
        self.check("owner:nobody AND expireDate:[2020-01-01 TO *]", "nobody", ("2020-01-01", True, None, True))


class OwnerWordWithExpiryBulk(OwnerWordWithExpiry):
    """The same cards loaded with import --bulk, which rebuilds the other card indexes."""

    @classmethod
    def populate(cls, ctl):
        rows = ["id,createdAt,number,owner,expireDate"]
        for i, (cid, owner, exp) in enumerate(cls.CARDS):
            rows.append('%s,2024-01-%02d 00:00:00,41111100000%05d,"%s",%s' % (cid, i + 1, i, owner, exp))
        path = ctl.write("owners.csv", "\n".join(rows) + "\n")
        ctl.import_("cards", path, extra=("--bulk",))
        ctl.import_("cards", path, extra=("--bulk",))  # all duplicates: no word twice


class OwnerWordRowsOfABulkLoad(unittest.TestCase):
    """A --bulk load's owner-word rows and their counts per expiry (card_counts kind 2,
    recounted at its end) are exactly those a plain import of the same cards leaves, including
    in a store that already holds cards; and a store from before the counts gets them when
    it is next opened for writing (SQLite's migration 20), one whose owner words name cards
    by row id has them by card id (migration 21)."""
    FIRST = ("id,createdAt,number,owner,bank,expireDate\n"
             "o1,2024-01-01 00:00:00,4111110000000001,Anna Smith,First Bank,2027-01-31\n"
             "o2,2024-01-02 00:00:00,4111110000000002,Bob,,2028-02-29\n")
    LOAD = ("id,createdAt,number,owner,bank,expireDate\n"
            "n1,2024-02-01 00:00:00,4111110000000011,José Núñez,Smith Bank,2029-03-31\n"
            "n2,2024-02-02 00:00:00,4111110000000012,Anna Anna Lee,,2027-01-31\n"
            "n3,2024-02-03 00:00:00,4111110000000013,No Expiry,,\n"
            "n4,2024-02-04 00:00:00,4111110000000014,,Bank Only,2030-12-31\n"
            "o1,2024-01-01 00:00:00,4111110000000001,Anna Smith,First Bank,2027-01-31\n")

    COUNTS = [["anna 2027-01-31", "2"], ["bob 2028-02-29", "1"], ["jose 2029-03-31", "1"],
              ["lee 2027-01-31", "1"], ["nunez 2029-03-31", "1"], ["smith 2027-01-31", "1"]]

    def store(self, bulk):
        ctl = Ctl().init()
        self.addCleanup(ctl.cleanup)
        ctl.import_("cards", ctl.write("first.csv", self.FIRST))
        ctl.import_("cards", ctl.write("load.csv", self.LOAD),
                    extra=("--bulk",) if bulk else ())
        return ctl

    def rows(self, ctl):
        return ctl.sql("SELECT word, expire_date, card_id FROM card_owner_words ORDER BY 1, 2, 3")

    def counts(self, ctl):
        return ctl.sql("SELECT key, n FROM card_counts WHERE kind = 2 ORDER BY key")

    def test_the_same_rows_as_a_plain_import(self):
        want = [["anna", "2027-01-31", "n2"], ["anna", "2027-01-31", "o1"],
                ["bob", "2028-02-29", "o2"], ["jose", "2029-03-31", "n1"],
                ["lee", "2027-01-31", "n2"], ["nunez", "2029-03-31", "n1"],
                ["smith", "2027-01-31", "o1"]]
        for bulk in (False, True):
            ctl = self.store(bulk)
            self.assertEqual(self.rows(ctl), want, "bulk" if bulk else "plain")
            self.assertEqual(self.counts(ctl), self.COUNTS, "bulk" if bulk else "plain")

    @sqlite_only
    def test_a_store_naming_cards_by_row_id_is_upgraded_to_card_ids(self):
        ctl = self.store(bulk=False)
        want = self.rows(ctl)
        ctl.sql("DROP TABLE card_owner_words")
        ctl.sql("CREATE TABLE card_owner_words(word TEXT NOT NULL, expire_date TEXT NOT NULL,"
                " id INTEGER NOT NULL, PRIMARY KEY(word, expire_date, id)) WITHOUT ROWID")
        for word, exp, card in want:
            ctl.sql("INSERT INTO card_owner_words SELECT '%s', '%s', id FROM cards "
                    "WHERE card_id = '%s'" % (word, exp, card))
        ctl.sql("PRAGMA user_version = 20")  # the SQLite version before migration 21
        ctl.run("stats", check=0)
        self.assertEqual(ctl.sql("PRAGMA user_version"), [[str(SCHEMA_VERSION)]])
        self.assertEqual(self.rows(ctl), want)
        self.assertEqual(ctl.sql("SELECT value FROM meta WHERE key = "
                                 "'pending_owner_words_by_card'"), [["0"]])

    @sqlite_only
    def test_a_store_from_before_the_counts_gets_them(self):
        ctl = self.store(bulk=False)
        ctl.sql("DELETE FROM card_counts WHERE kind = 2")
        ctl.sql("PRAGMA user_version = 19")  # the SQLite version before the counts
        ctl.run("stats", check=0)  # opens the store for writing: the upgrade
        self.assertEqual(ctl.sql("PRAGMA user_version"), [[str(SCHEMA_VERSION)]])
        self.assertEqual(self.counts(ctl), self.COUNTS)


# Cards whose CVVs the tests below look for in the store. The owner "Cvv Probe" sits right
# before the CVV in a SQLite row (the record's values are laid end to end, in column order),
# so b"Probe" + CVV in the store's bytes is that CVV kept in clear.
CVV_CARDS = ("id,createdAt,number,owner,cvv,expireDate\n"
             "x1,2024-01-02 00:00:00,4111 1111 1111 1111,Cvv Probe,123,2027-01-31\n"
             "x2,2024-01-03 00:00:00,378282246310005,Cvv Probe,8642,2027-01-31\n"
             "x3,2024-01-04 00:00:00,6011111111111117,No Cvv,,2027-01-31\n")
CVV_CARDS_BULK = ("id,createdAt,number,owner,cvv,expireDate\n"
                  "x4,2024-01-05 00:00:00,5555555555554444,Cvv Probe,9753,2027-01-31\n")
# The schema version before the migration that keyed and masked CVVs.
BEFORE_CVV_HASHES = 16 if STORE == "pg" else 11


def stored_cvvs(ctl):
    """Each card's stored CVV and the length of its keyed hash (0: none), by card id."""
    return ctl.sql("SELECT card_id, coalesce(cvv, '-'), coalesce(length(cvv_hmac), 0) "
                   "FROM cards ORDER BY card_id")


def rewind_cvvs(ctl, plain):
    """Makes ctl's store one made before CVVs were keyed and masked: each CVV of plain (card
    id -> CVV) in clear and indexed as then, no keyed hash, the schema version before the
    migration that added it. (On a store already of that kind, only the CVVs are set.)"""
    sets = "".join("UPDATE cards SET cvv = '%s' WHERE card_id = '%s';" % (v, k)
                   for k, v in plain.items())
    if STORE == "pg":
        ctl.sql("DROP INDEX IF EXISTS cards_by_cvv_hmac;"
                "ALTER TABLE cards DROP COLUMN IF EXISTS cvv_hmac;" + sets +
                "CREATE INDEX IF NOT EXISTS cards_by_cvv ON cards(cvv) WHERE cvv IS NOT NULL;"
                "DELETE FROM meta WHERE key = 'pending_cvv_hashes';"
                "UPDATE meta SET value = '%d' WHERE key = 'schema_version'"
                % BEFORE_CVV_HASHES)
        return
    db = sqlite3.connect(ctl.db)
    try:
        columns = [r[1] for r in db.execute("PRAGMA table_info(cards)")]
        db.executescript(JOB_LIMITS_OUT + "DROP INDEX IF EXISTS cards_by_cvv_hmac;" +
                         ("ALTER TABLE cards DROP COLUMN cvv_hmac;" if "cvv_hmac" in columns
                          else "") + sets +
                         "CREATE INDEX IF NOT EXISTS cards_by_cvv ON cards(cvv) "
                         "WHERE cvv IS NOT NULL;"
                         "DELETE FROM meta WHERE key = 'pending_cvv_hashes';"
                         "PRAGMA user_version = %d;" % BEFORE_CVV_HASHES)
    finally:
        db.close()


class CardCvv(unittest.TestCase):
    """A CVV is a secret like the card number: replies show it masked (one * per digit), the
    store keeps only that mask and a keyed hash (so cvv: still finds the card), and a store
    made before keeps them in clear only until the first program with the secret opens it."""

    def setUp(self):
        self.ctl = Ctl().init()
        self.ctl.import_("cards", self.ctl.write("cvv.csv", CVV_CARDS))
        self.ctl.import_("cards", self.ctl.write("bulk.csv", CVV_CARDS_BULK), extra=("--bulk",))
        self.key = self.ctl.key("cvv", "--rate", "1000000/h")

    def tearDown(self):
        self.ctl.cleanup()

    def cvvs_found(self, srv, query):
        """{card id: cvv} of the cards query finds, from the JSON reply and, checked equal,
        from the CSV one."""
        path = "/v7/credit-card-search?" + urllib.parse.urlencode({"query": query, "size": "100"})
        st, body = srv.get(path, key=self.key)
        self.assertEqual(st, 200, body)
        got = {c["id"]: c["cvv"] for c in body["content"]}
        st, _, raw = srv.request(path, key=self.key, headers={"Accept": "text/csv"})
        self.assertEqual(st, 200, raw)
        rows = list(csv.DictReader(io.StringIO(raw.decode(), newline="")))
        self.assertEqual({r["id"]: r["cvv"] or None for r in rows}, got)
        return got

    def check_served(self, srv):
        self.assertEqual(self.cvvs_found(srv, "cvv:123"), {"x1": "***"})
        self.assertEqual(self.cvvs_found(srv, "cvv:8642"), {"x2": "****"})
        self.assertEqual(self.cvvs_found(srv, "cvv:9753"), {"x4": "****"})
        self.assertEqual(self.cvvs_found(srv, "cvv:1234"), {})
        self.assertEqual(self.cvvs_found(srv, "NOT cvv:123"),
                         {"x2": "****", "x3": None, "x4": "****"})
        self.assertEqual(self.cvvs_found(srv, "owner:probe AND cvv:8642"), {"x2": "****"})

    def check_stored(self):
        if STORE == "sqlite":
            data = self.ctl.store_bytes()
            for cvv in (b"123", b"8642", b"9753"):
                self.assertFalse(b"Probe" + cvv in data, "CVV %s in clear in the store" % cvv)
            # the row as laid out: the owner, then the CVV
            self.assertTrue(b"Probe****" in data, "no masked CVV after its owner")
        self.assertEqual(self.ctl.sql("SELECT card_id, cvv FROM cards WHERE cvv IS NOT NULL "
                                      "ORDER BY card_id"),
                         [["x1", "***"], ["x2", "****"], ["x4", "****"]])
        self.assertEqual(stored_cvvs(self.ctl), [["x1", "***", "32"], ["x2", "****", "32"],
                                                 ["x3", "-", "0"], ["x4", "****", "32"]])
        self.assertEqual(self.ctl.sql("SELECT count(*) FROM meta WHERE key = "
                                      "'pending_cvv_hashes'"), [["0"]])

    def test_replies_show_the_cvv_masked_and_cvv_queries_still_find_the_card(self):
        srv = Server(self.ctl)
        try:
            self.check_served(srv)
        finally:
            self.assertEqual(srv.stop(), 0)

    def test_the_store_keeps_only_a_mask_and_a_keyed_hash_of_each_cvv(self):
        self.check_stored()

    def test_an_import_finishes_the_upgrade_of_a_store_that_kept_cvvs_in_clear(self):
        rewind_cvvs(self.ctl, {"x1": "123", "x2": "8642", "x4": "9753"})
        self.assertEqual(self.ctl.sql("SELECT cvv FROM cards WHERE card_id = 'x1'"), [["123"]])
        self.ctl.import_("cards", self.ctl.write("cvv.csv", CVV_CARDS))  # all duplicates
        self.check_stored()
        srv = Server(self.ctl)
        try:
            self.check_served(srv)
        finally:
            self.assertEqual(srv.stop(), 0)

    def test_a_server_start_finishes_the_upgrade_of_a_store_that_kept_cvvs_in_clear(self):
        rewind_cvvs(self.ctl, {"x1": "123", "x2": "8642", "x4": "9753"})
        srv = Server(self.ctl)
        try:
            self.check_served(srv)
        finally:
            self.assertEqual(srv.stop(), 0)
        self.check_stored()


@sqlite_only
class OwnerWordsMigration(unittest.TestCase):
    """A store made before the owner-word table gets it filled, from the FTS5 index, by
    the first program that opens it."""

    def test_server_start_fills_the_table_from_the_word_index(self):
        ctl = Ctl().init()
        try:
            ctl.import_("cards", fixture("cards.csv"))
            key = ctl.key("migration", "--rate", "1000000000/h")
            db = sqlite3.connect(ctl.db)
            made = db.execute("SELECT word, expire_date, card_id FROM card_owner_words "
                              "ORDER BY 1, 2, 3").fetchall()
            self.assertEqual(len(made), 17)
            self.assertIn(("jose", "2030-01-31", "c07"), made)  # José Núñez, diacritics removed
            db.close()
            downgrade_to_v2(ctl.db)
            srv = Server(ctl)
            try:
                st, body = srv.get("/v7/credit-card-search?" + urllib.parse.urlencode(
                    {"query": "owner:smith AND expireDate:[2026-01-01 TO *]"}), key=key)
                self.assertEqual(st, 200, body)
                self.assertEqual(body["totalElements"], 2)  # c01, c03 (c06 expired, c08 is Smithers)
            finally:
                self.assertEqual(srv.stop(), 0)
            db = sqlite3.connect(ctl.db)
            self.assertEqual(db.execute("PRAGMA user_version").fetchone()[0], SCHEMA_VERSION)
            self.assertEqual(db.execute("SELECT word, expire_date, card_id FROM card_owner_words "
                                        "ORDER BY 1, 2, 3").fetchall(), made)
            db.close()
        finally:
            ctl.cleanup()


if __name__ == "__main__":
    unittest.main()
