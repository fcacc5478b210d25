/* Breaches on PostgreSQL: the catalog (each breach with its unique Name), one breach by
 * uuid or row id, the derived identity count, and the reads of the HIBP API v3. */
#include <string.h>
#include <time.h>

#include "store/breach_name.h"
#include "store/website_backfill.h"
#include "store/pg/pg_impl.h"
#include "store/sql_common.h"

/* Candidates tried for a Name before a put gives up (store.h). */
#define NAME_TRIES 1000

/* The breach columns every breach-returning query selects, in bd_breach_row order. */
#define BREACH_COLS BD_SQL_BREACH_COLS
#define BREACH_ORDER " ORDER BY b.date_leaked DESC, b.source_name, b.uuid"

static const pg_stmt BREACH_PUT = {
    PG_Q_BREACH_PUT,
    "INSERT INTO breaches(uuid, source_name, site_domain, breach_type, site_categories, "
    "site_country, site_language, password_types, leaked_data_types, description, "
    "service_article_url, site_logo, date_leaked, pwned_count, name, added_at, modified_at, "
    "hibp_flags) "
    "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18) "
    "ON CONFLICT (uuid) DO NOTHING"};
static const pg_stmt BREACH_LIST = {PG_Q_BREACH_LIST,
                                    "SELECT " BREACH_COLS " FROM breaches b" BREACH_ORDER};
static const pg_stmt BREACH_LIST_LIMIT = {
    PG_Q_BREACH_LIST_LIMIT, "SELECT " BREACH_COLS " FROM breaches b" BREACH_ORDER " LIMIT $1"};
static const pg_stmt BREACH_GET = {PG_Q_BREACH_GET,
                                   "SELECT " BREACH_COLS " FROM breaches b WHERE b.uuid = $1"};
static const pg_stmt BREACH_BY_ID = {PG_Q_BREACH_BY_ID,
                                     "SELECT " BREACH_COLS " FROM breaches b WHERE b.id = $1"};
static const pg_stmt BREACH_ID = {PG_Q_BREACH_ID,
                                  "SELECT id, date_leaked FROM breaches WHERE uuid = $1"};
static const pg_stmt BREACH_NAME_TAKEN = {
    PG_Q_BREACH_NAME_TAKEN, "SELECT 1 FROM breaches WHERE lower(name) = lower($1)"};
static const pg_stmt BREACH_UNNAMED = {PG_Q_BREACH_UNNAMED,
                                       "SELECT id, source_name FROM breaches "
                                       "WHERE name IS NULL AND id > $1 ORDER BY id LIMIT 1"};
static const pg_stmt BREACH_SET_NAME = {PG_Q_BREACH_SET_NAME,
                                        "UPDATE breaches SET name = $2 WHERE id = $1"};
static const pg_stmt BREACH_BY_NAME = {
    PG_Q_BREACH_BY_NAME, "SELECT " BREACH_COLS " FROM breaches b WHERE lower(b.name) = lower($1)"};
/* The email's records through records_by_email, on the one shard its owner key names (a
 * Citus cluster, owner.c), then each of their breaches once. */
static const pg_stmt BREACHES_OF_EMAIL = {
    PG_Q_BREACHES_OF_EMAIL,
    "SELECT " BREACH_COLS " FROM breaches b WHERE b.id IN "
    "(SELECT breach_id FROM records WHERE email = $1 AND ok = $2) ORDER BY b.name"};
/* One statement, so one snapshot: the domain's record count (kept at import), then, only
 * when it is at most $2, the domain's records through records_by_domain (at most $2 of
 * them) joined to their breaches' Names; the count alone when there is no pair. */
static const pg_stmt DOMAIN_BREACHES = {
    PG_Q_DOMAIN_BREACHES,
    "WITH c AS (SELECT coalesce((SELECT n FROM domain_counts WHERE domain = $1), 0) AS n) "
    "SELECT c.n, p.email, p.name FROM c LEFT JOIN LATERAL ("
    "  SELECT r.email, b.name FROM (SELECT email, breach_id FROM records"
    "    WHERE email_domain = $1 AND email IS NOT NULL LIMIT $2) r"
    "  JOIN breaches b ON b.id = r.breach_id WHERE c.n <= $2 GROUP BY r.email, b.name) p ON true "
    "ORDER BY p.email, p.name"};
