/* breachctl init: create an empty store and its secret. */
#include <stdio.h>
#include <string.h>

#include "cli/args.h"
#include "cli/cli.h"

int bd_cmd_init(int argc, char **argv)
{
    const char *db = NULL, *secret = NULL;
    const bd_option opts[] = {{"--db", &db, NULL}, {"--secret", &secret, NULL}, {NULL, NULL, NULL}};
    if (!bd_parse_options("breachctl init", argc, argv, opts, NULL, 0, NULL))
        return BD_EXIT_FAIL;
    if (!db) {
        fprintf(stderr, "usage: breachctl init --db PATH [--secret FILE]\n");
        return BD_EXIT_FAIL;
    }
    return bd_cli_init_store(db, secret);
}
