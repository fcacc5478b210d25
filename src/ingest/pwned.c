/* Pwned Passwords downloads into the password ranges: the line parser, the input (a file,
 * a .gz through gzip, or a per-prefix directory) and the batches. */
#include "ingest/pwned.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/hex.h"
#include "core/term.h"
#include "ingest/source.h"

/* Hashes per transaction. The download is sorted, so a batch fills a run of buckets one
 * after the other and each is written once; bigger batches only cost memory (28 bytes a
 * hash) and the work a kill loses. */
#define DEFAULT_BATCH (1u << 20)

bd_result bd_pwned_parse_line(bd_slice line, int32_t prefix, bd_range_mode *mode, uint8_t hash[20],
                              uint32_t *count, const char **why)
{
    size_t len = line.len;
    while (len > 0 &&
           (line.ptr[len - 1] == '\r' || line.ptr[len - 1] == ' ' || line.ptr[len - 1] == '\t'))
        len--;
    const char *colon = memchr(line.ptr, ':', len);
    if (!colon) {
        *why = "expected HASH:COUNT";
        return BD_ERR_INVALID;
    }
    size_t hl = (size_t)(colon - line.ptr), pre = prefix >= 0 ? 5 : 0;
    if (hl + pre == 40)
        *mode = BD_RANGE_SHA1;
    else if (hl + pre == 32)
        *mode = BD_RANGE_NTLM;
    else {
        *why = prefix >= 0 ? "the suffix is not 35 (SHA-1) or 27 (NTLM) hex digits"
                           : "the hash is not 40 (SHA-1) or 32 (NTLM) hex digits";
        return BD_ERR_INVALID;
    }
    char digits[40];
    for (size_t i = 0; i < pre; i++)
        digits[i] = "0123456789ABCDEF"[(prefix >> (4 * (4 - i))) & 0xF];
    memcpy(digits + pre, line.ptr, hl);
    memset(hash, 0, 20); /* an NTLM hash fills 16 */
    if (!bd_hex_decode((bd_slice){digits, hl + pre}, hash, (hl + pre) / 2, BD_HEX_ANY_CASE)) {
        *why = "the hash is not hexadecimal";
        return BD_ERR_INVALID;
    }
    const char *p = colon + 1, *end = line.ptr + len;
    uint64_t n = 0;
    if (p == end) {
        *why = "the count is missing";
        return BD_ERR_INVALID;
    }
    for (; p < end; p++) {
        if (*p < '0' || *p > '9' || (n = n * 10 + (uint64_t)(*p - '0')) > UINT32_MAX) {
            *why = *p < '0' || *p > '9' ? "the count is not a whole number"
                                        : "the count is larger than 4294967295";
            return BD_ERR_INVALID;
        }
    }
    if (n == 0) {
        *why = "the count is 0 (a padding line)";
        return BD_ERR_INVALID;
    }
    *count = (uint32_t)n;
    return BD_OK;
}

/* ---- the input --------------------------------------------------------------------- */

typedef struct {
    FILE *f;
    pid_t gzip; /* the gzip child, else 0 */
} input;

static bool ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), t = strlen(tail);
    return n >= t && strcmp(s + n - t, tail) == 0;
}

/* Opens a plain file, or a .gz one through `gzip -dc` reading it on its standard input.
 * Either way breachd opens the file, so a symbolic link is refused unless follow
 * (bd_source_open_path). */
static bd_result input_open(input *in, const char *path, bool follow, char *why, size_t whylen)
{
    in->gzip = 0;
    int fd = bd_source_open_path(path, follow, why, whylen);
    if (fd < 0)
        return BD_ERR_IO;
    if (!ends_with(path, ".gz")) {
        in->f = fdopen(fd, "r");
        if (!in->f) {
            snprintf(why, whylen, "%s: cannot open: %s", path, strerror(errno));
            close(fd);
        }
        return in->f ? BD_OK : BD_ERR_IO;
    }
    int fds[2];
    if (pipe(fds) != 0) {
        snprintf(why, whylen, "%s: cannot start gzip: %s", path, strerror(errno));
        close(fd);
        return BD_ERR_IO;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fd, STDIN_FILENO);
    posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&fa, fds[0]);
    posix_spawn_file_actions_addclose(&fa, fds[1]);
    posix_spawn_file_actions_addclose(&fa, fd);
    char a0[] = "gzip", a1[] = "-dc";
    char *argv[] = {a0, a1, NULL};
    extern char **environ;
    int rc = posix_spawnp(&in->gzip, "gzip", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    close(fd);
    if (rc != 0) {
        close(fds[0]);
        in->gzip = 0;
        snprintf(why, whylen, "%s: cannot start gzip: %s", path, strerror(rc));
        return BD_ERR_IO;
    }
    in->f = fdopen(fds[0], "r");
    if (!in->f) {
        close(fds[0]);
        kill(in->gzip, SIGTERM);
        waitpid(in->gzip, NULL, 0);
        snprintf(why, whylen, "%s: cannot read gzip's output", path);
        return BD_ERR_IO;
    }
    return BD_OK;
}