static const pg_stmt META_DELETE = {PG_Q_META_DELETE, "DELETE FROM meta WHERE key = $1"};

/* An imported count is what is shown; the derived one counts distinct identities. It is
 * counted first and then set (BREACH_SET_COUNT): on a Citus cluster an UPDATE of a reference
 * table may not read a distributed one. */
static const pg_stmt BREACH_DISTINCT = {
    PG_Q_BREACH_DISTINCT,
    "SELECT count(DISTINCT coalesce(email, user_name_key, phone_key, ip_address, "
    "bitcoin_address, encode(ssn_hmac, 'hex') COLLATE \"C\", password_hash)) "
    "FROM records WHERE breach_id = (SELECT id FROM breaches WHERE uuid = $1)"};

/* The first candidate of base (breach_name.h) that no breach holds, into out. */
static bd_result free_name(pg_store *p, const char *base, char out[BD_BREACH_NAME_MAX + 1])
{
    for (int k = 1; k <= NAME_TRIES; k++) {
        bd_breach_name_candidate(base, k, out);
        pg_params pp = {0};
        pg_param_str(&pp, out);
        PGresult *res;
        bd_result r = pg_run(p, &BREACH_NAME_TAKEN, &pp, &res);
        if (r != BD_OK)
            return r;
        bool taken = PQntuples(res) > 0;
        PQclear(res);
        if (!taken)
            return BD_OK;
    }
    return BD_ERR_EXISTS;
}


/* Inserts b under the writer lock (so the Name found free stays free). */
static bd_result insert_breach(pg_store *p, const bd_breach_in *b, bool *inserted)
{
    int64_t id;
    int32_t date;
    bd_result r = pg_breach_id(p, b->uuid, &id, &date);
    if (r != BD_ERR_NOT_FOUND) /* there: left as it was */
        return r;
    char base[BD_BREACH_NAME_MAX + 1], name[BD_BREACH_NAME_MAX + 1];
    bd_breach_name_start(b->name, b->source_name, base);
    r = free_name(p, base, name);
    if (r != BD_OK)
        return r;
    int64_t added = b->added_at ? b->added_at : (int64_t)time(NULL);
    pg_params pp = {0};
    pg_param_str(&pp, b->uuid);
    pg_param_text(&pp, b->source_name);
    pg_param_text(&pp, b->site_domain);
    pg_param_text(&pp, b->breach_type);
    pg_param_text(&pp, b->site_categories);
    pg_param_text(&pp, b->site_country);
    pg_param_text(&pp, b->site_language);
    pg_param_text(&pp, b->password_types);
    pg_param_text(&pp, b->leaked_data_types);
    pg_param_text(&pp, b->description);
    pg_param_text(&pp, b->service_article_url);
    pg_param_text(&pp, b->site_logo);
    pg_param_int(&pp, b->date_leaked);
    if (b->pwned_count >= 0)
        pg_param_int(&pp, b->pwned_count);
    else
        pg_param_str(&pp, NULL);
    pg_param_str(&pp, name);
    pg_param_int(&pp, added);
    pg_param_int(&pp, b->modified_at ? b->modified_at : added);
    pg_param_int(&pp, b->flags);
    PGresult *res;
    r = pg_run(p, &BREACH_PUT, &pp, &res);
    if (r == BD_OK) {
        *inserted = pg_changes(res) > 0;
        PQclear(res);
        pg_copy_forget_missing(p); /* record puts may name it now */
    }
    if (r == BD_OK && *inserted)
        r = pg_change_breach(p, BD_CHANGE_BREACH_ADDED, b->uuid, 1);
    return r;
}

bd_result pg_breach_put(bd_store *s, const bd_breach_in *b, bool *inserted)
{
    pg_store *p = pg_of(s);
    *inserted = false;
    bool own;
    bd_result r = pg_write_begin(p, &own);
    if (r != BD_OK)
        return r;
    r = pg_write_end(p, own, insert_breach(p, b, inserted));
    if (r != BD_OK)
        *inserted = false;
    return r;
}

