/* GET {base}/breach-search: identity lookup with filters and signed keyset paging. */
#include <sodium.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <microhttpd.h>

#include "v7/handlers.h"
#include "auth/lookup_log.h"
#include "auth/token.h"
#include "http/accept.h"
#include "http/scope.h"
#include "v7/record_view.h"
#include "http/request.h"
#include "v7/search_csv.h"
#include "v7/search_token.h"
#include "ingest/normalize.h"
#include "v7/pg_wait.h"

/* Filters that take a specific value besides yes/no (the interface names these five). */
static bool takes_value(bd_id_type t)
{
    return t == BD_ID_PASSWORD || t == BD_ID_IP || t == BD_ID_USERNAME || t == BD_ID_PHONE ||
           t == BD_ID_SSN;
}

static bool make_key(bd_req *rq, bd_id_type t, bd_slice v, const char *what, bd_lookup_key *out)
{
    const char *why = NULL;
    if (bd_lookup_key_make(rq->secret, t, v, out, &why) != BD_OK) {
        bd_reply_error(rq, 422, "validation_error", "%s: %s", what,
                       why ? why : "not a valid value");
        return false;
    }
    return true;
}

bd_result bd_lookup_key_make(const uint8_t *secret, bd_id_type t, bd_slice v, bd_lookup_key *out,
                             const char **why)
{
    size_t n;
    *why = NULL;
    if (bd_normalize(t, v, out->norm, &n, why) != BD_OK)
        return BD_ERR_INVALID;
    if (t == BD_ID_PASSWORD || t == BD_ID_SSN) {
        bd_keyed_hash(secret, t == BD_ID_PASSWORD ? "password" : "ssn", out->norm, n, out->mac);
        sodium_memzero(out->norm, n);
        out->key = (bd_slice){(const char *)out->mac, sizeof out->mac};
    } else {
        out->key = (bd_slice){out->norm, n};
    }
    return BD_OK;
}

typedef struct {
    bd_json *w;
    bd_req *rq;
    bd_result err; /* a store failure while writing a record */
    int limit;
    int written;
    bool more;
    int32_t last_date;
    int64_t last_id;
    bd_csv_breach_memo memo; /* CSV pages: the breach of the last row */
} page;

