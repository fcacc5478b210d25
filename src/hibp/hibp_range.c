/* The Have I Been Pwned API v3's GET /breachedaccount/range/{prefix} (its enterprise
 * k-anonymity email search): the client sends the first 6 hex digits of the SHA-1 of a
 * normalised email address and gets, for every stored address whose hash starts so, the
 * other 34 digits and the Names of its breaches; it compares them itself, so the server
 * never learns which address was checked. Read from email_hashes (store/pastes.h). Its
 * route is in routes.c. */
#include <string.h>

#include "auth/scope.h"
#include "hibp/hibp.h"
#include "http/scope.h"
#include "http/server_impl.h"
#include "ingest/normalize.h"
#include "core/buf.h"
#include "store/pastes.h"

typedef struct {
    bd_server *srv;
    bd_req *rq;
    bd_buf names; /* the Names of the address being read, each followed by a NUL */
    size_t nnames;
    bool failed;
    int64_t matches;
} range_search;

static int take_name(void *ctx, const bd_breach_row *b)
{
    range_search *rs = ctx;
    if (bd_buf_append_slice(&rs->names, b->name) != BD_OK ||
        bd_buf_append_char(&rs->names, '\0') != BD_OK) {
        rs->failed = true;
        return 1;
    }
    rs->nnames++;
    return 0;
}

static int write_entry(void *ctx, bd_slice sha1, bd_slice email)
{
    range_search *rs = ctx;
    bd_req *rq = rs->rq;
    /* a tenant key: its tenant's addresses only, the others left out without a word */
    if (sha1.len != 40 || (rq->key.tenant_id != 0 &&
                           bd_scope_judge(rs->srv, &rq->key, BD_ID_EMAIL, email) != BD_SCOPE_OK))
        return 0;
    bd_buf_reset(&rs->names);
    rs->nnames = 0;
    if (bd_store_breaches_of_email(rq->store, email, take_name, rs) != BD_OK || rs->failed) {
        rs->failed = true;
        return 1;
    }
    /* an address without a breach left (erased; its hash outlives it until forgotten): none */
    if (rs->nnames == 0)
        return 0;
    bd_json *w = &rq->json;
    bd_json_object_begin(w);
    bd_json_key(w, "hashSuffix");
    bd_json_string(w, (bd_slice){sha1.ptr + 6, 34});
    bd_json_key(w, "websites");
    bd_json_array_begin(w);
    for (size_t at = 0, i = 0; i < rs->nnames; i++) {
        size_t n = strlen(rs->names.data + at);
        bd_json_string(w, (bd_slice){rs->names.data + at, n});
        at += n + 1;
    }
    bd_json_array_end(w);
    bd_json_object_end(w);
    rs->matches++;
    return 0;
}

void bd_hibp_breached_account_range(bd_server *srv, bd_req *rq, bd_slice prefix)
{
    if (!bd_params_check(rq, NULL, NULL))
        return;
    char hex[7];
    bool ok = prefix.len == 6;
    for (size_t i = 0; ok && i < 6; i++) {
        char c = prefix.ptr[i];
        if (c >= 'a' && c <= 'f')
            c = (char)(c - 'a' + 'A');
        ok = (c >= '0' && c <= '9') || (c >= 'A' && c <= 'F');
        hex[i] = c;
    }
    hex[6] = '\0';
    if (!ok) {
        bd_reply_error(rq, 400, "bad_request",
                       "the range is the first 6 hex digits of the SHA-1 of an email address");
        return;
    }
    /* every address of a bucket at once: the enterprise plan, or a tenant key (its own) */
    if (rq->key.tenant_id == 0 && strcmp(rq->key.plan, "enterprise") != 0) {
        bd_reply_error(rq, 403, "forbidden", "the email range needs a key of the enterprise plan");
        return;
    }
    if (!bd_scope_type_allowed(rq->key.types, BD_ID_EMAIL)) {
        bd_scope_refuse(srv, rq, BD_SCOPE_TYPE_NOT_ALLOWED);
        return;
    }
    range_search rs = {.srv = srv, .rq = rq};
    bd_buf_init(&rs.names, 1u << 20);
    bd_reply_begin(rq, 200);
    bd_json_array_begin(&rq->json);
    bd_result r = bd_store_read_begin(rq->store);
    if (r == BD_OK)
        r = bd_store_email_hashes_range(rq->store, hex, write_entry, &rs);
    bd_store_read_end(rq->store);
    bd_buf_free(&rs.names);
    if (r == BD_OK && rs.failed)
        r = BD_ERR_STORE;
    if (r != BD_OK) {
        bd_reply_store_error(rq, r);
        return;
    }
    rq->records = rs.matches;
    if (rs.matches == 0) {
        bd_hibp_not_found(rq);
        return;
    }
    bd_json_array_end(&rq->json);
    bd_reply_finish(rq);
}
