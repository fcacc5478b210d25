/* The lookup dispatcher (store/pg_batch.h): one thread and a lane per core (at most
 * LANES_MAX), each lane a connection of its own in non-blocking mode with one statement in
 * flight at most. Submitters queue a lookup under a mutex and wake the thread through an
 * eventfd when it sleeps with a lane free; the thread polls the eventfd and the busy lanes'
 * sockets. Whenever a lane is free and lookups it takes wait (lane_takes), it takes those of
 * the first one's kind (up to BATCH_MAX; email first pages, email pages after a position,
 * BIN pages, owner words' pages and the data version are five statements) and sends one prepared
 * statement, binary results for records and text for cards (their reading is the synchronous
 * path's). When the result is in, each lookup gets its rows (by ordinal), its count and the data
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
#include "store/pg/batch_impl.h"
#include "store/pg/batch_sql.h"
#include "store/pg/pg_impl.h"
#include "store/pg_batch.h"

static void wake(bd_pg_batch *b)
{
    uint64_t one = 1;
    ssize_t n = write(b->efd, &one, sizeof one);
    (void)n;
}

void pg_batch_woken(bd_pg_batch *b)
{
    uint64_t v;
    ssize_t got = read(b->efd, &v, sizeof v);
    (void)got;
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
    if (b->draining || b->refuse || (b->direct && lk->kind != BD_PG_LOOKUP_EMAIL)) {
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

void bd_pg_batch_release(bd_pg_lookup *lk)
{
    pg_batch_rows_release(lk->rows);
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

void pg_batch_finish_lookup(bd_pg_batch *b, bd_pg_lookup *lk)
{
    lk->done(lk); /* the last touch: the lookup may be gone after it */
    pthread_mutex_lock(&b->lock);
    if (--b->busy == 0)
        pthread_cond_broadcast(&b->idle_cv);
    pthread_mutex_unlock(&b->lock);
}

void pg_batch_fail_flight(bd_pg_batch *b, lane *l, bd_result r)
{
    for (int i = 0; i < l->nflight; i++) {
        l->flight[i]->result = r;
        pg_batch_finish_lookup(b, l->flight[i]);
    }
    l->nflight = 0;
}

/* Whether a lane takes lookups of kind k: the first lane every kind; the others only an
 * owner word's pages, the one kind whose statement is heavy enough that one backend's core
 * bounds it (scenario 5: 10,008-10,488 req/s on one lane, 12,551-12,871 on two), and the
 * data version, so cheap that a reply kept per version should not wait behind a page. Email
 * searches and BIN pages stay on one connection, where they share the most statements
 * (on two lanes scenario 1 lost 5% and the p99 of scenarios 1 and 4 grew by half). */
static bool lane_takes(const bd_pg_batch *b, const lane *l, flight_kind k)
{
    return l == &b->lanes[0] || k == FLIGHT_OWNER || k == FLIGHT_VERSION;
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
        bd_result r = pg_batch_send(b, l);
        if (r == BD_ERR_BUSY && l->store && PQstatus(pg_of(l->store)->conn) == CONNECTION_BAD) {
            l->retried = true;
            r = pg_batch_send(b, l); /* reset in pg_batch_connect */
        }
        if (r != BD_OK)
            pg_batch_fail_flight(b, l, r);
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
        pg_batch_connect(b, &b->lanes[i]); /* at once, so the first lookup does not wait */
    for (;;) {
        if (b->direct) { /* found at a lane's connection, whose flight was handed back */
            pg_batch_direct_loop(b);
            break;
        }
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
                l->inflight = pg_batch_lost(b, l);
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
        if (fds[0].revents & POLLIN)
            pg_batch_woken(b);
        pthread_mutex_lock(&b->lock);
        b->sleeping = false;
        pthread_mutex_unlock(&b->lock);
        for (int k = 1; k < nfds; k++)
            if (fds[k].revents)
                at[k]->inflight = pg_batch_read(b, at[k]);
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
