/* GET {base}/credit-card-search: query language, sort and page-based paging. */
#include <microhttpd.h>
#include <stdlib.h>
#include <string.h>

#include "v7/handlers.h"
#include "http/scope.h"
#include "http/accept.h"
#include "http/request.h"
#include "v7/pg_wait.h"
#include "v7/search_csv.h"
#include "ingest/mask.h"
#include "query/plan.h"

#define MAX_DEPTH_ROWS 100000 /* page * size beyond this: narrow the query instead */
#define EXACT_PERIOD_S 86400  /* a key's exact-lookup budget refills over a day */

static const struct {
    const char *name;
    bd_card_column column;
} SORTABLE[] = {
    {"createdAt", BD_CARD_CREATED_AT},
    {"expireDate", BD_CARD_EXPIRE_DATE},
    {"bank", BD_CARD_BANK},
    {"owner", BD_CARD_OWNER},
    {"cvssScore", BD_CARD_CVSS},
    {"leakName", BD_CARD_LEAK_NAME},
    {"leakPublishDate", BD_CARD_LEAK_PUBLISH_DATE},
    {"leakDiscoverDate", BD_CARD_LEAK_DISCOVER_DATE},
    {"leakSize", BD_CARD_LEAK_SIZE},
};

/* Parses every sort parameter ("field[,asc|desc]") in the order given. */
static bool parse_sort(bd_req *rq, bd_card_query *q)
{
    q->nsort = 0;
    for (size_t i = 0; i < rq->nparams; i++) {
        if (!bd_slice_eq(rq->params[i].name, "sort"))
            continue;
        bd_slice v = rq->params[i].value;
        if (!v.ptr || v.len == 0) /* an empty optional parameter counts as absent */
            continue;
        const char *comma = v.ptr ? memchr(v.ptr, ',', v.len) : NULL;
        bd_slice field = {v.ptr, comma ? (size_t)(comma - v.ptr) : v.len};
        bd_slice dir = comma ? (bd_slice){comma + 1, v.len - field.len - 1} : (bd_slice){"", 0};
        size_t k = 0;
        while (k < sizeof SORTABLE / sizeof SORTABLE[0] && !bd_slice_eq(field, SORTABLE[k].name))
            k++;
        if (k == sizeof SORTABLE / sizeof SORTABLE[0]) {
            bd_reply_error(rq, 422, "validation_error",
                           "sort field must be one of createdAt, expireDate, bank, owner, "
                           "cvssScore, leakName, leakPublishDate, leakDiscoverDate, leakSize");
            return false;
        }
        bool desc;
        if (dir.len == 0 || bd_slice_eq(dir, "asc") || bd_slice_eq(dir, "ASC"))
            desc = false;
        else if (bd_slice_eq(dir, "desc") || bd_slice_eq(dir, "DESC"))
            desc = true;
        else {
            bd_reply_error(rq, 422, "validation_error", "sort direction must be asc or desc");
            return false;
        }
        for (size_t j = 0; j < q->nsort; j++) {
            if (q->sort[j].column == SORTABLE[k].column) {
                bd_reply_error(rq, 422, "validation_error", "sort names '%s' twice",
                               SORTABLE[k].name);
                return false;
            }
        }
        q->sort[q->nsort++] = (bd_card_sort){SORTABLE[k].column, desc};
    }
    if (q->nsort == 0)
        q->sort[q->nsort++] = (bd_card_sort){BD_CARD_CREATED_AT, true};
    return true;
}

/* The page being written: its envelope's head goes out once the count is known, before the
 * first card (or alone, for a page with none). */
typedef struct {
    bd_req *rq;
    int64_t page, size;
    const int64_t *found; /* set by the search before the first card */
    int64_t in_page;
    bool head;
    bool failed; /* a CSV row did not fit */
} card_page;

static void write_head(card_page *cp)
{
    int64_t total = *cp->found, size = cp->size, page = cp->page;
    int64_t total_pages = (total + size - 1) / size;
    int64_t in_page = total > page * size ? total - page * size : 0;
    if (in_page > size)
        in_page = size;
    cp->in_page = in_page;
    cp->head = true;
    bd_reply_begin(cp->rq, 200);
    bd_json *w = &cp->rq->json;
    bd_json_object_begin(w);
    bd_json_key(w, "number");
    bd_json_int(w, page);
    bd_json_key(w, "size");
    bd_json_int(w, size);
    bd_json_key(w, "totalElements");
    bd_json_int(w, total);
    bd_json_key(w, "totalPages");
    bd_json_int(w, total_pages);
    bd_json_key(w, "numberOfElements");
    bd_json_int(w, in_page);
    bd_json_key(w, "first");
    bd_json_bool(w, page == 0);
    bd_json_key(w, "last");
    bd_json_bool(w, page >= total_pages - 1);
    bd_json_key(w, "hasContent");
    bd_json_bool(w, in_page > 0);
    bd_json_key(w, "content");
    bd_json_array_begin(w);
}

