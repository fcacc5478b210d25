/* breachctl tenants add|list|remove|domains: tenants (a customer whose keys see only the
 * records of its email domains) and their domains, and the audit rows every breachctl change
 * of tenants and keys leaves (key 0, address "breachctl"). */
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <time.h>

#include "auth/key_types.h"
#include "cli/args.h"
#include "cli/cli.h"
#include "core/json.h"
#include "core/term.h"
#include "ingest/normalize.h"

static const char USAGE[] =
    "usage: breachctl tenants add NAME --domain DOMAIN [--domain DOMAIN]... --db PATH\n"
    "       breachctl tenants list --db PATH\n"
    "       breachctl tenants remove ID --db PATH\n"
    "       breachctl tenants domains add|remove ID DOMAIN --db PATH\n";

#define TENANT_NAME_MAX 64 /* bytes, as the admin API's (v7/admin.h) */
#define DOMAINS_MAX 100    /* --domain options of one command */

int bd_cli_take_repeated(const char *cmd, int *argc, char **argv, const char *name,
                         const char **vals, int max, int *n)
{
    size_t nl = strlen(name);
    int out = 0;
    for (int i = 0; i < *argc; i++) {
        const char *v = NULL;
        int used = 0;
        if (strcmp(argv[i], name) == 0) {
            if (i + 1 >= *argc || strncmp(argv[i + 1], "--", 2) == 0) {
                fprintf(stderr, "%s: %s needs a value\n", cmd, name);
                return -1;
            }
            v = argv[i + 1];
            used = 2;
        } else if (strncmp(argv[i], name, nl) == 0 && argv[i][nl] == '=') {
            v = argv[i] + nl + 1;
            used = 1;
        }
        if (!used) {
            argv[out++] = argv[i];
            continue;
        }
        if (*n == max) {
            fprintf(stderr, "%s: at most %d %s options\n", cmd, max, name);
            return -1;
        }
        vals[(*n)++] = v;
        i += used - 1;
    }
    *argc = out;
    return 0;
}

bd_result bd_cli_audit(bd_store *s, const char *action, int64_t target, const bd_buf *before,
                       const bd_buf *after)
{
    char tgt[24];
    snprintf(tgt, sizeof tgt, "%lld", (long long)target);
    bd_audit_row row = {
        .at = (int64_t)time(NULL),
        .key_id = 0,
        .address = BD_SLICE_LIT("breachctl"),
        .action = bd_slice_from(action),
        .target = bd_slice_from(tgt),
        .before = before && before->len ? (bd_slice){before->data, before->len} : (bd_slice){0},
        .after = after && after->len ? (bd_slice){after->data, after->len} : (bd_slice){0},
    };
    return bd_store_audit_add(s, &row, NULL);
}

/* A tenant as its audit rows hold it: {"id":N,"name":"...","domains":[...]}. */
typedef struct {
    bd_json w;
    bool first;
} tenant_json;

static int json_domain(void *ctx, int64_t tenant, bd_slice domain)
{
    (void)tenant;
    bd_json_string(&((tenant_json *)ctx)->w, domain);
    return 0;
}

static bd_result tenant_snapshot(bd_store *s, int64_t id, bd_buf *out)
{
    bd_tenant_row t;
    bd_result r = bd_store_tenant_get(s, id, &t);
    if (r != BD_OK)
        return r;
    tenant_json tj;
    bd_buf_reset(out);
    bd_json_init(&tj.w, out);
    bd_json_object_begin(&tj.w);
    BD_JSON_KEY(&tj.w, "id");
    bd_json_int(&tj.w, t.id);
    BD_JSON_KEY(&tj.w, "name");
    bd_json_string(&tj.w, t.name); /* written before the next store call reuses its buffer */
    BD_JSON_KEY(&tj.w, "domains");
    bd_json_array_begin(&tj.w);
    r = bd_store_tenant_domains(s, id, json_domain, &tj);
    bd_json_array_end(&tj.w);
    bd_json_object_end(&tj.w);
    return r == BD_OK ? bd_json_result(&tj.w) : r;
}

bool bd_cli_domain(const char *cmd, const char *given, char out[BD_NORM_MAX + 1])
{
    size_t len;
    const char *why = NULL;
    if (bd_normalize(BD_ID_EMAIL_DOMAIN, bd_slice_from(given), out, &len, &why) != BD_OK) {
        bd_term_printf(stderr, "%s: '%s' is not a domain name: %s", cmd, given,
                       why ? why : "it is not a host name");
        fputc('\n', stderr);
        return false;
    }
    return true;
}

