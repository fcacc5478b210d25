/* GET {base}/status and GET {base}/changes: the store's data version, when data last
 * landed and how much there is; and the change log since a cursor, for pipelines that
 * mirror or watch the corpus. Both read the log (store.h), never the corpus. */
#include "v7/handlers.h"
#include "http/server_impl.h"
#include "v7/kept_reply.h"

/* The reply cache's variants of the status (the catalog's are its number_of_records): a
 * key's without a tenant, and a tenant key's. */
#define STATUS_VARIANT (-1)
#define STATUS_VARIANT_TENANT (-2)

#define CHANGES_DEFAULT 100
#define CHANGES_MAX 1000

static void member_int(bd_json *w, const char *key, int64_t v)
{
    bd_json_key(w, key);
    bd_json_int(w, v);
}

/* A tenant key sees the catalog every key shares (the breaches, as HIBP's public list), not
 * the corpus: records and cards count every tenant's, so they are null for it. */
static void write_status(bd_req *rq, const bd_store_status *st, bool tenant)
{
    bd_json *w = &rq->json;
    bd_reply_begin(rq, 200);
    bd_json_object_begin(w);
    member_int(w, "data_version", st->version);
    bd_json_utc_member(w, "last_change_at", st->last_change_at);
    bd_json_utc_member(w, "last_import_at", st->last_import_at);
    member_int(w, "breaches", st->breaches);
    bd_json_key(w, "records");
    if (tenant)
        bd_json_null(w);
    else
        bd_json_int(w, st->records);
    bd_json_key(w, "cards");
    if (tenant)
        bd_json_null(w);
    else
        bd_json_int(w, st->cards);
    bd_json_object_end(w);
    bd_reply_finish(rq);
}

static bd_result build_status(bd_req *rq, int64_t variant)
{
    bd_store_status st = {0};
    bd_result r = bd_store_status_get(rq->store, &st);
    if (r == BD_OK)
        write_status(rq, &st, variant == STATUS_VARIANT_TENANT);
    return r;
}

/* The status changes only with the log: kept per data version like the catalog, so a
 * poller costs one index lookup, not a pass over the log. */
static const bd_kept_reply_kind STATUS = {build_status, false, false};

void bd_handle_status(struct bd_server *srv, bd_req *rq, bd_slice arg)
{
    (void)arg;
    if (!bd_params_check(rq, NULL, NULL))
        return;
    bd_reply_kept(srv, rq, &STATUS,
                  rq->key.tenant_id != 0 ? STATUS_VARIANT_TENANT : STATUS_VARIANT);
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
    bool breaches_only; /* a tenant key: the catalog's rows, not the corpus's counts */
    int read;           /* rows the store gave in this call, kept or not */
    int64_t seen;       /* the last of them */
} changes_page;

static bool is_breach_change(bd_change_kind k)
{
    return k == BD_CHANGE_BREACH_ADDED || k == BD_CHANGE_BREACH_CHANGED ||
           k == BD_CHANGE_BREACH_REMOVED;
}

static int write_change(void *ctx, const bd_change_row *c)
{
    changes_page *pg = ctx;
    pg->read++;
    pg->seen = c->seq;
    if (pg->breaches_only && !is_breach_change(c->kind)) {
        if (pg->rows < pg->limit) /* the page goes on past it */
            pg->last = c->seq;
        return 0;
    }
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
    changes_page pg = {rq, (int)limit, 0, since, rq->key.tenant_id != 0, 0, since};
    bd_reply_begin(rq, 200);
    bd_json_object_begin(w);
    bd_json_key(w, "changes");
    bd_json_array_begin(w);
    rq->records = 0;
    bd_result r = bd_store_read_begin(rq->store);
    /* a tenant key's rows are fewer than the store's: read on (in the same read view) until
     * the page and the one past it are in, or the log ends */
    for (int64_t after = since; r == BD_OK;) {
        pg.read = 0;
        r = bd_store_changes(rq->store, after, (int)limit + 1, write_change, &pg);
        if (!pg.breaches_only || pg.rows > pg.limit || pg.read < (int)limit + 1)
            break;
        after = pg.seen;
    }
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
