/* The bulk job runner: a background thread per server that claims queued jobs from the
 * store (store.h, "bulk lookup jobs"), one at a time, and looks their identities up a chunk
 * at a time, with BD_JOB_THREADS - 1 helper threads taking chunks of the same job beside it.
 * All run at a lower CPU priority than the request threads (nice 10), so with the cores busy
 * the interactive searches come first.
 *
 * Keys take turns: a job runs for a turn of 200 ms (no chunk is begun after it), then goes
 * back to wait if chunks are left, and the next claim takes the oldest job of the key served
 * least recently, so one key's many or large jobs do not hold up another key's. Each chunk
 * keeps what its key's limit on result rows and its monthly quota leave room for: every
 * identity its first row, its further records while there is room (counted against the
 * quota as they are stored); the rest are cut, and counted as such on the job.
 *
 * A claim is a lease of LEASE_S seconds, renewed with every chunk stored: a runner that dies
 * (a crash, kill -9) leaves its job to be taken over when the lease runs out, by any server
 * of the store, which resumes at the first chunk without results. A job claimed more than
 * BD_JOB_MAX_ATTEMPTS times (a job that keeps failing or killing its runner; taking it back
 * after its turn is no attempt) is marked failed. Jobs older than a day are deleted, with
 * their results, at start and once a minute, and the store's log emptied of them.
 *
 * Each thread looks its chunks up in one read view per turn, on a read connection of its
 * own, with one bulk lookup per chunk (bd_store_record_ids: a prepared statement reused per
 * key on SQLite, one statement per chunk on PostgreSQL; the same rows, in the same order, as
 * breach-search's), and stores each identity's record ids and count (jobs/result_blob.h)
 * with the job's progress in one transaction on its write connection, one thread at a time;
 * the records themselves are read and written out when the results are downloaded. */
#ifndef BD_JOBS_RUNNER_H
#define BD_JOBS_RUNNER_H

#include <stdbool.h>
#include <stdint.h>

#define BD_JOB_MAX_ATTEMPTS 5
#define BD_JOB_THREADS 2 /* threads looking up one job's chunks at once */

typedef struct bd_job_runner bd_job_runner;
struct bd_store_pool;

/* Starts the runner; each of its threads takes its connections from the pools the
 * composition root gives it (store/pool.h; borrowed, closed after the runner stopped):
 * writes (claims, chunks taken and stored) and reads (the lookups). pause_ms, for tests
 * only, sleeps that long after each chunk (0: none). NULL when out of memory or no thread
 * could be started. */
bd_job_runner *bd_job_runner_start(struct bd_store_pool *writes, struct bd_store_pool *reads,
                                   int64_t pause_ms);
/* Wakes the runner to look for work now (a job was submitted). NULL is ignored. */
void bd_job_runner_poke(bd_job_runner *r);
/* Stops the thread (a job in progress keeps its stored chunks; its lease runs out and it is
 * taken over) and frees. NULL is ignored. */
void bd_job_runner_stop(bd_job_runner *r);

/* The jobs this process's runners ended since it started: done, and failed (claimed too
 * often without finishing). For /metrics. */
typedef struct {
    uint64_t done, failed;
} bd_job_counts;
void bd_job_counts_get(bd_job_counts *out);

#endif
