/* The matcher (watch_match.c): turns the rows an import lands into alerts in the outbox, in
 * the same transaction, for the watches stored with bd_watch_spec_parse's keys
 * (watch_spec.h); it finds them through the watch index (watch_index.h).
 *
 * Ownership: a matcher belongs to one import on one store connection; it registers itself
 * as that connection's landed callback (bd_store_on_landed) and unregisters on close. */
#ifndef BD_INGEST_WATCH_MATCH_H
#define BD_INGEST_WATCH_MATCH_H

#include <stdint.h>

#include "store/store.h"

/* Matched values an alert lists (its count covers them all). */
#define BD_ALERT_MAX_IDENTITIES 10

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
