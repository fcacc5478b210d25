/* The key of a bulk job, as the runner (runner.c) looks its chunks up and stores them: the
 * limit on its result rows and its monthly quota, and its scope (its tenant and that tenant's
 * domains), read at each claim (so a change applies from the job's next turn). Only
 * jobs/runner.c includes this. */
#ifndef BD_JOBS_JOB_KEY_H
#define BD_JOBS_JOB_KEY_H

#include <stdbool.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/result.h"
#include "core/slice.h"
#include "store/store.h"

typedef struct {
    int64_t key_id, max_rows, quota;
    int64_t tenant_id; /* 0: none, the whole corpus */
    bd_buf domains;    /* the tenant's domains, NUL-separated */
    bool scope_failed; /* the domains could not be read: every email line out of scope */
} bd_job_key;

/* Reads key key_id from s into out (a key gone: the defaults, no quota); bd_job_key_free
 * releases it. */
void bd_job_key_load(bd_store *s, int64_t key_id, bd_job_key *out);
void bd_job_key_free(bd_job_key *key);

/* Whether a job line of type t with lookup key k is in the key's scope (auth/scope.h): for a
 * tenant key, an email or email_domain within its tenant's domains. */
bool bd_job_key_in_scope(const bd_job_key *key, int t, bd_slice k);

/* How many of `want` extra rows (past the identities' first) the key's limit on rows leaves
 * room for beside its rows stored and its identities not yet looked up, into *room. */
bd_result bd_job_key_rows_room(bd_store *s, const bd_job_key *key, int64_t want, int64_t *room);

/* Counts *n extra rows against the key's usage and quota, all of them or, when the quota is
 * nearer, what it leaves; *n gets how many were counted. */
bd_result bd_job_key_count_rows(bd_store *s, const bd_job_key *key, int64_t *n);

#endif
