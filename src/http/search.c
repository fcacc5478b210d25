/* GET {base}/breach-search: identity lookup with filters and signed keyset paging. */
#include <sodium.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "auth/token.h"
#include "http/request.h"
#include "ingest/normalize.h"

/* Filters that take a specific value besides yes/no (the interface names these five). */
static bool takes_value(bd_id_type t)
{
    return t == BD_ID_PASSWORD || t == BD_ID_IP || t == BD_ID_USERNAME || t == BD_ID_PHONE ||
           t == BD_ID_SSN;
}

/* Normalised value and lookup key of one identity value. Passwords and SSNs are looked up
 * by their keyed hash, exactly as the importer stored them. */
typedef struct {
    char norm[BD_NORM_MAX + 1];
    uint8_t mac[BD_MAC_LEN];
    bd_slice key;
} lookup_key;

static bool make_key(bd_req *rq, bd_id_type t, bd_slice v, const char *what, lookup_key *out)
{
    size_t n;
    const char *why = NULL;
    if (bd_normalize(t, v, out->norm, &n, &why) != BD_OK) {
        bd_reply_error(rq, 422, "validation_error", "%s: %s", what,
                       why ? why : "not a valid value");
        return false;
    }
    if (t == BD_ID_PASSWORD || t == BD_ID_SSN) {
        bd_keyed_hash(rq->secret, t == BD_ID_PASSWORD ? "password" : "ssn", out->norm, n, out->mac);
        sodium_memzero(out->norm, n);
        out->key = (bd_slice){(const char *)out->mac, sizeof out->mac};
    } else {
        out->key = (bd_slice){out->norm, n};
    }
    return true;
}

static const char *severity_name(bd_severity s)
{
    return s == BD_SEVERITY_HIGH ? "High" : s == BD_SEVERITY_MEDIUM ? "Medium" : "Low";
}

/* breached_data: a field with no value is null, never "". */
#define OPT(w, key, v) BD_JSON_MEMBER_STRING(w, key, v, true)

typedef struct {
    bd_json *w;
    bd_req *rq;
    bd_result err; /* a store failure while writing a record */
    int limit;
    int written;
    bool more;
    int32_t last_date;
    int64_t last_id;
} page;

static int write_record(void *ctx, const bd_record_row *r)
{
    page *pg = ctx;
    if (pg->written == pg->limit) { /* the probe row past the page: more follow */
        pg->more = true;
        return 1;
    }
    bd_json *w = pg->w;
    bd_json_object_begin(w);
    BD_JSON_KEY(w, "breached_data");
    bd_json_object_begin(w);
    OPT(w, "user_name", r->user_name);
    OPT(w, "first_name", r->first_name);
    OPT(w, "last_name", r->last_name);
    OPT(w, "email", r->email);
    OPT(w, "email_domain", r->email_domain);
    OPT(w, "phone_number", r->phone_number);
    OPT(w, "ip_address", r->ip_address);
    OPT(w, "bitcoin_address", r->bitcoin_address);
    OPT(w, "password", r->password_masked);
    OPT(w, "password_hash", r->password_hash);
    OPT(w, "other_attributes", r->other_attributes);
    OPT(w, "social_security_number", r->ssn_masked);
    BD_JSON_KEY(w, "severity");
    bd_json_cstring(w, severity_name(r->severity));
    bd_json_object_end(w);
    BD_JSON_KEY(w, "breach_details");
    pg->err = bd_write_breach_details(pg->rq, r->breach_id);
    if (pg->err != BD_OK)
        return 1;
    bd_json_object_end(w);
    pg->written++;
    pg->last_date = r->breach_date;
    pg->last_id = r->id;
    return 0;
}

