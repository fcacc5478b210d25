/* What every backend's record search SQL has in common (backend-neutral, used by
 * sqlite/records.c and pg/records.c): the records table's lookup-key columns and a search's
 * filters on them. Each backend writes its own parameters (SQLite "?", PostgreSQL "$n"). */
#ifndef BD_STORE_RECORD_SQL_H
#define BD_STORE_RECORD_SQL_H

#include "core/buf.h"
#include "store/store.h"

/* The records table's column holding field f's lookup key (every backend's schema names
 * them alike). */
const char *bd_record_key_col(bd_field f);

/* Writes an EQUALS filter's parameter for field f into b (and collects its value). */
typedef bd_result (*bd_record_param_fn)(void *ctx, bd_buf *b, bd_field f);

/* Appends q's filters, in bd_field order: " AND r.<col> IS NOT NULL" (PRESENT),
 * " AND r.<col> IS NULL" (ABSENT) or " AND r.<col> = " and the parameter param writes
 * (EQUALS). */
bd_result bd_record_filters_sql(bd_buf *b, const bd_record_query *q, bd_record_param_fn param,
                                void *ctx);

/* Appends a tenant scope's condition on records as `alias` (bd_record_query.scope_tenant):
 * " AND EXISTS (...)": the record's email_domain is one of the tenant's domains, or ends
 * with "." and one. tenant is the parameter as the backend writes it ("?", "$3::bigint");
 * has_right: the backend has right(s, n) (PostgreSQL), else substr(s, -n) (SQLite). */
bd_result bd_record_scope_sql(bd_buf *b, const char *alias, const char *tenant, bool has_right);

#endif
