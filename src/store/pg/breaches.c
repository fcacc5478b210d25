/* Breaches on PostgreSQL: the catalog, one breach by uuid or row id, and the derived
 * identity count. */
#include <string.h>

#include "store/pg/pg_impl.h"

/* The breach columns every breach-returning query selects, in bd_breach_row order. */
#define BREACH_COLS                                                                                \
    "b.uuid, b.source_name, b.site_domain, b.breach_type, b.site_categories, b.site_country, "     \
    "b.site_language, b.password_types, b.leaked_data_types, b.description, "                      \
    "b.service_article_url, b.site_logo, b.date_leaked, "                                          \
    "coalesce(b.pwned_count, b.pwned_count_derived)"
#define BREACH_ORDER " ORDER BY b.date_leaked DESC, b.source_name, b.uuid"

static const pg_stmt BREACH_PUT = {
    PG_Q_BREACH_PUT,
    "INSERT INTO breaches(uuid, source_name, site_domain, breach_type, site_categories, "
    "site_country, site_language, password_types, leaked_data_types, description, "
    "service_article_url, site_logo, date_leaked, pwned_count) "
    "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) "
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
/* An imported count is what is shown; the derived one counts distinct identities. */
static const pg_stmt BREACH_REFRESH = {
    PG_Q_BREACH_REFRESH,
    "UPDATE breaches SET pwned_count_derived = (SELECT count(DISTINCT coalesce(email, "
    "user_name_key, phone_key, ip_address, bitcoin_address, "
    "encode(ssn_hmac, 'hex') COLLATE \"C\", password_hash)) "
    "FROM records WHERE breach_id = breaches.id) "
    "WHERE uuid = $1 AND pwned_count IS NULL"};

bd_result pg_breach_put(bd_store *s, const bd_breach_in *b, bool *inserted)
{
    pg_store *p = pg_of(s);
    *inserted = false;
    bool own;
    bd_result r = pg_write_begin(p, &own);
    if (r != BD_OK)
        return r;
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
    PGresult *res;
    r = pg_run(p, &BREACH_PUT, &pp, &res);
    if (r == BD_OK) {
        *inserted = pg_changes(res) > 0;
        PQclear(res);
        pg_copy_forget_missing(p); /* record puts may name it now */
    }
    r = pg_write_end(p, own, r);
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

bd_result pg_breach_refresh_count(bd_store *s, const char *uuid)
{
    pg_store *p = pg_of(s);
    bool own;
    bd_result r = pg_write_begin(p, &own);
    if (r != BD_OK)
        return r;
    pg_params pp = {0};
    pg_param_str(&pp, uuid);
    return pg_write_end(p, own, pg_run(p, &BREACH_REFRESH, &pp, NULL));
}
