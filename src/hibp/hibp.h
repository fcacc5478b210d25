/* The Have I Been Pwned API v3 over the breachd corpus (docs/API.md, "Have I Been Pwned API
 * v3"): what its two files share. hibp.c answers the catalog requests (breaches, breach,
 * dataclasses, subscription status); hibp_account.c the searches (one email's breaches, one
 * domain's breached aliases). Their routes are in routes.c. Only src/http/ includes this. */
#ifndef BD_HIBP_HIBP_H
#define BD_HIBP_HIBP_H

#include <stdbool.h>
#include <stdint.h>

#include "http/request.h"
#include "ingest/normalize.h"

/* Writes a breach in HIBP's model: Name, Title, Domain, BreachDate, AddedDate, ... */
void bd_hibp_write_breach(bd_json *w, const bd_breach_row *b);
/* An optional true/false parameter (any case): *out is dflt when absent; 400 when it is
 * anything else. Returns false when the reply has been written. */
bool bd_hibp_bool_param(bd_req *rq, const char *name, bool dflt, bool *out);
/* Whether the breach's domain is domain, ASCII case ignored (a breach without one is not). */
bool bd_hibp_domain_is(const bd_breach_row *b, bd_slice domain);
/* HIBP's "not found": 404 with an empty body. */
void bd_hibp_not_found(bd_req *rq);
struct bd_server;
/* An account path segment as an email searched by the calling key: normalised into email
 * (*key points into it), in the key's scope and noted for the access and lookup logs.
 * Returns false when the reply (400, 403) has been written. */
bool bd_hibp_email_account(struct bd_server *srv, bd_req *rq, bd_slice account,
                           char email[BD_NORM_MAX + 1], bd_slice *key);

/* The handlers (routes.h). */
/* GET {v3}/breaches, GET {v3}/breach/{name}, GET {v3}/dataclasses, and
 * GET {v3}/subscription/status (hibp.c) */
void bd_hibp_breaches(struct bd_server *srv, bd_req *rq, bd_slice arg);
void bd_hibp_breach(struct bd_server *srv, bd_req *rq, bd_slice name);
void bd_hibp_dataclasses(struct bd_server *srv, bd_req *rq, bd_slice arg);
void bd_hibp_subscription(struct bd_server *srv, bd_req *rq, bd_slice arg);
/* GET {v3}/subscribeddomains (hibp.c): a tenant key's domains in HIBP's shape; [] for a key
 * without a tenant. */
void bd_hibp_subscribed_domains(struct bd_server *srv, bd_req *rq, bd_slice arg);
/* GET {v3}/breachedaccount/{account} (hibp_account.c) */
void bd_hibp_breached_account(struct bd_server *srv, bd_req *rq, bd_slice account);
/* GET {v3}/breacheddomain/{domain}: enterprise keys only; a domain of more than
 * --hibp-domain-max records is refused. */
void bd_hibp_breached_domain(struct bd_server *srv, bd_req *rq, bd_slice domain);
/* GET {v3}/latestbreach (hibp_latest.c): the breach with the greatest AddedDate; 404 when the
 * corpus has none. */
void bd_hibp_latest_breach(struct bd_server *srv, bd_req *rq, bd_slice arg);
/* GET {v3}/breachedaccount/range/{prefix} (hibp_range.c): the SHA-1 suffixes and breach Names of the stored addresses under a 6-digit
 * hex prefix; enterprise or tenant keys; 404 empty when none. */
void bd_hibp_breached_account_range(struct bd_server *srv, bd_req *rq, bd_slice prefix);
/* GET {v3}/stealerlogsbyemail/{email}, /stealerlogsbywebsitedomain/{domain},
 * /stealerlogsbyemaildomain/{domain} (hibp_stealer.c): records' website hosts. */
void bd_hibp_stealer_by_email(struct bd_server *srv, bd_req *rq, bd_slice email);
void bd_hibp_stealer_by_website(struct bd_server *srv, bd_req *rq, bd_slice domain);
void bd_hibp_stealer_by_email_domain(struct bd_server *srv, bd_req *rq, bd_slice domain);
/* GET {v3}/pasteaccount/{email} (hibp_pastes.c): the email's pastes; 404 empty when none. */
void bd_hibp_paste_account(struct bd_server *srv, bd_req *rq, bd_slice account);

#endif
