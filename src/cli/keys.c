/* breachctl keys create|list|revoke|set-quota|set-job-limits. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "auth/key_types.h"
#include "auth/keys.h"
#include "cli/args.h"
#include "cli/cli.h"
#include "core/date.h"
#include "core/json.h"
#include "core/term.h"

static const char USAGE[] =
    "usage: breachctl keys create --db PATH --name TEXT [--plan standard|enterprise]\n"
    "                             [--rate N/h] [--exact-lookups N/day] [--expires YYYY-MM-DD]\n"
    "                             [--quota N/month] [--max-jobs N]\n"
    "                             [--max-queued-identities N] [--max-result-rows N]\n"
    "                             [--tenant ID] [--types LIST] [--allow-ip CIDR]...\n"
    "                             [--role user|admin]\n"
    "       breachctl keys list --db PATH\n"
    "       breachctl keys revoke ID --db PATH\n"
    "       breachctl keys set-quota ID N/month|none --db PATH\n"
    "       breachctl keys set-job-limits ID [--max-jobs N|default]\n"
    "                             [--max-queued-identities N|default]\n"
    "                             [--max-result-rows N|default] --db PATH\n";

static const char QUOTA_HELP[] =
    "is requests per calendar month (UTC), 1 to 1000000000000, like 10000/month";

/* The job limits' flags, what each bounds, and its default. */
static const struct {
    const char *flag, *what;
    int64_t fallback;
} JOB_LIMITS[3] = {
    {"--max-jobs", "jobs queued or running at once", BD_KEY_MAX_JOBS},
    {"--max-queued-identities", "identities of those not yet looked up",
     BD_KEY_MAX_QUEUED_IDENTITIES},
    {"--max-result-rows", "result rows kept in its jobs", BD_KEY_MAX_RESULT_ROWS},
};

static bd_result key_before(bd_store *s, int64_t id, bd_buf *out);
static bd_result audit_key(bd_store *s, const char *action, int64_t id, const bd_buf *before);
/* One change of key id, in its own transaction with the audit row it leaves. */
typedef bd_result (*key_change_fn)(bd_store *s, int64_t id, const int64_t *arg);
static bd_result change_key_audited(bd_store *s, int64_t id, const char *action,
                                    key_change_fn change, const int64_t *arg);
static bd_result store_job_limits(bd_store *s, int64_t id, const int64_t *v)
{
    return bd_store_key_set_job_limits(s, id, v[0], v[1], v[2]);
}
static bd_result store_quota(bd_store *s, int64_t id, const int64_t *per_month)
{
    return bd_store_key_set_quota(s, id, *per_month);
}
static bd_result store_revoke(bd_store *s, int64_t id, const int64_t *now)
{
    return bd_store_key_revoke(s, id, *now);
}

/* The job limits given (NULL: not given) into v (0: the default, -1: not given when
 * keep_unset); false (said) for a bad one. */
static bool parse_job_limits(const char *cmd, const char *const given[3], bool keep_unset,
                             int64_t v[3])
{
    for (int i = 0; i < 3; i++) {
        v[i] = keep_unset ? -1 : 0;
        if (!given[i])
            continue;
        if (keep_unset && strcmp(given[i], "default") == 0) {
            v[i] = 0;
            continue;
        }
        if (!bd_job_limit_parse(given[i], &v[i])) {
            fprintf(stderr, "breachctl keys %s: %s is the most %s, 1 to 1000000000000%s "
                            "(by default %lld)\n",
                    cmd, JOB_LIMITS[i].flag, JOB_LIMITS[i].what, keep_unset ? ", or default" : "",
                    (long long)JOB_LIMITS[i].fallback);
            return false;
        }
    }
    return true;
}

/* keys set-job-limits ID [--max-jobs N|default] ...: servers apply them within a few seconds
 * (the key generation moves), to jobs submitted from then on and to records not yet
 * stored. */