/* The CSV form of the page head: the counts as headers, then the header row. */
static void write_csv_head(card_page *cp)
{
    bd_req *rq = cp->rq;
    int64_t total = *cp->found, size = cp->size, page = cp->page;
    int64_t in_page = total > page * size ? total - page * size : 0;
    cp->in_page = in_page > size ? size : in_page;
    cp->head = true;
    bd_csv_cards_begin(rq);
    bd_reply_header_int(rq, "X-Total-Elements", total);
    bd_reply_header_int(rq, "X-Total-Pages", (total + size - 1) / size);
    bd_reply_header_int(rq, "X-Page-Number", page);
    bd_reply_header_int(rq, "X-Page-Size", size);
    bd_reply_header_int(rq, "X-Number-Of-Elements", cp->in_page);
}

static int write_card(void *ctx, const bd_card_row *c)
{
    card_page *cp = ctx;
    if (cp->rq->csv) {
        if (!cp->head)
            write_csv_head(cp);
        cp->failed = bd_csv_card(cp->rq, c) != BD_OK; /* past the body's cap */
        return cp->failed;
    }
    if (!cp->head)
        write_head(cp);
    bd_json *w = &cp->rq->json;
    bd_json_object_begin(w);
    BD_JSON_MEMBER_STRING(w, "id", c->id, false);
    BD_JSON_MEMBER_STRING(w, "createdAt", c->created_at, false);
    BD_JSON_MEMBER_STRING(w, "bank", c->bank, false);
    BD_JSON_MEMBER_STRING(w, "number", c->number_masked, false);
    BD_JSON_MEMBER_STRING(w, "owner", c->owner, false);
    BD_JSON_MEMBER_STRING(w, "cvv", bd_mask_cvv_shown(c->cvv), false);
    BD_JSON_MEMBER_STRING(w, "expireDate", c->expire_date, false);
    BD_JSON_KEY(w, "cvssScore");
    if (c->has_cvss)
        bd_json_double(w, c->cvss);
    else
        bd_json_null(w);
    BD_JSON_MEMBER_STRING(w, "leakId", c->leak_id, false);
    BD_JSON_MEMBER_STRING(w, "leakName", c->leak_name, false);
    BD_JSON_MEMBER_STRING(w, "leakPublishDate", c->leak_publish_date, false);
    BD_JSON_MEMBER_STRING(w, "leakDiscoverDate", c->leak_discover_date, false);
    BD_JSON_KEY(w, "leakSize");
    if (c->has_leak_size)
        bd_json_int(w, c->leak_size);
    else
        bd_json_null(w);
    BD_JSON_MEMBER_STRING(w, "leakTags", c->leak_tags, false);
    bd_json_object_end(w);
    return 0;
}

/* Charges a query that looks a card up by full number or Hash: to the key's daily budget of
 * such lookups, kept apart from its request budget: each one tests a guess at a card's
 * hidden digits. Returns false with the 429 written when the budget is 0 or used up. */
static bool take_exact_lookup(bd_req *rq)
{
    int64_t per_day = rq->key.exact_per_day;
    rq->exact_refused = true; /* until admitted below */
    if (per_day <= 0) {
        bd_reply_error(rq, 429, "rate_limited",
                       "card lookups by full number or Hash: are disabled for this key; search "
                       "by pattern (e.g. number:411111*1111) or ask your administrator");
        return false;
    }
    bd_rate_decision d;
    bd_limiter_take(rq->limiter, BD_BUDGET_EXACT, rq->key.id, per_day, EXACT_PERIOD_S, rq->now_us,
                    &d);
    if (d.allowed) {
        rq->exact_refused = false;
        return true;
    }
    rq->retry_after = d.retry_after;
    bd_reply_error(rq, 429, "rate_limited",
                   "this key's daily budget of %lld card lookups by full number or Hash: is used "
                   "up; retry in %lld seconds, or search by pattern (e.g. number:411111*1111)",
                   (long long)per_day, (long long)d.retry_after);
    return false;
}

/* Runs the search in one read view and writes the page, as JSON or (rq->csv) as CSV rows.
 * With lk, the page is the one the lookup dispatcher read (store/pg_batch.h): its cards,
 * count and data version stand for the store's search. */
static void run_card_search(bd_req *rq, const bd_card_query *q, int64_t page, int64_t size,
                            bd_pg_lookup *lk)
{
    int64_t total = 0;
    card_page cp = {.rq = rq, .page = page, .size = size, .found = &total};
    bd_result r = bd_store_read_begin(rq->store);
    if (r == BD_OK && lk) {
        r = lk->result;
        if (r == BD_OK) {
            if (lk->has_version)
                bd_pg_batch_note_version(rq->store, lk->version);
            total = lk->found;
            bd_pg_batch_each_card(lk, write_card, &cp);
        }
        bd_pg_batch_release(lk);
    } else if (r == BD_OK) {
        r = bd_store_card_search(rq->store, q, &total, write_card, &cp);
    }
    bd_store_read_end(rq->store);
    if (r != BD_OK) {
        bd_reply_store_error(rq, r);
        return;
    }
    if (rq->csv) {
        if (!cp.head)
            write_csv_head(&cp);
        rq->records = cp.in_page;
        if (cp.failed)
            bd_reply_error(rq, 500, "internal_error",
                           "the response could not be built; quote request id %s to support",
                           rq->request_id);
        return;
    }
    if (!cp.head)
        write_head(&cp);
    rq->records = cp.in_page;
    bd_json *w = &rq->json;
    bd_json_array_end(w);
    bd_json_object_end(w);
    bd_reply_finish(rq);
}

