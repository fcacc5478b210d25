/* One buffer of rows in COPY's binary format sent as one COPY FROM STDIN: the password
 * ranges' merged buckets and the emails' hashes, which are built whole before they go. The
 * record and card loads stream through copy.c's staged batches instead. */
#include <libpq-fe.h>

#include "store/pg/pg_impl.h"

const char pg_copy_binary_header[PG_COPY_HEADER_LEN] = "PGCOPY\n\377\r\n\0\0\0\0\0\0\0\0\0";

/* libpq takes the rows a slice at a time, so a large buffer is never copied whole again. */
#define SLICE (1u << 20)

bd_result pg_copy_in(pg_store *p, const char *copy_sql, const bd_buf *rows)
{
    PGresult *res = PQexec(p->conn, copy_sql);
    bool in = PQresultStatus(res) == PGRES_COPY_IN;
    PQclear(res);
    if (!in)
        return pg_failed(p, NULL);
    static const uint16_t trailer = 0xFFFF; /* the same either way round */
    bool sent = PQputCopyData(p->conn, pg_copy_binary_header, PG_COPY_HEADER_LEN) == 1;
    for (size_t at = 0; sent && at < rows->len; at += SLICE) {
        size_t n = rows->len - at < SLICE ? rows->len - at : SLICE;
        sent = PQputCopyData(p->conn, rows->data + at, (int)n) == 1;
    }
    sent = sent && PQputCopyData(p->conn, (const char *)&trailer, 2) == 1;
    if (PQputCopyEnd(p->conn, sent ? NULL : "breachd: the rows could not be sent") != 1)
        sent = false;
    return pg_copy_outcome(p, sent ? BD_OK : BD_ERR_BUSY);
}

bd_result pg_copy_outcome(pg_store *p, bd_result r)
{
    PGresult *res;
    while ((res = PQgetResult(p->conn)) != NULL) {
        if (r == BD_OK && PQresultStatus(res) != PGRES_COMMAND_OK)
            r = pg_failed(p, res);
        else
            PQclear(res);
        if (PQstatus(p->conn) == CONNECTION_BAD)
            break;
    }
    return r == BD_OK && PQstatus(p->conn) == CONNECTION_BAD ? BD_ERR_BUSY : r;
}
