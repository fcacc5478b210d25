/* libFuzzer target: arbitrary text as a string of SQL statements split for a Citus
 * coordinator (store/pg/sql_split.h). Checks that the split always moves forward, ends at
 * the text's end, and that each statement lies inside the text and ends where a ';' or the
 * end is. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "store/pg/sql_split.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *sql = malloc(size + 1);
    if (!sql)
        return 0;
    memcpy(sql, data, size);
    sql[size] = '\0';
    const char *end = sql + strlen(sql);
    for (const char *p = sql; *p;) {
        const char *next;
        size_t n = pg_sql_first_statement(p, &next);
        if (next <= p || next > end || p + n > end)
            abort();
        if (p[n] != ';' && p + n != end)
            abort();
        if (next != (p[n] == ';' ? p + n + 1 : end))
            abort();
        p = next;
    }
    free(sql);
    return 0;
}