/* Calls cb for each breach row of res; *rows gets how many there were. */
static void each_breach(PGresult *res, bd_breach_cb cb, void *ctx, int *rows)
{
    *rows = PQntuples(res);
    for (int i = 0; i < *rows; i++) {
        bd_breach_row b;
        b.uuid = pg_slice(res, i, 0);
        b.source_name = pg_slice(res, i, 1);
        b.site_domain = pg_slice(res, i, 2);
        b.breach_type = pg_slice(res, i, 3);
        b.site_categories = pg_slice(res, i, 4);
        b.site_country = pg_slice(res, i, 5);
        b.site_language = pg_slice(res, i, 6);
        b.password_types = pg_slice(res, i, 7);
        b.leaked_data_types = pg_slice(res, i, 8);
        b.description = pg_slice(res, i, 9);
        b.service_article_url = pg_slice(res, i, 10);
        b.site_logo = pg_slice(res, i, 11);
        b.date_leaked = (int32_t)pg_int(res, i, 12);
        b.pwned_count = pg_int(res, i, 13);
        b.name = pg_slice(res, i, 14);
        b.added_at = pg_int(res, i, 15);
        b.modified_at = pg_int(res, i, 16);
        b.flags = (uint32_t)pg_int(res, i, 17);
        if (cb(ctx, &b))
            break;
    }
    PQclear(res);
}

/* Runs a breach query and hands its rows to cb; BD_ERR_NOT_FOUND for no row when one was
 * asked for. */
static bd_result run_breaches(pg_store *p, const pg_stmt *q, const pg_params *pp, bool one,
                              bd_breach_cb cb, void *ctx)
{
    PGresult *res;
    bd_result r = pg_run(p, q, pp, &res);
    if (r != BD_OK)
        return r;
    int rows;
    each_breach(res, cb, ctx, &rows);
    return one && rows == 0 ? BD_ERR_NOT_FOUND : BD_OK;
}

bd_result pg_breach_list(bd_store *s, int limit, bd_breach_cb cb, void *ctx)
{
    pg_params pp = {0};
    if (limit > 0)
        pg_param_int(&pp, limit);
    return run_breaches(pg_of(s), limit > 0 ? &BREACH_LIST_LIMIT : &BREACH_LIST, &pp, false, cb,
                        ctx);
}

bd_result pg_breach_get(bd_store *s, const char *uuid, bd_breach_cb cb, void *ctx)
{
    pg_params pp = {0};
    pg_param_str(&pp, uuid);
    return run_breaches(pg_of(s), &BREACH_GET, &pp, true, cb, ctx);
}

bd_result pg_breach_by_id(bd_store *s, int64_t id, bd_breach_cb cb, void *ctx)
{
    pg_params pp = {0};
    pg_param_int(&pp, id);
    return run_breaches(pg_of(s), &BREACH_BY_ID, &pp, true, cb, ctx);
}

bd_result pg_breach_id(pg_store *p, const char *uuid, int64_t *id, int32_t *date)
{
    pg_params pp = {0};
    pg_param_str(&pp, uuid);
    PGresult *res;
    bd_result r = pg_run(p, &BREACH_ID, &pp, &res);
    if (r != BD_OK)
        return r;
    r = PQntuples(res) == 1 ? BD_OK : BD_ERR_NOT_FOUND;
    if (r == BD_OK) {
        *id = pg_int(res, 0, 0);
        *date = (int32_t)pg_int(res, 0, 1);
    }
    PQclear(res);
    return r;
}

bd_result pg_breach_exists(bd_store *s, const char *uuid, bool *exists)
{
    int64_t id;
    int32_t date;
    bd_result r = pg_breach_id(pg_of(s), uuid, &id, &date);
    *exists = r == BD_OK;
    return r == BD_ERR_NOT_FOUND ? BD_OK : r;
}

