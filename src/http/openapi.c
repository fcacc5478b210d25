/* The served OpenAPI document: docs/openapi.json with the server's own base paths. */
#include <string.h>

#include "http/openapi.h"

/* What the document names by default: the v7 API's server URL (once) and the prefix of each
 * HIBP API v3 path (a test checks both are there). */
static const char V7_MARK[] = "\"url\": \"/v7\"";
static const char V3_MARK[] = "\"/api/v3/";

/* base as the inside of a JSON string, whatever the path holds. */
static bd_result put_path(bd_buf *out, const char *base)
{
    bd_result r = BD_OK;
    for (const char *c = base; r == BD_OK && *c; c++)
        r = (unsigned char)*c < 0x20 || *c == '"' || *c == '\\'
                ? bd_buf_printf(out, "\\u%04x", (unsigned char)*c)
                : bd_buf_append(out, c, 1);
    return r;
}

bd_result bd_openapi_for_base(const char *base, const char *hibp_base, bd_buf *out)
{
    /* each mark, what it becomes: head, the path, tail; the v7 one appears once */
    const struct {
        const char *mark, *head, *path, *tail;
        size_t len;
        bool once;
    } subs[] = {{V7_MARK, "\"url\": \"", base, "\"", sizeof V7_MARK - 1, true},
                {V3_MARK, "\"", hibp_base, "/", sizeof V3_MARK - 1, false}};
    bd_buf_init(out, 2 * bd_openapi_json_len + 64 * strlen(base) + 64 * strlen(hibp_base));
    const char *doc = bd_openapi_json, *end = bd_openapi_json + bd_openapi_json_len;
    bool v7_seen = false;
    bd_result r = BD_OK;
    while (r == BD_OK) {
        const char *at = NULL;
        size_t which = 0;
        for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++) {
            const char *hit = subs[i].once && v7_seen ? NULL : strstr(doc, subs[i].mark);
            if (hit && (!at || hit < at)) {
                at = hit;
                which = i;
            }
        }
        if (!at)
            break;
        v7_seen = v7_seen || subs[which].once;
        r = bd_buf_append(out, doc, (size_t)(at - doc));
        if (r == BD_OK)
            r = bd_buf_append_str(out, subs[which].head);
        if (r == BD_OK)
            r = put_path(out, subs[which].path);
        if (r == BD_OK)
            r = bd_buf_append_str(out, subs[which].tail);
        doc = at + subs[which].len;
    }
    if (r == BD_OK && !v7_seen)
        r = BD_ERR_INVALID;
    return r == BD_OK ? bd_buf_append(out, doc, (size_t)(end - doc)) : r;
}
