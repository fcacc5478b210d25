/* GET {base}/breaches and GET {base}/breaches/{uuid}: the breach catalog; the breach
 * objects inside search records. */
#include <stdlib.h>
#include <string.h>

#include "v7/handlers.h"
#include "core/date.h"
#include "core/uuid.h"
#include "http/request.h"
#include "http/server_impl.h"
#include "v7/kept_reply.h"

/* The interface types these fields as strings, so an absent value is written as "". */
static void text(bd_json *w, const char *key, bd_slice v)
{
    bd_json_key(w, key);
    bd_json_string(w, v.ptr ? v : (bd_slice){"", 0});
}

void bd_write_breach(bd_json *w, const bd_breach_row *b, bd_breach_shape shape)
{
    char dmy[12];
    bd_datetime t = {
        .y = b->date_leaked / 10000, .m = b->date_leaked / 100 % 100, .d = b->date_leaked % 100};
    bd_date_format_dmy(&t, dmy);
    bd_json_object_begin(w);
    text(w, "uuid", b->uuid);
    text(w, shape == BD_BREACH_LIST ? "source_name" : "site_name", b->source_name);
    text(w, "site_domain", b->site_domain);
    bd_json_key(w, "date_leaked");
    bd_json_cstring(w, dmy);
    if (shape == BD_BREACH_LIST)
        text(w, "breach_type", b->breach_type);
    text(w, "site_categories", b->site_categories);
    text(w, "site_country", b->site_country);
    text(w, "site_language", b->site_language);
    text(w, "password_types", b->password_types);
    text(w, "leaked_data_types", b->leaked_data_types);
    text(w, "description", b->description);
    bd_json_member_string(w, "service_article_url", b->service_article_url, false);
    bd_json_key(w, "pwned_count");
    bd_json_int(w, b->pwned_count);
    /* HEROIC's published document (OpenAPI 7.3.0) has these on every breach object, and
     * its clients read them there; appended, so the interface's fields keep their order. */
    if (shape == BD_BREACH_LIST)
        text(w, "site_name", b->source_name);
    bd_json_member_string(w, "site_logo", b->site_logo, false);
    bd_json_member_string(w, "heroic_article_url", b->service_article_url, false);
    bd_json_object_end(w);
}

static int write_list_item(void *ctx, const bd_breach_row *b)
{
    bd_req *rq = ctx;
    bd_write_breach(&rq->json, b, BD_BREACH_LIST);
    rq->records++;
    return 0;
}

/* The catalog reply, inside an open read view. */
static bd_result write_list(bd_req *rq, int limit, bd_breach_cb cb, void *ctx)
{
    bd_reply_begin(rq, 200);
    bd_json_array_begin(&rq->json);
    rq->records = 0;
    bd_result r = bd_store_breach_list(rq->store, limit, cb, ctx);
    if (r != BD_OK)
        return r;
    bd_json_array_end(&rq->json);
    bd_reply_finish(rq);
    return BD_OK;
}

static bd_result build_catalog(bd_req *rq, int64_t limit)
{
    return write_list(rq, (int)limit, write_list_item, rq);
}

/* The catalog is the same bytes for every key until the data version moves: a worker keeps
 * it per number_of_records and sends it as it is. */
static const bd_kept_reply_kind CATALOG = {build_catalog, true, true};

void bd_handle_breach_list(struct bd_server *srv, bd_req *rq, bd_slice arg)
{
    (void)arg;
    static const char *const allowed[] = {"number_of_records", NULL};
    int64_t limit;
    if (!bd_params_check(rq, allowed, NULL) ||
        !bd_param_int(rq, "number_of_records", 1, 1000, 0, &limit))
        return;
    bd_reply_kept(srv, rq, &CATALOG, limit);
}

void bd_reply_breach_list(bd_req *rq, int limit, bd_breach_cb cb, void *ctx)
{
    bd_result r = bd_store_read_begin(rq->store);
    if (r == BD_OK)
        r = write_list(rq, limit, cb, ctx);
    bd_store_read_end(rq->store);
    if (r != BD_OK)
        bd_reply_store_error(rq, r);
}

