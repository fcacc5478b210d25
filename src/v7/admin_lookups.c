/* POST {base}/admin/lookups {type, account}: the searches for one identity in the lookup log
 * (auth/lookup_log.h), newest first: when, which key (id and name) and as which type. The
 * identity is normalised and hashed exactly as a search of it was; it is in neither the
 * reply, the audit trail nor any log. This instance's searches not yet written are written
 * first, so the answer holds every search it answered; another instance's reach the store
 * within about a second. */
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "v7/admin.h"
#include "v7/handlers.h"
#include "auth/lookup_log.h"
#include "http/server_impl.h"

#define LOOKUPS_MAX 1000 /* rows in one answer */

typedef struct {
    bd_lookup_row *rows;
    size_t n;
} found;

static int take(void *ctx, const bd_lookup_row *r)
{
    found *f = ctx;
    if (f->n < LOOKUPS_MAX)
        f->rows[f->n++] = *r;
    return 0;
}

/* Key names by id, for the rows found. */
typedef struct {
    const found *f;
    char (*names)[BD_KEY_NAME_MAX * 4 + 1];
} names;

static int take_name(void *ctx, const bd_key_row *k)
{
    names *nm = ctx;
    for (size_t i = 0; i < nm->f->n; i++)
        if (nm->f->rows[i].key_id == k->id) {
            size_t l = k->name.len < BD_KEY_NAME_MAX * 4 ? k->name.len : BD_KEY_NAME_MAX * 4;
            memcpy(nm->names[i], k->name.ptr, l);
            nm->names[i][l] = '\0';
        }
    return 0;
}

void bd_handle_admin_lookups(bd_server *srv, bd_req *rq, bd_slice arg)
{
    (void)arg;
    static const char *const known[] = {"type", "account", NULL};
    if (!bd_params_check(rq, NULL, NULL))
        return;
    json_t *o = bd_admin_body(rq, known);
    if (!o)
        return;
    found f = {0};
    names nm = {.f = &f};
    bd_lookup_key k;
    bd_id_type t;
    json_t *type = json_object_get(o, "type"), *account = json_object_get(o, "account");
    const char *why = NULL;
    if (!json_is_string(type) ||
        !bd_id_type_parse((bd_slice){json_string_value(type), json_string_length(type)}, &t)) {
        bd_reply_error(rq, 422, "validation_error",
                       "'type' must be one of email, email_domain, phone_number, username, "
                       "ip_address, social_security_number, password, password_hash, "
                       "bitcoin_address, website_domain");
        goto out;
    }
    if (!json_is_string(account) ||
        bd_lookup_key_make(rq->secret, t,
                           (bd_slice){json_string_value(account), json_string_length(account)},
                           &k, &why) != BD_OK) {
        bd_reply_error(rq, 422, "validation_error", "'account' is not a valid %s: %s",
                       bd_id_type_name(t), why ? why : "not a string");
        goto out;
    }
    uint8_t hash[32];
    bd_lookup_hash(rq->secret, (int)t, k.key, hash);
    sodium_memzero(&k, sizeof k);
    bd_store *s = bd_admin_reader(rq);
    if (!s)
        goto out;
    if (srv->lookups) /* this instance's searches so far, written first */
        bd_lookup_log_flush(srv->lookups, s, NULL);
    f.rows = calloc(LOOKUPS_MAX, sizeof *f.rows);
    nm.names = calloc(LOOKUPS_MAX, sizeof *nm.names);
    bd_result r = f.rows && nm.names ? BD_OK : BD_ERR_NOMEM;
    if (r == BD_OK)
        r = bd_store_lookup_find(s, hash, LOOKUPS_MAX, take, &f);
    if (r == BD_OK && f.n)
        r = bd_store_key_list(s, take_name, &nm);
    if (r != BD_OK) {
        bd_reply_store_error(rq, r);
        goto out;
    }
    bd_json *w = &rq->json;
    bd_reply_begin(rq, 200);
    bd_json_object_begin(w);
    BD_JSON_KEY(w, "lookups");
    bd_json_array_begin(w);
    for (size_t i = 0; i < f.n; i++) {
        bd_json_object_begin(w);
        bd_json_utc_member(w, "at", f.rows[i].at);
        BD_JSON_KEY(w, "key_id");
        bd_json_int(w, f.rows[i].key_id);
        BD_JSON_KEY(w, "key_name");
        bd_json_cstring(w, nm.names[i][0] ? nm.names[i] : NULL);
        BD_JSON_KEY(w, "type");
        bd_json_cstring(w, bd_id_type_name((bd_id_type)f.rows[i].type));
        bd_json_object_end(w);
    }
    bd_json_array_end(w);
    BD_JSON_KEY(w, "truncated");
    bd_json_bool(w, f.n == LOOKUPS_MAX);
    bd_json_object_end(w);
    rq->records = (int64_t)f.n;
    bd_reply_finish(rq);
out:
    free(f.rows);
    free(nm.names);
    json_decref(o);
}
