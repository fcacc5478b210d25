/* Command-line option helpers, and store URIs kept off the command line. */
#include "cli/args.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/uri.h"

const bd_uri_option BD_OPT_DB = {"--db", "--db-file", "BREACHD_DB"};
const bd_uri_option BD_OPT_SHARED_LIMITS = {"--shared-limits", "--shared-limits-file",
                                            "BREACHD_SHARED_LIMITS"};

/* The longest store URI a file may hold. */
enum { URI_FILE_MAX = 4096 };

bool bd_arg_value(int argc, char **argv, int *i, const char *name, const char **value)
{
    const char *a = argv[*i];
    size_t n = strlen(name);
    if (strncmp(a, name, n) != 0)
        return false;
    if (a[n] == '=') {
        *value = a + n + 1;
        return true;
    }
    if (a[n] != '\0')
        return false;
    if (*i + 1 < argc) {
        *value = argv[++*i];
    } else {
        *value = NULL;
    }
    return true;
}

bool bd_parse_i64(const char *s, int64_t min, int64_t max, int64_t *out)
{
    if (!s || !*s)
        return false;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || *end || v < min || v > max)
        return false;
    *out = v;
    return true;
}

bool bd_parse_rate(const char *s, const char *unit, int64_t max, int64_t *out)
{
    if (!s)
        return false;
    char num[24];
    size_t n = strcspn(s, "/");
    if (n >= sizeof num || (s[n] && strcmp(s + n, unit) != 0))
        return false;
    memcpy(num, s, n);
    num[n] = '\0';
    return bd_parse_i64(num, 1, max, out);
}

const bd_uri_option *bd_uri_option_named(const char *name)
{
    if (strcmp(name, BD_OPT_DB.name) == 0)
        return &BD_OPT_DB;
    if (strcmp(name, BD_OPT_SHARED_LIMITS.name) == 0)
        return &BD_OPT_SHARED_LIMITS;
    return NULL;
}

/* URIs taken off command lines, for the life of the process: held here, where a leak
 * checker sees them reachable, and never freed. */
static char *kept[16];
static size_t nkept;

/* A private copy of value, held in kept; NULL when there is no room or memory. */
static const char *keep(const char *value)
{
    if (nkept == sizeof kept / sizeof kept[0])
        return NULL;
    char *copy = strdup(value);
    if (copy)
        kept[nkept++] = copy;
    return copy;
}

/* Overwrites text in place with its redacted form followed by NUL bytes: the password is
 * gone from the process's memory image of its arguments, and what is left still names the
 * store for whoever reads ps. Text without a secret (a file path) is not written to. */
static void overwrite(char *text)
{
    size_t n = strlen(text);
    char *shown = malloc(n + 1);
    if (shown)
        bd_uri_redact(text, shown, n + 1); /* never longer: cut short if need be */
    if (shown && strcmp(shown, text) == 0) {
        free(shown);
        return;
    }
    size_t keep_n = shown ? strlen(shown) : 0;
    if (shown)
        memcpy(text, shown, keep_n);
    memset(text + keep_n, 0, n - keep_n);
    free(shown);
}

char *bd_private_file_read(const char *option, const char *path, const char *what, char *why,
                           size_t whylen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        snprintf(why, whylen, "%s: cannot read %s: %s", option, path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    char *text = NULL;
    if (!S_ISREG(st.st_mode)) {
        snprintf(why, whylen, "%s: %s is not a regular file", option, path);
    } else if (st.st_mode & 077) {
        snprintf(why, whylen, "%s: %s is open to other users (chmod 600 it)", option, path);
    } else if (!(text = malloc(URI_FILE_MAX + 2))) {
        snprintf(why, whylen, "%s: out of memory", option);
    }
    size_t len = 0;
    while (text && len <= URI_FILE_MAX) {
        ssize_t got = read(fd, text + len, URI_FILE_MAX + 1 - len);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            snprintf(why, whylen, "%s: cannot read %s: %s", option, path, strerror(errno));
            free(text);
            text = NULL;
        }
        if (got <= 0)
            break;
        len += (size_t)got;
    }
    close(fd);
    if (!text)
        return NULL;
    while (len && isspace((unsigned char)text[len - 1]))
        len--;
    size_t start = 0;
    while (start < len && isspace((unsigned char)text[start]))
        start++;
    const char *fault = len > URI_FILE_MAX          ? "is longer than 4096 bytes"
                        : start == len              ? "holds no"
                        : memchr(text, '\0', len) ? "holds a NUL byte"
                                                    : NULL;
    if (fault) {
        snprintf(why, whylen, "%s: %s %s%s%s", option, path, fault, start == len ? " " : "",
                 start == len ? what : "");
        free(text);
        return NULL;
    }
    memmove(text, text + start, len - start);
    text[len - start] = '\0';
    return text;
}