/* Digest of everything that defines the search, so a token only continues its own. */
static void search_digest(const bd_record_query *q, uint8_t out[BD_SEARCH_DIGEST_LEN])
{
    crypto_generichash_state st;
    crypto_generichash_init(&st, NULL, 0, BD_SEARCH_DIGEST_LEN);
    uint8_t head[2] = {1, (uint8_t)q->field};
    crypto_generichash_update(&st, head, sizeof head);
    uint32_t len = (uint32_t)q->key.len;
    crypto_generichash_update(&st, (const uint8_t *)&len, sizeof len);
    crypto_generichash_update(&st, (const uint8_t *)q->key.ptr, q->key.len);
    for (int f = 0; f < BD_FIELD_COUNT; f++) {
        uint8_t mode = (uint8_t)q->filter[f].mode;
        crypto_generichash_update(&st, &mode, 1);
        if (q->filter[f].mode == BD_FILTER_EQUALS) {
            len = (uint32_t)q->filter[f].key.len;
            crypto_generichash_update(&st, (const uint8_t *)&len, sizeof len);
            crypto_generichash_update(&st, (const uint8_t *)q->filter[f].key.ptr,
                                      q->filter[f].key.len);
        }
    }
    crypto_generichash_final(&st, out, BD_SEARCH_DIGEST_LEN);
}

static void write_not_found(bd_req *rq)
{
    bd_reply_begin(rq, 404);
    bd_json *w = &rq->json;
    bd_json_object_begin(w);
    bd_json_key(w, "error");
    bd_json_cstring(w, "not_found");
    bd_json_key(w, "message");
    bd_json_cstring(w, "no records found");
    bd_json_key(w, "records_found");
    bd_json_int(w, 0);
    bd_json_key(w, "pagination_token");
    bd_json_null(w);
    bd_json_key(w, "data");
    bd_json_array_begin(w);
    bd_json_array_end(w);
    bd_json_object_end(w);
    bd_reply_finish(rq);
}

void bd_note_account(bd_req *rq, int type, bd_slice key)
{
    if (!rq->log_account || key.len > BD_NORM_MAX)
        return;
    /* The log names the searched account only by a keyed hash (type and lookup key). */
    uint8_t mac[BD_MAC_LEN];
    uint8_t tagged[1 + BD_NORM_MAX + 1];
    tagged[0] = (uint8_t)type;
    memcpy(tagged + 1, key.ptr, key.len);
    bd_keyed_hash(rq->secret, "log-account", tagged, key.len + 1, mac);
    sodium_bin2hex(rq->account_hash, sizeof rq->account_hash, mac, 16);
}

