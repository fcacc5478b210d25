/* One webhook POST with libcurl (send.h). */
#include "webhook/send.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#define ADDRS_MAX 8

struct bd_webhook_sender {
    CURL *curl;
    const bd_webhook_policy *policy;
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static bool curl_ready;

static void init_curl(void)
{
    curl_ready = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK;
}

bd_webhook_sender *bd_webhook_sender_new(const bd_webhook_policy *policy)
{
    pthread_once(&curl_once, init_curl);
    if (!curl_ready)
        return NULL;
    bd_webhook_sender *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->curl = curl_easy_init();
    if (!s->curl) {
        free(s);
        return NULL;
    }
    s->policy = policy;
    return s;
}

void bd_webhook_sender_free(bd_webhook_sender *s)
{
    if (!s)
        return;
    curl_easy_cleanup(s->curl);
    free(s);
}

/* The reply's body is not read: a receiver's answer is its status. */
static size_t discard(char *p, size_t size, size_t n, void *ctx)
{
    (void)p, (void)ctx;
    return size * n;
}

/* Every socket a transfer opens is checked against the policy once more. */
static curl_socket_t open_socket(void *ctx, curlsocktype purpose, struct curl_sockaddr *a)
{
    const bd_webhook_sender *s = ctx;
    if (purpose != CURLSOCKTYPE_IPCXN || !bd_webhook_address_ok(s->policy, &a->addr))
        return CURL_SOCKET_BAD;
    return socket(a->family, a->socktype, a->protocol);
}

/* "host:port:addr,addr" for CURLOPT_RESOLVE, IPv6 addresses in brackets. */
static bool pin_entry(const bd_webhook_url *u, const struct sockaddr_storage *addrs, size_t n,
                      char *out, size_t cap)
{
    int w = snprintf(out, cap, "%s:%d:", u->host, u->port);
    for (size_t i = 0; i < n && w > 0 && (size_t)w < cap; i++) {
        char text[INET6_ADDRSTRLEN];
        const void *src = addrs[i].ss_family == AF_INET
                              ? (const void *)&((const struct sockaddr_in *)&addrs[i])->sin_addr
                              : (const void *)&((const struct sockaddr_in6 *)&addrs[i])->sin6_addr;
        if (!inet_ntop(addrs[i].ss_family, src, text, sizeof text))
            return false;
        w += snprintf(out + w, cap - (size_t)w, addrs[i].ss_family == AF_INET6 ? "%s[%s]" : "%s%s",
                      i ? "," : "", text);
    }
    return w > 0 && (size_t)w < cap;
}

bd_result bd_webhook_post(bd_webhook_sender *s, bd_slice url, bd_slice event_id, int64_t timestamp,
                          const char *signature, bd_slice body, long *status, const char **why)
{
    char h_event[96], h_time[64], h_sig[96];
    snprintf(h_event, sizeof h_event, "X-Breachd-Event-Id: %.*s", (int)event_id.len, event_id.ptr);
    snprintf(h_time, sizeof h_time, "X-Breachd-Timestamp: %lld", (long long)timestamp);
    snprintf(h_sig, sizeof h_sig, "X-Breachd-Signature: %s", signature);
    const char *const lines[] = {h_event, h_time, h_sig};
    return bd_webhook_post_headers(s, url, lines, 3, body, status, why);
}

bd_result bd_webhook_post_headers(bd_webhook_sender *s, bd_slice url, const char *const *extra,
                                  size_t nextra, bd_slice body, long *status, const char **why)
{
    *status = 0;
    *why = NULL;
    bd_webhook_url u;
    if (bd_webhook_url_parse(url, &u, why) != BD_OK)
        return BD_ERR_INVALID;
    struct sockaddr_storage addrs[ADDRS_MAX];
    size_t n;
    bd_result r = bd_webhook_resolve(s->policy, &u, addrs, ADDRS_MAX, &n, why);
    if (r != BD_OK)
        return r == BD_ERR_INVALID ? r : BD_ERR_IO;
    char pin[1024], url_z[BD_WEBHOOK_URL_MAX + 1];
    if (!pin_entry(&u, addrs, n, pin, sizeof pin)) {
        *why = "the url's addresses could not be pinned";
        return BD_ERR_IO;
    }
    memcpy(url_z, url.ptr, url.len);
    url_z[url.len] = '\0';
    struct curl_slist *headers = NULL, *resolve = NULL;
    for (size_t i = 0; i < nextra + 2; i++) {
        const char *line = i == 0           ? "Content-Type: application/json"
                           : i == nextra + 1 ? "Expect:"
                                             : extra[i - 1];
        struct curl_slist *next = curl_slist_append(headers, line);
        if (!next) {
            curl_slist_free_all(headers);
            return BD_ERR_NOMEM;
        }
        headers = next;
    }
    /* A name is pinned to the addresses just checked, so a second lookup by curl cannot
     * answer otherwise. An IPv6 literal is not: curl resolves nothing for it, and Debian
     * 12's curl (7.88) reads no entry for an IPv6 host ("::1:8080:..." nor "[::1]:8080:...")
     * and fails the whole transfer on it. open_socket checks what is connected to either
     * way. */
    bool literal6 = strchr(u.host, ':') != NULL;
    if (!literal6 && !(resolve = curl_slist_append(NULL, pin))) {
        curl_slist_free_all(headers);
        return BD_ERR_NOMEM;
    }
    CURL *c = s->curl;
    curl_easy_reset(c);
    curl_easy_setopt(c, CURLOPT_URL, url_z);
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(c, CURLOPT_PROXY, "");
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, 5000L);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 10000L);
    curl_easy_setopt(c, CURLOPT_RESOLVE, resolve);
    curl_easy_setopt(c, CURLOPT_OPENSOCKETFUNCTION, open_socket);
    curl_easy_setopt(c, CURLOPT_OPENSOCKETDATA, s);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(c, CURLOPT_USERAGENT, "breachd-webhook/1");
    curl_easy_setopt(c, CURLOPT_POST, 1L);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body.ptr);
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body.len);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
    CURLcode rc = curl_easy_perform(c);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, status);
    curl_easy_setopt(c, CURLOPT_RESOLVE, NULL);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, NULL);
    curl_slist_free_all(headers);
    curl_slist_free_all(resolve);
    if (rc != CURLE_OK) {
        *why = curl_easy_strerror(rc);
        return BD_ERR_IO;
    }
    if (*status < 200 || *status > 299) {
        *why = "the receiver did not answer 2xx";
        return BD_ERR_IO;
    }
    return BD_OK;
}

