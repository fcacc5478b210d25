/* A request's reply onto the wire: the revalidation (ETag, If-None-Match) of the replies
 * that allow it, gzip when the client accepts it, and the headers every reply carries. */
#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http/console.h"
#include "http/etag.h"
#include "http/gzip.h"
#include "http/reply_cache.h"
#include "http/routes.h"
#include "http/server_impl.h"

/* Whether the route's 200 carries an ETag and answers If-None-Match with 304. */
static bool revalidated(const bd_route_row *route)
{
    return route && (route->flags & BD_ROUTE_ETAG);
}

static void release_cached(void *cls)
{
    bd_cached_reply_unref(cls);
}

/* libmicrohttpd's side of a bd_stream. */
static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    bd_stream *st = cls;
    int64_t n = st->read(st->ctx, buf, max);
    return n > 0 ? (ssize_t)n : n == 0 ? MHD_CONTENT_READER_END_OF_STREAM
                                       : MHD_CONTENT_READER_END_WITH_ERROR;
}

static void stream_free(void *cls)
{
    bd_stream *st = cls;
    st->free(st->ctx);
    free(st);
}

/* The response of a streamed reply (NULL when it cannot be made); the stream is the
 * response's from here on, or freed. */
static struct MHD_Response *streamed(bd_req *rq)
{
    bd_stream *st = malloc(sizeof *st);
    struct MHD_Response *resp =
        st ? MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 64 * 1024, stream_read, st,
                                               stream_free)
           : NULL;
    if (st && !resp)
        free(st);
    if (!resp)
        rq->stream.free(rq->stream.ctx);
    else
        *st = rq->stream;
    rq->stream.read = NULL;
    return resp;
}

