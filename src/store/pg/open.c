/* PostgreSQL backend: not in this build yet. bd_pg_open refuses, naming the store without
 * its password; the backend's files will join this one in src/store/pg/. */
#include <stdio.h>

#include "store/store_impl.h"
#include "store/uri.h"

bd_result bd_pg_open(const char *uri, int flags, bd_store **out, char *why, size_t whylen)
{
    (void)flags;
    char shown[512];
    bd_uri_redact(uri, shown, sizeof shown);
    *out = NULL;
    snprintf(why, whylen,
             "PostgreSQL stores (%s) are not supported by this build yet; use a SQLite file path",
             shown);
    return BD_ERR_INVALID;
}
