/* CSV pages of the searches (search_csv.h). */
#include <stdio.h>
#include <string.h>

#include "core/csv_out.h"
#include "v7/record_view.h"
#include "v7/search_csv.h"
#include "ingest/mask.h"

static const char *const RECORD_COLUMNS[] = {
    "breach_id",   "breach_name",     "breach_date",  "user_name",       "first_name",
    "last_name",   "email",           "email_domain", "phone_number",    "ip_address",
    "bitcoin_address", "password",    "password_hash", "social_security_number",
    "other_attributes", "severity",   NULL};

static const char *const CARD_COLUMNS[] = {
    "id",       "createdAt", "bank",      "number",          "owner",
    "cvv",      "expireDate", "cvssScore", "leakId",         "leakName",
    "leakPublishDate", "leakDiscoverDate", "leakSize", "leakTags", NULL};

static void begin(bd_req *rq, const char *const *columns)
{
    bd_reply_begin(rq, 200);
    rq->content_type = "text/csv; charset=utf-8";
    if (bd_csv_header(rq->body, columns) != BD_OK)
        bd_reply_error(rq, 500, "internal_error", "the response could not be built");
}

void bd_csv_records_begin(bd_req *rq)
{
    begin(rq, RECORD_COLUMNS);
}

void bd_csv_cards_begin(bd_req *rq)
{
    begin(rq, CARD_COLUMNS);
}

static int take_breach(void *ctx, const bd_breach_row *b)
{
    bd_csv_breach_memo *m = ctx;
    size_t n = b->uuid.len < BD_UUID_LEN ? b->uuid.len : BD_UUID_LEN;
    memcpy(m->uuid, b->uuid.ptr, n);
    m->uuid[n] = '\0';
    n = b->source_name.ptr ? b->source_name.len : 0;
    if (n >= sizeof m->name) /* a name cut inside a UTF-8 sequence is still text for CSV */
        n = sizeof m->name - 1;
    if (n)
        memcpy(m->name, b->source_name.ptr, n);
    m->name[n] = '\0';
    return 0;
}

bd_result bd_csv_record(bd_req *rq, bd_csv_breach_memo *m, const bd_record_row *r)
{
    if (m->id != r->breach_id) {
        m->uuid[0] = m->name[0] = '\0';
        bd_result got = bd_store_breach_by_id(rq->store, r->breach_id, take_breach, m);
        if (got != BD_OK && got != BD_ERR_NOT_FOUND)
            return got;
        m->id = r->breach_id;
    }
    char date[16];
    unsigned d = (unsigned)r->breach_date % 100000000u;
    snprintf(date, sizeof date, "%04u-%02u-%02u", d / 10000, d / 100 % 100, d % 100);
    bd_buf *b = rq->body;
    const bd_slice cells[] = {
        bd_slice_from(m->uuid), bd_slice_from(m->name), bd_slice_from(date), r->user_name,
        r->first_name, r->last_name, r->email, r->email_domain, r->phone_number,
        r->ip_address, r->bitcoin_address, r->password_masked, r->password_hash,
        r->ssn_masked, r->other_attributes, bd_slice_from(bd_severity_name(r->severity)),
    };
    bd_result res = BD_OK;
    for (size_t i = 0; res == BD_OK && i < sizeof cells / sizeof cells[0]; i++)
        res = bd_csv_cell(b, cells[i], i == 0);
    return res == BD_OK ? bd_csv_row_end(b) : res;
}

bd_result bd_csv_card(bd_req *rq, const bd_card_row *c)
{
    bd_buf *b = rq->body;
    bd_result r = bd_csv_cell(b, c->id, true);
    const bd_slice before[] = {c->created_at, c->bank, c->number_masked, c->owner,
                               bd_mask_cvv_shown(c->cvv), c->expire_date};
    for (size_t i = 0; r == BD_OK && i < sizeof before / sizeof before[0]; i++)
        r = bd_csv_cell(b, before[i], false);
    if (r == BD_OK)
        r = bd_csv_double(b, c->cvss, c->has_cvss, false);
    const bd_slice after[] = {c->leak_id, c->leak_name, c->leak_publish_date,
                              c->leak_discover_date};
    for (size_t i = 0; r == BD_OK && i < sizeof after / sizeof after[0]; i++)
        r = bd_csv_cell(b, after[i], false);
    if (r == BD_OK)
        r = c->has_leak_size ? bd_csv_int(b, c->leak_size, false) : bd_csv_cell(b, (bd_slice){0}, false);
    if (r == BD_OK)
        r = bd_csv_cell(b, c->leak_tags, false);
    return r == BD_OK ? bd_csv_row_end(b) : r;
}

void bd_reply_header_int(bd_req *rq, const char *name, int64_t v)
{
    char t[24];
    snprintf(t, sizeof t, "%lld", (long long)v);
    bd_reply_header(rq, name, t);
}
