/* Breach records on PostgreSQL: idempotent inserts (streamed with COPY inside a transaction,
 * see copy.c), and searches counted and paged in the search order (breach date newest
 * first, then id descending) with keyset positions.
 *
 * Which index drives a search is left to PostgreSQL's planner, which has statistics on
 * each key's frequency: a search with value filters runs as an unnamed statement, planned
 * for its very values (a big domain with a rare password is driven by the password's
 * index); one without runs as a prepared statement, whose plan does not depend on the
 * value. q->plan is not used. Where searches are routed (pg_store.routed), a domain search
 * runs off its lookup rows (search_by_domain). Bulk lookups (jobs) are record_ids.c's. */
#include <stdio.h>
#include <string.h>

#include "store/pg/pg_impl.h"
#include "store/pg/batch_sql.h"
#include "store/pg/records_email.h"
#include "store/record_sql.h"

/* A record put outside a transaction: one round trip, the insert, skipped for a duplicate
 * (same dedup hash), and the domain's count and lookup row added only when the record went
 * in ($21: counts are kept, i.e. no bulk load is recounting them at its end). Returns how
 * many records went in: 1 or 0. Inside a transaction records are streamed (copy.c). */
static const pg_stmt RECORD_PUT = {
    PG_Q_RECORD_PUT,
    "WITH ins AS (INSERT INTO records(ok, breach_id, breach_date, user_name, user_name_key, "
    "first_name, last_name, email, email_domain, phone_number, phone_key, ip_address, "
    "bitcoin_address, password_masked, password_hmac, password_hash, ssn_masked, ssn_hmac, "
    "other_attributes, severity, dedup, website_domain) "
    "VALUES ($22, $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, "
    "$18, $19, $20, $23) ON CONFLICT (ok, dedup) DO NOTHING RETURNING email_domain, ok, id, "
    "breach_date, " PG_RECORD_PRESENT_SQL " AS present), "
    "counted AS (INSERT INTO domain_counts(domain, n) SELECT email_domain, 1 FROM ins "
    "WHERE email_domain IS NOT NULL AND $21::boolean "
    "ON CONFLICT (domain) DO UPDATE SET n = domain_counts.n + 1), "
    "routed AS (INSERT INTO record_domains(domain, ok, id, breach_date, present) "
    "SELECT email_domain, ok, id, breach_date, present FROM ins "
    "WHERE email_domain IS NOT NULL AND $21::boolean) "
    "SELECT count(*) FROM ins"};

#define STR_(x) #x
#define STR(x) STR_(x)

/* The newest breaches, which an import is most likely to name, as many as the cache holds. */
static const pg_stmt BREACH_NEWEST = {PG_Q_BREACH_NEWEST,
                                      "SELECT uuid, id, date_leaked FROM breaches "
                                      "ORDER BY id DESC LIMIT " STR(PG_BREACH_CACHE)};

/* The cache slot of uuid, or of a free slot to put it in (uuid[0] '\0'), or -1 when its
 * probes are all taken by others. The cache probes a few slots, so two breaches whose
 * hashes meet do not evict each other in turn. */
static long cache_slot(const pg_store *p, const char *uuid)
{
    size_t home = bd_slice_hash(bd_slice_from(uuid));
    for (size_t i = 0; i < PG_BREACH_PROBES; i++) {
        size_t at = (home + i) & (PG_BREACH_CACHE - 1);
        if (p->breach_cache[at].uuid[0] == '\0' || strcmp(p->breach_cache[at].uuid, uuid) == 0)
            return (long)at;
    }
    return -1;
}

static void cache_put(pg_store *p, bd_slice uuid, int64_t id, int32_t date)
{
    char key[BD_UUID_LEN + 1];
    if (uuid.len != BD_UUID_LEN)
        return;
    memcpy(key, uuid.ptr, BD_UUID_LEN);
    key[BD_UUID_LEN] = '\0';
    long at = cache_slot(p, key);
    if (at < 0)
        return;
    memcpy(p->breach_cache[at].uuid, key, BD_UUID_LEN + 1);
    p->breach_cache[at].id = id;
    p->breach_cache[at].date = date;
}

