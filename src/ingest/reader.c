/* Import file reader: a source (source.h: plain or decompressed) read in large chunks into one
 * buffer, lines cut with memchr and capped at BD_READER_LINE_MAX, CSV records joined across
 * lines (those two in reader_lines.c), each record parsed by its format (JSONL, CSV/TSV, combo,
 * stealer) and carried through a column plan (colmap.h) when there is one.
 *
 * A CSV quote that never closes properly would join the rest of the file into one bad record.
 * Instead the record's first line is rejected and the lines after it are read again from a
 * replay buffer: they are still in hand, since a record is capped at BD_READER_LINE_MAX. */
#include "ingest/reader.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/json.h"
#include "core/utf8.h"
#include "ingest/combo.h"
#include "ingest/jsonl.h"
#include "ingest/reader_impl.h"
#include "ingest/source.h"

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

/* The format a name implies: .csv and .tsv (before a compression extension) or JSON Lines. */
static bd_format format_of_name(const char *path)
{
    static const char *const zext[] = {"", ".gz", ".zst", ".xz", ".bz2"};
    char tail[16];
    for (size_t i = 0; i < sizeof zext / sizeof zext[0]; i++) {
        snprintf(tail, sizeof tail, ".csv%s", zext[i]);
        if (ends_with(path, tail))
            return BD_FMT_CSV;
        snprintf(tail, sizeof tail, ".tsv%s", zext[i]);
        if (ends_with(path, tail))
            return BD_FMT_TSV;
    }
    return BD_FMT_JSONL;
}

/* Opens the file (or takes standard input) and the decoder in front of it. */
static bd_result open_input(bd_reader *r, const char *path, const bd_reader_options *o, char *why,
                            size_t whylen)
{
    char err[128];
    int fd = STDIN_FILENO;
    bool own = strcmp(path, "-") != 0;
    if (own) {
        struct stat st;
        fd = bd_source_open_path(path, o->follow_links, why, whylen);
        if (fd < 0)
            return BD_ERR_IO;
        if (fstat(fd, &st) != 0) {
            errno_text(errno, err, sizeof err);
            bd_why(why, whylen, "cannot open %s: %s", path, err);
            close(fd);
            return BD_ERR_IO;
        }
        if (S_ISDIR(st.st_mode)) {
            bd_why(why, whylen, "cannot read %s: it is a directory", path);
            close(fd);
            return BD_ERR_IO;
        }
        if (S_ISREG(st.st_mode))
            r->bytes_total = (int64_t)st.st_size;
    }
    bd_result res = bd_source_open_limited(fd, own, o->memory_limit, &r->src, why, whylen);
    if (res != BD_OK && own)
        close(fd);
    return res;
}

/* Reads the header row of a CSV/TSV file (or takes --columns) and plans its columns. */
static bd_result open_table(bd_reader *r, const char *path, const bd_reader_options *o, char *why,
                            size_t whylen)
{
    bd_result res;
    if (o->columns) { /* a headerless file: the names are a comma-separated list */
        res = bd_csv_parse_header(o->columns, strlen(o->columns), r->header, why, whylen);
        if (res != BD_OK) {
            char inner[400];
            bd_why(inner, sizeof inner, "%s", why);
            bd_why(why, whylen, "--columns: %s", inner);
            return res;
        }
    }
    bd_csv_header_set_dialect(r->header, r->fmt == BD_FMT_TSV ? '\t' : ',', r->fmt != BD_FMT_TSV);
    if (!o->columns) {
        const char *p;
        size_t n;
        uint64_t first;
        res = bd_reader_read_record(r, &p, &n, &first, why, whylen);
        if (res == BD_ERR_NOT_FOUND) {
            bd_why(why, whylen,
                   "%s is empty: a %s file must start with a header row (or give "
                   "--columns)",
                   path, r->fmt == BD_FMT_TSV ? "TSV" : "CSV");
            return BD_ERR_IO;
        }
        if (res == BD_ERR_IO)
            bd_why(why, whylen, "%s", r->failed_why);
        if (res == BD_OK)
            res = bd_csv_parse_header(p, n, r->header, why, whylen);
        if (res != BD_OK)
            return res;
    }
    if (!o->map && !o->drop_unmapped)
        return BD_OK;
    r->map = o->map;
    r->planned = true;
    r->mapped = bd_fields_new();
    if (!r->mapped)
        return BD_ERR_NOMEM;
    static const char *const none[] = {NULL};
    return bd_colmap_plan(o->map, r->header, o->fields ? o->fields : none, o->drop_unmapped,
                          r->plan, why, whylen);
}

