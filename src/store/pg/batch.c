/* The lookup dispatcher (store/pg_batch.h): one thread and a lane per core (at most
 * LANES_MAX), each lane a connection of its own in non-blocking mode with one statement in
 * flight at most. Submitters queue a lookup under a mutex and wake the thread through an
 * eventfd when it sleeps with a lane free; the thread polls the eventfd and the busy lanes'
 * sockets. Whenever a lane is free and lookups it takes wait (lane_takes), it takes those of
 * the first one's kind (up to BATCH_MAX; email first pages, email pages after a position,
 * BIN pages and owner words' pages are four statements) and sends one prepared statement,
 * binary results for records and text for cards (their reading is the synchronous path's).
 * When the result is in, each lookup gets its rows (by ordinal), its count and the data
 * version, then its done callback. */
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
#define OWNER_NAME "bdbatch4"

/* The statements, each a kind of flight: what a lookup needs is one of them. */
typedef enum { FLIGHT_FIRST, FLIGHT_NEXT, FLIGHT_BIN, FLIGHT_OWNER, FLIGHT_KINDS } flight_kind;
static const char *const FLIGHT_NAMES[FLIGHT_KINDS] = {FIRST_NAME, NEXT_NAME, BIN_NAME, OWNER_NAME};
static const int FLIGHT_PARAMS[FLIGHT_KINDS] = {2, 4, 4, 5};
/* where a row's ordinal is: binary for records, text for cards */
static const int ORDINAL_COLUMN[FLIGHT_KINDS] = {18, 18, 16, 16};
#define ARRAYS 5 /* a statement's array parameters at most */
/* Connections, each with a statement in flight at most: one per core (PostgreSQL runs a
 * statement on one core, and the heavier batched pages, an owner word's, kept one backend
 * busy while the other core idled), at most LANES_MAX. */
#define LANES_MAX 4

static flight_kind kind_of(const bd_pg_lookup *lk)
{
    switch (lk->kind) {
    case BD_PG_LOOKUP_BIN:
        return FLIGHT_BIN;
    case BD_PG_LOOKUP_OWNER:
        return FLIGHT_OWNER;
    default:
        return lk->has_after ? FLIGHT_NEXT : FLIGHT_FIRST;
    }
}

static bool cards_flight(flight_kind k)
{
    return k == FLIGHT_BIN || k == FLIGHT_OWNER;
}

struct bd_pg_rows {
    PGresult *res;
    atomic_int refs;
};

/* One connection of the dispatcher's and the statement in flight on it. */
typedef struct {
    bd_store *store;
    bool prepared;
    bool inflight;
    bd_pg_lookup *flight[BATCH_MAX];
    int nflight;
    flight_kind kind; /* the statement in flight */
    bool retried;
    PGresult *got; /* the result read, before the end of the statement */
    /* the statement's array parameters: the keys (emails, BINs or owner words), their
     * limits, then the after-position's dates and ids, the BINs' range ends and offsets, or
     * the owner words' expiry ranges' ends and offsets */
    bd_buf arr[ARRAYS];
} lane;

