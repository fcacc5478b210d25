/* The served OpenAPI document: docs/openapi.json with the server's own base path. */
#include <string.h>

#include "http/openapi.h"

/* The document's one server URL, the default base path (a test checks it is there once). */
static const char DEFAULT_SERVER[] = "\"url\": \"/v7\"";

bd_result bd_openapi_for_base(const char *base, bd_buf *out)
{
    bd_buf_init(out, bd_openapi_json_len + 8 * strlen(base));
    const char *at = strstr(bd_openapi_json, DEFAULT_SERVER);
    if (!at)
        return BD_ERR_INVALID;
    size_t head = (size_t)(at - bd_openapi_json);
    bd_result r = bd_buf_append(out, bd_openapi_json, head);
    if (r == BD_OK)
        r = bd_buf_append(out, "\"url\": \"", 8);
    for (const char *c = base; r == BD_OK && *c; c++) /* a JSON string, whatever the path */
        r = (unsigned char)*c < 0x20 || *c == '"' || *c == '\\'
                ? bd_buf_printf(out, "\\u%04x", (unsigned char)*c)
                : bd_buf_append(out, c, 1);
    if (r == BD_OK)
        r = bd_buf_append(out, "\"", 1);
    if (r == BD_OK) {
        size_t tail = head + sizeof DEFAULT_SERVER - 1;
        r = bd_buf_append(out, bd_openapi_json + tail, bd_openapi_json_len - tail);
    }
    return r;
}
