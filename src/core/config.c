/* The configuration file's syntax: "key = value" lines, comments, blank lines. */
#include "core/config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

bool bd_config_key_ok(const char *key, size_t n)
{
    if (n == 0 || n > BD_CONFIG_KEY_MAX || !(key[0] >= 'a' && key[0] <= 'z'))
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = key[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'))
            return false;
    }
    return true;
}

void bd_config_free(bd_config *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n; i++) {
        free(c->v[i].key);
        if (c->v[i].value) /* a value may be a password: gone from memory with the file */
            memset(c->v[i].value, 0, strlen(c->v[i].value));
        free(c->v[i].value);
    }
    free(c->v);
    c->v = NULL;
    c->n = 0;
}

static char *copy(const char *p, size_t n)
{
    char *s = malloc(n + 1);
    if (s) {
        memcpy(s, p, n);
        s[n] = '\0';
    }
    return s;
}

/* Adds one entry; false when memory runs out. */
static bool add(bd_config *c, size_t *cap, const char *k, size_t kn, const char *v, size_t vn,
                unsigned line)
{
    if (c->n == *cap) {
        size_t ncap = *cap ? *cap * 2 : 16;
        bd_config_entry *nv = realloc(c->v, ncap * sizeof *nv);
        if (!nv)
            return false;
        c->v = nv;
        *cap = ncap;
    }
    bd_config_entry e = {copy(k, kn), copy(v, vn), line};
    if (!e.key || !e.value) {
        free(e.key);
        free(e.value);
        return false;
    }
    c->v[c->n++] = e;
    return true;
}

bd_result bd_config_parse(const char *text, size_t len, bd_config *out, unsigned *line, char *why,
                          size_t whylen)
{
    *out = (bd_config){0};
    *line = 0;
    if (len > BD_CONFIG_MAX_BYTES) {
        bd_why(why, whylen, "longer than %d bytes", BD_CONFIG_MAX_BYTES);
        return BD_ERR_INVALID;
    }
    size_t cap = 0;
    unsigned ln = 0;
    const char *fault = NULL;
    for (size_t at = 0; at < len && !fault;) {
        ln++;
        const char *nl = memchr(text + at, '\n', len - at);
        size_t end = nl ? (size_t)(nl - text) : len;
        const char *p = text + at, *e = text + end;
        at = end + 1;
        if (memchr(p, '\0', (size_t)(e - p))) {
            fault = "holds a NUL byte";
            break;
        }
        while (p < e && is_space(*p))
            p++;
        while (e > p && is_space(e[-1]))
            e--;
        if (p == e || *p == '#')
            continue;
        const char *eq = memchr(p, '=', (size_t)(e - p));
        if (!eq) {
            fault = "not a 'key = value' line";
            break;
        }
        const char *ke = eq, *v = eq + 1;
        while (ke > p && is_space(ke[-1]))
            ke--;
        while (v < e && is_space(*v))
            v++;
        if (!bd_config_key_ok(p, (size_t)(ke - p))) {
            fault = ke == p ? "no key before '='"
                            : "a key is lower-case letters, digits and '-', like a long "
                              "option without its '--'";
            break;
        }
        if (v == e) {
            fault = "no value after '=' (comment the line out to leave a setting unset)";
            break;
        }
        if (!add(out, &cap, p, (size_t)(ke - p), v, (size_t)(e - v), ln)) {
            bd_config_free(out);
            bd_why(why, whylen, "out of memory");
            return BD_ERR_NOMEM;
        }
    }
    if (fault) {
        bd_config_free(out);
        *line = ln;
        bd_why(why, whylen, "line %u: %s", ln, fault);
        return BD_ERR_INVALID;
    }
    return BD_OK;
}

bd_result bd_config_load(const char *path, bd_config *out, unsigned *st_mode, char *why,
                         size_t whylen)
{
    *out = (bd_config){0};
    *st_mode = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        int e = errno;
        bd_why(why, whylen, "%s: %s", path, strerror(e));
        return e == ENOENT ? BD_ERR_NOT_FOUND : BD_ERR_INVALID;
    }
    struct stat st;
    char *text = NULL;
    size_t len = 0;
    bd_result r = BD_ERR_INVALID;
    if (fstat(fd, &st) != 0) {
        bd_why(why, whylen, "%s: %s", path, strerror(errno));
    } else if (!S_ISREG(st.st_mode)) {
        bd_why(why, whylen, "%s: not a regular file", path);
    } else if (st.st_mode & S_IWOTH) {
        bd_why(why, whylen, "%s: writable by every user (chmod o-w it)", path);
    } else if (!(text = malloc(BD_CONFIG_MAX_BYTES + 1))) {
        bd_why(why, whylen, "%s: out of memory", path);
        r = BD_ERR_NOMEM;
    } else {
        *st_mode = (unsigned)st.st_mode;
        r = BD_OK;
        while (len <= BD_CONFIG_MAX_BYTES) {
            ssize_t got = read(fd, text + len, BD_CONFIG_MAX_BYTES + 1 - len);
            if (got < 0 && errno == EINTR)
                continue;
            if (got < 0) {
                bd_why(why, whylen, "%s: %s", path, strerror(errno));
                r = BD_ERR_INVALID;
            }
            if (got <= 0)
                break;
            len += (size_t)got;
        }
    }
    close(fd);
    if (r == BD_OK) {
        char reason[256];
        unsigned line;
        r = bd_config_parse(text, len, out, &line, reason, sizeof reason);
        if (r != BD_OK && line)
            bd_why(why, whylen, "%s:%u: %s", path, line, strchr(reason, ':') + 2);
        else if (r != BD_OK)
            bd_why(why, whylen, "%s: %s", path, reason);
    }
    if (text) {
        memset(text, 0, len);
        free(text);
    }
    return r;
}
