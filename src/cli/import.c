/* breachctl import breaches|records|cards FILE...: stream files into the store;
 * breachctl import pwned-passwords FILE|DIR...: load a Pwned Passwords download. */
#include <dirent.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "cli/import_pastes.h"
#include "store/pastes.h"
#include "core/term.h"
#include "core/uuid.h"
#include "ingest/colmap.h"
#include "ingest/import.h"
#include "ingest/pwned.h"
#include "store/uri.h"

static const char USAGE[] =
    "usage: breachctl import breaches|records|cards FILE|DIR... --db PATH [--breach UUID]\n"
    "                        [--format jsonl|csv|tsv|combo|stealer] [--separator C]\n"
    "                        [--map 'Column=field,...'] [--columns a,b,c] [--drop-unmapped]\n"
    "                        [--lossy] [--dry-run] [--strict] [--bulk] [--secret FILE]\n"
    "                        [--password-ranges] [--decompress-memory-limit MiB]\n"
    "                        [--follow-links]\n"
    "       breachctl import pwned-passwords FILE|DIR... --db PATH [--mode sha1|ntlm]\n"
    "                        [--follow-links]\n"
    "       breachctl import pastes FILE... --db PATH\n";

/* A SQLite store's index builds sort in runs kept in temporary files (conn.c): they go in
 * the store's own directory, on the disk that has room for the store, unless SQLITE_TMPDIR
 * names another place (/tmp is often a small RAM disk). Before the store is opened: SQLite
 * reads the variable when it starts. */
static void temp_beside_store(const char *db)
{
    if (bd_uri_is_postgres(db) || getenv("SQLITE_TMPDIR") || strncmp(db, "file:", 5) == 0 ||
        strcmp(db, ":memory:") == 0)
        return;
    char dir[4096];
    const char *slash = strrchr(db, '/');
    size_t n = slash ? (size_t)(slash - db) : 0;
    if (n >= sizeof dir)
        return;
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (n == 0)
        snprintf(dir, sizeof dir, "/");
    else
        snprintf(dir, sizeof dir, "%.*s", (int)n, db);
    setenv("SQLITE_TMPDIR", dir, 0);
}

/* Imports each file of a Pwned Passwords download: 0, BD_EXIT_REJECTED or BD_EXIT_FAIL. */
static int import_pwned(bd_store *s, const char **files, int nfiles, const char *mode, bool follow)
{
    bd_pwned_options o = {.mode = BD_PWNED_DETECT,
                          .report = stderr,
                          .progress = isatty(STDERR_FILENO) ? stderr : NULL,
                          .follow_links = follow};
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
        if (c.rejected || c.links_skipped)
            status = BD_EXIT_REJECTED;
    }
    return status;
}

/* The files to import, in order: each argument as given, a directory's regular files sorted
 * by name, or the matches of a glob pattern that names no file itself (for a quoted pattern).
 * Owns its strings.
 *
 * Symbolic links are not followed unless --follow-links: a dump may hold links to files
 * outside it (b.txt -> /etc/shadow), and a shell's glob names them like any file, so a link
 * is passed over with a message wherever it comes from (named, in a directory, in a glob's
 * match), counted in skipped for the exit status. A named link to a pipe or a socket is
 * read: the shell names <(...) by one, and it reaches no file. The reader checks again as
 * it opens (O_NOFOLLOW). */
typedef struct {
    char **v;
    size_t n, cap;
    bool follow;    /* --follow-links */
    size_t skipped; /* links passed over */
} file_list;

static bool list_add(file_list *l, const char *path)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        char **v = realloc(l->v, cap * sizeof *v);
        if (!v)
            return false;
        l->v = v;
        l->cap = cap;
    }
    return (l->v[l->n] = strdup(path)) != NULL && ++l->n;
}