static int set_job_limits(const char *db, const char *secret, int npos, const char **pos,
                          const char *const given[3])
{
    int64_t id, v[3];
    if (npos != 1 || !bd_parse_i64(pos[0], 1, INT64_MAX, &id) ||
        (!given[0] && !given[1] && !given[2])) {
        fprintf(stderr, "breachctl keys set-job-limits: give the key's ID (see 'keys list') and "
                        "a limit to set, like: keys set-job-limits 3 --max-jobs 20 --db PATH\n");
        return BD_EXIT_FAIL;
    }
    if (!parse_job_limits("set-job-limits", given, true, v))
        return BD_EXIT_FAIL;
    bd_store *s;
    uint8_t key[BD_SECRET_LEN];
    if (bd_cli_open(db, secret, &s, key) != BD_EXIT_OK)
        return BD_EXIT_FAIL;
    bd_key_row k;
    bd_result r = change_key_audited(s, id, "key.update", store_job_limits, v);
    if (r == BD_OK)
        r = bd_store_key_get(s, id, &k);
    bd_store_close(s);
    if (r == BD_ERR_NOT_FOUND) {
        fprintf(stderr, "breachctl keys set-job-limits: no active key %lld\n", (long long)id);
        return BD_EXIT_FAIL;
    }
    if (r != BD_OK) {
        fprintf(stderr, "breachctl keys set-job-limits: the store did not take the change\n");
        return BD_EXIT_FAIL;
    }
    bd_job_limits lim;
    bd_key_job_limits(&k, &lim);
    fprintf(stderr,
            "breachctl: key %lld may have %lld%s jobs queued or running, %lld%s identities "
            "waiting in them and %lld%s result rows kept; servers apply it within a few "
            "seconds\n",
            (long long)id, (long long)lim.max_jobs, k.max_jobs ? "" : " (the default)",
            (long long)lim.max_identities, k.max_queued_identities ? "" : " (the default)",
            (long long)lim.max_rows, k.max_result_rows ? "" : " (the default)");
    return BD_EXIT_OK;
}

