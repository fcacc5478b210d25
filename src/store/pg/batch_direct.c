/* The lookup dispatcher on a Citus coordinator with direct reads (batch_impl.h): the email
 * pages waiting at one moment are read on their shards' workers, the lookups of one shard
 * (first pages, or pages after a position) as one statement on that shard's table
 * (direct.c completes records_email.c's batched pages with the shard and its placement
 * check), every statement for one worker pipelined on its connection with one sync, the
 * workers in parallel. A round ends when every worker has answered; what waited meanwhile
 * goes out in the next.
 *
 * A lookup that cannot be read so (no map, its worker down or failing, its shard moved) is
 * handed back as BD_ERR_UNSUPPORTED: its request searches on its own thread, which reads
 * through the coordinator when the worker cannot answer (pg_search_email), so the answer is
 * the same, and so is a refusal (503 when the worker is down). */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/pg/batch_impl.h"
#include "store/pg/direct.h"
#include "store/pg/pg_impl.h"

typedef struct {
    int shard, node;
    bool next;     /* pages after a position (else first pages) */
    int first, n;  /* its lookups: order[first .. first + n - 1], ordinals 1 .. n */
    bool answered; /* its result was handed out, or it failed */
} group;

typedef struct {
    bd_pg_lookup *taken[BATCH_MAX];
    int ntaken;
    int shard[BATCH_MAX], node[BATCH_MAX], in_group[BATCH_MAX];
    bd_pg_lookup *order[BATCH_MAX];
    group groups[BATCH_MAX];
    int ngroups;
    /* per worker: its groups in the order sent, how many have their result, whether its
     * sync came back (or it failed) */
    int sent[PG_DIRECT_MAX_NODES][BATCH_MAX];
    int nsent[PG_DIRECT_MAX_NODES], nread[PG_DIRECT_MAX_NODES];
    bool waiting[PG_DIRECT_MAX_NODES];
    bool errored[PG_DIRECT_MAX_NODES]; /* a statement failed: the connection goes at the sync */
    bd_buf arr[4];                     /* a statement's arrays: emails, limits, dates, ids */
} round_state;

/* Hands lookups back to their requests' threads. */
static void hand_back(bd_pg_batch *b, bd_pg_lookup **lks, int n)
{
    for (int i = 0; i < n; i++) {
        lks[i]->result = BD_ERR_UNSUPPORTED;
        pg_batch_finish_lookup(b, lks[i]);
    }
}

static void group_fails(bd_pg_batch *b, round_state *rs, group *g)
{
    if (g->answered)
        return;
    g->answered = true;
    hand_back(b, rs->order + g->first, g->n);
}

/* Takes every lookup waiting, up to BATCH_MAX; false when there was none. */
static bool take(bd_pg_batch *b, round_state *rs)
{
    pthread_mutex_lock(&b->lock);
    rs->ntaken = 0;
    while (b->head && rs->ntaken < BATCH_MAX) {
        rs->taken[rs->ntaken++] = b->head;
        b->head = b->head->next;
    }
    if (!b->head)
        b->tail = NULL;
    pthread_mutex_unlock(&b->lock);
    return rs->ntaken > 0;
}

/* Each lookup's shard and worker, and the groups: one per shard and kind of page. Lookups
 * that no worker can be found for are handed back. */
static void group_lookups(bd_pg_batch *b, pg_store *p, round_state *rs)
{
    rs->ngroups = 0;
    int kept = 0;
    pg_direct_refresh(p); /* here only: the round's shard and worker indexes stay valid */
    for (int i = 0; i < rs->ntaken; i++) {
        bd_pg_lookup *lk = rs->taken[i];
        uint8_t ok[PG_OWNER_KEY_LEN];
        int node, shard;
        if (lk->kind != BD_PG_LOOKUP_EMAIL) { /* taken before the store was known routed */
            hand_back(b, &lk, 1);
            continue;
        }
        pg_email_owner_key(lk->email, ok);
        if (!pg_direct_locate(p, ok, sizeof ok, &node, &shard)) {
            hand_back(b, &lk, 1);
            continue;
        }
        int g = 0;
        while (g < rs->ngroups &&
               (rs->groups[g].shard != shard || rs->groups[g].next != lk->has_after))
            g++;
        if (g == rs->ngroups)
            rs->groups[rs->ngroups++] = (group){shard, node, lk->has_after, 0, 0, false};
        rs->groups[g].n++;
        rs->taken[kept] = lk;
        rs->in_group[kept++] = g;
    }
    int at = 0;
    for (int g = 0; g < rs->ngroups; g++) {
        rs->groups[g].first = at;
        at += rs->groups[g].n;
        rs->groups[g].n = 0;
    }
    for (int i = 0; i < kept; i++) {
        group *g = &rs->groups[rs->in_group[i]];
        rs->order[g->first + g->n++] = rs->taken[i];
    }
}

