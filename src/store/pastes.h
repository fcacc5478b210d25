/* What two calls of the Have I Been Pwned API v3 read besides records (issue 35):
 * - pastes (GET /pasteaccount/{email}): a paste is a text published on a paste site (its
 *   source, its id there, a title, a date) and the email addresses found in it, imported
 *   with `breachctl import pastes` (cli/import_pastes.c); tables pastes and paste_emails;
 * - the SHA-1 of each records' email (GET /breachedaccount/range/{prefix}, k-anonymity):
 *   table email_hashes (40 upper-case hex digits, the email), filled from records by
 *   bd_store_email_hashes_sync after each import (a bulk load's inside that load's own
 *   transaction) and once at the upgrade that made it.
 * docs/SCALING.md places the tables. */
#ifndef BD_STORE_PASTES_H
#define BD_STORE_PASTES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/result.h"
#include "core/slice.h"

struct bd_store;

typedef struct {
    bd_slice source;     /* "Pastebin", ...; never empty */
    bd_slice id;         /* the paste's id at its source; never empty */
    bd_slice title;      /* ptr NULL: none */
    int64_t date;        /* Unix seconds; -1: not known */
    int64_t email_count; /* the emails the paste held (may be more than were imported) */
} bd_paste_row;

/* Returns non-zero to stop the iteration early. */
typedef int (*bd_paste_cb)(void *ctx, const bd_paste_row *p);

/* Stores a paste and its emails (normalised: ingest/normalize.h), in the caller's
 * transaction. *inserted is false when a paste of that source and id exists: it is left as
 * it was, and the emails given are added to it. */
bd_result bd_store_paste_put(struct bd_store *s, const bd_paste_row *p, const bd_slice *emails,
                             size_t n, bool *inserted);
/* The pastes holding one normalised email: the newest first (by date, unknown dates last),
 * then by source and id. */
bd_result bd_store_pastes_of_email(struct bd_store *s, bd_slice email, bd_paste_cb cb,
                                   void *ctx);

/* Hashes the normalised email of every record added since the last sync (a record id kept
 * in meta as email_hashes_upto), in the caller's transaction; *added: the hashes new. */
bd_result bd_store_email_hashes_sync(struct bd_store *s, int64_t *added);
/* The (SHA-1 in upper-case hex, email) pairs whose hash starts with prefix (6 upper-case
 * hex digits), in hash order. */
typedef int (*bd_email_hash_cb)(void *ctx, bd_slice sha1_hex, bd_slice email);
bd_result bd_store_email_hashes_range(struct bd_store *s, const char prefix[7],
                                      bd_email_hash_cb cb, void *ctx);
/* Forgets one normalised email's hash (an erasure), in the caller's transaction. */
bd_result bd_store_email_hash_forget(struct bd_store *s, bd_slice email);
/* The stores' upgrade (their migration notes): when meta holds pending_email_hashes = 1
 * (the migration that made email_hashes), the records already stored are hashed (a sync)
 * and the note set to 0. */
bd_result bd_store_email_hashes_note(struct bd_store *s);
/* Stealer logs (HIBP's stealerlogsby* calls): the website hosts (records.website_domain) of
 * the records that have one, read three ways, each answer distinct and sorted (byte order):
 * BD_STEALER_BY_EMAIL: the hosts of one normalised email, cb(ctx, host, {NULL, 0});
 * BD_STEALER_BY_WEBSITE: the emails of one host, cb(ctx, email, {NULL, 0});
 * BD_STEALER_BY_EMAIL_DOMAIN: the (email, host) pairs of one email domain, cb(ctx, email,
 * host). The two by a domain first count the domain's (or host's) records with an email, at
 * most max + 1: BD_ERR_LIMIT when there are more than max (nothing then called). */
typedef enum {
    BD_STEALER_BY_EMAIL,
    BD_STEALER_BY_WEBSITE,
    BD_STEALER_BY_EMAIL_DOMAIN
} bd_stealer_by;
typedef int (*bd_stealer_cb)(void *ctx, bd_slice a, bd_slice b);
bd_result bd_store_stealer_logs(struct bd_store *s, bd_stealer_by by, bd_slice key, int64_t max,
                                bd_stealer_cb cb, void *ctx);
/* The SHA-1 of a normalised email as 40 upper-case hex digits and a NUL. */
void bd_email_sha1_hex(bd_slice email, char out[41]);

#endif
