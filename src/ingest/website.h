/* The host of a website (a stealer log's URL, a mapped website column, a searched
 * website_domain) as one searchable key: IDNA to ASCII (libidn2, UTS #46 non-transitional
 * mapping), lower-cased, without scheme, user info, port, path, query, fragment or a
 * trailing dot. */
#ifndef BD_INGEST_WEBSITE_H
#define BD_INGEST_WEBSITE_H

#include <stddef.h>

#include "core/slice.h"

#define BD_WEBSITE_HOST_MAX 253 /* a host name's longest ASCII form */

/* Writes the normalised host of v (a URL, or a bare host with or without a port) into out
 * (at least BD_WEBSITE_HOST_MAX + 1 bytes, NUL-terminated) and its length into *len.
 * Returns NULL, or a constant sentence saying why v has no website domain (out then "").
 *
 *   https://User:pw@WWW.Example.COM:8443/login?x  ->  www.example.com
 *   bücher.example/                               ->  xn--bcher-kva.example
 *   android://key@com.app/                        ->  com.app
 *
 * The host must then be a host name: labels of 1 to 63 letters, digits and '-' (not first
 * or last), at least two labels, at most 253 bytes (an IPv4 address passes; an IPv6
 * literal, a one-label host like localhost, or a label with '_' do not). */
const char *bd_website_host(bd_slice v, char *out, size_t *len);

#endif