/* Days since 1970-01-01 of a civil date (proleptic Gregorian). */
static int64_t days_from_civil(int y, int m, int d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

/* --exact-lookups: "N/day" or "N", 0 (exact lookups disabled) to BD_KEY_EXACT_PER_DAY_MAX. */
static bool parse_exact_lookups(const char *s, int64_t *per_day)
{
    if (strcmp(s, "0") == 0 || strcmp(s, "0/day") == 0) {
        *per_day = 0;
        return true;
    }
    return bd_parse_rate(s, "/day", BD_KEY_EXACT_PER_DAY_MAX, per_day);
}

static void format_time(int64_t t, char out[11])
{
    if (t == 0) {
        snprintf(out, 11, "-");
        return;
    }
    time_t tt = (time_t)t;
    struct tm tm;
    gmtime_r(&tt, &tm);
    bd_datetime d = {.y = tm.tm_year + 1900, .m = tm.tm_mon + 1, .d = tm.tm_mday};
    bd_date_format_iso(&d, out);
}

static int print_key(void *ctx, const bd_key_row *k)
{
    int64_t now = *(const int64_t *)ctx;
    char created[11], expires[11], quota[24] = "-";
    if (k->quota_per_month)
        snprintf(quota, sizeof quota, "%lld", (long long)k->quota_per_month);
    format_time(k->created_at, created);
    format_time(k->expires_at, expires);
    const char *status = k->revoked_at                           ? "revoked"
                         : k->expires_at && k->expires_at <= now ? "expired"
                                                                 : "active";
    char tenant[24] = "-";
    if (k->tenant_id)
        snprintf(tenant, sizeof tenant, "%lld", (long long)k->tenant_id);
    /* the types it may search: "all", or their names (a stored 0 is its default) */
    uint32_t types = bd_key_types_resolve(k->types, k->tenant_id);
    bd_buf tb;
    bd_buf_init(&tb, 4096);
    if (types == BD_KEY_TYPES_ALL)
        bd_buf_append_str(&tb, "all");
    else
        bd_key_types_format(types, &tb);
    /* the name is anyone's text: shown escaped, never as terminal control */
    bd_term_printf(stdout,
                   "%-6lld %-24.*s %-11.*s %9lld %9lld %13s %-10s %-10s %-8s %-6s %-18.*s "
                   "%-18.*s %s",
                   (long long)k->id, (int)k->name.len, k->name.ptr, (int)k->plan.len, k->plan.ptr,
                   (long long)k->rate_per_hour, (long long)k->exact_per_day, quota, created,
                   expires, status, tenant, (int)tb.len, tb.data ? tb.data : "",
                   k->allow_ip.len ? (int)k->allow_ip.len : 1,
                   k->allow_ip.len ? k->allow_ip.ptr : "-",
                   k->role == BD_KEY_ROLE_ADMIN ? "admin" : "user");
    putchar('\n');
    bd_buf_free(&tb);
    return 0;
}

/* A key as its audit rows hold it (never its text or hash). */
static bd_result key_json(const bd_key_row *k, bd_buf *out)
{
    bd_json w;
    bd_buf_reset(out);
    bd_json_init(&w, out);
    bd_json_object_begin(&w);
    BD_JSON_KEY(&w, "id");
    bd_json_int(&w, k->id);
    BD_JSON_KEY(&w, "name");
    bd_json_string(&w, k->name);
    BD_JSON_KEY(&w, "plan");
    bd_json_string(&w, k->plan);
    BD_JSON_KEY(&w, "rate");
    bd_json_int(&w, k->rate_per_hour);
    BD_JSON_KEY(&w, "quota");
    bd_json_int(&w, k->quota_per_month);
    BD_JSON_KEY(&w, "expires_at");
    bd_json_int(&w, k->expires_at);
    BD_JSON_KEY(&w, "tenant");
    if (k->tenant_id)
        bd_json_int(&w, k->tenant_id);
    else
        bd_json_null(&w);
    bd_buf types;
    bd_buf_init(&types, 4096);
    bd_key_types_format(bd_key_types_resolve(k->types, k->tenant_id), &types);
    BD_JSON_KEY(&w, "types");
    bd_json_string(&w, (bd_slice){types.data ? types.data : "", types.len});
    bd_buf_free(&types);
    BD_JSON_KEY(&w, "allow_ip");
    bd_json_string(&w, k->allow_ip.ptr ? k->allow_ip : BD_SLICE_LIT(""));
    BD_JSON_KEY(&w, "role");
    bd_json_cstring(&w, k->role == BD_KEY_ROLE_ADMIN ? "admin" : "user");
    bd_json_object_end(&w);
    return bd_json_result(&w);
}

/* Writes key id's audit row (action, its row before as read by the caller, and after). */
static bd_result audit_key(bd_store *s, const char *action, int64_t id, const bd_buf *before)
{
    bd_key_row k;
    bd_buf after;
    bd_buf_init(&after, 1u << 20);
    bd_result r = bd_store_key_get(s, id, &k);
    if (r == BD_OK)
        r = key_json(&k, &after);
    if (r == BD_OK)
        r = bd_cli_audit(s, action, id, before, &after);
    bd_buf_free(&after);
    return r;
}

/* The key's row as an audit row's "before". */
static bd_result key_before(bd_store *s, int64_t id, bd_buf *out)
{
    bd_key_row k;
    bd_result r = bd_store_key_get(s, id, &k);
    return r == BD_OK ? key_json(&k, out) : r;
}

static bd_result change_key_audited(bd_store *s, int64_t id, const char *action,
                                    key_change_fn change, const int64_t *arg)
{
    bd_buf before;
    bd_buf_init(&before, 1u << 20);
    bd_result r = bd_store_begin(s);
    if (r == BD_OK)
        r = key_before(s, id, &before);
    if (r == BD_OK)
        r = change(s, id, arg);
    if (r == BD_OK)
        r = audit_key(s, action, id, &before);
    if (r == BD_OK)
        r = bd_store_commit(s);
    else
        bd_store_rollback(s);
    bd_buf_free(&before);
    return r;
}

/* keys create with its scope: the key and its audit row in one transaction; prints the key
 * alone. */
static int create_key(bd_store *s, bd_key_row *k)
{
    char text[BD_KEY_TEXT_LEN + 1];
    k->created_at = (int64_t)time(NULL);
    if (bd_key_generate(text, k->hash) != BD_OK) {
        fprintf(stderr, "breachctl: cannot generate a key\n");
        return BD_EXIT_FAIL;
    }
    bd_buf after;
    bd_buf_init(&after, 1u << 20);
    int64_t id = 0;
    bd_result r = bd_store_begin(s);
    if (r == BD_OK)
        r = bd_store_key_add(s, k, &id);
    if (r == BD_OK) {
        k->id = id;
        r = key_json(k, &after);
    }
    if (r == BD_OK)
        r = bd_cli_audit(s, "key.create", id, NULL, &after);
    if (r == BD_OK)
        r = bd_store_commit(s);
    bd_buf_free(&after);
    if (r != BD_OK) {
        bd_store_rollback(s);
        if (r == BD_ERR_NOT_FOUND)
            fprintf(stderr, "breachctl keys create: there is no tenant %lld (see 'tenants "
                            "list')\n",
                    (long long)k->tenant_id);
        else
            fprintf(stderr, "breachctl: cannot store the key\n");
        return BD_EXIT_FAIL;
    }
    printf("%s\n", text);
    fflush(stdout);
    char quota[48] = "", scope[64] = "";
    if (k->quota_per_month)
        snprintf(quota, sizeof quota, ", %lld requests/month", (long long)k->quota_per_month);
    if (k->tenant_id)
        snprintf(scope, sizeof scope, ", tenant %lld", (long long)k->tenant_id);
    else if (k->role == BD_KEY_ROLE_ADMIN)
        snprintf(scope, sizeof scope, ", admin");
    bd_term_printf(stderr,
                   "breachctl: key %lld '%.*s' (%.*s, %lld requests/hour, %lld exact card "
                   "lookups/day%s%s) created; it is shown only this once",
                   (long long)id, (int)k->name.len, k->name.ptr, (int)k->plan.len, k->plan.ptr,
                   (long long)k->rate_per_hour, (long long)k->exact_per_day, quota, scope);
    fputc('\n', stderr);
    return BD_EXIT_OK;
}

/* --tenant, --types, --allow-ip and --role of keys create into k; false (said) for a bad
 * one. allow holds the canonical list's text. */
static bool parse_scope(const char *tenant, const char *types, const char *const *allow,
                        int nallow, const char *role, bd_key_row *k, bd_buf *allow_text)
{
    const char *cmd = "breachctl keys create";
    if (tenant && !bd_parse_i64(tenant, 1, INT64_MAX, &k->tenant_id)) {
        fprintf(stderr, "%s: --tenant is a tenant's ID (see 'tenants list')\n", cmd);
        return false;
    }
    if (types && !bd_key_types_parse(types, &k->types)) {
        fprintf(stderr,
                "%s: --types is a comma-separated list of email, email_domain, phone_number, "
                "username, ip_address, social_security_number, password, password_hash, "
                "bitcoin_address, website_domain and cards\n",
                cmd);
        return false;
    }
    if (role && strcmp(role, "admin") == 0)
        k->role = BD_KEY_ROLE_ADMIN;
    else if (role && strcmp(role, "user") != 0) {
        fprintf(stderr, "%s: --role is user or admin\n", cmd);
        return false;
    }
    if (k->role == BD_KEY_ROLE_ADMIN && k->tenant_id) {
        fprintf(stderr, "%s: an admin key belongs to no tenant: give --role admin or "
                        "--tenant, not both\n",
                cmd);
        return false;
    }
    for (int i = 0; i < nallow; i++) {
        bd_cidr c;
        char canon[64];
        if (!bd_cidr_parse(bd_slice_from(allow[i]), &c)) {
            bd_term_printf(stderr,
                           "%s: --allow-ip '%s' is not an address or a block of them, like "
                           "192.0.2.0/24 or 2001:db8::/32 (no bits set past the prefix)",
                           cmd, allow[i]);
            fputc('\n', stderr);
            return false;
        }
        bd_cidr_format(&c, canon);
        if (allow_text->len)
            bd_buf_append_char(allow_text, ',');
        bd_buf_append_str(allow_text, canon);
    }
    k->allow_ip = (bd_slice){allow_text->data, allow_text->len};
    return true;
}

/* keys set-quota ID N/month|none: servers apply it within a few seconds (the key
 * generation moves); what the key used this month stays counted. */
static int set_quota(const char *db, const char *secret, int npos, const char **pos)
{
    int64_t id, per_month = 0;
    if (npos != 2 || !bd_parse_i64(pos[0], 1, INT64_MAX, &id)) {
        fprintf(stderr, "breachctl keys set-quota: give the key's ID (see 'keys list') and "
                        "its quota, like: keys set-quota 3 10000/month --db PATH\n");
        return BD_EXIT_FAIL;
    }
    if (strcmp(pos[1], "none") != 0 && !bd_quota_parse(pos[1], &per_month)) {
        fprintf(stderr, "breachctl keys set-quota: the quota %s, or none\n", QUOTA_HELP);
        return BD_EXIT_FAIL;
    }
    bd_store *s;
    uint8_t key[BD_SECRET_LEN];
    if (bd_cli_open(db, secret, &s, key) != BD_EXIT_OK)
        return BD_EXIT_FAIL;
    bd_result r = change_key_audited(s, id, "key.update", store_quota, &per_month);
    bd_store_close(s);
    if (r == BD_ERR_NOT_FOUND) {
        fprintf(stderr, "breachctl keys set-quota: no active key %lld\n", (long long)id);
        return BD_EXIT_FAIL;
    }
    if (r != BD_OK) {
        fprintf(stderr, "breachctl keys set-quota: the store did not take the change\n");
        return BD_EXIT_FAIL;
    }
    if (per_month)
        fprintf(stderr, "breachctl: key %lld may make %lld requests a month; servers apply it "
                        "within a few seconds\n", (long long)id, (long long)per_month);
    else
        fprintf(stderr, "breachctl: key %lld has no monthly quota now\n", (long long)id);
    return BD_EXIT_OK;
}

int bd_cmd_keys(int argc, char **argv)
{
    if (argc < 1) {
        fputs(USAGE, stderr);
        return BD_EXIT_FAIL;
    }
    const char *sub = argv[0];
    const char *allow[BD_KEY_ALLOW_MAX];
    int nallow = 0, rest = argc - 1;
    if (bd_cli_take_repeated("breachctl keys", &rest, argv + 1, "--allow-ip", allow,
                             BD_KEY_ALLOW_MAX, &nallow) != 0)
        return BD_EXIT_FAIL;
    const char *db = NULL, *secret = NULL, *name = NULL, *plan = "standard", *rate = NULL,
               *exact = NULL, *expires = NULL, *quota = NULL, *pos[2] = {NULL, NULL},
               *jobs[3] = {NULL, NULL, NULL}, *tenant = NULL, *types = NULL, *role = NULL;
    const bd_option opts[] = {{"--db", &db, NULL},
                              {"--secret", &secret, NULL},
                              {"--name", &name, NULL},
                              {"--plan", &plan, NULL},
                              {"--rate", &rate, NULL},
                              {"--exact-lookups", &exact, NULL},
                              {"--expires", &expires, NULL},
                              {"--quota", &quota, NULL},
                              {JOB_LIMITS[0].flag, &jobs[0], NULL},
                              {JOB_LIMITS[1].flag, &jobs[1], NULL},
                              {JOB_LIMITS[2].flag, &jobs[2], NULL},
                              {"--tenant", &tenant, NULL},
                              {"--types", &types, NULL},
                              {"--role", &role, NULL},
                              {NULL, NULL, NULL}};
    int npos = 0;
    if (!bd_parse_options("breachctl keys", rest, argv + 1, opts, pos, 2, &npos))
        return BD_EXIT_FAIL;
    if ((tenant || types || role || nallow) && strcmp(sub, "create") != 0) {
        fprintf(stderr, "breachctl keys %s: --tenant, --types, --allow-ip and --role are for "
                        "keys create\n",
                sub);
        return BD_EXIT_FAIL;
    }
    const char *id = pos[0];
    if (strcmp(sub, "set-quota") == 0)
        return set_quota(db, secret, npos, pos);
    if (strcmp(sub, "set-job-limits") == 0)
        return set_job_limits(db, secret, npos, pos, jobs);
    if (npos > 1) {
        fprintf(stderr, "breachctl keys: unexpected argument '%s'\n", pos[1]);
        return BD_EXIT_FAIL;
    }
    if (!db) {
        fputs(USAGE, stderr);
        return BD_EXIT_FAIL;
    }
    int64_t now = (int64_t)time(NULL);
    if (strcmp(sub, "create") == 0) {
        int64_t per_hour, exact_per_day = BD_KEY_EXACT_PER_DAY, expires_at = 0, per_month = 0;
        if (!name || !*name || strlen(name) > BD_KEY_NAME_MAX) {
            fprintf(stderr, "breachctl keys create: --name of 1 to %d characters is required\n",
                    BD_KEY_NAME_MAX);
            return BD_EXIT_FAIL;
        }
        if (!bd_plan_rate(plan, &per_hour)) {
            fprintf(stderr, "breachctl keys create: --plan is standard or enterprise\n");
            return BD_EXIT_FAIL;
        }
        if (rate) {
            if (!bd_parse_rate(rate, "/h", 1000000000, &per_hour)) {
                fprintf(stderr,
                        "breachctl keys create: --rate is requests per hour, like 5000/h\n");
                return BD_EXIT_FAIL;
            }
            plan = "custom";
        }
        if (exact && !parse_exact_lookups(exact, &exact_per_day)) {
            fprintf(stderr,
                    "breachctl keys create: --exact-lookups is card lookups by full number or "
                    "Hash: per day, 0 to %d, like 20/day\n",
                    BD_KEY_EXACT_PER_DAY_MAX);
            return BD_EXIT_FAIL;
        }
        if (quota && !bd_quota_parse(quota, &per_month)) {
            fprintf(stderr, "breachctl keys create: --quota %s\n", QUOTA_HELP);
            return BD_EXIT_FAIL;
        }
        int64_t job_limits[3];
        if (!parse_job_limits("create", jobs, false, job_limits))
            return BD_EXIT_FAIL;
        if (expires) {
            bd_datetime d;
            if (!bd_date_parse_iso(bd_slice_from(expires), &d)) {
                fprintf(stderr, "breachctl keys create: --expires is a date, YYYY-MM-DD\n");
                return BD_EXIT_FAIL;
            }
            expires_at = days_from_civil(d.y, d.m, d.d) * 86400;
            if (expires_at <= now) {
                fprintf(stderr, "breachctl keys create: --expires must be in the future\n");
                return BD_EXIT_FAIL;
            }
        }
        bd_key_row k = {.name = bd_slice_from(name),
                        .plan = bd_slice_from(plan),
                        .rate_per_hour = per_hour,
                        .exact_per_day = exact_per_day,
                        .expires_at = expires_at,
                        .quota_per_month = per_month,
                        .max_jobs = job_limits[0],
                        .max_queued_identities = job_limits[1],
                        .max_result_rows = job_limits[2]};
        bd_buf allow_text;
        bd_buf_init(&allow_text, 4096);
        if (!parse_scope(tenant, types, allow, nallow, role, &k, &allow_text)) {
            bd_buf_free(&allow_text);
            return BD_EXIT_FAIL;
        }
        bd_store *s;
        uint8_t key[BD_SECRET_LEN];
        int rc = bd_cli_open(db, secret, &s, key);
        if (rc == BD_EXIT_OK) {
            rc = create_key(s, &k);
            bd_store_close(s);
        }
        bd_buf_free(&allow_text);
        return rc;
    }
    if (strcmp(sub, "list") == 0 || strcmp(sub, "revoke") == 0) {
        bd_store *s;
        uint8_t key[BD_SECRET_LEN];
        int64_t n = 0;
        if (sub[0] == 'r' && !bd_parse_i64(id, 1, INT64_MAX, &n)) {
            fprintf(stderr, "breachctl keys revoke: give the key's ID (see 'keys list')\n");
            return BD_EXIT_FAIL;
        }
        if (bd_cli_open(db, secret, &s, key) != BD_EXIT_OK)
            return BD_EXIT_FAIL;
        int rc = BD_EXIT_OK;
        if (sub[0] == 'l') {
            printf("%-6s %-24s %-11s %9s %9s %13s %-10s %-10s %-8s %-6s %-18s %-18s %s\n",
                   "ID", "NAME", "PLAN", "RATE/H", "EXACT/DAY", "QUOTA/MONTH", "CREATED",
                   "EXPIRES", "STATUS", "TENANT", "TYPES", "ALLOW_IP", "ROLE");
            if (bd_store_key_list(s, print_key, &now) != BD_OK)
                rc = BD_EXIT_FAIL;
        } else {
            bd_result r = change_key_audited(s, n, "key.revoke", store_revoke, &now);
            if (r == BD_OK)
                fprintf(stderr,
                        "breachctl: key %lld revoked; servers stop accepting it within "
                        "a few seconds\n",
                        (long long)n);
            else {
                fprintf(stderr, "breachctl keys revoke: no active key %lld\n", (long long)n);
                rc = BD_EXIT_FAIL;
            }
        }
        bd_store_close(s);
        return rc;
    }
    fputs(USAGE, stderr);
    return BD_EXIT_FAIL;
}
