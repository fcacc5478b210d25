/* Bulk loads on PostgreSQL: what bulk_begin drops and bulk_end builds again, the end of a
 * bulk load's duplicates, and the planner's statistics after a load. */
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "store/pg/pg_impl.h"
#include "store/sql_common.h"

static bd_result exec_sql(void *p, const char *sql)
{
    return pg_exec(p, sql);
}

/* Drops every index that ddl creates (schema.c's list: sql_common.h). */
static bd_result drop_indexes(pg_store *p, const char *ddl)
{
    return bd_sql_drop_indexes(ddl, exec_sql, p);
}

/* The records' dedup key, which a bulk record load builds once at its end (see
 * remove_load_duplicates). */
#define DEDUP_KEY_DROP "ALTER TABLE records DROP CONSTRAINT records_dedup_key"
#define DEDUP_KEY_ADD "ALTER TABLE records ADD CONSTRAINT records_dedup_key UNIQUE (ok, dedup)"

/* The domains' lookup rows (record_domains), which a bulk record load streams beside its
 * records (copy.c), and whose key it builds at its end by sorting once. */
#define DOMAIN_KEY_DROP "ALTER TABLE record_domains DROP CONSTRAINT record_domains_pkey"
#define DOMAIN_KEY_ADD                                                                             \
    "ALTER TABLE record_domains ADD PRIMARY KEY (domain, breach_date, id) INCLUDE (ok, present)"

/* The domains' counts, counted again from their lookup rows (one per record with an email
 * domain, as the records' rebuild in schema.c counts them): a third of the records' size. */
#define DOMAIN_COUNT_REBUILD                                                                       \
    "DELETE FROM domain_counts;"                                                                   \
    "INSERT INTO domain_counts(domain, n) SELECT domain, count(*) FROM record_domains "            \
    "GROUP BY domain"

/* The word tables' keys, which a bulk card load builds once at its end: it puts each word
 * row once (copy.c), so nothing needs them to be unique meanwhile. */
#define WORD_KEYS_DROP                                                                             \
    "ALTER TABLE card_words DROP CONSTRAINT card_words_pkey;"                                     \
    "ALTER TABLE card_owner_words DROP CONSTRAINT card_owner_words_pkey;"                         \
    "ALTER TABLE card_bins DROP CONSTRAINT card_bins_pkey"
#define WORD_KEYS_ADD                                                                              \
    "ALTER TABLE card_words ADD PRIMARY KEY (col, word, id, pos);"                                \
    "ALTER TABLE card_owner_words ADD PRIMARY KEY (word, expire_date, card_id);"                  \
    "ALTER TABLE card_bins ADD PRIMARY KEY (bin, created_at, card_id)"

/* A bulk card load streams its cards into their table with ids of its own (past the
 * greatest when it began, so the identity's sequence is set past them at its end), their
 * words beside them, without the card id key, the word and BIN lookup keys or the counts.
 * Its end removes every loaded card whose id an earlier card holds, with its words, adds
 * the BIN lookup rows of the cards that stayed, then builds the keys and indexes by sorting
 * once and recounts the BINs and tails. */
#define CARD_ID_KEY_DROP "ALTER TABLE cards DROP CONSTRAINT cards_pkey"
#define CARD_ID_KEY_ADD "ALTER TABLE cards ADD PRIMARY KEY (card_id)"
#define CARD_COUNT_REBUILD                                                                         \
    "DELETE FROM card_counts;"                                                                     \
    "INSERT INTO card_counts(kind, key, n) SELECT 0, bin, count(*) FROM cards GROUP BY bin "       \
    "UNION ALL SELECT 1, tail, count(*) FROM cards GROUP BY tail "                                 \
    "UNION ALL SELECT 2, word || ' ' || expire_date, count(*) FROM card_owner_words "              \
    "GROUP BY word, expire_date"

/* Owner-word rows name their card by card id, which a duplicate shares with the card it
 * lost to: the rows of each card id that had a duplicate (d, the duplicates removed) are
 * made again from the survivor's own owner words and expiry. The statement's snapshot still
 * shows the duplicates, hence the survivor picked by id. */
