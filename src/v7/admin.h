/* What the admin API's handlers (v7/admin_*.c) share: their bodies, ids, the audit row each
 * write leaves, and the key names. Every admin route is BD_ACCESS_ADMIN (routes.h): the
 * router refused any other key before a handler runs. */
#ifndef BD_V7_ADMIN_H
#define BD_V7_ADMIN_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/json.h"
#include "http/request.h"

#define BD_ADMIN_BODY_MAX (64u << 10) /* an admin write's body, at most */
#define BD_TENANT_NAME_MAX 64
#define BD_TENANT_DOMAINS_MAX 100 /* domains one request may give a tenant */
#define BD_ADMIN_JSON_MAX (256u << 10) /* one before/after text */

/* A numeric id path segment (1 to 18 digits, not 0); false with 404 not_found "no such
 * <what>" written otherwise. */
bool bd_admin_id(bd_req *rq, bd_slice text, const char *what, int64_t *id);

/* The body as one JSON object whose members are all named in known (NULL-terminated); NULL
 * with the reply (400 invalid_json, 413, 422 validation_error) written otherwise. The caller
 * json_decref's it. */
json_t *bd_admin_body(bd_req *rq, const char *const *known);
/* A member's string value: false (not written) when absent; with 422 written (*bad set)
 * when present but not a string of 1..max bytes of valid UTF-8 without control characters. */
bool bd_admin_string(bd_req *rq, json_t *o, const char *name, size_t max, bd_slice *out,
                     bool *bad);

/* Appends one admin write to the audit trail on s (the caller's transaction): now, the
 * calling key, the client address (behind --trusted-proxy, the forwarded one), action ("tenant.create"), target (the tenant's or key's
 * id), before and after (JSON texts; NULL or empty: none). */
struct bd_server;
bd_result bd_admin_audit(struct bd_server *srv, bd_req *rq, bd_store *s, const char *action,
                         int64_t target, const bd_buf *before, const bd_buf *after);

/* Runs a write and its audit row in one transaction on the request's writer: calls
 * fn(ctx, s) between begin and commit, rolling back when it returns anything but BD_OK.
 * NULL store (503 written) when no writer could be had. */
bd_result bd_admin_txn(bd_req *rq, bd_result (*fn)(void *ctx, bd_store *s), void *ctx,
                       bool *no_writer);

/* The connection admin reads go through: the writer's, so a read sees the writes just
 * made (a worker's read view may be shared for a moment). NULL with 503 written. */
bd_store *bd_admin_reader(bd_req *rq);

/* Starts a bd_json writer on a fresh bd_buf (for a before/after text). */
void bd_admin_json_start(bd_json *w, bd_buf *b);

/* A key row as the admin API shows it: never its hash; its text only as shown_once, when
 * not NULL (the reply that creates it). */
void bd_admin_write_key(bd_json *w, const bd_key_row *k, int64_t now, const char *shown_once);

#endif