enum MHD_Result bd_send_reply(const bd_server *srv, struct MHD_Connection *conn, bd_req *rq)
{
    if (rq->stream.read && rq->status != 200) { /* replaced by an error: never sent */
        rq->stream.free(rq->stream.ctx);
        rq->stream.read = NULL;
    }
    const bd_cached_reply *cached = rq->status == 200 ? rq->cached : NULL;
    bd_slice out = cached ? cached->body : (bd_slice){rq->body->data, rq->body->len};
    char etag[BD_ETAG_LEN + 1];
    bool tagged = rq->status == 200 && revalidated(rq->route);
    if (tagged) {
        if (cached)
            memcpy(etag, cached->etag, sizeof etag);
        else
            bd_etag_of(out, etag);
        if (bd_etag_matches(MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "If-None-Match"),
                            etag)) {
            rq->status = 304;
            out.len = 0;
        }
    }
    bool gzipped = false;
    bd_worker *w = rq->worker;
    bool gzip_ok =
        !rq->stream.read && out.len > BD_GZIP_MIN && rq->status != 204 &&
        bd_gzip_accepted(MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Accept-Encoding"));
    if (gzip_ok && cached) { /* compressed once, when it was kept */
        if (cached->gz.len) {
            out = cached->gz;
            gzipped = true;
        }
    } else if (gzip_ok && w && w->gzip && bd_gzip_compress(w->gzip, out, &w->gzipped) == BD_OK) {
        out = (bd_slice){w->gzipped.data, w->gzipped.len};
        gzipped = true;
    }
    struct MHD_Response *resp;
    if (rq->stream.read) {
        resp = streamed(rq);
    } else if (cached && out.len) { /* the kept bytes themselves, held until they are sent */
        bd_cached_reply_ref(cached);
        resp = MHD_create_response_from_buffer_with_free_callback_cls(
            out.len, (void *)out.ptr, release_cached, (void *)cached);
        if (!resp)
            bd_cached_reply_unref(cached);
    } else {
        resp = MHD_create_response_from_buffer(out.len, (void *)out.ptr, MHD_RESPMEM_MUST_COPY);
    }
    if (!resp)
        return MHD_NO;
    if (gzipped)
        MHD_add_response_header(resp, "Content-Encoding", "gzip");
    if (rq->status != 204 && rq->status != 304) /* a preflight's answer has no body at all */
        MHD_add_response_header(resp, "Content-Type",
                                rq->content_type ? rq->content_type
                                                 : "application/json; charset=utf-8");
    if (bd_cors_enabled(&srv->cors))
        bd_cors_add_headers(&srv->cors, resp, rq->cors_allow,
                            rq->cors_preflight ? bd_routes_preflight_methods() : NULL);
    /* any reply over BD_GZIP_MIN may come either way: a cache must key on the header, in
     * one Vary with CORS's Origin (two header lines confuse some clients) */
    bool negotiated = rq->route && (rq->route->flags & BD_ROUTE_CSV);
    bool origin = MHD_get_response_header(resp, "Vary") != NULL;
    if (origin)
        MHD_del_response_header(resp, "Vary", "Origin");
    if (!origin && !negotiated && !rq->vary) { /* most replies: nothing to print */
        MHD_add_response_header(resp, "Vary", "Accept-Encoding");
    } else {
        char vary[128];
        snprintf(vary, sizeof vary, "%s%sAccept-Encoding%s%s", origin ? "Origin, " : "",
                 negotiated ? "Accept, " : "", rq->vary ? ", " : "", rq->vary ? rq->vary : "");
        MHD_add_response_header(resp, "Vary", vary);
    }
    /* what a client may revalidate it may keep, but must ask about before each use, unless
     * the handler's own tag came with a policy of its own */
    bool own_tag = !tagged && rq->etag[0] && (rq->status == 200 || rq->status == 304);
    MHD_add_response_header(resp, "Cache-Control",
                            own_tag && rq->cache_control ? rq->cache_control
                            : tagged || own_tag          ? "private, no-cache"
                                                         : "no-store");
    if (tagged || own_tag)
        MHD_add_response_header(resp, "ETag", tagged ? etag : rq->etag);
    /* Breach fields may hold markup or javascript: URLs from imported data. */
    MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
    if (rq->route && bd_console_label(rq->route->label)) { /* the console (http/console.h) */
        MHD_add_response_header(resp, "Content-Security-Policy",
                                "default-src 'self'; frame-ancestors 'none'; base-uri 'none'; "
                                "form-action 'self'");
        MHD_add_response_header(resp, "Referrer-Policy", "no-referrer");
        MHD_add_response_header(resp, "X-Frame-Options", "DENY");
    }
    if (rq->close || atomic_load_explicit(&srv->draining, memory_order_relaxed))
        MHD_add_response_header(resp, "Connection", "close");
    MHD_add_response_header(resp, "X-Request-Id", rq->request_id);
    if (rq->allow)
        MHD_add_response_header(resp, "Allow", rq->allow);
    for (size_t at = 0; at < rq->extra_len;) {
        const char *name = rq->extra_headers + at;
        const char *value = name + strlen(name) + 1;
        MHD_add_response_header(resp, name, value);
        at = (size_t)(value + strlen(value) + 1 - rq->extra_headers);
    }
    if (rq->location[0])
        MHD_add_response_header(resp, "Location", rq->location);
    char v[24];
    if (rq->retry_after > 0)
        MHD_add_response_header(resp, "Retry-After", bd_i64_text(rq->retry_after, v));
    if (rq->has_rate) {
        MHD_add_response_header(resp, "X-RateLimit-Limit", bd_i64_text(rq->rate_limit, v));
        MHD_add_response_header(resp, "X-RateLimit-Remaining", bd_i64_text(rq->rate_remaining, v));
        MHD_add_response_header(resp, "X-RateLimit-Reset", bd_i64_text(rq->rate_reset, v));
    }
    if (rq->quota_reset) {
        char when[21];
        bd_utc_text(rq->quota_reset, when);
        MHD_add_response_header(resp, "X-Quota-Reset", when);
    }
    enum MHD_Result ret = MHD_queue_response(conn, (unsigned)rq->status, resp);
    MHD_destroy_response(resp);
    return ret;
}
