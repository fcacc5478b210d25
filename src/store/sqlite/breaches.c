/* The SQLite backend's breaches: insert (with the breach's unique Name), list and look up,
 * the derived identity count, and the reads of the HIBP API v3. */
#include <time.h>

#include "store/breach_name.h"
#include "store/website_backfill.h"
#include "store/sqlite/sqlite_impl.h"
#include "store/sqlite/statements.h"

/* Candidates tried for a Name before a put gives up (store.h). */
#define NAME_TRIES 1000

/* Fills a breach row from BREACH_COLS (statements.c) starting at column c. */
static void breach_from_cols(sqlite3_stmt *st, int c, bd_breach_row *b)
{
    b->uuid = sq_col_slice(st, c + 0);
    b->source_name = sq_col_slice(st, c + 1);
    b->site_domain = sq_col_slice(st, c + 2);
    b->breach_type = sq_col_slice(st, c + 3);
    b->site_categories = sq_col_slice(st, c + 4);
    b->site_country = sq_col_slice(st, c + 5);
    b->site_language = sq_col_slice(st, c + 6);
    b->password_types = sq_col_slice(st, c + 7);
    b->leaked_data_types = sq_col_slice(st, c + 8);
    b->description = sq_col_slice(st, c + 9);
    b->service_article_url = sq_col_slice(st, c + 10);
    b->site_logo = sq_col_slice(st, c + 11);
    b->date_leaked = sqlite3_column_int(st, c + 12);
    b->pwned_count = sqlite3_column_int64(st, c + 13);
    b->name = sq_col_slice(st, c + 14);
    b->added_at = sqlite3_column_int64(st, c + 15);
    b->modified_at = sqlite3_column_int64(st, c + 16);
    b->flags = (uint32_t)sqlite3_column_int64(st, c + 17);
}

/* The first candidate of base (breach_name.h) that no breach holds, into out. */
static bd_result free_name(sqlite_store *s, const char *base, char out[BD_BREACH_NAME_MAX + 1])
{
    sqlite3_stmt *st = sq_fixed(s, Q_BREACH_NAME_TAKEN);
    if (!st)
        return BD_ERR_STORE;
    for (int k = 1; k <= NAME_TRIES; k++) {
        bd_breach_name_candidate(base, k, out);
        sqlite3_bind_text(st, 1, out, -1, SQLITE_STATIC);
        int rc = sqlite3_step(st);
        sq_done(st);
        if (rc == SQLITE_DONE)
            return BD_OK;
        if (rc != SQLITE_ROW)
            return sq_map_rc(rc);
    }
    return BD_ERR_EXISTS;
}


bd_result sq_breach_put(bd_store *base, const bd_breach_in *b, bool *inserted)
{
    sqlite_store *s = S(base);
    *inserted = false;
    int64_t id;
    int32_t date;
    bd_result r = sq_breach_id(s, b->uuid, &id, &date);
    if (r != BD_ERR_NOT_FOUND) /* there: left as it was */
        return r;
    char base_name[BD_BREACH_NAME_MAX + 1], name[BD_BREACH_NAME_MAX + 1];
    bd_breach_name_start(b->name, b->source_name, base_name);
    r = free_name(s, base_name, name);
    if (r != BD_OK)
        return r;
    sqlite3_stmt *st = sq_fixed(s, Q_BREACH_PUT);
    if (!st)
        return BD_ERR_STORE;
    int64_t added = b->added_at ? b->added_at : (int64_t)time(NULL);
    sqlite3_bind_text(st, 1, b->uuid, -1, SQLITE_STATIC);
    sq_bind_slice(st, 2, b->source_name);
    sq_bind_slice(st, 3, b->site_domain);
    sq_bind_slice(st, 4, b->breach_type);
    sq_bind_slice(st, 5, b->site_categories);
    sq_bind_slice(st, 6, b->site_country);
    sq_bind_slice(st, 7, b->site_language);
    sq_bind_slice(st, 8, b->password_types);
    sq_bind_slice(st, 9, b->leaked_data_types);
    sq_bind_slice(st, 10, b->description);
    sq_bind_slice(st, 11, b->service_article_url);
    sq_bind_slice(st, 12, b->site_logo);
    sqlite3_bind_int(st, 13, b->date_leaked);
    sq_bind_known(st, 14, b->pwned_count);
    sqlite3_bind_text(st, 15, name, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 16, added);
    sqlite3_bind_int64(st, 17, b->modified_at ? b->modified_at : added);
    sqlite3_bind_int64(st, 18, b->flags);
    r = sq_step_done(s, st);
    *inserted = r == BD_OK && sqlite3_changes(s->db) > 0;
    if (*inserted)
        r = sq_change_breach(s, BD_CHANGE_BREACH_ADDED, b->uuid, 1);
    return r;
}