/* Queues group g's statement on its worker's connection. */
static bool send_group(pg_store *p, round_state *rs, const group *g)
{
    bd_result r = BD_OK;
    for (int a = 0; r == BD_OK && a < 4; a++) {
        bd_buf_reset(&rs->arr[a]);
        r = bd_buf_append_char(&rs->arr[a], '{');
    }
    for (int i = 0; r == BD_OK && i < g->n; i++) {
        const bd_pg_lookup *lk = rs->order[g->first + i];
        const char *sep = i ? "," : "";
        r = pg_batch_add_text(&rs->arr[0], sep, lk->email);
        if (r == BD_OK)
            r = bd_buf_printf(&rs->arr[1], "%s%d", sep, lk->limit);
        if (r == BD_OK && g->next)
            r = bd_buf_printf(&rs->arr[2], "%s%d", sep, (int)lk->after_date);
        if (r == BD_OK && g->next)
            r = bd_buf_printf(&rs->arr[3], "%s%lld", sep, (long long)lk->after_id);
    }
    for (int a = 0; r == BD_OK && a < 4; a++)
        r = bd_buf_append(&rs->arr[a], "}", 2); /* with its NUL */
    if (r != BD_OK)
        return false;
    const char *values[4] = {rs->arr[0].data, rs->arr[1].data, rs->arr[2].data, rs->arr[3].data};
    return pg_direct_send(p, g->shard, g->next ? PG_DIRECT_BATCH_NEXT : PG_DIRECT_BATCH_FIRST,
                          g->next ? 4 : 2, values, 1);
}

/* The worker failed: its connection is closed, and its lookups without a result go back. */
static void node_fails(bd_pg_batch *b, pg_store *p, round_state *rs, int node)
{
    for (int g = 0; g < rs->ngroups; g++)
        if (rs->groups[g].node == node)
            group_fails(b, rs, &rs->groups[g]);
    if (rs->waiting[node])
        pg_direct_node_failed(p, node);
    rs->waiting[node] = false;
}

/* Sends every group, a worker's groups in one pipeline closed by one sync. */
static void send_all(bd_pg_batch *b, pg_store *p, round_state *rs)
{
    memset(rs->nsent, 0, sizeof rs->nsent);
    memset(rs->nread, 0, sizeof rs->nread);
    memset(rs->waiting, 0, sizeof rs->waiting);
    memset(rs->errored, 0, sizeof rs->errored);
    for (int g = 0; g < rs->ngroups; g++) {
        group *gr = &rs->groups[g];
        if (gr->answered)
            continue;
        if (!rs->waiting[gr->node]) {
            if (!pg_direct_conn(p, gr->node)) { /* down: its searches go through the coordinator */
                group_fails(b, rs, gr);
                continue;
            }
            rs->waiting[gr->node] = true;
        }
        if (!send_group(p, rs, gr)) {
            node_fails(b, p, rs, gr->node);
            continue;
        }
        rs->sent[gr->node][rs->nsent[gr->node]++] = g;
        atomic_fetch_add_explicit(&b->batches, 1, memory_order_relaxed);
    }
    for (int node = 0; node < PG_DIRECT_MAX_NODES; node++)
        if (rs->waiting[node] && !PQpipelineSync(pg_direct_conn(p, node)))
            node_fails(b, p, rs, node);
}

/* One shard's result: its rows to its lookups, or all of them back when the shard has left
 * the worker (the version column is NULL on every row then). */
static void group_result(bd_pg_batch *b, pg_store *p, round_state *rs, group *g, PGresult *res)
{
    if (g->answered) {
        PQclear(res);
        return;
    }
    if (PQntuples(res) > 0 && PQgetisnull(res, 0, 16)) {
        PQclear(res);
        pg_direct_map_stale(p);
        group_fails(b, rs, g);
        return;
    }
    g->answered = true;
    pg_batch_hand_rows(b, rs->order + g->first, g->n, false, res);
}

/* Reads what worker node sent so far. A prepared statement says COMMAND_OK; the sync ends the round
 * for the worker. Any error hands its lookups without a result back and closes the connection (what
 * it had prepared is then unknown). */
