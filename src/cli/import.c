/* breachctl import breaches|records|cards FILE...: stream files into the store. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "core/term.h"
#include "core/uuid.h"
#include "ingest/import.h"

static const char USAGE[] =
    "usage: breachctl import breaches|records|cards FILE... --db PATH [--breach UUID]\n"
    "                        [--format jsonl|csv] [--strict] [--bulk] [--secret FILE]\n";

int bd_cmd_import(int argc, char **argv)
{
    const char *db = NULL, *secret_path = NULL, *breach_text = NULL, *format = NULL;
    const char *args[257]; /* what to import, then the files */
    int nargs = 0;
    bool strict = false, bulk = false;
    const bd_option opts[] = {{"--db", &db, NULL},
                              {"--secret", &secret_path, NULL},
                              {"--breach", &breach_text, NULL},
                              {"--format", &format, NULL},
                              {"--strict", NULL, &strict},
                              {"--bulk", NULL, &bulk},
                              {NULL, NULL, NULL}};
    if (!bd_parse_options("breachctl import", argc, argv, opts, args, 257, &nargs))
        return BD_EXIT_FAIL;
    if (!db || nargs < 2) {
        fputs(USAGE, stderr);
        return BD_EXIT_FAIL;
    }
    const char *kind = args[0], **files = args + 1;
    int nfiles = nargs - 1;
    char breach[BD_UUID_TEXT_LEN + 1];
    bd_import_options o = {
        .format = BD_FMT_AUTO, .report = stderr, .ids = stdout, .strict = strict, .bulk = bulk};
    if (breach_text) {
        if (!bd_uuid_canonical(bd_slice_from(breach_text), breach)) {
            fprintf(stderr, "breachctl import: --breach needs a UUID\n");
            return BD_EXIT_FAIL;
        }
        o.breach_uuid = breach;
    }
    if (format && strcmp(format, "jsonl") == 0) {
        o.format = BD_FMT_JSONL;
    } else if (format && strcmp(format, "csv") == 0) {
        o.format = BD_FMT_CSV;
    } else if (format) {
        fprintf(stderr, "breachctl import: --format is jsonl or csv\n");
        return BD_EXIT_FAIL;
    }
    if (strcmp(kind, "breaches") == 0)
        o.kind = BD_IMPORT_BREACHES;
    else if (strcmp(kind, "records") == 0)
        o.kind = BD_IMPORT_RECORDS;
    else if (strcmp(kind, "cards") == 0)
        o.kind = BD_IMPORT_CARDS;
    else {
        fprintf(stderr, "breachctl import: what to import is breaches, records or cards\n%s",
                USAGE);
        return BD_EXIT_FAIL;
    }
    o.progress = isatty(STDERR_FILENO);

    bd_store *s;
    uint8_t secret[BD_SECRET_LEN];
    if (bd_cli_open(db, secret_path, &s, secret) != BD_EXIT_OK)
        return BD_EXIT_FAIL;
    int status = BD_EXIT_OK;
    bd_import_counts total = {0};
    for (int i = 0; i < nfiles; i++) {
        bd_import_counts c = {0};
        char why[1024] = "";
        bd_result r = bd_import_file(s, secret, files[i], &o, &c, why, sizeof why);
        fprintf(stderr, "%s: read %llu, imported %llu, duplicates %llu, rejected %llu\n", files[i],
                (unsigned long long)c.read, (unsigned long long)c.imported,
                (unsigned long long)c.duplicates, (unsigned long long)c.rejected);
        if (r != BD_OK) { /* may quote a rejected line's reason: escaped */
            bd_term_printf(stderr, "breachctl import: %s", why);
            fputc('\n', stderr);
        }
        /* BD_ERR_INVALID is --strict stopping at a counted bad line, or a CSV header row that
         * is not valid: then no line of the file could be read, a failure like a missing file */
        if (r != BD_OK && (r != BD_ERR_INVALID || !c.rejected)) {
            status = BD_EXIT_FAIL; /* an unreadable file or a failing store: stop here */
            break;
        }
        if (c.rejected && status == BD_EXIT_OK)
            status = BD_EXIT_REJECTED;
        total.read += c.read;
        total.imported += c.imported;
        total.duplicates += c.duplicates;
        total.rejected += c.rejected;
    }
    if (nfiles > 1)
        fprintf(stderr, "total: read %llu, imported %llu, duplicates %llu, rejected %llu\n",
                (unsigned long long)total.read, (unsigned long long)total.imported,
                (unsigned long long)total.duplicates, (unsigned long long)total.rejected);
    bd_store_close(s);
    return status;
}
