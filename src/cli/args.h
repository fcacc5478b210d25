/* Small helpers for the two programs' command lines: "--name value" and "--name=value". */
#ifndef BD_CLI_ARGS_H
#define BD_CLI_ARGS_H

#include <stdbool.h>
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

/* Parses a command's arguments against opts (ended by an entry with a NULL name). Other
 * arguments ("-" included) are positional: up to npos_max of them go to pos, counted in
 * *npos. On an unknown option, a missing value or too many positional arguments, prints
 * "<cmd>: <reason>" on stderr and returns false. pos and npos may be NULL when npos_max
 * is 0. */
bool bd_parse_options(const char *cmd, int argc, char **argv, const bd_option *opts,
                      const char **pos, int npos_max, int *npos);

#endif
