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

#endif
