/* Watches from the importer's side: what a watch names (a breach-search type and value, or a
 * card BIN) normalised exactly as imported rows are, and the matcher that turns the rows an
 * import lands into alerts in the outbox, in the same transaction.
 *
 * Ownership: a matcher belongs to one import on one store connection; it registers itself
 * as that connection's landed callback (bd_store_on_landed) and unregisters on close. */
#ifndef BD_INGEST_WATCH_H
#define BD_INGEST_WATCH_H

#include <stddef.h>
#include <stdint.h>

#include "auth/secret.h"
#include "ingest/normalize.h"
#include "store/store.h"

#define BD_WATCH_KEY_MAX (2 * BD_MAC_LEN > BD_NORM_MAX ? 2 * BD_MAC_LEN : BD_NORM_MAX)
/* Matched values an alert lists (its count covers them all). */
#define BD_ALERT_MAX_IDENTITIES 10

typedef struct {
    int type; /* bd_field value, or BD_WATCH_BIN */
    char key[BD_WATCH_KEY_MAX + 1];
    size_t key_len;
    char shown[4 * BD_NORM_MAX + 8]; /* the value as a search reply shows it */
    size_t shown_len;
} bd_watch_spec;

/* Parses a watch's type (breach-search's `type` values and aliases, ASCII case ignored, or
 * "bin") and normalises value as breach-search normalises `account`; a password or SSN is
 * kept only as its keyed hash under secret (hex) and shown masked; a BIN is 6 digits.
 * BD_ERR_INVALID with *why (a constant sentence) when either is not valid. */
bd_result bd_watch_spec_parse(const uint8_t secret[BD_SECRET_LEN], bd_slice type, bd_slice value,
                              bd_watch_spec *out, const char **why);
/* The type's name as the API writes it: breach-search's canonical names, or "bin". */
const char *bd_watch_type_name(int type);

typedef struct bd_watch_matcher bd_watch_matcher;

/* Loads the watches of s's keys that are neither revoked nor expired and, when there are
 * any, listens to the rows s lands. BD_ERR_NOMEM or a store error; *out NULL then. */
bd_result bd_watch_matcher_open(bd_store *s, bd_watch_matcher **out);
/* Reloads the watches when they or the keys changed since the last load (a read of each
 * generation), or a minute has passed (a key may have expired meanwhile). */
bd_result bd_watch_matcher_refresh(bd_watch_matcher *m);
/* Inside the open write transaction, just before its commit: lands what was put, then
 * writes one alert per watch and breach that the landed rows matched, and forgets them. */
bd_result bd_watch_matcher_write(bd_watch_matcher *m);
/* Forgets the matches of a transaction that was rolled back. */
void bd_watch_matcher_discard(bd_watch_matcher *m);
/* Alerts written so far (for the import's summary and tests). */
int64_t bd_watch_matcher_alerts(const bd_watch_matcher *m);
/* Unregisters and frees; NULL is ignored. */
void bd_watch_matcher_close(bd_watch_matcher *m);

#endif
