/* The route table (src/http/routes.h) walked row by row: every row complete and alone at its
 * path, the matcher finding each row and nothing around it, the Allow texts and the CORS
 * methods derived from it, the metrics' labels in their published order, and the table held
 * against docs/openapi.json (as compiled in) path by path and method by method. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "http/metrics.h"
#include "http/openapi.h"
#include "http/routes.h"
#include "http/upload.h"
#include "test.h"

/* The bases a row answers at. */
static bool row_at(const bd_route_row *r, bd_route_base b)
{
    switch (r->api) {
    case BD_API_OPERATIONS:
        return b == BD_BASE_ROOT;
    case BD_API_V7:
        return b == BD_BASE_V7;
    case BD_API_HIBP:
        return b == BD_BASE_HIBP;
    case BD_API_PASSWORDS:
        return b == BD_BASE_ROOT || b == BD_BASE_V7;
    }
    return false;
}

/* The row's path with its placeholder filled with fill. */
static void example(const bd_route_row *r, const char *fill, char *out, size_t cap)
{
    const char *open = strchr(r->path, '{');
    if (!open) {
        snprintf(out, cap, "%s", r->path);
        return;
    }
    snprintf(out, cap, "%.*s%s%s", (int)(open - r->path), r->path, fill, strchr(open, '}') + 1);
}

TEST(every_row_is_complete)
{
    for (size_t i = 0; i < bd_routes_n; i++) {
        const bd_route_row *r = &bd_routes[i];
        CHECK(r->handle != NULL);
        CHECK(r->label && r->label[0]);
        CHECK(r->path && r->path[0] == '/');
        CHECK(r->methods != 0);
        /* HEAD only beside GET: a HEAD is answered as its GET */
        CHECK(!(r->methods & BD_METHOD_HEAD) || (r->methods & BD_METHOD_GET));
        const char *open = strchr(r->path, '{');
        if (open) { /* one placeholder, closed, a whole segment */
            const char *close = strchr(open, '}');
            CHECK(close && !strchr(close, '{') && open[-1] == '/' &&
                  (close[1] == '\0' || close[1] == '/'));
        }
        /* only a write reads a body */
        if (r->body_max)
            CHECK(r->methods & (BD_METHOD_POST | BD_METHOD_PUT | BD_METHOD_PATCH));
        for (size_t j = 0; j < i; j++) {
            CHECK(strcmp(bd_routes[j].label, r->label) != 0); /* a label names one route */
            CHECK(strcmp(bd_routes[j].label, "other") != 0);
            for (bd_route_base b = BD_BASE_ROOT; b <= BD_BASE_HIBP; b++)
                if (row_at(r, b) && row_at(&bd_routes[j], b) &&
                    strcmp(bd_routes[j].path, r->path) == 0)
                    TEST_FAIL("%s and %s share a path", bd_routes[j].label, r->label);
        }
        CHECK_INT(bd_route_index(r), i);
        CHECK_STR(bd_route_label_at(i), r->label);
    }
    CHECK_STR(bd_route_label(NULL), "other");
    CHECK_STR(bd_route_label_at(bd_routes_n), "other");
    CHECK_INT(bd_route_index(NULL), bd_routes_n);
}

/* Each row is found at its bases, by its own path, and at no other base; a path that is not
 * one is not found. */
