/* PostgreSQL email searches (issue 31): the four fixed statements, prepared once per
 * connection, that answer an email search without filters (the hot path), and the batched
 * pages of the lookup dispatcher (batch.c, batch_sql.h) that are those statements' pages
 * byte for byte, with the reading of their binary rows. Split from records.c (one concern
 * per file); records.c sends a search here when pg_plain_email says a fixed statement
 * answers it. */
#include "store/pg/pg_impl.h"
#include "store/pg/batch_sql.h"
#include "store/pg/records_email.h"

/* An integer field of a binary result (smallint, integer or bigint: big-endian). */
static int64_t binary_int(const PGresult *res, int row, int col)
{
    const unsigned char *v = (const unsigned char *)PQgetvalue(res, row, col);
    int len = PQgetlength(res, row, col);
    uint64_t u = len > 0 && (v[0] & 0x80) ? UINT64_MAX : 0; /* sign-extended */
    for (int i = 0; i < len && i < 8; i++)
        u = (u << 8) | v[i];
    return (int64_t)u;
}

/* ---- email searches ----------------------------------------------------------------- */

/* An email search without filters (scenario 1, the hot path) runs one of four fixed
 * statements, prepared once per connection: no SQL text is written or looked up per
 * request. Each is one backward range scan of records_by_email; a first page counts its
 * rows in the same pass (count(*) OVER (): every record of the email goes through the
 * window before the LIMIT, a few per email, where a count subquery descended the index a
 * second time). The owner key is named only where searches are routed (a Citus cluster,
 * pg_store.routed), to prune the statement to the email's shard; on one server it is
 * implied by the email (owner.c) and checking it cost a heap visit per row. Results come
 * back binary. Columns: the record's (RECORD_ROW_COLUMNS), the data version (16), the
 * count (17, first page only). Parameters: $1 the email, then the position (date, id) of a
 * next page, the limit, and the owner key last. */
#define EMAIL_PAGE_AT(version, count, where)                                                       \
    "SELECT " RECORD_ROW_COLUMNS ", " version count " FROM records r "                             \
    "WHERE r.email = $1" where " ORDER BY r.breach_date DESC, r.id DESC"
#define EMAIL_PAGE(count, where) EMAIL_PAGE_AT(PG_DATA_VERSION_SQL, count, where)
#define EMAIL_AFTER " AND (r.breach_date, r.id) < ($2::integer, $3::bigint)"
static const pg_stmt EMAIL_FIRST = {PG_Q_EMAIL_FIRST,
                                    EMAIL_PAGE(", count(*) OVER ()", "") " LIMIT $2"};
static const pg_stmt EMAIL_NEXT = {PG_Q_EMAIL_NEXT, EMAIL_PAGE("", EMAIL_AFTER) " LIMIT $4"};
static const pg_stmt EMAIL_FIRST_ROUTED = {
    PG_Q_EMAIL_FIRST_ROUTED, EMAIL_PAGE(", count(*) OVER ()", " AND r.ok = $3") " LIMIT $2"};
static const pg_stmt EMAIL_NEXT_ROUTED = {PG_Q_EMAIL_NEXT_ROUTED,
                                          EMAIL_PAGE("", EMAIL_AFTER " AND r.ok = $5") " LIMIT $4"};
/* The routed pages as a worker reads them from a shard's table (direct.c): the same columns
 * and parameters, the data version from v, the one row (or none) of direct.c's placement
 * check, so that a moved shard answers no row at all and a shard without the email one row
 * of NULLs (a count of 0). Formats: %s the check, %lld the shard. */
#define DIRECT_PAGE(count, on, limit)                                                              \
    "SELECT " RECORD_ROW_COLUMNS ", v.value" count " FROM (%s) v LEFT JOIN records_%lld r "        \
    "ON r.email = $1" on " ORDER BY r.breach_date DESC, r.id DESC LIMIT " limit
#define DIRECT_FIRST DIRECT_PAGE(", count(r.id) OVER ()", " AND r.ok = $3", "$2")
#define DIRECT_NEXT DIRECT_PAGE("", EMAIL_AFTER " AND r.ok = $5", "$4")

/* Whether q is an email search that a fixed statement answers: no filter of any kind and
 * no tenant's scope. */
bool pg_plain_email(const bd_record_query *q)
{
    if (q->field != BD_FIELD_EMAIL || q->scope_tenant)
        return false;
    for (int f = 0; f < BD_FIELD_COUNT; f++)
        if (q->filter[f].mode != BD_FILTER_NONE)
            return false;
    return true;
}

