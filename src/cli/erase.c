/* breachctl erase --email X | --breach UUID: right-to-erasure and retention removal. */
#include <stdio.h>
#include <string.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "core/term.h"
#include "core/uuid.h"
#include "ingest/normalize.h"
#include "store/pastes.h"

static int print_removed(void *ctx, const bd_stats_row *row)
{
    (void)ctx;
    bd_term_printf(stdout, "%.*s  %lld records  %.*s", (int)row->uuid.len, row->uuid.ptr,
                   (long long)row->records, (int)row->source_name.len, row->source_name.ptr);
    putchar('\n');
    return 0;
}

/* Runs the erasure and says what it removed. */
static bd_result erase(bd_store *s, const char *email, const char *uuid)
{
    int64_t removed = 0;
    bd_result r;
    if (email) {
        r = bd_store_erase_email(s, email, print_removed, NULL, &removed);
        /* and its SHA-1 for the HIBP API's breachedaccount/range (store/pastes.h) */
        if (r == BD_OK && (r = bd_store_begin(s)) == BD_OK) {
            r = bd_store_email_hash_forget(s, bd_slice_from(email));
            if (r == BD_OK)
                r = bd_store_commit(s);
            else
                bd_store_rollback(s);
        }
        if (r == BD_OK) {
            bd_term_printf(stderr, "breachctl: erased %lld records of %s", (long long)removed,
                           email);
            fputc('\n', stderr);
        }
    } else {
        r = bd_store_erase_breach(s, uuid, &removed);
        if (r == BD_OK)
            fprintf(stderr, "breachctl: erased breach %s and its %lld records\n", uuid,
                    (long long)removed);
        else if (r == BD_ERR_NOT_FOUND)
            fprintf(stderr, "breachctl erase: no breach %s\n", uuid);
    }
    if (r != BD_OK && r != BD_ERR_NOT_FOUND)
        fprintf(stderr, "breachctl erase: the store failed: %s\n", bd_result_str(r));
    return r;
}

/* The erased rows are overwritten in the store file, but the write-ahead log keeps the pages
 * they were on until it is emptied; erasing leaves nothing recoverable only after that. */
static int truncate_log(bd_store *s, const char *db, int64_t wait_s)
{
    bd_store_caps caps;
    bd_store_capabilities(s, &caps);
    if (!caps.write_ahead_log_file) /* the database server recycles its own log */
        return BD_EXIT_OK;
    bd_result r = bd_store_truncate_log(s, wait_s * 1000);
    if (r == BD_OK)
        return BD_EXIT_OK;
    fprintf(stderr, "breachctl erase: copies of the erased rows remain in the write-ahead log ");
    if (r == BD_ERR_BUSY)
        fprintf(stderr,
                "(%s%s): readers kept it in use for %lld s; run the same erase again to "
                "finish (or stop breachd for a moment)\n",
                db, caps.log_file_suffix, (long long)wait_s);
    else
        fprintf(stderr, "(%s%s): the checkpoint failed: %s\n", db, caps.log_file_suffix,
                bd_result_str(r));
    return BD_EXIT_FAIL;
}

int bd_cmd_erase(int argc, char **argv)
{
    const char *db = NULL, *secret = NULL, *email = NULL, *breach = NULL, *wait = "30";
    const bd_option opts[] = {{"--db", &db, NULL},       {"--secret", &secret, NULL},
                              {"--email", &email, NULL}, {"--breach", &breach, NULL},
                              {"--wait", &wait, NULL},   {NULL, NULL, NULL}};
    if (!bd_parse_options("breachctl erase", argc, argv, opts, NULL, 0, NULL))
        return BD_EXIT_FAIL;
    int64_t wait_s;
    if (!db || !email == !breach || !bd_parse_i64(wait, 0, 3600, &wait_s)) {
        fputs("usage: breachctl erase --db PATH (--email ADDRESS | --breach UUID) "
              "[--wait SECONDS]\n",
              stderr);
        return BD_EXIT_FAIL;
    }
    char norm[BD_NORM_MAX + 1], uuid[BD_UUID_TEXT_LEN + 1];
    size_t n;
    const char *why = NULL;
    if (email && bd_normalize(BD_ID_EMAIL, bd_slice_from(email), norm, &n, &why) != BD_OK) {
        fprintf(stderr, "breachctl erase: --email: %s\n", why ? why : "not an email address");
        return BD_EXIT_FAIL;
    }
    if (breach && !bd_uuid_canonical(bd_slice_from(breach), uuid)) {
        fprintf(stderr, "breachctl erase: --breach needs a UUID\n");
        return BD_EXIT_FAIL;
    }
    bd_store *s;
    uint8_t key[BD_SECRET_LEN];
    if (bd_cli_open(db, secret, &s, key) != BD_EXIT_OK)
        return BD_EXIT_FAIL;
    bd_result r = erase(s, email ? norm : NULL, uuid);
    /* also after "no breach": a run that found nothing left still finishes an earlier one */
    int rc = r == BD_OK || r == BD_ERR_NOT_FOUND ? truncate_log(s, db, wait_s) : BD_EXIT_FAIL;
    bd_store_close(s);
    return r == BD_OK ? rc : BD_EXIT_FAIL;
}
