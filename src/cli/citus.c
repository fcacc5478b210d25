/* breachctl citus distribute: lays a PostgreSQL store out over the Citus cluster whose
 * coordinator it is on (docs/SCALING.md), for a store made before the cluster was; `breachctl
 * init` does the same for a new store (bd_cli_distribute). Idempotent: tables laid out before
 * are left as they are. */
#include <stdio.h>
#include <string.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "store/uri.h"

static int say_table(void *ctx, const bd_layout_row *row)
{
    int *changed = ctx;
    *changed += !row->before;
    if (!row->column)
        fprintf(stderr, "breachctl: %-17s reference table%s\n", row->table,
                row->before ? " (already)" : "");
    else
        fprintf(stderr, "breachctl: %-17s distributed by %s%s%s%s\n", row->table, row->column,
                row->colocate_with ? ", co-located with " : "",
                row->colocate_with ? row->colocate_with : "", row->before ? " (already)" : "");
    return 0;
}

int bd_cli_distribute(bd_store *s, const char *shown, bool required)
{
    bd_store_caps caps;
    bd_store_capabilities(s, &caps);
    if (!caps.cluster_layout) {
        if (required)
            fprintf(stderr, "breachctl: %s is a SQLite store: only a PostgreSQL store on a Citus "
                            "coordinator is laid out over a cluster\n", shown);
        return required ? BD_EXIT_FAIL : BD_EXIT_OK;
    }
    bool clustered;
    int changed = 0;
    bd_result r = bd_store_distribute(s, &clustered, say_table, &changed);
    if (r != BD_OK) {
        fprintf(stderr, "breachctl: laying the store at %s out over the cluster failed; the "
                        "tables named above are laid out, run it again to go on\n", shown);
        return BD_EXIT_FAIL;
    }
    if (!clustered) {
        if (required)
            fprintf(stderr, "breachctl: the database at %s is not a Citus coordinator (it has "
                            "no citus extension: CREATE EXTENSION citus, then add the workers)\n",
                    shown);
        return required ? BD_EXIT_FAIL : BD_EXIT_OK;
    }
    fprintf(stderr, "breachctl: the store at %s is laid out over the cluster (%d table%s "
                    "changed)\n", shown, changed, changed == 1 ? "" : "s");
    return BD_EXIT_OK;
}

int bd_cmd_citus(int argc, char **argv)
{
    if (argc < 1 || strcmp(argv[0], "distribute") != 0) {
        fputs("usage: breachctl citus distribute --db URI --secret FILE\n", stderr);
        return BD_EXIT_FAIL;
    }
    const char *db = NULL, *secret = NULL;
    const bd_option opts[] = {{"--db", &db, NULL}, {"--secret", &secret, NULL}, {NULL, NULL, NULL}};
    if (!bd_parse_options("breachctl citus distribute", argc - 1, argv + 1, opts, NULL, 0, NULL))
        return BD_EXIT_FAIL;
    if (!db) {
        fputs("usage: breachctl citus distribute --db URI --secret FILE\n", stderr);
        return BD_EXIT_FAIL;
    }
    bd_store *s;
    uint8_t key[BD_SECRET_LEN];
    if (bd_cli_open(db, secret, &s, key) != BD_EXIT_OK)
        return BD_EXIT_FAIL;
    char shown[512];
    bd_uri_redact(db, shown, sizeof shown);
    int rc = bd_cli_distribute(s, shown, true);
    bd_store_close(s);
    return rc;
}