TEST(the_matcher_finds_each_row_and_only_it)
{
    for (size_t i = 0; i < bd_routes_n; i++) {
        const bd_route_row *r = &bd_routes[i];
        char path[256];
        example(r, "x1", path, sizeof path);
        for (bd_route_base b = BD_BASE_ROOT; b <= BD_BASE_HIBP; b++) {
            bd_slice arg = {NULL, 0};
            const bd_route_row *m = bd_route_match(b, bd_slice_from(path), &arg);
            if (row_at(r, b)) {
                CHECK_STR(bd_route_label(m), r->label);
                if (strchr(r->path, '{'))
                    CHECK(bd_slice_eq(arg, "x1"));
            } else if (m == r) {
                TEST_FAIL("%s found at base %d", r->label, (int)b);
            }
        }
    }
    static const struct {
        bd_route_base base;
        const char *path, *label, *arg;
    } cases[] = {
        {BD_BASE_V7, "/breaches", "breaches", NULL},
        {BD_BASE_ROOT, "/console/", "console-page", NULL},
        {BD_BASE_ROOT, "/console/app.js", "console", "app.js"},
        {BD_BASE_ROOT, "/console/logos/a.png", "console-logo", "a.png"},
        {BD_BASE_V7, "/console/seen", "console-seen", NULL},
        {BD_BASE_V7, "/breaches/", NULL, NULL},
        {BD_BASE_V7, "/breaches/a/b", NULL, NULL},
        {BD_BASE_V7, "/breachesx", NULL, NULL},
        {BD_BASE_V7, "/breache", NULL, NULL},
        {BD_BASE_V7, "", NULL, NULL},
        {BD_BASE_V7, "/", NULL, NULL},
        {BD_BASE_V7, "/jobs/abc/results", "job-results", "abc"},
        {BD_BASE_V7, "/jobs//results", NULL, NULL},
        {BD_BASE_V7, "/jobs/a/b/results", NULL, NULL},
        {BD_BASE_V7, "/jobs/abc/result", NULL, NULL},
        {BD_BASE_V7, "/jobs/results", "job", "results"},
        {BD_BASE_V7, "/watches/7", "watch", "7"},
        {BD_BASE_V7, "/range/21BD1", "range", "21BD1"},
        {BD_BASE_V7, "/range/", "range", ""},
        {BD_BASE_ROOT, "/range/a/b", "range", "a/b"},
        {BD_BASE_ROOT, "/range", NULL, NULL},
        {BD_BASE_ROOT, "/healthz", "healthz", NULL},
        {BD_BASE_ROOT, "/healthz/", NULL, NULL},
        {BD_BASE_ROOT, "/breaches", NULL, NULL},
        {BD_BASE_HIBP, "/breachedaccount/a/b", "v3-breachedaccount", "a/b"},
        {BD_BASE_HIBP, "/breachedaccount/", NULL, NULL},
        {BD_BASE_HIBP, "/breach/Adobe", "v3-breach", "Adobe"},
        {BD_BASE_HIBP, "/breach/", NULL, NULL},
        {BD_BASE_HIBP, "/breaches", "v3-breaches", NULL},
        {BD_BASE_HIBP, "/breacheddomain/x.com", "v3-breacheddomain", "x.com"},
        {BD_BASE_HIBP, "/subscription/status", "v3-subscription-status", NULL},
        {BD_BASE_HIBP, "/subscription", NULL, NULL},
        {BD_BASE_HIBP, "/subscribeddomains", "v3-subscribeddomains", NULL},
        {BD_BASE_HIBP, "/subscribeddomains/x", NULL, NULL},
        {BD_BASE_V7, "/subscribeddomains", NULL, NULL},
        {BD_BASE_HIBP, "/range/21BD1", NULL, NULL},
        {BD_BASE_HIBP, "/latestbreach", "v3-latestbreach", NULL},
        {BD_BASE_HIBP, "/latestbreach/x", NULL, NULL},
        {BD_BASE_V7, "/latestbreach", NULL, NULL},
        {BD_BASE_HIBP, "/pasteaccount/a@b.example", "v3-pasteaccount", "a@b.example"},
        {BD_BASE_HIBP, "/pasteaccount/", NULL, NULL},
        /* a more specific later row wins over one taking the rest of the path */
        {BD_BASE_HIBP, "/breachedaccount/range/ABCDEF", "v3-breachedaccount-range", "ABCDEF"},
        {BD_BASE_HIBP, "/breachedaccount/range/", "v3-breachedaccount", "range/"},
        {BD_BASE_HIBP, "/breachedaccount/range/AB/CD", "v3-breachedaccount", "range/AB/CD"},
        {BD_BASE_HIBP, "/stealerlogsbyemail/a@b.example", "v3-stealerlogsbyemail", "a@b.example"},
        {BD_BASE_HIBP, "/stealerlogsbywebsitedomain/b.example", "v3-stealerlogsbywebsitedomain",
         "b.example"},
        {BD_BASE_HIBP, "/stealerlogsbyemaildomain/b.example", "v3-stealerlogsbyemaildomain",
         "b.example"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        bd_slice arg = {NULL, 0};
        const bd_route_row *m = bd_route_match(cases[i].base, bd_slice_from(cases[i].path), &arg);
        if (!cases[i].label) {
            if (m)
                TEST_FAIL("%s found %s", cases[i].path, m->label);
            continue;
        }
        CHECK_STR(bd_route_label(m), cases[i].label);
        if (m && cases[i].arg)
            CHECK(bd_slice_eq(arg, cases[i].arg));
        if (m && !cases[i].arg) /* a row without a placeholder leaves arg empty */
            CHECK(arg.ptr == NULL && arg.len == 0);
    }
}

/* The 405's Allow text lists exactly the row's methods, in the order replies have always
 * had; the preflight grants every method a route answers. */
TEST(allow_texts_come_from_the_table)
{
    for (size_t i = 0; i < bd_routes_n; i++) {
        const char *text = bd_methods_text(bd_routes[i].methods);
        unsigned seen = 0;
        char copy[64];
        snprintf(copy, sizeof copy, "%s", text);
        for (char *save, *m = strtok_r(copy, ", ", &save); m; m = strtok_r(NULL, ", ", &save)) {
            unsigned bit = bd_method_bit(m);
            CHECK(bit && !(seen & bit) && bit > seen); /* known, once, in order */
            seen |= bit;
        }
        CHECK_INT(seen, bd_routes[i].methods);
    }
    CHECK_STR(bd_methods_text(BD_METHODS_READ), "GET, HEAD");
    CHECK_STR(bd_methods_text(BD_METHODS_READ | BD_METHOD_POST), "GET, HEAD, POST");
    CHECK_STR(bd_methods_text(BD_METHOD_DELETE), "DELETE");
    CHECK_STR(bd_methods_text(BD_METHOD_GET), "GET");
    CHECK_STR(bd_methods_text(0), "");
    CHECK_STR(bd_routes_preflight_methods(), "GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS");
    CHECK_INT(bd_method_bit("GET"), BD_METHOD_GET);
    CHECK_INT(bd_method_bit("get"), 0);
    CHECK_INT(bd_method_bit("GETS"), 0);
    CHECK_INT(bd_method_bit("OPTIONS"), 0);
    CHECK_INT(bd_method_bit("PATCH"), BD_METHOD_PATCH);
    CHECK_INT(bd_method_bit(""), 0);
}

/* The metrics' route labels and their order are what dashboards know: a new route goes at
 * the end of the table. */
TEST(metrics_labels_keep_their_order)
{
    static const char *const published[] = {
        "breaches",           "breach",         "breach-search",     "credit-card-search",
        "v3-breachedaccount", "v3-breaches",    "v3-breach",         "v3-dataclasses",
        "v3-breacheddomain",  "v3-subscription-status", "range",     "healthz",
        "metrics",            "openapi",        "usage",             "status",
        "changes",            "watches",        "watch",             "alerts",
        "jobs",               "job",            "job-results",       "v3-subscribeddomains",
        "admin-tenants",      "admin-tenant",   "admin-tenant-usage", "admin-keys",
        "admin-key",          "admin-audit",    "admin-lookups"};
    size_t n = sizeof published / sizeof published[0];
    CHECK(bd_routes_n >= n);
    for (size_t i = 0; i < n && i < bd_routes_n; i++)
        CHECK_STR(bd_routes[i].label, published[i]);

    bd_metrics *m = bd_metrics_new(bd_routes_n, bd_route_label_at);
    CHECK(m != NULL);
    if (!m)
        return;
    bd_metrics_request(m, 1, 200, 10);
    bd_metrics_request(m, bd_routes_n, 404, 10);
    bd_metrics_request(m, bd_routes_n + 7, 404, 10); /* past the table: other */
    bd_metrics_request(m, 0, 413, 10);
    bd_buf out;
    bd_buf_init(&out, 1 << 16);
    CHECK_INT(bd_metrics_write(m, &out, 0, 0), BD_OK);
    CHECK(bd_buf_append(&out, "", 1) == BD_OK);
    const char *t = out.data;
    const char *a = strstr(t, "breachd_requests_total{route=\"breaches\",status=\"other\"} 1\n");
    const char *b = strstr(t, "breachd_requests_total{route=\"breach\",status=\"200\"} 1\n");
    const char *c = strstr(t, "breachd_requests_total{route=\"other\",status=\"404\"} 2\n");
    CHECK(a && b && c && a < b && b < c);
    bd_buf_free(&out);
    bd_metrics_free(m);
}

/* The body a write reads, at most: what the server's screening of a head enforces. */
TEST(body_limits)
{
    for (size_t i = 0; i < bd_routes_n; i++) {
        const bd_route_row *r = &bd_routes[i];
        /* the admin API's writes: 64 KiB (v7/admin.h) */
        bool admin_write = strncmp(r->label, "admin-", 6) == 0 &&
                           (r->methods & (BD_METHOD_POST | BD_METHOD_PATCH));
        size_t want = strcmp(r->label, "jobs") == 0      ? BD_UPLOAD_MAX
                      : strcmp(r->label, "watches") == 0 ? 64u << 10
                      : strcmp(r->label, "alert") == 0   ? 4096u /* PATCH {"state"} */
                      : strcmp(r->label, "console-seen") == 0 ? 4096u /* PUT {"seen"} */
                      : admin_write                      ? 64u << 10
                                                         : 0;
        CHECK_INT(r->body_max, want);
    }
}

/* Every documented path is a row and every row is documented, with the same methods (GET
 * documents HEAD too; every path documents OPTIONS, the preflight). */
TEST(the_table_is_the_documented_api)
{
    json_error_t err;
    json_t *doc = json_loadb(bd_openapi_json, bd_openapi_json_len, 0, &err);
    CHECK(doc != NULL);
    if (!doc)
        return;
    json_t *paths = json_object_get(doc, "paths");
    CHECK(json_is_object(paths));
    size_t documented = json_object_size(paths);
    CHECK_INT(documented, bd_routes_n);
    static const struct {
        const char *name;
        unsigned bit;
    } ops[] = {{"get", BD_METHOD_GET},     {"post", BD_METHOD_POST},
               {"put", BD_METHOD_PUT},     {"patch", BD_METHOD_PATCH},
               {"delete", BD_METHOD_DELETE}, {"head", BD_METHOD_HEAD}};
    for (size_t i = 0; i < bd_routes_n; i++) {
        const bd_route_row *r = &bd_routes[i];
        char path[256];
        snprintf(path, sizeof path, "%s%s", r->api == BD_API_HIBP ? "/api/v3" : "", r->path);
        json_t *item = json_object_get(paths, path);
        if (!item) {
            TEST_FAIL("%s (%s) is not in docs/openapi.json", path, r->label);
            continue;
        }
        unsigned methods = 0;
        for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++)
            if (json_object_get(item, ops[k].name))
                methods |= ops[k].bit;
        /* a GET's HEAD is implied; job results stream and answer GET alone */
        unsigned want = r->methods & ~(unsigned)BD_METHOD_HEAD;
        if (methods != want)
            TEST_FAIL("%s documents methods %s, the table %s", path, bd_methods_text(methods),
                      bd_methods_text(want));
        CHECK(json_object_get(item, "options") != NULL);
    }
    json_decref(doc);
}

int main(void)
{
    RUN(every_row_is_complete);
    RUN(the_matcher_finds_each_row_and_only_it);
    RUN(allow_texts_come_from_the_table);
    RUN(metrics_labels_keep_their_order);
    RUN(body_limits);
    RUN(the_table_is_the_documented_api);
    return TEST_EXIT();
}