/* Fills the cache with the newest breaches: one statement instead of one per breach (each
 * of which would end the COPY of a batch of record puts, see copy.c). */
static bd_result load_breaches(pg_store *p)
{
    PGresult *res;
    bd_result r = pg_run(p, &BREACH_NEWEST, NULL, &res);
    if (r != BD_OK)
        return r;
    for (int i = 0, n = PQntuples(res); i < n; i++)
        cache_put(p, pg_slice(res, i, 0), pg_int(res, i, 1), (int32_t)pg_int(res, i, 2));
    PQclear(res);
    return BD_OK;
}

/* The breach's row id and date, from the per-connection cache or the store. */
static bd_result breach_of(pg_store *p, const char *uuid, int64_t *id, int32_t *date)
{
    bd_result checked = pg_breach_cache_check(p);
    if (checked != BD_OK)
        return checked;
    long at = cache_slot(p, uuid);
    if (at < 0 || p->breach_cache[at].uuid[0] == '\0') {
        if (!p->breach_cache_loaded) {
            p->breach_cache_loaded = true;
            bd_result r = load_breaches(p);
            if (r != BD_OK)
                return r;
            return breach_of(p, uuid, id, date);
        }
        bd_result r = pg_breach_id(p, uuid, id, date);
        if (r == BD_OK)
            cache_put(p, bd_slice_from(uuid), *id, *date);
        return r;
    }
    *id = p->breach_cache[at].id;
    *date = p->breach_cache[at].date;
    return BD_OK;
}

static bd_result insert_record(pg_store *p, const bd_record_in *r, bool *inserted)
{
    int64_t id;
    int32_t date;
    bd_result res = breach_of(p, r->breach_uuid, &id, &date);
    if (res == BD_OK)
        res = pg_changes_note_put(p, false);
    if (res != BD_OK)
        return res;
    pg_params pp = {0};
    pg_param_int(&pp, id);
    pg_param_int(&pp, date);
    const bd_slice *text[] = {
        &r->user_name,     &r->user_name_key,   &r->first_name,      &r->last_name,
        &r->email,         &r->email_domain,    &r->phone_number,    &r->phone_key,
        &r->ip_address,    &r->bitcoin_address, &r->password_masked, &r->password_hmac,
        &r->password_hash, &r->ssn_masked,      &r->ssn_hmac,        &r->other_attributes,
    };
    for (size_t i = 0; i < sizeof text / sizeof text[0]; i++)
        pg_param_text(&pp, *text[i]);
    pg_param_int(&pp, (int64_t)r->severity);
    pg_param_text(&pp, (bd_slice){(const char *)r->dedup, sizeof r->dedup});
    pg_param_str(&pp, p->bulk_records ? "false" : "true");
    uint8_t ok[PG_OWNER_KEY_LEN];
    pg_owner_key(r, ok);
    pg_param_text(&pp, (bd_slice){(const char *)ok, sizeof ok});
    pg_param_text(&pp, r->website_domain);
    PGresult *rs;
    res = pg_run(p, &RECORD_PUT, &pp, &rs);
    if (res == BD_OK) {
        *inserted = pg_int(rs, 0, 0) > 0;
        PQclear(rs);
    }
    return res;
}

/* Inside a write transaction the record is streamed (copy.c): *inserted says it was staged,
 * and a duplicate is found when the rows move. The breach is checked now, so a put naming a
 * missing one fails at once, as a row-by-row insert does. */
static bd_result stage_record(pg_store *p, const bd_record_in *r, bool *inserted)
{
    if (pg_copy_missing(p, r->breach_uuid))
        return BD_ERR_NOT_FOUND;
    int64_t id;
    int32_t date;
    bd_result res = breach_of(p, r->breach_uuid, &id, &date);
    if (res == BD_ERR_NOT_FOUND)
        pg_copy_note_missing(p, r->breach_uuid);
    if (res == BD_OK)
        res = pg_changes_note_put(p, false);
    if (res == BD_OK)
        res = pg_copy_put(p, id, date, r);
    *inserted = res == BD_OK;
    return res;
}

