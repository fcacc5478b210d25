/* Settings from the configuration file, the environment and the command line. */
#include "cli/settings.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/args.h"
#include "cli/help.h"
#include "store/uri.h"

/* The setting an option belongs to: "--db-file" and "--db" are one, as are
 * "--shared-limits-file" and "--shared-limits" (given both ways they clash). */
static const char *setting_of(const char *name, size_t n)
{
    static const char *const pairs[][2] = {{"db-file", "db"},
                                           {"shared-limits-file", "shared-limits"}};
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++)
        if (strlen(pairs[i][0]) == n && strncmp(name, pairs[i][0], n) == 0)
            return pairs[i][1];
    static char other[BD_CONFIG_KEY_MAX + 1]; /* only compared, never kept */
    snprintf(other, sizeof other, "%.*s", (int)(n > BD_CONFIG_KEY_MAX ? BD_CONFIG_KEY_MAX : n),
             name);
    return other;
}

static bool same_setting(const char *a, size_t an, const char *b, size_t bn)
{
    char sa[BD_CONFIG_KEY_MAX + 1];
    snprintf(sa, sizeof sa, "%s", setting_of(a, an));
    return strcmp(sa, setting_of(b, bn)) == 0;
}

/* "BREACHD_" and the option's name in upper case, '-' as '_'. */
static void env_name(const char *key, char *out, size_t cap)
{
    size_t n = (size_t)snprintf(out, cap, "BREACHD_%s", key);
    for (size_t i = 8; i < n && i < cap; i++)
        out[i] =
            out[i] == '-' ? '_' : (char)(out[i] >= 'a' && out[i] <= 'z' ? out[i] - 32 : out[i]);
}

/* The default file, one pointer for both programs' comparisons. */
static const char default_path[] = BD_CONFIG_DEFAULT_PATH;

/* The file to read: --config's (taken out of argv), else BREACHD_CONFIG's, else the default
 * (default_path itself) when it exists; NULL for none ("none"). False (why) when --config
 * has no value. */
static bool config_path(int *argc, char **argv, const char **path, char *why, size_t whylen)
{
    *path = NULL;
    for (int i = 1; i < *argc; i++) {
        int first = i;
        const char *v = NULL;
        if (!bd_arg_value(*argc, argv, &i, "--config", &v))
            continue;
        if (!v || !*v) {
            bd_why(why, whylen, "--config needs a file ('none' for no file)");
            return false;
        }
        *path = v;
        memmove(argv + first, argv + i + 1, (size_t)(*argc - i - 1) * sizeof *argv);
        *argc -= i + 1 - first;
        argv[*argc] = NULL;
        i = first - 1;
    }
    if (!*path) {
        const char *env = getenv("BREACHD_CONFIG");
        if (env && *env) {
            *path = env;
        } else {
            *path = access(default_path, F_OK) == 0 ? default_path : NULL;
        }
    }
    if (*path && strcmp(*path, "none") == 0)
        *path = NULL;
    return true;
}

/* Reads and checks the file: every key one of breachd's settings, a key that does not
 * repeat given once, a store URI with a password only in a file other users cannot read. */
