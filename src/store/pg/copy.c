/* Streaming puts: inside a write transaction, record_put and card_put send each row into a
 * temporary staging table with COPY (binary format: no escaping, no parsing on the server)
 * and cost no round trip. Before any other statement runs on the connection (the run
 * functions of exec.c call pg_copy_flush first) and at commit, the COPY ends and ONE
 * statement moves the staged rows into their tables, skipping duplicates (records by their
 * dedup key, cards by their id), and moves the counts kept beside them.
 *
 * Duplicates are therefore decided when the rows move, not when they are put: a put
 * reports the row as inserted, and the rows that turned out to be duplicates are counted
 * for bd_store_take_late_duplicates once the transaction commits. Two puts of the same
 * row in one batch count as one row and one duplicate, as they did row by row (the move
 * inserts in put order and keeps the first).
 *
 * One COPY is open at a time on a connection: a put of the other kind ends it first. The
 * staging tables live as long as the connection (ON COMMIT DELETE ROWS empties them at
 * every commit); rows already moved earlier in the same transaction are truncated away
 * before the next COPY starts. A transaction that puts more than PG_COPY_MOVE_ROWS rows (a
 * --bulk load is one transaction) moves them in steps of that size, so a staging table
 * never holds a whole load. A bulk record load skips the staging table: its records stream
 * into their table with ids of the load's own, their record_domains rows beside them, and
 * its end removes the duplicates (bulk.c). */
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "store/pg/pg_impl.h"

#define PG_COPY_MOVE_ROWS 100000 /* rows staged before they move, within one transaction */
#define PG_COPY_CHUNK 65536      /* bytes handed to libpq at once */
#define RECORD_FIELDS 25 /* the record staging table's columns (records': three less) */
#define CARD_FIELDS 23           /* the card staging table's columns */

/* The staging tables: the rows' columns in insert order, with the put order in seq. */
static const char RECORD_STAGE_CREATE[] =
    "CREATE TEMP TABLE IF NOT EXISTS bd_staging(seq bigint, ok uuid, breach_id bigint, "
    "breach_date integer, user_name text, user_name_key text, first_name text, last_name text, "
    "email text, email_domain text, phone_number text, phone_key text, ip_address text, "
    "bitcoin_address text, password_masked text, password_hmac bytea, password_hash text, "
    "ssn_masked text, ssn_hmac bytea, other_attributes text, severity smallint, dedup bytea, "
    "website_domain text, pw_sha1 bytea, pw_ntlm bytea) ON COMMIT DELETE ROWS";

#define RECORD_COLUMNS                                                                             \
    "ok, breach_id, breach_date, user_name, user_name_key, first_name, last_name, email, "         \
    "email_domain, phone_number, phone_key, ip_address, bitcoin_address, password_masked, "        \
    "password_hmac, password_hash, ssn_masked, ssn_hmac, other_attributes, severity, dedup, "    \
    "website_domain"

/* The move: the staged rows in put order, a duplicate (stored before, or staged earlier in
 * the batch) skipped, and the domain counts moved by what went in ($1: counts are kept,
 * i.e. no bulk load recounts them at its end). Returns a row per record that went in with
 * its password's SHA-1 and NTLM hashes (NULL when it had none; binary), for the password
 * ranges (ranges.c): only a record that went in counts its password; and each record that
 * went in with a domain gets its lookup row in record_domains. Two staged rows with
 * one dedup key have the same password; rows without one stay out of the join's sort. The
 * rows come back in put order (the ids were given in it): a Citus coordinator returns an
 * INSERT's rows shard by shard, and watches' alerts list what landed in the order it was put. */