bd_result pg_search_email(pg_store *p, const bd_record_query *q, bd_record_cb cb, void *ctx,
                          int64_t *found)
{
    pg_params pp = {.result_format = 1};
    pg_param_text(&pp, q->key);
    if (q->has_after) {
        pg_param_int(&pp, q->after_date);
        pg_param_int(&pp, q->after_id);
    }
    pg_param_int(&pp, q->limit);
    uint8_t ok[PG_OWNER_KEY_LEN];
    if (p->routed) {
        pg_email_owner_key(q->key, ok);
        pg_param_text(&pp, (bd_slice){(const char *)ok, sizeof ok});
    }
    const pg_stmt *st = p->routed ? (q->has_after ? &EMAIL_NEXT_ROUTED : &EMAIL_FIRST_ROUTED)
                                  : (q->has_after ? &EMAIL_NEXT : &EMAIL_FIRST);
    PGresult *res;
    int rows = 0;
    bd_result r = BD_ERR_BUSY;
    if (p->direct)
        r = pg_direct_run(p, ok, sizeof ok, q->has_after ? PG_DIRECT_EMAIL_NEXT
                                                         : PG_DIRECT_EMAIL_FIRST, &pp, &res);
    if (r != BD_OK && (r = pg_run(p, st, &pp, &res)) != BD_OK)
        return r;
    if (PQntuples(res) > 0) {
        pg_note_version(p, pg_slice(res, 0, 16));
        if (found)
            *found = binary_int(res, 0, 17);
        /* a direct read of a shard without the email: its one row of NULLs */
        rows = PQgetisnull(res, 0, 0) ? 0 : PQntuples(res);
    }
    pg_record_rows(res, 0, rows, cb, ctx);
    PQclear(res);
    return BD_OK;
}

/* The same pages for many emails in one statement, for the lookup dispatcher (batch.c):
 * $1 the emails (a text array), $2 each one's limit, and for pages after a position $3 and
 * $4 each one's (date, id). One row per record, in the fixed statements' columns (record,
 * data version, count), then the email's ordinal (18); an email without records gives one
 * row whose id is NULL. Each email's page is the fixed statement's own range scan, LATERAL. */
#define EMAIL_BATCH_AT(version, table, args, cols, count, where)                                   \
    "SELECT " RECORD_ROW_COLUMNS ", " version ", r.n, k.i FROM unnest(" args                      \
    ") WITH ORDINALITY AS k(" cols ", i) LEFT JOIN LATERAL (SELECT " RECORD_ROW_COLUMNS count     \
    " AS n FROM " table " r WHERE r.email = k.email" where                                         \
    " ORDER BY r.breach_date DESC, r.id DESC LIMIT k.lim) r ON true "                              \
    "ORDER BY k.i, r.breach_date DESC, r.id DESC"
#define BATCH_FIRST(version, table)                                                                \
    EMAIL_BATCH_AT(version, table, "$1::text[], $2::integer[]", "email, lim",                      \
                   ", count(*) OVER ()", "")
#define BATCH_NEXT(version, table)                                                                 \
    EMAIL_BATCH_AT(version, table, "$1::text[], $2::integer[], $3::integer[], $4::bigint[]",       \
                   "email, lim, d, after", ", 0::bigint",                                          \
                   " AND (r.breach_date, r.id) < (k.d, k.after)")
const char *const pg_email_batch_first_sql = BATCH_FIRST(PG_DATA_VERSION_SQL, "records");
const char *const pg_email_batch_next_sql = BATCH_NEXT(PG_DATA_VERSION_SQL, "records");
/* The same on one shard's table on its worker (the dispatcher's direct reads, batch_direct.c):
 * the version is direct.c's placement check as a value, NULL on every row when the shard
 * has left that worker; the owner key is not named (a shard's table is one shard). */
const char *const pg_email_direct_sql[PG_DIRECT__COUNT] = {
    DIRECT_FIRST, DIRECT_NEXT, BATCH_FIRST("(%s)", "records_%lld"),
    BATCH_NEXT("(%s)", "records_%lld")};

/* An integer column of either result format. */
static int64_t int_at(const PGresult *res, int row, int col)
{
    return PQfformat(res, col) ? binary_int(res, row, col) : pg_int(res, row, col);
}

void pg_record_rows(PGresult *res, int first, int n, bd_record_cb cb, void *ctx)
{
    for (int i = first; i < first + n; i++) {
        bd_record_row row;
        row.id = int_at(res, i, 0);
        row.breach_date = (int32_t)int_at(res, i, 1);
        row.user_name = pg_slice(res, i, 2);
        row.first_name = pg_slice(res, i, 3);
        row.last_name = pg_slice(res, i, 4);
        row.email = pg_slice(res, i, 5);
        row.email_domain = pg_slice(res, i, 6);
        row.phone_number = pg_slice(res, i, 7);
        row.ip_address = pg_slice(res, i, 8);
        row.bitcoin_address = pg_slice(res, i, 9);
        row.password_masked = pg_slice(res, i, 10);
        row.password_hash = pg_slice(res, i, 11);
        row.ssn_masked = pg_slice(res, i, 12);
        row.other_attributes = pg_slice(res, i, 13);
        row.severity = (bd_severity)int_at(res, i, 14);
        row.breach_id = int_at(res, i, 15);
        if (cb(ctx, &row))
            break;
    }
}

int64_t pg_binary_int(const PGresult *res, int row, int col)
{
    return binary_int(res, row, col);
}
