/* breachctl commands. Each takes the arguments after its name and returns the process exit
 * status of the scripting contract: 0 success, 1 some input lines rejected, 2 usage error or
 * failure. Results meant for scripts go to stdout; everything else goes to stderr. */
#ifndef BD_CLI_CLI_H
#define BD_CLI_CLI_H

#include <stdbool.h>
#include <stdint.h>

#include "core/buf.h"
#include "ingest/normalize.h"

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
int bd_cmd_tenants(int argc, char **argv);
int bd_cmd_citus(int argc, char **argv);

/* Opens an existing store for writing with its secret (default "<db>.secret") and checks
 * that the two belong together. Prints the reason and returns BD_EXIT_FAIL on failure. */
int bd_cli_open(const char *db, const char *secret_path, bd_store **s,
                uint8_t secret[BD_SECRET_LEN]);
/* The same with the store's open flags (BD_STORE_READ for a command that only reads). */
int bd_cli_open_as(const char *db, const char *secret_path, int flags, bd_store **s,
                   uint8_t secret[BD_SECRET_LEN]);
/* Lays store s out over the Citus cluster whose coordinator it is on (bd_store_distribute),
 * saying on stderr what each table is; shown: the store's name for messages. Not a
 * cluster's coordinator (or a SQLite store): BD_EXIT_OK with nothing said unless required,
 * else BD_EXIT_FAIL with the reason. */
int bd_cli_distribute(bd_store *s, const char *shown, bool required);
/* Creates a new store and its secret (laid out over the cluster on a Citus coordinator). */
int bd_cli_init_store(const char *db, const char *secret_path);
/* Creates an API key and prints it as the only line on stdout. rate: requests per hour;
 * exact_per_day: card lookups by full number or Hash: per day (0: none); quota_per_month:
 * requests per UTC month (0: none); jobs: its limits on bulk jobs, each 0 for the default
 * (NULL: all the defaults). */
int bd_cli_create_key(bd_store *s, const char *name, const char *plan, int64_t rate,
                      int64_t exact_per_day, int64_t expires_at, int64_t quota_per_month,
                      const bd_job_limits *jobs);

/* Takes every "NAME VALUE" and "NAME=VALUE" of a repeatable option out of argv[0..*argc)
 * (the rest keep their order, *argc shrinks) into vals (at most max; *n counts them).
 * A value beginning "--" is taken for the next option: the value is missing. Returns 0, or
 * -1 after saying why on stderr ("<cmd>: ...": a missing value, too many). */
int bd_cli_take_repeated(const char *cmd, int *argc, char **argv, const char *name,
                         const char **vals, int max, int *n);
/* Appends a breachctl change to the audit trail (key 0, address "breachctl", now): action
 * ("tenant.create", "key.revoke"), the tenant's or key's id, and its JSON before and after
 * (NULL or empty: none), never a secret. */
bd_result bd_cli_audit(bd_store *s, const char *action, int64_t target, const bd_buf *before,
                       const bd_buf *after);
/* given normalised as an email_domain search normalises it (lower case, no trailing dot)
 * into out; false after saying why ("<cmd>: 'x' is not a domain name: ...") on stderr. */
bool bd_cli_domain(const char *cmd, const char *given, char out[BD_NORM_MAX + 1]);

#endif
