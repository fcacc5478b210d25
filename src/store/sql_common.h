/* SQL that every backend speaks alike (backend-neutral, only for src/store/'s backends):
 * the breach columns every breach-returning query selects, and dropping the indexes a
 * schema's DDL creates. */
#ifndef BD_STORE_SQL_COMMON_H
#define BD_STORE_SQL_COMMON_H

#include "core/result.h"

/* The breach columns every breach-returning query selects, over breaches as b, in
 * bd_breach_row order. */
#define BD_SQL_BREACH_COLS                                                                         \
    "b.uuid, b.source_name, b.site_domain, b.breach_type, b.site_categories, b.site_country, "     \
    "b.site_language, b.password_types, b.leaked_data_types, b.description, "                      \
    "b.service_article_url, b.site_logo, b.date_leaked, "                                          \
    "coalesce(b.pwned_count, b.pwned_count_derived), b.name, b.added_at, b.modified_at, "          \
    "b.hibp_flags"

/* The lookup log's ten-minute bucket of a row's time: lookups_by_bucket's first column and
 * the searches by hash that walk it, in every backend. The index is used only where a
 * statement writes the same expression. */
#define BD_SQL_LOOKUP_BUCKET "(at / 600)"

/* Runs one statement on the backend's connection ctx. */
typedef bd_result (*bd_sql_exec_fn)(void *ctx, const char *sql);

/* Drops every index that ddl creates ("DROP INDEX IF EXISTS name", one statement each, in
 * ddl's order), so the list of indexes lives only in the backend's schema. Stops at the
 * first failure and returns it. */
bd_result bd_sql_drop_indexes(const char *ddl, bd_sql_exec_fn exec, void *ctx);

#endif