static bool load_checked(const char *path, bd_config *c, char *why, size_t whylen)
{
    unsigned mode;
    if (bd_config_load(path, c, &mode, why, whylen) != BD_OK)
        return false;
    for (size_t i = 0; i < c->n; i++) {
        const bd_config_entry *e = &c->v[i];
        const bd_help_opt *o = bd_help_breachd_option(e->key);
        if (!o || !(o->flags & BD_HELP_SETTING)) {
            bd_why(why, whylen, "%s:%u: unknown setting '%s' (breachd.conf(5) lists them)", path,
                   e->line, e->key);
            goto fail;
        }
        for (size_t j = 0; j < i && !(o->flags & BD_HELP_REPEAT); j++)
            if (same_setting(c->v[j].key, strlen(c->v[j].key), e->key, strlen(e->key))) {
                bd_why(why, whylen, "%s:%u: %s is set again (line %u sets it)", path, e->line,
                       e->key, c->v[j].line);
                goto fail;
            }
        if (strcmp(e->key, "db") == 0 || strcmp(e->key, "shared-limits") == 0) {
            size_t n = strlen(e->value) + 1;
            char *shown = malloc(n);
            bool secret =
                !shown || !bd_uri_redact(e->value, shown, n) || strcmp(shown, e->value) != 0;
            free(shown);
            if (secret && (mode & S_IROTH)) {
                bd_why(why, whylen,
                       "%s:%u: %s holds a password and %s is readable by every user (chmod o-r "
                       "it, or move the URI into a %s-file)",
                       path, e->line, e->key, path, e->key);
                goto fail;
            }
        }
    }
    return true;
fail:
    bd_config_free(c);
    return false;
}

static bool push(bd_settings *s, size_t *cap, const char *arg, const char *origin)
{
    if ((size_t)s->argc + 1 >= *cap) {
        size_t ncap = *cap ? *cap * 2 : 32;
        char **na = realloc(s->argv, ncap * sizeof *na);
        if (!na)
            return false;
        s->argv = na;
        char **no = realloc(s->origin, ncap * sizeof *no);
        if (!no)
            return false;
        s->origin = no;
        *cap = ncap;
    }
    /* the command line's own strings are kept, not copied: a store password in them is
     * then overwritten where ps reads it (cli/args.h, bd_uri_arg_take) */
    char *a = origin ? strdup(arg) : (char *)arg, *o = origin ? strdup(origin) : NULL;
    if (!a || (origin && !o)) {
        if (origin)
            free(a);
        free(o);
        return false;
    }
    s->argv[s->argc] = a;
    s->origin[s->argc++] = o;
    s->argv[s->argc] = NULL;
    return true;
}

/* Whether the command line (argv[1..argc)) gives the setting of key (n bytes). */
static bool on_command_line(int argc, char **argv, const char *key, size_t n)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strncmp(a, "--", 2) != 0)
            continue;
        size_t an = strcspn(a + 2, "=");
        if (same_setting(a + 2, an, key, n))
            return true;
    }
    return false;
}

