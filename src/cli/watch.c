/* breachctl watch add|list|remove. For `watch add`, --secret is the webhook's signing secret
 * (the scripting contract), or --secret-file names a private file holding it; the server
 * secret file, needed to hash a password or SSN watch the way records are hashed, is
 * --server-secret (default: the store's default path). A signing secret given on the
 * command line is copied and wiped from argv at once, so ps shows it only for the moment
 * before breachctl parses its arguments. */
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "core/term.h"
#include "ingest/watch_spec.h"
#include "webhook/formats.h"
#include "webhook/policy.h"

static const char USAGE[] =
    "usage: breachctl watch add --db PATH --key KEY_ID --type TYPE --account VALUE --url URL\n"
    "                           [--format json|slack|teams|email|splunk-hec]\n"
    "                           [--secret SIGNING_SECRET|--secret-file FILE]\n"
    "                           [--server-secret FILE]\n"
    "                           [--webhook-allow CIDR]...\n"
    "       breachctl watch list --db PATH [--key KEY_ID] [--secret FILE]\n"
    "       breachctl watch remove ID --db PATH [--key KEY_ID] [--secret FILE]\n"
    "TYPE is breach-search's type (email, email_domain, phone_number, username, ip_address,\n"
    "social_security_number, password, password_hash, bitcoin_address, website_domain) or\n"
    "bin (6 digits).\n"
    "The secret: json's signing secret, splunk-hec's HEC token; slack, teams and email take\n"
    "none. An email watch's URL is mailto:ADDRESS (breachd --smtp-url sends it).\n";

typedef struct {
    const char *db, *key, *type, *account, *url, *secret, *secret_file, *server_secret, *format;
    bd_webhook_policy policy;
    const char *pos[2];
    int npos;
} watch_args;

static bool parse(int argc, char **argv, watch_args *a)
{
    bd_uri_arg db = {&BD_OPT_DB, NULL, NULL};
    for (int i = 0; i < argc; i++) {
        const char *v = NULL;
        const char **slot = NULL;
        int taken = bd_uri_arg_take(&db, "breachctl watch", argc, argv, &i);
        if (taken < 0)
            return false;
        if (taken)
            continue;
        if (bd_arg_value(argc, argv, &i, "--key", &v))
            slot = &a->key;
        else if (bd_arg_value(argc, argv, &i, "--type", &v))
            slot = &a->type;
        else if (bd_arg_value(argc, argv, &i, "--account", &v))
            slot = &a->account;
        else if (bd_arg_value(argc, argv, &i, "--url", &v))
            slot = &a->url;
        else if (bd_arg_value(argc, argv, &i, "--secret", &v))
            slot = &a->secret;
        else if (bd_arg_value(argc, argv, &i, "--format", &v))
            slot = &a->format;
        else if (bd_arg_value(argc, argv, &i, "--secret-file", &v))
            slot = &a->secret_file;
        else if (bd_arg_value(argc, argv, &i, "--server-secret", &v))
            slot = &a->server_secret;
        else if (bd_arg_value(argc, argv, &i, "--webhook-allow", &v)) {
            if (v && !bd_webhook_allow(&a->policy, v)) {
                fprintf(stderr, "breachctl watch: --webhook-allow takes a range like "
                                "10.0.0.0/8\n");
                return false;
            }
            slot = &v;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "breachctl watch: unknown option '%s'\n", argv[i]);
            return false;
        } else if (a->npos < 2) {
            a->pos[a->npos++] = argv[i];
            continue;
        } else {
            fprintf(stderr, "breachctl watch: unexpected argument '%s'\n", argv[i]);
            return false;
        }
        if (!v) {
            fprintf(stderr, "breachctl watch: %s needs a value\n", argv[i]);
            return false;
        }
        *slot = v;
    }
    a->db = bd_uri_arg_done(&db);
    return true;
}

