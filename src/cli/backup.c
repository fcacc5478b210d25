/* breachctl backup --to FILE: a consistent copy of the store, taken while it serves. */
#include <stdio.h>
#include <unistd.h>

#include "cli/args.h"
#include "cli/cli.h"

int bd_cmd_backup(int argc, char **argv)
{
    const char *db = NULL, *secret = NULL, *to = NULL;
    const bd_option opts[] = {
        {"--db", &db, NULL}, {"--secret", &secret, NULL}, {"--to", &to, NULL}, {NULL, NULL, NULL}};
    if (!bd_parse_options("breachctl backup", argc, argv, opts, NULL, 0, NULL))
        return BD_EXIT_FAIL;
    if (!db || !to) {
        fputs("usage: breachctl backup --db PATH --to FILE\n", stderr);
        return BD_EXIT_FAIL;
    }
    if (access(to, F_OK) == 0) {
        fprintf(stderr, "breachctl backup: %s exists; choose a new file\n", to);
        return BD_EXIT_FAIL;
    }
    bd_store *s;
    uint8_t key[BD_SECRET_LEN];
    if (bd_cli_open(db, secret, &s, key) != BD_EXIT_OK)
        return BD_EXIT_FAIL;
    bd_result r = bd_store_backup(s, to);
    bd_store_close(s);
    if (r != BD_OK) {
        fprintf(stderr, "breachctl backup: writing %s failed: %s\n", to, bd_result_str(r));
        return BD_EXIT_FAIL;
    }
    fprintf(stderr, "breachctl: backed up %s to %s; copy the secret file (%s.secret) with it\n", db,
            to, db);
    return BD_EXIT_OK;
}
