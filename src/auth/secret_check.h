/* Whether a secret belongs to a store: the one check breachd (at start) and every breachctl
 * command run before they use a secret file with a store, so that a wrong path or another
 * store's secret fails at once instead of hashing values that match nothing. */
#ifndef BD_AUTH_SECRET_CHECK_H
#define BD_AUTH_SECRET_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "auth/secret.h"
#include "core/result.h"
#include "store/store.h"

enum {
    /* A database server's hot standby may not have replayed the store's creation yet when
     * a server starts beside it, or may cancel a read while it replays: a busy store, and on
     * a database server a missing fingerprint, is asked again for up to 5 s, as a client
     * waits for its database to come up. A file answers at once. */
    BD_SECRET_CHECK_WAIT = 1,
    /* A store that fails to answer is said as such, not as a secret of another store. */
    BD_SECRET_CHECK_STORE_APART = 2,
};

/* Checks that secret, loaded from the file path, is the one the store s (opened from uri)
 * was made for: the store keeps its fingerprint (bd_secret_fingerprint). BD_OK when it is;
 * BD_ERR_INVALID, why "the secret file PATH does not belong to the store URI" (the URI
 * without its password), when the fingerprints differ or the store keeps none, and without
 * BD_SECRET_CHECK_STORE_APART when the store failed to answer too; with it, the store's
 * failure, why "the store URI could not be read: REASON". flags: BD_SECRET_CHECK_*. */
bd_result bd_secret_check(bd_store *s, const char *uri, const char *path,
                          const uint8_t secret[BD_SECRET_LEN], int flags, char *why,
                          size_t whylen);

#endif