static int write_record(void *ctx, const bd_record_row *r)
{
    page *pg = ctx;
    if (pg->written == pg->limit) { /* the probe row past the page: more follow */
        pg->more = true;
        return 1;
    }
    if (pg->rq->csv) {
        pg->err = bd_csv_record(pg->rq, &pg->memo, r);
        if (pg->err != BD_OK)
            return 1;
        pg->written++;
        pg->last_date = r->breach_date;
        pg->last_id = r->id;
        return 0;
    }
    bd_json *w = pg->w;
    bd_json_object_begin(w);
    BD_JSON_KEY(w, "breached_data");
    bd_write_breached_data(w, r);
    BD_JSON_KEY(w, "breach_details");
    pg->err = bd_write_breach_details(pg->rq, r->breach_id);
    if (pg->err != BD_OK)
        return 1;
    /* Also at the record's root, where HEROIC clients count and sort by it. */
    BD_JSON_KEY(w, "severity");
    bd_json_cstring(w, bd_severity_name(r->severity));
    bd_json_object_end(w);
    pg->written++;
    pg->last_date = r->breach_date;
    pg->last_id = r->id;
    return 0;
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

/* Everything one breach search holds while it runs: the query, the buffers its lookup keys
 * point into, and the paging token read or to be written. */
typedef struct {
    bd_record_query q;
    bd_lookup_key account_key;
    bd_lookup_key filter_keys[BD_ID_COUNT];
    bd_token tok;
    bool named;      /* the request names its search (else the token's is used) */
    bool continuing; /* a paging token was given */
} search;

static const char *const search_params[] = {"type",
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
                                            "website_domain",
                                            NULL};

/* Whether the request names its search (type, account or a filter), rather than leaving it
 * to the paging token. */
static bool names_search(const bd_req *rq)
{
    bd_slice v;
    for (const char *const *n = search_params; *n; n++)
        if (strcmp(*n, "paging_token") != 0 && strcmp(*n, "number_of_records") != 0 &&
            bd_param_opt(rq, *n, &v))
            return true;
    return false;
}

/* The filters of the request into s->q; false when one was refused (reply written). */
static bool read_filters(bd_req *rq, search *s)
{
    for (int f = 0; f < BD_ID_COUNT; f++) {
        const char *name = bd_id_type_name((bd_id_type)f);
        bd_slice v;
        if (!bd_param_opt(rq, name, &v))
            continue;
        if (v.len == 3 && strncasecmp(v.ptr, "yes", 3) == 0) {
            s->q.filter[f].mode = BD_FILTER_PRESENT;
        } else if (v.len == 2 && strncasecmp(v.ptr, "no", 2) == 0) {
            s->q.filter[f].mode = BD_FILTER_ABSENT;
        } else if (takes_value((bd_id_type)f)) {
            if (!make_key(rq, (bd_id_type)f, v, name, &s->filter_keys[f]))
                return false;
            s->q.filter[f].mode = BD_FILTER_EQUALS;
            s->q.filter[f].key = s->filter_keys[f].key;
        } else {
            bd_reply_error(rq, 422, "validation_error", "the '%s' filter takes yes or no", name);
            return false;
        }
    }
    return true;
}

/* type, account and the filters of the request into s->q; false when refused. */
static bool read_search(bd_req *rq, search *s)
{
    bd_slice type_text, account;
    if (!bd_param_get(rq, "type", &type_text)) {
        bd_reply_error(rq, 400, "bad_request", "the 'type' parameter is required");
        return false;
    }
    if (!bd_param_get(rq, "account", &account)) {
        bd_reply_error(rq, 400, "bad_request", "the 'account' parameter is required");
        return false;
    }
    bd_id_type type;
    if (!bd_id_type_parse(type_text, &type)) {
        bd_reply_error(rq, 422, "validation_error",
                       "'type' must be one of email, email_domain, phone_number (phonenumber), "
                       "username, ip_address (ipaddress), social_security_number, password, "
                       "password_hash, bitcoin_address, website_domain");
        return false;
    }
    s->q.field = (bd_field)type;
    if (!make_key(rq, type, account, "account", &s->account_key))
        return false;
    s->q.key = s->account_key.key;
    return read_filters(rq, s);
}

/* Opens the paging token; with names_own the request's search (already in s->q) must be the
 * token's, without it the token's search becomes s->q. False when refused (reply written). */
static bool read_token(bd_req *rq, search *s, bd_slice text, int64_t now)
{
    bool names_own = s->named;
    /* The digest is needed only where a token is read or written. */
    uint8_t digest[BD_SEARCH_DIGEST_LEN];
    if (names_own)
        bd_search_digest(&s->q, digest);
    bd_token_status ts =
        bd_token_decode(rq->secret, text, now, rq->key.id, names_own ? digest : NULL, &s->tok);
    if (ts != BD_TOKEN_OK) {
        bd_reply_error(rq, 422, "validation_error", "%s", bd_token_status_message(ts));
        return false;
    }
    if (!names_own) {
        bool carried = bd_search_carried(&s->tok, &s->q);
        if (carried) { /* sealed by us, so this holds; checked all the same */
            bd_search_digest(&s->q, digest);
            carried = sodium_memcmp(digest, s->tok.search, sizeof digest) == 0;
        }
        if (!carried) {
            bd_reply_error(rq, 422, "validation_error",
                           "this paging_token does not carry its search; send the same type, "
                           "account and filters with it");
            return false;
        }
    }
    s->continuing = true;
    s->q.has_after = true;
    s->q.after_date = s->tok.after_date;
    s->q.after_id = s->tok.after_id;
    return true;
}

void bd_note_account(bd_req *rq, int type, bd_slice key)
{
    if (rq->lookups) /* who searched for whom: the lookup log (auth/lookup_log.h) */
        bd_lookup_log_note(rq->lookups, rq->secret, rq->now_us / 1000000, rq->key.id, type, key);
    if (!rq->log_account)
        return;
    /* The log names the searched account only by a keyed hash (type and lookup key). */
    uint8_t mac[BD_MAC_LEN];
    uint8_t tagged[1 + BD_NORM_MAX + 1];
    size_t n = key.len <= BD_NORM_MAX + 1 ? key.len : BD_NORM_MAX + 1;
    tagged[0] = (uint8_t)type;
    memcpy(tagged + 1, key.ptr, n);
    bd_keyed_hash(rq->secret, "log-account", tagged, n + 1, mac);
    sodium_bin2hex(rq->account_hash, sizeof rq->account_hash, mac, 16);
}

/* Splices the envelope's head (count and token) in front of the records at head_at: the
 * token depends on the page's last record, so it is known only after them. */
/* The token of the page after pg, or "" when it is the last. */
static void next_token(bd_req *rq, search *s, const page *pg, char token[BD_TOKEN_TEXT_MAX + 1])
{
    token[0] = '\0';
    if (!pg->more)
        return;
    if (!s->continuing) /* a decoded token already holds the digest */
        bd_search_digest(&s->q, s->tok.search);
    if (s->named) /* else q's keys point into the token, which carries them already */
        bd_search_carry(&s->q, &s->tok);
    s->tok.after_date = pg->last_date;
    s->tok.after_id = pg->last_id;
    bd_token_encode(rq->secret, &s->tok, token);
}

static void write_head(bd_req *rq, search *s, const page *pg, size_t head_at)
{
    char token[BD_TOKEN_TEXT_MAX + 1];
    next_token(rq, s, pg, token);
    /* put together by hand, not printed: every search's reply has one */
    char num[24], head[64 + BD_TOKEN_TEXT_MAX];
    const char *parts[] = {"\"records_found\":", bd_i64_text(s->tok.records_found, num),
                           ",\"pagination_token\":", pg->more ? "\"" : "null", token,
                           pg->more ? "\"," : ","};
    size_t hl = 0;
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        size_t n = strlen(parts[i]);
        memcpy(head + hl, parts[i], n); /* at most 17 + 20 + 20 + 4 + the token + 2 bytes */
        hl += n;
    }
    bd_buf *b = rq->body;
    if (bd_buf_append(b, head, hl) != BD_OK) { /* grow by hl, then shift the tail */
        bd_reply_error(rq, 500, "internal_error", "response too large; request id %s",
                       rq->request_id);
        return;
    }
    memmove(b->data + head_at + hl, b->data + head_at, b->len - (size_t)hl - head_at);
    memcpy(b->data + head_at, head, (size_t)hl);
}

