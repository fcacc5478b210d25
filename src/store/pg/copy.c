/* Streaming record puts: inside a write transaction, record_put sends each row into a
 * temporary staging table with COPY (binary format: no escaping, no parsing on the server)
 * and costs no round trip. Before any other statement runs on the connection (the run
 * functions of exec.c call pg_copy_flush first) and at commit, the COPY ends and ONE
 * statement moves the staged rows into records, skipping duplicates by their dedup key,
 * and moves the domain counts.
 *
 * Duplicates are therefore decided when the rows move, not when they are put: a put
 * reports the row as inserted, and the rows that turned out to be duplicates are counted
 * for bd_store_take_late_duplicates once the transaction commits. Two puts of the same
 * record in one batch count as one record and one duplicate, as they did row by row (the
 * move inserts in put order; ON CONFLICT DO NOTHING skips the second).
 *
 * The staging table lives as long as the connection (ON COMMIT DELETE ROWS empties it at
 * every commit); rows already moved earlier in the same transaction are truncated away
 * before the next COPY starts. A transaction that puts more than PG_COPY_MOVE_ROWS records
 * (a --bulk load is one transaction) moves them in steps of that size, so the staging table
 * never holds a whole load. */
#include <arpa/inet.h>
#include <poll.h>
#include <string.h>

#include "store/pg/pg_impl.h"

#define PG_COPY_MOVE_ROWS 100000 /* rows staged before they move, within one transaction */
#define PG_COPY_CHUNK 65536      /* bytes handed to libpq at once */
#define STAGE_FIELDS 21          /* the staging table's columns */

/* The staging table: records' columns in insert order, with the put order in seq. */
static const char STAGE_CREATE[] =
    "CREATE TEMP TABLE IF NOT EXISTS bd_staging(seq bigint, breach_id bigint, "
    "breach_date integer, user_name text, user_name_key text, first_name text, last_name text, "
    "email text, email_domain text, phone_number text, phone_key text, ip_address text, "
    "bitcoin_address text, password_masked text, password_hmac bytea, password_hash text, "
    "ssn_masked text, ssn_hmac bytea, other_attributes text, severity smallint, dedup bytea) "
    "ON COMMIT DELETE ROWS";

#define RECORD_COLUMNS                                                                             \
    "breach_id, breach_date, user_name, user_name_key, first_name, last_name, email, "             \
    "email_domain, phone_number, phone_key, ip_address, bitcoin_address, password_masked, "        \
    "password_hmac, password_hash, ssn_masked, ssn_hmac, other_attributes, severity, dedup"

/* The move: the staged rows in put order, a duplicate (stored before, or staged earlier in
 * the batch) skipped, and the domain counts moved by what went in ($1: counts are kept,
 * i.e. no bulk load recounts them at its end). Returns how many rows went in. */
static const char STAGE_MOVE[] =
    "WITH ins AS (INSERT INTO records(" RECORD_COLUMNS ") SELECT " RECORD_COLUMNS
    " FROM pg_temp.bd_staging ORDER BY seq ON CONFLICT (dedup) DO NOTHING "
    "RETURNING email_domain), "
    "counted AS (INSERT INTO domain_counts(domain, n) SELECT email_domain, count(*) FROM ins "
    "WHERE email_domain IS NOT NULL AND $1::boolean GROUP BY email_domain "
    "ON CONFLICT (domain) DO UPDATE SET n = domain_counts.n + excluded.n) "
    "SELECT count(*) FROM ins";

static const char BINARY_HEADER[19] = "PGCOPY\n\377\r\n\0\0\0\0\0\0\0\0\0";

static bd_result put_u16(bd_buf *b, uint16_t v)
{
    uint16_t n = htons(v);
    return bd_buf_append(b, &n, sizeof n);
}

static bd_result put_u32(bd_buf *b, uint32_t v)
{
    uint32_t n = htonl(v);
    return bd_buf_append(b, &n, sizeof n);
}

static bd_result put_int(bd_buf *b, int64_t v, int size)
{
    bd_result r = put_u32(b, (uint32_t)size);
    if (r == BD_OK && size == 8)
        r = put_u32(b, (uint32_t)((uint64_t)v >> 32));
    if (r == BD_OK && size >= 4)
        r = put_u32(b, (uint32_t)v);
    if (r == BD_OK && size == 2)
        r = put_u16(b, (uint16_t)v);
    return r;
}

