/* The search pages as CSV (Accept: text/csv, accept.h): a header row, then one row per
 * breach record or card, with the same masked values the JSON page has. The envelope's
 * numbers (records found, paging token, page counts) go into X- headers. Only src/http/
 * includes this. */
#ifndef BD_V7_SEARCH_CSV_H
#define BD_V7_SEARCH_CSV_H

#include "http/request.h"

/* The breach of the records written last, so a page of one breach looks it up once. */
typedef struct {
    int64_t id; /* 0: none yet */
    char uuid[BD_UUID_LEN + 1];
    char name[256];
    bd_result err;
} bd_csv_breach_memo;

/* Starts a CSV reply: 200, the content type and the header row of records. */
void bd_csv_records_begin(bd_req *rq);
/* One record's row; reads its breach (in the open read view) unless memo holds it. */
bd_result bd_csv_record(bd_req *rq, bd_csv_breach_memo *memo, const bd_record_row *r);

/* The same for cards. */
void bd_csv_cards_begin(bd_req *rq);
bd_result bd_csv_card(bd_req *rq, const bd_card_row *c);

/* Adds a header with a number value. */
void bd_reply_header_int(bd_req *rq, const char *name, int64_t v);

#endif
