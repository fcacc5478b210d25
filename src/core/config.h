/* The configuration file's syntax (breachd.conf(5)): one "key = value" setting a line, keys
 * named like the programs' long options without their "--" (lower-case letters, digits and
 * '-'); the value is the rest of the line with the spaces around it dropped (no quoting: a
 * libpq keyword string "host=/run/postgresql dbname=breachd" is one value); blank lines and
 * lines whose first non-space character is '#' are ignored. Which keys exist, which may
 * repeat and what their values mean is the programs' business (cli/settings.h). */
#ifndef BD_CORE_CONFIG_H
#define BD_CORE_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "core/result.h"

/* The longest file read, and the longest key. */
enum { BD_CONFIG_MAX_BYTES = 1 << 20, BD_CONFIG_KEY_MAX = 64 };

typedef struct {
    char *key;
    char *value;
    unsigned line; /* 1-based */
} bd_config_entry;

typedef struct {
    bd_config_entry *v;
    size_t n;
} bd_config;

/* Parses text (len bytes, NULs refused) into out's entries, in file order. On a syntax
 * error (a line without '=', a bad or over-long key, an empty value, a NUL byte, a file
 * over BD_CONFIG_MAX_BYTES) returns BD_ERR_INVALID with why holding "line N: reason" and
 * *line N (0 for the whole file); out is then empty. BD_ERR_NOMEM when memory runs out. */
bd_result bd_config_parse(const char *text, size_t len, bd_config *out, unsigned *line, char *why,
                          size_t whylen);

/* Reads and parses the file at path. why: "PATH: reason" or "PATH:N: reason". st_mode
 * receives the file's mode (for the callers' check of who may read it). BD_ERR_NOT_FOUND
 * when there is no such file; BD_ERR_INVALID when it is not a regular file, is writable by
 * other users, cannot be read, or does not parse. */
bd_result bd_config_load(const char *path, bd_config *out, unsigned *st_mode, char *why,
                         size_t whylen);

/* Whether key is a well-formed key: 1..BD_CONFIG_KEY_MAX of [a-z0-9-], starting with a
 * letter. */
bool bd_config_key_ok(const char *key, size_t n);

void bd_config_free(bd_config *c);

#endif
