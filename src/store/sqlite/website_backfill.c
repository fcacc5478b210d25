/* The SQLite store's website-domain backfill (store/website_backfill.h). */
#include <stdlib.h>
#include <string.h>

#include "store/sqlite/sqlite_impl.h"
#include "store/sqlite/statements.h"
#include "store/website_backfill.h"

static const char SITES_AFTER[] =
    "SELECT id, other_attributes FROM records WHERE id > ?1 AND website_domain IS NULL"
    " AND other_attributes IS NOT NULL ORDER BY id LIMIT ?2";
static const char SET_WEBSITE[] =
    "UPDATE records SET website_domain = ?1 WHERE id = ?2 AND website_domain IS NULL";

typedef struct {
    int64_t id;
    size_t len;
    char host[BD_NORM_MAX + 1];
} found_host;

bd_result sq_website_domains_note(bd_store *base)
{
    sqlite_store *s = S(base);
    char v[8];
    bd_result r = sq_meta_get(&s->base, BD_WEBSITE_BACKFILL_NOTE, v, sizeof v);
    if (r == BD_ERR_NOT_FOUND || (r == BD_OK && strcmp(v, "1") != 0))
        return BD_OK;
    if (r != BD_OK)
        return r;
    found_host *found = malloc(BD_WEBSITE_BACKFILL_BATCH * sizeof *found);
    if (!found)
        return BD_ERR_NOMEM;
    int64_t after = 0;
    for (r = BD_OK; r == BD_OK;) {
        sqlite3_stmt *st = sq_dynamic(s, SITES_AFTER);
        if (!st) {
            r = BD_ERR_STORE;
            break;
        }
        sqlite3_bind_int64(st, 1, after);
        sqlite3_bind_int(st, 2, BD_WEBSITE_BACKFILL_BATCH);
        int rc, rows = 0, n = 0;
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
            rows++;
            after = sqlite3_column_int64(st, 0);
            found_host *f = &found[n];
            if (bd_website_of_attributes(sq_col_slice(st, 1), f->host, &f->len)) {
                f->id = after;
                n++;
            }
        }
        sq_done(st);
        if (rc != SQLITE_DONE)
            r = sq_map_rc(rc);
        for (int i = 0; r == BD_OK && i < n; i++) {
            sqlite3_stmt *up = sq_dynamic(s, SET_WEBSITE);
            if (!up) {
                r = BD_ERR_STORE;
                break;
            }
            sq_bind_slice(up, 1, (bd_slice){found[i].host, found[i].len});
            sqlite3_bind_int64(up, 2, found[i].id);
            r = sq_step_done(s, up);
        }
        if (rows < BD_WEBSITE_BACKFILL_BATCH)
            break;
    }
    free(found);
    return r == BD_OK ? sq_meta_set(&s->base, BD_WEBSITE_BACKFILL_NOTE, "0") : r;
}