void bd_handle_breach_search(bd_req *rq)
{
    static const char *const allowed[] = {"type",
                                          "account",
                                          "paging_token",
                                          "number_of_records",
                                          "email",
                                          "email_domain",
                                          "phone_number",
                                          "username",
                                          "ip_address",
                                          "social_security_number",
                                          "password",
                                          "password_hash",
                                          "bitcoin_address",
                                          NULL};
    if (!bd_params_check(rq, allowed, NULL))
        return;
    bd_slice type_text, account;
    if (!bd_param_get(rq, "type", &type_text)) {
        bd_reply_error(rq, 400, "bad_request", "the 'type' parameter is required");
        return;
    }
    if (!bd_param_get(rq, "account", &account)) {
        bd_reply_error(rq, 400, "bad_request", "the 'account' parameter is required");
        return;
    }
    bd_id_type type;
    if (!bd_id_type_parse(type_text, &type)) {
        bd_reply_error(rq, 422, "validation_error",
                       "'type' must be one of email, email_domain, phone_number (phonenumber), "
                       "username, ip_address (ipaddress), social_security_number, password, "
                       "password_hash, bitcoin_address");
        return;
    }
    int64_t limit;
    if (!bd_param_int(rq, "number_of_records", 1, 1000, 100, &limit))
        return;

    bd_record_query q;
    memset(&q, 0, sizeof q);
    q.field = (bd_field)type;
    lookup_key account_key;
    if (!make_key(rq, type, account, "account", &account_key))
        return;
    q.key = account_key.key;

    lookup_key filter_keys[BD_ID_COUNT];
    for (int f = 0; f < BD_ID_COUNT; f++) {
        const char *name = bd_id_type_name((bd_id_type)f);
        bd_slice v;
        if (!bd_param_get(rq, name, &v))
            continue;
        if (v.len == 3 && strncasecmp(v.ptr, "yes", 3) == 0) {
            q.filter[f].mode = BD_FILTER_PRESENT;
        } else if (v.len == 2 && strncasecmp(v.ptr, "no", 2) == 0) {
            q.filter[f].mode = BD_FILTER_ABSENT;
        } else if (takes_value((bd_id_type)f)) {
            if (!make_key(rq, (bd_id_type)f, v, name, &filter_keys[f]))
                return;
            q.filter[f].mode = BD_FILTER_EQUALS;
            q.filter[f].key = filter_keys[f].key;
        } else {
            bd_reply_error(rq, 422, "validation_error", "the '%s' filter takes yes or no", name);
            return;
        }
    }

    bd_note_account(rq, type, q.key);
    rq->records = 0;
    int64_t now = (int64_t)time(NULL);
    bd_token tok = {.issued_at = now, .key_id = rq->key.id};
    bd_slice token_text;
    bool continuing = bd_param_get(rq, "paging_token", &token_text);
    if (continuing) {
        /* The digest is needed only where a token is read or written. */
        uint8_t digest[BD_SEARCH_DIGEST_LEN];
        search_digest(&q, digest);
        bd_token_status ts = bd_token_decode(rq->secret, token_text, now, rq->key.id, digest, &tok);
        if (ts != BD_TOKEN_OK) {
            bd_reply_error(rq, 422, "validation_error", "%s", bd_token_status_message(ts));
            return;
        }
        q.has_after = true;
        q.after_date = tok.after_date;
        q.after_id = tok.after_id;
    }

    /* The envelope's head (count and token) is spliced in front of the records afterwards,
     * since the token depends on the page's last record. A continued page keeps the count
     * its token carries. */
    bd_result r = bd_store_read_begin(rq->store);
    if (r != BD_OK) {
        bd_store_read_end(rq->store);
        bd_reply_store_error(rq, r);
        return;
    }
    bd_reply_begin(rq, 200);
    bd_json *w = &rq->json;
    bd_json_object_begin(w);
    size_t head_at = rq->body->len;
    bd_json_key(w, "data");
    bd_json_array_begin(w);
    page pg = {.w = w, .rq = rq, .err = BD_OK, .limit = (int)limit};
    q.limit = (int)limit + 1;
    r = bd_store_record_search(rq->store, &q, write_record, &pg,
                               continuing ? NULL : &tok.records_found);
    if (r == BD_OK)
        r = pg.err;
    bd_store_read_end(rq->store);
    if (r != BD_OK) {
        bd_reply_store_error(rq, r);
        return;
    }
    if (tok.records_found == 0) {
        write_not_found(rq);
        return;
    }
    rq->records = pg.written;
    bd_json_array_end(w);
    bd_json_object_end(w);
    if (bd_json_result(w) != BD_OK) {
        bd_reply_finish(rq);
        return;
    }
    char token[BD_TOKEN_TEXT_MAX + 1] = "";
    if (pg.more) {
        if (!continuing) /* a decoded token already holds the digest */
            search_digest(&q, tok.search);
        tok.after_date = pg.last_date;
        tok.after_id = pg.last_id;
        bd_token_encode(rq->secret, &tok, token);
    }
    char head[64 + BD_TOKEN_TEXT_MAX];
    int hl =
        snprintf(head, sizeof head, "\"records_found\":%lld,\"pagination_token\":%s%s%s,",
                 (long long)tok.records_found, pg.more ? "\"" : "null", token, pg.more ? "\"" : "");
    bd_buf *b = rq->body;
    if (hl < 0 || (size_t)hl >= sizeof head ||
        bd_buf_append(b, head, (size_t)hl) != BD_OK) { /* grow by hl, then shift the tail */
        bd_reply_error(rq, 500, "internal_error", "response too large; request id %s",
                       rq->request_id);
        return;
    }
    memmove(b->data + head_at + hl, b->data + head_at, b->len - (size_t)hl - head_at);
    memcpy(b->data + head_at, head, (size_t)hl);
}