/* The CSV page's envelope: the count and the token as headers (X-Records-Found, and
 * X-Pagination-Token when more follow). */
static void finish_csv_page(bd_req *rq, search *s, const page *pg)
{
    char token[BD_TOKEN_TEXT_MAX + 1];
    next_token(rq, s, pg, token);
    bd_reply_header_int(rq, "X-Records-Found", s->tok.records_found);
    if (token[0])
        bd_reply_header(rq, "X-Pagination-Token", token);
}

/* The JSON page's envelope: the records' array closed, then the count and the token
 * spliced in front of it. */
static void finish_json_page(bd_req *rq, search *s, const page *pg, size_t head_at)
{
    bd_json_array_end(&rq->json);
    bd_json_object_end(&rq->json);
    if (bd_json_result(&rq->json) != BD_OK) {
        bd_reply_finish(rq);
        return;
    }
    write_head(rq, s, pg, head_at);
}

/* Runs the search in one read view and writes the reply, as JSON or (rq->csv) as CSV rows.
 * A continued page keeps the count its token carries. Nothing found is the JSON 404 either
 * way (an error is never CSV). With lk, the page is the one the lookup dispatcher read
 * (store/pg_batch.h): its rows, count and data version stand for the store's search. */
static void run_search(bd_req *rq, search *s, int limit, bd_pg_lookup *lk)
{
    bd_result r = bd_store_read_begin(rq->store);
    if (r != BD_OK) {
        bd_store_read_end(rq->store);
        bd_reply_store_error(rq, r);
        return;
    }
    size_t head_at = 0; /* JSON: where the envelope's head goes */
    if (rq->csv) {
        bd_csv_records_begin(rq); /* a header row past the body's cap: a 500 already */
    } else {
        bd_reply_begin(rq, 200);
        bd_json_object_begin(&rq->json);
        head_at = rq->body->len;
        bd_json_key(&rq->json, "data");
        bd_json_array_begin(&rq->json);
    }
    page pg = {.w = &rq->json, .rq = rq, .err = BD_OK, .limit = limit};
    s->q.limit = limit + 1;
    if (rq->status == 200 && lk) {
        r = lk->result;
        if (r == BD_OK) {
            if (lk->has_version)
                bd_pg_batch_note_version(rq->store, lk->version);
            if (!s->continuing)
                s->tok.records_found = lk->found;
            bd_pg_batch_each(lk, write_record, &pg);
        }
        bd_pg_batch_release(lk);
    } else if (rq->status == 200) {
        r = bd_store_record_search(rq->store, &s->q, write_record, &pg,
                                   s->continuing ? NULL : &s->tok.records_found);
    }
    if (r == BD_OK)
        r = pg.err;
    bd_store_read_end(rq->store);
    if (r != BD_OK) {
        bd_reply_store_error(rq, r);
        return;
    }
    if (rq->status != 200)
        return;
    if (s->tok.records_found == 0 && rq->empty_search_status != 200) {
        rq->content_type = NULL; /* the 404 is the JSON one */
        write_not_found(rq);
        return;
    }
    rq->records = pg.written;
    if (rq->csv)
        finish_csv_page(rq, s, &pg);
    else
        finish_json_page(rq, s, &pg, head_at);
}

/* ---- waiting for the lookup dispatcher -------------------------------------------------- */