static void read_node(bd_pg_batch *b, pg_store *p, round_state *rs, int node)
{
    PGconn *c = pg_direct_conn(p, node);
    if (!c || !PQconsumeInput(c)) {
        node_fails(b, p, rs, node);
        return;
    }
    PGresult *res;
    while (rs->waiting[node] && (res = pg_direct_next_result(c))) {
        ExecStatusType st = PQresultStatus(res);
        if (st == PGRES_PIPELINE_SYNC) {
            PQclear(res);
            bool unanswered = false;
            for (int g = 0; g < rs->ngroups; g++)
                unanswered = unanswered || (rs->groups[g].node == node && !rs->groups[g].answered);
            if (unanswered || rs->errored[node]) /* what it prepared is unknown: closed */
                node_fails(b, p, rs, node);
            rs->waiting[node] = false;
            return;
        }
        if (st == PGRES_TUPLES_OK && rs->nread[node] < rs->nsent[node]) {
            group *g = &rs->groups[rs->sent[node][rs->nread[node]++]];
            group_result(b, p, rs, g, res);
        } else if (st == PGRES_COMMAND_OK) {
            PQclear(res);
        } else { /* an error, or a statement the pipeline skipped after one */
            PQclear(res);
            rs->errored[node] = true;
            for (int g = 0; g < rs->ngroups; g++)
                if (rs->groups[g].node == node)
                    group_fails(b, rs, &rs->groups[g]);
        }
    }
    if (PQstatus(c) == CONNECTION_BAD)
        node_fails(b, p, rs, node);
}

/* Waits for every worker of the round to answer. */
static void await_all(bd_pg_batch *b, pg_store *p, round_state *rs)
{
    for (;;) {
        struct pollfd fds[PG_DIRECT_MAX_NODES];
        int at[PG_DIRECT_MAX_NODES], nfds = 0;
        for (int node = 0; node < PG_DIRECT_MAX_NODES; node++) {
            if (!rs->waiting[node])
                continue;
            PGconn *c = pg_direct_conn(p, node);
            int fd = c ? PQsocket(c) : -1;
            if (fd < 0) {
                node_fails(b, p, rs, node);
                continue;
            }
            int fl = PQflush(c);
            if (fl < 0) {
                node_fails(b, p, rs, node);
                continue;
            }
            fds[nfds] = (struct pollfd){fd, (short)(POLLIN | (fl == 1 ? POLLOUT : 0)), 0};
            at[nfds++] = node;
        }
        if (!nfds)
            return;
        int n = poll(fds, (nfds_t)nfds, 1000);
        if (n < 0 && errno != EINTR) {
            for (int k = 0; k < nfds; k++)
                node_fails(b, p, rs, at[k]);
            return;
        }
        for (int k = 0; k < nfds; k++)
            if (fds[k].revents)
                read_node(b, p, rs, at[k]);
    }
}

/* Sleeps until a lookup is queued; false when stopping with nothing left. */
static bool wait_for_lookups(bd_pg_batch *b)
{
    pthread_mutex_lock(&b->lock);
    if (b->head) {
        pthread_mutex_unlock(&b->lock);
        return true;
    }
    if (b->stopping) {
        pthread_mutex_unlock(&b->lock);
        return false;
    }
    b->sleeping = true;
    pthread_mutex_unlock(&b->lock);
    struct pollfd fd = {b->efd, POLLIN, 0};
    if (poll(&fd, 1, -1) > 0)
        pg_batch_woken(b);
    pthread_mutex_lock(&b->lock);
    b->sleeping = false;
    pthread_mutex_unlock(&b->lock);
    return true;
}

/* Without the round's state (out of memory): every lookup is handed back from now on. */
static void refuse_all(bd_pg_batch *b)
{
    pthread_mutex_lock(&b->lock);
    b->refuse = true;
    pthread_mutex_unlock(&b->lock);
    while (wait_for_lookups(b)) {
        pthread_mutex_lock(&b->lock);
        bd_pg_lookup *lk = b->head;
        if (lk && !(b->head = lk->next))
            b->tail = NULL;
        pthread_mutex_unlock(&b->lock);
        if (lk)
            hand_back(b, &lk, 1);
    }
}

void pg_batch_direct_loop(bd_pg_batch *b)
{
    pg_store *p = b->lanes[0].store ? pg_of(b->lanes[0].store) : NULL;
    round_state *rs = p && p->direct ? calloc(1, sizeof *rs) : NULL;
    if (!rs) {
        refuse_all(b);
        return;
    }
    for (int a = 0; a < 4; a++)
        bd_buf_init(&rs->arr[a], a == 0 ? 1u << 20 : 1u << 16);
    while (wait_for_lookups(b)) {
        if (!take(b, rs))
            continue;
        group_lookups(b, p, rs);
        send_all(b, p, rs);
        await_all(b, p, rs);
    }
    for (int a = 0; a < 4; a++)
        bd_buf_free(&rs->arr[a]);
    free(rs);
}
