/* The programs' commands and options, and their --help and --version. */
#include "cli/help.h"

#include <curl/curl.h>
#include <jansson.h>
#include <libpq-fe.h>
#include <microhttpd.h>
#include <sodium.h>
#include <sqlite3.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "core/version.h"

/* ---- options shared by several commands ---- */

#define DB_TEXT                                                                                    \
    "The store: a SQLite file, or a PostgreSQL URI or keyword/value string. Keep a password "     \
    "out of ps with --db-file, BREACHD_DB or the configuration file."

static const bd_help_opt O_CONFIG = {
    "--config", "FILE", 0, BD_CONFIG_DEFAULT_PATH,
    "Read settings from FILE (breachd.conf(5)); the default file is read only when it exists. "
    "'none' reads no file. Also BREACHD_CONFIG."};
static const bd_help_opt O_HELP = {"--help", NULL, 0, NULL, "Print this help and exit."};
static const bd_help_opt O_VERSION = {"--version", NULL, 0, NULL,
                                      "Print the version, the commit and the versions of the "
                                      "linked libraries, and exit."};
static const bd_help_opt O_DB = {"--db", "PATH|URI", BD_HELP_SETTING, NULL, DB_TEXT};
static const bd_help_opt O_DB_FILE = {
    "--db-file", "FILE", BD_HELP_SETTING, NULL,
    "Read --db from FILE, a private file (mode 0600) holding the URI alone."};
static const bd_help_opt O_SECRET = {
    "--secret", "FILE", BD_HELP_SETTING, "the store's file beside it",
    "The store's secret file (32 bytes, mode 0600), made by init; required with a PostgreSQL "
    "store. Also BREACHD_SECRET or the configuration file."};
static const bd_help_opt O_WEBHOOK_ALLOW = {
    "--webhook-allow", "CIDR", BD_HELP_REPEAT | BD_HELP_SETTING, NULL,
    "A range (10.20.0.0/16, 127.0.0.1, fd00::/8) that webhooks may reach although it is "
    "loopback, private or otherwise internal; repeat for several (at most 32)."};

/* ---- breachd ---- */

