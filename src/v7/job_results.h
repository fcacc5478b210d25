/* A bulk job's results: what the runner stores per chunk (each identity's record ids, small
 * and quick to write), and their rendering as JSON Lines or CSV when they are downloaded,
 * with the records read by id from the store then.
 *
 * The stored form is jobs/result_blob.h's.
 *
 * JSON Lines, one object per identity:
 *   {"index":0,"type":"email","account":"a@example.com","found":2,
 *    "breaches":[{"breach_id":"<uuid>","source_name":"...","records":[<breached_data>,...]}]}
 * index counts from 0 in the order submitted; account is the normalised identity (null for
 * password and social_security_number jobs: the store keeps only their keyed hashes); found
 * is every record breach-search counted when the job ran, records at most the first 1,000
 * of them in breach-search's order, grouped by breach in the order each breach first
 * appears; a record erased since the job ran is left out. An identity outside a tenant
 * key's domains was not looked up: its line has "status":"out_of_scope" after account,
 * found 0 and no breaches. CSV has one row per record (bd_job_csv_header), or one row with
 * found and empty record cells for an identity without records; its last cell, status, is
 * empty or out_of_scope. */
#ifndef BD_V7_JOB_RESULTS_H
#define BD_V7_JOB_RESULTS_H

#include <stdbool.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/result.h"
#include "core/slice.h"
#include "jobs/result_blob.h"
#include "store/store.h"

typedef struct bd_job_render bd_job_render;

/* NULL when out of memory. */
bd_job_render *bd_job_render_new(void);
/* NULL is ignored. */
void bd_job_render_free(bd_job_render *r);
/* A download renders a chunk a slice at a time, so that what it holds stays small however
 * many records the chunk's identities found (a chunk of 1,000 identities of 1,000 records
 * each is ~300 MB of JSON): a slice is one identity, or several whose record ids are at
 * most BD_JOB_RENDER_IDS together. */
#define BD_JOB_RENDER_IDS 2000

/* Takes one chunk's stored results (blob; it must stay as it is while the chunk is rendered)
 * for rendering; *count gets its identities. BD_ERR_STORE for a blob bd_job_results_add did
 * not make. */
bd_result bd_job_render_open(bd_job_render *r, bd_slice blob, size_t *count);
/* Renders the next slice of the chunk taken by bd_job_render_open, from its identity number
 * `from`, of a job of identity type `type` (a bd_field) whose first identity of the chunk is
 * number first_index, as JSON Lines or CSV rows (csv) appended to out, reading the records
 * and their breaches from s (the caller holds a read view); *to gets the number of the
 * identity after the slice. */
bd_result bd_job_render_slice(bd_job_render *r, bd_store *s, int type, int64_t first_index,
                              size_t from, bool csv, bd_buf *out, size_t *to);

/* The CSV results' header row, with its \r\n. */
const char *bd_job_csv_header(void);

#endif
