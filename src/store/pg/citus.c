/* The store's layout over a Citus cluster (docs/SCALING.md, "The layout"): which tables are
 * reference tables, copied to every node, and which are distributed, by which column. The
 * tables not named here stay local to the coordinator. bd_store_distribute applies it on a
 * coordinator; `breachctl init` does so for a new store, `breachctl citus distribute` for
 * one made before the cluster was. */
#include <libpq-fe.h>
#include <stdio.h>
#include <string.h>

#include "core/log.h"
#include "store/pg/pg_impl.h"

/* In the order they are laid out: reference tables first (a distributed table's foreign keys
 * may only point at one), then each group of co-located tables from its first. The shard
 * count is the cluster's citus.shard_count (32 unless the operator sets it). api_keys stays
 * on the coordinator: only coordinator-local tables (watches, alerts) join it, and Citus
 * cannot lock a local table's rows (the alert lease's FOR UPDATE) in a join with a reference
 * table. */
static const struct {
    const char *table;
    const char *column;       /* NULL: a reference table */
    const char *colocate_with; /* NULL: Citus's default group for the column's type */
} LAYOUT[] = {
    {"meta", NULL, NULL},
    {"breaches", NULL, NULL},
    {"domain_counts", NULL, NULL},
    {"card_counts", NULL, NULL},
    {"tenants", NULL, NULL},
    {"tenant_domains", NULL, NULL},
    {"records", "ok", NULL},
    {"record_domains", "domain", NULL},
    {"cards", "card_id", NULL},
    {"card_bins", "bin", "cards"},
    {"card_words", "word", "cards"},
    {"card_owner_words", "word", "cards"},
    {"password_ranges", "bucket", NULL},
};

static const char IS_COORDINATOR[] =
    "SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus')";
/* What is laid out already: 'n' (none) is a reference table, 'h' (hash) distributed. */
static const char LAID_OUT[] =
    "SELECT partmethod = 'h' FROM pg_dist_partition WHERE logicalrelid = $1::regclass";
static const char REFERENCE[] = "SELECT create_reference_table($1::regclass)";
static const char DISTRIBUTED[] = "SELECT create_distributed_table($1::regclass, $2)";
static const char COLOCATED[] =
    "SELECT create_distributed_table($1::regclass, $2, colocate_with := $3)";

static bd_result one_bool(pg_store *p, const char *sql, const char *arg, int *out)
{
    pg_params pp = {0};
    if (arg)
        pg_param_str(&pp, arg);
    PGresult *res;
    bd_result r = pg_run_sql(p, sql, &pp, false, &res);
    if (r != BD_OK)
        return r;
    *out = PQntuples(res) == 0 ? -1 : PQgetvalue(res, 0, 0)[0] == 't';
    PQclear(res);
    return BD_OK;
}

bd_result pg_distribute(bd_store *s, bool *clustered, bd_layout_cb cb, void *ctx)
{
    pg_store *p = pg_of(s);
    int yes;
    bd_result r = one_bool(p, IS_COORDINATOR, NULL, &yes);
    *clustered = r == BD_OK && yes == 1;
    if (r != BD_OK || !*clustered)
        return r;
    for (size_t i = 0; i < sizeof LAYOUT / sizeof LAYOUT[0] && r == BD_OK; i++) {
        int state; /* -1: local so far, 0: reference, 1: distributed */
        r = one_bool(p, LAID_OUT, LAYOUT[i].table, &state);
        if (r != BD_OK)
            break;
        bool before = state >= 0;
        if (!before) {
            pg_params pp = {0};
            pg_param_str(&pp, LAYOUT[i].table);
            const char *sql = REFERENCE;
            if (LAYOUT[i].column) {
                pg_param_str(&pp, LAYOUT[i].column);
                sql = DISTRIBUTED;
                if (LAYOUT[i].colocate_with) {
                    pg_param_str(&pp, LAYOUT[i].colocate_with);
                    sql = COLOCATED;
                }
            }
            /* Each in its own transaction: Citus moves a table's rows into its shards as
             * it distributes it, and a failure leaves the tables before laid out. */
            r = pg_run_sql(p, sql, &pp, false, NULL);
            if (r != BD_OK) {
                bd_log(BD_LOG_ERROR, "store", "citus: laying out table %s failed",
                       LAYOUT[i].table);
                break;
            }
        }
        bd_layout_row row = {LAYOUT[i].table, LAYOUT[i].column, LAYOUT[i].colocate_with,
                             before};
        if (cb && cb(ctx, &row) != 0)
            break;
    }
    return r;
}