struct bd_pg_batch {
    const char *db;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t idle_cv; /* signalled when nothing is queued or in flight */
    int efd;
    bool sleeping; /* the thread is (about to be) in poll with a lane free: wake it */
    bool draining, stopping;
    bool refuse; /* the store routes searches: lookups are refused */
    bd_pg_lookup *head, *tail;
    int busy; /* lookups taken by the thread, not yet done */
    atomic_uint_fast64_t lookups, batches, alone;
    atomic_int active; /* searches between enter and leave */
    bool always;       /* a search alone is dispatched too */
    /* the thread's own */
    bool warned;
    int nlanes;
    lane lanes[LANES_MAX];
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

bool bd_pg_batch_owner_page(const bd_card_query *q, bd_slice *word, bd_slice *low, bd_slice *high)
{
    return pg_card_owner_batch_page(q, word, low, high);
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

static void fail_flight(bd_pg_batch *b, lane *l, bd_result r)
{
    for (int i = 0; i < l->nflight; i++) {
        l->flight[i]->result = r;
        finish_lookup(b, l->flight[i]);
    }
    l->nflight = 0;
}

/* The lane's connection, opened or reset, set up and with the statements prepared. */
static bd_result connect_store(bd_pg_batch *b, lane *l)
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
        bool said = b->refuse;
        b->refuse = true;
        pthread_mutex_unlock(&b->lock);
        if (!said)
            bd_log(BD_LOG_INFO, "store",
                   "lookup dispatcher: searches are routed on this store; "
                   "email and card searches run on the request's thread");
        return BD_ERR_UNSUPPORTED;
    }
    if (!l->prepared) {
        PQsetnonblocking(p->conn, 0);
        const char *sql[FLIGHT_KINDS] = {pg_email_batch_first_sql, pg_email_batch_next_sql,
                                         pg_bin_batch_sql, pg_owner_batch_sql};
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

/* Appends a text element to an array literal, after sep. */
static bd_result add_text(bd_buf *a, const char *sep, bd_slice v)
{
    bd_result r = bd_buf_append_str(a, sep);
    return r == BD_OK ? pg_array_text(a, v) : r;
}

/* Appends one lookup's elements to the statement's arrays (sep: "," but for the first). */
static bd_result add_to_arrays(lane *l, const bd_pg_lookup *lk, const char *sep)
{
    bool bin = l->kind == FLIGHT_BIN;
    bd_result r = add_text(&l->arr[0], sep, bin ? bd_slice_from(lk->bin) : lk->email);
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
        r = add_text(&l->arr[2], sep, lk->low.ptr ? lk->low : (bd_slice){"", 0});
        if (r == BD_OK)
            r = add_text(&l->arr[3], sep, lk->high.ptr ? lk->high : (bd_slice){"~", 1});
        if (r == BD_OK)
            r = bd_buf_printf(&l->arr[4], "%s%lld", sep, (long long)lk->offset);
    } else if (r == BD_OK && l->kind == FLIGHT_NEXT) {
        r = bd_buf_printf(&l->arr[2], "%s%d", sep, (int)lk->after_date);
        if (r == BD_OK)
            r = bd_buf_printf(&l->arr[3], "%s%lld", sep, (long long)lk->after_id);
    }
    return r;
}

/* Sends the statement of the lane's lookups in flight. */
static bd_result send_flight(bd_pg_batch *b, lane *l)
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
    r = connect_store(b, l);
    if (r != BD_OK)
        return r;
    pg_store *p = pg_of(l->store);
    const char *values[ARRAYS];
    for (int a = 0; a < ARRAYS; a++)
        values[a] = l->arr[a].data;
    if (!PQsendQueryPrepared(p->conn, FLIGHT_NAMES[l->kind], FLIGHT_PARAMS[l->kind], values, NULL,
                             NULL, cards_flight(l->kind) ? 0 : 1))
        return pg_failed(p, NULL);
    atomic_fetch_add_explicit(&b->batches, 1, memory_order_relaxed);
    return BD_OK;
}

/* Whether a lane takes lookups of kind k: the first lane every kind; the others only an
 * owner word's pages, the one kind whose statement is heavy enough that one backend's core
 * bounds it (scenario 5: 10,008-10,488 req/s on one lane, 12,551-12,871 on two). Email
 * searches and BIN pages stay on one connection, where they share the most statements
 * (on two lanes scenario 1 lost 5% and the p99 of scenarios 1 and 4 grew by half). */
static bool lane_takes(const bd_pg_batch *b, const lane *l, flight_kind k)
{
    return l == &b->lanes[0] || k == FLIGHT_OWNER;
}

/* The first waiting lookup the lane takes, or NULL; under the lock. */
static bd_pg_lookup *first_for(const bd_pg_batch *b, const lane *l)
{
    for (bd_pg_lookup *lk = b->head; lk; lk = lk->next)
        if (lane_takes(b, l, kind_of(lk)))
            return lk;
    return NULL;
}

/* Takes the waiting lookups of one kind (the kind of the first the lane takes) into the
 * lane's flight. */