#define RECORD_STAGE_MOVE_SQL(returning, columns)                                                  \
    "WITH ins AS (INSERT INTO records(" RECORD_COLUMNS ") SELECT " RECORD_COLUMNS                  \
    " FROM pg_temp.bd_staging ORDER BY seq ON CONFLICT (ok, dedup) DO NOTHING "                    \
    "RETURNING email_domain, ok, dedup, id AS rid, breach_date AS rdate, "                         \
    PG_RECORD_PRESENT_SQL " AS present" returning "), "                                            \
    "counted AS (INSERT INTO domain_counts(domain, n) SELECT email_domain, count(*) FROM ins "     \
    "WHERE email_domain IS NOT NULL AND $1::boolean GROUP BY email_domain "                        \
    "ON CONFLICT (domain) DO UPDATE SET n = domain_counts.n + excluded.n), "                       \
    "routed AS (INSERT INTO record_domains(domain, ok, id, breach_date, present) "                 \
    "SELECT email_domain, ok, rid, rdate, present FROM ins "                                       \
    "WHERE email_domain IS NOT NULL AND $1::boolean) "                                             \
    "SELECT s.pw_sha1, s.pw_ntlm" columns " FROM ins LEFT JOIN (SELECT DISTINCT ON (ok, dedup) "  \
    "ok, dedup, pw_sha1, pw_ntlm FROM pg_temp.bd_staging WHERE pw_sha1 IS NOT NULL "               \
    "ORDER BY ok, dedup, seq) s USING (ok, dedup) ORDER BY ins.rid"
static const char RECORD_STAGE_MOVE[] = RECORD_STAGE_MOVE_SQL("", "");
/* The same, returning what watches match on of each record that went in (landed_record
 * reads the columns from the third on, in the order of the SELECT; ins returns email_domain
 * already). */
#define LANDED_COLUMNS                                                                             \
    "breach_id, email, phone_key, user_name_key, ip_address, ssn_hmac, "                          \
    "password_hmac, password_hash, bitcoin_address, phone_number, user_name, ssn_masked, "        \
    "password_masked, website_domain"
static const char RECORD_STAGE_MOVE_LANDED[] = RECORD_STAGE_MOVE_SQL(
    ", " LANDED_COLUMNS,
    ", ins.breach_id, ins.email, ins.email_domain, ins.phone_key, ins.user_name_key, "
    "ins.ip_address, ins.ssn_hmac, ins.password_hmac, ins.password_hash, ins.bitcoin_address, "
    "ins.phone_number, ins.user_name, ins.ssn_masked, ins.password_masked, ins.website_domain");
/* Cards, with the words of owner and bank as the tokenizer split them (cards_sql.c),
 * separated by spaces. */
static const char CARD_STAGE_CREATE[] =
    "CREATE TEMP TABLE IF NOT EXISTS bd_card_staging(seq bigint, card_id text, "
    "created_at text, bank text, number_masked text, bin text, last4 text, tail text, "
    "length smallint, number_hmac bytea, owner text, cvv text, expire_date text, "
    "cvss double precision, leak_id text, leak_name text, leak_publish_date text, "
    "leak_discover_date text, leak_size bigint, leak_tags text, cvv_hmac bytea, "
    "owner_words text, bank_words text) ON COMMIT DELETE ROWS";

#define CARD_COLUMNS                                                                               \
    "card_id, created_at, bank, number_masked, bin, last4, tail, length, number_hmac, owner, "     \
    "cvv, expire_date, cvss, leak_id, leak_name, leak_publish_date, leak_discover_date, "          \
    "leak_size, leak_tags, cvv_hmac"

/* The move: the first of each card id in the batch, in put order, unless stored before;
 * then, for the cards that went in, their BIN's and tail's counts, their owner's words with
 * their expiry (card_owner_words), their BIN lookup rows (card_bins) and the words of owner
 * and bank with their positions (card_words), as card_put does for one card. Returns how
 * many cards went in. */
