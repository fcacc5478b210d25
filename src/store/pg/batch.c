/* The lookup dispatcher (store/pg_batch.h): one thread, one connection of its own in
 * non-blocking mode, one statement in flight. Submitters queue a lookup under a mutex and
 * wake the thread through an eventfd when it sleeps; the thread polls the eventfd and the
 * connection's socket. Whenever no statement is in flight and lookups wait, it takes those
 * of the first one's kind (up to BATCH_MAX; email first pages, email pages after a
 * position and BIN pages are three statements) and sends one prepared statement, binary
 * results for records and text for cards (their reading is the synchronous path's). When the
 * result is in, each lookup gets its rows (by ordinal), its count and the data version,
 * then its done callback. */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/log.h"
#include "store/card_sql.h"
#include "store/pg/batch_sql.h"
#include "store/pg/pg_impl.h"
#include "store/pg_batch.h"

#define BATCH_MAX 256
#define FIRST_NAME "bdbatch1"
#define NEXT_NAME "bdbatch2"
#define BIN_NAME "bdbatch3"

/* The statements, each a kind of flight: what a lookup needs is one of them. */
typedef enum { FLIGHT_FIRST, FLIGHT_NEXT, FLIGHT_BIN, FLIGHT_KINDS } flight_kind;
static const char *const FLIGHT_NAMES[FLIGHT_KINDS] = {FIRST_NAME, NEXT_NAME, BIN_NAME};
static const int FLIGHT_PARAMS[FLIGHT_KINDS] = {2, 4, 4};
/* where a row's ordinal is: binary for records, text for cards */
static const int ORDINAL_COLUMN[FLIGHT_KINDS] = {18, 18, 16};

static flight_kind kind_of(const bd_pg_lookup *lk)
{
    return lk->kind == BD_PG_LOOKUP_BIN ? FLIGHT_BIN : lk->has_after ? FLIGHT_NEXT : FLIGHT_FIRST;
}

struct bd_pg_rows {
    PGresult *res;
    atomic_int refs;
};

struct bd_pg_batch {
    const char *db;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t idle_cv; /* signalled when nothing is queued or in flight */
    int efd;
    bool sleeping; /* the thread is (about to be) in poll: wake it */
    bool draining, stopping;
    bool refuse; /* the store routes searches: lookups are refused */
    bd_pg_lookup *head, *tail;
    int busy; /* lookups taken by the thread, not yet done */
    atomic_uint_fast64_t lookups, batches, alone;
    atomic_int active; /* searches between enter and leave */
    bool always;       /* a search alone is dispatched too */
    /* the thread's own */
    bd_store *store;
    bool prepared;
    bool warned;
    bd_pg_lookup *flight[BATCH_MAX];
    int nflight;
    flight_kind kind; /* the statement in flight */
    bool retried;
    PGresult *got; /* the result read, before the end of the statement */
    /* the statement's array parameters: the keys (emails or BINs), their limits, then the
     * after-position's dates and ids, or the BINs' range ends and offsets */
    bd_buf keys, lims, third, fourth;
};

static void wake(bd_pg_batch *b)
{
    uint64_t one = 1;
    ssize_t n = write(b->efd, &one, sizeof one);
    (void)n;
}

bool bd_pg_batch_open(const bd_pg_batch *b)
{
    bd_pg_batch *m = (bd_pg_batch *)b;
    pthread_mutex_lock(&m->lock);
    bool open = !m->draining && !m->refuse;
    pthread_mutex_unlock(&m->lock);
    return open;
}

bool bd_pg_batch_submit(bd_pg_batch *b, bd_pg_lookup *lk)
{
    lk->next = NULL;
    lk->rows = NULL;
    lk->first = lk->n = 0;
    lk->has_version = false;
    lk->found = 0;
    lk->result = BD_OK;
    pthread_mutex_lock(&b->lock);
    if (b->draining || b->refuse) {
        pthread_mutex_unlock(&b->lock);
        return false;
    }
    if (b->tail)
        b->tail->next = lk;
    else
        b->head = lk;
    b->tail = lk;
    b->busy++;
    bool sleeping = b->sleeping;
    b->sleeping = false;
    pthread_mutex_unlock(&b->lock);
    if (sleeping)
        wake(b);
    return true;
}

