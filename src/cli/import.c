/* breachctl import breaches|records|cards FILE...: stream files into the store;
 * breachctl import pwned-passwords FILE|DIR...: load a Pwned Passwords download. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "core/term.h"
#include "core/uuid.h"
#include "ingest/import.h"
#include "ingest/pwned.h"

static const char USAGE[] =
    "usage: breachctl import breaches|records|cards FILE... --db PATH [--breach UUID]\n"
    "                        [--format jsonl|csv] [--strict] [--bulk] [--secret FILE]\n"
    "                        [--no-password-ranges]\n"
    "       breachctl import pwned-passwords FILE|DIR... --db PATH [--mode sha1|ntlm]\n";

/* Imports each file of a Pwned Passwords download: 0, BD_EXIT_REJECTED or BD_EXIT_FAIL. */
static int import_pwned(bd_store *s, const char **files, int nfiles, const char *mode)
{
    bd_pwned_options o = {.mode = BD_PWNED_DETECT, .report = stderr,
                          .progress = isatty(STDERR_FILENO)};
    if (mode && strcmp(mode, "sha1") == 0) {
        o.mode = BD_RANGE_SHA1;
    } else if (mode && strcmp(mode, "ntlm") == 0) {
        o.mode = BD_RANGE_NTLM;
    } else if (mode) {
        fprintf(stderr, "breachctl import: --mode is sha1 or ntlm\n");
        return BD_EXIT_FAIL;
    }
    int status = BD_EXIT_OK;
    for (int i = 0; i < nfiles; i++) {
        bd_import_counts c = {0};
        char why[1024] = "";
        bd_result r = bd_pwned_import(s, files[i], &o, &c, why, sizeof why);
        fprintf(stderr, "%s: read %llu, imported %llu, rejected %llu\n", files[i],
                (unsigned long long)c.read, (unsigned long long)c.imported,
                (unsigned long long)c.rejected);
        if (r != BD_OK) {
            bd_term_printf(stderr, "breachctl import: %s", why);
            fputc('\n', stderr);
            return BD_EXIT_FAIL;
        }
        if (c.rejected)
            status = BD_EXIT_REJECTED;
    }
    return status;
}

int bd_cmd_import(int argc, char **argv)
{
    const char *db = NULL, *secret_path = NULL, *breach_text = NULL, *format = NULL,
               *mode = NULL;
    const char *args[257]; /* what to import, then the files */
    int nargs = 0;
    bool strict = false, bulk = false, no_ranges = false;
    const bd_option opts[] = {{"--db", &db, NULL},
                              {"--secret", &secret_path, NULL},
                              {"--breach", &breach_text, NULL},
                              {"--format", &format, NULL},
                              {"--strict", NULL, &strict},
                              {"--bulk", NULL, &bulk},
                              {"--mode", &mode, NULL},
                              {"--no-password-ranges", NULL, &no_ranges},
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
        .format = BD_FMT_AUTO, .report = stderr, .ids = stdout, .strict = strict, .bulk = bulk,
        .no_password_ranges = no_ranges};
    bool pwned = strcmp(kind, "pwned-passwords") == 0;
    if (mode && !pwned) {
        fprintf(stderr, "breachctl import: --mode is for pwned-passwords\n");
        return BD_EXIT_FAIL;
    }
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
    else if (!pwned) {
        fprintf(stderr,
                "breachctl import: what to import is breaches, records, cards or "
                "pwned-passwords\n%s",
                USAGE);
        return BD_EXIT_FAIL;
    }
    o.progress = isatty(STDERR_FILENO);

    bd_store *s;
    uint8_t secret[BD_SECRET_LEN];
    if (bd_cli_open(db, secret_path, &s, secret) != BD_EXIT_OK)
        return BD_EXIT_FAIL;
    if (pwned) {
        int st = import_pwned(s, files, nfiles, mode);
        bd_store_close(s);
        return st;
    }
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
