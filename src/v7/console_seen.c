/* GET and PUT {base}/console/seen: the change-feed cursor a key's console last showed it
 * (issue 34's "what arrived since the last visit"). The console stores nothing in the
 * browser beyond its session, so the cursor is kept in the store, per key: one row of the
 * meta table ("console_seen.<key id>"), which both stores have, so no table of its own. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "http/server_impl.h"
#include "v7/admin.h"
#include "v7/handlers.h"

#define SEEN_MAX 9007199254740991LL /* 2^53 - 1: exact in every JSON reader */

static void meta_name(const bd_req *rq, char *out, size_t cap)
{
    snprintf(out, cap, "console_seen.%" PRId64, rq->key.id);
}

static void reply(bd_req *rq, bool known, int64_t seen, int64_t version)
{
    bd_json *w = &rq->json;
    bd_reply_begin(rq, 200);
    bd_json_object_begin(w);
    bd_json_key(w, "seen");
    if (known)
        bd_json_int(w, seen);
    else
        bd_json_null(w);
    bd_json_key(w, "data_version");
    bd_json_int(w, version);
    bd_json_object_end(w);
    bd_reply_finish(rq);
}

/* Reads the key's cursor (*known false when it has none) and the data version. */
static bd_result read_seen(bd_store *s, const char *name, bool *known, int64_t *seen,
                           int64_t *version)
{
    char v[32];
    *known = false;
    *seen = 0;
    bd_result r = bd_store_change_version(s, version);
    if (r != BD_OK)
        return r;
    r = bd_store_meta_get(s, name, v, sizeof v);
    if (r == BD_ERR_NOT_FOUND)
        return BD_OK;
    if (r != BD_OK)
        return r;
    char *end = NULL;
    long long n = strtoll(v, &end, 10);
    if (end != v && *end == '\0' && n >= 0) {
        *known = true;
        *seen = n;
    }
    return BD_OK;
}

static void get_seen(bd_req *rq, const char *name)
{
    bool known;
    int64_t seen, version = 0;
    bd_result r = bd_store_read_begin(rq->store);
    if (r == BD_OK)
        r = read_seen(rq->store, name, &known, &seen, &version);
    bd_store_read_end(rq->store);
    if (r != BD_OK)
        bd_reply_store_error(rq, r);
    else
        reply(rq, known, seen, version);
}

static void put_seen(bd_req *rq, const char *name)
{
    static const char *const known_members[] = {"seen", NULL};
    json_t *o = bd_admin_body(rq, known_members);
    if (!o)
        return;
    json_t *v = json_object_get(o, "seen");
    if (!v || !json_is_integer(v) || json_integer_value(v) < 0 ||
        json_integer_value(v) > SEEN_MAX) {
        json_decref(o);
        bd_reply_error(rq, 422, "validation_error",
                       "the body takes seen: a change-feed cursor, an integer >= 0");
        return;
    }
    int64_t seen = (int64_t)json_integer_value(v);
    json_decref(o);
    bd_store *w = bd_req_writer(rq);
    if (!w)
        return; /* its reply is written */
    char text[32];
    snprintf(text, sizeof text, "%" PRId64, seen);
    int64_t version = 0;
    bd_result r = bd_store_meta_set(w, name, text);
    if (r == BD_OK)
        r = bd_store_change_version(w, &version);
    if (r != BD_OK)
        bd_reply_store_error(rq, r);
    else
        reply(rq, true, seen, version);
}

void bd_handle_console_seen(struct bd_server *srv, bd_req *rq, bd_slice arg)
{
    (void)srv;
    (void)arg;
    if (!bd_params_check(rq, NULL, NULL))
        return;
    char name[48];
    meta_name(rq, name, sizeof name);
    if (strcmp(rq->method, "PUT") == 0)
        put_seen(rq, name);
    else
        get_seen(rq, name);
}