bd_result pg_record_put(bd_store *s, const bd_record_in *r, bool *inserted)
{
    pg_store *p = pg_of(s);
    *inserted = false;
    if (p->in_tx)
        return stage_record(p, r, inserted);
    if (r->has_ranges) { /* a transaction of its own: the password counts move with it */
        bd_result res = pg_begin(s);
        if (res == BD_OK)
            res = stage_record(p, r, inserted);
        if (res == BD_OK)
            res = pg_commit(s);
        else
            pg_rollback(s);
        if (res == BD_OK && pg_take_late_duplicates(s) > 0)
            *inserted = false;
        if (res != BD_OK)
            *inserted = false;
        return res;
    }
    bool own;
    bd_result res = pg_write_begin(p, &own);
    if (res != BD_OK)
        return res;
    res = pg_write_end(p, own, insert_record(p, r, inserted));
    if (res != BD_OK)
        *inserted = false;
    return res;
}

static bool has_equals_filter(const bd_record_query *q)
{
    for (int f = 0; f < BD_FIELD_COUNT; f++)
        if (q->filter[f].mode == BD_FILTER_EQUALS)
            return true;
    return false;
}

typedef struct {
    const bd_record_query *q;
    pg_params *pp;
} filter_params;

/* An EQUALS filter's parameter: its key added to the parameters, named by its number. */
static bd_result numbered_param(void *ctx, bd_buf *b, bd_field f)
{
    filter_params *fp = ctx;
    pg_param_text(fp->pp, fp->q->filter[f].key);
    return bd_buf_printf(b, "$%d", fp->pp->n);
}

/* Appends q's WHERE clause, without the keyset position, to b and its values to pp,
 * numbering parameters as it goes. An email search names the email's owner key too (ok,
 * which must live until the statement has run): the one shard of a Citus cluster that
 * holds the email's records (owner.c). */
static bd_result build_where(bd_buf *b, const bd_record_query *q, const uint8_t *ok, pg_params *pp)
{
    pg_param_text(pp, q->key);
    bd_result r = bd_buf_printf(b, " WHERE r.%s = $%d", bd_record_key_col(q->field), pp->n);
    if (r == BD_OK && q->field == BD_FIELD_EMAIL) {
        pg_param_text(pp, (bd_slice){(const char *)ok, PG_OWNER_KEY_LEN});
        r = bd_buf_printf(b, " AND r.ok = $%d", pp->n);
    }
    if (r == BD_OK)
        r = bd_record_filters_sql(b, q, numbered_param, &(filter_params){q, pp});
    if (r == BD_OK && q->scope_tenant) {
        char tenant[24];
        pg_param_int(pp, q->scope_tenant);
        snprintf(tenant, sizeof tenant, "$%d::bigint", pp->n);
        r = bd_record_scope_sql(b, "r", tenant, true);
    }
    return r;
}

/* ---- domain searches, routed ---------------------------------------------------------- */

/* Whether q runs off record_domains: a domain search with no value filter (a =yes or =no
 * filter is a bit of the lookup row). One with a value filter runs as any other search, off
 * the records' indexes, planned for its values. */
static bool routed_by_domain(const bd_record_query *q)
{
    return q->field == BD_FIELD_EMAIL_DOMAIN && !has_equals_filter(q) && !q->scope_tenant;
}

/* Appends the =yes/=no filters of q as one test of the lookup row's bits (as t). */
static bd_result present_test(bd_buf *b, const bd_record_query *q, const char *t)
{
    unsigned mask = 0, want = 0;
    for (int f = 0; f < BD_FIELD_COUNT; f++) {
        if (q->filter[f].mode == BD_FILTER_PRESENT || q->filter[f].mode == BD_FILTER_ABSENT)
            mask |= 1u << f;
        if (q->filter[f].mode == BD_FILTER_PRESENT)
            want |= 1u << f;
    }
    return mask ? bd_buf_printf(b, " AND (%s.present & %u) = %u", t, mask, want) : BD_OK;
}