void bd_pg_batch_each(const bd_pg_lookup *lk, bd_record_cb cb, void *ctx)
{
    if (lk->rows && lk->n > 0)
        pg_record_rows(lk->rows->res, lk->first, lk->n, cb, ctx);
}

void bd_pg_batch_each_card(const bd_pg_lookup *lk, bd_card_cb cb, void *ctx)
{
    if (lk->rows && lk->n > 0)
        pg_card_rows(lk->rows->res, lk->first, lk->n, cb, ctx);
}

bool bd_pg_batch_bin_page(const bd_card_query *q, char bin[7])
{
    if (!q->where || !pg_card_bin_page(q) || !q->sort[0].descending)
        return false;
    memcpy(bin, q->where->bin, 7);
    return true;
}

static void rows_release(struct bd_pg_rows *r)
{
    if (r && atomic_fetch_sub(&r->refs, 1) == 1) {
        PQclear(r->res);
        free(r);
    }
}

void bd_pg_batch_release(bd_pg_lookup *lk)
{
    rows_release(lk->rows);
    lk->rows = NULL;
}

void bd_pg_batch_note_version(bd_store *s, uint64_t version)
{
    pg_store *p = pg_of(s);
    if (!p->in_read)
        return;
    p->version = version;
    p->has_version = true;
}

bool bd_pg_batch_enter(bd_pg_batch *b)
{
    if (atomic_fetch_add_explicit(&b->active, 1, memory_order_acq_rel) != 0 || b->always)
        return false;
    atomic_fetch_add_explicit(&b->alone, 1, memory_order_relaxed);
    return true;
}

void bd_pg_batch_leave(bd_pg_batch *b)
{
    atomic_fetch_sub_explicit(&b->active, 1, memory_order_acq_rel);
}

void bd_pg_batch_counts(const bd_pg_batch *b, uint64_t *lookups, uint64_t *batches, uint64_t *alone)
{
    *alone = atomic_load_explicit(&b->alone, memory_order_relaxed);
    *lookups = atomic_load_explicit(&b->lookups, memory_order_relaxed);
    *batches = atomic_load_explicit(&b->batches, memory_order_relaxed);
}

/* ---- the thread ------------------------------------------------------------------------- */

static void finish_lookup(bd_pg_batch *b, bd_pg_lookup *lk)
{
    lk->done(lk); /* the last touch: the lookup may be gone after it */
    pthread_mutex_lock(&b->lock);
    if (--b->busy == 0)
        pthread_cond_broadcast(&b->idle_cv);
    pthread_mutex_unlock(&b->lock);
}

static void fail_flight(bd_pg_batch *b, bd_result r)
{
    for (int i = 0; i < b->nflight; i++) {
        b->flight[i]->result = r;
        finish_lookup(b, b->flight[i]);
    }
    b->nflight = 0;
}

