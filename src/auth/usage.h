/* Per-key usage: the requests each key made per UTC day and month, kept with the store (so
 * they survive restarts and every server of one store shares them), and monthly quotas.
 *
 * A key with a quota takes its requests from the store in leases, the way shared rate limits
 * do (auth/limiter.h): a lease counts requests in the store at once, only while the month's
 * count stays within the quota (the store orders concurrent writers on the month's row), and
 * this process hands them out from memory. A lease is 1/64 of what the quota leaves after
 * it, at most 64 requests, so a key within 128 requests of its quota (and every quota under
 * 128) is counted one request at a time: all servers together admit exactly the quota, and
 * the next request is refused. What a lease leaves unused goes back after a second (and at
 * bd_usage_free); within that second another server may refuse a request that one still
 * holds, never within the quota's last 128. A process that dies holding a lease loses its
 * unused rest: counted as made (at most 64 requests per key), never admitted twice.
 *
 * A key without a quota pays no store write per request: its requests are counted in memory
 * and written in batches, once a second (bd_usage_flush) and at bd_usage_free; what a server
 * counted in the last second is visible in its own bd_usage_get at once and in the others'
 * after the next flush.
 *
 * When the store cannot be written for a while (a SQLite writer holding the file past the
 * busy timeout, a PostgreSQL primary gone), a key with a quota is admitted and its request
 * counted in memory like the others, to be written at the next flush that succeeds (one log
 * line when that starts): the quota may then be passed by what was admitted meanwhile, never
 * undercounted. A store that refuses the write as read-only (a PostgreSQL hot standby, which
 * never takes one) fails closed instead: a key with a quota is refused there (one log line),
 * since nothing admitted could ever be counted; the server avoids it by counting usage where
 * --shared-limits points, the primary.
 *
 * Safe from any number of threads. Each thread opens its own connection to the store on first
 * use; bd_usage_free closes them all and must run after every thread using it stopped. */
#ifndef BD_AUTH_USAGE_H
#define BD_AUTH_USAGE_H

#include <stdbool.h>
#include <stdint.h>

#include "core/result.h"

typedef struct bd_usage bd_usage;

/* Usage kept in the store at uri (opened for writing on first use). NULL when out of memory. */
bd_usage *bd_usage_new(const char *uri);
/* The same, with its connections taken from pool (store/pool.h: opened with
 * BD_STORE_WRITE | BD_STORE_SMALL_WRITES), which the composition root owns and frees after
 * the counters. */
struct bd_store_pool;
bd_usage *bd_usage_new_pooled(struct bd_store_pool *pool);
/* Writes what is still counted in memory, then frees. */
void bd_usage_free(bd_usage *u);

/* Counts one request of key_id at now_us: true when admitted. quota 0 (none): always admitted,
 * counted in memory. quota > 0: admitted only while the month's count is below it; false when
 * it is used up, or when the store is read-only (above). *month_used (may be NULL) gets the
 * month's requests handed out so far as this process knows them (the request included when
 * admitted), or -1 when the store did not answer: false with -1 is a read-only store. */
bool bd_usage_take(bd_usage *u, int64_t key_id, int64_t quota, int64_t now_us,
                   int64_t *month_used);
/* Counts n requests of key_id at once (a bulk job's identities), all or none: with a quota,
 * admitted only when all n fit in what the month has left (counted in the store at once, past
 * any lease); without one, counted in memory like bd_usage_take's. When the store does not
 * answer, they are admitted and counted in memory. *month_used as bd_usage_take's (the
 * month's count in the store after the call; -1 when not known). */
bool bd_usage_take_many(bd_usage *u, int64_t key_id, int64_t quota, int64_t now_us, int64_t n,
                        int64_t *month_used);
/* Writes the counts kept in memory to the store and gives back the leases that ran out
 * by now_us; about once a second, from one thread. */
void bd_usage_flush(bd_usage *u, int64_t now_us);
/* The requests of key_id today and this month (UTC) at now_us: the store's counters plus what
 * this process has not written yet, less what its lease holds unused (another server's
 * unused lease counts as used for up to a second). */
bd_result bd_usage_get(bd_usage *u, int64_t key_id, int64_t now_us, int64_t *today,
                       int64_t *month);

/* The UTC day of Unix seconds t as yyyymmdd. */
int32_t bd_usage_day(int64_t t);
/* When the UTC month of Unix seconds t ends: the first second of the next month. */
int64_t bd_usage_month_end(int64_t t);

#endif
