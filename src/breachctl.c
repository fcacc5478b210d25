/* breachctl: the operator's command line. Dispatches to src/cli/. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"

static const char USAGE[] =
    "usage: breachctl COMMAND --db PATH [options]\n"
    "  init                               create an empty store and its secret\n"
    "  import breaches|records|cards FILE...  load JSON Lines or CSV ('-' is stdin, .gz ok)\n"
    "  keys create|list|revoke            manage API keys\n"
    "  demo                               load the synthetic demo corpus, print a demo key\n"
    "  stats                              records per breach and totals\n"
    "  erase --email ADDRESS | --breach UUID   remove an identity's records, or a breach\n"
    "  backup --to FILE                   a consistent copy of the store, while it serves\n"
    "  watch add|list|remove              watches of an API key, alerted by webhook\n"
    "--db takes a SQLite file or a PostgreSQL URI or keyword string; --db-file FILE reads\n"
    "it from a file (mode 0600), BREACHD_DB from the environment: no password in ps.\n"
    "Exit status: 0 success, 1 some input lines rejected, 2 usage error or failure.\n";

int main(int argc, char **argv)
{
    umask(077); /* belt and braces: store files and backups are also created 0600 explicitly */
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        fputs(USAGE, argc < 2 ? stderr : stdout);
        return argc < 2 ? BD_EXIT_FAIL : BD_EXIT_OK;
    }
    const char *cmd = argv[1];
    int n = argc - 2;
    char **rest = argv + 2;
    if (strcmp(cmd, "init") == 0)
        return bd_cmd_init(n, rest);
    if (strcmp(cmd, "import") == 0)
        return bd_cmd_import(n, rest);
    if (strcmp(cmd, "keys") == 0)
        return bd_cmd_keys(n, rest);
    if (strcmp(cmd, "demo") == 0)
        return bd_cmd_demo(n, rest);
    if (strcmp(cmd, "stats") == 0)
        return bd_cmd_stats(n, rest);
    if (strcmp(cmd, "erase") == 0)
        return bd_cmd_erase(n, rest);
    if (strcmp(cmd, "backup") == 0)
        return bd_cmd_backup(n, rest);
    if (strcmp(cmd, "watch") == 0)
        return bd_cmd_watch(n, rest);
    fprintf(stderr, "breachctl: unknown command '%s'\n%s", cmd, USAGE);
    return BD_EXIT_FAIL;
}
