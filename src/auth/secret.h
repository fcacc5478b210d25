/* The server secret: 32 random bytes in a file of mode 0600 beside the store, never inside
 * it, so a stolen database file does not let anyone test guesses against the keyed hashes of
 * passwords, SSNs, card numbers and CVVs. */
#ifndef BD_AUTH_SECRET_H
#define BD_AUTH_SECRET_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/result.h"
#include "core/slice.h"

#define BD_SECRET_LEN 32
#define BD_MAC_LEN 32

/* Creates a new secret file (fails with BD_ERR_EXISTS if one exists) with mode 0600. */
bd_result bd_secret_create(const char *path, char *why, size_t whylen);
/* Loads a secret; refuses a file that group or others may read (BD_ERR_INVALID). */
bd_result bd_secret_load(const char *path, uint8_t out[BD_SECRET_LEN], char *why, size_t whylen);
/* Hex text identifying a secret without revealing it, kept in the store to detect a
 * secret file that belongs to another store. */
void bd_secret_fingerprint(const uint8_t secret[BD_SECRET_LEN], char out[65]);

/* HMAC-SHA-256 of label || 0x00 || data under the secret. Labels keep the hashes of
 * different kinds of value (passwords, SSNs, cards, tokens) apart. */
void bd_keyed_hash(const uint8_t secret[BD_SECRET_LEN], const char *label, const void *data,
                   size_t len, uint8_t out[BD_MAC_LEN]);

/* The keyed hash under which a card is stored and searched: of the SHA-256 digest of its
 * digits, so that both a full number and a Hash: search reach it. */
void bd_card_key(const uint8_t secret[BD_SECRET_LEN], const uint8_t sha256[32],
                 uint8_t out[BD_MAC_LEN]);

/* The keyed hash under which a card's CVV is stored and searched: of its digits as given
 * (3 or 4; "0123" and "123" are different values), so that cvv: finds the card while the
 * store holds no CVV in clear. */
void bd_cvv_key(const uint8_t secret[BD_SECRET_LEN], bd_slice cvv, uint8_t out[BD_MAC_LEN]);

#endif