#define OWNER_WORDS_OF_SURVIVORS                                                                   \
    "ow AS (DELETE FROM card_owner_words WHERE card_id IN (SELECT card_id FROM d)), "             \
    "again AS (INSERT INTO card_owner_words(word, expire_date, card_id) SELECT DISTINCT w.word, " \
    "c.expire_date, c.card_id FROM cards c JOIN card_words w ON w.id = c.id AND w.col = 0 "       \
    "WHERE c.card_id IN (SELECT card_id FROM d) AND c.id NOT IN (SELECT id FROM d) "              \
    "AND c.expire_date IS NOT NULL) "

/* The greatest id in a table: the ids past it are a bulk load's. */
static bd_result last_id(pg_store *p, const char *sql, int64_t *id)
{
    PGresult *res;
    bd_result r = pg_run_sql(p, sql, NULL, false, &res);
    if (r != BD_OK)
        return r;
    *id = pg_int(res, 0, 0);
    PQclear(res);
    return BD_OK;
}

/* Inside the load's own transaction, drops the lookup indexes and unique keys of what is
 * loaded (bulk_end builds them again). */
bd_result pg_bulk_begin(bd_store *s, bd_bulk_kind kind)
{
    pg_store *p = pg_of(s);
    if (!p->in_tx)
        return BD_ERR_INVALID;
    /* On a Citus coordinator a bulk load goes in as a plain one: dropping and rebuilding
     * the keys of distributed tables, and the load's end (a self-join of cards with their
     * words, which are distributed by another column), are not what Citus distributes.
     * The rows are the same; docs/SCALING.md says what it costs. */
    if (p->citus) {
        if (!p->bulk_plain_said)
            bd_log(BD_LOG_INFO, "store", "citus: --bulk loads as a plain import on a Citus "
                                         "coordinator");
        p->bulk_plain_said = true;
        return BD_OK;
    }
    if (kind == BD_BULK_CARDS) {
        int64_t last = 0;
        bd_result r = last_id(p, "SELECT coalesce(max(id), 0) FROM cards", &last);
        if (r == BD_OK)
            r = drop_indexes(p, pg_card_indexes);
        if (r == BD_OK)
            r = pg_exec(p, WORD_KEYS_DROP "; " CARD_ID_KEY_DROP);
        p->bulk_cards = r == BD_OK;
        p->bulk_first_card_id = p->bulk_next_card_id = last;
        return r;
    }
    /* The load's records get their ids here, so that their record_domains rows can go in
     * beside them: from the identity's next value, which is past every id it ever gave
     * (an id is never given twice, as with the sequence: the email hashes' progress,
     * pastes.c, is an id), and the sequence is set past them at the end. The records
     * past the greatest id now are the load's, as the writer lock keeps other writers out. */
    PGresult *res;
    bd_result r = pg_run_sql(p,
                             "SELECT coalesce(max(id), 0), "
                             "nextval(pg_get_serial_sequence('records', 'id')) FROM records",
                             NULL, false, &res);
    if (r != BD_OK)
        return r;
    p->bulk_first_id = pg_int(res, 0, 0);
    p->bulk_next_id = pg_int(res, 0, 1);
    PQclear(res);
    pg_load_counts_begin(p, p->bulk_first_id);
    r = drop_indexes(p, pg_record_indexes);
    if (r == BD_OK)
        r = pg_exec(p, DEDUP_KEY_DROP "; " DOMAIN_KEY_DROP);
    p->bulk_records = r == BD_OK;
    return r;
}

/* A bulk record load streams the records into their table (copy.c) without the dedup key,
 * and removes the duplicates at its end: every record of the load (an id past the first)
 * whose dedup hash an earlier record holds, stored before or loaded earlier, with its
 * record_domains row. One hash join instead of a key probe per record; the key is then
 * built by sorting once. (DEDUP_KEY_*) */