static void list_free(file_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Says that path is passed over because link (path itself or a directory on its way) is a
 * symbolic link. The names are escaped; nothing of what the link leads to is read. */
static void skip_link(file_list *l, const char *path, const char *link)
{
    l->skipped++;
    if (strcmp(path, link) == 0)
        bd_term_printf(stderr,
                       "breachctl import: skipping %s: a symbolic link (--follow-links follows "
                       "links)",
                       path);
    else
        bd_term_printf(stderr,
                       "breachctl import: skipping %s: %s is a symbolic link (--follow-links "
                       "follows links)",
                       path, link);
    fputc('\n', stderr);
}

/* Adds the regular files of dir (not its subdirectories, nor names starting with '.'),
 * sorted by name. Without --follow-links a link to a file is passed over with a message; a
 * link to a directory or to nothing is passed over silently, like a subdirectory. false
 * (said) when it cannot be read. */
static bool add_directory(file_list *l, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) {
        bd_term_printf(stderr, "breachctl import: cannot read the directory %s", dir);
        fputc('\n', stderr);
        return false;
    }
    size_t from = l->n;
    bool ok = true;
    struct dirent *e;
    while (ok && (e = readdir(d)) != NULL) {
        char path[4096];
        int n = snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (e->d_name[0] != '.' && n > 0 && (size_t)n < sizeof path)
            ok = list_add(l, path);
    }
    closedir(d);
    qsort(l->v + from, l->n - from, sizeof *l->v, by_name);
    size_t kept = from; /* now each name in order: files kept, the rest freed */
    for (size_t i = from; i < l->n; i++) {
        struct stat st;
        bool seen = lstat(l->v[i], &st) == 0, link = seen && S_ISLNK(st.st_mode);
        if (link)
            seen = stat(l->v[i], &st) == 0;
        bool file = seen && S_ISREG(st.st_mode);
        if (file && link && !l->follow) {
            skip_link(l, l->v[i], l->v[i]);
            file = false;
        }
        if (file)
            l->v[kept++] = l->v[i];
        else
            free(l->v[i]);
    }
    l->n = kept;
    if (!ok)
        fputs("breachctl import: out of memory\n", stderr);
    return ok;
}

/* Whether a component of path from byte from on (the parts a glob matched) is a symbolic
 * link: the first such prefix of path in *link (malloc'ed), else *link NULL. */
static bool link_in(const char *path, size_t from, char **link)
{
    *link = strdup(path);
    if (!*link)
        return true; /* out of memory: taken as a link, so passed over */
    for (size_t i = from, n = strlen(path); i <= n; i++) {
        if ((i < n && path[i] != '/') || i == from || path[i - 1] == '/')
            continue; /* not the end of a component */
        (*link)[i] = '\0';
        struct stat st;
        if (lstat(*link, &st) == 0 && S_ISLNK(st.st_mode))
            return true;
        (*link)[i] = path[i];
    }
    free(*link);
    *link = NULL;
    return false;
}

/* Adds the matches of a quoted glob pattern, in glob's (name) order. Without
 * --follow-links a match is passed over with a message when a component the pattern
 * matched (not the directories it names outright) is a symbolic link. false when there is
 * no match (the pattern is then taken as a name), or out of memory (*ok false). */
static bool add_glob(file_list *l, const char *pattern, bool *ok)
{
    glob_t g;
    *ok = true;
    if (glob(pattern, 0, NULL, &g) != 0)
        return false;
    size_t wild = strcspn(pattern, "*?["), from = wild;
    while (from > 0 && pattern[from - 1] != '/')
        from--; /* the pattern's own directories end here */
    for (size_t i = 0; *ok && i < g.gl_pathc; i++) {
        char *link = NULL;
        if (!l->follow && strlen(g.gl_pathv[i]) >= from && link_in(g.gl_pathv[i], from, &link))
            skip_link(l, g.gl_pathv[i], link ? link : g.gl_pathv[i]);
        else
            *ok = list_add(l, g.gl_pathv[i]);
        free(link);
    }
    globfree(&g);
    return true;
}

/* Whether arg, named on the command line, is a symbolic link to pass over (said). */
static bool named_link(file_list *l, const char *arg)
{
    struct stat st;
    if (l->follow || strcmp(arg, "-") == 0 || lstat(arg, &st) != 0 || !S_ISLNK(st.st_mode))
        return false;
    if (stat(arg, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)))
        return false; /* a pipe: <(...) */
    skip_link(l, arg, arg);
    return true;
}

static bool expand(file_list *l, const char *arg)
{
    struct stat st;
    if (strcmp(arg, "-") == 0)
        return list_add(l, arg);
    if (named_link(l, arg))
        return true;
    if (stat(arg, &st) == 0 && S_ISDIR(st.st_mode))
        return add_directory(l, arg);
    bool ok;
    if (stat(arg, &st) != 0 && strpbrk(arg, "*?[") && add_glob(l, arg, &ok))
        return ok;
    return list_add(l, arg); /* a missing file is reported when it is opened */
}

/* --format and --separator into o; false (said) on a bad value. */
static bool parse_format(const char *format, const char *sep, bd_import_options *o)
{
    static const struct {
        const char *name;
        bd_format fmt;
    } formats[] = {{"jsonl", BD_FMT_JSONL},
                   {"csv", BD_FMT_CSV},
                   {"tsv", BD_FMT_TSV},
                   {"combo", BD_FMT_COMBO},
                   {"stealer", BD_FMT_STEALER}};
    o->format = BD_FMT_AUTO;
    for (size_t i = 0; format && i < sizeof formats / sizeof formats[0]; i++)
        if (strcmp(format, formats[i].name) == 0)
            o->format = formats[i].fmt;
    if (format && o->format == BD_FMT_AUTO) {
        fprintf(stderr, "breachctl import: --format is jsonl, csv, tsv, combo or stealer\n");
        return false;
    }
    if (!sep)
        return true;
    if (o->format != BD_FMT_COMBO) {
        fprintf(stderr, "breachctl import: --separator is for --format combo\n");
        return false;
    }
    o->separator = strcmp(sep, "tab") == 0 || strcmp(sep, "\\t") == 0 ? '\t' : sep[0];
    if (!o->separator || (sep[1] && o->separator != '\t') || !strchr(":;|\t", o->separator)) {
        fprintf(stderr, "breachctl import: --separator is one of : ; | or tab\n");
        return false;
    }
    return true;
}

