/* The operational endpoints at the root, answered without a key: GET /healthz, /metrics
 * (Prometheus text format) and /openapi.json. Their routes are in routes.c. Only
 * src/http/ includes this. */
#ifndef BD_HTTP_OPERATIONS_H
#define BD_HTTP_OPERATIONS_H

#include "http/request.h"

struct bd_server;

void bd_handle_health(struct bd_server *srv, bd_req *rq, bd_slice arg);
void bd_handle_metrics(struct bd_server *srv, bd_req *rq, bd_slice arg);
/* The document of this API, as the server was given it at start. */
void bd_handle_openapi(struct bd_server *srv, bd_req *rq, bd_slice arg);

#endif