bd_result bd_smtp_parse(const char *url, bool insecure, bd_smtp_config *c, const char **why)
{
    memset(c, 0, sizeof *c);
    c->url = url;
    c->insecure = insecure;
    size_t at;
    if (strncasecmp(url, "smtps://", 8) == 0) {
        c->tls = true;
        at = 8;
        c->port = 465;
    } else if (strncasecmp(url, "smtp://", 7) == 0) {
        at = 7;
        c->port = 25;
    } else {
        *why = "the SMTP url must be smtp://HOST[:PORT] or smtps://HOST[:PORT]";
        return BD_ERR_INVALID;
    }
    /* the host and port read as a webhook URL's are (IPv6 in brackets, port 1 to 65535) */
    char http[600];
    size_t rest = strlen(url + at);
    if (rest && url[at + rest - 1] == '/')
        rest--;
    if (rest == 0 || rest >= sizeof http - 8 || memchr(url + at, '/', rest) ||
        memchr(url + at, '?', rest) || memchr(url + at, '@', rest)) {
        *why = "the SMTP url is smtp://HOST[:PORT] or smtps://HOST[:PORT], nothing else "
               "(credentials go in --smtp-credentials)";
        return BD_ERR_INVALID;
    }
    int n = snprintf(http, sizeof http, "http://%.*s", (int)rest, url + at);
    bd_webhook_url u;
    if (bd_webhook_url_parse((bd_slice){http, (size_t)n}, &u, why) != BD_OK)
        return BD_ERR_INVALID;
    memcpy(c->host, u.host, sizeof c->host);
    if (memchr(url + at, ':', rest) && (url[at] != '[' || strstr(url + at, "]:")))
        c->port = u.port;
    if (insecure) {
        struct in_addr a4;
        struct in6_addr a6;
        bool loop = strcasecmp(c->host, "localhost") == 0 ||
                    (inet_pton(AF_INET, c->host, &a4) == 1 && (ntohl(a4.s_addr) >> 24) == 127) ||
                    (inet_pton(AF_INET6, c->host, &a6) == 1 && IN6_IS_ADDR_LOOPBACK(&a6));
        if (c->tls || !loop) {
            *why = "--smtp-insecure (no STARTTLS) is only for an smtp:// server on this host "
                   "(localhost, 127.0.0.0/8, ::1)";
            return BD_ERR_INVALID;
        }
    }
    *why = NULL;
    return BD_OK;
}

