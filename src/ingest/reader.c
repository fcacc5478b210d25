/* Import file reader: read(2) in large chunks into one buffer, lines cut with memchr and capped
 * at BD_READER_LINE_MAX, CSV records joined across lines, .gz decompressed by a gzip child.
 *
 * A CSV quote that never closes properly would join the rest of the file into one bad record.
 * Instead the record's first line is rejected and the lines after it are read again from a
 * replay buffer: they are still in hand, since a record is capped at BD_READER_LINE_MAX. */
#include "ingest/reader.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/buf.h"
#include "ingest/jsonl.h"

#define CHUNK (256u * 1024)
/* A pending line is at most BD_READER_LINE_MAX bytes (longer ones are skipped), so after
 * compaction there is always at least CHUNK bytes of room to read into. */
#define BUF_CAP (BD_READER_LINE_MAX + CHUNK)
#define REPLAY_CAP (BD_READER_LINE_MAX + 1)

struct bd_reader {
    int fd;
    bool own_fd;  /* false for standard input */
    pid_t gzip;   /* the gzip child until it is reaped, else 0 */
    int gzip_err; /* read end of the child's standard error, else -1 */
    bd_format fmt;
    char *buf; /* BUF_CAP bytes; [start, end) not yet consumed */
    size_t start, end;
    size_t searched; /* bytes after start known to hold no '\n' */
    bool eof;
    bool skipping;    /* discarding the rest of an over-long line (already counted) */
    bd_result failed; /* BD_OK, or BD_ERR_IO once reading failed for good */
    char failed_why[256];
    uint64_t line_no; /* physical lines started so far */
    uint64_t bytes_read;
    int64_t bytes_total;
    bd_csv_scan scan; /* quote state of the CSV record being read */
    bd_buf rec;       /* a CSV record joined from several lines */
    /* Lines to read again before the main buffer, each ending in '\n': [replay_start,
     * replay_end) of replay (REPLAY_CAP bytes, allocated on first use). They always are the
     * input from some line up to where the main buffer stands, so they fit: a record that
     * gave them back held at most BD_READER_LINE_MAX bytes of them. */
    char *replay;
    size_t replay_start, replay_end;
    bool pending_long; /* after the replay: report the over-long line being skipped */
    size_t last_cut;   /* bytes the last line took from its source, for unread_line */
    bool last_from_replay;
    bd_csv_header *header;
    bd_fields *fields;
};

static void errno_text(int err, char *out, size_t outlen)
{
    if (strerror_r(err, out, outlen) != 0)
        bd_why(out, outlen, "error %d", err);
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && memcmp(s + n - k, suffix, k) == 0;
}

static bool set_cloexec(int fd)
{
    int flags = fcntl(fd, F_GETFD);
    return flags >= 0 && fcntl(fd, F_SETFD, flags | FD_CLOEXEC) == 0;
}

/* Starts `gzip -dc -- path` with its standard output and error on two pipes. */
static bd_result start_gzip(bd_reader *r, const char *path)
{
    int out_p[2] = {-1, -1}, err_p[2] = {-1, -1};
    char err[128];
    if (pipe(out_p) != 0)
        goto fail;
    if (pipe(err_p) != 0)
        goto fail;
    if (!set_cloexec(out_p[0]) || !set_cloexec(out_p[1]) || !set_cloexec(err_p[0]) ||
        !set_cloexec(err_p[1]))
        goto fail;
    pid_t pid = fork();
    if (pid < 0)
        goto fail;
    if (pid == 0) {
        /* child: only async-signal-safe calls until exec */
        char a0[] = "gzip", a1[] = "-dc", a2[] = "--";
        char *argv[] = {a0, a1, a2, (char *)path, NULL};
        if (dup2(out_p[1], STDOUT_FILENO) < 0 || dup2(err_p[1], STDERR_FILENO) < 0)
            _exit(127);
        signal(SIGPIPE, SIG_DFL);
        execvp("gzip", argv);
        _exit(127);
    }
    close(out_p[1]);
    close(err_p[1]);
    r->fd = out_p[0];
    r->own_fd = true;
    r->gzip = pid;
    r->gzip_err = err_p[0];
    return BD_OK;
fail:
    errno_text(errno, err, sizeof err);
    bd_why(r->failed_why, sizeof r->failed_why, "cannot start gzip for %s: %s", path, err);
    for (int i = 0; i < 2; i++) {
        if (out_p[i] >= 0)
            close(out_p[i]);
        if (err_p[i] >= 0)
            close(err_p[i]);
    }
    return BD_ERR_IO;
}

