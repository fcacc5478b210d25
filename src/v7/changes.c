/* GET {base}/status and GET {base}/changes: the store's data version, when data last
 * landed and how much there is; and the change log since a cursor, for pipelines that
 * mirror or watch the corpus. Both read the log (store.h), never the corpus. */
#include "v7/handlers.h"
#include "http/reply_cache.h"
#include "http/server_impl.h"

/* The reply cache's variant of the status (the catalog's are its number_of_records). */
#define STATUS_VARIANT (-1)

#define CHANGES_DEFAULT 100
#define CHANGES_MAX 1000

static void member_int(bd_json *w, const char *key, int64_t v)
{
    bd_json_key(w, key);
    bd_json_int(w, v);
}

static void write_status(bd_req *rq, const bd_store_status *st)
{
    bd_json *w = &rq->json;
    bd_reply_begin(rq, 200);
    bd_json_object_begin(w);
    member_int(w, "data_version", st->version);
    bd_json_utc_member(w, "last_change_at", st->last_change_at);
    bd_json_utc_member(w, "last_import_at", st->last_import_at);
    member_int(w, "breaches", st->breaches);
    member_int(w, "records", st->records);
    member_int(w, "cards", st->cards);
    bd_json_object_end(w);
    bd_reply_finish(rq);
}

/* The status changes only with the log: kept per data version like the catalog, so a
 * poller costs one index lookup, not a pass over the log. */
void bd_handle_status(struct bd_server *srv, bd_req *rq, bd_slice arg)
{
    (void)srv;
    (void)arg;
    if (!bd_params_check(rq, NULL, NULL))
        return;
    int64_t version = 0;
    bd_store_status st = {0};
    const bd_cached_reply *kept = NULL;
    bd_result r = bd_store_read_begin(rq->store);
    if (r == BD_OK)
        r = bd_store_change_version(rq->store, &version);
    if (r == BD_OK)
        kept = bd_reply_cache_get(rq->replies, version, STATUS_VARIANT);
    if (r == BD_OK && !kept)
        r = bd_store_status_get(rq->store, &st);
    bd_store_read_end(rq->store);
    if (r != BD_OK) {
        bd_reply_store_error(rq, r);
        return;
    }
    if (!kept) {
        write_status(rq, &st);
        /* kept under the version read first: the status may be newer, never older */
        if (rq->status == 200)
            kept = bd_reply_cache_put(rq->replies, version, STATUS_VARIANT,
                                      (bd_slice){rq->body->data, rq->body->len}, -1, NULL);
    }
    if (kept) {
        rq->status = 200;
        rq->cached = kept;
    }
}

static const char *kind_name(bd_change_kind k)
{
    switch (k) {
    case BD_CHANGE_BREACH_ADDED:
        return "breach_added";
    case BD_CHANGE_BREACH_CHANGED:
        return "breach_changed";
    case BD_CHANGE_BREACH_REMOVED:
        return "breach_removed";
    case BD_CHANGE_RECORDS_ADDED:
        return "records_added";
    case BD_CHANGE_RECORDS_REMOVED:
        return "records_removed";
    case BD_CHANGE_CARDS_ADDED:
        return "cards_added";
    }
    return "unknown";
}

typedef struct {
    bd_req *rq;
    int limit, rows;
    int64_t last;
} changes_page;

static int write_change(void *ctx, const bd_change_row *c)
{
    changes_page *pg = ctx;
    if (++pg->rows > pg->limit) /* the one past the page: there is more */
        return 1;
    bd_json *w = &pg->rq->json;
    bool cards = c->kind == BD_CHANGE_CARDS_ADDED;
    bd_json_object_begin(w);
    member_int(w, "seq", c->seq);
    bd_json_utc_member(w, "at", c->at);
    bd_json_key(w, "kind");
    bd_json_cstring(w, kind_name(c->kind));
    bd_json_member_string(w, cards ? "leak_id" : "breach_id", c->subject, true);
    bd_json_member_string(w, cards ? "leak_name" : "source_name", c->name, true);
    member_int(w, "count", c->count);
    bd_json_object_end(w);
    pg->last = c->seq;
    pg->rq->records++;
    return 0;
}

void bd_handle_changes(struct bd_server *srv, bd_req *rq, bd_slice arg)
{
    (void)srv;
    (void)arg;
    static const char *const allowed[] = {"since", "limit", NULL};
    int64_t since, limit;
    if (!bd_params_check(rq, allowed, NULL) ||
        !bd_param_int(rq, "since", 0, INT64_MAX, 0, &since) ||
        !bd_param_int(rq, "limit", 1, CHANGES_MAX, CHANGES_DEFAULT, &limit))
        return;
    bd_json *w = &rq->json;
    changes_page pg = {rq, (int)limit, 0, since};
    bd_reply_begin(rq, 200);
    bd_json_object_begin(w);
    bd_json_key(w, "changes");
    bd_json_array_begin(w);
    rq->records = 0;
    bd_result r = bd_store_read_begin(rq->store);
    if (r == BD_OK)
        r = bd_store_changes(rq->store, since, (int)limit + 1, write_change, &pg);
    bd_store_read_end(rq->store);
    if (r != BD_OK) {
        bd_reply_store_error(rq, r);
        return;
    }
    bd_json_array_end(w);
    member_int(w, "next", pg.last);
    bd_json_key(w, "more");
    bd_json_bool(w, pg.rows > pg.limit);
    bd_json_object_end(w);
    bd_reply_finish(rq);
}
