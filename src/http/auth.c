/* Authentication: the x-api-key header, the key's hourly budget, and the failed-key
 * throttle per client address. */
#include <microhttpd.h>
#include <netinet/in.h>
#include <sodium.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "http/console.h"
#include "http/server_impl.h"

void bd_utc_text(int64_t t, char out[21])
{
    time_t tt = (time_t)t;
    struct tm tm;
    if (!gmtime_r(&tt, &tm) ||
        strftime(out, 21, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
        snprintf(out, 21, "1970-01-01T00:00:00Z");
}

void bd_json_utc_member(bd_json *w, const char *key, int64_t t)
{
    bd_json_key(w, key);
    if (t <= 0) {
        bd_json_null(w);
        return;
    }
    char when[21];
    bd_utc_text(t, when);
    bd_json_cstring(w, when);
}

int64_t bd_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* One X-Forwarded-For line after another, as they came; the last ones when there are more. */
#define XFF_LINES 8
typedef struct {
    bd_slice lines[XFF_LINES];
    size_t n;
} xff_lines;

static enum MHD_Result take_xff(void *cls, enum MHD_ValueKind kind, const char *key,
                                size_t key_size, const char *value, size_t value_size)
{
    (void)kind;
    xff_lines *x = cls;
    if (key_size != 15 || strncasecmp(key, "X-Forwarded-For", 15) != 0)
        return MHD_YES;
    if (x->n == XFF_LINES) { /* the rightmost entries are the ones read */
        memmove(x->lines, x->lines + 1, (XFF_LINES - 1) * sizeof x->lines[0]);
        x->n--;
    }
    x->lines[x->n++] = (bd_slice){value ? value : "", value ? value_size : 0};
    return MHD_YES;
}

void bd_client_resolve(const bd_server *srv, struct MHD_Connection *conn, bd_ip *out)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    bd_ip peer = {0};
    if (ci && ci->client_addr && ci->client_addr->sa_family == AF_INET)
        bd_ip_from_bytes(AF_INET,
                         (const uint8_t *)&((const struct sockaddr_in *)ci->client_addr)->sin_addr,
                         &peer);
    else if (ci && ci->client_addr && ci->client_addr->sa_family == AF_INET6)
        bd_ip_from_bytes(
            AF_INET6, (const uint8_t *)&((const struct sockaddr_in6 *)ci->client_addr)->sin6_addr,
            &peer);
    const bd_trusted_proxies *p = srv->cfg.trusted_proxies;
    if (!bd_trusted_proxies_has(p, &peer)) { /* the header is read only from a trusted proxy */
        *out = peer;
        return;
    }
    xff_lines x = {.n = 0};
    MHD_get_connection_values_n(conn, MHD_HEADER_KIND, take_xff, &x);
    bd_client_addr_resolve(p, &peer, x.lines, x.n, out);
}

const bd_ip *bd_req_client(const bd_server *srv, bd_req *rq)
{
    if (!rq->client_known) {
        bd_client_resolve(srv, rq->conn, &rq->client);
        rq->client_known = true;
    }
    return &rq->client;
}

/* A non-zero id for the client's address, for the failed-key throttle. */
static uint64_t client_id(const bd_ip *ip)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    size_t n = ip->family == 4 ? 4 : ip->family == 6 ? 16 : 0;
    for (size_t i = 0; i < n; i++)
        h = (h ^ ip->addr[i]) * 1099511628211ULL;
    return h ? h : 1;
}

static void throttled(bd_server *srv, bd_req *rq, const bd_rate_decision *d)
{
    bd_metrics_rate_limited(srv->metrics, BD_LIMIT_FAILED_KEYS);
    rq->retry_after = d->retry_after;
    bd_reply_error(rq, 429, "rate_limited",
                   "too many failed API keys from your address; retry in %lld seconds",
                   (long long)d->retry_after);
}

/* A failed key: 401/403 as given, or 429 once the address has failed too often. */
static bool failed(bd_server *srv, bd_req *rq, uint64_t client, int64_t now, int status,
                   const char *code, const char *message)
{
    bd_rate_decision d;
    bd_ratelimit_take(srv->auth_fails, client, srv->cfg.auth_fail_limit, 60, now, &d);
    if (!d.allowed)
        throttled(srv, rq, &d);
    else
        bd_reply_error(rq, status, code, "%s", message);
    return false;
}

/* Takes one request from the key's hourly budget; false (429 written) when it is spent. */
static bool take_budget(bd_server *srv, bd_req *rq, int64_t now)
{
    bd_rate_decision d;
    bd_limiter_take(srv->limiter, BD_BUDGET_REQUESTS, rq->key.id, rq->key.rate_per_hour, 3600, now,
                    &d);
    rq->has_rate = true;
    rq->rate_limit = d.limit;
    rq->rate_remaining = d.remaining;
    rq->rate_reset = d.reset;
    rq->authenticated = true;
    if (d.allowed)
        return true;
    bd_metrics_rate_limited(srv->metrics, BD_LIMIT_KEY_BUDGET);
    rq->retry_after = d.retry_after;
    bd_reply_error(rq, 429, "rate_limited",
                   "this key's limit of %lld requests per hour is used up; retry in %lld seconds",
                   (long long)d.limit, (long long)d.retry_after);
    return false;
}