/* The connection, opened or reset, set up and with both statements prepared. */
static bd_result connect_store(bd_pg_batch *b)
{
    char why[512] = "";
    if (!b->store) {
        if (bd_store_open(b->db, BD_STORE_READ, &b->store, why, sizeof why) != BD_OK) {
            if (!b->warned)
                bd_log(BD_LOG_ERROR, "store", "lookup dispatcher: %s", why);
            b->warned = true;
            b->store = NULL;
            return BD_ERR_BUSY;
        }
        b->prepared = false;
    }
    pg_store *p = pg_of(b->store);
    if (PQstatus(p->conn) != CONNECTION_OK) {
        PQsetnonblocking(p->conn, 0); /* the setup's statements are synchronous */
        PQreset(p->conn);
        memset(p->prepared, 0, sizeof p->prepared);
        b->prepared = false;
        if (PQstatus(p->conn) != CONNECTION_OK || pg_session_setup(p) != BD_OK)
            return BD_ERR_BUSY;
    }
    if (p->routed) { /* the fixed statements name the owner key there: searched as before */
        pthread_mutex_lock(&b->lock);
        b->refuse = true;
        pthread_mutex_unlock(&b->lock);
        bd_log(BD_LOG_INFO, "store",
               "lookup dispatcher: searches are routed on this store; "
               "email searches run on the request's thread");
        return BD_ERR_UNSUPPORTED;
    }
    if (!b->prepared) {
        PQsetnonblocking(p->conn, 0);
        const char *sql[FLIGHT_KINDS] = {pg_email_batch_first_sql, pg_email_batch_next_sql,
                                         pg_bin_batch_sql};
        for (int i = 0; i < FLIGHT_KINDS; i++) {
            PGresult *pr = PQprepare(p->conn, FLIGHT_NAMES[i], sql[i], 0, NULL);
            if (PQresultStatus(pr) != PGRES_COMMAND_OK)
                return pg_failed(p, pr);
            PQclear(pr);
        }
        b->prepared = true;
    }
    b->warned = false;
    PQsetnonblocking(p->conn, 1);
    return BD_OK;
}

/* Appends one lookup's elements to the statement's arrays (sep: "," but for the first). */
static bd_result add_to_arrays(bd_pg_batch *b, const bd_pg_lookup *lk, const char *sep)
{
    bool bin = b->kind == FLIGHT_BIN;
    bd_result r = bd_buf_append_str(&b->keys, sep);
    if (r == BD_OK)
        r = pg_array_text(&b->keys, bin ? bd_slice_from(lk->bin) : lk->email);
    if (r == BD_OK)
        r = bd_buf_printf(&b->lims, "%s%d", sep, lk->limit);
    if (r == BD_OK && bin) {
        char end[8];
        bd_card_digits_end(lk->bin, strlen(lk->bin), end);
        r = bd_buf_printf(&b->third, "%s%s", sep, end);
        if (r == BD_OK)
            r = bd_buf_printf(&b->fourth, "%s%lld", sep, (long long)lk->offset);
    } else if (r == BD_OK && b->kind == FLIGHT_NEXT) {
        r = bd_buf_printf(&b->third, "%s%d", sep, (int)lk->after_date);
        if (r == BD_OK)
            r = bd_buf_printf(&b->fourth, "%s%lld", sep, (long long)lk->after_id);
    }
    return r;
}

/* Sends the statement of the lookups in flight. */
static bd_result send_flight(bd_pg_batch *b)
{
    bd_result r = BD_OK;
    bd_buf *arr[4] = {&b->keys, &b->lims, &b->third, &b->fourth};
    for (int a = 0; r == BD_OK && a < 4; a++) {
        bd_buf_reset(arr[a]);
        r = bd_buf_append_char(arr[a], '{');
    }
    for (int i = 0; r == BD_OK && i < b->nflight; i++)
        r = add_to_arrays(b, b->flight[i], i ? "," : "");
    for (int a = 0; r == BD_OK && a < 4; a++)
        r = bd_buf_append(arr[a], "}", 2); /* with its NUL */
    if (r != BD_OK)
        return r;
    r = connect_store(b);
    if (r != BD_OK)
        return r;
    pg_store *p = pg_of(b->store);
    const char *values[4] = {b->keys.data, b->lims.data, b->third.data, b->fourth.data};
    if (!PQsendQueryPrepared(p->conn, FLIGHT_NAMES[b->kind], FLIGHT_PARAMS[b->kind], values, NULL,
                             NULL, b->kind == FLIGHT_BIN ? 0 : 1))
        return pg_failed(p, NULL);
    atomic_fetch_add_explicit(&b->batches, 1, memory_order_relaxed);
    return BD_OK;
}

