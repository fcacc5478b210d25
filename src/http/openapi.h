/* The OpenAPI document of the API (docs/openapi.json), compiled in and served at
 * /openapi.json without a key. */
#ifndef BD_HTTP_OPENAPI_H
#define BD_HTTP_OPENAPI_H

#include <stdbool.h>
#include <stddef.h>

#include "core/buf.h"

/* docs/openapi.json as built (scripts/embed.py writes the definitions). */
extern const char bd_openapi_json[];
extern const size_t bd_openapi_json_len;

/* The document with base, the server's base path, as the URL of the v7 API's server (the
 * document names the default, /v7) and hibp_base as the prefix of the HIBP API v3's paths
 * (default /api/v3), into out, which it initialises. */
bd_result bd_openapi_for_base(const char *base, const char *hibp_base, bd_buf *out);

#endif