/* What a refused domain change says: the store's answer r for domain of tenant id. */
static void domain_refused(const char *cmd, bd_result r, int64_t id, const char *domain)
{
    if (r == BD_ERR_CONFLICT)
        fprintf(stderr,
                "%s: %s is another tenant's domain, or under or above one of another "
                "tenant's (see 'tenants list'): tenants never share records\n",
                cmd, domain);
    else if (r == BD_ERR_NOT_FOUND)
        fprintf(stderr, "%s: there is no tenant %lld (see 'tenants list')\n", cmd, (long long)id);
    else
        fprintf(stderr, "%s: the store did not take the change (%s)\n", cmd, bd_result_str(r));
}

/* tenants add NAME --domain D...: the tenant, its domains and its audit row in one
 * transaction; prints the new id alone. */
static int tenant_add(bd_store *s, const char *name, const char **given, int ngiven)
{
    const char *cmd = "breachctl tenants add";
    static char norm[DOMAINS_MAX][BD_NORM_MAX + 1];
    for (int i = 0; i < ngiven; i++)
        if (!bd_cli_domain(cmd, given[i], norm[i]))
            return BD_EXIT_FAIL;
    int64_t id = 0;
    bd_buf after;
    bd_buf_init(&after, 1u << 20);
    const char *bad = NULL;
    bd_result r = bd_store_begin(s);
    if (r == BD_OK)
        r = bd_store_tenant_add(s, bd_slice_from(name), (int64_t)time(NULL), &id);
    if (r == BD_ERR_CONFLICT) {
        bd_term_printf(stderr, "%s: a tenant named '%s' exists already (see 'tenants list')",
                       cmd, name);
        fputc('\n', stderr);
        bad = "";
    }
    for (int i = 0; r == BD_OK && i < ngiven; i++) {
        r = bd_store_tenant_domain_add(s, id, bd_slice_from(norm[i]));
        if (r != BD_OK) {
            domain_refused(cmd, r, id, norm[i]);
            bad = norm[i];
        }
    }
    if (r == BD_OK)
        r = tenant_snapshot(s, id, &after);
    if (r == BD_OK)
        r = bd_cli_audit(s, "tenant.create", id, NULL, &after);
    if (r == BD_OK)
        r = bd_store_commit(s);
    bd_buf_free(&after);
    if (r != BD_OK) {
        bd_store_rollback(s);
        if (!bad)
            fprintf(stderr, "%s: the store did not take the tenant (%s)\n", cmd,
                    bd_result_str(r));
        return BD_EXIT_FAIL;
    }
    printf("%lld\n", (long long)id);
    fflush(stdout);
    bd_term_printf(stderr,
                   "breachctl: tenant %lld '%s' created with %d domain%s; make its keys with "
                   "'keys create --tenant %lld'",
                   (long long)id, name, ngiven, ngiven == 1 ? "" : "s", (long long)id);
    fputc('\n', stderr);
    return BD_EXIT_OK;
}

/* tenants list: ID, NAME, DOMAINS (comma-separated, sorted). */
typedef struct {
    bd_store *s;
    bd_buf domains;
    bd_result err;
} lister;

static int list_domain(void *ctx, int64_t tenant, bd_slice domain)
{
    (void)tenant;
    lister *l = ctx;
    if (l->domains.len)
        bd_buf_append_char(&l->domains, ',');
    bd_buf_append_slice(&l->domains, domain);
    return 0;
}

/* The tenants' rows, copied out (a listing of domains per tenant runs inside the tenant
 * listing's callback on SQLite, whose statements stay apart; PostgreSQL's results too). */
typedef struct {
    int64_t id;
    char name[TENANT_NAME_MAX * 4 + 1];
} trow;

typedef struct {
    trow *rows;
    size_t n, cap;
    bool nomem;
} trows;

static int take_tenant(void *ctx, const bd_tenant_row *t)
{
    trows *ts = ctx;
    if (ts->n == ts->cap) {
        size_t cap = ts->cap ? ts->cap * 2 : 16;
        trow *p = realloc(ts->rows, cap * sizeof *p);
        if (!p) {
            ts->nomem = true;
            return 1;
        }
        ts->rows = p;
        ts->cap = cap;
    }
    trow *r = &ts->rows[ts->n++];
    r->id = t->id;
    size_t len = t->name.len < sizeof r->name - 1 ? t->name.len : sizeof r->name - 1;
    memcpy(r->name, t->name.ptr, len);
    r->name[len] = '\0';
    return 0;
}