#define CARD_STAGE_MOVE_HEAD \
    "WITH src AS (SELECT DISTINCT ON (card_id) * FROM pg_temp.bd_card_staging " \
    "ORDER BY card_id, seq), " \
    "ins AS (INSERT INTO cards(" CARD_COLUMNS ") SELECT " CARD_COLUMNS " FROM src ORDER BY seq " \
    "ON CONFLICT (card_id) DO NOTHING RETURNING id, card_id, bin, tail, expire_date, " \
    "number_masked, created_at), " \
    "got AS (SELECT ins.id, ins.card_id, ins.bin, ins.tail, ins.expire_date, src.owner_words, " \
    "src.bank_words FROM ins JOIN src ON src.card_id = ins.card_id), " \
    "ow AS (SELECT DISTINCT t.word, got.expire_date, got.card_id FROM got, " \
    "unnest(string_to_array(got.owner_words, ' ')) AS t(word) WHERE got.expire_date IS NOT NULL), " \
    "counted AS (INSERT INTO card_counts(kind, key, n) SELECT k.kind, k.key, count(*) FROM (" \
    "SELECT v.kind, v.key FROM got, " \
    "LATERAL (VALUES (0::smallint, got.bin), (1::smallint, got.tail)) AS v(kind, key) " \
    "UNION ALL SELECT 2::smallint, ow.word || ' ' || ow.expire_date FROM ow) AS k " \
    "GROUP BY k.kind, k.key ON CONFLICT (kind, key) DO UPDATE SET n = card_counts.n + excluded.n), " \
    "owner_words AS (INSERT INTO card_owner_words(word, expire_date, card_id) " \
    "SELECT word, expire_date, card_id FROM ow ON CONFLICT DO NOTHING), " \
    "bins AS (INSERT INTO card_bins(bin, created_at, card_id) " \
    "SELECT bin, created_at, card_id FROM ins), " \
    "words AS (INSERT INTO card_words(col, word, id, pos) " \
    "SELECT 0, t.word, got.id, t.pos FROM got, " \
    "unnest(string_to_array(got.owner_words, ' ')) WITH ORDINALITY AS t(word, pos) " \
    "UNION ALL SELECT 1, t.word, got.id, t.pos FROM got, " \
    "unnest(string_to_array(got.bank_words, ' ')) WITH ORDINALITY AS t(word, pos)) "
static const char CARD_STAGE_MOVE[] = CARD_STAGE_MOVE_HEAD "SELECT count(*) FROM ins";
/* The same, returning each card that went in (bd_landed_row) instead of their count. */
static const char CARD_STAGE_MOVE_LANDED[] = CARD_STAGE_MOVE_HEAD
    "SELECT bin, number_masked FROM ins";

/* Each kind's table (created when missing, emptied of moved rows: not for records
 * themselves) and its COPY. */
static const struct {
    const char *create, *copy, *truncate;
} STAGE[PG_STAGE__COUNT] = {
    [PG_STAGE_RECORDS] = {RECORD_STAGE_CREATE, "COPY pg_temp.bd_staging FROM STDIN (FORMAT binary)",
                          "TRUNCATE pg_temp.bd_staging"},
    [PG_STAGE_CARDS] = {CARD_STAGE_CREATE,
                        "COPY pg_temp.bd_card_staging FROM STDIN (FORMAT binary)",
                        "TRUNCATE pg_temp.bd_card_staging"},
    [PG_STAGE_RECORDS_BULK] = {NULL,
                               "COPY records(id, " RECORD_COLUMNS ") FROM STDIN (FORMAT binary)",
                               NULL},
    [PG_STAGE_RECORD_DOMAINS] = {NULL,
                                 "COPY record_domains(domain, ok, id, breach_date, present) "
                                 "FROM STDIN (FORMAT binary)",
                                 NULL},
    [PG_STAGE_CARDS_BULK] = {NULL, "COPY cards(id, " CARD_COLUMNS ") FROM STDIN (FORMAT binary)",
                             NULL},
    [PG_STAGE_CARD_WORDS] = {NULL, "COPY card_words(col, word, id, pos) FROM STDIN (FORMAT binary)",
                             NULL},
    [PG_STAGE_PASSWORDS_BULK] = {"CREATE TEMP TABLE IF NOT EXISTS bd_password_staging(ok uuid, "
                                 "dedup bytea, pw_sha1 bytea, pw_ntlm bytea) ON COMMIT DELETE ROWS",
                                 "COPY pg_temp.bd_password_staging FROM STDIN (FORMAT binary)",
                                 "TRUNCATE pg_temp.bd_password_staging"},
    [PG_STAGE_OWNER_WORDS] = {NULL,
                              "COPY card_owner_words(word, expire_date, card_id) FROM STDIN "
                              "(FORMAT binary)",
                              NULL},
};

/* What a failed COPY call left: the connection's loss, or the server's refusal. */
static bd_result copy_failed(pg_store *p, const char *what)
{
    if (PQstatus(p->conn) == CONNECTION_BAD)
        return BD_ERR_BUSY;
    const char *msg = PQerrorMessage(p->conn);
    bd_log_own(BD_LOG_ERROR, "store", "%s: %.*s", what, (int)strcspn(msg, "\n"), msg);
    return BD_ERR_STORE;
}

/* Hands the rows built so far to libpq, which sends them as its buffer fills. */
static bd_result send_out(pg_store *p)
{
    bd_buf *b = &p->copy.out;
    if (b->len == 0)
        return BD_OK;
    int rc = PQputCopyData(p->conn, b->data, (int)b->len);
    bd_buf_reset(b);
    return rc == 1 ? BD_OK : copy_failed(p, "copy");
}

