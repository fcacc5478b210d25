/* The PostgreSQL backend's change log (store.h), as the SQLite backend's: what a write
 * transaction added is counted by id ranges just before it commits. Ids come from identity
 * sequences and every write transaction holds the writer lock (conn.c), so the rows with an
 * id above the largest one before the first put are exactly the transaction's, whether they
 * came through a COPY's move (duplicates skipped) or a bulk load (duplicates removed at its
 * end). */
#include <stdlib.h>

#include "store/pg/pg_impl.h"

#define NOW "extract(epoch FROM now())::bigint"

static const pg_stmt MAX_RECORD = {PG_Q_MAX_RECORD, "SELECT coalesce(max(id), 0) FROM records"};
static const pg_stmt MAX_CARD = {PG_Q_MAX_CARD, "SELECT coalesce(max(id), 0) FROM cards"};
static const pg_stmt CHANGE_ADD = {
    PG_Q_CHANGE_ADD, "INSERT INTO changes(at, kind, subject, name, n) SELECT " NOW
                     ", $1, uuid, NULL, $3 FROM breaches WHERE uuid = $2"};
static const pg_stmt CHANGE_BREACH = {
    PG_Q_CHANGE_BREACH, "INSERT INTO changes(at, kind, subject, name, n) SELECT " NOW
                        ", 2, uuid, NULL, coalesce(pwned_count, pwned_count_derived) "
                        "FROM breaches WHERE uuid = $1"};
static const pg_stmt CHANGES_RECORDS = {
    PG_Q_CHANGES_RECORDS,
    "INSERT INTO changes(at, kind, subject, name, n) SELECT " NOW ", 4, b.uuid, NULL, "
    "c.n FROM (SELECT breach_id, count(*) AS n FROM records WHERE id > $1 GROUP BY breach_id) c "
    "JOIN breaches b ON b.id = c.breach_id ORDER BY b.id"};
/* The same from a bulk load's own counts (load_counts.c; breach ids and counts as arrays):
 * its records are the transaction's, and counting them in the table was 0.17 s of a
 * 1M-record load. */
static const char CHANGES_RECORDS_COUNTED[] =
    "INSERT INTO changes(at, kind, subject, name, n) SELECT " NOW ", 4, b.uuid, NULL, c.n "
    "FROM unnest($1::bigint[], $2::bigint[]) AS c(breach_id, n) "
    "JOIN breaches b ON b.id = c.breach_id ORDER BY b.id";
static const pg_stmt CHANGES_CARDS = {
    PG_Q_CHANGES_CARDS, "INSERT INTO changes(at, kind, subject, name, n) SELECT " NOW
                        ", 6, leak_id, leak_name, count(*) FROM cards WHERE id > $1 "
                        "GROUP BY leak_id, leak_name"};
static const pg_stmt CHANGES_LIST = {PG_Q_CHANGES_LIST,
                                     "SELECT c.seq, c.at, c.kind, c.subject, CASE c.kind "
                                     "WHEN 6 THEN c.name ELSE b.source_name END, c.n "
                                     "FROM changes c LEFT JOIN breaches b ON c.kind <> 6 "
                                     "AND b.uuid = c.subject WHERE c.seq > $1 "
                                     "ORDER BY c.seq LIMIT $2"};
static const pg_stmt CHANGE_VERSION = {PG_Q_CHANGE_VERSION, PG_CHANGE_VERSION_SQL};
static const pg_stmt STATUS = {
    PG_Q_STATUS,
    "SELECT coalesce(max(seq), 0), coalesce(max(at), 0), "
    "coalesce(max(at) FILTER (WHERE kind IN (4, 6)), 0), (SELECT count(*) FROM breaches), "
    "coalesce(sum(CASE kind WHEN 4 THEN n WHEN 3 THEN -n WHEN 5 THEN -n END), 0), "
    "coalesce(sum(n) FILTER (WHERE kind = 6), 0) FROM changes"};

bd_result pg_changes_note_put(pg_store *p, bool cards)
{
    int64_t *from = cards ? &p->tx_cards_from : &p->tx_records_from;
    if (*from >= 0)
        return BD_OK;
    PGresult *res;
    bd_result r = pg_run(p, cards ? &MAX_CARD : &MAX_RECORD, NULL, &res);
    if (r != BD_OK)
        return r;
    *from = pg_int(res, 0, 0);
    PQclear(res);
    return BD_OK;
}

