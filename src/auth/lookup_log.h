/* The lookup log: which key searched for which identity, when, without the identity in
 * clear. Each identity search (v7 breach-search, the HIBP API's breachedaccount and
 * breacheddomain, the lines of a bulk job) is one row (time, key, type, keyed hash): the
 * hash is HMAC-SHA-256 under the server secret (bd_keyed_hash, label "lookup") of the type's
 * name, ':' and the identity's lookup key (normalised text; for a password or SSN its keyed
 * hash, as the records hold it). An admin who submits an identity (POST /v7/admin/lookups)
 * gets the rows of its hash; nobody can list the identities searched.
 *
 * A key's searches of one identity (as one type) within one UTC minute are one row, the
 * first's: the log says who searched for whom and when to the minute, not how often. A
 * request notes its search in memory (bd_lookup_log_note: a SipHash of it looked up in the
 * minute's set without a lock, and for a first search its keyed hash copied, under a lock,
 * into a buffer allocated once; nothing is allocated on the request's path), and a service
 * (app/svc_lookups.c)
 * writes the buffer to the store about once a second, sooner when it is half full, each
 * instance its own rows. When the store cannot take them for long enough that the buffer
 * fills, further searches are not logged and counted as dropped (said in the server's log).
 * Safe from any number of threads. */
#ifndef BD_AUTH_LOOKUP_LOG_H
#define BD_AUTH_LOOKUP_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/result.h"
#include "core/slice.h"
#include "store/store.h"

/* Rows held in memory at most (twice: the one being written and the one filling). */
#define BD_LOOKUP_LOG_CAP 65536

typedef struct bd_lookup_log bd_lookup_log;

/* NULL when out of memory. */
bd_lookup_log *bd_lookup_log_new(void);
/* Frees; rows not flushed are lost (flush first). NULL is ignored. */
void bd_lookup_log_free(bd_lookup_log *l);

/* The keyed hash of an identity of type (bd_id_type) and lookup key. */
void bd_lookup_hash(const uint8_t *secret, int type, bd_slice key, uint8_t out[32]);

/* Notes one search at Unix second at, unless key_id searched the same identity as the same
 * type in the same UTC minute already; dropped (and counted) when the buffer is full. */
void bd_lookup_log_note(bd_lookup_log *l, const uint8_t *secret, int64_t at, int64_t key_id,
                        int type, bd_slice key);

/* Writes what was noted to s (a writer) in one transaction, with any rows an earlier failed
 * flush kept; *written (may be NULL) gets how many. A failure keeps the rows for the next
 * flush. Flushes are serialised. */
bd_result bd_lookup_log_flush(bd_lookup_log *l, bd_store *s, size_t *written);

/* Writes n searches of one key and type at once, straight to s (a bulk job's lines: too
 * many for the buffer), in transactions of a few thousand rows. */
bd_result bd_lookup_log_write_many(bd_store *s, const uint8_t *secret, int64_t at, int64_t key_id,
                                   int type, const bd_slice *keys, size_t n);

/* Empties the set of searches the minute after now's will use: the writer's thread calls it
 * at least once a minute (a set not emptied fills, and then every search is a row). */
void bd_lookup_log_tick(bd_lookup_log *l, int64_t now);

/* Waits up to ms for the buffer to fill halfway or bd_lookup_log_wake; true when woken that
 * way, false on the timeout. */
bool bd_lookup_log_wait(bd_lookup_log *l, long ms);
/* Wakes a waiter (the service, at stop). */
void bd_lookup_log_wake(bd_lookup_log *l);

/* Searches dropped because the buffer was full, since the last call (which resets it). */
int64_t bd_lookup_log_take_dropped(bd_lookup_log *l);

#endif