/* Starts the COPY of kind into its empty staging table. */
static bd_result start(pg_store *p, pg_stage_kind kind)
{
    bd_result r = BD_OK;
    if (!p->copy.table[kind] && STAGE[kind].create) {
        r = pg_exec(p, STAGE[kind].create);
        p->copy.table[kind] = r == BD_OK;
    }
    if (r == BD_OK && p->copy.dirty[kind]) {
        r = pg_exec(p, STAGE[kind].truncate);
        p->copy.dirty[kind] = r != BD_OK;
    }
    if (r != BD_OK)
        return r;
    PGresult *res = PQexec(p->conn, STAGE[kind].copy);
    if (PQresultStatus(res) != PGRES_COPY_IN) {
        PQclear(res);
        return copy_failed(p, "copy");
    }
    PQclear(res);
    p->copy.open = true;
    p->copy.kind = kind;
    p->copy.staged = 0;
    bd_buf_reset(&p->copy.out);
    return bd_buf_append(&p->copy.out, pg_copy_binary_header, PG_COPY_HEADER_LEN);
}

/* Ends the open COPY: sends the trailer and reads the outcome. */
static bd_result end(pg_store *p)
{
    p->copy.open = false;
    bd_result r = pg_copy_put_u16(&p->copy.out, UINT16_MAX);
    if (r == BD_OK)
        r = send_out(p);
    if (r != BD_OK) {
        bd_buf_reset(&p->copy.out);
        if (PQstatus(p->conn) == CONNECTION_OK)
            PQputCopyEnd(p->conn, "breachd: the rows could not be sent");
    } else if (PQputCopyEnd(p->conn, NULL) != 1) {
        r = copy_failed(p, "copy end");
    }
    return pg_copy_outcome(p, r);
}

bd_result pg_copy_land_bulk(pg_store *p, bool cards, int64_t first_id)
{
    if (!p->landed)
        return BD_OK;
    pg_params pp = {.result_format = 1};
    pg_param_int(&pp, first_id);
    PGresult *res;
    bd_result r = pg_run_sql(p,
                             cards ? "SELECT bin, number_masked FROM cards WHERE id > $1"
                                   : "SELECT NULL::bytea, NULL::bytea, breach_id, email, "
                                     "email_domain, phone_key, user_name_key, ip_address, "
                                     "ssn_hmac, password_hmac, password_hash, bitcoin_address, "
                                     "phone_number, user_name, ssn_masked, password_masked, "
                                     "website_domain FROM records WHERE id > $1",
                             &pp, false, &res);
    if (r != BD_OK)
        return r;
    for (int i = 0, n = PQntuples(res); i < n; i++) {
        if (!cards) {
            pg_copy_landed_record(p, res, i);
            continue;
        }
        bd_landed_row l = {.card = true, .bin = pg_copy_binary_field(res, i, 0),
                           .number_masked = pg_copy_binary_field(res, i, 1)};
        p->landed(p->landed_ctx, &l);
    }
    PQclear(res);
    return BD_OK;
}

/* Moves the staged rows of kind into their tables; what did not go in was a duplicate. */
static bd_result move(pg_store *p, pg_stage_kind kind, int64_t staged)
{
    pg_params pp = {0};
    PGresult *res;
    bd_result r;
    int64_t moved;
    if (kind == PG_STAGE_RECORDS) {
        pg_param_str(&pp, p->bulk_records ? "false" : "true");
        pp.result_format = 1;
        r = pg_run_sql(p, p->landed ? RECORD_STAGE_MOVE_LANDED : RECORD_STAGE_MOVE, &pp, true,
                       &res);
        if (r == BD_OK)
            r = pg_range_add_moved(p, res);
        moved = r == BD_OK ? PQntuples(res) : 0;
        for (int i = 0; r == BD_OK && p->landed && i < moved; i++)
            pg_copy_landed_record(p, res, i);
    } else if (p->landed) {
        r = pg_run_sql(p, CARD_STAGE_MOVE_LANDED, &pp, true, &res);
        moved = r == BD_OK ? PQntuples(res) : 0;
        for (int i = 0; r == BD_OK && i < moved; i++) {
            bd_landed_row l = {.card = true, .bin = pg_slice(res, i, 0),
                               .number_masked = pg_slice(res, i, 1)};
            p->landed(p->landed_ctx, &l);
        }
    } else {
        r = pg_run_sql(p, CARD_STAGE_MOVE, &pp, true, &res);
        moved = r == BD_OK ? pg_int(res, 0, 0) : 0;
    }
    if (r != BD_OK) {
        PQclear(res);
        return r;
    }
    p->copy.dirty[kind] = true;
    p->copy.pending_late += staged - moved;
    PQclear(res);
    return BD_OK;
}