/* The watch's fields, checked before the store is opened (all but what needs the secret). */
static bool check_add(const watch_args *a, int64_t *key_id, int *format)
{
    *format = BD_WATCH_FORMAT_JSON;
    if (a->format && !bd_watch_format_parse(bd_slice_from(a->format), format)) {
        fprintf(stderr,
                "breachctl watch add: --format is json, slack, teams, email or splunk-hec\n");
        return false;
    }
    bool needs = bd_watch_format_needs_secret(*format);
    if (!a->key || !a->type || !a->account || !a->url || (needs && !a->secret)) {
        fputs(USAGE, stderr);
        return false;
    }
    if (!needs && a->secret) {
        fprintf(stderr, "breachctl watch add: a%s %s watch takes no --secret%s\n",
                *format == BD_WATCH_FORMAT_EMAIL ? "n" : "", bd_watch_format_name(*format),
                *format == BD_WATCH_FORMAT_EMAIL ? "" : ": its url is the receiver's credential");
        return false;
    }
    if (!bd_parse_i64(a->key, 1, INT64_MAX, key_id)) {
        fprintf(stderr, "breachctl watch add: --key is an API key's ID (see 'keys list')\n");
        return false;
    }
    size_t sl = a->secret ? strlen(a->secret) : 0;
    if (needs && (sl < BD_WEBHOOK_SECRET_MIN || sl > BD_WEBHOOK_SECRET_MAX)) {
        fprintf(stderr,
                "breachctl watch add: --secret (the signing secret) must be %d to %d "
                "bytes\n",
                BD_WEBHOOK_SECRET_MIN, BD_WEBHOOK_SECRET_MAX);
        return false;
    }
    const char *why;
    bd_slice address;
    if (*format == BD_WATCH_FORMAT_EMAIL) {
        if (bd_watch_mailto_parse(bd_slice_from(a->url), &address, &why) == BD_OK)
            return true;
        fprintf(stderr, "breachctl watch add: --url: %s\n", why);
        return false;
    }
    bd_webhook_url u;
    if (bd_webhook_url_parse(bd_slice_from(a->url), &u, &why) != BD_OK) {
        fprintf(stderr, "breachctl watch add: --url: %s\n", why);
        return false;
    }
    if (bd_webhook_check_host(&a->policy, &u, &why) != BD_OK) {
        fprintf(stderr, "breachctl watch add: --url: %s\n", why);
        return false;
    }
    return true;
}

typedef struct {
    int64_t key_id;
    bool active;
} key_probe;

static int probe_key(void *ctx, const bd_key_row *k)
{
    key_probe *p = ctx;
    if (k->id == p->key_id)
        p->active = k->revoked_at == 0;
    return 0;
}

static int add(const watch_args *a)
{
    int64_t key_id;
    int format;
    if (!check_add(a, &key_id, &format))
        return BD_EXIT_FAIL;
    bd_store *s;
    uint8_t secret[BD_SECRET_LEN];
    if (bd_cli_open(a->db, a->server_secret, &s, secret) != BD_EXIT_OK)
        return BD_EXIT_FAIL;
    int rc = BD_EXIT_FAIL;
    bd_watch_spec spec;
    const char *why;
    key_probe kp = {.key_id = key_id};
    if (bd_store_key_list(s, probe_key, &kp) != BD_OK || !kp.active) {
        fprintf(stderr, "breachctl watch add: no active key %lld\n", (long long)key_id);
    } else if (bd_watch_spec_parse(secret, bd_slice_from(a->type), bd_slice_from(a->account), &spec,
                                   &why) != BD_OK) {
        fprintf(stderr, "breachctl watch add: %s\n", why);
    } else {
        bd_watch_row w = {.key_id = key_id,
                          .type = spec.type,
                          .key = {spec.key, spec.key_len},
                          .shown = {spec.shown, spec.shown_len},
                          .url = bd_slice_from(a->url),
                          .secret = bd_slice_from(a->secret ? a->secret : ""),
                          .format = format};
        int64_t id;
        bd_result r = bd_store_watch_add(s, &w, BD_WATCHES_PER_KEY, &id);
        if (r == BD_OK) {
            printf("%lld\n", (long long)id);
            fprintf(stderr,
                    "breachctl: watch %lld added for key %lld; imports from now on alert "
                    "it\n",
                    (long long)id, (long long)key_id);
            rc = BD_EXIT_OK;
        } else if (r == BD_ERR_LIMIT) {
            fprintf(stderr, "breachctl watch add: key %lld holds %d watches already\n",
                    (long long)key_id, BD_WATCHES_PER_KEY);
        } else if (r == BD_ERR_EXISTS) {
            fprintf(stderr,
                    "breachctl watch add: key %lld already watches this with this "
                    "url\n",
                    (long long)key_id);
        } else {
            fprintf(stderr, "breachctl watch add: the store did not take the watch\n");
        }
        sodium_memzero(&spec, sizeof spec);
    }
    sodium_memzero(secret, sizeof secret);
    bd_store_close(s);
    return rc;
}

