/* What a watch names, from the importer's side (watch_spec.c): a breach-search type and
 * value, or a card BIN, normalised exactly as imported rows are, so that a landed row and a
 * watch compare byte for byte. */
#ifndef BD_INGEST_WATCH_SPEC_H
#define BD_INGEST_WATCH_SPEC_H

#include <stddef.h>
#include <stdint.h>

#include "auth/secret.h"
#include "ingest/normalize.h"
#include "store/store.h"

#define BD_WATCH_KEY_MAX (2 * BD_MAC_LEN > BD_NORM_MAX ? 2 * BD_MAC_LEN : BD_NORM_MAX)

typedef struct {
    int type; /* bd_field value, or BD_WATCH_BIN */
    char key[BD_WATCH_KEY_MAX + 1];
    size_t key_len;
    char shown[4 * BD_NORM_MAX + 8]; /* the value as a search reply shows it */
    size_t shown_len;
} bd_watch_spec;

/* Parses a watch's type (breach-search's `type` values and aliases, ASCII case ignored, or
 * "bin") and normalises value as breach-search normalises `account`; a password or SSN is
 * kept only as its keyed hash under secret (lower-case hex) and shown masked; a BIN is 6
 * digits. BD_ERR_INVALID with *why (a constant sentence) when either is not valid. */
bd_result bd_watch_spec_parse(const uint8_t secret[BD_SECRET_LEN], bd_slice type, bd_slice value,
                              bd_watch_spec *out, const char **why);
/* The type's name as the API writes it: breach-search's canonical names, or "bin". */
const char *bd_watch_type_name(int type);

#endif