static void take_flight(bd_pg_batch *b, lane *l)
{
    pthread_mutex_lock(&b->lock);
    l->nflight = 0;
    bd_pg_lookup *first = first_for(b, l);
    if (first) {
        l->kind = kind_of(first);
        bd_pg_lookup **at = &b->head, *last = NULL;
        while (*at && l->nflight < BATCH_MAX) {
            bd_pg_lookup *lk = *at;
            if (kind_of(lk) == l->kind) {
                *at = lk->next;
                l->flight[l->nflight++] = lk;
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

/* Hands the result's rows to the lane's lookups in flight and finishes them. */
static void distribute(bd_pg_batch *b, lane *l, PGresult *res)
{
    struct bd_pg_rows *rows = malloc(sizeof *rows);
    if (!rows) {
        PQclear(res);
        fail_flight(b, l, BD_ERR_NOMEM);
        return;
    }
    rows->res = res;
    atomic_init(&rows->refs, l->nflight + 1);
    int nrows = PQntuples(res), at = 0, ord = ORDINAL_COLUMN[l->kind];
    bool cards = cards_flight(l->kind);
    for (int i = 0; i < l->nflight; i++) {
        bd_pg_lookup *lk = l->flight[i];
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
    atomic_fetch_add_explicit(&b->lookups, (uint64_t)l->nflight, memory_order_relaxed);
    int n = l->nflight;
    l->nflight = 0;
    for (int i = 0; i < n; i++)
        finish_lookup(b, l->flight[i]);
    rows_release(rows);
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
        r = send_flight(b, l);
        if (r == BD_OK)
            return true;
    }
    if (PQstatus(p->conn) != CONNECTION_OK)
        r = BD_ERR_BUSY;
    fail_flight(b, l, r);
    return false;
}

/* Reads what the server sent on the lane; true while its statement (or its retry) is in
 * flight. */
static bool read_result(bd_pg_batch *b, lane *l)
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

/* Gives each free lane the lookups waiting, a kind at a time. True when any went out. */
static bool fill_lanes(bd_pg_batch *b)
{
    bool sent = false;
    for (int i = 0; i < b->nlanes; i++) {
        lane *l = &b->lanes[i];
        if (l->inflight)
            continue;
        take_flight(b, l);
        if (!l->nflight)
            continue; /* nothing this lane takes waits */
        l->retried = false;
        bd_result r = send_flight(b, l);
        if (r == BD_ERR_BUSY && l->store && PQstatus(pg_of(l->store)->conn) == CONNECTION_BAD) {
            l->retried = true;
            r = send_flight(b, l); /* reset in connect_store */
        }
        if (r != BD_OK)
            fail_flight(b, l, r);
        else
            l->inflight = true;
        sent = true;
    }
    return sent;
}

static void *dispatch(void *arg)
{
    bd_pg_batch *b = arg;
    for (int i = 0; i < b->nlanes; i++)
        connect_store(b, &b->lanes[i]); /* at once, so the first lookup does not wait */
    for (;;) {
        if (fill_lanes(b))
            continue;
        /* Nothing a free lane takes waits. A free lane means a lookup queued from now on
         * must wake the thread; with none free the thread looks at the queue again when a
         * statement ends. */
        int busy = 0;
        bool takes = false;
        pthread_mutex_lock(&b->lock);
        for (int i = 0; i < b->nlanes; i++) {
            busy += b->lanes[i].inflight;
            takes = takes || (!b->lanes[i].inflight && first_for(b, &b->lanes[i]));
        }
        if (takes) { /* queued meanwhile */
            pthread_mutex_unlock(&b->lock);
            continue;
        }
        if (!busy && b->stopping) {
            pthread_mutex_unlock(&b->lock);
            break;
        }
        b->sleeping = busy < b->nlanes;
        pthread_mutex_unlock(&b->lock);
        struct pollfd fds[1 + LANES_MAX];
        lane *at[1 + LANES_MAX];
        int nfds = 1;
        fds[0] = (struct pollfd){b->efd, POLLIN, 0};
        bool gone = false;
        for (int i = 0; i < b->nlanes; i++) {
            lane *l = &b->lanes[i];
            if (!l->inflight)
                continue;
            PGconn *c = pg_of(l->store)->conn;
            int fd = PQsocket(c);
            if (fd < 0) { /* no socket: the connection is gone */
                l->inflight = statement_done(b, l, NULL);
                gone = true;
                continue;
            }
            int fl = PQflush(c);
            fds[nfds] = (struct pollfd){fd, (short)(POLLIN | (fl == 1 ? POLLOUT : 0)), 0};
            at[nfds++] = l;
        }
        if (gone) {
            pthread_mutex_lock(&b->lock);
            b->sleeping = false;
            pthread_mutex_unlock(&b->lock);
            continue;
        }
        int n = poll(fds, (nfds_t)nfds, busy ? 1000 : -1);
        if (n < 0 && errno != EINTR)
            break;
        if (fds[0].revents & POLLIN) {
            uint64_t v;
            ssize_t got = read(b->efd, &v, sizeof v);
            (void)got;
        }
        pthread_mutex_lock(&b->lock);
        b->sleeping = false;
        pthread_mutex_unlock(&b->lock);
        for (int k = 1; k < nfds; k++)
            if (fds[k].revents)
                at[k]->inflight = read_result(b, at[k]);
    }
    return NULL;
}

static void lanes_free(bd_pg_batch *b)
{
    for (int i = 0; i < LANES_MAX; i++) {
        lane *l = &b->lanes[i];
        PQclear(l->got);
        if (l->store) {
            PQsetnonblocking(pg_of(l->store)->conn, 0);
            bd_store_close(l->store);
        }
        for (int a = 0; a < ARRAYS; a++)
            bd_buf_free(&l->arr[a]);
    }
}

bd_pg_batch *bd_pg_batch_start(const char *db, bool always)
{
    bd_pg_batch *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    b->db = db;
    b->always = always;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    b->nlanes = cores < 1 ? 1 : cores > LANES_MAX ? LANES_MAX : (int)cores;
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
    /* the keys' array holds up to BATCH_MAX emails; the others numbers or short text */
    for (int i = 0; i < LANES_MAX; i++)
        for (int a = 0; a < ARRAYS; a++)
            bd_buf_init(&b->lanes[i].arr[a], a == 0 ? 1u << 20 : 1u << 16);
    if (pthread_create(&b->thread, NULL, dispatch, b) != 0) {
        close(b->efd);
        lanes_free(b);
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
    close(b->efd);
    lanes_free(b);
    pthread_mutex_destroy(&b->lock);
    pthread_cond_destroy(&b->idle_cv);
    free(b);
}
