/* The SQLite backend's breach records: insert (with the per-domain counts), the choice of
 * the index that drives a search, and count and page of a search. */
#include <string.h>

#include "store/record_sql.h"
#include "store/sqlite/sqlite_impl.h"
#include "store/sqlite/statements.h"

/* The id and date of a record's breach, from the connection's cache or the store. The
 * cache probes BREACH_PROBES slots from the uuid's hash: a load over a few hundred breaches
 * in random order missed a direct-mapped cache on about a third of its records (two
 * breaches sharing a slot evict each other), each miss a statement on the writer thread.
 * Slots are emptied only all at once, so a lookup stops at the first empty one. */
static bd_result record_breach(sqlite_store *s, const char *uuid, const breach_slot **out)
{
    size_t home = bd_slice_hash(bd_slice_from(uuid));
    breach_slot *b = NULL;
    for (size_t i = 0; i < BREACH_PROBES; i++) {
        breach_slot *slot = &s->breach_cache[(home + i) & (BREACH_CACHE - 1)];
        if (slot->uuid[0] == '\0') {
            b = slot;
            break;
        }
        if (strcmp(slot->uuid, uuid) == 0) {
            *out = slot;
            return BD_OK;
        }
    }
    if (!b) /* every slot of the window taken: the first gives way */
        b = &s->breach_cache[home & (BREACH_CACHE - 1)];
    b->uuid[0] = '\0';
    bd_result res = sq_breach_id(s, uuid, &b->id, &b->date);
    if (res != BD_OK)
        return res;
    memcpy(b->uuid, uuid, sizeof b->uuid);
    *out = b;
    return BD_OK;
}

/* A record with password hashes put outside a transaction gets one of its own: the
 * hashes' counts move with the record or not at all. */
static bd_result record_put_alone(sqlite_store *s, const bd_record_in *r, bool *inserted)
{
    bd_result res = sq_begin(&s->base);
    if (res == BD_OK)
        res = sq_record_put(&s->base, r, inserted);
    if (res == BD_OK)
        res = sq_commit(&s->base);
    if (res != BD_OK) {
        sq_rollback(&s->base);
        *inserted = false;
    }
    return res;
}

bd_result sq_record_put(bd_store *base, const bd_record_in *r, bool *inserted)
{
    sqlite_store *s = S(base);
    *inserted = false;
    /* alone, a put is a transaction of its own: the password counts and the change log
     * move with it */
    if (sqlite3_get_autocommit(s->db))
        return record_put_alone(s, r, inserted);
    const breach_slot *b;
    bd_result res = record_breach(s, r->breach_uuid, &b);
    if (res == BD_OK)
        res = sq_changes_note_put(s, false);
    if (res != BD_OK)
        return res;
    if (s->dedup_deferred) { /* the key is built at the load's end (dedup_key.c) */
        bool seen;
        res = sq_dedup_seen(s, r->dedup, &seen);
        if (res != BD_OK || seen) {
            *inserted = false;
            return res;
        }
    }
    sqlite3_stmt *st = sq_fixed(s, Q_RECORD_PUT);
    if (!st)
        return BD_ERR_STORE;
    sqlite3_bind_int64(st, 1, b->id);
    sqlite3_bind_int(st, 2, b->date);
    sq_bind_slice(st, 3, r->user_name);
    sq_bind_slice(st, 4, r->user_name_key);
    sq_bind_slice(st, 5, r->first_name);
    sq_bind_slice(st, 6, r->last_name);
    sq_bind_slice(st, 7, r->email);
    sq_bind_slice(st, 8, r->email_domain);
    sq_bind_slice(st, 9, r->phone_number);
    sq_bind_slice(st, 10, r->phone_key);
    sq_bind_slice(st, 11, r->ip_address);
    sq_bind_slice(st, 12, r->bitcoin_address);
    sq_bind_slice(st, 13, r->password_masked);
    sq_bind_blob(st, 14, r->password_hmac);
    sq_bind_slice(st, 15, r->password_hash);
    sq_bind_slice(st, 16, r->ssn_masked);
    sq_bind_blob(st, 17, r->ssn_hmac);
    sq_bind_slice(st, 18, r->other_attributes);
    sqlite3_bind_int(st, 19, (int)r->severity);
    sqlite3_bind_blob(st, 20, r->dedup, sizeof r->dedup, SQLITE_STATIC);
    sq_bind_slice(st, 21, r->website_domain);
    res = sq_step_done(s, st);
    *inserted = res == BD_OK && sqlite3_changes(s->db) > 0;
    if (*inserted && s->landed)
        sq_landed_record(s, b->id, r);
    if (*inserted)
        res = bd_range_acc_add_record(&s->ranges, r);
    if (res == BD_OK && s->ranges.n >= BD_RANGE_ACC_FLUSH)
        res = sq_range_flush(s);
    if (res != BD_OK || !*inserted || !r->email_domain.ptr || s->bulk_records)
        return res;
    st = sq_fixed(s, Q_DOMAIN_COUNT_ADD);
    if (!st)
        return BD_ERR_STORE;
    sq_bind_slice(st, 1, r->email_domain);
    return sq_step_done(s, st);
}

