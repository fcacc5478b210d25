/* The bulk job runner: one background thread per server that claims queued jobs from the
 * store (store.h, "bulk lookup jobs") and looks their identities up, a chunk at a time, with
 * the same record search breach-search runs. It runs at a lower CPU priority than the
 * request threads (nice 10), one job at a time, so interactive searches keep their workers.
 *
 * A claim is a lease of LEASE seconds, renewed with every chunk stored: a runner that dies
 * (a crash, kill -9) leaves its job to be taken over when the lease runs out, by any server
 * of the store, which resumes at the first chunk without results. A job claimed more than
 * BD_JOB_MAX_ATTEMPTS times (a job that keeps failing or killing its runner) is marked
 * failed. Jobs older than a day are deleted, with their results, once a minute.
 *
 * Results per identity (JSON Lines, one object per line):
 *   {"index":0,"type":"email","account":"a@example.com","found":2,
 *    "breaches":[{"breach_id":"<uuid>","source_name":"...","records":[<breached_data>,...]}]}
 * index counts from 0 in the order submitted; account is the normalised identity (null for
 * password and social_security_number jobs: the store keeps only their keyed hashes); found
 * is every record breach-search would count, records at most the first 1,000 of them in
 * breach-search's order, grouped by breach in the order each breach first appears. CSV has
 * one row per record (bd_job_csv_header), or one row with found 0 and empty record cells. */
#ifndef BD_HTTP_JOB_RUNNER_H
#define BD_HTTP_JOB_RUNNER_H

#include <stdbool.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/result.h"
#include "core/slice.h"

#define BD_JOB_MAX_ATTEMPTS 5
#define BD_JOB_RECORDS_MAX 1000 /* records per identity in the results */

typedef struct bd_job_runner bd_job_runner;

/* Starts the runner on the store at uri (opened for writes by the thread). pause_ms, for
 * tests only, sleeps that long after each chunk (0: none). NULL when out of memory or no
 * thread could be started. */
bd_job_runner *bd_job_runner_start(const char *uri, int64_t pause_ms);
/* Wakes the runner to look for work now (a job was submitted). NULL is ignored. */
void bd_job_runner_poke(bd_job_runner *r);
/* Stops the thread (a job in progress keeps its stored chunks; its lease runs out and it is
 * taken over) and frees. NULL is ignored. */
void bd_job_runner_stop(bd_job_runner *r);

/* The CSV results' header row, with its \r\n. */
const char *bd_job_csv_header(void);
/* Appends one CSV cell (no separator): empty for NULL or "", else quoted, with "" for a
 * quote, and a leading ' when the text starts with = + - @ tab or CR, so a spreadsheet
 * never reads it as a formula. */
bd_result bd_job_csv_cell(bd_buf *out, bd_slice v);

#endif
