/* breachctl stats: records per breach and totals. */
#include <stdio.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "core/term.h"

static int print_row(void *ctx, const bd_stats_row *row)
{
    (void)ctx;
    /* breach names come from imported files: escaped, never terminal control */
    bd_term_printf(stdout, "%.*s  %10lld records  %10lld identities  %.*s", (int)row->uuid.len,
                   row->uuid.ptr, (long long)row->records, (long long)row->pwned_count,
                   (int)row->source_name.len, row->source_name.ptr);
    putchar('\n');
    return 0;
}

int bd_cmd_stats(int argc, char **argv)
{
    const char *db = NULL, *secret = NULL;
    const bd_option opts[] = {{"--db", &db, NULL}, {"--secret", &secret, NULL}, {NULL, NULL, NULL}};
    if (!bd_parse_options("breachctl stats", argc, argv, opts, NULL, 0, NULL))
        return BD_EXIT_FAIL;
    if (!db) {
        fputs("usage: breachctl stats --db PATH\n", stderr);
        return BD_EXIT_FAIL;
    }
    bd_store *s;
    uint8_t key[BD_SECRET_LEN];
    if (bd_cli_open(db, secret, &s, key) != BD_EXIT_OK)
        return BD_EXIT_FAIL;
    int64_t records = 0, cards = 0;
    bd_result r = bd_store_stats(s, print_row, NULL, &records, &cards);
    bd_store_close(s);
    if (r != BD_OK) {
        fprintf(stderr, "breachctl stats: the store failed: %s\n", bd_result_str(r));
        return BD_EXIT_FAIL;
    }
    printf("total: %lld breach records, %lld cards\n", (long long)records, (long long)cards);
    return BD_EXIT_OK;
}
