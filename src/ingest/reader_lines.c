/* Import file reader, the cutting of the input into lines (BOM, over-long lines skipped) and
 * raw records (CSV records joined across lines, an unclosed quote's lines replayed). */
#include <stdlib.h>
#include <string.h>

#include "ingest/reader_impl.h"

/* Compacts the buffer and reads once. BD_OK when bytes arrived or the end was reached
 * (r->eof); BD_ERR_IO with r->failed_why set otherwise. */
bd_result bd_reader_fill(bd_reader *r)
{
    if (r->start > 0) {
        memmove(r->buf, r->buf + r->start, r->end - r->start);
        r->end -= r->start;
        r->start = 0;
    }
    size_t got;
    bd_result res = bd_source_read(r->src, r->buf + r->end, BUF_CAP - r->end, &got, r->failed_why,
                                   sizeof r->failed_why);
    if (res != BD_OK)
        return res;
    r->end += got;
    r->bytes_read += got;
    r->eof = got == 0;
    return BD_OK;
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
        bd_result res = bd_reader_fill(r);
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
            if (r->line_no == 1 && !r->mid_file && n >= 3 &&
                memcmp(p, "\xEF\xBB\xBF", 3) == 0) {
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
        res = bd_reader_fill(r);
        if (res != BD_OK)
            return res;
    }
}

static bool is_blank(const bd_reader *r, const char *p, size_t n)
{
    if (r->fmt == BD_FMT_CSV || r->fmt == BD_FMT_TSV)
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
bd_result bd_reader_unclosed_quote(bd_reader *r, uint64_t first, const char *how, char *why,
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
            return bd_reader_unclosed_quote(r, first, "is not closed before the end of the input",
                                            why, whylen);
        if (res == BD_ERR_LIMIT) {
            r->pending_long = true; /* reported in its turn, after the lines replayed */
            return bd_reader_unclosed_quote(r, first, "is still open at a line longer than 1 MiB",
                                            why, whylen);
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
            return bd_reader_unclosed_quote(r, first, "is still open after 1 MiB", why, whylen);
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
bd_result bd_reader_read_record(bd_reader *r, const char **rec, size_t *len, uint64_t *first,
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
