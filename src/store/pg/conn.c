/* The PostgreSQL backend's connection: opening (the URI, libpq's failure scrubbed of any
 * password, the session, migrations) and closing, and bulk-load index handling. Statements
 * run through exec.c, transactions are txn.c's, read views and the data version views.c's,
 * the meta table meta.c's, the operations table ops.c's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "store/pg/cards_sql.h"
#include "store/pg/direct.h"
#include "store/pg/pg_impl.h"
#include "store/pg/records_email.h"
#include "store/pg/uri.h"
#include "store/uri.h"

void pg_close(bd_store *s)
{
    pg_store *p = pg_of(s);
    if (!p)
        return;
    for (int i = 0; i < PG_DYN_CACHE; i++)
        free(p->dyn[i].sql);
    pg_direct_free(p->direct);
    PQfinish(p->conn);
    bd_buf_free(&p->sql);
    bd_buf_free(&p->where);
    bd_buf_free(&p->words[0]);
    bd_buf_free(&p->words[1]);
    pg_card_sql_free(&p->card);
    bd_buf_free(&p->copy.out);
    bd_buf_free(&p->copy.word_rows);
    bd_buf_free(&p->copy.owner_word_rows);
    bd_buf_free(&p->copy.password_rows);
    bd_buf_free(&p->copy.domain_rows);
    pg_load_counts_free(p);
    bd_range_acc_free(&p->ranges);
    bd_buf_free(&p->range_rows);
    free(p->copy.wordv);
    free(p);
}

/* ---- opening --------------------------------------------------------------------------- */

/* Connects: the URI's own settings win over our defaults (a 10 s connect timeout, so a
 * reset against an unreachable host cannot hang a worker for minutes). */
static PGconn *connect_uri(const char *uri)
{
    const char *const keys[] = {"connect_timeout", "fallback_application_name", "dbname", NULL};
    const char *const values[] = {"10", "breachd", uri, NULL};
    return PQconnectdbParams(keys, values, 1);
}

/* "cannot connect to <URI without password>: <libpq's reason, first line>". libpq can quote
 * part of the URI in its reason, so the reason is scrubbed of the password too. */
static void explain_failure(const char *uri, const char *shown, PGconn *conn, char *why,
                            size_t whylen)
{
    const char *msg = conn ? PQerrorMessage(conn) : "out of memory";
    char line[512], clean[512];
    snprintf(line, sizeof line, "%.*s", (int)strcspn(msg, "\n"), msg);
    if (pg_uri_scrub(uri, line, clean, sizeof clean) == BD_ERR_NOMEM)
        snprintf(clean, sizeof clean, "(reason withheld)");
    bd_why(why, whylen, "cannot connect to %s: %s", shown, clean);
}

bd_result pg_connect(const char *uri, int flags, const bd_store_ops *ops, bd_store **out, char *why,
                     size_t whylen)
{
    *out = NULL;
    if (why && whylen)
        why[0] = '\0';
    char shown[512];
    bd_uri_redact(uri, shown, sizeof shown);
    pg_store *p = calloc(1, sizeof *p);
    if (p)
        pg_changes_forget(p);
    if (!p)
        return BD_ERR_NOMEM;
    p->base.ops = ops;
    p->copy_flush = pg_copy_flush;
    p->copy_reset = pg_copy_connection_reset;
    p->read_only = !(flags & BD_STORE_WRITE);
    bd_buf_init(&p->sql, 16384);
    bd_range_acc_init(&p->ranges);
    bd_buf_init(&p->range_rows, SIZE_MAX / 2);
    /* A WHERE clause, or a routed domain page's two array literals (records.c): up to
     * 1,001 owner keys of 37 bytes and ids of up to 20 digits and a comma, 59 KB */
    bd_buf_init(&p->where, 65536);
    bd_buf_init(&p->words[0], 65536);
    bd_buf_init(&p->words[1], 65536);
    pg_card_sql_init(&p->card);
    bd_buf_init(&p->copy.out, 64u << 20);
    bd_buf_init(&p->copy.word_rows, 1u << 30);
    bd_buf_init(&p->copy.owner_word_rows, 1u << 30);
    bd_buf_init(&p->copy.password_rows, 1u << 30);
    bd_buf_init(&p->copy.domain_rows, 1u << 30);
    p->conn = connect_uri(uri);
    bd_result r = BD_ERR_BUSY;
    if (PQstatus(p->conn) != CONNECTION_OK) {
        explain_failure(uri, shown, p->conn, why, whylen);
        goto fail;
    }
    pg_silence_notices(p->conn);
    r = pg_session_detect(p); /* before migrating: migrations differ on Citus */
    if (r == BD_OK)
        r = pg_migrate(p, flags & BD_STORE_CREATE, shown, why, whylen);
    if (r == BD_OK)
        r = pg_session_settings(p);
    if (r == BD_OK && p->citus && p->read_only && p->direct_reads &&
        !(p->direct = pg_direct_new(uri, pg_email_direct_sql)))
        r = BD_ERR_NOMEM;
    if (r != BD_OK)
        goto fail;
    *out = &p->base;
    return BD_OK;
fail:
    if (r != BD_OK && why && whylen && !why[0])
        bd_why(why, whylen, "cannot set up the store at %s", shown);
    pg_close(&p->base);
    return r;
}