static bd_result remove_load_duplicates(pg_store *p)
{
    pg_params pp = {0};
    pg_param_int(&pp, p->bulk_first_id);
    PGresult *res;
    bd_result r = pg_run_sql(p,
                             "WITH d AS (DELETE FROM records r USING records o WHERE r.id > $1 "
                             "AND o.ok = r.ok AND o.dedup = r.dedup AND o.id < r.id "
                             "RETURNING r.id, r.breach_id), "
                             "rd AS (DELETE FROM record_domains WHERE id > $1 "
                             "AND id IN (SELECT id FROM d)) "
                             "SELECT breach_id, count(*) FROM d GROUP BY breach_id",
                             &pp, false, &res);
    if (r != BD_OK)
        return r;
    for (int i = 0, n = PQntuples(res); i < n; i++) { /* by breach, for the load's counts */
        pg_copy_note_duplicates(p, pg_int(res, i, 1));
        pg_load_counts_add(p, pg_int(res, i, 0), -pg_int(res, i, 1));
    }
    PQclear(res);
    return BD_OK;
}

/* A load into an empty table can have no duplicate but among its own rows, and usually has
 * none: its unique key (add_key) is built straight away, one sort, and the self-join that
 * removes duplicates (1.6 s of a 1M-record load, 1.5 s of a 1M-card one: more than the
 * sort) is needed only when the key finds one, the attempt then undone to its savepoint.
 * *added tells whether the key stands. */
static bd_result add_key_if_unique(pg_store *p, int64_t first_id, const char *add_key,
                                   bool *added)
{
    *added = false;
    if (first_id != 0)
        return BD_OK;
    bd_result r = pg_exec(p, "SAVEPOINT bd_bulk_key");
    if (r != BD_OK)
        return r;
    r = pg_exec(p, add_key);
    if (r == BD_ERR_EXISTS)
        return pg_exec(p, "ROLLBACK TO SAVEPOINT bd_bulk_key");
    if (r == BD_OK)
        r = pg_exec(p, "RELEASE SAVEPOINT bd_bulk_key");
    *added = r == BD_OK;
    return r;
}

static bd_result end_cards(pg_store *p)
{
    bd_result r = pg_copy_flush(p); /* the last cards and their words land first */
    if (!p->bulk_cards)
        return BD_ERR_INVALID;
    p->bulk_cards = false;
    bool unique = false;
    if (r == BD_OK)
        r = add_key_if_unique(p, p->bulk_first_card_id, CARD_ID_KEY_ADD, &unique);
    pg_params pp = {0};
    pg_param_int(&pp, p->bulk_first_card_id);
    PGresult *res;
    if (r == BD_OK && !unique)
        r = pg_run_sql(p,
                       "WITH d AS (DELETE FROM cards c USING cards o WHERE c.id > $1 "
                       "AND o.card_id = c.card_id AND o.id < c.id RETURNING c.id, c.card_id), "
                       "w AS (DELETE FROM card_words WHERE id > $1 AND id IN (SELECT id FROM d)), "
                       OWNER_WORDS_OF_SURVIVORS "SELECT count(*) FROM d",
                       &pp, false, &res);
    if (r == BD_OK && !unique) {
        pg_copy_note_duplicates(p, pg_int(res, 0, 0));
        PQclear(res);
    }
    if (r == BD_OK)
        r = pg_copy_land_bulk(p, true, p->bulk_first_card_id);
    if (r == BD_OK)
        r = pg_run_sql(p,
                       "INSERT INTO card_bins(bin, created_at, card_id) "
                       "SELECT bin, created_at, card_id FROM cards WHERE id > $1",
                       &pp, false, NULL);
    if (r == BD_OK && p->bulk_next_card_id > p->bulk_first_card_id) {
        pg_params last = {0};
        pg_param_int(&last, p->bulk_next_card_id);
        r = pg_run_sql(p, "SELECT setval(pg_get_serial_sequence('cards', 'id'), $1)", &last,
                       false, NULL);
    }
    if (r == BD_OK && !unique)
        r = pg_exec(p, CARD_ID_KEY_ADD);
    if (r == BD_OK)
        r = pg_exec(p, pg_card_indexes);
    if (r == BD_OK)
        r = pg_exec(p, WORD_KEYS_ADD);
    return r == BD_OK ? pg_exec(p, CARD_COUNT_REBUILD) : r;
}

/* Rebuilds the indexes by sorting once and recounts the domains; the planner's statistics
 * follow after the commit (pg_loaded: VACUUM cannot run inside a transaction). */