/* The index over each field's lookup key (schema.c), ordered like a search page. */
static const char *const FIELD_INDEX[BD_FIELD_COUNT] = {
    "records_by_email",    "records_by_domain", "records_by_phone",
    "records_by_user",     "records_by_ip",     "records_by_ssn",
    "records_by_password", "records_by_hash",   "records_by_bitcoin",
    "records_by_website",
};

/* Binds a lookup key of field f: HMAC bytes for password and SSN, text otherwise. */
static void bind_key(sqlite3_stmt *st, int i, bd_field f, bd_slice key)
{
    if (f == BD_FIELD_SSN || f == BD_FIELD_PASSWORD)
        sq_bind_blob(st, i, key);
    else
        sq_bind_slice(st, i, key);
}

/* An EQUALS filter's parameter: numbered by its place (bind_where binds in that order). */
static bd_result question_mark(void *ctx, bd_buf *b, bd_field f)
{
    (void)ctx;
    (void)f;
    return bd_buf_append_char(b, '?');
}

/* Writes the index choice and WHERE clause of q into s->sql; parameters are numbered in
 * the order bind_where binds them. The driving index is named, not left to the planner:
 * without statistics SQLite prefers the index that also gives the page order, which is the
 * wrong one when a large domain meets a rare password. */
static bd_result build_where(sqlite_store *s, const bd_record_query *q, bool with_position)
{
    bd_buf *b = &s->sql;
    /* appended, not printed: this runs for every search (vsnprintf was 2% of scenario 1) */
    bd_result r = bd_buf_append_str(b, " INDEXED BY ");
    if (r == BD_OK)
        r = bd_buf_append_str(b, FIELD_INDEX[q->plan - 1]);
    if (r == BD_OK)
        r = bd_buf_append_str(b, " WHERE r.");
    if (r == BD_OK)
        r = bd_buf_append_str(b, bd_record_key_col(q->field));
    if (r == BD_OK)
        r = bd_buf_append_str(b, " = ?");
    if (r == BD_OK)
        r = bd_record_filters_sql(b, q, question_mark, NULL);
    if (r == BD_OK && q->scope_tenant)
        r = bd_record_scope_sql(b, "r", "?", false);
    if (r == BD_OK && with_position && q->has_after)
        r = bd_buf_append_str(b, " AND (r.breach_date, r.id) < (?, ?)");
    return r;
}

static int bind_where(sqlite3_stmt *st, const bd_record_query *q, bool with_position)
{
    int i = 1;
    bind_key(st, i++, q->field, q->key);
    for (int f = 0; f < BD_FIELD_COUNT; f++) {
        if (q->filter[f].mode == BD_FILTER_EQUALS)
            bind_key(st, i++, (bd_field)f, q->filter[f].key);
    }
    if (q->scope_tenant)
        sqlite3_bind_int64(st, i++, q->scope_tenant);
    if (with_position && q->has_after) {
        sqlite3_bind_int(st, i++, q->after_date);
        sqlite3_bind_int64(st, i++, q->after_id);
    }
    return i;
}

/* Index entries of one key, counted up to a bound. */
static bd_result probe(sqlite_store *s, bd_field f, bd_slice key, int64_t *n)
{
    bd_buf_reset(&s->sql);
    bd_result r = bd_buf_printf(&s->sql,
                                "SELECT count(*) FROM (SELECT 1 FROM records INDEXED BY %s "
                                "WHERE %s = ?1 LIMIT 1001)",
                                FIELD_INDEX[f], bd_record_key_col(f));
    if (r != BD_OK)
        return r;
    sqlite3_stmt *st = sq_dynamic(s, s->sql.data);
    if (!st)
        return BD_ERR_STORE;
    bind_key(st, 1, f, key);
    return sq_step_count(st, n);
}

/* Picks the index that drives q, once per query: the searched field's, or a filter value's
 * when a probe of at most a thousand entries finds it more selective. Noted in q->plan as
 * the field + 1. */
