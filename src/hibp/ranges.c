/* GET /range/{5 hex}: Pwned Passwords k-anonymity ranges, as api.pwnedpasswords.com answers
 * them: text/plain, one "SUFFIX:COUNT" line per stored hash with that prefix, upper-case
 * hex, CRLF between lines; mode=ntlm for NTLM hashes; "Add-Padding: true" pads the answer
 * with zero-count lines of random suffixes up to a random 800..1,000 lines. The lines are
 * written straight into the worker's response buffer; padding uses a per-thread table.
 *
 * On PostgreSQL the answers come already written from the local snapshot
 * (store/range_snapshot.h) once one is published (one copy), else from the store. Every answer carries the range version it was read at
 * as its ETag (weak: gzip and padding change the bytes, not the answer), and a request whose
 * If-None-Match holds it gets 304 without a read; with --range-auth none the answer is the
 * same for every client, so a shared cache (CDN, proxy) may keep it for RANGE_MAX_AGE. */
#include <microhttpd.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "hibp/ranges.h"
#include "core/hex.h"
#include "http/etag.h"
#include "http/request.h"
#include "http/server_impl.h"
#include "store/range_snapshot.h"

#define PAD_MIN 800
#define PAD_MAX 1000
#define SUFFIX_MAX 35 /* hex digits after the prefix: SHA-1 35, NTLM 27 */
/* How long a cache may serve an answer without asking again (an import shows through a
 * cache within this), and the policy of an answer that needed a key: a client keeps it and
 * revalidates it, no shared cache does. */
#define RANGE_CACHE_OPEN "public, max-age=300"
#define RANGE_CACHE_KEYED "private, no-cache"

static const char HEX[] = "0123456789ABCDEF";

typedef struct {
    bd_buf *out;
    size_t digits; /* of the suffix */
    int64_t lines;
    bd_result r;
} range_writer;

/* One line per hash (store/range_snapshot.h writes it): this is most of a range request's
 * own CPU when the bucket comes from the store (a bucket of 100 hashes is 100 lines). */
static int write_line(void *ctx, const uint8_t *hash, uint32_t count)
{
    range_writer *w = ctx;
    w->r = bd_range_line_append(w->out, w->digits == 35 ? BD_RANGE_SHA1 : BD_RANGE_NTLM, hash,
                                count, w->lines == 0);
    w->lines++;
    return w->r != BD_OK;
}

static _Thread_local char pad_suffix[PAD_MAX][SUFFIX_MAX + 1];

static int suffix_order(const void *a, const void *b)
{
    return strcmp(a, b);
}

/* Appends a line to out after what it holds from `from` on. */
static bd_result put_line(bd_buf *out, size_t from, const char *suffix, size_t n, bool zero)
{
    bd_result r = out->len > from ? bd_buf_append(out, "\r\n", 2) : BD_OK;
    if (r == BD_OK)
        r = bd_buf_append(out, suffix, n);
    return r == BD_OK && zero ? bd_buf_append(out, ":0", 2) : r;
}

/* Merges `want` random zero-count lines into the real lines in out (sorted, as written by
 * write_line), keeping the order. The merged text is built after the real lines in the
 * same buffer, then moved to its start (offsets, not pointers: the buffer may move). A
 * random suffix equal to a real one or to another is dropped rather than repeated, which
 * 140 or 108 random bits make a theoretical case. */
static bd_result pad(range_writer *w, size_t want)
{
    uint8_t rnd[PAD_MAX * 18];
    size_t digits = w->digits;
    randombytes_buf(rnd, want * 18);
    for (size_t i = 0; i < want; i++) {
        for (size_t d = 0; d < digits; d++)
            pad_suffix[i][d] = HEX[d % 2 ? rnd[i * 18 + d / 2] & 0xF : rnd[i * 18 + d / 2] >> 4];
        pad_suffix[i][digits] = '\0';
    }
    qsort(pad_suffix, want, sizeof pad_suffix[0], suffix_order);
    bd_buf *out = w->out;
    size_t real = 0, end = out->len, i = 0;
    const char *last = NULL; /* the last random suffix written */
    bd_result r = BD_OK;
    while (r == BD_OK && (real < end || i < want)) {
        int order = real >= end ? 1
                    : i >= want ? -1
                                : memcmp(out->data + real, pad_suffix[i], digits);
        if (order <= 0) { /* a real line; an equal random suffix is dropped */
            const char *eol = memchr(out->data + real, '\r', end - real);
            size_t stop = eol ? (size_t)(eol - out->data) : end;
            char line[SUFFIX_MAX + 1 + 24];
            memcpy(line, out->data + real, stop - real);
            r = put_line(out, end, line, stop - real, false);
            real = eol ? stop + 2 : end;
            i += order == 0;
        } else if (last && memcmp(last, pad_suffix[i], digits) == 0) {
            i++;
        } else {
            r = put_line(out, end, pad_suffix[i], digits, true);
            last = pad_suffix[i++];
        }
    }
    if (r == BD_OK) {
        memmove(out->data, out->data + end, out->len - end);
        bd_buf_truncate(out, out->len - end);
    }
    return r;
}

