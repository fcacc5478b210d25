/* range-snapshot: on a PostgreSQL store, keeps a local copy of the password ranges that
 * /range/ serves from (store/range_snapshot.h). Once a second it reads the store's range
 * version; when it moved (an import committed ranges), it writes the ranges out to
 * DIR/ranges.snapshot from one consistent read on a connection of its own, maps the file and
 * publishes it: requests in flight finish on the previous map, the next ones read the new
 * one. Until the first snapshot is published, /range/ reads the store. At start, a snapshot
 * left in DIR by an earlier run is checked whole and served at once when the store is still
 * at its version. Without --range-snapshot-dir, or on SQLite (whose file is already local),
 * the service does nothing. */
#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "app/services.h"
#include "app/ticker.h"
#include "core/log.h"
#include "store/range_snapshot.h"

#define SNAPSHOT_TICK_MS 1000

typedef struct {
    const char *db;
    char path[4096];
    bd_store *store; /* its own connection, opened by the first tick */
    bd_ticker *ticker;
    atomic_bool stop;
    bool serving;
    uint64_t served; /* the range version of the snapshot published */
    bool tried_file; /* the file of an earlier run was looked at */
    bool warned;     /* the store's absence was reported */
} snapshot_svc;

static double seconds_since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

static void publish(snapshot_svc *s, bd_range_snapshot *snap)
{
    s->served = bd_range_snapshot_version(snap);
    s->serving = true;
    bd_range_snapshot_publish(snap);
}

/* The file an earlier run left, when it is whole and at the store's version. */
static bool reuse_file(snapshot_svc *s, uint64_t version)
{
    bd_range_snapshot *snap;
    bd_result r = bd_range_snapshot_open(s->path, true, &snap);
    if (r == BD_ERR_NOT_FOUND)
        return false;
    if (r != BD_OK) {
        bd_log(BD_LOG_WARN, "ranges", "the range snapshot %s is not whole (%s): writing it again",
               s->path, bd_result_str(r));
        return false;
    }
    if (bd_range_snapshot_version(snap) != version) {
        bd_range_snapshot_release(snap);
        return false;
    }
    publish(s, snap);
    bd_log(BD_LOG_INFO, "ranges", "serving /range/ from %s (range version %" PRIu64 ")", s->path,
           version);
    return true;
}

static void snapshot_tick(void *arg)
{
    snapshot_svc *s = arg;
    char why[512];
    if (!s->store && bd_store_open(s->db, BD_STORE_READ, &s->store, why, sizeof why) != BD_OK) {
        if (!s->warned)
            bd_log(BD_LOG_WARN, "ranges", "range snapshot: %s", why);
        s->warned = true;
        return;
    }
    uint64_t version;
    if (bd_store_range_version(s->store, &version) != BD_OK)
        return; /* unreachable for now: the next tick asks again */
    if (s->serving && version == s->served)
        return;
    if (!s->tried_file) {
        s->tried_file = true;
        if (reuse_file(s, version))
            return;
    }
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    uint64_t got;
    bd_result r = bd_range_snapshot_build(s->store, s->path, &s->stop, &got);
    bd_range_snapshot *snap = NULL;
    if (r == BD_OK)
        r = bd_range_snapshot_open(s->path, false, &snap);
    if (r != BD_OK) {
        if (!atomic_load(&s->stop))
            bd_log(BD_LOG_WARN, "ranges", "the range snapshot %s could not be written (%s): "
                   "/range/ %s", s->path, bd_result_str(r),
                   s->serving ? "serves the previous one" : "reads the store");
        return;
    }
    publish(s, snap);
    bd_log(BD_LOG_INFO, "ranges", "range snapshot of range version %" PRIu64 " written to %s "
           "in %.1f s: /range/ serves from it", got, s->path, seconds_since(&t0));
}

static bd_result snapshot_start(void *envp, void **state, char *why, size_t whylen)
{
    bd_app_env *env = envp;
    const char *dir = env->cfg->range_snapshot_dir;
    *state = NULL;
    bd_store_caps caps;
    bd_store_kind_caps(env->cfg->server.db, &caps);
    if (!dir || !*dir || !caps.database_server)
        return BD_OK;
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
        snprintf(why, whylen, "cannot create --range-snapshot-dir %s: %s", dir, strerror(errno));
        return BD_ERR_IO;
    }
    snapshot_svc *s = calloc(1, sizeof *s);
    if (!s)
        return BD_ERR_NOMEM;
    int n = snprintf(s->path, sizeof s->path, "%s/%s", dir, BD_RANGE_SNAPSHOT_FILE);
    if (n < 0 || (size_t)n >= sizeof s->path) {
        free(s);
        snprintf(why, whylen, "--range-snapshot-dir is too long");
        return BD_ERR_INVALID;
    }
    s->db = env->cfg->server.db;
    atomic_init(&s->stop, false);
    s->ticker = bd_ticker_start(SNAPSHOT_TICK_MS, true, snapshot_tick, s);
    if (!s->ticker) {
        free(s);
        snprintf(why, whylen, "cannot start the range snapshot thread");
        return BD_ERR_NOMEM;
    }
    *state = s;
    return BD_OK;
}

/* A snapshot being written gives up at its next bucket. */
static void snapshot_drain(void *state)
{
    snapshot_svc *s = state;
    if (s)
        atomic_store(&s->stop, true);
}

static void snapshot_stop(void *state)
{
    snapshot_svc *s = state;
    if (!s)
        return;
    atomic_store(&s->stop, true);
    bd_ticker_stop(s->ticker);
    bd_range_snapshot_publish(NULL);
    if (s->store)
        bd_store_close(s->store);
    free(s);
}

const bd_service bd_svc_range_snapshot = {"range-snapshot", snapshot_start, snapshot_drain,
                                          snapshot_stop};