typedef struct {
    bd_slice msg;
    size_t at;
} upload;

static size_t read_message(char *buf, size_t size, size_t n, void *ctx)
{
    upload *u = ctx;
    size_t room = size * n, left = u->msg.len - u->at;
    size_t k = left < room ? left : room;
    memcpy(buf, u->msg.ptr + u->at, k);
    u->at += k;
    return k;
}

bd_result bd_webhook_mail(bd_webhook_sender *s, const bd_smtp_config *smtp, bd_slice rcpt,
                          bd_slice message, long *status, const char **why)
{
    *status = 0;
    *why = NULL;
    bd_webhook_url u = {.https = smtp->tls, .port = smtp->port};
    memcpy(u.host, smtp->host, sizeof u.host);
    struct sockaddr_storage addrs[ADDRS_MAX];
    size_t n;
    bd_result r = bd_webhook_resolve(s->policy, &u, addrs, ADDRS_MAX, &n, why);
    if (r != BD_OK) {
        if (r == BD_ERR_INVALID)
            *why = "the SMTP server's address is private, loopback or otherwise internal; the "
                   "operator allows such ranges with breachd --webhook-allow CIDR";
        else
            *why = "the SMTP server's host does not resolve";
        return r == BD_ERR_INVALID ? r : BD_ERR_IO;
    }
    char pin[1024], url[600], from[300], to[300];
    if (!pin_entry(&u, addrs, n, pin, sizeof pin)) {
        *why = "the SMTP server's addresses could not be pinned";
        return BD_ERR_IO;
    }
    bool literal6 = strchr(u.host, ':') != NULL;
    snprintf(url, sizeof url, literal6 ? "%s://[%s]:%d" : "%s://%s:%d",
             smtp->tls ? "smtps" : "smtp", u.host, u.port);
    snprintf(from, sizeof from, "<%s>", smtp->from);
    snprintf(to, sizeof to, "<%.*s>", (int)rcpt.len, rcpt.ptr);
    struct curl_slist *rcpts = curl_slist_append(NULL, to), *resolve = NULL;
    if (!rcpts || (!literal6 && !(resolve = curl_slist_append(NULL, pin)))) {
        curl_slist_free_all(rcpts);
        return BD_ERR_NOMEM;
    }
    upload up = {message, 0};
    CURL *c = s->curl;
    curl_easy_reset(c);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "smtp,smtps");
    curl_easy_setopt(c, CURLOPT_PROXY, "");
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, 5000L);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 10000L);
    curl_easy_setopt(c, CURLOPT_RESOLVE, resolve);
    curl_easy_setopt(c, CURLOPT_OPENSOCKETFUNCTION, open_socket);
    curl_easy_setopt(c, CURLOPT_OPENSOCKETDATA, s);
    curl_easy_setopt(c, CURLOPT_USE_SSL,
                     smtp->insecure && !smtp->tls ? (long)CURLUSESSL_NONE : (long)CURLUSESSL_ALL);
    if (smtp->user) {
        curl_easy_setopt(c, CURLOPT_USERNAME, smtp->user);
        curl_easy_setopt(c, CURLOPT_PASSWORD, smtp->password ? smtp->password : "");
    }
    curl_easy_setopt(c, CURLOPT_MAIL_FROM, from);
    curl_easy_setopt(c, CURLOPT_MAIL_RCPT, rcpts);
    curl_easy_setopt(c, CURLOPT_READFUNCTION, read_message);
    curl_easy_setopt(c, CURLOPT_READDATA, &up);
    curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE, (curl_off_t)message.len);
    CURLcode rc = curl_easy_perform(c);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, status);
    curl_easy_setopt(c, CURLOPT_RESOLVE, NULL);
    curl_easy_setopt(c, CURLOPT_MAIL_RCPT, NULL);
    curl_easy_setopt(c, CURLOPT_PASSWORD, "");
    curl_slist_free_all(rcpts);
    curl_slist_free_all(resolve);
    if (rc != CURLE_OK) {
        *why = curl_easy_strerror(rc);
        return BD_ERR_IO;
    }
    return BD_OK;
}