static const pg_stmt BREACH_COUNT = {
    PG_Q_BREACH_COUNT,
    "SELECT coalesce(pwned_count, pwned_count_derived) FROM breaches WHERE uuid = $1"};

/* A breach's shown identity count; -1 when there is no such breach. */
static bd_result count_of(pg_store *p, const char *uuid, int64_t *n)
{
    pg_params pp = {0};
    pg_param_str(&pp, uuid);
    PGresult *res;
    bd_result r = pg_run(p, &BREACH_COUNT, &pp, &res);
    if (r != BD_OK)
        return r;
    *n = PQntuples(res) == 1 ? pg_int(res, 0, 0) : -1;
    PQclear(res);
    return BD_OK;
}

static const pg_stmt BREACH_SET_COUNT = {
    PG_Q_BREACH_SET_COUNT,
    "UPDATE breaches SET pwned_count_derived = $2 WHERE uuid = $1 AND pwned_count IS NULL"};

bd_result pg_breach_refresh_count(bd_store *s, const char *uuid, int64_t counted)
{
    pg_store *p = pg_of(s);
    bool own;
    bd_result r = pg_write_begin(p, &own);
    if (r != BD_OK)
        return r;
    pg_params pp = {0};
    pg_param_str(&pp, uuid);
    int64_t before = -1, after = -1;
    r = count_of(p, uuid, &before);
    if (r == BD_OK && counted < 0) {
        PGresult *res;
        r = pg_run(p, &BREACH_DISTINCT, &pp, &res);
        if (r == BD_OK) {
            counted = pg_int(res, 0, 0);
            PQclear(res);
        }
    }
    pg_param_int(&pp, counted);
    if (r == BD_OK)
        r = pg_run(p, &BREACH_SET_COUNT, &pp, NULL);
    if (r == BD_OK)
        r = count_of(p, uuid, &after);
    if (r == BD_OK && after != before) /* the log says what changed, not what was looked at */
        r = pg_change_breach(p, BD_CHANGE_BREACH_CHANGED, uuid, 0);
    return pg_write_end(p, own, r);
}

static const pg_stmt BREACH_RECORDS = {
    PG_Q_BREACH_RECORDS,
    "SELECT count(*), coalesce(min(id), 0) FROM records "
    "WHERE breach_id = (SELECT id FROM breaches WHERE uuid = $1)"};

bd_result pg_breach_records(bd_store *s, const char *uuid, int64_t *n, int64_t *min_id)
{
    pg_params pp = {0};
    pg_param_str(&pp, uuid);
    PGresult *res;
    bd_result r = pg_run(pg_of(s), &BREACH_RECORDS, &pp, &res);
    if (r != BD_OK)
        return r;
    *n = pg_int(res, 0, 0);
    *min_id = pg_int(res, 0, 1);
    PQclear(res);
    return BD_OK;
}

/* BREACH_RECORDS of many breaches (a text array, in its order), for an import's settling:
 * how many records of each have an id past $2, grouped in one scan of those ids (the
 * import's own records), and which have any at or below it, a probe per breach that stops
 * at the first (none when $2 is 0: the store held no record). After a bulk load of 1M
 * records over 200 breaches into an empty store: 0.2 s, where an index scan counting each
 * breach took 0.59 s in all; one grouped count over the breaches' records was planned as
 * the same index scans (a table the load filled has no statistics yet). */
static const char BREACH_RECORDS_PAST[] =
    "SELECT u.i, c.n FROM unnest($1::text[]) WITH ORDINALITY AS u(uuid, i) "
    "JOIN breaches b ON b.uuid = u.uuid JOIN (SELECT breach_id, count(*) AS n FROM records "
    "WHERE id > $2 GROUP BY breach_id) c ON c.breach_id = b.id";
/* The same from a bulk load's own counts of the records past $2 (load_counts.c: breach ids
 * and counts as the arrays $3 and $4), when the import was that load. */
