/* One webhook POST with libcurl: the destination resolved and checked against the policy
 * here, its addresses pinned for the connection (CURLOPT_RESOLVE) and checked again as the
 * socket opens (CURLOPT_OPENSOCKETFUNCTION), so a name that resolves to a public address
 * when checked and to an internal one a moment later (DNS rebinding) cannot reach the
 * internal one. Redirects are not followed, proxies from the environment are not used,
 * only http and https are spoken; connect 5 s, whole request 10 s.
 *
 * Ownership: a bd_webhook_sender is one thread's (one curl handle, reused so that
 * connections to a receiver are kept alive between deliveries). */
#ifndef BD_WEBHOOK_SEND_H
#define BD_WEBHOOK_SEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/result.h"
#include "core/slice.h"
#include "webhook/policy.h"

typedef struct bd_webhook_sender bd_webhook_sender;

/* NULL when libcurl cannot be set up. policy is borrowed and must outlive the sender. */
bd_webhook_sender *bd_webhook_sender_new(const bd_webhook_policy *policy);
void bd_webhook_sender_free(bd_webhook_sender *s);

/* POSTs body (application/json) to url with the event id, timestamp and signature headers.
 * *status gets the HTTP status (0 when none came). BD_OK for a 2xx; BD_ERR_INVALID when the
 * url or its addresses are refused by the policy (why: a constant sentence; no use
 * retrying soon, but a DNS change may fix it); BD_ERR_IO for anything else. */
bd_result bd_webhook_post(bd_webhook_sender *s, bd_slice url, bd_slice event_id, int64_t timestamp,
                          const char *signature, bd_slice body, long *status, const char **why);
/* The same POST with the header lines extra (nextra of them, "Name: value") in place of
 * the event id, timestamp and signature: what the Slack, Teams and Splunk HEC formats send. */
bd_result bd_webhook_post_headers(bd_webhook_sender *s, bd_slice url, const char *const *extra,
                                  size_t nextra, bd_slice body, long *status, const char **why);

/* The SMTP server breachd sends email alerts through (breachd --smtp-url, --smtp-from,
 * --smtp-credentials, --smtp-insecure on). */
typedef struct {
    bool tls;        /* smtps://: TLS from the start; smtp:// upgrades with STARTTLS */
    char host[256];  /* without brackets for an IPv6 literal */
    int port;        /* 465 for smtps, 25 for smtp unless given */
    const char *url; /* as given */
    const char *from;
    const char *user, *password; /* NULL: no AUTH */
    bool insecure; /* smtp:// without STARTTLS: a loopback host only (bd_smtp_parse) */
} bd_smtp_config;

/* Parses url ("smtp://HOST[:PORT]" or "smtps://HOST[:PORT]", an optional "/" after) into c.
 * insecure: refused (BD_ERR_INVALID) unless the host is localhost or a loopback address, so
 * credentials and alerts never cross a network in clear. *why a constant sentence. */
bd_result bd_smtp_parse(const char *url, bool insecure, bd_smtp_config *c, const char **why);

/* Sends message (RFC 5322 text, CRLF lines) to rcpt through smtp: its host resolved and
 * checked against the policy and pinned as for a webhook, STARTTLS required on smtp://
 * (unless insecure), the certificate verified, AUTH with the credentials when given;
 * connect 5 s, whole transfer 10 s. *status gets the server's last reply code (250 when
 * taken). BD_OK when taken; BD_ERR_INVALID when the policy refuses the server's addresses;
 * BD_ERR_IO otherwise (why: a constant sentence; never the password). */
bd_result bd_webhook_mail(bd_webhook_sender *s, const bd_smtp_config *smtp, bd_slice rcpt,
                          bd_slice message, long *status, const char **why);

#endif