static bd_result plan_records(sqlite_store *s, bd_record_query *q)
{
    if (q->plan)
        return BD_OK;
    bd_field driver = q->field;
    bool any = false;
    for (int f = 0; f < BD_FIELD_COUNT; f++)
        any |= q->filter[f].mode == BD_FILTER_EQUALS;
    bd_result r = BD_OK;
    int64_t best = 0;
    if (any)
        r = probe(s, q->field, q->key, &best);
    for (int f = 0; any && f < BD_FIELD_COUNT && r == BD_OK; f++) {
        if (q->filter[f].mode != BD_FILTER_EQUALS)
            continue;
        int64_t n;
        r = probe(s, (bd_field)f, q->filter[f].key, &n);
        if (r == BD_OK && n < best) {
            best = n;
            driver = (bd_field)f;
        }
    }
    if (r == BD_OK)
        q->plan = (int)driver + 1;
    return r;
}

/* An email_domain search without filters: records_found is the domain's count. */
static bool count_domain(sqlite_store *s, const bd_record_query *q, int64_t *count, bd_result *r)
{
    if (!bd_record_query_whole_domain(q))
        return false;
    sqlite3_stmt *st = sq_fixed(s, Q_DOMAIN_COUNT);
    if (!st) {
        *r = BD_ERR_STORE;
        return true;
    }
    sq_bind_slice(st, 1, q->key);
    *r = sq_step_count(st, count);
    return true;
}

static bd_result record_count(bd_store *base, bd_record_query *q, int64_t *count)
{
    sqlite_store *s = S(base);
    bd_result counted;
    if (count_domain(s, q, count, &counted))
        return counted;
    bd_result r = plan_records(s, q);
    if (r != BD_OK)
        return r;
    bd_buf_reset(&s->sql);
    r = bd_buf_append_str(&s->sql, "SELECT count(*) FROM records r");
    if (r == BD_OK)
        r = build_where(s, q, false);
    if (r != BD_OK)
        return r;
    sqlite3_stmt *st = sq_dynamic(s, s->sql.data);
    if (!st)
        return BD_ERR_STORE;
    bind_where(st, q, false);
    return sq_step_count(st, count);
}

/* The columns record_find selects, in this order. */
#define RECORD_COLS                                                                                \
    "r.id, r.breach_date, r.user_name, r.first_name, r.last_name, r.email, r.email_domain, "       \
    "r.phone_number, r.ip_address, r.bitcoin_address, r.password_masked, r.password_hash, "        \
    "r.ssn_masked, r.other_attributes, r.severity, r.breach_id"

/* Fills a record row from RECORD_COLS. */
static void record_from_cols(sqlite3_stmt *st, bd_record_row *row)
{
    row->id = sqlite3_column_int64(st, 0);
    row->breach_date = sqlite3_column_int(st, 1);
    row->user_name = sq_col_slice(st, 2);
    row->first_name = sq_col_slice(st, 3);
    row->last_name = sq_col_slice(st, 4);
    row->email = sq_col_slice(st, 5);
    row->email_domain = sq_col_slice(st, 6);
    row->phone_number = sq_col_slice(st, 7);
    row->ip_address = sq_col_slice(st, 8);
    row->bitcoin_address = sq_col_slice(st, 9);
    row->password_masked = sq_col_slice(st, 10);
    row->password_hash = sq_col_slice(st, 11);
    row->ssn_masked = sq_col_slice(st, 12);
    row->other_attributes = sq_col_slice(st, 13);
    row->severity = (bd_severity)sqlite3_column_int(st, 14);
    row->breach_id = sqlite3_column_int64(st, 15);
}

static bd_result record_find(bd_store *base, bd_record_query *q, bd_record_cb cb, void *ctx)
{
    sqlite_store *s = S(base);
    bd_result r = plan_records(s, q);
    if (r != BD_OK)
        return r;
    bd_buf_reset(&s->sql);
    r = bd_buf_append_str(&s->sql, "SELECT " RECORD_COLS " FROM records r");
    if (r == BD_OK)
        r = build_where(s, q, true);
    if (r == BD_OK)
        r = bd_buf_append_str(&s->sql, " ORDER BY r.breach_date DESC, r.id DESC LIMIT ?");
    if (r != BD_OK)
        return r;
    sqlite3_stmt *st = sq_dynamic(s, s->sql.data);
    if (!st)
        return BD_ERR_STORE;
    int i = bind_where(st, q, true);
    sqlite3_bind_int(st, i, q->limit);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        bd_record_row row;
        record_from_cols(st, &row);
        if (cb(ctx, &row))
            break;
    }
    r = rc == SQLITE_ROW || rc == SQLITE_DONE ? BD_OK : sq_map_rc(rc);
    sq_done(st);
    return r;
}

