/* API keys: generation, hashing, plans, and the server's in-memory keyring.
 *
 * A key is "bd_" followed by 43 URL-safe base64 characters (256 random bits). Only its
 * SHA-256 is stored; the text is shown once, at creation. The keyring is a snapshot of the
 * store's keys that server threads read concurrently; bd_keyring_refresh replaces it when the
 * store's key generation changes, so a revoked key stops working without a restart. */
#ifndef BD_AUTH_KEYS_H
#define BD_AUTH_KEYS_H

#include <stdbool.h>
#include <stdint.h>

#include "auth/cidr.h"
#include "core/result.h"
#include "core/slice.h"
#include "ingest/normalize.h"
#include "store/store.h"

#define BD_KEY_TEXT_LEN 46
#define BD_KEY_NAME_MAX 64
#define BD_KEY_PLAN_MAX 15

/* Card lookups by full number or Hash: per key and day, unless set at creation (schema
 * migration 5 gives keys made before the budget existed the same number), and the most a
 * key may be given. 0 disables them for a key. */
#define BD_KEY_EXACT_PER_DAY 20
#define BD_KEY_EXACT_PER_DAY_MAX 1000000

/* Writes a fresh key text (NUL-terminated) and its hash. */
bd_result bd_key_generate(char text[BD_KEY_TEXT_LEN + 1], uint8_t hash[32]);
void bd_key_hash(bd_slice key, uint8_t out[32]);

/* The most requests a month a key's quota may be. */
#define BD_KEY_QUOTA_MAX 1000000000000LL

/* A monthly quota as given to breachctl: "N/month" or "N", N from 1 to BD_KEY_QUOTA_MAX;
 * false for anything else (0, a sign, another unit, trailing text). */
bool bd_quota_parse(const char *s, int64_t *per_month);

/* A key's limits on bulk jobs (store.h "bulk lookup jobs") unless set on the key (breachctl
 * keys create/set-job-limits): jobs queued or running at once; identities of those not yet
 * looked up (two jobs of the most a job takes); result rows kept in its jobs, which are
 * deleted a day after they were submitted (about 8 MB of record ids). The most any may be
 * set to. */
#define BD_KEY_MAX_JOBS 10
#define BD_KEY_MAX_QUEUED_IDENTITIES 200000
#define BD_KEY_MAX_RESULT_ROWS 1000000
#define BD_KEY_JOB_LIMIT_MAX 1000000000000LL

/* A job limit as given to breachctl: N from 1 to BD_KEY_JOB_LIMIT_MAX; false for anything
 * else (0, a sign, a unit, trailing text). */
bool bd_job_limit_parse(const char *s, int64_t *limit);
/* A key's job limits: its own where set, else the defaults above. */
void bd_key_job_limits(const bd_key_row *k, bd_job_limits *out);

/* Requests per hour of a named plan; false for an unknown plan name. */
bool bd_plan_rate(const char *plan, int64_t *per_hour);

/* The identity types a key may search: bit (1u << t) for each bd_id_type t
 * (ingest/normalize.h), one for card searches (bit 9), and bit 10 for website_domain (the
 * type added after the cards bit was given: stored masks keep their meaning, so a key
 * stored with all ten of before does not search website domains). Parsed and written by
 * auth/key_types.h. */
#define BD_KEY_TYPE_CARDS (1u << 9)
#define BD_KEY_TYPE_WEBSITE_DOMAIN (1u << 10)
#define BD_KEY_TYPES_ALL 0x7ffu
/* The bit of identity type t (a bd_id_type) in a key's types. */
static inline uint32_t bd_key_type_bit(int t)
{
    return t == BD_ID_WEBSITE_DOMAIN ? BD_KEY_TYPE_WEBSITE_DOMAIN : 1u << t;
}
/* Tenant keys without --types: email and email_domain only. */
#define BD_KEY_TYPES_TENANT_DEFAULT ((1u << BD_ID_EMAIL) | (1u << BD_ID_EMAIL_DOMAIN))

/* The most CIDRs a key's allow list holds. */
#define BD_KEY_ALLOW_MAX 16

typedef struct {
    int64_t id;
    int64_t rate_per_hour;
    int64_t exact_per_day; /* card lookups by full number or Hash: per day; 0: none */
    int64_t expires_at;    /* 0: never */
    int64_t quota_per_month; /* requests per UTC calendar month; 0: no quota */
    bd_job_limits jobs;      /* its limits on bulk jobs, defaults resolved */
    char name[BD_KEY_NAME_MAX + 1];
    char plan[BD_KEY_PLAN_MAX + 1]; /* standard, enterprise or custom */
    int64_t tenant_id; /* 0: none (sees the whole corpus) */
    uint32_t types;    /* resolved (bd_key_types_resolve): never 0 */
    int role;          /* BD_KEY_ROLE_USER, BD_KEY_ROLE_ADMIN (store.h) */
    bd_cidr allow[BD_KEY_ALLOW_MAX]; /* where requests may come from; n_allow 0: anywhere */
    int n_allow;
} bd_key_info;

typedef enum { BD_KEY_VALID, BD_KEY_UNKNOWN, BD_KEY_EXPIRED } bd_key_status;

typedef struct bd_keyring bd_keyring;

/* NULL when out of memory. */
bd_keyring *bd_keyring_new(void);
void bd_keyring_free(bd_keyring *kr);
/* Reloads the active keys from the store when its key generation moved since the last
 * load (always on the first call). Safe to call while other threads look keys up. */
bd_result bd_keyring_refresh(bd_keyring *kr, bd_store *s);
/* Looks a presented key up: VALID fills *out; revoked and never-issued keys are UNKNOWN. */
bd_key_status bd_keyring_lookup(bd_keyring *kr, bd_slice key, int64_t now, bd_key_info *out);

/* The tenants' domains, loaded with the keys (same generation). Whether domain (normalised,
 * lower case) is one of tenant_id's domains or under one ("mail.acme.example" under
 * "acme.example"); false for tenant 0 or an unknown tenant. */
bool bd_keyring_domain_in_scope(bd_keyring *kr, int64_t tenant_id, bd_slice domain);
/* Calls cb for each domain of tenant_id, sorted (HIBP subscribeddomains), under the keyring's
 * read lock: cb must not call back into the keyring. */
void bd_keyring_tenant_domains(bd_keyring *kr, int64_t tenant_id, bd_tenant_domain_cb cb,
                               void *ctx);

#endif