static const char BREACH_RECORDS_COUNTED[] =
    "SELECT u.i, c.n FROM unnest($1::text[]) WITH ORDINALITY AS u(uuid, i) "
    "JOIN breaches b ON b.uuid = u.uuid "
    "JOIN unnest($3::bigint[], $4::bigint[]) AS c(breach_id, n) ON c.breach_id = b.id "
    "WHERE $2::bigint IS NOT NULL";
static const char BREACH_RECORDS_OLDER[] =
    "SELECT u.i FROM unnest($1::text[]) WITH ORDINALITY AS u(uuid, i) "
    "JOIN breaches b ON b.uuid = u.uuid "
    "WHERE EXISTS (SELECT 1 FROM records r WHERE r.breach_id = b.id AND r.id <= $2)";

/* Runs one of the statements above with the uuids, after and, when ids is not NULL, the
 * load's counts (ids, ns); sets n[i] of each row's i (its first column) to its second
 * column, or to -1 when it has one column. */
static bd_result records_past_rows(pg_store *p, const char *sql, const char *uuids, int64_t after,
                                   const char *ids, const char *ns, size_t count, int64_t *n)
{
    pg_params pp = {0};
    pg_param_str(&pp, uuids);
    pg_param_int(&pp, after);
    if (ids) {
        pg_param_str(&pp, ids);
        pg_param_str(&pp, ns);
    }
    PGresult *res;
    bd_result r = pg_run_sql(p, sql, &pp, false, &res);
    if (r != BD_OK)
        return r;
    for (int row = 0, rows = PQntuples(res); row < rows; row++) {
        int64_t i = pg_int(res, row, 0) - 1;
        if (i >= 0 && (size_t)i < count)
            n[i] = PQnfields(res) > 1 ? pg_int(res, row, 1) : -1;
    }
    PQclear(res);
    return BD_OK;
}

bd_result pg_breach_records_past(bd_store *s, const char (*uuids)[BD_UUID_LEN + 1], size_t count,
                                 int64_t after, int64_t *n)
{
    pg_store *p = pg_of(s);
    bd_result r = BD_OK;
    /* Citus would join the distributed records with the array on the coordinator: one
     * routed count per breach instead */
    for (size_t i = 0; p->citus && i < count && r == BD_OK; i++) {
        int64_t min_id = 0;
        r = pg_breach_records(s, uuids[i], &n[i], &min_id);
        if (n[i] > 0 && min_id <= after)
            n[i] = -1;
    }
    if (p->citus)
        return r;
    bd_buf arr;
    bd_buf_init(&arr, 1u << 30);
    r = bd_buf_append_char(&arr, '{');
    for (size_t i = 0; i < count && r == BD_OK; i++) {
        n[i] = 0;
        r = i ? bd_buf_append_char(&arr, ',') : BD_OK;
        r = r == BD_OK ? pg_array_text(&arr, bd_slice_from(uuids[i])) : r;
    }
    r = r == BD_OK ? bd_buf_append_char(&arr, '}') : r;
    bd_buf ids, ns;
    bd_buf_init(&ids, 1u << 30);
    bd_buf_init(&ns, 1u << 30);
    bool known = false;
    if (r == BD_OK)
        r = pg_load_counts_arrays(p, after, &ids, &ns, &known);
    if (r == BD_OK && known)
        r = records_past_rows(p, BREACH_RECORDS_COUNTED, arr.data, after, ids.data, ns.data,
                              count, n);
    else if (r == BD_OK)
        r = records_past_rows(p, BREACH_RECORDS_PAST, arr.data, after, NULL, NULL, count, n);
    if (r == BD_OK && after > 0)
        r = records_past_rows(p, BREACH_RECORDS_OLDER, arr.data, after, NULL, NULL, count, n);
    bd_buf_free(&arr);
    bd_buf_free(&ids);
    bd_buf_free(&ns);
    return r;
}

static const pg_stmt RECORDS_LAST_ID = {PG_Q_RECORDS_LAST_ID,
                                        "SELECT coalesce(max(id), 0) FROM records"};

bd_result pg_records_last_id(bd_store *s, int64_t *id)
{
    PGresult *res;
    bd_result r = pg_run(pg_of(s), &RECORDS_LAST_ID, &(pg_params){0}, &res);
    if (r != BD_OK)
        return r;
    *id = pg_int(res, 0, 0);
    PQclear(res);
    return BD_OK;
}

