/* breachctl: the operator's command line. Dispatches to src/cli/. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "cli/help.h"
#include "cli/settings.h"

int main(int argc, char **argv)
{
    umask(077); /* belt and braces: store files and backups are also created 0600 explicitly */
    const char *group;
    if (bd_help_asked(argc - 1, argv + 1)) { /* the help of the command named, or of all */
        const bd_help_cmd *c = bd_help_find(&BD_HELP_BREACHCTL, argc - 1, argv + 1, &group);
        bd_help_print(stdout, &BD_HELP_BREACHCTL, c, group);
        return BD_EXIT_OK;
    }
    if (bd_version_asked(argc - 1, argv + 1)) {
        bd_help_version(stdout, "breachctl");
        return BD_EXIT_OK;
    }
    char why[4400];
    if (!bd_settings_breachctl(&argc, argv, why, sizeof why)) { /* --db and --secret defaults */
        fprintf(stderr, "breachctl: %s\n", why);
        return BD_EXIT_FAIL;
    }
    if (argc < 2) {
        bd_help_print(stderr, &BD_HELP_BREACHCTL, NULL, NULL);
        return BD_EXIT_FAIL;
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
    if (strcmp(cmd, "tenants") == 0)
        return bd_cmd_tenants(n, rest);
    if (strcmp(cmd, "citus") == 0)
        return bd_cmd_citus(n, rest);
    fprintf(stderr, "breachctl: unknown command '%s' (see breachctl --help)\n", cmd);
    return BD_EXIT_FAIL;
}
