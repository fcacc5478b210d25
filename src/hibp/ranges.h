/* The Pwned Passwords range door: GET /range/{prefix} at the root and under the v7 base
 * path, as the route table in http/routes.c calls it (ranges.c). */
#ifndef BD_HIBP_RANGES_H
#define BD_HIBP_RANGES_H

#include "core/slice.h"
#include "http/request.h"

struct bd_server;

/* prefix as it came in the path, checked here (5 hex digits, either case). */
void bd_handle_range(struct bd_server *srv, bd_req *rq, bd_slice prefix);

#endif
