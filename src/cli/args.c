/* Command-line option helpers. */
#include "cli/args.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

bool bd_parse_options(const char *cmd, int argc, char **argv, const bd_option *opts,
                      const char **pos, int npos_max, int *npos)
{
    int n = 0;
    for (int i = 0; i < argc; i++) {
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
    if (npos)
        *npos = n;
    return true;
}