bd_result pg_breach_by_name(bd_store *s, bd_slice name, bd_breach_cb cb, void *ctx)
{
    pg_params pp = {0};
    pg_param_text(&pp, name.ptr ? name : (bd_slice){"", 0});
    return run_breaches(pg_of(s), &BREACH_BY_NAME, &pp, true, cb, ctx);
}

bd_result pg_breaches_of_email(bd_store *s, bd_slice email, bd_breach_cb cb, void *ctx)
{
    email = email.ptr ? email : (bd_slice){"", 0};
    uint8_t ok[PG_OWNER_KEY_LEN];
    pg_email_owner_key(email, ok);
    pg_params pp = {0};
    pg_param_text(&pp, email);
    pg_param_text(&pp, (bd_slice){(const char *)ok, PG_OWNER_KEY_LEN});
    return run_breaches(pg_of(s), &BREACHES_OF_EMAIL, &pp, false, cb, ctx);
}

bd_result pg_domain_breaches(bd_store *s, bd_slice domain, int64_t max_records, bd_domain_cb cb,
                             void *ctx, int64_t *records)
{
    pg_params pp = {0};
    pg_param_text(&pp, domain.ptr ? domain : (bd_slice){"", 0});
    pg_param_int(&pp, max_records);
    PGresult *res;
    bd_result r = pg_run(pg_of(s), &DOMAIN_BREACHES, &pp, &res);
    if (r != BD_OK)
        return r;
    int rows = PQntuples(res);
    *records = rows > 0 ? pg_int(res, 0, 0) : 0;
    r = *records > max_records ? BD_ERR_LIMIT : BD_OK;
    for (int i = 0; r == BD_OK && i < rows; i++) {
        if (PQgetisnull(res, i, 1))
            continue; /* the count's own row: the domain has no email */
        bd_domain_row row = {pg_slice(res, i, 1), pg_slice(res, i, 2)};
        if (cb(ctx, &row))
            break;
    }
    PQclear(res);
    return r;
}

/* Gives every breach without a Name its Name, in the order they were stored. */
static bd_result fill_names(pg_store *p)
{
    int64_t after = 0;
    for (;;) {
        pg_params pp = {0};
        pg_param_int(&pp, after);
        PGresult *res;
        bd_result r = pg_run(p, &BREACH_UNNAMED, &pp, &res);
        if (r != BD_OK)
            return r;
        if (PQntuples(res) == 0) {
            PQclear(res);
            return BD_OK;
        }
        after = pg_int(res, 0, 0);
        char base[BD_BREACH_NAME_MAX + 1], name[BD_BREACH_NAME_MAX + 1];
        bd_breach_name_base(pg_slice(res, 0, 1), base);
        PQclear(res);
        r = free_name(p, base, name);
        if (r != BD_OK)
            return r;
        pg_params set = {0};
        pg_param_int(&set, after);
        pg_param_str(&set, name);
        r = pg_run(p, &BREACH_SET_NAME, &set, NULL);
        if (r != BD_OK)
            return r;
    }
}

bd_result pg_migration_notes(pg_store *p)
{
    pg_params pp = {0};
    pg_param_str(&pp, "pending_breach_names");
    PGresult *res;
    bd_result r = pg_cvv_note(p);
    if (r == BD_OK)
        r = bd_store_email_hashes_note(&p->base); /* issue 35: store/pastes.h */
    if (r == BD_OK)
        r = pg_website_domains_note(&p->base); /* issue 35: store/website_backfill.h */
    if (r == BD_OK)
        r = pg_run_sql(p, "SELECT 1 FROM meta WHERE key = $1", &pp, false, &res);
    if (r != BD_OK)
        return r;
    bool pending = PQntuples(res) > 0;
    PQclear(res);
    if (!pending)
        return BD_OK;
    r = fill_names(p);
    if (r == BD_OK)
        r = pg_run(p, &META_DELETE, &pp, NULL);
    return r;
}
