"""Bytes on disk per breach record and per card in a PostgreSQL store, for the capacity plan of
docs/SCALING.md: a synthetic corpus of N records and N cards (gen_corpus.py), loaded with the
real breachctl (`import --bulk`) into a throwaway cluster, vacuumed and analysed, then every
table's size with its indexes and TOAST (pg_total_relation_size).

    scripts/pg-cluster.sh run python3 bench/store_size.py --n 1000000   (make bench-size)

A record's bytes are records', record_domains' and domain_counts'; a card's are cards',
card_bins', card_words', card_owner_words' and card_counts'. Prints a Markdown table."""
import argparse
import os
import subprocess
import sys
import tempfile
import time

BENCH = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(BENCH)
RECORD_TABLES = ("records", "record_domains", "domain_counts")
CARD_TABLES = ("cards", "card_bins", "card_words", "card_owner_words", "card_counts")


def psql(uri, sql):
    out = subprocess.run(["psql", uri, "-XAtq", "-v", "ON_ERROR_STOP=1", "-c", sql],
                         check=True, capture_output=True, text=True).stdout
    return [line.split("|") for line in out.splitlines()]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1_000_000, help="records, and as many cards")
    ap.add_argument("--build", default="build")
    ap.add_argument("--corpus", help="a gen_corpus.py directory to reuse")
    a = ap.parse_args()
    uri = os.environ.get("BREACHD_PG_URI")
    if not uri:
        sys.exit("store_size.py: run me as scripts/pg-cluster.sh run python3 bench/store_size.py")
    work = tempfile.mkdtemp(prefix="breachd-size-")
    corpus = a.corpus or os.path.join(work, "corpus")
    if not a.corpus:
        subprocess.run([sys.executable, os.path.join(BENCH, "gen_corpus.py"), "--records",
                        str(a.n), "--cards", str(a.n), "--breaches", "200", "--seed", "7",
                        "--out", corpus], check=True)
    ctl = os.path.join(ROOT, a.build, "breachctl")
    store = ["--db", uri, "--secret", os.path.join(work, "secret")]
    subprocess.run([ctl, "init", *store], check=True, capture_output=True)
    for kind, name, extra in (("breaches", "breaches.jsonl", []),
                              ("records", "records.jsonl", ["--bulk"]),
                              ("cards", "cards.jsonl", ["--bulk"])):
        t = time.time()
        subprocess.run([ctl, "import", kind, os.path.join(corpus, name), *extra, *store],
                       check=True, capture_output=True)
        print("loaded %s in %.0f s" % (kind, time.time() - t), file=sys.stderr)
    psql(uri, "VACUUM (ANALYZE)")
    sizes = dict((t, int(n)) for t, n in psql(
        uri, "SELECT relname, pg_total_relation_size(oid) FROM pg_class WHERE relkind = 'r' "
             "AND relnamespace = 'public'::regnamespace"))
    records = int(psql(uri, "SELECT count(*) FROM records")[0][0])
    cards = int(psql(uri, "SELECT count(*) FROM cards")[0][0])
    per_record = sum(sizes[t] for t in RECORD_TABLES) / records
    per_card = sum(sizes[t] for t in CARD_TABLES) / cards
    version = psql(uri, "SELECT value FROM meta WHERE key = 'schema_version'")[0][0]
    print("| schema version %s | %s records | %s cards |" % (version, format(records, ","),
                                                           format(cards, ",")))
    print("|---|---|---|")
    print("| bytes per record, per card | %s | %s |" % (format(round(per_record), ","),
                                                       format(round(per_card), ",")))
    for t in RECORD_TABLES + CARD_TABLES:
        print("| `%s` | %s MB | |" % (t, format(round(sizes[t] / 1e6), ",")))
    subprocess.run(["rm", "-rf", work])


if __name__ == "__main__":
    main()
