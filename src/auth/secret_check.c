/* Whether a secret belongs to a store (secret_check.h). */
#include "auth/secret_check.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "store/uri.h"

/* The store's secret fingerprint, asked again for a while where flags and the store say a
 * failure may pass (BD_SECRET_CHECK_WAIT). */
static bd_result read_fingerprint(bd_store *s, int flags, char *out, size_t cap)
{
    bd_store_caps caps;
    bd_store_capabilities(s, &caps);
    for (int tries = 0;; tries++) {
        bd_result r = bd_store_meta_get(s, "secret_fingerprint", out, cap);
        bool transient = r == BD_ERR_BUSY || (r == BD_ERR_NOT_FOUND && caps.database_server);
        if (!(flags & BD_SECRET_CHECK_WAIT) || !transient || tries >= 50)
            return r;
        struct timespec pause = {0, 100 * 1000 * 1000};
        nanosleep(&pause, NULL);
    }
}

bd_result bd_secret_check(bd_store *s, const char *uri, const char *path,
                          const uint8_t secret[BD_SECRET_LEN], int flags, char *why,
                          size_t whylen)
{
    char want[65], have[65];
    bd_secret_fingerprint(secret, want);
    bd_result r = read_fingerprint(s, flags, have, sizeof have);
    if (r == BD_OK && strcmp(want, have) == 0)
        return BD_OK;
    char shown[512];
    bd_uri_redact(uri, shown, sizeof shown);
    if (r != BD_OK && r != BD_ERR_NOT_FOUND && (flags & BD_SECRET_CHECK_STORE_APART)) {
        snprintf(why, whylen, "the store %s could not be read: %s", shown, bd_result_str(r));
        return r;
    }
    snprintf(why, whylen, "the secret file %s does not belong to the store %s", path, shown);
    return BD_ERR_INVALID;
}