/* ---- waiting for the lookup dispatcher -------------------------------------------------- */

/* A BIN page or an owner word's page handed to the lookup dispatcher: what it needs on
 * resumption. The query's conditions live in the plan's own memory, which the deferral
 * owns (the lookup borrows the owner word and its range from them). */
typedef struct {
    bd_pg_wait w; /* first: the deferral */
    bd_card_query q;
    bd_card_plan plan;
    int64_t page, size;
} deferred_cards;

static void cards_finish(bd_deferred *base, void *rqp)
{
    deferred_cards *d = (deferred_cards *)base;
    run_card_search(rqp, &d->q, d->page, d->size, bd_pg_wait_lookup(&d->w));
}

static void cards_free(bd_deferred *base)
{
    deferred_cards *d = (deferred_cards *)base;
    bd_pg_wait_end(&d->w);
    bd_card_plan_free(&d->plan);
    free(d);
}

/* Hands a BIN page or an owner word's page to the dispatcher when it takes it and other
 * searches are in progress; the plan is then the deferral's. */
static bd_pg_route defer_cards(struct bd_server *srv, bd_req *rq, const bd_card_query *q,
                               const bd_card_plan *plan, int64_t page, int64_t size)
{
    char bin[7];
    bd_slice word, low, high;
    struct bd_pg_batch *b;
    bool by_bin = bd_pg_batch_bin_page(q, bin);
    bool by_owner = !by_bin && bd_pg_batch_owner_page(q, &word, &low, &high);
    bd_pg_route route = bd_pg_wait_route(srv, rq, by_bin || by_owner, &b);
    if (route != BD_PG_WAIT)
        return route;
    deferred_cards *d = bd_pg_wait_new(b, sizeof *d);
    if (!d)
        return BD_PG_HERE;
    d->q = *q;
    d->plan = *plan;
    d->page = page;
    d->size = size;
    if (by_bin) {
        d->w.lk.kind = BD_PG_LOOKUP_BIN;
        memcpy(d->w.lk.bin, bin, sizeof d->w.lk.bin);
    } else {
        d->w.lk.kind = BD_PG_LOOKUP_OWNER;
        d->w.lk.email = word; /* in the plan's memory, now the deferral's */
        d->w.lk.low = low;
        d->w.lk.high = high;
    }
    d->w.lk.offset = q->offset;
    d->w.lk.limit = q->limit;
    bd_pg_wait_init(&d->w, rq, b, cards_finish, cards_free);
    return BD_PG_WAIT;
}

void bd_handle_card_search(struct bd_server *srv, bd_req *rq, bd_slice arg)
{
    (void)arg;
    static const char *const allowed[] = {"page", "size", "sort", "query", NULL};
    static const char *const repeatable[] = {"sort", NULL};
    int64_t page, size;
    if (!bd_scope_check_cards(srv, rq) || /* cards carry no domain: given to a key or not */
        !bd_params_check(rq, allowed, repeatable) ||
        !bd_param_int(rq, "page", 0, MAX_DEPTH_ROWS, 0, &page) ||
        !bd_param_int(rq, "size", 1, 1000, 20, &size))
        return;
    if (page * size > MAX_DEPTH_ROWS) {
        bd_reply_error(rq, 422, "validation_error",
                       "page * size must not exceed %d; narrow the query instead of paging "
                       "deeper",
                       MAX_DEPTH_ROWS);
        return;
    }
    bd_card_query q;
    memset(&q, 0, sizeof q);
    if (!parse_sort(rq, &q))
        return;
    bd_slice text = {"", 0};
    bd_param_get(rq, "query", &text);
    bd_card_plan plan;
    bd_query_error qerr;
    bd_result r = bd_card_plan_build(text, rq->secret, &plan, &qerr);
    if (r == BD_ERR_INVALID) {
        bd_reply_error(rq, 422, "validation_error", "query: %s", qerr.message);
        return;
    }
    if (r != BD_OK) {
        bd_reply_store_error(rq, r);
        return;
    }
    if (plan.exact && !take_exact_lookup(rq)) {
        bd_card_plan_free(&plan);
        return;
    }
    q.where = bd_card_plan_root(&plan);
    rq->csv =
        bd_accept_prefers_csv(MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, "Accept"));
    q.offset = page * size;
    q.limit = (int)size;
    bd_pg_route route = defer_cards(srv, rq, &q, &plan, page, size);
    if (route == BD_PG_WAIT)
        return; /* answered when the dispatcher is done; the plan is the deferral's now */
    run_card_search(rq, &q, page, size, NULL);
    bd_card_plan_free(&plan);
    if (route == BD_PG_ALONE)
        bd_pg_wait_alone_end(srv);
}
