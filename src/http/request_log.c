/* The access-log line of one request. */
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "http/routes.h"
#include "http/server_impl.h"

void bd_log_request(bd_server *srv, bd_worker *w, const bd_req *rq, const char *method,
                    int64_t start_us, int64_t micros)
{
    char client[BD_CLIENT_ADDR_TEXT], when[40];
    time_t secs = (time_t)(start_us / 1000000);
    struct tm tm;
    gmtime_r(&secs, &tm);
    size_t n = strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(when + n, sizeof when - n, ".%03dZ", (int)(start_us / 1000 % 1000));
    bd_ip ip;
    if (rq->client_known)
        ip = rq->client;
    else
        bd_client_resolve(srv, rq->conn, &ip);
    bd_ip_format(&ip, client);
    bd_buf *b = &w->log_line;
    bd_buf_reset(b);
    bd_json j;
    bd_json_init(&j, b);
    bd_json_object_begin(&j);
    bd_json_key(&j, "time");
    bd_json_cstring(&j, when);
    bd_json_key(&j, "request_id");
    bd_json_cstring(&j, rq->request_id);
    bd_json_key(&j, "key_id");
    if (rq->authenticated)
        bd_json_int(&j, rq->key.id);
    else
        bd_json_null(&j);
    bd_json_key(&j, "client");
    bd_json_cstring(&j, client);
    bd_json_key(&j, "method");
    bd_json_string(&j, (bd_slice){method, strnlen(method, 16)});
    bd_json_key(&j, "route");
    bd_json_cstring(&j, bd_route_label(rq->route));
    bd_json_key(&j, "status");
    bd_json_int(&j, rq->status);
    bd_json_key(&j, "bytes");
    bd_json_int(&j, (int64_t)rq->body->len);
    bd_json_key(&j, "micros");
    bd_json_int(&j, micros);
    bd_json_key(&j, "records");
    if (rq->records >= 0)
        bd_json_int(&j, rq->records);
    else
        bd_json_null(&j);
    bd_json_key(&j, "account_hash");
    bd_json_cstring(&j, rq->account_hash[0] ? rq->account_hash : NULL);
    bd_json_object_end(&j);
    if (bd_json_result(&j) == BD_OK && bd_buf_append_char(b, '\n') == BD_OK)
        bd_access_log_write(srv->log, b->data, b->len);
}