static bd_result added_since(pg_store *p, const pg_stmt *q, int64_t from)
{
    pg_params pp = {0};
    pg_param_int(&pp, from);
    return pg_run(p, q, &pp, NULL);
}

/* The records the transaction added, by breach, into the change log. */
static bd_result records_added(pg_store *p)
{
    bd_buf ids, ns;
    bd_buf_init(&ids, 1u << 30);
    bd_buf_init(&ns, 1u << 30);
    bool known = false;
    bd_result r = pg_load_counts_arrays(p, p->tx_records_from, &ids, &ns, &known);
    if (r == BD_OK && known) {
        pg_params pp = {0};
        pg_param_str(&pp, ids.data);
        pg_param_str(&pp, ns.data);
        r = pg_run_sql(p, CHANGES_RECORDS_COUNTED, &pp, false, NULL);
    } else if (r == BD_OK) {
        r = added_since(p, &CHANGES_RECORDS, p->tx_records_from);
    }
    bd_buf_free(&ids);
    bd_buf_free(&ns);
    return r;
}

bd_result pg_changes_flush(pg_store *p)
{
    bd_result r = BD_OK;
    if (p->tx_records_from >= 0)
        r = records_added(p);
    if (r == BD_OK && p->tx_cards_from >= 0)
        r = added_since(p, &CHANGES_CARDS, p->tx_cards_from);
    return r;
}

void pg_changes_forget(pg_store *p)
{
    p->tx_records_from = -1;
    p->tx_cards_from = -1;
    pg_load_counts_forget(p);
}

bd_result pg_change_breach(pg_store *p, bd_change_kind kind, const char *uuid, int64_t n)
{
    pg_params pp = {0};
    if (kind == BD_CHANGE_BREACH_CHANGED) {
        pg_param_str(&pp, uuid);
        return pg_run(p, &CHANGE_BREACH, &pp, NULL);
    }
    pg_param_int(&pp, (int64_t)kind);
    pg_param_str(&pp, uuid);
    pg_param_int(&pp, n);
    return pg_run(p, &CHANGE_ADD, &pp, NULL);
}

bd_result pg_changes_list(bd_store *s, int64_t after, int limit, bd_change_cb cb, void *ctx)
{
    pg_params pp = {0};
    pg_param_int(&pp, after);
    pg_param_int(&pp, limit);
    PGresult *res;
    bd_result r = pg_run(pg_of(s), &CHANGES_LIST, &pp, &res);
    if (r != BD_OK)
        return r;
    for (int i = 0, n = PQntuples(res); i < n; i++) {
        bd_change_row row = {
            .seq = pg_int(res, i, 0),
            .at = pg_int(res, i, 1),
            .kind = (bd_change_kind)pg_int(res, i, 2),
            .subject = pg_slice(res, i, 3),
            .name = pg_slice(res, i, 4),
            .count = pg_int(res, i, 5),
        };
        if (cb(ctx, &row))
            break;
    }
    PQclear(res);
    return BD_OK;
}

bd_result pg_change_version(bd_store *s, int64_t *version)
{
    PGresult *res;
    *version = 0;
    bd_result r = pg_run(pg_of(s), &CHANGE_VERSION, NULL, &res);
    if (r != BD_OK)
        return r;
    *version = pg_int(res, 0, 0);
    PQclear(res);
    return BD_OK;
}

bd_result pg_status_get(bd_store *s, bd_store_status *out)
{
    PGresult *res;
    bd_result r = pg_run(pg_of(s), &STATUS, NULL, &res);
    if (r != BD_OK)
        return r;
    *out = (bd_store_status){
        .version = pg_int(res, 0, 0),
        .last_change_at = pg_int(res, 0, 1),
        .last_import_at = pg_int(res, 0, 2),
        .breaches = pg_int(res, 0, 3),
        .records = pg_int(res, 0, 4),
        .cards = pg_int(res, 0, 5),
    };
    PQclear(res);
    return BD_OK;
}
