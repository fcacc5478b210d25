/* GET {base}/breaches and GET {base}/breaches/{uuid}: the breach catalog. */
#include <string.h>

#include "core/date.h"
#include "core/uuid.h"
#include "http/request.h"

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
    if (shape == BD_BREACH_DETAILS)
        bd_json_member_string(w, "site_logo", b->site_logo, false);
    bd_json_object_end(w);
}

static int write_list_item(void *ctx, const bd_breach_row *b)
{
    bd_req *rq = ctx;
    bd_write_breach(&rq->json, b, BD_BREACH_LIST);
    rq->records++;
    return 0;
}

void bd_handle_breach_list(bd_req *rq)
{
    static const char *const allowed[] = {"number_of_records", NULL};
    int64_t limit;
    if (!bd_params_check(rq, allowed, NULL) ||
        !bd_param_int(rq, "number_of_records", 1, 1000, 0, &limit))
        return;
    bd_reply_begin(rq, 200);
    bd_json_array_begin(&rq->json);
    rq->records = 0;
    bd_result r = bd_store_read_begin(rq->store);
    if (r == BD_OK)
        r = bd_store_breach_list(rq->store, (int)limit, write_list_item, rq);
    bd_store_read_end(rq->store);
    if (r != BD_OK) {
        bd_reply_store_error(rq, r);
        return;
    }
    bd_json_array_end(&rq->json);
    bd_reply_finish(rq);
}

static int write_single(void *ctx, const bd_breach_row *b)
{
    bd_write_breach(ctx, b, BD_BREACH_SINGLE);
    return 0;
}

void bd_handle_breach_get(bd_req *rq, bd_slice uuid)
{
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
