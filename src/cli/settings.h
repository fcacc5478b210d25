/* Settings from the configuration file (breachd.conf(5), core/config.h), the environment
 * (BREACHD_<OPTION>) and the command line, with the precedence flag > environment > file.
 *
 * breachd gets them as one argument list that its own option parser reads: the file's
 * settings first, then the environment's, then the command line's, each "--key=value", so
 * that a later one wins; a setting given at one level (for a repeatable option any number
 * of times; --db and --db-file count as one setting, as do --shared-limits and its -file
 * form) drops what the levels below give for it; the file's secret is dropped too when the
 * store is named elsewhere (it goes with the file's store). Each argument remembers where it
 * came from
 * so a bad value is reported with its file and line.
 *
 * breachctl takes from the same file only the store (db or db-file) and its secret. */
#ifndef BD_CLI_SETTINGS_H
#define BD_CLI_SETTINGS_H

#include <stdbool.h>
#include <stddef.h>

#include "core/config.h"

typedef struct {
    int argc;
    char **argv;   /* the file's and environment's settings (copies), then the command
                    * line's arguments (argv's own strings, argv[0] first) */
    char **origin; /* per argument: "FILE:LINE", "BREACHD_NAME", or NULL (command line) */
    char *path;    /* the file read, or NULL */
} bd_settings;

/* Builds breachd's arguments from the file named by --config (taken out of the list) or
 * BREACHD_CONFIG, else the default file when it exists; the environment; and argv. On a
 * refusal (an unreadable or malformed file, an unknown or twice-given key, a password in a
 * file other users can read) returns false with why saying so with the file and line. */
bool bd_settings_breachd(int argc, char **argv, bd_settings *s, char *why, size_t whylen);

/* Where argument i came from: "FILE:LINE: ", "BREACHD_NAME: " or "" (command line). */
const char *bd_settings_origin(const bd_settings *s, int i, char *buf, size_t cap);

void bd_settings_free(bd_settings *s);

/* breachctl: removes "--config FILE" / "--config=FILE" from argv (anywhere), reads that file
 * (or BREACHD_CONFIG's, or the default when it exists), checks it as breachd would, and
 * keeps its store and secret as the commands' defaults (cli/args.h, bd_cli_config_set).
 * The default file is passed over when this user may not read it (the package's is
 * root:breachd 0640). False with why on a refusal. */
bool bd_settings_breachctl(int *argc, char **argv, char *why, size_t whylen);

#endif