static const bd_help_opt *const BREACHD_OPTS[] = {
    &O_DB,
    &O_DB_FILE,
    &O_SECRET,
    &(const bd_help_opt){"--listen", "HOST:PORT", BD_HELP_SETTING, "127.0.0.1:8080",
                         "Address and port; [::1]:8080 for IPv6, port 0 picks a free one."},
    &(const bd_help_opt){"--base-path", "PATH", BD_HELP_SETTING, "/v7",
                         "Where the v7 API is served."},
    &(const bd_help_opt){"--hibp-base-path", "PATH", BD_HELP_SETTING, "/api/v3",
                         "Where the Have I Been Pwned API v3 is served."},
    &(const bd_help_opt){"--hibp-domain-max", "N", BD_HELP_SETTING, "10000",
                         "Breach records of one email domain a v3 domain search may read."},
    &(const bd_help_opt){"--hibp-catalog-auth", "key|none", BD_HELP_SETTING, "key",
                         "none: the HIBP catalog paths answer without a key."},
    &(const bd_help_opt){"--threads", "N", BD_HELP_SETTING, "one per core",
                         "Worker threads, 1 to 256, each with its own store connection."},
    &(const bd_help_opt){"--timeout", "SECONDS", BD_HELP_SETTING, "30",
                         "Seconds a connection may stay idle while a reply is sent."},
    &(const bd_help_opt){"--header-timeout", "SECONDS", BD_HELP_SETTING, "10",
                         "Seconds for a whole request to arrive."},
    &(const bd_help_opt){"--max-connections", "N", BD_HELP_SETTING, "4096",
                         "Simultaneous connections."},
    &(const bd_help_opt){"--max-connections-per-ip", "N", BD_HELP_SETTING, "128",
                         "Simultaneous connections from one address; 0: unlimited."},
    &(const bd_help_opt){"--max-upload-memory", "MIB", BD_HELP_SETTING, "128",
                         "MiB of request bodies held at once across all connections (16 at "
                         "least)."},
    &(const bd_help_opt){"--auth-fail-limit", "N/min", BD_HELP_SETTING, "60/min",
                         "Failed keys from one address before further failures get 429."},
    &(const bd_help_opt){"--tls-cert", "FILE", BD_HELP_SETTING, NULL,
                         "PEM certificate: serve HTTPS (with --tls-key)."},
    &(const bd_help_opt){"--tls-key", "FILE", BD_HELP_SETTING, NULL, "PEM private key."},
    &(const bd_help_opt){"--access-log", "FILE", BD_HELP_SETTING, NULL,
                         "Append one JSON line per request to FILE (reopened on SIGHUP)."},
    &(const bd_help_opt){"--shared-limits", "URI", BD_HELP_SETTING, NULL,
                         "Keep every key's budgets in this PostgreSQL store, shared by every "
                         "breachd naming it."},
    &(const bd_help_opt){"--shared-limits-file", "FILE", BD_HELP_SETTING, NULL,
                         "Read --shared-limits from a private file (mode 0600)."},
    &(const bd_help_opt){"--empty-search-status", "200|404", BD_HELP_SETTING, "404",
                         "The status of a breach search that matches no record."},
    &(const bd_help_opt){"--cors-origin", "ORIGIN", BD_HELP_REPEAT | BD_HELP_SETTING, NULL,
                         "A browser origin allowed to call the API (https://dash.example.com, "
                         "or *); repeat for several (at most 32)."},
    &(const bd_help_opt){"--range-auth", "key|none", BD_HELP_SETTING, "key",
                         "none: /range/ (Pwned Passwords ranges) answers without a key."},
    &(const bd_help_opt){"--console", "on|off", BD_HELP_SETTING, "on",
                         "off: no web console at /console/ and no console session cookies."},
    &(const bd_help_opt){"--console-logos", "DIR", BD_HELP_SETTING, NULL,
                         "Breach logos the console shows, placed in DIR by the operator and "
                         "served at /console/logos/NAME (a breach's site_logo naming that "
                         "path); the console shows no logo from elsewhere."},
    &(const bd_help_opt){"--range-snapshot-dir", "DIR", BD_HELP_SETTING, NULL,
                         "PostgreSQL: keep a local copy of the password ranges in DIR and "
                         "serve /range/ from it (default: $CACHE_DIRECTORY, set by "
                         "systemd's CacheDirectory=, else none)."},
    &(const bd_help_opt){"--pg-dispatch", "on|off|always", BD_HELP_SETTING, "on",
                         "PostgreSQL: email searches, BIN pages, owner words' pages and the "
                         "catalog's and status's data version wait for one dispatcher thread, "
                         "which answers those waiting together in one statement (on: unless "
                         "one is alone)."},
    &O_WEBHOOK_ALLOW,
    &(const bd_help_opt){"--trusted-proxy", "CIDR", BD_HELP_REPEAT | BD_HELP_SETTING, NULL,
                         "A reverse proxy's address or range (10.0.0.5, fd00::/8): from it, the "
                         "client is the rightmost X-Forwarded-For address that is not a trusted "
                         "proxy; repeat for several (at most 32)."},
    &(const bd_help_opt){"--console-url", "URL", BD_HELP_SETTING, NULL,
                         "The console's address as its readers reach it "
                         "(https://breachd.example.com/console/), linked from Slack and Teams "
                         "alerts; without it they carry no link."},
    &(const bd_help_opt){"--smtp-url", "smtp://HOST[:PORT]|smtps://HOST[:PORT]",
                         BD_HELP_SETTING, NULL,
                         "The SMTP server email alerts go through: smtp:// must offer STARTTLS, "
                         "smtps:// is TLS from the start; its host is checked like a webhook's "
                         "(--webhook-allow)."},
    &(const bd_help_opt){"--smtp-from", "ADDRESS", BD_HELP_SETTING, NULL,
                         "The sender of email alerts (with --smtp-url)."},
    &(const bd_help_opt){"--smtp-credentials", "FILE", BD_HELP_SETTING, NULL,
                         "A private file (0600) holding user:password for the SMTP server's "
                         "AUTH."},
    &(const bd_help_opt){"--smtp-insecure", "on|off", BD_HELP_SETTING, "off",
                         "on: speak to an smtp:// server on this host (localhost, 127.0.0.0/8, "
                         "::1) without STARTTLS: a local relay or a test server."},
    &(const bd_help_opt){"--alert-retention", "DAYS", BD_HELP_SETTING, "30",
                         "Days a delivered or failed alert is kept; 0 keeps them for ever."},
    &(const bd_help_opt){"--lookup-retention", "DAYS", BD_HELP_SETTING, "90",
                         "Days the lookup log (who searched for which identity, as a keyed "
                         "hash) is kept; 0 records nothing and deletes what was kept."},
    &(const bd_help_opt){"--log-format", "text|json", BD_HELP_SETTING, "text",
                         "The server's own log on standard error: text lines or one JSON "
                         "object per line."},
    &(const bd_help_opt){"--log-level", "error|warn|info|debug", BD_HELP_SETTING, "info",
                         "The least severe lines written."},
    &O_CONFIG,
    &O_HELP,
    &O_VERSION,
    NULL};

