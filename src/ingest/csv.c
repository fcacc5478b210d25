/* CSV records: a quote-state scanner for record boundaries and a cell splitter shared by the
 * header and row parsers. */
#include "ingest/csv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"

enum { AT_CELL_START, IN_UNQUOTED, IN_QUOTED, QUOTE_IN_QUOTED };

void bd_csv_scan_init(bd_csv_scan *s)
{
    s->state = AT_CELL_START;
}

bool bd_csv_scan_feed(bd_csv_scan *s, const char *p, size_t n)
{
    int st = s->state;
    const char *end = p + n;
    while (p < end) {
        if (st == IN_QUOTED) {
            const char *q = memchr(p, '"', (size_t)(end - p));
            if (!q)
                break;
            st = QUOTE_IN_QUOTED;
            p = q + 1;
            continue;
        }
        char c = *p++;
        if (c == ',')
            st = AT_CELL_START;
        else if (c == '"' && st != IN_UNQUOTED)
            st = IN_QUOTED; /* opens a cell, or is the second of a "" pair */
        else
            st = IN_UNQUOTED; /* after a closing quote: malformed, the parser says so */
    }
    s->state = st;
    return st != IN_QUOTED;
}

bool bd_csv_record_complete(const char *rec, size_t len)
{
    bd_csv_scan s;
    bd_csv_scan_init(&s);
    return bd_csv_scan_feed(&s, rec, len);
}

/* One cell as it appears in the record. For a quoted cell, text is what lies between the
 * quotes, with any "" pairs still doubled (escaped says whether there are any). */
typedef struct {
    const char *text;
    size_t len;
    bool quoted;
    bool escaped;
} cell;

typedef struct {
    const char *p;
    size_t n;
    size_t i;
    bool done;
    char sep;    /* ',' for CSV, '\t' for TSV */
    bool quotes; /* false: a '"' is an ordinary character (TSV) */
} cursor;

static void cursor_init(cursor *c, const char *rec, size_t len)
{
    c->sep = ',';
    c->quotes = true;
    if (len && rec[len - 1] == '\r')
        len--;
    c->p = rec;
    c->n = len;
    c->i = 0;
    c->done = false;
}

/* Reads the next cell: 1 when *out is set, 0 after the last cell, -1 when the record is
 * malformed (*bad set to the reason). */
static int next_cell(cursor *c, cell *out, const char **bad)
{
    if (c->done)
        return 0;
    const char *p = c->p;
    size_t n = c->n, i = c->i;
    if (c->quotes && i < n && p[i] == '"') {
        size_t j = i + 1;
        out->escaped = false;
        for (;;) {
            const char *q = j < n ? memchr(p + j, '"', n - j) : NULL;
            if (!q) {
                *bad = "a quoted cell is not closed";
                return -1;
            }
            j = (size_t)(q - p);
            if (j + 1 < n && p[j + 1] == '"') {
                out->escaped = true;
                j += 2;
                continue;
            }
            break;
        }
        out->text = p + i + 1;
        out->len = j - i - 1;
        out->quoted = true;
        i = j + 1;
        if (i < n && p[i] != c->sep) {
            *bad = "a closing quote must be followed by a comma or the end of the record";
            return -1;
        }
    } else {
        const char *comma = i < n ? memchr(p + i, c->sep, n - i) : NULL;
        size_t e = comma ? (size_t)(comma - p) : n;
        out->text = p + i;
        out->len = e - i;
        out->quoted = false;
        out->escaped = false;
        i = e;
    }
    if (i < n)
        c->i = i + 1; /* past the comma: another cell follows, perhaps empty */
    else
        c->done = true;
    return 1;
}

bool bd_csv_record_well_formed(const char *rec, size_t len)
{
    cursor c;
    cursor_init(&c, rec, len);
    cell cl;
    const char *bad = NULL;
    int got;
    while ((got = next_cell(&c, &cl, &bad)) == 1)
        ;
    return got == 0;
}

/* Calls add(ctx, piece, len) for the unescaped text of a cell, in pieces. */
static bd_result unescape(const cell *cl, bd_result (*add)(void *, const char *, size_t), void *ctx)
{
    if (!cl->escaped)
        return add(ctx, cl->text, cl->len);
    const char *p = cl->text, *end = cl->text + cl->len;
    while (p < end) {
        const char *q = memchr(p, '"', (size_t)(end - p));
        size_t piece = q ? (size_t)(q - p) + 1 : (size_t)(end - p); /* keep one quote */
        bd_result r = add(ctx, p, piece);
        if (r != BD_OK)
            return r;
        p += piece + (q ? 1 : 0); /* skip the other */
    }
    return BD_OK;
}

struct bd_csv_header {
    char sep;
    bool quotes;
    bd_buf names; /* each name followed by a NUL byte */
    size_t n;
    size_t off[BD_FIELDS_MAX];
};

