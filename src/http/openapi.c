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
    bd_buf_init(out, 2 * bd_openapi_json_len + 64 * strlen(base) + 64 * strlen(hibp_base));
    const char *doc = bd_openapi_json, *end = bd_openapi_json + bd_openapi_json_len;
    bool v7_seen = false;
    bd_result r = BD_OK;
    while (r == BD_OK) {
        const char *v7 = v7_seen ? NULL : strstr(doc, V7_MARK);
        const char *v3 = strstr(doc, V3_MARK);
        const char *at = v7 && (!v3 || v7 < v3) ? v7 : v3;
        if (!at)
            break;
        r = bd_buf_append(out, doc, (size_t)(at - doc));
        if (at == v7) {
            v7_seen = true;
            if (r == BD_OK)
                r = bd_buf_append_str(out, "\"url\": \"");
            if (r == BD_OK)
                r = put_path(out, base);
            if (r == BD_OK)
                r = bd_buf_append_char(out, '"');
            doc = at + sizeof V7_MARK - 1;
        } else {
            if (r == BD_OK)
                r = bd_buf_append_char(out, '"');
            if (r == BD_OK)
                r = put_path(out, hibp_base);
            if (r == BD_OK)
                r = bd_buf_append_char(out, '/');
            doc = at + sizeof V3_MARK - 1;
        }
    }
    if (r == BD_OK && !v7_seen)
        r = BD_ERR_INVALID;
    return r == BD_OK ? bd_buf_append(out, doc, (size_t)(end - doc)) : r;
}