/* A text or bytea field: its length and bytes, or -1 for NULL. */
static bd_result put_bytes(bd_buf *b, bd_slice v)
{
    if (!v.ptr)
        return put_u32(b, UINT32_MAX);
    if (v.len > INT32_MAX)
        return BD_ERR_LIMIT;
    bd_result r = put_u32(b, (uint32_t)v.len);
    return r == BD_OK ? bd_buf_append(b, v.ptr, v.len) : r;
}

/* What a failed COPY call left: the connection's loss, or the server's refusal. */
static bd_result copy_failed(pg_store *p, const char *what)
{
    if (PQstatus(p->conn) == CONNECTION_BAD)
        return BD_ERR_BUSY;
    const char *msg = PQerrorMessage(p->conn);
    fprintf(stderr, "store: %s: %.*s\n", what, (int)strcspn(msg, "\n"), msg);
    return BD_ERR_STORE;
}

/* Hands the rows built so far to libpq, which sends them as its buffer fills. */
static bd_result send_out(pg_store *p)
{
    bd_buf *b = &p->copy.out;
    if (b->len == 0)
        return BD_OK;
    int rc = PQputCopyData(p->conn, b->data, (int)b->len);
    bd_buf_reset(b);
    return rc == 1 ? BD_OK : copy_failed(p, "copy");
}

/* Starts the COPY into an empty staging table. */
static bd_result start(pg_store *p)
{
    bd_result r = BD_OK;
    if (!p->copy.table) {
        r = pg_exec(p, STAGE_CREATE);
        p->copy.table = r == BD_OK;
    }
    if (r == BD_OK && p->copy.dirty) {
        r = pg_exec(p, "TRUNCATE pg_temp.bd_staging");
        p->copy.dirty = r != BD_OK;
    }
    if (r != BD_OK)
        return r;
    PGresult *res = PQexec(p->conn, "COPY pg_temp.bd_staging FROM STDIN (FORMAT binary)");
    if (PQresultStatus(res) != PGRES_COPY_IN) {
        PQclear(res);
        return copy_failed(p, "copy");
    }
    PQclear(res);
    p->copy.open = true;
    p->copy.staged = 0;
    bd_buf_reset(&p->copy.out);
    return bd_buf_append(&p->copy.out, BINARY_HEADER, sizeof BINARY_HEADER);
}

/* Ends the open COPY: sends the trailer and reads the outcome. */
static bd_result end(pg_store *p)
{
    p->copy.open = false;
    bd_result r = put_u16(&p->copy.out, UINT16_MAX);
    if (r == BD_OK)
        r = send_out(p);
    if (r != BD_OK) {
        bd_buf_reset(&p->copy.out);
        if (PQstatus(p->conn) == CONNECTION_OK)
            PQputCopyEnd(p->conn, "breachd: the rows could not be sent");
    } else if (PQputCopyEnd(p->conn, NULL) != 1) {
        r = copy_failed(p, "copy end");
    }
    PGresult *res;
    while ((res = PQgetResult(p->conn)) != NULL) {
        if (r == BD_OK && PQresultStatus(res) != PGRES_COMMAND_OK)
            r = pg_failed(p, res);
        else
            PQclear(res);
        if (PQstatus(p->conn) == CONNECTION_BAD)
            break;
    }
    if (r == BD_OK && PQstatus(p->conn) == CONNECTION_BAD)
        r = BD_ERR_BUSY;
    return r;
}

/* Moves the staged rows into records; what did not go in was a duplicate. */
static bd_result move(pg_store *p, int64_t staged)
{
    pg_params pp = {0};
    pg_param_str(&pp, p->bulk_records ? "false" : "true");
    PGresult *res;
    bd_result r = pg_run_sql(p, STAGE_MOVE, &pp, true, &res);
    if (r != BD_OK)
        return r;
    p->copy.dirty = true;
    p->copy.pending_late += staged - pg_int(res, 0, 0);
    PQclear(res);
    return BD_OK;
}

bd_result pg_copy_flush(pg_store *p)
{
    if (!p->copy.open)
        return BD_OK;
    int64_t staged = p->copy.staged;
    p->copy.staged = 0;
    bd_result r = end(p); /* the COPY is over: move's own statement runs as usual */
    return r == BD_OK && staged > 0 ? move(p, staged) : r;
}

