/* Bulk lookups on PostgreSQL (jobs, store.h "bulk lookup jobs"): the record ids of many
 * search keys at once, each key's first `limit` in search order, and the records of a list
 * of ids. Split from records.c (one concern per file). */

#include "core/hex.h"
#include "store/pg/pg_impl.h"
#include "store/pg/batch_sql.h"
#include "store/pg/records_email.h"
#include "store/record_sql.h"

/* Appends v as an element of an array literal: text quoted with \ before " and \, a key
 * of bytea (password, SSN) as its \x hex form. */
static bd_result array_element(bd_buf *b, bd_field field, bd_slice v)
{
    if (field != BD_FIELD_PASSWORD && field != BD_FIELD_SSN)
        return pg_array_text(b, v);
    bd_result r = bd_buf_append_char(b, '"');
    r = r == BD_OK ? bd_buf_append_str(b, "\\\\x") : r;
    for (size_t i = 0; r == BD_OK && i < v.len; i++) {
        char two[2];
        bd_hex_encode((const uint8_t *)v.ptr + i, 1, two);
        r = bd_buf_append(b, two, 2);
    }
    return r == BD_OK ? bd_buf_append_char(b, '"') : r;
}

/* On a Citus coordinator, emails: one statement for all, each email joined to its records
 * on the shards of the emails' owner keys (ok = ANY), every record of each in search order;
 * the first `limit` of each are kept here (Citus cannot push a per-key LIMIT down). */
static bd_result record_ids_of_emails(pg_store *p, const bd_slice *keys, size_t n, int limit,
                                      bd_record_id_cb cb, void *ctx, int64_t scope_tenant)
{
    bd_buf emails, oks;
    bd_buf_init(&emails, 1u << 28);
    bd_buf_init(&oks, 1u << 28);
    bd_result r = bd_buf_append_char(&emails, '{');
    r = r == BD_OK ? bd_buf_append_char(&oks, '{') : r;
    for (size_t i = 0; r == BD_OK && i < n; i++) {
        uint8_t ok[PG_OWNER_KEY_LEN];
        char hex[2 * PG_OWNER_KEY_LEN];
        pg_email_owner_key(keys[i], ok);
        bd_hex_encode(ok, sizeof ok, hex);
        r = i ? bd_buf_append_char(&emails, ',') : BD_OK;
        r = r == BD_OK ? pg_array_text(&emails, keys[i]) : r;
        r = r == BD_OK ? bd_buf_printf(&oks, "%s%.*s", i ? "," : "", (int)sizeof hex, hex) : r;
    }
    r = r == BD_OK ? bd_buf_append_char(&emails, '}') : r;
    r = r == BD_OK ? bd_buf_append_char(&oks, '}') : r;
    bd_buf_reset(&p->sql);
    if (r == BD_OK)
        r = bd_buf_append_str(&p->sql,
                              "SELECT k.i, s.id FROM unnest($1::text[]) WITH ORDINALITY AS k(v, i) "
                              "JOIN records s ON s.email = k.v WHERE s.ok = ANY($2::uuid[])");
    if (r == BD_OK && scope_tenant)
        r = bd_record_scope_sql(&p->sql, "s", "$3::bigint", true);
    if (r == BD_OK)
        r = bd_buf_append_str(&p->sql, " ORDER BY k.i, s.breach_date DESC, s.id DESC");
    PGresult *res = NULL;
    if (r == BD_OK) {
        pg_params pp = {0};
        pg_param_str(&pp, emails.data);
        pg_param_str(&pp, oks.data);
        if (scope_tenant)
            pg_param_int(&pp, scope_tenant);
        r = pg_run_sql(p, p->sql.data, &pp, true, &res);
    }
    bd_buf_free(&emails);
    bd_buf_free(&oks);
    if (r != BD_OK)
        return r;
    int64_t key = -1;
    int taken = 0;
    for (int k = 0, rows = PQntuples(res); k < rows; k++) {
        int64_t i = pg_int(res, k, 0) - 1;
        taken = i == key ? taken + 1 : 1;
        key = i;
        if (taken <= limit && cb(ctx, (size_t)i, pg_int(res, k, 1)))
            break;
    }
    PQclear(res);
    return BD_OK;
}

/* On a Citus coordinator, other fields: a statement per key, as Citus cannot push a LATERAL
 * subquery with a LIMIT down to the shards; each reads every shard, as its search does. */