/* Closes the input; BD_ERR_IO (why set) when gzip did not exit 0 after the whole output
 * was read (a damaged file). */
static bd_result input_close(input *in, bool read_all, const char *path, char *why, size_t whylen)
{
    bd_result r = BD_OK;
    if (in->f && ferror(in->f)) {
        snprintf(why, whylen, "%s: read error", path);
        r = BD_ERR_IO;
    }
    if (in->f)
        fclose(in->f);
    if (in->gzip) {
        if (!read_all)
            kill(in->gzip, SIGTERM);
        int status = 0;
        while (waitpid(in->gzip, &status, 0) < 0 && errno == EINTR)
            ;
        if (read_all && r == BD_OK && (!WIFEXITED(status) || WEXITSTATUS(status) != 0)) {
            snprintf(why, whylen, "%s: decompression failed (gzip exit status %d)", path,
                     WIFEXITED(status) ? WEXITSTATUS(status) : -1);
            r = BD_ERR_IO;
        }
    }
    return r;
}

/* ---- the load ---------------------------------------------------------------------- */

typedef struct {
    bd_store *s;
    const bd_pwned_options *o;
    int mode; /* detected or given */
    unsigned batch, in_batch;
    uint64_t reported;
    bd_import_counts local;
    double start, last_progress;
} loader;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void reject(loader *ld, const char *path, uint64_t line, const char *why)
{
    FILE *report = ld->o->report;
    ld->local.rejected++;
    if (!report)
        return;
    if (ld->reported++ < 100) { /* the path is the operator's; the reason never quotes */
        bd_term_printf(report, "%s:%llu: rejected: %s", path, (unsigned long long)line, why);
        fputc('\n', report);
    } else if (ld->reported == 101) {
        fprintf(report, "further rejected lines are counted but not listed\n");
    }
}

/* One line into the open transaction; a commit every batch. */
static bd_result load_line(loader *ld, const char *path, uint64_t no, bd_slice line, int32_t prefix)
{
    bd_range_mode mode;
    uint8_t hash[20];
    uint32_t count;
    const char *why;
    ld->local.read++;
    if (bd_pwned_parse_line(line, prefix, &mode, hash, &count, &why) != BD_OK) {
        reject(ld, path, no, why);
        return BD_OK;
    }
    if (ld->mode == BD_PWNED_DETECT)
        ld->mode = (int)mode;
    if ((int)mode != ld->mode) {
        reject(ld, path, no,
               ld->mode == BD_RANGE_SHA1 ? "not a SHA-1 hash (this load is SHA-1)"
                                         : "not an NTLM hash (this load is NTLM)");
        return BD_OK;
    }
    bd_result r = bd_store_range_load(ld->s, mode, hash, count);
    if (r != BD_OK)
        return r;
    ld->local.imported++;
    if (++ld->in_batch >= ld->batch) {
        ld->in_batch = 0;
        r = bd_store_commit(ld->s);
        if (r == BD_OK)
            r = bd_store_begin(ld->s);
    }
    if (ld->o->progress && (ld->local.read & 0xFFFF) == 0 && now_s() - ld->last_progress > 0.5) {
        ld->last_progress = now_s();
        double el = ld->last_progress - ld->start;
        fprintf(ld->o->progress, "\r\033[K%s: %llu hashes, %.0f hashes/s", path,
                (unsigned long long)ld->local.imported,
                el > 0 ? (double)ld->local.imported / el : 0.0);
    }
    return BD_OK;
}