static const bd_help_cmd BREACHD_CMDS[] = {
    {"", NULL, "Serve breach searches over HTTP from a store made by breachctl.", BREACHD_OPTS},
};

const bd_help_prog BD_HELP_BREACHD = {
    "breachd", "8", "self-hosted breach-exposure search server",
    "breachd serves the v7 breach-search API, the Have I Been Pwned API v3 and Pwned Passwords "
    "ranges from a SQLite or PostgreSQL store that breachctl(1) creates and fills. Settings "
    "come from the command line, then the environment (BREACHD_<OPTION>, upper case with '_' "
    "for '-': BREACHD_LISTEN, BREACHD_LOG_LEVEL; a repeatable option takes several values "
    "separated by spaces), then the configuration file breachd.conf(5): a flag wins over the "
    "environment, which wins over the file. SIGTERM or SIGINT stops it after the requests in "
    "flight; SIGHUP reopens the access log. Under systemd (Type=notify) it tells the service "
    "manager when it serves.",
    BREACHD_CMDS, 1,
    "0 stopped by a signal after serving; 2 a usage error (an unknown option, a bad value, in "
    "the configuration file with its line) or a failure to start."};

/* ---- breachctl ---- */

static const bd_help_opt *const STORE_OPTS[] = {&O_DB, &O_DB_FILE, &O_SECRET, NULL};

static const bd_help_opt O_BREACH = {"--breach", "UUID", 0, NULL,
                                     "The breach the records belong to (required by combo and "
                                     "stealer lines)."};
static const bd_help_opt O_FOLLOW = {"--follow-links", NULL, 0, NULL,
                                     "Read files named through symbolic links."};

static const bd_help_opt *const IMPORT_OPTS[] = {
    &O_DB,
    &O_DB_FILE,
    &O_SECRET,
    &O_BREACH,
    &(const bd_help_opt){"--format", "jsonl|csv|tsv|combo|stealer", 0, "by the file name",
                         "The input format."},
    &(const bd_help_opt){"--separator", "C", 0, "detected",
                         "The separator of combo lines: : ; | or tab."},
    &(const bd_help_opt){"--map", "'Column=field,...'", 0, NULL,
                         "Map CSV columns to record fields."},
    &(const bd_help_opt){"--columns", "a,b,c", 0, NULL,
                         "The column names of a CSV or TSV file without a header row."},
    &(const bd_help_opt){"--drop-unmapped", NULL, 0, NULL,
                         "Drop the columns --map does not name (default: kept in "
                         "other_attributes)."},
    &(const bd_help_opt){"--lossy", NULL, 0, NULL,
                         "Repair bytes that are not UTF-8 instead of rejecting the line."},
    &(const bd_help_opt){"--dry-run", NULL, 0, NULL, "Read and check, write nothing."},
    &(const bd_help_opt){"--strict", NULL, 0, NULL, "Stop at the first rejected line."},
    &(const bd_help_opt){"--bulk", NULL, 0, NULL,
                         "Load faster into a store no server is reading from."},
    &(const bd_help_opt){"--password-ranges", NULL, 0, NULL,
                         "Also count each password's SHA-1 and NTLM for /range/."},
    &(const bd_help_opt){"--no-password-ranges", NULL, 0, NULL,
                         "Count no password for /range/ (the default)."},
    &(const bd_help_opt){"--decompress-memory-limit", "MIB", 0, "256",
                         "The most memory an xz or zstd stream may ask for."},
    &O_FOLLOW,
    NULL};

