/* One batched statement of the lookup dispatcher on one lane (batch_impl.h): the prepared
 * statements, their array parameters built from the lookups in flight, and the result's
 * rows handed to each lookup by its ordinal, with its count and the data version. */
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "store/card_sql.h"
#include "store/pg/batch_impl.h"
#include "store/pg/batch_sql.h"
#include "store/pg/pg_impl.h"

#define FIRST_NAME "bdbatch1"
#define NEXT_NAME "bdbatch2"
#define BIN_NAME "bdbatch3"
#define OWNER_NAME "bdbatch4"
#define VERSION_NAME "bdbatch5"

static const char *const FLIGHT_NAMES[FLIGHT_KINDS] = {FIRST_NAME, NEXT_NAME, BIN_NAME, OWNER_NAME,
                                                       VERSION_NAME};
static const int FLIGHT_PARAMS[FLIGHT_KINDS] = {2, 4, 4, 5, 0};

void pg_batch_rows_release(struct bd_pg_rows *r)
{
    if (r && atomic_fetch_sub(&r->refs, 1) == 1) {
        PQclear(r->res);
        free(r);
    }
}

bd_result pg_batch_connect(bd_pg_batch *b, lane *l)
{
    char why[512] = "";
    if (!l->store) {
        if (bd_store_open(b->db, BD_STORE_READ, &l->store, why, sizeof why) != BD_OK) {
            if (!b->warned)
                bd_log(BD_LOG_ERROR, "store", "lookup dispatcher: %s", why);
            b->warned = true;
            l->store = NULL;
            return BD_ERR_BUSY;
        }
        l->prepared = false;
    }
    pg_store *p = pg_of(l->store);
    if (PQstatus(p->conn) != CONNECTION_OK) {
        PQsetnonblocking(p->conn, 0); /* the setup's statements are synchronous */
        PQreset(p->conn);
        memset(p->prepared, 0, sizeof p->prepared);
        l->prepared = false;
        if (PQstatus(p->conn) != CONNECTION_OK || pg_session_setup(p) != BD_OK)
            return BD_ERR_BUSY;
    }
    if (p->routed) { /* the fixed statements name the owner key there: searched as before */
        pthread_mutex_lock(&b->lock);
        bool said = b->refuse || b->direct;
        if (p->direct)
            b->direct = true; /* but email pages, read on their workers (batch_direct.c) */
        else
            b->refuse = true;
        pthread_mutex_unlock(&b->lock);
        if (!said)
            bd_log(BD_LOG_INFO, "store",
                   p->direct ? "lookup dispatcher: searches are routed on this store; email "
                               "pages are read on their workers, card searches run on the "
                               "request's thread"
                             : "lookup dispatcher: searches are routed on this store; "
                               "email and card searches run on the request's thread");
        return BD_ERR_UNSUPPORTED;
    }
    if (!l->prepared) {
        PQsetnonblocking(p->conn, 0);
        const char *sql[FLIGHT_KINDS] = {pg_email_batch_first_sql, pg_email_batch_next_sql,
                                         pg_bin_batch_sql, pg_owner_batch_sql,
                                         PG_CHANGE_VERSION_SQL};
        for (int i = 0; i < FLIGHT_KINDS; i++) {
            PGresult *pr = PQprepare(p->conn, FLIGHT_NAMES[i], sql[i], 0, NULL);
            if (PQresultStatus(pr) != PGRES_COMMAND_OK)
                return pg_failed(p, pr);
            PQclear(pr);
        }
        l->prepared = true;
    }
    b->warned = false;
    PQsetnonblocking(p->conn, 1);
    return BD_OK;
}

bd_result pg_batch_add_text(bd_buf *a, const char *sep, bd_slice v)
{
    bd_result r = bd_buf_append_str(a, sep);
    return r == BD_OK ? pg_array_text(a, v) : r;
}

