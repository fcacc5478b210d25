/* PostgreSQL reads: a read is no transaction (one statement, one snapshot); what it
 * brackets is the data version a search noted or reads; and the liveness check. */
#include <stdlib.h>

#include "store/pg/pg_impl.h"

static const pg_stmt PING = {PG_Q_PING, "SELECT 1"};

/* A read here is no transaction: every search is one statement, which is one snapshot for
 * its page, its count and the data version (store.h), and a BEGIN and a COMMIT would each
 * cost a round trip. read_begin and read_end only bracket what the data version of the
 * read is. */
bd_result pg_read_begin(bd_store *s)
{
    pg_store *p = pg_of(s);
    if (p->in_tx || p->in_read)
        return BD_ERR_INVALID;
    p->has_version = false;
    p->in_read = true;
    return BD_OK;
}

void pg_read_end(bd_store *s)
{
    pg_store *p = pg_of(s);
    p->in_read = false;
    p->has_version = false;
}

void pg_note_version(pg_store *p, bd_slice value)
{
    if (!p->in_read || !value.ptr)
        return;
    uint64_t v = 0;
    for (size_t i = 0; i < value.len && value.ptr[i] >= '0' && value.ptr[i] <= '9'; i++)
        v = v * 10 + (uint64_t)(value.ptr[i] - '0');
    p->version = v;
    p->has_version = true;
}

/* Read views are per request here: PostgreSQL starts a snapshot cheaply and holds back no
 * other process's writes, so sharing them across requests buys nothing. */
void pg_share_reads(bd_store *s, int64_t window_us)
{
    (void)s;
    (void)window_us;
}

void pg_release_idle(bd_store *s)
{
    (void)s;
}

/* The meta counter that every committed write transaction moved (pg_commit): within a read,
 * the one the read's search noted, else read now. 0 when it cannot be read. */
uint64_t pg_data_version(bd_store *s)
{
    pg_store *p = pg_of(s);
    if (p->in_read && p->has_version)
        return p->version;
    pg_params pp = {0};
    pg_param_str(&pp, "data_version");
    PGresult *res;
    if (pg_run(p, &pg_meta_get_stmt, &pp, &res) != BD_OK)
        return 0;
    uint64_t v = PQntuples(res) == 1 ? strtoull(PQgetvalue(res, 0, 0), NULL, 10) : 0;
    PQclear(res);
    if (p->in_read) {
        p->version = v;
        p->has_version = true;
    }
    return v;
}

bd_result pg_ping(bd_store *s)
{
    return pg_run(pg_of(s), &PING, NULL, NULL);
}
