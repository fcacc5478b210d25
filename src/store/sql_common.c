/* SQL that every backend speaks alike (sql_common.h). */
#include "store/sql_common.h"

#include <stdio.h>
#include <string.h>

bd_result bd_sql_drop_indexes(const char *ddl, bd_sql_exec_fn exec, void *ctx)
{
    static const char create[] = "CREATE INDEX ";
    bd_result r = BD_OK;
    for (const char *c = ddl; r == BD_OK && (c = strstr(c, create)) != NULL;) {
        c += sizeof create - 1;
        size_t n = strcspn(c, " ");
        char sql[128];
        snprintf(sql, sizeof sql, "DROP INDEX IF EXISTS %.*s", (int)n, c);
        r = exec(ctx, sql);
    }
    return r;
}