static int write_single(void *ctx, const bd_breach_row *b)
{
    bd_write_breach(ctx, b, BD_BREACH_SINGLE);
    return 0;
}

void bd_handle_breach_get(struct bd_server *srv, bd_req *rq, bd_slice uuid)
{
    (void)srv;
    char canon[BD_UUID_LEN + 1];
    if (!bd_params_check(rq, NULL, NULL))
        return;
    if (!bd_uuid_canonical(uuid, canon)) {
        bd_reply_error(rq, 422, "validation_error",
                       "the breach id must be a UUID like 3f2b8c1e-0d4a-4e1b-9c7d-2a5e6f708192");
        return;
    }
    bd_reply_begin(rq, 200);
    bd_result r = bd_store_read_begin(rq->store);
    if (r == BD_OK)
        r = bd_store_breach_get(rq->store, canon, write_single, &rq->json);
    bd_store_read_end(rq->store);
    if (r == BD_ERR_NOT_FOUND) {
        bd_reply_error(rq, 404, "not_found", "no breach has the id %s", canon);
        return;
    }
    if (r != BD_OK) {
        bd_reply_store_error(rq, r);
        return;
    }
    bd_reply_finish(rq);
}

/* ---- breach objects of search records ------------------------------------------------ */

#define BREACH_JSON_SLOTS 256          /* direct-mapped by breach id */
#define BREACH_JSON_BYTES (256 * 1024) /* about 500 breach objects */

struct bd_breach_json {
    uint64_t version; /* the store's data version the entries were written under */
    struct {
        int64_t id;
        size_t at, len; /* bytes in text; len 0: empty slot */
    } slot[BREACH_JSON_SLOTS];
    bd_buf text;
};

bd_breach_json *bd_breach_json_new(void)
{
    bd_breach_json *c = calloc(1, sizeof *c);
    if (c)
        bd_buf_init(&c->text, BREACH_JSON_BYTES);
    return c;
}

void bd_breach_json_free(bd_breach_json *c)
{
    if (!c)
        return;
    bd_buf_free(&c->text);
    free(c);
}

static void forget_all(bd_breach_json *c)
{
    for (size_t i = 0; i < BREACH_JSON_SLOTS; i++)
        c->slot[i].len = 0;
    bd_buf_reset(&c->text);
}

static int write_details(void *ctx, const bd_breach_row *b)
{
    bd_write_breach(ctx, b, BD_BREACH_DETAILS);
    return 0;
}

bd_result bd_write_breach_details(bd_req *rq, int64_t breach_id)
{
    bd_breach_json *c = rq->breach_json;
    bd_json *w = &rq->json;
    if (c && !rq->breach_json_checked) {
        uint64_t v = bd_store_data_version(rq->store);
        if (v != c->version) {
            forget_all(c);
            c->version = v;
        }
        rq->breach_json_checked = true;
    }
    size_t k = (size_t)((uint64_t)breach_id % BREACH_JSON_SLOTS);
    if (c && c->slot[k].len && c->slot[k].id == breach_id) {
        bd_json_raw(w, (bd_slice){c->text.data + c->slot[k].at, c->slot[k].len});
        return BD_OK;
    }
    size_t start = rq->body->len;
    bd_result r = bd_store_breach_by_id(rq->store, breach_id, write_details, w);
    if (r == BD_ERR_NOT_FOUND) { /* cannot happen in one read view; never a broken body */
        bd_json_null(w);
        return BD_OK;
    }
    if (r != BD_OK || !c || bd_json_result(w) != BD_OK)
        return r;
    /* After the member name nothing precedes the object, so these bytes are it whole. */
    bd_slice made = {rq->body->data + start, rq->body->len - start};
    if (made.len == 0 || made.ptr[0] != '{')
        return BD_OK;
    if (c->text.len + made.len > BREACH_JSON_BYTES)
        forget_all(c);
    if (bd_buf_append(&c->text, made.ptr, made.len) == BD_OK) {
        c->slot[k].id = breach_id;
        c->slot[k].at = c->text.len - made.len;
        c->slot[k].len = made.len;
    }
    return BD_OK;
}
