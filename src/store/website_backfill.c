/* What the website-domain backfill reads from a record (store/website_backfill.h). */
#include "store/website_backfill.h"

#include <jansson.h>

#include "ingest/normalize.h"

bool bd_website_of_attributes(bd_slice attrs, char *out, size_t *len)
{
    *len = 0;
    out[0] = '\0';
    if (!attrs.ptr || attrs.len == 0)
        return false;
    json_error_t err;
    json_t *obj = json_loadb(attrs.ptr, attrs.len, 0, &err);
    bool ok = false;
    if (json_is_object(obj)) {
        json_t *site = json_object_get(obj, "site");
        ok = json_is_string(site) &&
             bd_normalize(BD_ID_WEBSITE_DOMAIN,
                          (bd_slice){json_string_value(site), json_string_length(site)}, out,
                          len, NULL) == BD_OK;
    }
    json_decref(obj);
    if (!ok) {
        *len = 0;
        out[0] = '\0';
    }
    return ok;
}