static int tenant_list(bd_store *s)
{
    trows ts = {0};
    bd_result r = bd_store_tenant_list(s, take_tenant, &ts);
    if (r == BD_OK && ts.nomem)
        r = BD_ERR_NOMEM;
    lister l = {s, {0}, BD_OK};
    bd_buf_init(&l.domains, 1u << 24);
    if (r == BD_OK)
        printf("%-6s %-24s %s\n", "ID", "NAME", "DOMAINS");
    for (size_t i = 0; r == BD_OK && i < ts.n; i++) {
        bd_buf_reset(&l.domains);
        r = bd_store_tenant_domains(s, ts.rows[i].id, list_domain, &l);
        if (r != BD_OK)
            break;
        /* the name is anyone's text: shown escaped, never as terminal control */
        bd_term_printf(stdout, "%-6lld %-24s %.*s", (long long)ts.rows[i].id, ts.rows[i].name,
                       (int)l.domains.len, l.domains.data ? l.domains.data : "");
        putchar('\n');
    }
    bd_buf_free(&l.domains);
    free(ts.rows);
    if (r != BD_OK) {
        fprintf(stderr, "breachctl tenants list: cannot read the tenants (%s)\n",
                bd_result_str(r));
        return BD_EXIT_FAIL;
    }
    return BD_EXIT_OK;
}

static int tenant_remove(bd_store *s, int64_t id)
{
    const char *cmd = "breachctl tenants remove";
    bd_buf before;
    bd_buf_init(&before, 1u << 20);
    bd_result r = bd_store_begin(s);
    if (r == BD_OK)
        r = tenant_snapshot(s, id, &before);
    if (r == BD_OK)
        r = bd_store_tenant_remove(s, id);
    if (r == BD_OK)
        r = bd_cli_audit(s, "tenant.delete", id, &before, NULL);
    if (r == BD_OK)
        r = bd_store_commit(s);
    bd_buf_free(&before);
    if (r != BD_OK) {
        bd_store_rollback(s);
        if (r == BD_ERR_NOT_FOUND)
            fprintf(stderr, "%s: there is no tenant %lld (see 'tenants list')\n", cmd,
                    (long long)id);
        else if (r == BD_ERR_CONFLICT)
            fprintf(stderr,
                    "%s: tenant %lld still has active keys; revoke them first (see 'keys "
                    "list')\n",
                    cmd, (long long)id);
        else
            fprintf(stderr, "%s: the store did not take the change (%s)\n", cmd,
                    bd_result_str(r));
        return BD_EXIT_FAIL;
    }
    fprintf(stderr, "breachctl: tenant %lld removed with its domains\n", (long long)id);
    return BD_EXIT_OK;
}

static int domain_change(bd_store *s, bool add, int64_t id, const char *given)
{
    const char *cmd = add ? "breachctl tenants domains add" : "breachctl tenants domains remove";
    char domain[BD_NORM_MAX + 1];
    if (!bd_cli_domain(cmd, given, domain))
        return BD_EXIT_FAIL;
    bd_buf before, after;
    bd_buf_init(&before, 1u << 20);
    bd_buf_init(&after, 1u << 20);
    bd_result r = bd_store_begin(s);
    if (r == BD_OK)
        r = tenant_snapshot(s, id, &before);
    bool told = false;
    if (r == BD_OK) {
        r = add ? bd_store_tenant_domain_add(s, id, bd_slice_from(domain))
                : bd_store_tenant_domain_remove(s, id, bd_slice_from(domain));
        if (r == BD_ERR_NOT_FOUND && !add) {
            fprintf(stderr, "%s: tenant %lld has no domain %s\n", cmd, (long long)id, domain);
            told = true;
        } else if (r != BD_OK) {
            domain_refused(cmd, r, id, domain);
            told = true;
        }
    }
    if (r == BD_OK)
        r = tenant_snapshot(s, id, &after);
    bool changed = r == BD_OK && (before.len != after.len ||
                                  memcmp(before.data, after.data, before.len) != 0);
    if (r == BD_OK && changed)
        r = bd_cli_audit(s, "tenant.update", id, &before, &after);
    if (r == BD_OK)
        r = bd_store_commit(s);
    bd_buf_free(&before);
    bd_buf_free(&after);
    if (r != BD_OK) {
        bd_store_rollback(s);
        if (r == BD_ERR_NOT_FOUND && !told)
            fprintf(stderr, "%s: there is no tenant %lld (see 'tenants list')\n", cmd,
                    (long long)id);
        else if (!told)
            fprintf(stderr, "%s: the store did not take the change (%s)\n", cmd,
                    bd_result_str(r));
        return BD_EXIT_FAIL;
    }
    if (!changed)
        fprintf(stderr, "breachctl: tenant %lld has %s already\n", (long long)id, domain);
    else
        fprintf(stderr, "breachctl: %s %s tenant %lld; servers apply it within a few seconds\n",
                domain, add ? "added to" : "removed from", (long long)id);
    return BD_EXIT_OK;
}