/* A search handed to the lookup dispatcher: what it needs on resumption. */
typedef struct {
    bd_pg_wait w; /* first: the deferral */
    search s;
    int limit;
} deferred_search;

/* Whether the dispatcher answers q: an email search with no filter and no tenant's scope,
 * which the fixed statements answer (store/pg/records.c). */
static bool dispatchable(const bd_record_query *q)
{
    if (q->field != BD_FIELD_EMAIL || q->scope_tenant)
        return false;
    for (int f = 0; f < BD_FIELD_COUNT; f++)
        if (q->filter[f].mode != BD_FILTER_NONE)
            return false;
    return true;
}

/* A slice that pointed into the search at from points into its copy at to. */
static void rebase(bd_slice *v, const search *from, search *to)
{
    const char *lo = (const char *)from, *hi = lo + sizeof *from;
    if (v->ptr && v->ptr >= lo && v->ptr < hi)
        v->ptr = (const char *)to + (v->ptr - lo);
}

static void deferred_finish(bd_deferred *base, void *rqp)
{
    deferred_search *d = (deferred_search *)base;
    run_search(rqp, &d->s, d->limit, bd_pg_wait_lookup(&d->w));
}

static void deferred_free(bd_deferred *base)
{
    deferred_search *d = (deferred_search *)base;
    bd_pg_wait_end(&d->w);
    free(d);
}

/* Hands the search to the dispatcher when it takes it and others are in progress. */
static bd_pg_route defer_search(struct bd_server *srv, bd_req *rq, const search *s, int limit)
{
    struct bd_pg_batch *b;
    bd_pg_route route = bd_pg_wait_route(srv, rq, dispatchable(&s->q), &b);
    if (route != BD_PG_WAIT)
        return route;
    deferred_search *d = bd_pg_wait_new(b, sizeof *d);
    if (!d)
        return BD_PG_HERE;
    memcpy(&d->s, s, sizeof *s);
    rebase(&d->s.q.key, s, &d->s);
    if (s->named)
        rebase(&d->s.account_key.key, s, &d->s);
    d->limit = limit;
    d->w.lk.email = d->s.q.key;
    d->w.lk.has_after = d->s.q.has_after;
    d->w.lk.after_date = d->s.q.after_date;
    d->w.lk.after_id = d->s.q.after_id;
    d->w.lk.limit = limit + 1;
    d->s.q.limit = limit + 1;
    bd_pg_wait_init(&d->w, rq, b, deferred_finish, deferred_free);
    return BD_PG_WAIT;
}

void bd_handle_breach_search(struct bd_server *srv, bd_req *rq, bd_slice arg)
{
    (void)arg;
    bd_slice misnamed;
    if (bd_param_opt(rq, "pagination_token", &misnamed)) { /* the reply's name, not the query's */
        bd_reply_error(rq, 400, "bad_request",
                       "unknown query parameter 'pagination_token': a reply's pagination_token "
                       "goes back in paging_token");
        return;
    }
    if (!bd_params_check(rq, search_params, NULL))
        return;
    search s;
    memset(&s.q, 0, sizeof s.q);
    s.continuing = false;
    bd_slice token_text;
    bool has_token = bd_param_opt(rq, "paging_token", &token_text);
    /* A token alone continues the search it carries; with the search named, both must
     * agree. */
    s.named = !has_token || names_search(rq);
    if (s.named && !read_search(rq, &s))
        return;
    int64_t limit;
    if (!bd_param_int(rq, "number_of_records", 1, 1000, 100, &limit))
        return;
    int64_t now = (int64_t)time(NULL);
    s.tok.issued_at = now;
    s.tok.key_id = rq->key.id;
    s.tok.records_found = 0;
    s.tok.query_len = 0;
    if (has_token && !read_token(rq, &s, token_text, now))
        return;
    /* the key's scope, whether the search was named or carried by a token: an identity out
     * of it is refused before the store is asked; other types are searched among the
     * tenant's records only, so counts, pages and tokens are those of the filtered set */
    if (!bd_scope_check(srv, rq, (int)s.q.field, s.q.key))
        return;
    s.q.scope_tenant = bd_scope_tenant_filter(&rq->key, (int)s.q.field);
    bd_note_account(rq, (int)s.q.field, s.q.key);
    rq->records = 0;
    rq->csv =
        bd_accept_prefers_csv(MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, "Accept"));
    bd_pg_route route = defer_search(srv, rq, &s, (int)limit);
    if (route == BD_PG_WAIT)
        return; /* answered when the dispatcher is done (run_search with its lookup) */
    run_search(rq, &s, (int)limit, NULL);
    if (route == BD_PG_ALONE)
        bd_pg_wait_alone_end(srv);
}
