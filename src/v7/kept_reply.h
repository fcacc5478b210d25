/* The replies a worker keeps per data version (http/reply_cache.h): the catalog and the
 * status are the same bytes for every request until the data version moves. What their
 * handlers share: the data version read (on PostgreSQL through the lookup dispatcher, the
 * connection suspended, when other searches are in progress, so that the requests waiting at
 * one moment share one read and no worker waits on it), then the worker's kept reply for it,
 * or the reply built inside a read view and kept. */
#ifndef BD_V7_KEPT_REPLY_H
#define BD_V7_KEPT_REPLY_H

#include <stdbool.h>
#include <stdint.h>

#include "core/result.h"
#include "http/request.h"

struct bd_server;

typedef struct {
    /* Writes the reply inside an open read view (a 200 is kept; another status is sent as
     * it is); a store error is replied by the caller. variant as given below. */
    bd_result (*build)(bd_req *rq, int64_t variant);
    bool counts_items; /* rq->records is the reply's items, for the access log */
    bool gzip;         /* keep a gzip-coded body beside it */
} bd_kept_reply_kind;

/* Replies with the reply of kind k for variant (what tells apart replies of one resource),
 * kept per data version (without a reply cache, built afresh each time). k lives as long
 * as the program (the deferral keeps a pointer to it). */
void bd_reply_kept(struct bd_server *srv, bd_req *rq, const bd_kept_reply_kind *k, int64_t variant);

#endif