/* Counts the rows a find hands on, the one its callback stops at included, and whether the
 * callback stopped the find. */
typedef struct {
    bd_record_cb cb;
    void *ctx;
    int rows;
    bool stopped;
} counted_rows;

static int count_row(void *ctx, const bd_record_row *row)
{
    counted_rows *c = ctx;
    c->rows++;
    int stop = c->cb(c->ctx, row);
    c->stopped |= stop != 0;
    return stop;
}

/* The page first: a first page that is not full, read to its end, holds every match, so the
 * hot path (an identity with a handful of records) is counted without a count. A full page
 * (or one its callback cut short) is counted by a statement of its own, off the index: reading
 * on past the page to count instead costs a table lookup for each row, more than that
 * (bench/sqlite_floor.c: 6.58 against 6.19 us a lookup). Both run in the caller's read view. */
bd_result sq_record_search(bd_store *base, bd_record_query *q, bd_record_cb cb, void *ctx,
                           int64_t *found)
{
    if (!found)
        return record_find(base, q, cb, ctx);
    if (q->has_after)
        return BD_ERR_INVALID;
    counted_rows c = {cb, ctx, 0, false};
    bd_result r = record_find(base, q, count_row, &c);
    if (r != BD_OK)
        return r;
    if (c.rows < q->limit && !c.stopped) {
        *found = c.rows;
        return BD_OK;
    }
    return record_count(base, q, found);
}

/* ---- bulk lookups (jobs) ---------------------------------------------------------------- */

/* One statement per field, prepared once and run once per key: the page order of a search
 * comes from the index, whose entries end in the record id. */
bd_result sq_record_ids(bd_store *base, bd_field field, const bd_slice *keys, size_t n, int limit,
                        bd_record_id_cb cb, void *ctx, int64_t scope_tenant)
{
    sqlite_store *s = S(base);
    bd_buf_reset(&s->sql);
    bd_result r;
    if (!scope_tenant)
        r = bd_buf_printf(&s->sql,
                          "SELECT id FROM records INDEXED BY %s WHERE %s = ?1 "
                          "ORDER BY breach_date DESC, id DESC LIMIT ?2",
                          FIELD_INDEX[field], bd_record_key_col(field));
    else { /* a tenant key's job: only records in its domains (?3) */
        r = bd_buf_printf(&s->sql, "SELECT r.id FROM records r INDEXED BY %s WHERE r.%s = ?1",
                          FIELD_INDEX[field], bd_record_key_col(field));
        if (r == BD_OK)
            r = bd_record_scope_sql(&s->sql, "r", "?3", false);
        if (r == BD_OK)
            r = bd_buf_append_str(&s->sql, " ORDER BY r.breach_date DESC, r.id DESC LIMIT ?2");
    }
    if (r != BD_OK)
        return r;
    sqlite3_stmt *st = sq_dynamic(s, s->sql.data);
    if (!st)
        return BD_ERR_STORE;
    int rc = SQLITE_DONE;
    bool stop = false;
    for (size_t i = 0; i < n && !stop && rc == SQLITE_DONE; i++) {
        bind_key(st, 1, field, keys[i]);
        sqlite3_bind_int(st, 2, limit);
        if (scope_tenant)
            sqlite3_bind_int64(st, 3, scope_tenant);
        while ((rc = sqlite3_step(st)) == SQLITE_ROW)
            if (cb(ctx, i, sqlite3_column_int64(st, 0))) {
                stop = true;
                rc = SQLITE_DONE;
                break;
            }
        sqlite3_reset(st);
    }
    sq_done(st);
    return rc == SQLITE_DONE ? BD_OK : sq_map_rc(rc);
}

bd_result sq_records_by_id(bd_store *base, const int64_t *ids, size_t n, bd_record_cb cb,
                           void *ctx)
{
    sqlite_store *s = S(base);
    sqlite3_stmt *st = sq_dynamic(s, "SELECT " RECORD_COLS " FROM records r WHERE r.id = ?1");
    if (!st)
        return BD_ERR_STORE;
    int rc = SQLITE_DONE;
    bool stop = false;
    for (size_t i = 0; i < n && !stop && (rc == SQLITE_DONE || rc == SQLITE_ROW); i++) {
        sqlite3_bind_int64(st, 1, ids[i]);
        rc = sqlite3_step(st);
        if (rc == SQLITE_ROW) {
            bd_record_row row;
            record_from_cols(st, &row);
            stop = cb(ctx, &row) != 0;
        }
        sqlite3_reset(st);
    }
    sq_done(st);
    return rc == SQLITE_DONE || rc == SQLITE_ROW ? BD_OK : sq_map_rc(rc);
}