static bd_result each_breach(sqlite3_stmt *st, bd_breach_cb cb, void *ctx, int *rows)
{
    int rc;
    *rows = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        bd_breach_row b;
        breach_from_cols(st, 0, &b);
        ++*rows;
        if (cb(ctx, &b))
            break;
    }
    bd_result r = rc == SQLITE_ROW ? BD_OK : sq_map_rc(rc);
    sq_done(st);
    return r;
}

bd_result sq_breach_list(bd_store *base, int limit, bd_breach_cb cb, void *ctx)
{
    sqlite_store *s = S(base);
    sqlite3_stmt *st = sq_fixed(s, limit > 0 ? Q_BREACH_LIST_LIMIT : Q_BREACH_LIST);
    if (!st)
        return BD_ERR_STORE;
    if (limit > 0)
        sqlite3_bind_int(st, 1, limit);
    int rows;
    return each_breach(st, cb, ctx, &rows);
}

/* The one breach st finds; BD_ERR_NOT_FOUND when it finds none. */
static bd_result the_breach(sqlite3_stmt *st, bd_breach_cb cb, void *ctx)
{
    int rows;
    bd_result r = each_breach(st, cb, ctx, &rows);
    return r == BD_OK && rows == 0 ? BD_ERR_NOT_FOUND : r;
}

bd_result sq_breach_get(bd_store *base, const char *uuid, bd_breach_cb cb, void *ctx)
{
    sqlite_store *s = S(base);
    sqlite3_stmt *st = sq_fixed(s, Q_BREACH_GET);
    if (!st)
        return BD_ERR_STORE;
    sqlite3_bind_text(st, 1, uuid, -1, SQLITE_STATIC);
    return the_breach(st, cb, ctx);
}

bd_result sq_breach_by_id(bd_store *base, int64_t id, bd_breach_cb cb, void *ctx)
{
    sqlite_store *s = S(base);
    sqlite3_stmt *st = sq_fixed(s, Q_BREACH_BY_ID);
    if (!st)
        return BD_ERR_STORE;
    sqlite3_bind_int64(st, 1, id);
    return the_breach(st, cb, ctx);
}