static const bd_help_opt *const PWNED_OPTS[] = {
    &O_DB,
    &O_DB_FILE,
    &O_SECRET,
    &(const bd_help_opt){"--mode", "sha1|ntlm", 0, "detected", "The hashes of the download."},
    &O_FOLLOW,
    NULL};

static const bd_help_opt O_NAME = {"--name", "TEXT", 0, NULL, "The key's name (required)."};
static const bd_help_opt O_MAX_JOBS = {"--max-jobs", "N", 0, "10",
                                       "Bulk jobs queued or running at once."};
static const bd_help_opt O_MAX_IDS = {"--max-queued-identities", "N", 0, "200000",
                                      "Identities of those jobs not yet looked up."};
static const bd_help_opt O_MAX_ROWS = {"--max-result-rows", "N", 0, "1000000",
                                       "Result rows kept in its jobs."};

static const bd_help_opt *const KEYS_CREATE_OPTS[] = {
    &O_DB,
    &O_DB_FILE,
    &O_SECRET,
    &O_NAME,
    &(const bd_help_opt){"--plan", "standard|enterprise", 0, "standard",
                         "The plan, which sets the rate."},
    &(const bd_help_opt){"--rate", "N/h", 0, NULL, "Requests per hour (a custom plan)."},
    &(const bd_help_opt){"--exact-lookups", "N/day", 0, "20",
                         "Card lookups by full number or Hash: per day."},
    &(const bd_help_opt){"--expires", "YYYY-MM-DD", 0, NULL, "The key stops working that day."},
    &(const bd_help_opt){"--quota", "N/month", 0, NULL, "Requests per calendar month (UTC)."},
    &O_MAX_JOBS,
    &O_MAX_IDS,
    &O_MAX_ROWS,
    &(const bd_help_opt){"--tenant", "ID", 0, NULL,
                         "A tenant key: it sees only records of the tenant's domains."},
    &(const bd_help_opt){"--types", "LIST", 0, "all (a tenant key: email,email_domain)",
                         "The identity types it may search (comma-separated type names, "
                         "and cards)."},
    &(const bd_help_opt){"--allow-ip", "CIDR", BD_HELP_REPEAT, NULL,
                         "Addresses it may be used from (an address or a block)."},
    &(const bd_help_opt){"--role", "user|admin", 0, "user",
                         "admin: it may call /v7/admin/ (no tenant)."},
    NULL};

static const bd_help_opt *const TENANTS_ADD_OPTS[] = {
    &O_DB, &O_DB_FILE, &O_SECRET,
    &(const bd_help_opt){"--domain", "DOMAIN", BD_HELP_REPEAT, NULL,
                         "A domain of the tenant (its subdomains are in scope too)."},
    NULL};

static const bd_help_opt *const KEYS_JOB_LIMITS_OPTS[] = {
    &O_DB,
    &O_DB_FILE,
    &O_SECRET,
    &(const bd_help_opt){"--max-jobs", "N|default", 0, NULL,
                         "Bulk jobs queued or running at once."},
    &(const bd_help_opt){"--max-queued-identities", "N|default", 0, NULL,
                         "Identities of those jobs not yet looked up."},
    &(const bd_help_opt){"--max-result-rows", "N|default", 0, NULL,
                         "Result rows kept in its jobs."},
    NULL};

static const bd_help_opt *const ERASE_OPTS[] = {
    &O_DB,
    &O_DB_FILE,
    &O_SECRET,
    &(const bd_help_opt){"--email", "ADDRESS", 0, NULL, "Remove this identity's records."},
    &(const bd_help_opt){"--breach", "UUID", 0, NULL, "Remove this breach and its records."},
    &(const bd_help_opt){"--wait", "SECONDS", 0, "30",
                         "How long to wait for readers before the log holding the erased rows "
                         "is emptied."},
    NULL};