/* The prefix's value, or -1 when it is not 5 hex digits. */
static int32_t parse_prefix(bd_slice p)
{
    return p.len == 5 ? bd_hex_value(p.ptr, 5) : -1;
}

static bool wants_padding(struct MHD_Connection *conn)
{
    const char *v = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Add-Padding");
    return v && strcasecmp(v, "true") == 0;
}

void bd_handle_range(struct bd_server *srv, bd_req *rq, bd_slice prefix_text)
{
    static const char *const allowed[] = {"mode", NULL};
    if (!bd_params_check(rq, allowed, NULL))
        return;
    bd_slice m;
    bd_range_mode mode = BD_RANGE_SHA1;
    if (bd_param_get(rq, "mode", &m) && !bd_slice_eq(m, "sha1")) {
        if (!bd_slice_eq(m, "ntlm")) {
            bd_reply_error(rq, 400, "bad_request", "mode must be sha1 or ntlm");
            return;
        }
        mode = BD_RANGE_NTLM;
    }
    int32_t prefix = parse_prefix(prefix_text);
    if (prefix < 0) {
        bd_reply_error(
            rq, 400, "bad_request",
            "the range is the first 5 hexadecimal digits of the hash, like /range/21BD1");
        return;
    }
    bd_reply_begin(rq, 200);
    rq->content_type = "text/plain";
    range_writer w = {.out = rq->body, .digits = mode == BD_RANGE_SHA1 ? 35 : 27};
    uint64_t version = 0;
    bd_result r = BD_OK;
    bd_range_snapshot *snap = bd_range_snapshot_current();
    if (snap) {
        version = bd_range_snapshot_version(snap);
    } else {
        /* the version first: the bucket read after it is at least as new, so a tag never
         * names an answer older than its version */
        r = bd_store_read_begin(rq->store);
        if (r == BD_OK)
            r = bd_store_range_version(rq->store, &version);
    }
    char tag[sizeof rq->etag];
    snprintf(tag, sizeof tag, "W/\"r%llu\"", (unsigned long long)version);
    bool fresh = r == BD_OK &&
                 bd_etag_matches(MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND,
                                                             "If-None-Match"),
                                 tag);
    if (r == BD_OK && !fresh && snap) { /* the answer as written: one copy */
        bd_slice text;
        uint32_t lines;
        r = bd_range_snapshot_get(snap, mode, (uint32_t)prefix, &text, &lines);
        if (r == BD_OK)
            r = bd_buf_append(rq->body, text.ptr, text.len);
        w.lines = lines;
    } else if (r == BD_OK && !fresh) {
        r = bd_store_range_get(rq->store, mode, (uint32_t)prefix, write_line, &w);
    }
    if (snap)
        bd_range_snapshot_release(snap);
    else
        bd_store_read_end(rq->store);
    if (r == BD_OK) {
        memcpy(rq->etag, tag, sizeof tag);
        rq->cache_control = srv->cfg.range_open ? RANGE_CACHE_OPEN : RANGE_CACHE_KEYED;
        rq->vary = "Add-Padding";
    }
    if (r == BD_OK && fresh) {
        rq->status = 304;
        rq->records = 0;
        return;
    }
    if (r == BD_OK)
        r = w.r;
    rq->records = w.lines;
    if (r == BD_OK && wants_padding(rq->conn)) {
        uint32_t target = PAD_MIN + randombytes_uniform(PAD_MAX - PAD_MIN + 1);
        if ((uint32_t)w.lines < target)
            r = pad(&w, target - (size_t)w.lines);
    }
    if (r != BD_OK) {
        rq->content_type = NULL;
        rq->etag[0] = '\0';
        if (r == BD_ERR_LIMIT || r == BD_ERR_NOMEM)
            bd_reply_error(rq, 500, "internal_error",
                           "the response could not be built; quote request id %s to support",
                           rq->request_id);
        else
            bd_reply_store_error(rq, r);
    }
}