/* The page's records, by owner key and id, a primary-key probe each: on a Citus cluster
 * the owner keys (ok = ANY) prune the statement to the shards of the page's owners. (With
 * both arrays as conditions of the key, PostgreSQL 15 would probe their cross product; with
 * the owner keys alone it reads every record of each owner: 0.83 ms for a page of 100 at
 * 1M, 0.28 ms as pairs.) oks and ids are array literals, in the same order. */
static bd_result fetch_page(pg_store *p, const char *oks, const char *ids, bd_record_cb cb,
                            void *ctx)
{
    pg_params pp = {.result_format = 1}; /* no integer printed by PostgreSQL and parsed back */
    pg_param_str(&pp, oks);
    pg_param_str(&pp, ids);
    PGresult *res;
    bd_result r = pg_run_sql(p,
                             "SELECT " RECORD_ROW_COLUMNS
                             " FROM unnest($2::bigint[], $1::uuid[]) AS k(id, ok) JOIN records r "
                             "ON r.id = k.id AND r.ok = k.ok WHERE r.ok = ANY($1::uuid[]) "
                             "ORDER BY r.breach_date DESC, r.id DESC",
                             &pp, true, &res);
    if (r != BD_OK)
        return r;
    pg_record_rows(res, 0, PQntuples(res), cb, ctx);
    PQclear(res);
    return BD_OK;
}

/* A domain search in two statements, each on one shard of a Citus cluster or a few: the
 * page's owner keys and ids in search order off the domain's lookup rows, with the data
 * version and, for a first page, the count; then the records themselves (fetch_page). A
 * record erased between the two is left out of the page, as it would be a moment later. */
static bd_result search_by_domain(pg_store *p, bd_record_query *q, bd_record_cb cb, void *ctx,
                                  int64_t *found)
{
    pg_params pp = {0};
    pg_param_text(&pp, q->key);
    bd_buf_reset(&p->where);
    bd_buf_reset(&p->sql);
    bd_result r = present_test(&p->where, q, "d");
    if (r == BD_OK)
        r = bd_buf_append_str(&p->sql, "SELECT k.ok, k.id, " PG_DATA_VERSION_SQL);
    if (r == BD_OK && found) {
        r = bd_record_query_whole_domain(q)
                ? bd_buf_append_str(&p->sql, ", (SELECT n FROM domain_counts WHERE domain = $1)")
                : bd_buf_printf(&p->sql,
                                ", (SELECT count(*) FROM record_domains d WHERE d.domain = $1%s)",
                                p->where.data ? p->where.data : "");
    }
    if (r == BD_OK)
        r = bd_buf_printf(&p->sql,
                          " FROM (SELECT 1) AS o LEFT JOIN LATERAL (SELECT d.ok, d.id, "
                          "d.breach_date FROM record_domains d WHERE d.domain = $1%s",
                          p->where.data ? p->where.data : "");
    if (r == BD_OK && q->has_after) {
        pg_param_int(&pp, q->after_date);
        pg_param_int(&pp, q->after_id);
        r = bd_buf_printf(&p->sql, " AND (d.breach_date, d.id) < ($%d::integer, $%d::bigint)",
                          pp.n - 1, pp.n);
    }
    if (r == BD_OK) {
        pg_param_int(&pp, q->limit);
        r = bd_buf_printf(&p->sql,
                          " ORDER BY d.breach_date DESC, d.id DESC LIMIT $%d) AS k ON true "
                          "ORDER BY k.breach_date DESC, k.id DESC",
                          pp.n);
    }
    PGresult *res;
    if (r == BD_OK)
        r = pg_run_sql(p, p->sql.data, &pp, true, &res);
    if (r != BD_OK)
        return r;
    pg_note_version(p, pg_slice(res, 0, 2));
    if (found && !PQgetisnull(res, 0, 3))
        *found = pg_int(res, 0, 3);
    /* the two array literals, one after the other in p->where */
    bd_buf_reset(&p->where);
    int rows = PQgetisnull(res, 0, 0) ? 0 : PQntuples(res);
    r = bd_buf_append_char(&p->where, '{');
    for (int i = 0; r == BD_OK && i < rows; i++) {
        r = i ? bd_buf_append_char(&p->where, ',') : BD_OK;
        r = r == BD_OK ? bd_buf_append_str(&p->where, PQgetvalue(res, i, 0)) : r;
    }
    size_t ids_at = p->where.len + 2;
    r = r == BD_OK ? bd_buf_append(&p->where, "}\0{", 3) : r;
    for (int i = 0; r == BD_OK && i < rows; i++) {
        r = i ? bd_buf_append_char(&p->where, ',') : BD_OK;
        r = r == BD_OK ? bd_buf_append_str(&p->where, PQgetvalue(res, i, 1)) : r;
    }
    r = r == BD_OK ? bd_buf_append(&p->where, "}", 2) : r;
    PQclear(res);
    if (r != BD_OK || rows == 0)
        return r;
    return fetch_page(p, p->where.data, p->where.data + ids_at, cb, ctx);
}