static const bd_help_opt *const BACKUP_OPTS[] = {
    &O_DB, &O_DB_FILE, &O_SECRET,
    &(const bd_help_opt){"--to", "FILE", 0, NULL,
                         "The copy, a new private file (required; SQLite stores)."},
    NULL};

static const bd_help_opt O_WATCH_KEY = {"--key", "KEY_ID", 0, NULL,
                                        "The API key's ID (see keys list)."};
static const bd_help_opt O_WATCH_SECRET = {
    "--secret", "FILE", 0, "the store's file beside it",
    "The store's secret file; required with a PostgreSQL store."};

static const bd_help_opt *const WATCH_ADD_OPTS[] = {
    &O_DB,
    &O_DB_FILE,
    &O_WATCH_KEY,
    &(const bd_help_opt){"--type", "TYPE", 0, NULL,
                         "breach-search's type (email, email_domain, phone_number, username, "
                         "ip_address, social_security_number, password, password_hash, "
                         "bitcoin_address, website_domain) or bin (6 digits)."},
    &(const bd_help_opt){"--account", "VALUE", 0, NULL, "The value watched."},
    &(const bd_help_opt){"--url", "URL", 0, NULL, "The webhook alerts are posted to."},
    &(const bd_help_opt){"--format", "json|slack|teams|email|splunk-hec", 0, "json",
                         "What alerts are sent as: the signed JSON alert, a Slack incoming-"
                         "webhook message, a Teams workflow message (an Adaptive Card), a mail "
                         "to the --url mailto:ADDRESS through breachd's --smtp-url, or a "
                         "Splunk HTTP Event Collector event."},
    &(const bd_help_opt){"--secret", "SECRET", 0, NULL,
                         "json: the webhook's signing secret; splunk-hec: the HEC token; slack, "
                         "teams and email take none (or --secret-file)."},
    &(const bd_help_opt){"--secret-file", "FILE", 0, NULL,
                         "A private file holding the secret."},
    &(const bd_help_opt){"--server-secret", "FILE", 0, "the store's file beside it",
                         "The store's secret file (hashes password and SSN watches)."},
    &O_WEBHOOK_ALLOW,
    NULL};

static const bd_help_opt *const WATCH_OPTS[] = {&O_DB, &O_DB_FILE, &O_WATCH_KEY, &O_WATCH_SECRET,
                                                NULL};

static const bd_help_cmd BREACHCTL_CMDS[] = {
    {"init", NULL, "Create an empty store and its secret.", STORE_OPTS},
    {"import breaches", "FILE|DIR...",
     "Load breaches (JSON Lines or CSV; '-' is stdin; gzip, zstd, xz, bzip2 read).", IMPORT_OPTS},
    {"import records", "FILE|DIR...",
     "Load breach records (JSON Lines, CSV, TSV, combo or stealer lines).", IMPORT_OPTS},
    {"import cards", "FILE|DIR...", "Load cards (JSON Lines or CSV).", IMPORT_OPTS},
    {"import pwned-passwords", "FILE|DIR...", "Load a Pwned Passwords download.", PWNED_OPTS},
    {"import pastes", "FILE...", "Load pastes (JSON Lines) for the HIBP API's pasteaccount.",
     STORE_OPTS},
    {"keys create", NULL, "Create an API key and print it, the only time it is shown.",
     KEYS_CREATE_OPTS},
    {"keys list", NULL, "List the API keys.", STORE_OPTS},
    {"keys revoke", "ID", "Revoke an API key.", STORE_OPTS},
    {"keys set-quota", "ID N/month|none", "Set or remove a key's monthly quota.", STORE_OPTS},
    {"keys set-job-limits", "ID", "Change a key's bulk job limits.", KEYS_JOB_LIMITS_OPTS},
    {"demo", NULL, "Load the synthetic demo corpus and print a demo key.", STORE_OPTS},
    {"stats", NULL, "Print records per breach and totals.", STORE_OPTS},
    {"erase", NULL, "Remove an identity's records, or a breach (--email or --breach).",
     ERASE_OPTS},
    {"backup", NULL, "Write a consistent copy of the store while it serves.", BACKUP_OPTS},
    {"watch add", NULL, "Watch a value for an API key: new records alert its webhook.",
     WATCH_ADD_OPTS},
    {"watch list", NULL, "List the watches (of one key with --key).", WATCH_OPTS},
    {"watch remove", "ID", "Remove a watch and its undelivered alerts.", WATCH_OPTS},
    {"tenants add", "NAME", "Create a tenant with its domains and print its ID.",
     TENANTS_ADD_OPTS},
    {"tenants list", NULL, "List the tenants and their domains.", STORE_OPTS},
    {"tenants remove", "ID", "Remove a tenant that has no active keys.", STORE_OPTS},
    {"tenants domains add", "ID DOMAIN", "Give a tenant another domain.", STORE_OPTS},
    {"tenants domains remove", "ID DOMAIN", "Take a domain from a tenant.", STORE_OPTS},
    {"citus distribute", NULL,
     "Lay a PostgreSQL store out over the Citus cluster of its coordinator (idempotent).",
     STORE_OPTS},
};