/* Reaps the gzip child after the end of its output; BD_ERR_IO unless it exited 0. */
static bd_result finish_gzip(bd_reader *r)
{
    int status;
    pid_t w;
    while ((w = waitpid(r->gzip, &status, 0)) < 0 && errno == EINTR)
        ;
    r->gzip = 0;
    if (w < 0) {
        bd_why(r->failed_why, sizeof r->failed_why, "cannot wait for gzip to finish");
        return BD_ERR_IO;
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return BD_OK;
    char msg[160];
    size_t n = 0;
    ssize_t k;
    while (n < sizeof msg - 1 && (k = read(r->gzip_err, msg + n, sizeof msg - 1 - n)) != 0) {
        if (k < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        n += (size_t)k;
    }
    msg[n] = '\0';
    char *text = msg + strspn(msg, " \t\r\n"); /* gzip starts its message with a newline */
    text[strcspn(text, "\r\n")] = '\0';
    if (WIFSIGNALED(status))
        bd_why(r->failed_why, sizeof r->failed_why, "gzip was killed by signal %d",
               WTERMSIG(status));
    else if (WEXITSTATUS(status) == 127)
        bd_why(r->failed_why, sizeof r->failed_why,
               "gzip could not be run: install gzip to import .gz files");
    else
        bd_why(r->failed_why, sizeof r->failed_why,
               "decompression failed (gzip exit status %d): %s", WEXITSTATUS(status),
               n ? msg : "no message");
    return BD_ERR_IO;
}

/* Compacts the buffer and reads once. BD_OK when bytes arrived or the end was reached
 * (r->eof); BD_ERR_IO with r->failed_why set otherwise. */
static bd_result fill(bd_reader *r)
{
    if (r->start > 0) {
        memmove(r->buf, r->buf + r->start, r->end - r->start);
        r->end -= r->start;
        r->start = 0;
    }
    for (;;) {
        ssize_t n = read(r->fd, r->buf + r->end, BUF_CAP - r->end);
        if (n > 0) {
            r->end += (size_t)n;
            r->bytes_read += (uint64_t)n;
            return BD_OK;
        }
        if (n == 0) {
            r->eof = true;
            return r->gzip ? finish_gzip(r) : BD_OK;
        }
        if (errno != EINTR) {
            char err[128];
            errno_text(errno, err, sizeof err);
            bd_why(r->failed_why, sizeof r->failed_why, "read error: %s", err);
            return BD_ERR_IO;
        }
    }
}

/* Discards input up to the end of the over-long line being skipped. BD_OK when done,
 * BD_ERR_NOT_FOUND at the end of input. */
static bd_result skip(bd_reader *r)
{
    while (r->skipping) {
        char *p = r->buf + r->start;
        char *nl = memchr(p, '\n', r->end - r->start);
        if (nl) {
            r->start += (size_t)(nl - p) + 1;
            r->searched = 0;
            r->skipping = false;
            break;
        }
        r->start = r->end = r->searched = 0;
        if (r->eof) {
            r->skipping = false;
            return BD_ERR_NOT_FOUND;
        }
        bd_result res = fill(r);
        if (res != BD_OK)
            return res;
    }
    return BD_OK;
}

/* Cuts the next line from the replay buffer when it holds any. */
static bool replay_line(bd_reader *r, const char **line, size_t *len)
{
    if (r->replay_start == r->replay_end)
        return false;
    char *p = r->replay + r->replay_start;
    char *nl = memchr(p, '\n', r->replay_end - r->replay_start); /* every line has one */
    *line = p;
    *len = (size_t)(nl - p);
    r->last_cut = *len + 1;
    r->last_from_replay = true;
    r->replay_start += r->last_cut;
    r->line_no++;
    return true;
}

/* Gives the line just cut by next_line back to its source, to be cut again. */
static void unread_line(bd_reader *r)
{
    if (r->last_from_replay)
        r->replay_start -= r->last_cut;
    else
        r->start -= r->last_cut;
    r->searched = 0;
    r->line_no--;
}

/* Cuts the next physical line (without its '\n'): from the replay buffer first, then the main
 * buffer. BD_OK with *line and *len set; BD_ERR_LIMIT when the line is longer than
 * BD_READER_LINE_MAX (it is counted and being skipped); BD_ERR_NOT_FOUND at the end;
 * BD_ERR_IO. */
static bd_result next_line(bd_reader *r, const char **line, size_t *len)
{
    if (replay_line(r, line, len))
        return BD_OK;
    if (r->pending_long) {
        r->pending_long = false;
        r->line_no++;
        return BD_ERR_LIMIT;
    }
    bd_result res = skip(r);
    if (res != BD_OK)
        return res;
    r->last_from_replay = false;
    for (;;) {
        char *p = r->buf + r->start;
        size_t avail = r->end - r->start;
        char *nl = memchr(p + r->searched, '\n', avail - r->searched);
        if (nl || (r->eof && avail > 0 && avail <= BD_READER_LINE_MAX)) {
            size_t n = nl ? (size_t)(nl - p) : avail;
            r->last_cut = nl ? n + 1 : n;
            r->start += r->last_cut;
            r->searched = 0;
            r->line_no++;
            if (n > BD_READER_LINE_MAX)
                return BD_ERR_LIMIT;
            if (r->line_no == 1 && n >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0) {
                p += 3;
                n -= 3;
            }
            *line = p;
            *len = n;
            return BD_OK;
        }
        r->searched = avail;
        if (avail > BD_READER_LINE_MAX) {
            r->line_no++;
            r->start = r->end = r->searched = 0;
            r->skipping = true;
            return BD_ERR_LIMIT;
        }
        if (r->eof)
            return BD_ERR_NOT_FOUND;
        res = fill(r);
        if (res != BD_OK)
            return res;
    }
}

static bool is_blank(const bd_reader *r, const char *p, size_t n)
{
    if (r->fmt == BD_FMT_CSV)
        return n == 0 || (n == 1 && p[0] == '\r');
    for (size_t i = 0; i < n; i++) {
        if (p[i] != ' ' && p[i] != '\t' && p[i] != '\r')
            return false;
    }
    return true;
}

static const char too_long[] = "line longer than 1 MiB";

/* Gives up on the CSV record in r->rec, which starts on line first with a quoted cell that
 * does not close properly: the lines after its first are put in front of the replay buffer,
 * to be read again as records of their own. */
static bd_result replay_after_first_line(bd_reader *r, uint64_t first)
{
    const char *nl = memchr(r->rec.data, '\n', r->rec.len);
    size_t tail = nl ? r->rec.len - (size_t)(nl + 1 - r->rec.data) : 0;
    size_t kept = r->replay_end - r->replay_start;
    r->line_no = first;
    if (tail == 0)
        return BD_OK;
    if (!r->replay && !(r->replay = malloc(REPLAY_CAP)))
        return BD_ERR_NOMEM;
    if (tail + 1 + kept > REPLAY_CAP)
        return BD_ERR_LIMIT; /* cannot happen: see the struct */
    memmove(r->replay + tail + 1, r->replay + r->replay_start, kept);
    memcpy(r->replay, nl + 1, tail);
    r->replay[tail] = '\n';
    r->replay_start = 0;
    r->replay_end = tail + 1 + kept;
    return BD_OK;
}

/* Rejects the record in r->rec (from line first) as an unclosed quote, and replays the lines
 * after its first. Returns BD_ERR_INVALID with why set, or the replay's error. */
static bd_result unclosed_quote(bd_reader *r, uint64_t first, const char *how, char *why,
                                size_t whylen)
{
    bd_result res = replay_after_first_line(r, first);
    if (res != BD_OK)
        return res;
    bd_why(why, whylen,
           "unclosed quote: a quoted cell starts on this line and %s; reading resumes at the "
           "next line",
           how);
    return BD_ERR_INVALID;
}

/* Joins the lines of a CSV record whose first line p[0..n) leaves a quoted cell open, into
 * r->rec, until the cell closes. A cell still open at the end of the input, past 1 MiB, or
 * at a line too long to hold is an unclosed quote. */
static bd_result join_record(bd_reader *r, const char *p, size_t n, uint64_t first, char *why,
                             size_t whylen)
{
    bd_buf_reset(&r->rec);
    if (bd_buf_append(&r->rec, p, n) != BD_OK)
        return BD_ERR_NOMEM; /* n <= LINE_MAX == the buffer's cap */
    for (;;) {
        bd_result res = next_line(r, &p, &n);
        if (res == BD_ERR_NOT_FOUND)
            return unclosed_quote(r, first, "is not closed before the end of the input", why,
                                  whylen);
        if (res == BD_ERR_LIMIT) {
            r->pending_long = true; /* reported in its turn, after the lines replayed */
            return unclosed_quote(r, first, "is still open at a line longer than 1 MiB", why,
                                  whylen);
        }
        if (res != BD_OK)
            return res;
        size_t before = r->rec.len;
        res = bd_buf_append_char(&r->rec, '\n');
        if (res == BD_OK)
            res = bd_buf_append(&r->rec, p, n);
        if (res == BD_ERR_LIMIT) {
            r->rec.len = before;
            unread_line(r);
            return unclosed_quote(r, first, "is still open after 1 MiB", why, whylen);
        }
        if (res != BD_OK)
            return res;
        bd_csv_scan_feed(&r->scan, "\n", 1);
        if (bd_csv_scan_feed(&r->scan, p, n))
            return BD_OK;
    }
}

/* Reads the next record's raw text: one line (JSONL, most CSV) or several joined lines (a CSV
 * record with line breaks inside quotes). Sets *first to its first line. BD_OK,
 * BD_ERR_INVALID (why set), BD_ERR_NOT_FOUND, BD_ERR_IO. */
static bd_result read_record(bd_reader *r, const char **rec, size_t *len, uint64_t *first,
                             char *why, size_t whylen)
{
    const char *p;
    size_t n;
    bd_result res;
    do {
        res = next_line(r, &p, &n);
        *first = r->line_no;
        if (res == BD_ERR_LIMIT) {
            bd_why(why, whylen, too_long);
            return BD_ERR_INVALID;
        }
        if (res != BD_OK)
            return res;
    } while (is_blank(r, p, n));
    bd_csv_scan_init(&r->scan);
    if (r->fmt != BD_FMT_CSV || !memchr(p, '"', n) || bd_csv_scan_feed(&r->scan, p, n)) {
        *rec = p;
        *len = n;
        return BD_OK;
    }
    /* A quoted cell goes on past this line: join lines in r->rec until it closes. */
    res = join_record(r, p, n, *first, why, whylen);
    if (res == BD_OK) {
        *rec = r->rec.data;
        *len = r->rec.len;
    }
    return res;
}

bd_result bd_reader_open(const char *path, bd_format fmt, bd_reader **out, char *why, size_t whylen)
{
    bd_result res = BD_ERR_NOMEM;
    char err[128];
    *out = NULL;
    bd_reader *r = calloc(1, sizeof *r);
    if (!r) {
        bd_why(why, whylen, "out of memory");
        return BD_ERR_NOMEM;
    }
    r->fd = -1;
    r->gzip_err = -1;
    r->bytes_total = -1;
    bool stdin_path = strcmp(path, "-") == 0;
    bool gz = !stdin_path && ends_with(path, ".gz");
    if (fmt == BD_FMT_AUTO)
        fmt = ends_with(path, ".csv") || ends_with(path, ".csv.gz") ? BD_FMT_CSV : BD_FMT_JSONL;
    r->fmt = fmt;
    bd_buf_init(&r->rec, BD_READER_LINE_MAX);
    r->buf = malloc(BUF_CAP);
    r->fields = bd_fields_new();
    if (fmt == BD_FMT_CSV)
        r->header = bd_csv_header_new();
    if (!r->buf || !r->fields || (fmt == BD_FMT_CSV && !r->header)) {
        bd_why(why, whylen, "out of memory");
        goto fail;
    }

    if (stdin_path) {
        r->fd = STDIN_FILENO;
    } else {
        r->fd = open(path, O_RDONLY | O_CLOEXEC);
        r->own_fd = r->fd >= 0;
        struct stat st;
        if (r->fd < 0 || fstat(r->fd, &st) != 0) {
            errno_text(errno, err, sizeof err);
            bd_why(why, whylen, "cannot open %s: %s", path, err);
            res = BD_ERR_IO;
            goto fail;
        }
        if (S_ISDIR(st.st_mode)) {
            bd_why(why, whylen, "cannot read %s: it is a directory", path);
            res = BD_ERR_IO;
            goto fail;
        }
        if (gz) {
            /* opened only to report a missing file clearly; gzip reads it by name */
            close(r->fd);
            r->fd = -1;
            r->own_fd = false;
            res = start_gzip(r, path);
            if (res != BD_OK) {
                bd_why(why, whylen, "%s", r->failed_why);
                goto fail;
            }
        } else if (S_ISREG(st.st_mode)) {
            r->bytes_total = (int64_t)st.st_size;
        }
    }

    if (fmt == BD_FMT_CSV) {
        const char *p;
        size_t n;
        uint64_t first;
        res = read_record(r, &p, &n, &first, why, whylen);
        if (res == BD_ERR_NOT_FOUND) {
            bd_why(why, whylen, "%s is empty: a CSV file must start with a header row", path);
            res = BD_ERR_IO;
        } else if (res == BD_ERR_IO) {
            bd_why(why, whylen, "%s", r->failed_why);
        } else if (res == BD_ERR_INVALID) {
            /* why holds the reason */
        } else if (res == BD_OK) {
            res = bd_csv_parse_header(p, n, r->header, why, whylen);
        }
        if (res != BD_OK)
            goto fail;
    }
    *out = r;
    return BD_OK;
fail:
    bd_reader_close(r);
    return res;
}

bd_result bd_reader_next(bd_reader *r, const bd_fields **rec, uint64_t *line, char *why,
                         size_t whylen)
{
    *rec = NULL;
    if (r->failed != BD_OK) {
        bd_why(why, whylen, "%s", r->failed_why);
        return r->failed;
    }
    const char *p;
    size_t n;
    uint64_t first = r->line_no;
    bd_result res = read_record(r, &p, &n, &first, why, whylen);
    *line = first;
    if (res == BD_ERR_IO) {
        r->failed = BD_ERR_IO;
        bd_why(why, whylen, "%s", r->failed_why);
    }
    if (res != BD_OK)
        return res;
    if (r->fmt == BD_FMT_CSV) {
        res = bd_csv_parse_row(r->header, p, n, r->fields, why, whylen);
        /* A record over several lines whose quote closes with text after it: the quote on
         * its first line was most likely stray, and the lines after it records of their own. */
        if (res == BD_ERR_INVALID && r->line_no > first && !bd_csv_record_well_formed(p, n))
            res = unclosed_quote(r, first, "closes on a later line with text after the quote", why,
                                 whylen);
    } else {
        res = bd_jsonl_parse(p, n, r->fields, why, whylen);
    }
    if (res == BD_ERR_LIMIT)
        res = BD_ERR_INVALID; /* why says the record is too large */
    if (res == BD_OK)
        *rec = r->fields;
    return res;
}

uint64_t bd_reader_bytes_read(const bd_reader *r)
{
    return r->bytes_read;
}

int64_t bd_reader_bytes_total(const bd_reader *r)
{
    return r->bytes_total;
}

bd_format bd_reader_format(const bd_reader *r)
{
    return r->fmt;
}

const bd_csv_header *bd_reader_csv_header(const bd_reader *r)
{
    return r->header;
}

void bd_reader_close(bd_reader *r)
{
    if (!r)
        return;
    if (r->own_fd && r->fd >= 0)
        close(r->fd);
    if (r->gzip > 0) {
        /* stopped early: gzip may still be writing into the pipe just closed */
        kill(r->gzip, SIGTERM);
        while (waitpid(r->gzip, NULL, 0) < 0 && errno == EINTR)
            ;
    }
    if (r->gzip_err >= 0)
        close(r->gzip_err);
    bd_buf_free(&r->rec);
    free(r->replay);
    bd_csv_header_free(r->header);
    bd_fields_free(r->fields);
    free(r->buf);
    free(r);
}
