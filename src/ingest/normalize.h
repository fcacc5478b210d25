/* Identity types of breach-search and the normalisation that makes a searched value and an
 * imported value compare equal (PRODUCT.md section 2, the `type` match-rule table). */
#ifndef BD_INGEST_NORMALIZE_H
#define BD_INGEST_NORMALIZE_H

#include <stdbool.h>
#include <stddef.h>

#include "core/result.h"
#include "core/slice.h"

typedef enum {
    BD_ID_EMAIL,
    BD_ID_EMAIL_DOMAIN,
    BD_ID_PHONE,
    BD_ID_USERNAME,
    BD_ID_IP,
    BD_ID_SSN,
    BD_ID_PASSWORD,
    BD_ID_PASSWORD_HASH,
    BD_ID_BITCOIN,
    BD_ID_WEBSITE_DOMAIN, /* an extension of the interface (issue 35) */
    BD_ID_COUNT
} bd_id_type;

#define BD_NORM_MAX 512 /* largest normalised value in bytes, NUL excluded */

/* Maps a `type` query value (email, email_domain, phone_number, username, ip_address,
 * social_security_number, password, password_hash, bitcoin_address, website_domain, and the aliases
 * phonenumber, ipaddress) to its type. ASCII case is ignored (HEROIC clients send EMAIL,
 * Email_Domain). Returns false (and leaves *out alone)
 * when s is not one of them. */
bool bd_id_type_parse(bd_slice s, bd_id_type *out);

/* Field/parameter name of a type: "email", "email_domain", "phone_number", "username" (sic: the
 * import column is user_name), "ip_address", "social_security_number", "password",
 * "password_hash", "bitcoin_address", "website_domain". A static string; "" for a value outside the enum. */
const char *bd_id_type_name(bd_id_type t);

/* Normalises v as a value of type t into out (NUL-terminated; out has BD_NORM_MAX+1 bytes) and
 * sets *out_len. Nothing is allocated.
 *
 *   email            surrounding ASCII whitespace trimmed, ASCII lower-cased, exactly one '@',
 *                    a local part without spaces or control characters, a host-name domain
 *   email_domain     trimmed, lower-cased, one leading '@' and one trailing '.' dropped; a host
 *                    name: labels of 1..63 [a-z0-9-] not starting or ending in '-', at least two
 *                    labels, at most 253 bytes
 *   phone_number     spaces + - ( ) . dropped, nothing else but digits; 7..15 digits
 *   username         trimmed, ASCII lower-cased (non-ASCII bytes are kept and compared
 *                    byte-exact), non-empty, no control characters
 *   ip_address       IPv4 or IPv6 (no zone id, no prefix) in inet_ntop's canonical form, so
 *                    2001:DB8::1 and 2001:db8:0:0:0:0:0:1 both give 2001:db8::1
 *   ssn              dashes and spaces dropped; exactly 9 digits
 *   password         the exact bytes, not trimmed; non-empty
 *   password_hash    trimmed; lower-cased when it is all hex digits, else kept exact (crypt
 *                    strings are case-sensitive); non-empty, no whitespace inside
 *   bitcoin_address  trimmed, exact; 14..90 ASCII letters and digits
 *   website_domain   the host of a URL or a bare host (ingest/website.h): IDNA to ASCII,
 *                    lower-cased, no scheme, user info, port, path or trailing dot
 *
 * Every type rejects values holding a NUL byte and values longer than BD_NORM_MAX bytes.
 * Returns BD_OK, or BD_ERR_INVALID when v is not a valid value of its type: *why then points to
 * a constant sentence a person can act on ("an email address must look like
 * name@example.com"), and out holds an empty string. why may be NULL. */
bd_result bd_normalize(bd_id_type t, bd_slice v, char *out, size_t *out_len, const char **why);

#endif
