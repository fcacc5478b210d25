/* A bulk job's stored results: what the runner writes per chunk (each identity's record
 * ids, small and quick to write) and the download renders later (v7/job_results.h).
 *
 * Per identity in order, little-endian: the account's length (2 bytes, 0xFFFF for none) and
 * bytes, the records found (8 bytes), how many ids follow (4 bytes, at most
 * BD_JOB_RECORDS_MAX), the ids (8 bytes each) in breach-search's order. */
#ifndef BD_JOBS_RESULT_BLOB_H
#define BD_JOBS_RESULT_BLOB_H

#include <stdbool.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/result.h"
#include "core/slice.h"

#define BD_JOB_RECORDS_MAX 1000 /* records per identity in the results */
/* The records found of an identity outside its key's scope (a tenant key's email or
 * email_domain outside its tenant's domains): not looked up, rendered as "out_of_scope". */
#define BD_JOB_FOUND_OUT_OF_SCOPE (-1)

/* Appends one identity's results (account.ptr NULL: none) to out; BD_ERR_LIMIT past out's
 * cap. */
bd_result bd_job_results_add(bd_buf *out, bd_slice account, int64_t found, const int64_t *ids,
                             uint32_t n);

/* Reads a little-endian number of `bytes` bytes at *p, moving *p past it; false when fewer
 * than that are left before end. */
bool bd_job_blob_get_le(const uint8_t **p, const uint8_t *end, int bytes, uint64_t *v);

#endif