bd_csv_header *bd_csv_header_new(void)
{
    bd_csv_header *h = malloc(sizeof *h);
    if (!h)
        return NULL;
    bd_buf_init(&h->names, BD_FIELDS_BYTES_MAX);
    h->n = 0;
    h->sep = ',';
    h->quotes = true;
    return h;
}

void bd_csv_header_set_dialect(bd_csv_header *h, char sep, bool quotes)
{
    h->sep = sep;
    h->quotes = quotes;
}

void bd_csv_header_free(bd_csv_header *h)
{
    if (!h)
        return;
    bd_buf_free(&h->names);
    free(h);
}

size_t bd_csv_header_count(const bd_csv_header *h)
{
    return h->n;
}

const char *bd_csv_header_name(const bd_csv_header *h, size_t i)
{
    return h->names.data + h->off[i];
}

static bd_result add_to_buf(void *b, const char *p, size_t n)
{
    return bd_buf_append(b, p, n);
}

bd_result bd_csv_parse_header(const char *rec, size_t len, bd_csv_header *h, char *why,
                              size_t whylen)
{
    const char *kind = h->quotes ? "CSV" : "TSV";
    bd_result r = BD_OK;
    bd_buf_reset(&h->names);
    h->n = 0;
    if (len >= 3 && memcmp(rec, "\xEF\xBB\xBF", 3) == 0) {
        rec += 3;
        len -= 3;
    }
    cursor c;
    cursor_init(&c, rec, len);
    c.sep = h->sep;
    c.quotes = h->quotes;
    cell cl;
    const char *bad = NULL;
    int got;
    while ((got = next_cell(&c, &cl, &bad)) == 1) {
        size_t col = h->n + 1;
        if (h->n == BD_FIELDS_MAX) {
            bd_why(why, whylen, "the header has more than %d columns", BD_FIELDS_MAX);
            r = BD_ERR_INVALID;
            goto fail;
        }
        size_t start = h->names.len;
        r = unescape(&cl, add_to_buf, &h->names);
        if (r == BD_OK)
            r = bd_buf_append_char(&h->names, '\0');
        if (r != BD_OK) {
            bd_why(why, whylen, "the header is too large");
            goto fail;
        }
        const char *name = h->names.data + start;
        size_t name_len = h->names.len - 1 - start;
        if (name_len == 0) {
            bd_why(why, whylen, "column %zu of the header has no name", col);
            r = BD_ERR_INVALID;
            goto fail;
        }
        if (memchr(name, '\0', name_len)) {
            bd_why(why, whylen, "column %zu of the header has a NUL byte in its name", col);
            r = BD_ERR_INVALID;
            goto fail;
        }
        for (size_t k = 0; k < h->n; k++) {
            if (strcmp(h->names.data + h->off[k], name) == 0) {
                /* by position only: a headerless file's first row stands as its header,
                 * and a cell repeated there may well be a password */
                bd_why(why, whylen, "columns %zu and %zu of the header have the same name", k + 1,
                       col);
                r = BD_ERR_INVALID;
                goto fail;
            }
        }
        h->off[h->n++] = start;
    }
    if (got < 0) {
        bd_why(why, whylen, "the header is not valid %s: %s", kind, bad);
        r = BD_ERR_INVALID;
        goto fail;
    }
    return BD_OK;
fail:
    bd_buf_reset(&h->names);
    h->n = 0;
    return r;
}

static bd_result add_to_fields(void *f, const char *p, size_t n)
{
    return bd_fields_append(f, p, n);
}

bd_result bd_csv_parse_row(const bd_csv_header *h, const char *rec, size_t len, bd_fields *out,
                           char *why, size_t whylen)
{
    bd_result r = BD_OK;
    bd_fields_clear(out);
    cursor c;
    cursor_init(&c, rec, len);
    c.sep = h->sep;
    c.quotes = h->quotes;
    cell cl;
    const char *bad = NULL;
    size_t cells = 0;
    int got;
    while ((got = next_cell(&c, &cl, &bad)) == 1) {
        if (cells++ >= h->n)
            continue; /* only counted, for the message below */
        const char *name = bd_csv_header_name(h, cells - 1);
        if (!cl.quoted && cl.len == 0) {
            r = bd_fields_add(out, name, strlen(name), NULL, 0);
        } else {
            r = bd_fields_add(out, name, strlen(name), "", 0);
            if (r == BD_OK)
                r = unescape(&cl, add_to_fields, out);
        }
        if (r != BD_OK) {
            bd_why(why, whylen,
                   r == BD_ERR_NOMEM ? "out of memory while reading the record"
                                     : "the record is too large");
            goto fail;
        }
    }
    if (got < 0) {
        bd_why(why, whylen, "the record is not valid CSV: %s", bad);
        r = BD_ERR_INVALID;
        goto fail;
    }
    if (cells != h->n) {
        bd_why(why, whylen, "the record has %zu cells but the header has %zu columns", cells, h->n);
        r = BD_ERR_INVALID;
        goto fail;
    }
    return BD_OK;
fail:
    bd_fields_clear(out);
    return r;
}
