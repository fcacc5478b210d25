/* Small helpers for the two programs' command lines: "--name value" and "--name=value". */
#ifndef BD_CLI_ARGS_H
#define BD_CLI_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* When argv[*i] is the option name (with its value next, or after '='), sets *value, moves
 * *i past it and returns true. A missing value sets *value to NULL and returns true. */
bool bd_arg_value(int argc, char **argv, int *i, const char *name, const char **value);
/* Parses a whole decimal integer in [min, max]. */
bool bd_parse_i64(const char *s, int64_t min, int64_t max, int64_t *out);

/* Parses "N" or "N<unit>" (unit like "/h") into N in [1, max]. */
bool bd_parse_rate(const char *s, const char *unit, int64_t max, int64_t *out);

/* One option a command accepts: "--name VALUE" (value set) or a bare flag (flag set). */
typedef struct {
    const char *name;
    const char **value;
    bool *flag;
} bd_option;

/* Parses a command's arguments against opts (ended by an entry with a NULL name). An
 * option named after a bd_uri_option ("--db") is taken through bd_uri_arg: its file form
 * and environment variable are accepted too, and its text is overwritten in argv. Other
 * arguments ("-" included) are positional: up to npos_max of them go to pos, counted in
 * *npos. On an unknown option, a missing value or too many positional arguments, prints
 * "<cmd>: <reason>" on stderr and returns false. pos and npos may be NULL when npos_max
 * is 0. */
bool bd_parse_options(const char *cmd, int argc, char **argv, const bd_option *opts,
                      const char **pos, int npos_max, int *npos);

/* Options that name a store, whose value may carry its password: "--db" and
 * "--shared-limits". Each may instead come from a file (its "-file" form) or from the
 * environment (BREACHD_DB, BREACHD_SHARED_LIMITS), which other local users cannot read,
 * and a value given on the command line is overwritten there once read (docs/OPERATIONS.md,
 * "Store passwords"). */
typedef struct {
    const char *name; /* "--db" */
    const char *file; /* "--db-file" */
    const char *env;  /* "BREACHD_DB" */
} bd_uri_option;

extern const bd_uri_option BD_OPT_DB;
extern const bd_uri_option BD_OPT_SHARED_LIMITS;

/* The option of that name, or NULL. */
const bd_uri_option *bd_uri_option_named(const char *name);

/* A store URI being gathered from one command line. */
typedef struct {
    const bd_uri_option *opt;
    const char *value; /* NULL until given; the program's private copy, kept until exit */
    const char *given; /* the option that gave it (opt->name or opt->file) */
} bd_uri_arg;

/* When argv[*i] is a's option ("--db URI", "--db=URI") or its file form ("--db-file PATH",
 * "--db-file=PATH"), takes the URI, moves *i past it and returns 1. A URI from the command
 * line is copied, and argv's text is overwritten with the URI without its password
 * (bd_uri_redact) and NUL bytes, so /proc/PID/cmdline and ps show no password from then on.
 * A file holds the URI alone (surrounding spaces and newlines dropped); it must be a
 * regular file no other user can read or write (like libpq's .pgpass). Returns 0 when
 * argv[*i] is neither form; -1 after saying why on stderr ("<cmd>: ...") when the value is
 * missing, the file cannot be used, or both forms were given. */
int bd_uri_arg_take(bd_uri_arg *a, const char *cmd, int argc, char **argv, int *i);

/* The gathered URI: the one given, else the environment variable's value when set and not
 * empty, else (--db only) the store the configuration file names (bd_cli_config_set), else
 * NULL. */
const char *bd_uri_arg_done(bd_uri_arg *a);

/* breachctl's fallbacks from the configuration file (cli/settings.h): the store (its db or
 * db-file setting) and its secret file. Copies kept until exit; false when memory runs
 * out. */
bool bd_cli_config_set(const char *db, const char *secret);
/* The secret file for the store db when --secret is not given: BREACHD_SECRET when set,
 * else the configuration file's secret when db is the store it names, else NULL. */
const char *bd_cli_config_secret(const char *db);

/* Reads a secret (what names it in messages, e.g. "signing secret") from a private file
 * into a new string (the caller frees it): a regular file no other user can read or write,
 * its text alone with surrounding spaces and newlines dropped, at most 4096 bytes. On
 * failure returns NULL with why holding "<option>: <reason>" (option names the file). */
char *bd_private_file_read(const char *option, const char *path, const char *what, char *why,
                           size_t whylen);

/* bd_private_file_read of a store URI. */
char *bd_uri_file_read(const char *option, const char *path, char *why, size_t whylen);

#endif