/* COPYs rows already in binary format (each with its field count) into kind's table. */
static bd_result copy_rows(pg_store *p, pg_stage_kind kind, bd_buf *rows)
{
    if (rows->len == 0)
        return BD_OK;
    bd_result r = start(p, kind);
    if (r == BD_OK)
        r = send_out(p); /* the header */
    for (size_t at = 0; r == BD_OK && at < rows->len; at += PG_COPY_CHUNK) {
        size_t n = rows->len - at < PG_COPY_CHUNK ? rows->len - at : PG_COPY_CHUNK;
        if (PQputCopyData(p->conn, rows->data + at, (int)n) != 1)
            r = copy_failed(p, "copy");
    }
    bd_result ended = p->copy.open ? end(p) : BD_OK;
    return r == BD_OK ? ended : r;
}

bd_result pg_copy_flush(pg_store *p)
{
    if (!p->copy.open)
        return BD_OK;
    int64_t staged = p->copy.staged;
    p->copy.staged = 0;
    bd_result r = end(p); /* the COPY is over: move's own statement runs as usual */
    if (p->copy.kind == PG_STAGE_RECORDS_BULK) { /* in their table already */
        if (r == BD_OK)
            r = copy_rows(p, PG_STAGE_PASSWORDS_BULK, &p->copy.password_rows);
        if (r == BD_OK)
            r = copy_rows(p, PG_STAGE_RECORD_DOMAINS, &p->copy.domain_rows);
        bd_buf_reset(&p->copy.password_rows);
        bd_buf_reset(&p->copy.domain_rows);
        return r;
    }
    if (p->copy.kind == PG_STAGE_CARDS_BULK) {
        if (r == BD_OK)
            r = copy_rows(p, PG_STAGE_CARD_WORDS, &p->copy.word_rows);
        if (r == BD_OK)
            r = copy_rows(p, PG_STAGE_OWNER_WORDS, &p->copy.owner_word_rows);
        bd_buf_reset(&p->copy.word_rows);
        bd_buf_reset(&p->copy.owner_word_rows);
        return r;
    }
    return r == BD_OK && staged > 0 ? move(p, p->copy.kind, staged) : r;
}

/* The server says nothing during a COPY unless it is failing (an error, or the end of the
 * connection) or has a notice: then the COPY ends now, and the put reports a failure. A bulk
 * load, one transaction lost whole on any failure, looks only as each chunk goes to libpq,
 * not at every row: a poll per row was 5% of a 1M-record bulk load's client CPU, on a
 * machine whose two cores the parse and the server share. */
static bd_result check_server(pg_store *p)
{
    struct pollfd fd = {.fd = PQsocket(p->conn), .events = POLLIN};
    if (PQstatus(p->conn) == CONNECTION_OK && poll(&fd, 1, 0) == 0)
        return BD_OK;
    return pg_copy_flush(p);
}

/* Readies a COPY of kind for one more row and returns where the row starts in the output:
 * a COPY of the other kind, or one that holds a full step, ends (and its rows move) first. */
static bd_result row_begin(pg_store *p, pg_stage_kind kind, int fields, size_t *mark)
{
    bd_result r = BD_OK;
    if (p->copy.open && (p->copy.kind != kind || p->copy.staged >= PG_COPY_MOVE_ROWS))
        r = pg_copy_flush(p);
    if (r == BD_OK && !p->copy.open)
        r = start(p, kind);
    if (r != BD_OK)
        return r;
    *mark = p->copy.out.len;
    r = pg_copy_put_u16(&p->copy.out, (uint16_t)fields);
    if (r == BD_OK && (kind == PG_STAGE_RECORDS || kind == PG_STAGE_CARDS)) /* for the move */
        r = pg_copy_put_int(&p->copy.out, p->copy.staged, 8);
    return r;
}