/* Takes the waiting lookups of one kind (the kind of the first) into flight. */
static void take_flight(bd_pg_batch *b)
{
    pthread_mutex_lock(&b->lock);
    b->nflight = 0;
    if (b->head) {
        b->kind = kind_of(b->head);
        bd_pg_lookup **at = &b->head, *last = NULL;
        while (*at && b->nflight < BATCH_MAX) {
            bd_pg_lookup *lk = *at;
            if (kind_of(lk) == b->kind) {
                *at = lk->next;
                b->flight[b->nflight++] = lk;
            } else {
                last = lk;
                at = &lk->next;
            }
        }
        /* the tail is the last lookup left, if any */
        if (!*at)
            b->tail = last;
        else {
            bd_pg_lookup *t = *at;
            while (t->next)
                t = t->next;
            b->tail = t;
        }
        if (!b->head)
            b->tail = NULL;
    }
    pthread_mutex_unlock(&b->lock);
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

/* Hands the result's rows to the lookups in flight and finishes them. */
static void distribute(bd_pg_batch *b, PGresult *res)
{
    struct bd_pg_rows *rows = malloc(sizeof *rows);
    if (!rows) {
        PQclear(res);
        fail_flight(b, BD_ERR_NOMEM);
        return;
    }
    rows->res = res;
    atomic_init(&rows->refs, b->nflight + 1);
    int nrows = PQntuples(res), at = 0, ord = ORDINAL_COLUMN[b->kind];
    bool cards = b->kind == FLIGHT_BIN;
    for (int i = 0; i < b->nflight; i++) {
        bd_pg_lookup *lk = b->flight[i];
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
        /* a BIN's count and version come with its page, empty or not (as the synchronous
         * statement's single row does); an email's with its records only */
        if (cards || lk->n) {
            note_version(lk, pg_slice(res, first, ord - 2));
            if (cards)
                lk->found = pg_int(res, first, ord - 1);
            else if (!lk->has_after)
                lk->found = pg_binary_int(res, first, ord - 1);
        }
    }
    atomic_fetch_add_explicit(&b->lookups, (uint64_t)b->nflight, memory_order_relaxed);
    int n = b->nflight;
    b->nflight = 0;
    for (int i = 0; i < n; i++)
        finish_lookup(b, b->flight[i]);
    rows_release(rows);
}

/* A statement's outcome: its result, or its failure (a lost connection: the batch is sent
 * once more on a new one, as worth_retrying does for a synchronous statement). True when a
 * statement is in flight again. */
static bool statement_done(bd_pg_batch *b, PGresult *res)
{
    pg_store *p = pg_of(b->store);
    if (res && PQresultStatus(res) == PGRES_TUPLES_OK) {
        distribute(b, res);
        return false;
    }
    bd_result r = pg_failed(p, res);
    if (r == BD_ERR_BUSY && PQstatus(p->conn) == CONNECTION_BAD && !b->retried) {
        b->retried = true;
        r = send_flight(b);
        if (r == BD_OK)
            return true;
    }
    if (PQstatus(p->conn) != CONNECTION_OK)
        r = BD_ERR_BUSY;
    fail_flight(b, r);
    return false;
}

/* Reads what the server sent; true while the statement (or its retry) is in flight. */
static bool read_result(bd_pg_batch *b)
{
    PGconn *c = pg_of(b->store)->conn;
    if (!PQconsumeInput(c)) {
        PQclear(b->got);
        b->got = NULL;
        return statement_done(b, NULL);
    }
    while (!PQisBusy(c)) {
        PGresult *res = PQgetResult(c);
        if (!res) { /* the statement is over */
            PGresult *got = b->got;
            b->got = NULL;
            return statement_done(b, got);
        }
        PQclear(b->got); /* one result is expected; a later one (an error) wins */
        b->got = res;
    }
    return true;
}

static void *dispatch(void *arg)
{
    bd_pg_batch *b = arg;
    bool inflight = false;
    connect_store(b); /* at once, so the first lookup does not wait for it */
    for (;;) {
        if (!inflight) {
            take_flight(b);
            if (b->nflight) {
                b->retried = false;
                bd_result r = send_flight(b);
                if (r == BD_ERR_BUSY && b->store &&
                    PQstatus(pg_of(b->store)->conn) == CONNECTION_BAD) {
                    b->retried = true;
                    r = send_flight(b); /* reset in connect_store */
                }
                if (r != BD_OK)
                    fail_flight(b, r);
                else
                    inflight = true;
                continue;
            }
            pthread_mutex_lock(&b->lock);
            if (b->head) {
                pthread_mutex_unlock(&b->lock);
                continue;
            }
            if (b->stopping) {
                pthread_mutex_unlock(&b->lock);
                break;
            }
            b->sleeping = true;
            pthread_mutex_unlock(&b->lock);
        }
        struct pollfd fds[2] = {{b->efd, POLLIN, 0}, {-1, POLLIN, 0}};
        int nfds = 1;
        PGconn *c = inflight ? pg_of(b->store)->conn : NULL;
        if (c) {
            fds[1].fd = PQsocket(c);
            int fl = PQflush(c);
            fds[1].events = (short)(POLLIN | (fl == 1 ? POLLOUT : 0));
            nfds = fds[1].fd >= 0 ? 2 : 1;
            if (nfds == 1) { /* no socket: the connection is gone */
                inflight = statement_done(b, NULL);
                continue;
            }
        }
        int n = poll(fds, (nfds_t)nfds, inflight ? 1000 : -1);
        if (n < 0 && errno != EINTR)
            break;
        if (fds[0].revents & POLLIN) {
            uint64_t v;
            ssize_t got = read(b->efd, &v, sizeof v);
            (void)got;
        }
        if (!inflight) {
            pthread_mutex_lock(&b->lock);
            b->sleeping = false;
            pthread_mutex_unlock(&b->lock);
            continue;
        }
        if (nfds == 2 && fds[1].revents)
            inflight = read_result(b);
    }
    return NULL;
}

bd_pg_batch *bd_pg_batch_start(const char *db, bool always)
{
    bd_pg_batch *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    b->db = db;
    b->always = always;
    b->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (b->efd < 0) {
        free(b);
        return NULL;
    }
    pthread_mutex_init(&b->lock, NULL);
    pthread_cond_init(&b->idle_cv, NULL);
    atomic_init(&b->lookups, 0);
    atomic_init(&b->batches, 0);
    atomic_init(&b->alone, 0);
    atomic_init(&b->active, 0);
    bd_buf_init(&b->keys, 1u << 20);
    bd_buf_init(&b->lims, 1u << 16);
    bd_buf_init(&b->third, 1u << 16);
    bd_buf_init(&b->fourth, 1u << 16);
    if (pthread_create(&b->thread, NULL, dispatch, b) != 0) {
        close(b->efd);
        bd_buf_free(&b->keys);
        bd_buf_free(&b->lims);
        bd_buf_free(&b->third);
        bd_buf_free(&b->fourth);
        pthread_mutex_destroy(&b->lock);
        pthread_cond_destroy(&b->idle_cv);
        free(b);
        return NULL;
    }
    return b;
}

void bd_pg_batch_drain(bd_pg_batch *b)
{
    if (!b)
        return;
    pthread_mutex_lock(&b->lock);
    b->draining = true;
    while (b->busy > 0)
        pthread_cond_wait(&b->idle_cv, &b->lock);
    pthread_mutex_unlock(&b->lock);
}

void bd_pg_batch_stop(bd_pg_batch *b)
{
    if (!b)
        return;
    bd_pg_batch_drain(b);
    pthread_mutex_lock(&b->lock);
    b->stopping = true;
    pthread_mutex_unlock(&b->lock);
    wake(b);
    pthread_join(b->thread, NULL);
    PQclear(b->got);
    if (b->store) {
        PQsetnonblocking(pg_of(b->store)->conn, 0);
        bd_store_close(b->store);
    }
    close(b->efd);
    bd_buf_free(&b->keys);
    bd_buf_free(&b->lims);
    bd_buf_free(&b->third);
    bd_buf_free(&b->fourth);
    pthread_mutex_destroy(&b->lock);
    pthread_cond_destroy(&b->idle_cv);
    free(b);
}
