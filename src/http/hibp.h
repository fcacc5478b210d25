/* The Have I Been Pwned API v3 over the breachd corpus (docs/API.md, "Have I Been Pwned API
 * v3"): what its two files share. hibp.c routes the requests and answers the catalog ones
 * (breaches, breach, dataclasses, subscription status); hibp_account.c the searches (one
 * email's breaches, one domain's breached aliases). Only src/http/ includes this. */
#ifndef BD_HTTP_HIBP_H
#define BD_HTTP_HIBP_H

#include <stdbool.h>
#include <stdint.h>

#include "http/request.h"

/* Writes a breach in HIBP's model: Name, Title, Domain, BreachDate, AddedDate, ... */
void bd_hibp_write_breach(bd_json *w, const bd_breach_row *b);
/* An optional true/false parameter (any case): *out is dflt when absent; 400 when it is
 * anything else. Returns false when the reply has been written. */
bool bd_hibp_bool_param(bd_req *rq, const char *name, bool dflt, bool *out);
/* Whether the breach's domain is domain, ASCII case ignored (a breach without one is not). */
bool bd_hibp_domain_is(const bd_breach_row *b, bd_slice domain);
/* HIBP's "not found": 404 with an empty body. */
void bd_hibp_not_found(bd_req *rq);

/* GET {v3}/breachedaccount/{account} */
void bd_hibp_breached_account(bd_req *rq, bd_slice account);
/* GET {v3}/breacheddomain/{domain}: enterprise keys only; a domain of more than
 * max_records records is refused. */
void bd_hibp_breached_domain(bd_req *rq, bd_slice domain, int64_t max_records);

#endif
