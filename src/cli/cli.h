/* breachctl commands. Each takes the arguments after its name and returns the process exit
 * status of the scripting contract: 0 success, 1 some input lines rejected, 2 usage error or
 * failure. Results meant for scripts go to stdout; everything else goes to stderr. */
#ifndef BD_CLI_CLI_H
#define BD_CLI_CLI_H

#include <stdint.h>

#include "auth/secret.h"
#include "store/store.h"

enum { BD_EXIT_OK = 0, BD_EXIT_REJECTED = 1, BD_EXIT_FAIL = 2 };

int bd_cmd_init(int argc, char **argv);
int bd_cmd_import(int argc, char **argv);
int bd_cmd_keys(int argc, char **argv);
int bd_cmd_demo(int argc, char **argv);
int bd_cmd_stats(int argc, char **argv);
int bd_cmd_erase(int argc, char **argv);
int bd_cmd_backup(int argc, char **argv);
int bd_cmd_watch(int argc, char **argv);

/* Opens an existing store for writing with its secret (default "<db>.secret") and checks
 * that the two belong together. Prints the reason and returns BD_EXIT_FAIL on failure. */
int bd_cli_open(const char *db, const char *secret_path, bd_store **s,
                uint8_t secret[BD_SECRET_LEN]);
/* The same with the store's open flags (BD_STORE_READ for a command that only reads). */
int bd_cli_open_as(const char *db, const char *secret_path, int flags, bd_store **s,
                   uint8_t secret[BD_SECRET_LEN]);
/* Creates a new store and its secret. */
int bd_cli_init_store(const char *db, const char *secret_path);
/* Creates an API key and prints it as the only line on stdout. rate: requests per hour;
 * exact_per_day: card lookups by full number or Hash: per day (0: none); quota_per_month:
 * requests per UTC month (0: none); jobs: its limits on bulk jobs, each 0 for the default
 * (NULL: all the defaults). */
int bd_cli_create_key(bd_store *s, const char *name, const char *plan, int64_t rate,
                      int64_t exact_per_day, int64_t expires_at, int64_t quota_per_month,
                      const bd_job_limits *jobs);

#endif