/* Appends one lookup's elements to the statement's arrays (sep: "," but for the first). */
static bd_result add_to_arrays(lane *l, const bd_pg_lookup *lk, const char *sep)
{
    if (l->kind == FLIGHT_VERSION)
        return BD_OK; /* a statement without parameters */
    bool bin = l->kind == FLIGHT_BIN;
    bd_result r = pg_batch_add_text(&l->arr[0], sep, bin ? bd_slice_from(lk->bin) : lk->email);
    if (r == BD_OK)
        r = bd_buf_printf(&l->arr[1], "%s%d", sep, lk->limit);
    if (r == BD_OK && bin) {
        char end[8];
        bd_card_digits_end(lk->bin, strlen(lk->bin), end);
        r = bd_buf_printf(&l->arr[2], "%s%s", sep, end);
        if (r == BD_OK)
            r = bd_buf_printf(&l->arr[3], "%s%lld", sep, (long long)lk->offset);
    } else if (r == BD_OK && l->kind == FLIGHT_OWNER) {
        /* the open ends as pg_owner_batch_sql takes them */
        r = pg_batch_add_text(&l->arr[2], sep, lk->low.ptr ? lk->low : (bd_slice){"", 0});
        if (r == BD_OK)
            r = pg_batch_add_text(&l->arr[3], sep, lk->high.ptr ? lk->high : (bd_slice){"~", 1});
        if (r == BD_OK)
            r = bd_buf_printf(&l->arr[4], "%s%lld", sep, (long long)lk->offset);
    } else if (r == BD_OK && l->kind == FLIGHT_NEXT) {
        r = bd_buf_printf(&l->arr[2], "%s%d", sep, (int)lk->after_date);
        if (r == BD_OK)
            r = bd_buf_printf(&l->arr[3], "%s%lld", sep, (long long)lk->after_id);
    }
    return r;
}

bd_result pg_batch_send(bd_pg_batch *b, lane *l)
{
    bd_result r = BD_OK;
    for (int a = 0; r == BD_OK && a < ARRAYS; a++) {
        bd_buf_reset(&l->arr[a]);
        r = bd_buf_append_char(&l->arr[a], '{');
    }
    for (int i = 0; r == BD_OK && i < l->nflight; i++)
        r = add_to_arrays(l, l->flight[i], i ? "," : "");
    for (int a = 0; r == BD_OK && a < ARRAYS; a++)
        r = bd_buf_append(&l->arr[a], "}", 2); /* with its NUL */
    if (r != BD_OK)
        return r;
    r = pg_batch_connect(b, l);
    if (r != BD_OK)
        return r;
    pg_store *p = pg_of(l->store);
    const char *values[ARRAYS];
    for (int a = 0; a < ARRAYS; a++)
        values[a] = l->arr[a].data;
    if (!PQsendQueryPrepared(p->conn, FLIGHT_NAMES[l->kind], FLIGHT_PARAMS[l->kind], values, NULL,
                             NULL, text_flight(l->kind) ? 0 : 1))
        return pg_failed(p, NULL);
    atomic_fetch_add_explicit(&b->batches, 1, memory_order_relaxed);
    return BD_OK;
}

/* The data version a lookup's rows were read at, from its text column. */
static void note_version(bd_pg_lookup *lk, bd_slice v)
{
    uint64_t ver = 0;
    for (size_t k = 0; v.ptr && k < v.len && v.ptr[k] >= '0' && v.ptr[k] <= '9'; k++)
        ver = ver * 10 + (uint64_t)(v.ptr[k] - '0');
    lk->has_version = v.ptr != NULL;
    lk->version = ver;
}

/* Finishes the lane's lookups in flight, each with its result set already. */
static void finish_flight(bd_pg_batch *b, lane *l)
{
    atomic_fetch_add_explicit(&b->lookups, (uint64_t)l->nflight, memory_order_relaxed);
    int n = l->nflight;
    l->nflight = 0;
    for (int i = 0; i < n; i++)
        pg_batch_finish_lookup(b, l->flight[i]);
}