/* Counts the request against the key's usage and monthly quota; false (403 written) when
 * the quota is used up, or (503) when this instance cannot count it: a hot standby's store
 * without --shared-limits (auth/usage.h). GET /usage is neither counted nor refused. */
static bool take_quota(bd_server *srv, bd_req *rq)
{
    if (rq->usage_exempt)
        return true;
    int64_t used;
    if (bd_usage_take(srv->usage, rq->key.id, rq->key.quota_per_month, rq->now_us, &used))
        return true;
    if (used < 0) {
        rq->retry_after = 60; /* another instance (or this one after a failover) can */
        bd_reply_error(rq, 503, "quota_unavailable",
                       "this instance cannot count requests against this key's monthly quota: "
                       "it serves a read-only replica; send the request to an instance on the "
                       "primary");
        return false;
    }
    rq->quota_reset = bd_usage_month_end(rq->now_us / 1000000);
    char when[21];
    bd_utc_text(rq->quota_reset, when);
    bd_reply_error(rq, 403, "quota_exhausted",
                   "this key's quota of %lld requests a month is used up; it resets at %s",
                   (long long)rq->key.quota_per_month, when);
    return false;
}

/* The presented key: hibp-api-key first for the HIBP API v3, then x-api-key; false when
 * none is there or it is empty. */
static bool presented_key(const bd_req *rq, bool hibp, bd_slice *out)
{
    const char *key = NULL;
    size_t len = 0;
    if (hibp && MHD_lookup_connection_value_n(rq->conn, MHD_HEADER_KIND, "hibp-api-key", 12, &key,
                                              &len) == MHD_YES &&
        key && len > 0) {
        *out = (bd_slice){key, len};
        return true;
    }
    if (MHD_lookup_connection_value_n(rq->conn, MHD_HEADER_KIND, "x-api-key", 9, &key, &len) !=
            MHD_YES ||
        !key || len == 0)
        return false;
    *out = (bd_slice){key, len};
    return true;
}

bool bd_key_presented(const bd_req *rq, bool hibp)
{
    bd_slice k;
    return presented_key(rq, hibp, &k);
}

/* An address over its failure budget gets 429 before any key is looked up, unless the key
 * it presents already authenticated from it: otherwise 200 versus 429 would still answer
 * each guess. Expired keys get the same answer as unknown ones, so a leaked key's owner
 * cannot learn that it once was real. */
bool bd_authenticate(bd_server *srv, bd_req *rq, bool hibp)
{
    uint64_t client = client_id(bd_req_client(srv, rq));
    int64_t now = rq->now_us = bd_now_us();
    if (rq->screened) { /* checked and counted when its head came, before the body */
        const bd_screened *s = rq->screened;
        rq->key = s->key;
        rq->has_rate = s->has_rate;
        rq->rate_limit = s->rate_limit;
        rq->rate_remaining = s->rate_remaining;
        rq->rate_reset = s->rate_reset;
        rq->authenticated = true;
        return true;
    }
    bd_slice presented;
    char session_key[BD_SESSION_KEY_MAX]; /* the console's session stands for its key */
    int session = 0;
    if (!presented_key(rq, hibp, &presented) &&
        (hibp || (session = bd_console_session_key(srv, rq, session_key, &presented)) == 0))
        return failed(srv, rq, client, now, 401, "unauthorized",
                      hibp ? "send your API key in the hibp-api-key header"
                           : "send your API key in the x-api-key header");
    if (session < 0)
        return false;
    uint64_t tag = bd_known_keys_tag(srv->known_keys, client, presented);
    bd_rate_decision d;
    bd_ratelimit_peek(srv->auth_fails, client, srv->cfg.auth_fail_limit, 60, now, &d);
    if (!d.allowed && !bd_known_keys_has(srv->known_keys, tag)) {
        if (session)
            sodium_memzero(session_key, sizeof session_key);
        throttled(srv, rq, &d);
        return false;
    }
    bd_key_status status = bd_keyring_lookup(srv->keys, presented, now / 1000000, &rq->key);
    if (session) /* the session's copy of the key is needed no further */
        sodium_memzero(session_key, sizeof session_key);
    if (status != BD_KEY_VALID)
        return failed(srv, rq, client, now, hibp ? 401 : 403, "authentication_failed",
                      "the API key is not valid; check it or ask for a new one");
    if (!bd_ip_allowed(rq->key.allow, rq->key.n_allow, &rq->client)) {
        /* neither charged to the key nor remembered as a key that works from here; a
         * guesser's failures are counted as any other failed key's */
        bd_metrics_scope_refused(srv->metrics, BD_SCOPE_REFUSED_IP);
        return failed(srv, rq, client, now, 403, "ip_not_allowed",
                      "this key may not be used from your address; the operator sets where a "
                      "key may be used from (breachctl keys create --allow-ip)");
    }
    bd_known_keys_add(srv->known_keys, tag);
    return take_budget(srv, rq, now) && take_quota(srv, rq);
}