/* The options every kind but pwned-passwords takes, checked against the kind and format. */
static bool check_combination(const bd_import_options *o, bool pwned)
{
    bool login_lines = o->format == BD_FMT_COMBO || o->format == BD_FMT_STEALER;
    if (pwned &&
        (o->dry_run || o->map || o->columns || o->drop_unmapped || o->lossy || o->memory_limit)) {
        fprintf(stderr, "breachctl import: pwned-passwords takes none of --dry-run, --map, "
                        "--columns, --drop-unmapped, --lossy, --decompress-memory-limit\n");
        return false;
    }
    if (login_lines && (o->kind != BD_IMPORT_RECORDS || !o->breach_uuid)) {
        fprintf(stderr, "breachctl import: --format combo and stealer import records and need "
                        "--breach UUID\n");
        return false;
    }
    return true;
}

/* Hashes the emails of the records just imported for the HIBP API's breachedaccount/range
 * (store/pastes.h), in a transaction of its own; false with the reason printed. */
static bool hash_emails(bd_store *s)
{
    int64_t added = 0;
    bd_result r = bd_store_begin(s);
    if (r == BD_OK) {
        r = bd_store_email_hashes_sync(s, &added);
        if (r == BD_OK)
            r = bd_store_commit(s);
        else
            bd_store_rollback(s);
    }
    if (r != BD_OK) {
        fprintf(stderr, "breachctl import: hashing the new emails failed: %s (the next "
                        "import of records hashes them)\n", bd_result_str(r));
        return false;
    }
    return true;
}

/* Imports each file in turn and prints its counts line (and a total for several).
 * BD_EXIT_OK, BD_EXIT_REJECTED or BD_EXIT_FAIL. */