/* The data version read once for every version lookup in flight. */
static void distribute_version(bd_pg_batch *b, lane *l, PGresult *res)
{
    bd_slice v = PQntuples(res) == 1 ? pg_slice(res, 0, 0) : (bd_slice){NULL, 0};
    for (int i = 0; i < l->nflight; i++) {
        l->flight[i]->result = v.ptr ? BD_OK : BD_ERR_STORE;
        note_version(l->flight[i], v);
    }
    PQclear(res);
    finish_flight(b, l);
}

void pg_batch_hand_rows(bd_pg_batch *b, bd_pg_lookup **lks, int n, bool cards, PGresult *res)
{
    struct bd_pg_rows *rows = malloc(sizeof *rows);
    if (!rows) {
        PQclear(res);
        for (int i = 0; i < n; i++) {
            lks[i]->result = BD_ERR_NOMEM;
            pg_batch_finish_lookup(b, lks[i]);
        }
        return;
    }
    rows->res = res;
    atomic_init(&rows->refs, n + 1);
    int nrows = PQntuples(res), at = 0, ord = cards ? 16 : 18;
    for (int i = 0; i < n; i++) {
        bd_pg_lookup *lk = lks[i];
        int first = at;
        while (at < nrows && (cards ? pg_int(res, at, ord) : pg_binary_int(res, at, ord)) == i + 1)
            at++;
        lk->result = BD_OK;
        lk->rows = rows;
        lk->first = first;
        lk->n = 0;
        if (at == first)
            continue;
        if (!PQgetisnull(res, first, 0))
            lk->n = at - first;
        /* a card page's count and version come with it, empty or not (as the synchronous
         * statement's single row does); an email's with its records only */
        if (cards || lk->n) {
            note_version(lk, pg_slice(res, first, ord - 2));
            if (cards)
                lk->found = pg_int(res, first, ord - 1);
            else if (!lk->has_after)
                lk->found = pg_binary_int(res, first, ord - 1);
        }
    }
    atomic_fetch_add_explicit(&b->lookups, (uint64_t)n, memory_order_relaxed);
    for (int i = 0; i < n; i++)
        pg_batch_finish_lookup(b, lks[i]);
    pg_batch_rows_release(rows);
}

/* Hands the result's rows to the lane's lookups in flight and finishes them. */
static void distribute(bd_pg_batch *b, lane *l, PGresult *res)
{
    if (l->kind == FLIGHT_VERSION) {
        distribute_version(b, l, res);
        return;
    }
    int n = l->nflight;
    l->nflight = 0;
    pg_batch_hand_rows(b, l->flight, n, cards_flight(l->kind), res);
}

/* A statement's outcome: its result, or its failure (a lost connection: the batch is sent
 * once more on a new one, as worth_retrying does for a synchronous statement). True when a
 * statement is in flight again. */
static bool statement_done(bd_pg_batch *b, lane *l, PGresult *res)
{
    pg_store *p = pg_of(l->store);
    if (res && PQresultStatus(res) == PGRES_TUPLES_OK) {
        distribute(b, l, res);
        return false;
    }
    bd_result r = pg_failed(p, res);
    if (r == BD_ERR_BUSY && PQstatus(p->conn) == CONNECTION_BAD && !l->retried) {
        l->retried = true;
        r = pg_batch_send(b, l);
        if (r == BD_OK)
            return true;
    }
    if (PQstatus(p->conn) != CONNECTION_OK)
        r = BD_ERR_BUSY;
    pg_batch_fail_flight(b, l, r);
    return false;
}

bool pg_batch_read(bd_pg_batch *b, lane *l)
{
    PGconn *c = pg_of(l->store)->conn;
    if (!PQconsumeInput(c)) {
        PQclear(l->got);
        l->got = NULL;
        return statement_done(b, l, NULL);
    }
    while (!PQisBusy(c)) {
        PGresult *res = PQgetResult(c);
        if (!res) { /* the statement is over */
            PGresult *got = l->got;
            l->got = NULL;
            return statement_done(b, l, got);
        }
        PQclear(l->got); /* one result is expected; a later one (an error) wins */
        l->got = res;
    }
    return true;
}

bool pg_batch_lost(bd_pg_batch *b, lane *l)
{
    return statement_done(b, l, NULL);
}