/* The environment's value of a setting (NULL when unset or empty). */
static const char *env_value(const char *key)
{
    char name[BD_CONFIG_KEY_MAX + 16];
    env_name(key, name, sizeof name);
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

/* Whether the environment gives the setting key (either of its forms). */
static bool in_environment(const char *key)
{
    const char *set = setting_of(key, strlen(key));
    char file[BD_CONFIG_KEY_MAX + 8];
    snprintf(file, sizeof file, "%s-file", set);
    return env_value(set) || (bd_help_breachd_option(file) && env_value(file));
}

/* Adds "--key=value" arguments for each space-separated word of a repeatable value, or the
 * whole value. */
static bool push_setting(bd_settings *s, size_t *cap, const bd_help_opt *o, const char *value,
                         const char *origin)
{
    char *arg = malloc(strlen(o->name) + strlen(value) + 2);
    bool ok = arg != NULL;
    const char *p = value;
    while (ok && *p) {
        size_t n = o->flags & BD_HELP_REPEAT ? strcspn(p, " \t") : strlen(p);
        if (n) {
            snprintf(arg, strlen(o->name) + strlen(value) + 2, "%s=%.*s", o->name, (int)n, p);
            ok = push(s, cap, arg, origin);
        }
        p += n;
        while (*p == ' ' || *p == '\t')
            p++;
    }
    if (arg)
        memset(arg, 0, strlen(arg)); /* may be a password */
    free(arg);
    return ok;
}

bool bd_settings_breachd(int argc, char **argv, bd_settings *s, char *why, size_t whylen)
{
    *s = (bd_settings){0};
    size_t cap = 0;
    const char *path;
    if (!config_path(&argc, argv, &path, why, whylen))
        return false;
    bd_config c = {0};
    if (path && !load_checked(path, &c, why, whylen))
        return false;
    if (path && !(s->path = strdup(path)))
        goto nomem;
    if (!push(s, &cap, argv[0], NULL))
        goto nomem;
    for (size_t i = 0; i < c.n; i++) {
        const bd_config_entry *e = &c.v[i];
        if (on_command_line(argc, argv, e->key, strlen(e->key)) || in_environment(e->key))
            continue;
        /* the file's secret goes with the file's store: not with one named elsewhere */
        if (strcmp(e->key, "secret") == 0 &&
            (on_command_line(argc, argv, "db", 2) || in_environment("db")))
            continue;
        char origin[4200];
        snprintf(origin, sizeof origin, "%s:%u", path, e->line);
        if (!push_setting(s, &cap, bd_help_breachd_option(e->key), e->value, origin))
            goto nomem;
    }
    bd_config_free(&c);
    for (const bd_help_opt *const *o = BD_HELP_BREACHD.cmds[0].opts; *o; o++) {
        const char *key = (*o)->name + 2, *v;
        if (!((*o)->flags & BD_HELP_SETTING) || !(v = env_value(key)) ||
            on_command_line(argc, argv, key, strlen(key)))
            continue;
        char origin[BD_CONFIG_KEY_MAX + 16];
        env_name(key, origin, sizeof origin);
        if (!push_setting(s, &cap, *o, v, origin))
            goto nomem;
    }
    for (int i = 1; i < argc; i++)
        if (!push(s, &cap, argv[i], NULL))
            goto nomem;
    return true;
nomem:
    bd_config_free(&c);
    bd_settings_free(s);
    bd_why(why, whylen, "out of memory");
    return false;
}

const char *bd_settings_origin(const bd_settings *s, int i, char *buf, size_t cap)
{
    if (i < 0 || i >= s->argc || !s->origin[i])
        return "";
    snprintf(buf, cap, "%s: ", s->origin[i]);
    return buf;
}

void bd_settings_free(bd_settings *s)
{
    for (int i = 0; i < s->argc; i++) {
        if (!s->origin[i])
            continue; /* the command line's */
        memset(s->argv[i], 0, strlen(s->argv[i]));
        free(s->argv[i]);
        free(s->origin[i]);
    }
    free(s->argv);
    free(s->origin);
    free(s->path);
    *s = (bd_settings){0};
}

/* ---- breachctl ---- */

bool bd_settings_breachctl(int *argc, char **argv, char *why, size_t whylen)
{
    const char *path;
    if (!config_path(argc, argv, &path, why, whylen))
        return false;
    /* the service's file (root:breachd 0640) is not every user's: one who cannot read it
     * names the store on the command line, as without a file */
    if (path == default_path && access(path, R_OK) != 0 && errno == EACCES)
        return true;
    if (!path)
        return true;
    bd_config c;
    if (!load_checked(path, &c, why, whylen))
        return false;
    bool ok = true;
    const char *db = NULL, *secret = NULL;
    char *from_file = NULL;
    for (size_t i = 0; i < c.n && ok; i++) {
        const bd_config_entry *e = &c.v[i];
        if (strcmp(e->key, "db") == 0) {
            db = e->value;
        } else if (strcmp(e->key, "db-file") == 0) {
            char opt[4200];
            snprintf(opt, sizeof opt, "%s:%u: db-file", path, e->line);
            db = from_file = bd_uri_file_read(opt, e->value, why, whylen);
            ok = db != NULL;
        } else if (strcmp(e->key, "secret") == 0) {
            secret = e->value;
        }
    }
    if (ok && !bd_cli_config_set(db, secret)) {
        bd_why(why, whylen, "out of memory");
        ok = false;
    }
    if (from_file)
        memset(from_file, 0, strlen(from_file));
    free(from_file);
    bd_config_free(&c);
    return ok;
}
