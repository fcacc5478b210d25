/* The PostgreSQL store's website-domain backfill (store/website_backfill.h): a record given
 * its website_domain also gets bit 9 (bd_field order) of its record_domains row's present,
 * which the =yes and =no filters of a routed domain search read (pg_impl.h). */
#include <libpq-fe.h>
#include <string.h>

#include "store/pg/pg_impl.h"
#include "store/website_backfill.h"

static const char SITES_AFTER[] =
    "SELECT id, other_attributes FROM records WHERE id > $1::bigint"
    " AND website_domain IS NULL AND other_attributes IS NOT NULL ORDER BY id LIMIT 1000";
/* The records row, then its lookup row (there when it has an email domain). */
static const char SET_WEBSITE[] =
    "WITH u AS (UPDATE records SET website_domain = $1 WHERE id = $2::bigint"
    " AND website_domain IS NULL RETURNING email_domain, breach_date, id)"
    " UPDATE record_domains d SET present = (d.present | 512)::smallint FROM u"
    " WHERE d.domain = u.email_domain AND d.breach_date = u.breach_date AND d.id = u.id";

_Static_assert(BD_WEBSITE_BACKFILL_BATCH == 1000, "SITES_AFTER's LIMIT");

bd_result pg_website_domains_note(bd_store *base)
{
    pg_store *p = pg_of(base);
    char v[8];
    bd_result r = bd_store_meta_get(&p->base, BD_WEBSITE_BACKFILL_NOTE, v, sizeof v);
    if (r == BD_ERR_NOT_FOUND || (r == BD_OK && strcmp(v, "1") != 0))
        return BD_OK;
    if (r != BD_OK)
        return r;
    int64_t after = 0;
    for (;;) {
        pg_params pp = {0};
        pg_param_int(&pp, after);
        PGresult *res;
        r = pg_run_sql(p, SITES_AFTER, &pp, false, &res);
        if (r != BD_OK)
            return r;
        int rows = PQntuples(res);
        for (int i = 0; r == BD_OK && i < rows; i++) {
            after = pg_int(res, i, 0);
            char host[BD_NORM_MAX + 1];
            size_t len;
            if (!bd_website_of_attributes(pg_slice(res, i, 1), host, &len))
                continue;
            pg_params up = {0};
            pg_param_text(&up, (bd_slice){host, len});
            pg_param_int(&up, after);
            PGresult *done;
            r = pg_run_sql(p, SET_WEBSITE, &up, true, &done);
            if (r == BD_OK)
                PQclear(done);
        }
        PQclear(res);
        if (r != BD_OK)
            return r;
        if (rows < BD_WEBSITE_BACKFILL_BATCH)
            break;
    }
    return bd_store_meta_set(&p->base, BD_WEBSITE_BACKFILL_NOTE, "0");
}