/* ---- searches ----------------------------------------------------------------------- */

/* The search is one statement, so one round trip: the page, the data version its rows
 * were read at (column 16) and, for a first page, the count (column 17), all from the
 * statement's one snapshot. The count and the version are subqueries run once, not per
 * row; a page without rows needs neither (its count is 0). The WHERE text is written once
 * into p->where and used for the count and the page alike. */
bd_result pg_record_search(bd_store *s, bd_record_query *q, bd_record_cb cb, void *ctx,
                           int64_t *found)
{
    pg_store *p = pg_of(s);
    if (found && q->has_after)
        return BD_ERR_INVALID;
    if (found)
        *found = 0;
    if (p->routed && routed_by_domain(q))
        return search_by_domain(p, q, cb, ctx, found);
    if (pg_plain_email(q))
        return pg_search_email(p, q, cb, ctx, found);
    /* Binary results: a page's four integers a row (a domain page: 400) are not printed by
     * PostgreSQL and parsed back here; its text columns come as they are either way. */
    pg_params pp = {.result_format = 1};
    bd_buf_reset(&p->where);
    bd_buf_reset(&p->sql);
    uint8_t ok[PG_OWNER_KEY_LEN];
    if (q->field == BD_FIELD_EMAIL)
        pg_email_owner_key(q->key, ok);
    bd_result r = build_where(&p->where, q, ok, &pp);
    if (r == BD_OK)
        r = bd_buf_append_str(&p->sql, "SELECT " RECORD_ROW_COLUMNS ", " PG_DATA_VERSION_SQL);
    /* a whole domain is counted from its one row of domain_counts; its key is $1 */
    if (r == BD_OK && found)
        r = bd_record_query_whole_domain(q)
                ? bd_buf_append_str(&p->sql, ", (SELECT n FROM domain_counts WHERE domain = $1)")
                : bd_buf_printf(&p->sql, ", (SELECT count(*) FROM records r%s)", p->where.data);
    if (r == BD_OK)
        r = bd_buf_printf(&p->sql, " FROM records r%s", p->where.data);
    if (r == BD_OK && q->has_after) {
        pg_param_int(&pp, q->after_date);
        pg_param_int(&pp, q->after_id);
        r = bd_buf_printf(&p->sql, " AND (r.breach_date, r.id) < ($%d::integer, $%d::bigint)",
                          pp.n - 1, pp.n);
    }
    if (r == BD_OK) {
        pg_param_int(&pp, q->limit);
        r = bd_buf_printf(&p->sql, " ORDER BY r.breach_date DESC, r.id DESC LIMIT $%d", pp.n);
    }
    PGresult *res;
    if (r == BD_OK)
        r = pg_run_sql(p, p->sql.data, &pp, !has_equals_filter(q), &res);
    if (r != BD_OK)
        return r;
    if (PQntuples(res) > 0) {
        pg_note_version(p, pg_slice(res, 0, 16));
        if (found && !PQgetisnull(res, 0, 17))
            *found = pg_binary_int(res, 0, 17);
    }
    pg_record_rows(res, 0, PQntuples(res), cb, ctx);
    PQclear(res);
    return BD_OK;
}