int bd_cmd_tenants(int argc, char **argv)
{
    if (argc < 1) {
        fputs(USAGE, stderr);
        return BD_EXIT_FAIL;
    }
    const char *sub = argv[0];
    const char *given[DOMAINS_MAX];
    int ngiven = 0, rest = argc - 1;
    if (bd_cli_take_repeated("breachctl tenants", &rest, argv + 1, "--domain", given,
                             DOMAINS_MAX, &ngiven) != 0)
        return BD_EXIT_FAIL;
    const char *db = NULL, *secret = NULL, *pos[3] = {NULL, NULL, NULL};
    const bd_option opts[] = {
        {"--db", &db, NULL}, {"--secret", &secret, NULL}, {NULL, NULL, NULL}};
    int npos = 0;
    if (!bd_parse_options("breachctl tenants", rest, argv + 1, opts, pos, 3, &npos))
        return BD_EXIT_FAIL;
    bool add = strcmp(sub, "add") == 0, list = strcmp(sub, "list") == 0,
         remove = strcmp(sub, "remove") == 0, domains = strcmp(sub, "domains") == 0;
    int64_t id = 0;
    if (add) {
        if (npos != 1 || !*pos[0] || strlen(pos[0]) > TENANT_NAME_MAX || ngiven == 0) {
            fprintf(stderr, "breachctl tenants add: give the tenant's name (1 to %d bytes) and "
                            "its domains, like: tenants add Acme --domain acme.example --db "
                            "PATH\n",
                    TENANT_NAME_MAX);
            return BD_EXIT_FAIL;
        }
        for (const unsigned char *c = (const unsigned char *)pos[0]; *c; c++)
            if (*c < 0x20 || *c == 0x7f) {
                fprintf(stderr, "breachctl tenants add: a tenant's name holds no control "
                                "characters\n");
                return BD_EXIT_FAIL;
            }
    } else if (list) {
        if (npos != 0 || ngiven) {
            fputs(USAGE, stderr);
            return BD_EXIT_FAIL;
        }
    } else if (remove) {
        if (npos != 1 || ngiven || !bd_parse_i64(pos[0], 1, INT64_MAX, &id)) {
            fprintf(stderr, "breachctl tenants remove: give the tenant's ID (see 'tenants "
                            "list')\n");
            return BD_EXIT_FAIL;
        }
    } else if (domains) {
        if (npos != 3 || ngiven || (strcmp(pos[0], "add") != 0 && strcmp(pos[0], "remove") != 0) ||
            !bd_parse_i64(pos[1], 1, INT64_MAX, &id)) {
            fprintf(stderr, "breachctl tenants domains: add or remove, the tenant's ID and a "
                            "domain, like: tenants domains add 3 acme.example --db PATH\n");
            return BD_EXIT_FAIL;
        }
    } else {
        fputs(USAGE, stderr);
        return BD_EXIT_FAIL;
    }
    if (!db) {
        fputs(USAGE, stderr);
        return BD_EXIT_FAIL;
    }
    bd_store *s;
    uint8_t key[BD_SECRET_LEN];
    if (list ? bd_cli_open_as(db, secret, BD_STORE_READ, &s, key) != BD_EXIT_OK
             : bd_cli_open(db, secret, &s, key) != BD_EXIT_OK)
        return BD_EXIT_FAIL;
    int rc = add      ? tenant_add(s, pos[0], given, ngiven)
             : list   ? tenant_list(s)
             : remove ? tenant_remove(s, id)
                      : domain_change(s, pos[0][0] == 'a', id, pos[2]);
    bd_store_close(s);
    return rc;
}
