/* Store opening and key creation shared by several breachctl commands. */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "auth/keys.h"
#include "auth/secret_check.h"
#include "cli/args.h"
#include "cli/cli.h"
#include "ingest/cvv.h"
#include "store/uri.h"

/* The secret file: the one given, else BREACHD_SECRET or the configuration file's (for its
 * store), else the store's default; false (said) when it has none. */
static bool secret_path_for(const char *db, const char *given, char *out, size_t cap)
{
    if (!given)
        given = bd_cli_config_secret(db);
    if (given) {
        snprintf(out, cap, "%s", given);
        return true;
    }
    if (bd_store_default_secret_path(db, out, cap))
        return true;
    fputs("breachctl: --secret PATH is required with this store\n", stderr);
    return false;
}

/* Cards stored before CVVs were masked keep them in clear until a program holding the
 * secret opens the store (ingest/cvv.h): every breachctl command that writes finishes that.
 * A failure is said and the command goes on; the next one tries again. */
static void finish_cvv_upgrade(bd_store *s, const uint8_t secret[BD_SECRET_LEN])
{
    int64_t changed = 0;
    bd_result r = bd_cvv_upgrade(s, secret, &changed);
    if (r != BD_OK)
        fprintf(stderr,
                "breachctl: the CVVs of cards stored by an older version are still in clear "
                "(%s); the next command tries again\n",
                bd_result_str(r));
    else if (changed > 0)
        fprintf(stderr,
                "breachctl: the CVVs of %lld cards stored by an older version are now "
                "masked and keyed\n",
                (long long)changed);
}

int bd_cli_open(const char *db, const char *secret_path, bd_store **s,
                uint8_t secret[BD_SECRET_LEN])
{
    return bd_cli_open_as(db, secret_path, BD_STORE_WRITE, s, secret);
}

int bd_cli_open_as(const char *db, const char *secret_path, int flags, bd_store **s,
                   uint8_t secret[BD_SECRET_LEN])
{
    char why[512], path[1100];
    *s = NULL;
    /* The store first: one this build cannot open is named before a missing --secret. */
    if (bd_store_open(db, flags, s, why, sizeof why) != BD_OK) {
        fprintf(stderr, "breachctl: %s\n", why);
        return BD_EXIT_FAIL;
    }
    if (!secret_path_for(db, secret_path, path, sizeof path))
        goto fail;
    if (bd_secret_load(path, secret, why, sizeof why) != BD_OK) {
        fprintf(stderr, "breachctl: %s\n", why);
        goto fail;
    }
    char foreign[2048]; /* any failure to read the fingerprint says the secret is foreign */
    if (bd_secret_check(*s, db, path, secret, 0, foreign, sizeof foreign) != BD_OK) {
        fprintf(stderr, "breachctl: %s\n", foreign);
        goto fail;
    }
    if (flags & BD_STORE_WRITE)
        finish_cvv_upgrade(*s, secret);
    return BD_EXIT_OK;
fail:
    bd_store_close(*s);
    *s = NULL;
    return BD_EXIT_FAIL;
}

int bd_cli_init_store(const char *db, const char *secret_path)
{
    char why[512], path[1100];
    if (!secret_path_for(db, secret_path, path, sizeof path))
        return BD_EXIT_FAIL;
    char shown[512];
    bd_uri_redact(db, shown, sizeof shown);
    bd_store_caps caps;
    bd_store_kind_caps(db, &caps);
    bool server = caps.database_server && strlen(db) < 4096;
    if (server || access(db, F_OK) == 0) {
        bd_store *probe;
        if (bd_store_open(db, BD_STORE_READ, &probe, why, sizeof why) == BD_OK) {
            bd_store_close(probe);
            fprintf(stderr, "breachctl: %s is already a breachd store\n", shown);
            return BD_EXIT_FAIL;
        }
    }
    /* A store may be made for a secret file the operator already placed (a database
     * server's instances all share one). A SQLite store reuses one too: the test that once
     * meant to refuse it there read every store as a server (a default secret path cut to
     * 8 bytes), and what init does is kept as it was. */
    bool reuse = strlen(db) < 4096 && access(path, F_OK) == 0;
    if (!reuse && bd_secret_create(path, why, sizeof why) != BD_OK) {
        fprintf(stderr, "breachctl: %s\n", why);
        return BD_EXIT_FAIL;
    }
    uint8_t secret[BD_SECRET_LEN];
    bd_store *s;
    if (bd_secret_load(path, secret, why, sizeof why) != BD_OK ||
        bd_store_open(db, BD_STORE_WRITE | BD_STORE_CREATE, &s, why, sizeof why) != BD_OK) {
        fprintf(stderr, "breachctl: %s\n", why);
        if (!reuse)
            unlink(path);
        return BD_EXIT_FAIL;
    }
    char fp[65];
    bd_secret_fingerprint(secret, fp);
    bd_result r = bd_store_meta_set(s, "secret_fingerprint", fp);
    if (r != BD_OK) {
        bd_store_close(s);
        fprintf(stderr, "breachctl: cannot write to the new store %s\n", shown);
        return BD_EXIT_FAIL;
    }
    int laid_out = bd_cli_distribute(s, shown, false);
    bd_store_close(s);
    if (laid_out != BD_EXIT_OK)
        return laid_out;
    fprintf(stderr,
            "breachctl: created store %s with secret %s (mode 0600; back it up: "
            "without it, password, SSN and card searches cannot match)\n",
            shown, path);
    return BD_EXIT_OK;
}

int bd_cli_create_key(bd_store *s, const char *name, const char *plan, int64_t rate,
                      int64_t exact_per_day, int64_t expires_at, int64_t quota_per_month,
                      const bd_job_limits *jobs)
{
    char text[BD_KEY_TEXT_LEN + 1];
    bd_key_row k = {.name = bd_slice_from(name),
                    .plan = bd_slice_from(plan),
                    .rate_per_hour = rate,
                    .exact_per_day = exact_per_day,
                    .created_at = (int64_t)time(NULL),
                    .expires_at = expires_at,
                    .quota_per_month = quota_per_month,
                    .max_jobs = jobs ? jobs->max_jobs : 0,
                    .max_queued_identities = jobs ? jobs->max_identities : 0,
                    .max_result_rows = jobs ? jobs->max_rows : 0};
    if (bd_key_generate(text, k.hash) != BD_OK) {
        fprintf(stderr, "breachctl: cannot generate a key\n");
        return BD_EXIT_FAIL;
    }
    int64_t id;
    if (bd_store_key_add(s, &k, &id) != BD_OK) {
        fprintf(stderr, "breachctl: cannot store the key\n");
        return BD_EXIT_FAIL;
    }
    printf("%s\n", text);
    fflush(stdout);
    char quota[48] = "";
    if (quota_per_month)
        snprintf(quota, sizeof quota, ", %lld requests/month", (long long)quota_per_month);
    fprintf(stderr,
            "breachctl: key %lld '%s' (%s, %lld requests/hour, %lld exact card lookups/day%s) "
            "created; it is shown only this once\n",
            (long long)id, name, plan, (long long)rate, (long long)exact_per_day, quota);
    return BD_EXIT_OK;
}