/* Picks a combo list's separator from the lines in the first buffer's worth of input. */
static bd_result detect_separator(bd_reader *r, const char *path, char *why, size_t whylen)
{
    while (!r->eof && r->end < CHUNK) {
        if (bd_reader_fill(r) != BD_OK) {
            bd_why(why, whylen, "%s", r->failed_why);
            return BD_ERR_IO;
        }
    }
    size_t n = r->end;
    if (!r->eof) /* whole lines only */
        while (n && r->buf[n - 1] != '\n')
            n--;
    r->sep = bd_combo_detect_separator(r->buf, n);
    if (r->sep || r->end == 0) {
        r->sep = r->sep ? r->sep : ':';
        return BD_OK;
    }
    bd_why(why, whylen,
           "cannot tell the separator of %s: no line holds ':', ';', '|' or a tab "
           "(give --separator)",
           path);
    return BD_ERR_INVALID;
}

bd_result bd_reader_open_with(const char *path, const bd_reader_options *o, bd_reader **out,
                              char *why, size_t whylen)
{
    bd_result res = BD_ERR_NOMEM;
    *out = NULL;
    bd_reader *r = calloc(1, sizeof *r);
    if (!r) {
        bd_why(why, whylen, "out of memory");
        return BD_ERR_NOMEM;
    }
    r->bytes_total = -1;
    r->fmt = o->format == BD_FMT_AUTO ? format_of_name(path) : o->format;
    r->utf8 = o->utf8;
    r->sep = o->separator;
    bool table = r->fmt == BD_FMT_CSV || r->fmt == BD_FMT_TSV;
    bd_buf_init(&r->rec, BD_READER_LINE_MAX);
    bd_buf_init(&r->scratch, BD_FIELDS_BYTES_MAX);
    bd_buf_init(&r->fix, 3 * BD_READER_LINE_MAX + 8); /* each stray byte becomes 3 */
    r->buf = malloc(BUF_CAP);
    r->fields = bd_fields_new();
    if (table)
        r->header = bd_csv_header_new();
    if (!r->buf || !r->fields || (table && !r->header)) {
        bd_why(why, whylen, "out of memory");
        goto fail;
    }
    if ((o->map || o->columns || o->drop_unmapped) && !table) {
        bd_why(why, whylen, "--map, --columns and --drop-unmapped are for CSV and TSV files");
        res = BD_ERR_INVALID;
        goto fail;
    }
    res = open_input(r, path, o, why, whylen);
    if (res == BD_OK && table)
        res = open_table(r, path, o, why, whylen);
    if (res == BD_OK && r->fmt == BD_FMT_COMBO && !r->sep)
        res = detect_separator(r, path, why, whylen);
    if (res != BD_OK)
        goto fail;
    *out = r;
    return BD_OK;
fail:
    bd_reader_close(r);
    return res;
}

bd_result bd_reader_open(const char *path, bd_format fmt, bd_reader **out, char *why, size_t whylen)
{
    bd_reader_options o = {.format = fmt};
    return bd_reader_open_with(path, &o, out, why, whylen);
}

/* Lower-cases ASCII of s into out (cap bytes); the length, at most cap. */
static size_t lower(bd_slice s, char *out, size_t cap)
{
    size_t n = s.len < cap ? s.len : cap;
    for (size_t i = 0; i < n; i++) {
        char c = s.ptr[i];
        out[i] = c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
    }
    return n;
}

/* A combo or stealer line into r->fields: the login (email or user_name), the password,
 * and for a stealer line other_attributes {"site": host}. */
static bd_result parse_login_line(bd_reader *r, const char *p, size_t n, char *why, size_t whylen)
{
    bd_slice line = {p, n}, site = {0}, login, password;
    const char *bad = r->fmt == BD_FMT_COMBO ? bd_combo_split(line, r->sep, &login, &password)
                                             : bd_stealer_split(line, &site, &login, &password);
    bd_fields_clear(r->fields);
    if (bad) {
        bd_why(why, whylen, "%s", bad);
        return BD_ERR_INVALID;
    }
    const char *field = bd_combo_login_field(login);
    bd_result res = bd_fields_add(r->fields, field, strlen(field), login.ptr, login.len);
    if (res == BD_OK)
        res = bd_fields_add(r->fields, "password", 8, password.ptr, password.len);
    if (res == BD_OK && site.ptr) {
        char host[256];
        size_t hn = lower(site, host, sizeof host);
        if (hn != site.len) {
            bd_why(why, whylen, "the URL's host is longer than %zu bytes", sizeof host);
            return BD_ERR_INVALID;
        }
        bd_json w;
        bd_buf_reset(&r->scratch);
        bd_json_init(&w, &r->scratch);
        bd_json_object_begin(&w);
        BD_JSON_MEMBER_STRING(&w, "site", ((bd_slice){host, hn}), false);
        bd_json_object_end(&w);
        res = bd_json_result(&w);
        if (res == BD_OK)
            res = bd_fields_add(r->fields, "other_attributes", 16, r->scratch.data, r->scratch.len);
    }
    if (res != BD_OK)
        bd_why(why, whylen, "the record is too large");
    return res;
}