char *bd_uri_file_read(const char *option, const char *path, char *why, size_t whylen)
{
    return bd_private_file_read(option, path, "store URI", why, whylen);
}

/* The value of "--name VALUE" or "--name=VALUE" at argv[*i], as a writable pointer into
 * argv; *i moved past it. NULL (and *i moved past the name) when the value is missing. */
static char *value_of(int argc, char **argv, int *i, size_t name_len)
{
    char *a = argv[*i];
    if (a[name_len] == '=')
        return a + name_len + 1;
    return *i + 1 < argc ? argv[++*i] : NULL;
}

static bool is_option(const char *arg, const char *name)
{
    size_t n = strlen(name);
    return strncmp(arg, name, n) == 0 && (arg[n] == '\0' || arg[n] == '=');
}

int bd_uri_arg_take(bd_uri_arg *a, const char *cmd, int argc, char **argv, int *i)
{
    const bd_uri_option *o = a->opt;
    bool direct = is_option(argv[*i], o->name);
    if (!direct && !is_option(argv[*i], o->file))
        return 0;
    const char *name = direct ? o->name : o->file;
    char *v = value_of(argc, argv, i, strlen(name));
    if (!v) {
        fprintf(stderr, "%s: %s needs a value\n", cmd, name);
        return -1;
    }
    if (a->given && strcmp(a->given, name) != 0) {
        fprintf(stderr, "%s: give %s or %s, not both\n", cmd, o->name, o->file);
        return -1;
    }
    const char *value;
    if (direct) {
        value = keep(v);
        overwrite(v);
    } else {
        char why[512];
        char *text = bd_uri_file_read(name, v, why, sizeof why);
        if (!text) {
            fprintf(stderr, "%s: %s\n", cmd, why);
            return -1;
        }
        value = keep(text);
        free(text);
    }
    if (!value) {
        fprintf(stderr, "%s: %s: too many store options\n", cmd, name);
        return -1;
    }
    a->value = value;
    a->given = name;
    return 1;
}

/* The configuration file's store and secret (breachctl). */
static const char *config_db, *config_secret;

bool bd_cli_config_set(const char *db, const char *secret)
{
    config_db = db ? keep(db) : NULL;
    config_secret = secret ? keep(secret) : NULL;
    return (!db || config_db) && (!secret || config_secret);
}

const char *bd_cli_config_secret(const char *db)
{
    const char *env = getenv("BREACHD_SECRET");
    if (env && *env)
        return env;
    return config_db && config_secret && db && strcmp(db, config_db) == 0 ? config_secret : NULL;
}

const char *bd_uri_arg_done(bd_uri_arg *a)
{
    if (!a->value) {
        const char *env = getenv(a->opt->env);
        if (env && *env)
            a->value = env;
        else if (a->opt == &BD_OPT_DB)
            a->value = config_db;
    }
    return a->value;
}

bool bd_parse_options(const char *cmd, int argc, char **argv, const bd_option *opts,
                      const char **pos, int npos_max, int *npos)
{
    bd_uri_arg uris[2];
    const bd_option *uri_opts[2];
    int nuris = 0;
    for (const bd_option *o = opts; o->name; o++) {
        const bd_uri_option *u = o->value ? bd_uri_option_named(o->name) : NULL;
        if (u && nuris < 2) {
            uris[nuris] = (bd_uri_arg){u, NULL, NULL};
            uri_opts[nuris++] = o;
        }
    }
    int n = 0;
    for (int i = 0; i < argc; i++) {
        int taken = 0;
        for (int k = 0; k < nuris && !taken; k++)
            taken = bd_uri_arg_take(&uris[k], cmd, argc, argv, &i);
        if (taken < 0)
            return false;
        if (taken)
            continue;
        if (strncmp(argv[i], "--", 2) != 0) {
            if (n == npos_max) {
                fprintf(stderr, "%s: unexpected argument '%s'\n", cmd, argv[i]);
                return false;
            }
            pos[n++] = argv[i];
            continue;
        }
        const bd_option *o = opts;
        const char *v = NULL;
        for (; o->name; o++) {
            if (o->flag && strcmp(argv[i], o->name) == 0)
                break;
            if (o->value && bd_arg_value(argc, argv, &i, o->name, &v))
                break;
        }
        if (!o->name) {
            fprintf(stderr, "%s: unknown option '%s'\n", cmd, argv[i]);
            return false;
        }
        if (o->flag) {
            *o->flag = true;
        } else if (!v) {
            fprintf(stderr, "%s: %s needs a value\n", cmd, o->name);
            return false;
        } else {
            *o->value = v;
        }
    }
    for (int k = 0; k < nuris; k++) {
        const char *v = bd_uri_arg_done(&uris[k]);
        if (v)
            *uri_opts[k]->value = v;
    }
    if (npos)
        *npos = n;
    return true;
}
