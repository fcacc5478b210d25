/* breachctl init: create an empty store and its secret. */
#include <stdio.h>
#include <string.h>

#include "cli/args.h"
#include "cli/cli.h"

int bd_cmd_init(int argc, char **argv)
{
    const char *db = NULL, *secret = NULL;
    for (int i = 0; i < argc; i++) {
        const char *v = NULL;
        if (bd_arg_value(argc, argv, &i, "--db", &v))
            db = v;
        else if (bd_arg_value(argc, argv, &i, "--secret", &v))
            secret = v;
        else {
            fprintf(stderr, "breachctl init: unknown option '%s'\n", argv[i]);
            return BD_EXIT_FAIL;
        }
        if (!v) {
            fprintf(stderr, "breachctl init: %s needs a value\n", argv[i]);
            return BD_EXIT_FAIL;
        }
    }
    if (!db) {
        fprintf(stderr, "usage: breachctl init --db PATH [--secret FILE]\n");
        return BD_EXIT_FAIL;
    }
    return bd_cli_init_store(db, secret);
}
