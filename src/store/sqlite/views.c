/* SQLite read views, shared for a couple of milliseconds between the requests of one
 * connection, the data version a reader sees, and the liveness check. */
#include <pthread.h>
#include <time.h>

#include "store/sqlite/sqlite_impl.h"
#include "store/sqlite/statements.h"

int64_t sq_monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Starting a WAL read view costs a file lock, a stat and a mutex that every connection of
 * the process shares: 14% of the server's CPU on the benchmark's hot path, where a request
 * is one index lookup. Sharing a view for a couple of milliseconds makes that rare. */
bd_result sq_read_begin(bd_store *base)
{
    sqlite_store *s = S(base);
    if (!s->share_ns)
        return sq_run_fixed(s, Q_BEGIN_READ);
    pthread_mutex_lock(&s->read_lock);
    int64_t now = sq_monotonic_ns();
    bool open = !sqlite3_get_autocommit(s->db); /* an error may have rolled it back */
    if (open && s->view_began && now - s->view_began < s->share_ns)
        return BD_OK;
    if (open)
        sq_run_fixed(s, Q_COMMIT);
    s->view_began = 0;
    bd_result r = sq_run_fixed(s, Q_BEGIN_READ);
    if (r == BD_OK)
        s->view_began = now;
    return r; /* the lock is released by read_end, which follows even a failed begin */
}

void sq_read_end(bd_store *base)
{
    sqlite_store *s = S(base);
    if (s->share_ns) {
        pthread_mutex_unlock(&s->read_lock);
        return;
    }
    if (!sqlite3_get_autocommit(s->db))
        sq_run_fixed(s, Q_COMMIT);
}

void sq_share_reads(bd_store *base, int64_t window_us)
{
    S(base)->share_ns = window_us > 0 ? window_us * 1000 : 0;
}

uint64_t sq_data_version(bd_store *base)
{
    sqlite_store *s = S(base);
    /* SQLite's pager counts content changes, its own and other connections' (seen when a
     * read begins), without running a statement. */
    unsigned int v = 0;
    if (sqlite3_file_control(s->db, "main", SQLITE_FCNTL_DATA_VERSION, &v) != SQLITE_OK)
        return 0;
    return v;
}

void sq_release_idle(bd_store *base)
{
    sqlite_store *s = S(base);
    if (!s->share_ns || pthread_mutex_trylock(&s->read_lock) != 0)
        return;
    if (s->view_began && sq_monotonic_ns() - s->view_began >= s->share_ns) {
        if (!sqlite3_get_autocommit(s->db))
            sq_run_fixed(s, Q_COMMIT);
        s->view_began = 0;
    }
    pthread_mutex_unlock(&s->read_lock);
}

bd_result sq_ping(bd_store *base)
{
    return sq_run_fixed(S(base), Q_PING);
}