static int import_files(bd_store *s, const uint8_t *secret, const file_list *files,
                        const bd_import_options *o)
{
    const char *mark = o->dry_run ? " (dry run: nothing written)" : "";
    int status = BD_EXIT_OK;
    bd_import_counts total = {0};
    for (size_t i = 0; i < files->n; i++) {
        bd_import_counts c = {0};
        char why[1024] = "";
        bd_result r = bd_import_file(s, secret, files->v[i], o, &c, why, sizeof why);
        fprintf(stderr, "%s: read %llu, imported %llu, duplicates %llu, rejected %llu%s\n",
                files->v[i], (unsigned long long)c.read, (unsigned long long)c.imported,
                (unsigned long long)c.duplicates, (unsigned long long)c.rejected, mark);
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
    if (files->n > 1)
        fprintf(stderr, "total: read %llu, imported %llu, duplicates %llu, rejected %llu%s\n",
                (unsigned long long)total.read, (unsigned long long)total.imported,
                (unsigned long long)total.duplicates, (unsigned long long)total.rejected, mark);
    return status;
}

int bd_cmd_import(int argc, char **argv)
{
    const char *db = NULL, *secret_path = NULL, *breach_text = NULL, *format = NULL, *mode = NULL,
               *sep = NULL, *map_spec = NULL, *columns = NULL, *mem_limit = NULL;
    const char *args[257]; /* what to import, then the files */
    int nargs = 0;
    bool strict = false, bulk = false, ranges = false, no_ranges = false, drop = false,
         lossy = false, dry = false, follow = false;
    const bd_option opts[] = {{"--db", &db, NULL},
                              {"--secret", &secret_path, NULL},
                              {"--breach", &breach_text, NULL},
                              {"--format", &format, NULL},
                              {"--separator", &sep, NULL},
                              {"--map", &map_spec, NULL},
                              {"--columns", &columns, NULL},
                              {"--drop-unmapped", NULL, &drop},
                              {"--lossy", NULL, &lossy},
                              {"--dry-run", NULL, &dry},
                              {"--strict", NULL, &strict},
                              {"--bulk", NULL, &bulk},
                              {"--mode", &mode, NULL},
                              {"--password-ranges", NULL, &ranges},
                              {"--no-password-ranges", NULL, &no_ranges}, /* the default */
                              {"--decompress-memory-limit", &mem_limit, NULL},
                              {"--follow-links", NULL, &follow},
                              {NULL, NULL, NULL}};
    if (!bd_parse_options("breachctl import", argc, argv, opts, args, 257, &nargs))
        return BD_EXIT_FAIL;
    if (!db || nargs < 2) {
        fputs(USAGE, stderr);
        return BD_EXIT_FAIL;
    }
    const char *kind = args[0];
    char breach[BD_UUID_TEXT_LEN + 1];
    bd_import_options o = {.report = stderr,
                           .ids = stdout,
                           .strict = strict,
                           .bulk = bulk,
                           /* unsalted SHA-1 and NTLM of a corpus's passwords are crackable:
                            * counted only when the operator asks (OPERATIONS.md, "Password
                            * ranges") */
                           .no_password_ranges = !ranges,
                           .columns = columns,
                           .drop_unmapped = drop,
                           .lossy = lossy,
                           .dry_run = dry,
                           .follow_links = follow};
    if (ranges && no_ranges) {
        fprintf(stderr,
                "breachctl import: give --password-ranges or --no-password-ranges, not both\n");
        return BD_EXIT_FAIL;
    }
    bool pwned = strcmp(kind, "pwned-passwords") == 0;
    /* pastes (HIBP's pasteaccount): JSON Lines of their own, no option of the others */
    bool pastes = strcmp(kind, "pastes") == 0;
    if (pastes && (breach_text || format || sep || map_spec || columns || drop || lossy || dry ||
                   strict || bulk || ranges || no_ranges || mem_limit || mode)) {
        fprintf(stderr, "breachctl import: pastes takes a file of JSON lines and no option "
                        "but --db and --secret\n");
        return BD_EXIT_FAIL;
    }
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
    if (!parse_format(format, sep, &o))
        return BD_EXIT_FAIL;
    if (mem_limit) {
        int64_t mib;
        if (!bd_parse_i64(mem_limit, 1, 65536, &mib)) {
            fprintf(stderr, "breachctl import: --decompress-memory-limit is a number of MiB "
                            "from 1 to 65536\n");
            return BD_EXIT_FAIL;
        }
        o.memory_limit = (uint64_t)mib << 20;
    }
    if (strcmp(kind, "breaches") == 0)
        o.kind = BD_IMPORT_BREACHES;
    else if (strcmp(kind, "records") == 0)
        o.kind = BD_IMPORT_RECORDS;
    else if (strcmp(kind, "cards") == 0)
        o.kind = BD_IMPORT_CARDS;
    else if (!pwned && !pastes) {
        fprintf(stderr,
                "breachctl import: what to import is breaches, records, cards, "
                "pwned-passwords or pastes\n%s",
                USAGE);
        return BD_EXIT_FAIL;
    }
    bd_colmap *map = NULL;
    if (map_spec) {
        char why[256];
        if (bd_colmap_parse(map_spec, &map, why, sizeof why) != BD_OK) {
            bd_term_printf(stderr, "breachctl import: %s", why);
            fputc('\n', stderr);
            return BD_EXIT_FAIL;
        }
        o.map = map;
    }
    if (!check_combination(&o, pwned)) {
        bd_colmap_free(map);
        return BD_EXIT_FAIL;
    }
    o.progress = isatty(STDERR_FILENO) ? stderr : NULL;

    file_list files = {.follow = follow};
    int status = BD_EXIT_FAIL;
    bd_store *s = NULL;
    uint8_t secret[BD_SECRET_LEN];
    /* a pwned-passwords directory is a per-prefix download: bd_pwned_import reads it */
    for (int i = 1; i < nargs; i++)
        if (pwned ? !named_link(&files, args[i]) && !list_add(&files, args[i])
                  : !expand(&files, args[i]))
            goto out;
    if (files.n == 0) {
        fprintf(stderr, "breachctl import: no files to import\n");
        goto out;
    }
    if (!dry)
        temp_beside_store(db);
    if (bd_cli_open_as(db, secret_path, dry ? BD_STORE_READ : BD_STORE_WRITE, &s, secret) !=
        BD_EXIT_OK)
        goto out;
    status = pastes  ? bd_cli_import_pastes(s, files.v, files.n)
             : pwned ? import_pwned(s, (const char **)files.v, (int)files.n, mode, follow)
                     : import_files(s, secret, &files, &o);
    if (o.kind == BD_IMPORT_RECORDS && !dry && !pastes && !pwned && status != BD_EXIT_FAIL &&
        !hash_emails(s))
        status = BD_EXIT_FAIL;
    if (files.skipped && status == BD_EXIT_OK)
        status = BD_EXIT_REJECTED; /* not all of what was named was read */
out:
    bd_store_close(s);
    list_free(&files);
    bd_colmap_free(map);
    return status;
}