bd_result pg_bulk_end(bd_store *s, bd_bulk_kind kind)
{
    pg_store *p = pg_of(s);
    if (!p->in_tx)
        return BD_ERR_INVALID;
    if (p->citus) /* loaded as a plain import (pg_bulk_begin) */
        return pg_copy_flush(p);
    if (kind == BD_BULK_CARDS)
        return end_cards(p);
    bd_result r = pg_copy_flush(p); /* the last records land before the dedup */
    if (!p->bulk_records)
        return BD_ERR_INVALID;
    p->bulk_records = false;
    bool unique = false;
    if (r == BD_OK)
        r = add_key_if_unique(p, p->bulk_first_id, DEDUP_KEY_ADD, &unique);
    if (r == BD_OK && !unique)
        r = remove_load_duplicates(p);
    if (r == BD_OK) /* what a watch matches: the load's records that stayed */
        r = pg_copy_land_bulk(p, false, p->bulk_first_id);
    if (r == BD_OK && !unique)
        r = pg_exec(p, DEDUP_KEY_ADD);
    if (r == BD_OK) /* by the key just built: the survivors of the load count passwords */
        r = pg_copy_count_bulk_passwords(p, p->bulk_first_id, unique);
    if (r == BD_OK && p->bulk_next_id > 1) { /* 0 is out of the sequence's range */
        pg_params last = {0};
        pg_param_int(&last, p->bulk_next_id - 1);
        r = pg_run_sql(p, "SELECT setval(pg_get_serial_sequence('records', 'id'), $1)", &last,
                       false, NULL);
    }
    if (r == BD_OK)
        r = pg_exec(p, pg_record_indexes);
    if (r == BD_OK)
        r = pg_exec(p, DOMAIN_KEY_ADD);
    return r == BD_OK ? pg_exec(p, DOMAIN_COUNT_REBUILD) : r;
}

/* After an import: autovacuum would vacuum and analyze the tables a minute or more later,
 * and until then searches run without statistics (their generic plans, kept per
 * connection, are made again once the statistics change) and every index-only scan reads
 * the table as well, the visibility map being unset for new rows (a count of an owner
 * word's 300 cards: 1.06 ms, 0.12 ms after VACUUM). A load of a tenth of the table or more
 * (a table never analyzed counts as empty) is vacuumed now; a small one is left to
 * autovacuum, as ANALYZE samples the same 30,000 rows however few were added. A failure
 * changes nothing but when it happens. */
void pg_loaded(bd_store *s, bd_bulk_kind kind, int64_t rows)
{
    pg_store *p = pg_of(s);
    if (p->in_tx || rows <= 0)
        return;
    static const char *const table[] = {
        [BD_BULK_RECORDS] = "records",
        [BD_BULK_CARDS] = "cards",
        [BD_BULK_RANGES] = "password_ranges",
    };
    /* Freshly written rows also want their hint bits set: until then the first read of
     * each page writes it. A range request at one connection right after a 10M-hash load:
     * p99 2.3 ms, 0.54 ms after a vacuum (bench/ranges.py --pg-vacuum; one pair of runs on
     * a busy machine, where later runs spread from 1.5 to 3.3 ms either way). */
    static const char *const vacuum[] = {
        [BD_BULK_RECORDS] = "VACUUM (ANALYZE) records, record_domains",
        [BD_BULK_CARDS] = "VACUUM (ANALYZE) cards, card_bins, card_words, card_owner_words",
        [BD_BULK_RANGES] = "VACUUM (ANALYZE) password_ranges",
    };
    pg_params pp = {0};
    pg_param_str(&pp, table[kind]);
    PGresult *res;
    if (pg_run_sql(p, "SELECT reltuples FROM pg_class WHERE oid = $1::regclass", &pp, false,
                   &res) != BD_OK)
        return;
    double tuples = PQntuples(res) == 1 ? strtod(PQgetvalue(res, 0, 0), NULL) : -1;
    PQclear(res);
    if (tuples > 0 && (double)rows * 10 < tuples)
        return;
    pg_exec(p, vacuum[kind]);
}
