/* Fuzz target: query-parameter validation as the breach-search and card-search handlers run
 * it, on parameters split from arbitrary bytes the way a decoded query string arrives
 * ('&' between pairs, '=' between name and value, NUL bytes kept). Every outcome must be a
 * complete JSON reply or a pass. */
#include <jansson.h>
#include <stdint.h>
#include <string.h>

#include "http/request.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const allowed[] = {"type", "account", "paging_token", "number_of_records",
                                          "page", "size",    "sort",         "query",
                                          NULL};
    static const char *const repeatable[] = {"sort", NULL};
    static bd_buf body;
    if (!body.max)
        bd_buf_init(&body, 1 << 16);
    bd_req rq;
    memset(&rq, 0, sizeof rq);
    rq.body = &body;
    const char *p = (const char *)data, *end = p + size;
    while (p < end) {
        const char *amp = memchr(p, '&', (size_t)(end - p));
        const char *stop = amp ? amp : end;
        const char *eq = memchr(p, '=', (size_t)(stop - p));
        if (rq.nparams == BD_MAX_PARAMS) {
            rq.too_many_params = true;
            break;
        }
        bd_param *pr = &rq.params[rq.nparams++];
        pr->name = (bd_slice){p, (size_t)((eq ? eq : stop) - p)};
        pr->value = eq ? (bd_slice){eq + 1, (size_t)(stop - eq - 1)} : (bd_slice){NULL, 0};
        if (memchr(p, '\0', (size_t)(stop - p)))
            rq.bad_param_bytes = true;
        p = stop + 1;
    }
    int64_t n;
    bool ok = bd_params_check(&rq, allowed, repeatable) &&
              bd_param_int(&rq, "number_of_records", 1, 1000, 100, &n) &&
              bd_param_int(&rq, "page", 0, 100000, 0, &n);
    if (!ok) {
        json_error_t err;
        json_t *v = json_loadb(body.data, body.len, 0, &err);
        if (!json_is_object(v) || !json_is_string(json_object_get(v, "error")) ||
            !json_is_string(json_object_get(v, "message")) || rq.status < 400 || rq.status > 499)
            __builtin_trap();
        json_decref(v);
    }
    return 0;
}