/* --lossy off: a value that is not UTF-8 rejects the row, naming its field. A name that is
 * not letters and underscores (a headerless file's first row standing as the
 * header: it may hold a password) is given by its number instead, as check.c does. */
static bd_result check_utf8(const bd_fields *f, char *why, size_t whylen)
{
    static const char name_chars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_";
    for (size_t i = 0; i < bd_fields_count(f); i++) {
        bd_slice v;
        if (!bd_fields_value(f, i, &v) || bd_utf8_valid(v))
            continue;
        const char *name = bd_fields_name(f, i);
        if (name[strspn(name, name_chars)] == '\0' && strlen(name) <= 32)
            bd_why(why, whylen, "%s is not valid UTF-8 (--lossy stores it with U+FFFD)", name);
        else
            bd_why(why, whylen,
                   "field number %zu is not valid UTF-8 (--lossy stores it with U+FFFD)", i + 1);
        return BD_ERR_INVALID;
    }
    return BD_OK;
}

/* Parses the record text p[0..n) from line first into r->fields. */
static bd_result parse_record(bd_reader *r, const char *p, size_t n, uint64_t first, char *why,
                              size_t whylen)
{
    switch (r->fmt) {
    case BD_FMT_CSV:
    case BD_FMT_TSV: {
        bd_result res = bd_csv_parse_row(r->header, p, n, r->fields, why, whylen);
        /* A record over several lines whose quote closes with text after it: the quote on
         * its first line was most likely stray, and the lines after it records of their own. */
        if (res == BD_ERR_INVALID && r->line_no > first && !bd_csv_record_well_formed(p, n))
            res = bd_reader_unclosed_quote(
                r, first, "closes on a later line with text after the quote", why, whylen);
        return res;
    }
    case BD_FMT_COMBO:
    case BD_FMT_STEALER:
        return parse_login_line(r, p, n, why, whylen);
    default:
        return bd_jsonl_parse(p, n, r->fields, why, whylen);
    }
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
    bd_result res = bd_reader_read_record(r, &p, &n, &first, why, whylen);
    *line = first;
    if (res == BD_ERR_IO) {
        r->failed = BD_ERR_IO;
        bd_why(why, whylen, "%s", r->failed_why);
    }
    if (res != BD_OK)
        return res;
    if (r->utf8 == BD_UTF8_LOSSY && !bd_utf8_valid((bd_slice){p, n})) {
        bd_buf_reset(&r->fix);
        if (bd_utf8_append_repaired(&r->fix, (bd_slice){p, n}) != BD_OK) {
            bd_why(why, whylen, "out of memory");
            return BD_ERR_NOMEM;
        }
        p = r->fix.data;
        n = r->fix.len;
    }
    res = parse_record(r, p, n, first, why, whylen);
    if (res == BD_OK && r->utf8 == BD_UTF8_STRICT && r->fmt != BD_FMT_JSONL)
        res = check_utf8(r->fields, why, whylen);
    const bd_fields *f = r->fields;
    if (res == BD_OK && r->planned) {
        res = bd_colmap_apply(r->map, r->header, r->plan, r->fields, r->mapped, &r->scratch);
        f = r->mapped;
        if (res != BD_OK)
            bd_why(why, whylen, "the record is too large");
    }
    if (res == BD_ERR_LIMIT)
        res = BD_ERR_INVALID; /* why says the record is too large */
    if (res == BD_OK)
        *rec = f;
    return res;
}

bool bd_reader_can_range(const bd_reader *r)
{
    return r->fmt == BD_FMT_JSONL && r->src && bd_source_kind_of(r->src) == BD_SRC_PLAIN &&
           r->bytes_total >= 0 && r->line_no == 0 && r->failed == BD_OK;
}

bd_result bd_reader_line_bounds(bd_reader *r, uint64_t step, uint64_t **bounds, size_t *n)
{
    if (!bd_reader_can_range(r))
        return BD_ERR_INVALID;
    return bd_source_line_bounds(r->src, (uint64_t)r->bytes_total, step, bounds, n);
}

bool bd_reader_set_range(bd_reader *r, uint64_t start, uint64_t end)
{
    if (r->fmt != BD_FMT_JSONL || r->failed != BD_OK || !bd_source_set_range(r->src, start, end))
        return false;
    r->start = r->end = r->searched = 0;
    r->eof = false;
    r->skipping = false;
    r->pending_long = false;
    r->replay_start = r->replay_end = 0;
    r->line_no = 0;
    r->mid_file = start > 0;
    return true;
}

uint64_t bd_reader_bytes_read(const bd_reader *r)
{
    return r->src ? bd_source_raw_bytes(r->src) : 0;
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
    bd_source_close(r->src);
    bd_buf_free(&r->rec);
    bd_buf_free(&r->scratch);
    bd_buf_free(&r->fix);
    bd_fields_free(r->mapped);
    free(r->replay);
    bd_csv_header_free(r->header);
    bd_fields_free(r->fields);
    free(r->buf);
    free(r);
}