static const bd_help_opt *const BREACHCTL_GLOBAL_OPTS[] = {&O_CONFIG, &O_HELP, &O_VERSION, NULL};

const bd_help_prog BD_HELP_BREACHCTL = {
    "breachctl", "1", "manage a breachd store: create, import, keys, watches, erasure",
    "breachctl creates and fills the store breachd(8) serves, and manages its API keys and "
    "watches. Every command takes --db and --secret; without them it reads BREACHD_DB, "
    "BREACHD_SECRET and then the db, db-file and secret settings of the configuration file "
    "breachd.conf(5), so on a server set up by the package 'breachctl stats' just works. "
    "Results meant for scripts go to standard output, everything else to standard error. "
    "--config FILE (before or after the command) names another configuration file. "
    "'breachctl COMMAND --help' describes one command.",
    BREACHCTL_CMDS, sizeof BREACHCTL_CMDS / sizeof BREACHCTL_CMDS[0],
    "0 success; 1 some input lines were rejected (import); 2 a usage error or a failure."};

/* ---- lookups and printing ---- */

static bool word_is(const char *words, size_t n, const char *w)
{
    return strlen(w) == n && strncmp(words, w, n) == 0;
}

/* How many of argv's first arguments spell words ("tenants domains add"): all of them or 0. */
static int spelled(const char *words, int argc, char **argv)
{
    int n = 0;
    for (const char *w = words; *w; n++) {
        size_t len = strcspn(w, " ");
        if (n >= argc || !word_is(w, len, argv[n]))
            return 0;
        w += len;
        w += *w == ' ';
    }
    return n;
}

const bd_help_cmd *bd_help_find(const bd_help_prog *p, int argc, char **argv, const char **group)
{
    *group = NULL;
    if (p->ncmds == 1 && !p->cmds[0].words[0])
        return &p->cmds[0];
    if (argc < 1)
        return NULL;
    const bd_help_cmd *found = NULL;
    int best = 0;
    for (size_t i = 0; i < p->ncmds; i++) {
        int n = spelled(p->cmds[i].words, argc, argv);
        if (n > best) {
            best = n;
            found = &p->cmds[i];
        }
        size_t first = strcspn(p->cmds[i].words, " ");
        if (!*group && p->cmds[i].words[first] && word_is(p->cmds[i].words, first, argv[0]))
            *group = p->cmds[i].words; /* a group's name: its first command's first word */
    }
    if (found)
        *group = NULL;
    return found;
}