/* Ends a row that row_begin started: on failure it is taken back (the COPY goes on without
 * it), else it is staged and the output handed to libpq once a chunk is full. */
static bd_result row_end(pg_store *p, size_t mark, bd_result r)
{
    bd_buf *b = &p->copy.out;
    if (r != BD_OK) {
        bd_buf_truncate(b, mark);
        return r;
    }
    p->copy.staged++;
    bool full = b->len >= PG_COPY_CHUNK;
    if (full)
        r = send_out(p);
    if (r != BD_OK)
        return r;
    return full || !(p->bulk_records || p->bulk_cards) ? check_server(p) : BD_OK;
}

bd_result pg_copy_count_bulk_passwords(pg_store *p, int64_t first_id, bool all_went_in)
{
    if (p->copy.passwords_staged == 0)
        return BD_OK;
    pg_params pp = {.result_format = 1};
    PGresult *res;
    bd_result r;
    if (all_went_in) { /* a staged row per stored record: the join would keep them all */
        r = pg_run_sql(p, "SELECT pw_sha1, pw_ntlm FROM pg_temp.bd_password_staging", &pp,
                       false, &res);
    } else {
        pg_param_int(&pp, first_id);
        r = pg_run_sql(p,
                       "SELECT DISTINCT ON (b.ok, b.dedup) b.pw_sha1, b.pw_ntlm "
                       "FROM pg_temp.bd_password_staging b JOIN records r "
                       "ON r.ok = b.ok AND r.dedup = b.dedup WHERE r.id > $1",
                       &pp, false, &res);
    }
    if (r == BD_OK)
        r = pg_range_add_moved(p, res);
    PQclear(res);
    p->copy.passwords_staged = 0;
    return r == BD_OK ? pg_exec(p, STAGE[PG_STAGE_PASSWORDS_BULK].truncate) : r;
}

/* A bulk-loaded record: its id (the load's next, bulk.c), its columns, and beside them,
 * waiting in memory until the records' COPY ends (at most PG_COPY_MOVE_ROWS records'
 * worth), its record_domains row and its password hashes by its record key (ok, dedup):
 * only the records that survive the load's dedup count theirs. The end's dedup removes the
 * domain rows of the records it removes. On failure none of it stays. */
static bd_result put_bulk_record(pg_store *p, const uint8_t *ok, int64_t breach_id, int32_t date,
                                 const bd_record_in *r)
{
    pg_copy_state *cs = &p->copy;
    size_t domains_mark = cs->domain_rows.len;
    int64_t id = p->bulk_next_id;
    bd_result res = pg_copy_put_int(&cs->out, id, 8);
    if (res == BD_OK)
        res = pg_copy_record_columns(&cs->out, ok, breach_id, date, r);
    if (res == BD_OK)
        res = pg_copy_domain_row(&cs->domain_rows, ok, id, date, r);
    if (res == BD_OK && r->has_ranges) {
        res = pg_copy_password_row(&cs->password_rows, ok, r);
        if (res == BD_OK)
            cs->passwords_staged++;
    }
    if (res != BD_OK) {
        bd_buf_truncate(&cs->domain_rows, domains_mark);
        return res;
    }
    p->bulk_next_id = id + 1;
    return BD_OK;
}

bd_result pg_copy_put(pg_store *p, int64_t breach_id, int32_t date, const bd_record_in *r)
{
    size_t mark;
    bd_result res = p->bulk_records ? row_begin(p, PG_STAGE_RECORDS_BULK, RECORD_FIELDS - 2, &mark)
                                    : row_begin(p, PG_STAGE_RECORDS, RECORD_FIELDS, &mark);
    if (res != BD_OK)
        return res;
    bd_buf *b = &p->copy.out;
    uint8_t ok[PG_OWNER_KEY_LEN];
    pg_owner_key(r, ok);
    if (p->bulk_records) {
        res = row_end(p, mark, put_bulk_record(p, ok, breach_id, date, r));
        if (res == BD_OK)
            pg_load_counts_add(p, breach_id, 1);
        return res;
    }
    pg_load_counts_forget(p); /* a record past a bulk load's, which its counts do not hold */
    res = pg_copy_record_columns(b, ok, breach_id, date, r);
    const char *sha1 = r->has_ranges ? (const char *)r->password_sha1 : NULL;
    const char *ntlm = r->has_ranges ? (const char *)r->password_ntlm : NULL;
    if (res == BD_OK)
        res = pg_copy_put_bytes(b, (bd_slice){sha1, sizeof r->password_sha1});
    if (res == BD_OK)
        res = pg_copy_put_bytes(b, (bd_slice){ntlm, sizeof r->password_ntlm});
    return row_end(p, mark, res);
}