bd_result sq_breach_id(sqlite_store *s, const char *uuid, int64_t *id, int32_t *date)
{
    sqlite3_stmt *st = sq_fixed(s, Q_BREACH_ID);
    if (!st)
        return BD_ERR_STORE;
    sqlite3_bind_text(st, 1, uuid, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    bd_result r = rc == SQLITE_ROW ? BD_OK : rc == SQLITE_DONE ? BD_ERR_NOT_FOUND : sq_map_rc(rc);
    if (rc == SQLITE_ROW) {
        *id = sqlite3_column_int64(st, 0);
        *date = sqlite3_column_int(st, 1);
    }
    sq_done(st);
    return r;
}

bd_result sq_breach_exists(bd_store *base, const char *uuid, bool *exists)
{
    int64_t id;
    int32_t date;
    bd_result r = sq_breach_id(S(base), uuid, &id, &date);
    *exists = r == BD_OK;
    return r == BD_ERR_NOT_FOUND ? BD_OK : r;
}

/* A breach's shown identity count; -1 when there is no such breach. */
static bd_result count_of(sqlite_store *s, const char *uuid, int64_t *n)
{
    sqlite3_stmt *st = sq_fixed(s, Q_BREACH_COUNT);
    if (!st)
        return BD_ERR_STORE;
    sqlite3_bind_text(st, 1, uuid, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    *n = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
    sq_done(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? BD_OK : sq_map_rc(rc);
}

bd_result sq_breach_refresh_count(bd_store *base, const char *uuid, int64_t counted)
{
    sqlite_store *s = S(base);
    sqlite3_stmt *st = sq_fixed(s, counted >= 0 ? Q_BREACH_SET_COUNT : Q_BREACH_REFRESH);
    if (!st)
        return BD_ERR_STORE;
    int64_t before, after;
    bd_result r = count_of(s, uuid, &before);
    if (r != BD_OK)
        return r;
    sqlite3_bind_text(st, 1, uuid, -1, SQLITE_STATIC);
    if (counted >= 0)
        sqlite3_bind_int64(st, 2, counted);
    r = sq_step_done(s, st);
    if (r == BD_OK)
        r = count_of(s, uuid, &after);
    if (r == BD_OK && after != before) /* the log says what changed, not what was looked at */
        r = sq_change_breach(s, BD_CHANGE_BREACH_CHANGED, uuid, 0);
    return r;
}

bd_result sq_breach_records(bd_store *base, const char *uuid, int64_t *n, int64_t *min_id)
{
    sqlite_store *s = S(base);
    sqlite3_stmt *st = sq_fixed(s, Q_BREACH_RECORDS);
    if (!st)
        return BD_ERR_STORE;
    sqlite3_bind_text(st, 1, uuid, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        *n = sqlite3_column_int64(st, 0);
        *min_id = sqlite3_column_int64(st, 1);
    }
    sq_done(st);
    return rc == SQLITE_ROW ? BD_OK : sq_map_rc(rc);
}

bd_result sq_records_last_id(bd_store *base, int64_t *id)
{
    sqlite_store *s = S(base);
    sqlite3_stmt *st = sq_fixed(s, Q_RECORDS_LAST_ID);
    if (!st)
        return BD_ERR_STORE;
    return sq_step_count(st, id);
}

bd_result sq_breach_by_name(bd_store *base, bd_slice name, bd_breach_cb cb, void *ctx)
{
    sqlite_store *s = S(base);
    sqlite3_stmt *st = sq_fixed(s, Q_BREACH_BY_NAME);
    if (!st)
        return BD_ERR_STORE;
    sq_bind_slice(st, 1, name.ptr ? name : (bd_slice){"", 0});
    return the_breach(st, cb, ctx);
}

bd_result sq_breaches_of_email(bd_store *base, bd_slice email, bd_breach_cb cb, void *ctx)
{
    sqlite_store *s = S(base);
    sqlite3_stmt *st = sq_fixed(s, Q_BREACHES_OF_EMAIL);
    if (!st)
        return BD_ERR_STORE;
    sq_bind_slice(st, 1, email.ptr ? email : (bd_slice){"", 0});
    int rows;
    return each_breach(st, cb, ctx, &rows);
}

bd_result sq_domain_breaches(bd_store *base, bd_slice domain, int64_t max_records,
                             bd_domain_cb cb, void *ctx, int64_t *records)
{
    sqlite_store *s = S(base);
    domain = domain.ptr ? domain : (bd_slice){"", 0};
    sqlite3_stmt *st = sq_fixed(s, Q_DOMAIN_COUNT);
    if (!st)
        return BD_ERR_STORE;
    sq_bind_slice(st, 1, domain);
    bd_result r = sq_step_count(st, records);
    if (r != BD_OK)
        return r;
    if (*records > max_records)
        return BD_ERR_LIMIT;
    if (*records == 0)
        return BD_OK;
    st = sq_fixed(s, Q_DOMAIN_BREACHES);
    if (!st)
        return BD_ERR_STORE;
    sq_bind_slice(st, 1, domain);
    sqlite3_bind_int64(st, 2, max_records);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        bd_domain_row row = {sq_col_slice(st, 0), sq_col_slice(st, 1)};
        if (cb(ctx, &row))
            break;
    }
    r = rc == SQLITE_ROW ? BD_OK : sq_map_rc(rc);
    sq_done(st);
    return r;
}

/* Gives every breach without a Name its Name, in the order they were stored. */
static bd_result fill_names(sqlite_store *s)
{
    int64_t after = 0;
    for (;;) {
        sqlite3_stmt *st = sq_fixed(s, Q_BREACH_UNNAMED);
        if (!st)
            return BD_ERR_STORE;
        sqlite3_bind_int64(st, 1, after);
        int rc = sqlite3_step(st);
        if (rc != SQLITE_ROW) {
            sq_done(st);
            return sq_map_rc(rc);
        }
        after = sqlite3_column_int64(st, 0);
        char base[BD_BREACH_NAME_MAX + 1], name[BD_BREACH_NAME_MAX + 1];
        bd_breach_name_base(sq_col_slice(st, 1), base);
        sq_done(st);
        bd_result r = free_name(s, base, name);
        if (r != BD_OK)
            return r;
        st = sq_fixed(s, Q_BREACH_SET_NAME);
        if (!st)
            return BD_ERR_STORE;
        sqlite3_bind_int64(st, 1, after);
        sqlite3_bind_text(st, 2, name, -1, SQLITE_STATIC);
        r = sq_step_done(s, st);
        if (r != BD_OK)
            return r;
    }
}

bd_result sq_migration_notes(sqlite_store *s)
{
    char v[8];
    bd_result r = sq_cvv_note(s);
    if (r == BD_OK)
        r = bd_store_email_hashes_note(&s->base); /* issue 35: store/pastes.h */
    if (r == BD_OK)
        r = sq_website_domains_note(&s->base); /* issue 35: store/website_backfill.h */
    if (r == BD_OK)
        r = sq_owner_words_note(s); /* issue 31: cards.c */
    if (r == BD_OK)
        r = sq_dedup_key_note(s); /* issue 32: dedup_key.c */
    if (r == BD_OK)
        r = sq_meta_get(&s->base, "pending_breach_names", v, sizeof v);
    if (r == BD_ERR_NOT_FOUND)
        return BD_OK;
    if (r == BD_OK)
        r = fill_names(s);
    sqlite3_stmt *st = r == BD_OK ? sq_fixed(s, Q_META_DELETE) : NULL;
    if (r == BD_OK && !st)
        r = BD_ERR_STORE;
    if (r == BD_OK) {
        sqlite3_bind_text(st, 1, "pending_breach_names", -1, SQLITE_STATIC);
        r = sq_step_done(s, st);
    }
    return r;
}