/* Loads every line of one file; prefix as for bd_pwned_parse_line. */
static bd_result load_file(loader *ld, const char *path, int32_t prefix, char *why, size_t whylen)
{
    input in;
    bd_result r = input_open(&in, path, ld->o->follow_links, why, whylen);
    if (r != BD_OK)
        return r;
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    uint64_t no = 0;
    while (r == BD_OK && (n = getline(&line, &cap, in.f)) >= 0) {
        no++;
        size_t len = (size_t)n;
        if (len > 0 && line[len - 1] == '\n')
            len--;
        if (len == 0 || (len == 1 && line[0] == '\r'))
            continue;
        r = load_line(ld, path, no, (bd_slice){line, len}, prefix);
        if (r != BD_OK)
            snprintf(why, whylen, "%s:%llu: the store failed: %s", path, (unsigned long long)no,
                     bd_result_str(r));
    }
    free(line);
    bd_result closed = input_close(&in, r == BD_OK, path, why, whylen);
    return r == BD_OK ? closed : r;
}

/* The 5-hex prefix a per-prefix file's name gives ("ABCDE", "ABCDE.txt", either + ".gz"),
 * or -1. */
static int32_t name_prefix(const char *name)
{
    int32_t v = bd_hex_value(name, 5); /* stops at a shorter name's terminator */
    if (v < 0)
        return -1;
    const char *rest = name + 5;
    if (strcmp(rest, "") == 0 || strcmp(rest, ".txt") == 0 || strcmp(rest, ".gz") == 0 ||
        strcmp(rest, ".txt.gz") == 0)
        return v;
    return -1;
}

static int name_order(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Loads a per-prefix directory, its files in name order (the download's order). */
static bd_result load_dir(loader *ld, const char *dir, char *why, size_t whylen)
{
    DIR *d = opendir(dir);
    if (!d) {
        snprintf(why, whylen, "%s: cannot open: %s", dir, strerror(errno));
        return BD_ERR_IO;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    bd_result r = BD_OK;
    struct dirent *e;
    while (r == BD_OK && (e = readdir(d)) != NULL) {
        if (name_prefix(e->d_name) < 0)
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 1024;
            char **grown = realloc(names, cap * sizeof *names);
            if (!grown) {
                r = BD_ERR_NOMEM;
                break;
            }
            names = grown;
        }
        if (!(names[n] = strdup(e->d_name)))
            r = BD_ERR_NOMEM;
        else
            n++;
    }
    closedir(d);
    if (r == BD_OK && n == 0) {
        snprintf(why, whylen, "%s holds no file named by a 5-hex prefix (ABCDE or ABCDE.txt)", dir);
        r = BD_ERR_IO;
    }
    if (r == BD_OK)
        qsort(names, n, sizeof *names, name_order);
    char path[4096];
    for (size_t i = 0; i < n && r == BD_OK; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        struct stat st;
        if (!ld->o->follow_links && lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
            if (ld->o->report) {
                bd_term_printf(ld->o->report,
                               "skipping %s: a symbolic link (--follow-links follows links)", path);
                fputc('\n', ld->o->report);
            }
            ld->local.links_skipped++;
            continue; /* and a file swapped for a link after this is refused at its open */
        }
        r = load_file(ld, path, name_prefix(names[i]), why, whylen);
    }
    if (r == BD_ERR_NOMEM)
        snprintf(why, whylen, "%s: out of memory", dir);
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    return r;
}

bd_result bd_pwned_import(bd_store *s, const char *path, const bd_pwned_options *o,
                          bd_import_counts *c, char *why, size_t whylen)
{
    loader ld = {.s = s, .o = o, .mode = o->mode, .batch = o->batch ? o->batch : DEFAULT_BATCH};
    ld.start = ld.last_progress = now_s();
    struct stat st;
    bool dir = stat(path, &st) == 0 && S_ISDIR(st.st_mode);
    bd_result r = bd_store_begin(s);
    if (r != BD_OK) {
        snprintf(why, whylen, "%s: could not start the import: %s", path, bd_result_str(r));
        return r;
    }
    r = dir ? load_dir(&ld, path, why, whylen) : load_file(&ld, path, -1, why, whylen);
    if (r == BD_OK) {
        r = bd_store_commit(s);
        if (r != BD_OK)
            snprintf(why, whylen, "%s: the store failed to commit: %s", path, bd_result_str(r));
    }
    if (r != BD_OK) { /* batches committed before stay; a re-run changes nothing in them */
        bd_store_rollback(s);
        ld.local.imported -= ld.in_batch;
    } else {
        bd_store_loaded(s, BD_BULK_RANGES, (int64_t)ld.local.imported);
    }
    if (o->progress)
        fputs("\r\033[K", o->progress);
    c->read += ld.local.read;
    c->imported += ld.local.imported;
    c->rejected += ld.local.rejected;
    c->links_skipped += ld.local.links_skipped;
    return r;
}
