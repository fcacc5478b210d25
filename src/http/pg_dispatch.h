/* The server's PostgreSQL lookup dispatcher (store/pg_batch.h), set by its service
 * (app/svc_pg_batch.c) before the listener starts and cleared after it stopped: an email
 * search that a fixed statement answers then waits for it with its connection suspended,
 * holding no worker thread; so does a card BIN page (v7/cards.c). */
#ifndef BD_HTTP_PG_DISPATCH_H
#define BD_HTTP_PG_DISPATCH_H

#include "http/server.h"

struct bd_pg_batch;
void bd_server_set_pg_batch(bd_server *srv, struct bd_pg_batch *b);
struct bd_pg_batch *bd_server_pg_batch(const bd_server *srv);

#endif