static int print_watch(void *ctx, const bd_watch_row *w)
{
    (void)ctx;
    /* the values are anyone's text: shown escaped; the secret never, nor the token in a
     * Slack or Teams url */
    char buf[BD_WEBHOOK_URL_MAX + 16];
    bd_slice url = bd_watch_url_shown(w->format, w->url, buf, sizeof buf);
    bd_term_printf(stdout, "%-6lld %-6lld %-22s %-10s %-32.*s %.*s", (long long)w->id,
                   (long long)w->key_id, bd_watch_type_name(w->type),
                   bd_watch_format_name(w->format), (int)w->shown.len, w->shown.ptr,
                   (int)url.len, url.ptr);
    putchar('\n');
    return 0;
}

/* watch add with its signing secret in memory of its own: read from --secret-file, or
 * copied from argv, whose text is then wiped (the argv strings are main's, writable). */
static int add_with_secret(watch_args *a)
{
    char *copy = NULL;
    if (a->secret && a->secret_file) {
        fprintf(stderr, "breachctl watch add: give --secret or --secret-file, not both\n");
        return BD_EXIT_FAIL;
    }
    if (a->secret_file) {
        char why[512];
        if (!(copy = bd_private_file_read("--secret-file", a->secret_file, "signing secret", why,
                                          sizeof why))) {
            fprintf(stderr, "breachctl watch add: %s\n", why);
            return BD_EXIT_FAIL;
        }
    } else if (a->secret) {
        if (!(copy = strdup(a->secret))) {
            fprintf(stderr, "breachctl watch add: out of memory\n");
            return BD_EXIT_FAIL;
        }
        sodium_memzero((char *)a->secret, strlen(a->secret));
    }
    a->secret = copy;
    int rc = add(a);
    if (copy) {
        sodium_memzero(copy, strlen(copy));
        free(copy);
    }
    return rc;
}

int bd_cmd_watch(int argc, char **argv)
{
    watch_args a = {0};
    if (argc < 1 || !parse(argc - 1, argv + 1, &a) || !a.db) {
        fputs(USAGE, stderr);
        return BD_EXIT_FAIL;
    }
    const char *sub = argv[0];
    if (strcmp(sub, "add") == 0)
        return a.npos ? (fputs(USAGE, stderr), BD_EXIT_FAIL) : add_with_secret(&a);
    int64_t key_id = 0, id = 0;
    if (a.key && !bd_parse_i64(a.key, 1, INT64_MAX, &key_id)) {
        fprintf(stderr, "breachctl watch: --key is an API key's ID\n");
        return BD_EXIT_FAIL;
    }
    bool list = strcmp(sub, "list") == 0;
    if (!list &&
        (strcmp(sub, "remove") != 0 || a.npos != 1 || !bd_parse_i64(a.pos[0], 1, INT64_MAX, &id))) {
        fputs(USAGE, stderr);
        return BD_EXIT_FAIL;
    }
    bd_store *s;
    uint8_t secret[BD_SECRET_LEN];
    if (bd_cli_open(a.db, a.secret, &s, secret) != BD_EXIT_OK)
        return BD_EXIT_FAIL;
    int rc = BD_EXIT_OK;
    if (list) {
        printf("%-6s %-6s %-22s %-10s %-32s %s\n", "ID", "KEY", "TYPE", "FORMAT", "VALUE",
               "URL");
        if (bd_store_watch_list(s, key_id, print_watch, NULL) != BD_OK)
            rc = BD_EXIT_FAIL;
    } else {
        bd_result r = bd_store_watch_remove(s, key_id, id);
        if (r == BD_OK) {
            fprintf(stderr,
                    "breachctl: watch %lld removed; its undelivered alerts are "
                    "dropped\n",
                    (long long)id);
        } else {
            fprintf(stderr, "breachctl watch remove: no watch %lld%s\n", (long long)id,
                    key_id ? " of that key" : "");
            rc = BD_EXIT_FAIL;
        }
    }
    bd_store_close(s);
    return rc;
}