bool bd_help_asked(int argc, char **argv)
{
    for (int i = 0; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            return true;
    return false;
}

bool bd_version_asked(int argc, char **argv)
{
    for (int i = 0; i < argc; i++)
        if (strcmp(argv[i], "--version") == 0)
            return true;
    return false;
}

/* Prints text from column indent, words wrapped before column 80; the first line starts
 * at column at (already written). */
static void wrap(FILE *f, const char *text, int at, int indent)
{
    int col = at;
    const char *p = text;
    while (*p) {
        size_t n = strcspn(p, " ");
        if (col > indent && col + 1 + (int)n > 79) {
            fprintf(f, "\n%*s", indent, "");
            col = indent;
        } else if (col > indent) {
            fputc(' ', f);
            col++;
        } else {
            fprintf(f, "%*s", indent - col, "");
            col = indent;
        }
        fwrite(p, 1, n, f);
        col += (int)n;
        p += n;
        while (*p == ' ')
            p++;
    }
    fputc('\n', f);
}

static void print_opts(FILE *f, const bd_help_opt *const *opts)
{
    for (size_t i = 0; opts[i]; i++) {
        const bd_help_opt *o = opts[i];
        char head[96], text[640];
        int n = snprintf(head, sizeof head, "  %s%s%s%s", o->name, o->arg ? " " : "",
                         o->arg ? o->arg : "", o->flags & BD_HELP_REPEAT ? "..." : "");
        snprintf(text, sizeof text, "%s%s%s%s", o->text, o->def ? " Default: " : "",
                 o->def ? o->def : "", o->def ? "." : "");
        if (n >= 28) {
            fprintf(f, "%s\n", head);
            wrap(f, text, 0, 30);
        } else {
            fputs(head, f);
            wrap(f, text, n, 30);
        }
    }
}

static void print_usage(FILE *f, const bd_help_prog *p, const bd_help_cmd *c)
{
    fprintf(f, "usage: %s%s%s%s%s [options]\n", p->name, c->words[0] ? " " : "", c->words,
            c->operands ? " " : "", c->operands ? c->operands : "");
}

void bd_help_print(FILE *f, const bd_help_prog *p, const bd_help_cmd *c, const char *group)
{
    if (c) {
        print_usage(f, p, c);
        fputc('\n', f);
        wrap(f, c->summary, 0, 0);
        fputs("\noptions:\n", f);
        print_opts(f, c->opts);
        if (p == &BD_HELP_BREACHCTL) {
            print_opts(f, BREACHCTL_GLOBAL_OPTS);
        } else {
            fputc('\n', f);
            wrap(f, p->description, 0, 0);
        }
        fputs("\nexit status:", f);
        wrap(f, p->exit_status, 12, 0);
        return;
    }
    size_t glen = group ? strcspn(group, " ") : 0;
    fprintf(f, "usage: %s %s%.*s%s [options]\n\n", p->name, group ? "" : "COMMAND", (int)glen,
            group ? group : "", group ? " SUBCOMMAND" : "");
    if (!group) {
        wrap(f, p->description, 0, 0);
        fputs("\ncommands:\n", f);
    }
    for (size_t i = 0; i < p->ncmds; i++) {
        const bd_help_cmd *k = &p->cmds[i];
        if (group && strncmp(k->words, group, glen) != 0)
            continue;
        char head[96];
        int n = snprintf(head, sizeof head, "  %s%s%s", k->words, k->operands ? " " : "",
                         k->operands ? k->operands : "");
        if (n >= 28) {
            fprintf(f, "%s\n", head);
            wrap(f, k->summary, 0, 30);
        } else {
            fputs(head, f);
            wrap(f, k->summary, n, 30);
        }
    }
    fputs("\noptions:\n", f);
    print_opts(f, BREACHCTL_GLOBAL_OPTS);
    fprintf(f, "\n'%s COMMAND --help' describes a command's options.\n\nexit status:", p->name);
    wrap(f, p->exit_status, 12, 0);
}

void bd_help_version(FILE *f, const char *program)
{
    fprintf(f, "%s %s (commit %s)\n", program, bd_version(), bd_commit());
    unsigned pq = (unsigned)PQlibVersion();
    fprintf(f, "sqlite %s, libpq %u.%u, libmicrohttpd %s, %s, jansson %s, libsodium %s, "
               "zlib %s, zstd %s\n",
            sqlite3_libversion(), pq / 10000, pq % 10000, MHD_get_version(), curl_version(),
            jansson_version_str(), sodium_version_string(), zlibVersion(), ZSTD_versionString());
}

const bd_help_opt *bd_help_breachd_option(const char *name)
{
    if (strncmp(name, "--", 2) == 0)
        name += 2;
    for (size_t i = 0; BREACHD_OPTS[i]; i++)
        if (strcmp(BREACHD_OPTS[i]->name + 2, name) == 0)
            return BREACHD_OPTS[i];
    return NULL;
}