/* In a bulk card load the card goes straight into cards with an id of the load's own
 * (bulk.c took the range under the writer lock), and its word rows wait in memory until
 * the cards' COPY ends (pg_copy_flush sends them with COPYs of their own). */
static bd_result put_bulk_card(pg_store *p, const bd_card_in *c, bd_slice owner_words,
                               bd_slice bank_words)
{
    size_t mark;
    bd_result r = row_begin(p, PG_STAGE_CARDS_BULK, CARD_FIELDS - 2, &mark);
    if (r != BD_OK)
        return r;
    int64_t id = p->bulk_next_card_id + 1;
    r = pg_copy_put_int(&p->copy.out, id, 8);
    if (r == BD_OK)
        r = pg_copy_card_columns(&p->copy.out, c);
    if (r == BD_OK)
        r = pg_copy_card_word_rows(&p->copy, id, c, owner_words, bank_words);
    if (r == BD_OK)
        p->bulk_next_card_id = id;
    return row_end(p, mark, r);
}

bd_result pg_copy_put_card(pg_store *p, const bd_card_in *c, bd_slice owner_words,
                           bd_slice bank_words)
{
    if (p->bulk_cards)
        return put_bulk_card(p, c, owner_words, bank_words);
    size_t mark;
    bd_result r = row_begin(p, PG_STAGE_CARDS, CARD_FIELDS, &mark);
    if (r == BD_OK)
        r = pg_copy_card_columns(&p->copy.out, c);
    if (r == BD_OK)
        r = pg_copy_put_bytes(&p->copy.out, owner_words);
    if (r == BD_OK)
        r = pg_copy_put_bytes(&p->copy.out, bank_words);
    return row_end(p, mark, r);
}

bool pg_copy_missing(pg_store *p, const char *uuid)
{
    for (int i = 0; i < PG_COPY_MISSING; i++)
        if (strcmp(p->copy.missing[i], uuid) == 0)
            return true;
    return false;
}

void pg_copy_note_missing(pg_store *p, const char *uuid)
{
    memcpy(p->copy.missing[p->copy.next_missing], uuid, BD_UUID_LEN + 1);
    p->copy.next_missing = (p->copy.next_missing + 1) % PG_COPY_MISSING;
}

void pg_copy_forget_missing(pg_store *p)
{
    memset(p->copy.missing, 0, sizeof p->copy.missing);
}

void pg_copy_end_transaction(pg_store *p, bool committed)
{
    if (p->copy.open) { /* a rollback: nothing staged may land */
        p->copy.open = false;
        bd_buf_reset(&p->copy.out);
        if (PQstatus(p->conn) == CONNECTION_OK) {
            PQputCopyEnd(p->conn, "breachd: rolled back");
            PGresult *res;
            while ((res = PQgetResult(p->conn)) != NULL && PQstatus(p->conn) == CONNECTION_OK)
                PQclear(res);
            PQclear(res);
        }
    }
    p->copy.staged = 0;
    p->copy.passwords_staged = 0;
    bd_buf_reset(&p->copy.password_rows);
    bd_buf_reset(&p->copy.domain_rows);
    bd_buf_reset(&p->copy.word_rows);
    bd_buf_reset(&p->copy.owner_word_rows);
    for (int k = 0; k < PG_STAGE__COUNT; k++) {
        p->copy.dirty[k] = false;
        if (!committed)
            p->copy.table[k] = false; /* it may have been created by the transaction undone */
    }
    if (committed)
        p->copy.late += p->copy.pending_late;
    p->copy.pending_late = 0;
    pg_copy_forget_missing(p);
}

void pg_copy_connection_reset(pg_store *p)
{
    for (int k = 0; k < PG_STAGE__COUNT; k++)
        p->copy.table[k] = false;
}

void pg_copy_note_duplicates(pg_store *p, int64_t n)
{
    p->copy.pending_late += n;
}

int64_t pg_take_late_duplicates(bd_store *s)
{
    pg_store *p = pg_of(s);
    int64_t n = p->copy.late;
    p->copy.late = 0;
    return n;
}