static bd_result record_ids_each(pg_store *p, bd_field field, const bd_slice *keys, size_t n,
                                 int limit, bd_record_id_cb cb, void *ctx, int64_t scope_tenant)
{
    if (field == BD_FIELD_EMAIL)
        return record_ids_of_emails(p, keys, n, limit, cb, ctx, scope_tenant);
    bd_buf_reset(&p->sql);
    bd_result r = bd_buf_printf(&p->sql, "SELECT s.id FROM records s WHERE s.%s = $1",
                                bd_record_key_col(field));
    if (r == BD_OK && scope_tenant)
        r = bd_record_scope_sql(&p->sql, "s", "$3::bigint", true);
    if (r == BD_OK)
        r = bd_buf_append_str(&p->sql, " ORDER BY s.breach_date DESC, s.id DESC LIMIT $2::integer");
    for (size_t i = 0; r == BD_OK && i < n; i++) {
        pg_params pp = {0};
        pg_param_text(&pp, keys[i]);
        pg_param_int(&pp, limit);
        if (scope_tenant)
            pg_param_int(&pp, scope_tenant);
        PGresult *res;
        r = pg_run_sql(p, p->sql.data, &pp, true, &res);
        if (r != BD_OK)
            break;
        int rows = PQntuples(res), stop = 0;
        for (int k = 0; k < rows && !stop; k++)
            stop = cb(ctx, i, pg_int(res, k, 0));
        PQclear(res);
        if (stop)
            break;
    }
    return r;
}

/* One statement, so one round trip, for all the keys: each key's first `limit` ids through
 * the field's index, in search order. */
bd_result pg_record_ids(bd_store *s, bd_field field, const bd_slice *keys, size_t n, int limit,
                        bd_record_id_cb cb, void *ctx, int64_t scope_tenant)
{
    pg_store *p = pg_of(s);
    if (p->citus)
        return record_ids_each(p, field, keys, n, limit, cb, ctx, scope_tenant);
    bool bytes = field == BD_FIELD_PASSWORD || field == BD_FIELD_SSN;
    bd_buf arr;
    bd_buf_init(&arr, 1u << 28);
    bd_result r = bd_buf_append_char(&arr, '{');
    for (size_t i = 0; r == BD_OK && i < n; i++) {
        if (i)
            r = bd_buf_append_char(&arr, ',');
        if (r == BD_OK)
            r = array_element(&arr, field, keys[i]);
    }
    if (r == BD_OK)
        r = bd_buf_append(&arr, "}", 2); /* with its NUL: a text-format parameter */
    bd_buf_reset(&p->sql);
    if (r == BD_OK && !scope_tenant)
        r = bd_buf_printf(&p->sql,
                          "SELECT k.i, r.id FROM unnest($1::%s[]) WITH ORDINALITY AS k(v, i) "
                          "CROSS JOIN LATERAL (SELECT id, breach_date FROM records "
                          "WHERE %s = k.v ORDER BY breach_date DESC, id DESC LIMIT $2::integer) r "
                          "ORDER BY k.i, r.breach_date DESC, r.id DESC",
                          bytes ? "bytea" : "text", bd_record_key_col(field));
    else if (r == BD_OK) { /* a tenant key's job: only records in its domains ($3) */
        r = bd_buf_printf(&p->sql,
                          "SELECT k.i, r.id FROM unnest($1::%s[]) WITH ORDINALITY AS k(v, i) "
                          "CROSS JOIN LATERAL (SELECT s.id, s.breach_date FROM records s "
                          "WHERE s.%s = k.v",
                          bytes ? "bytea" : "text", bd_record_key_col(field));
        if (r == BD_OK)
            r = bd_record_scope_sql(&p->sql, "s", "$3::bigint", true);
        if (r == BD_OK)
            r = bd_buf_append_str(&p->sql,
                                  " ORDER BY s.breach_date DESC, s.id DESC LIMIT $2::integer) r "
                                  "ORDER BY k.i, r.breach_date DESC, r.id DESC");
    }
    PGresult *res = NULL;
    if (r == BD_OK) {
        pg_params pp = {0};
        pg_param_str(&pp, arr.data);
        pg_param_int(&pp, limit);
        if (scope_tenant)
            pg_param_int(&pp, scope_tenant);
        r = pg_run_sql(p, p->sql.data, &pp, true, &res);
    }
    bd_buf_free(&arr);
    if (r != BD_OK)
        return r;
    int rows = PQntuples(res);
    for (int i = 0; i < rows; i++)
        if (cb(ctx, (size_t)(pg_int(res, i, 0) - 1), pg_int(res, i, 1)))
            break;
    PQclear(res);
    return BD_OK;
}

bd_result pg_records_by_id(bd_store *s, const int64_t *ids, size_t n, bd_record_cb cb, void *ctx)
{
    pg_store *p = pg_of(s);
    bd_buf arr;
    bd_buf_init(&arr, 1u << 28);
    bd_result r = bd_buf_append_char(&arr, '{');
    for (size_t i = 0; r == BD_OK && i < n; i++)
        r = bd_buf_printf(&arr, "%s%lld", i ? "," : "", (long long)ids[i]);
    if (r == BD_OK)
        r = bd_buf_append(&arr, "}", 2);
    PGresult *res = NULL;
    if (r == BD_OK) {
        pg_params pp = {0};
        pg_param_str(&pp, arr.data);
        r = pg_run_sql(p,
                       "SELECT " RECORD_ROW_COLUMNS " FROM records r "
                       "WHERE r.id = ANY($1::bigint[])",
                       &pp, true, &res);
    }
    bd_buf_free(&arr);
    if (r != BD_OK)
        return r;
    pg_record_rows(res, 0, PQntuples(res), cb, ctx);
    PQclear(res);
    return BD_OK;
}