/* The server says nothing during a COPY unless it is failing (an error, or the end of the
 * connection) or has a notice: then the COPY ends now, and the put reports a failure. */
static bd_result check_server(pg_store *p)
{
    struct pollfd fd = {.fd = PQsocket(p->conn), .events = POLLIN};
    if (PQstatus(p->conn) == CONNECTION_OK && poll(&fd, 1, 0) == 0)
        return BD_OK;
    return pg_copy_flush(p);
}

bd_result pg_copy_put(pg_store *p, int64_t breach_id, int32_t date, const bd_record_in *r)
{
    bd_result res = BD_OK;
    if (p->copy.open && p->copy.staged >= PG_COPY_MOVE_ROWS)
        res = pg_copy_flush(p);
    if (res == BD_OK && !p->copy.open)
        res = start(p);
    if (res != BD_OK)
        return res;
    bd_buf *b = &p->copy.out;
    size_t mark = b->len;
    res = put_u16(b, STAGE_FIELDS);
    if (res == BD_OK)
        res = put_int(b, p->copy.staged, 8);
    if (res == BD_OK)
        res = put_int(b, breach_id, 8);
    if (res == BD_OK)
        res = put_int(b, date, 4);
    const bd_slice *text[] = {
        &r->user_name,     &r->user_name_key,   &r->first_name,      &r->last_name,
        &r->email,         &r->email_domain,    &r->phone_number,    &r->phone_key,
        &r->ip_address,    &r->bitcoin_address, &r->password_masked, &r->password_hmac,
        &r->password_hash, &r->ssn_masked,      &r->ssn_hmac,        &r->other_attributes,
    };
    for (size_t i = 0; i < sizeof text / sizeof text[0] && res == BD_OK; i++)
        res = put_bytes(b, *text[i]);
    if (res == BD_OK)
        res = put_int(b, (int64_t)r->severity, 2);
    if (res == BD_OK)
        res = put_bytes(b, (bd_slice){(const char *)r->dedup, sizeof r->dedup});
    if (res != BD_OK) {
        b->len = mark; /* the row is not staged; the COPY goes on */
        b->data[mark] = '\0';
        return res;
    }
    p->copy.staged++;
    if (b->len >= PG_COPY_CHUNK)
        res = send_out(p);
    return res == BD_OK ? check_server(p) : res;
}

bool pg_copy_missing(pg_store *p, const char *uuid)
{
    for (int i = 0; i < PG_COPY_MISSING; i++)
        if (strcmp(p->copy.missing[i], uuid) == 0)
            return true;
    return false;
}

void pg_copy_note_missing(pg_store *p, const char *uuid)
{
    memcpy(p->copy.missing[p->copy.next_missing], uuid, BD_UUID_LEN + 1);
    p->copy.next_missing = (p->copy.next_missing + 1) % PG_COPY_MISSING;
}

void pg_copy_forget_missing(pg_store *p)
{
    memset(p->copy.missing, 0, sizeof p->copy.missing);
}

void pg_copy_end_transaction(pg_store *p, bool committed)
{
    if (p->copy.open) { /* a rollback: nothing staged may land */
        p->copy.open = false;
        bd_buf_reset(&p->copy.out);
        if (PQstatus(p->conn) == CONNECTION_OK) {
            PQputCopyEnd(p->conn, "breachd: rolled back");
            PGresult *res;
            while ((res = PQgetResult(p->conn)) != NULL && PQstatus(p->conn) == CONNECTION_OK)
                PQclear(res);
            PQclear(res);
        }
    }
    p->copy.staged = 0;
    p->copy.dirty = false;
    if (committed)
        p->copy.late += p->copy.pending_late;
    else
        p->copy.table = false; /* it may have been created by the transaction undone */
    p->copy.pending_late = 0;
    pg_copy_forget_missing(p);
}

void pg_copy_connection_reset(pg_store *p)
{
    p->copy.table = false;
}

int64_t pg_take_late_duplicates(bd_store *s)
{
    pg_store *p = pg_of(s);
    int64_t n = p->copy.late;
    p->copy.late = 0;
    return n;
}
