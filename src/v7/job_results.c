/* Bulk job results (job_results.h): their rendering at download, from the stored form
 * (jobs/result_blob.h). */
#include "v7/job_results.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/csv_out.h"
#include "core/json.h"
#include "jobs/result_blob.h"
#include "v7/record_view.h"
#include "http/request.h"

#define TEXT_MAX (1u << 30)

/* ---- breaches -------------------------------------------------------------------------- */

/* Breach uuid and source name by breach_id, kept for one download: open addressing over
 * entries allocated one by one, so a pointer to one stays valid while the table grows. */
typedef struct {
    int64_t id;
    char uuid[BD_UUID_LEN + 1];
    char *name;
} breach_entry;

typedef struct {
    breach_entry **slots; /* NULL: empty */
    size_t cap, used;     /* cap a power of two */
} breach_cache;

static void cache_clear(breach_cache *c)
{
    for (size_t i = 0; i < c->cap; i++)
        if (c->slots[i]) {
            free(c->slots[i]->name);
            free(c->slots[i]);
        }
    free(c->slots);
    *c = (breach_cache){0};
}

static breach_entry **cache_slot(const breach_cache *c, int64_t id)
{
    size_t i = ((uint64_t)id * 0x9E3779B97F4A7C15ull) >> 20 & (c->cap - 1);
    while (c->slots[i] && c->slots[i]->id != id)
        i = (i + 1) & (c->cap - 1);
    return &c->slots[i];
}

static bool cache_grow(breach_cache *c)
{
    size_t cap = c->cap ? c->cap * 2 : 256;
    breach_cache bigger = {calloc(cap, sizeof(breach_entry *)), cap, c->used};
    if (!bigger.slots)
        return false;
    for (size_t i = 0; i < c->cap; i++)
        if (c->slots[i])
            *cache_slot(&bigger, c->slots[i]->id) = c->slots[i];
    free(c->slots);
    *c = bigger;
    return true;
}

static int keep_breach(void *ctx, const bd_breach_row *b)
{
    breach_entry *e = ctx;
    size_t n = b->uuid.len < BD_UUID_LEN ? b->uuid.len : BD_UUID_LEN;
    memcpy(e->uuid, b->uuid.ptr, n);
    e->uuid[n] = '\0';
    e->name = malloc(b->source_name.len + 1);
    if (e->name) {
        memcpy(e->name, b->source_name.ptr ? b->source_name.ptr : "", b->source_name.len);
        e->name[b->source_name.len] = '\0';
    }
    return 0;
}

/* The breach of id, read from the store on first use; NULL when that failed. */
static const breach_entry *breach_of(breach_cache *c, bd_store *s, int64_t id)
{
    if ((c->used + 1) * 2 > c->cap && !cache_grow(c))
        return NULL;
    breach_entry **slot = cache_slot(c, id);
    if (*slot)
        return *slot;
    breach_entry *e = calloc(1, sizeof *e);
    if (!e)
        return NULL;
    e->id = id;
    bd_result r = bd_store_breach_by_id(s, id, keep_breach, e);
    if (r != BD_OK || !e->name) {
        free(e->name);
        free(e);
        return NULL;
    }
    *slot = e;
    c->used++;
    return e;
}

/* ---- CSV ------------------------------------------------------------------------------- */

static const char CSV_HEADER[] =
    "index,type,account,found,breach_id,source_name,user_name,first_name,last_name,email,"
    "email_domain,phone_number,ip_address,bitcoin_address,password,password_hash,"
    "other_attributes,social_security_number,severity,status\r\n";

const char *bd_job_csv_header(void)
{
    return CSV_HEADER;
}

static bd_result csv_cells(bd_buf *out, const bd_record_row *r)
{
    const bd_slice cells[] = {r->user_name,     r->first_name,       r->last_name,
                              r->email,         r->email_domain,     r->phone_number,
                              r->ip_address,    r->bitcoin_address,  r->password_masked,
                              r->password_hash, r->other_attributes, r->ssn_masked};
    bd_result res = BD_OK;
    for (size_t i = 0; res == BD_OK && i < sizeof cells / sizeof cells[0]; i++) {
        res = bd_buf_append_char(out, ',');
        if (res == BD_OK)
            res = bd_csv_cell_quoted(out, cells[i]);
    }
    if (res == BD_OK)
        res = bd_buf_append_char(out, ',');
    return res == BD_OK ? bd_buf_append_str(out, bd_severity_name(r->severity)) : res;
}

/* ---- rendering ------------------------------------------------------------------------- */

/* A record of the slice, rendered once however many of its identities name it. */
typedef struct {
    const breach_entry *breach; /* NULL: not in the store (erased since) */
    size_t json_at, json_end, csv_at, csv_end;
} rendered;

/* One identity of the chunk, pointing into its blob. */
typedef struct {
    bd_slice account;
    int64_t found;
    uint32_t n;
    const uint8_t *ids; /* n little-endian ids */
} identity;

struct bd_job_render {
    breach_cache breaches;
    identity *idents; /* the chunk's, from bd_job_render_open */
    size_t nidents, cap_idents;
    int64_t *ids; /* every id of the slice, then sorted and distinct */
    size_t nids, cap_ids;
    rendered *recs; /* parallel to ids */
    size_t cap_recs;
    bd_buf json, csv; /* the records' JSON and CSV cells from breach_id on */
    int order[BD_JOB_RECORDS_MAX];
    const rendered *list[BD_JOB_RECORDS_MAX];
    bd_store *store;
    bd_result err;
};

bd_job_render *bd_job_render_new(void)
{
    bd_job_render *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    bd_buf_init(&r->json, TEXT_MAX);
    bd_buf_init(&r->csv, TEXT_MAX);
    return r;
}

void bd_job_render_free(bd_job_render *r)
{
    if (!r)
        return;
    cache_clear(&r->breaches);
    free(r->idents);
    free(r->ids);
    free(r->recs);
    bd_buf_free(&r->json);
    bd_buf_free(&r->csv);
    free(r);
}

static bool reserve(void **p, size_t *cap, size_t want, size_t size)
{
    if (want <= *cap)
        return true;
    size_t n = *cap ? *cap : 1024;
    while (n < want)
        n *= 2;
    void *q = realloc(*p, n * size);
    if (!q)
        return false;
    *p = q;
    *cap = n;
    return true;
}

/* Reads the blob into r->idents; *count gets the identities. */
static bd_result parse(bd_job_render *r, bd_slice blob, size_t *count)
{
    const uint8_t *p = (const uint8_t *)blob.ptr, *end = p + blob.len;
    size_t n = 0;
    while (p < end) {
        uint64_t alen, found, nids;
        if (!bd_job_blob_get_le(&p, end, 2, &alen))
            return BD_ERR_STORE;
        identity id = {{NULL, 0}, 0, 0, NULL};
        if (alen != 0xFFFF) {
            if ((uint64_t)(end - p) < alen)
                return BD_ERR_STORE;
            id.account = (bd_slice){(const char *)p, alen};
            p += alen;
        }
        if (!bd_job_blob_get_le(&p, end, 8, &found) || !bd_job_blob_get_le(&p, end, 4, &nids) ||
            nids > BD_JOB_RECORDS_MAX || (uint64_t)(end - p) < nids * 8)
            return BD_ERR_STORE;
        id.found = (int64_t)found;
        id.n = (uint32_t)nids;
        id.ids = p;
        p += nids * 8;
        if (!reserve((void **)&r->idents, &r->cap_idents, n + 1, sizeof *r->idents))
            return BD_ERR_NOMEM;
        r->idents[n++] = id;
    }
    *count = n;
    return BD_OK;
}

static int cmp_id(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Index of id in the sorted r->ids; -1 when absent. */
static ptrdiff_t find_id(const bd_job_render *r, int64_t id)
{
    size_t lo = 0, hi = r->nids;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r->ids[mid] < id)
            lo = mid + 1;
        else if (r->ids[mid] > id)
            hi = mid;
        else
            return (ptrdiff_t)mid;
    }
    return -1;
}

/* One record read by id: its JSON and its CSV cells from breach_id on. */
static int render_record(void *ctx, const bd_record_row *row)
{
    bd_job_render *r = ctx;
    ptrdiff_t at = find_id(r, row->id);
    if (at < 0)
        return 0;
    rendered *f = &r->recs[at];
    f->breach = breach_of(&r->breaches, r->store, row->breach_id);
    if (!f->breach) {
        r->err = BD_ERR_STORE;
        return 1;
    }
    bd_json w;
    f->json_at = r->json.len;
    bd_json_init(&w, &r->json);
    bd_write_breached_data(&w, row);
    f->json_end = r->json.len;
    f->csv_at = r->csv.len;
    bd_result res = bd_csv_cell_quoted(&r->csv, (bd_slice){f->breach->uuid, BD_UUID_LEN});
    if (res == BD_OK)
        res = bd_buf_append_char(&r->csv, ',');
    if (res == BD_OK)
        res = bd_csv_cell_quoted(&r->csv, (bd_slice){f->breach->name, strlen(f->breach->name)});
    if (res == BD_OK)
        res = csv_cells(&r->csv, row);
    f->csv_end = r->csv.len;
    if (res != BD_OK || bd_json_result(&w) != BD_OK) {
        r->err = res != BD_OK ? res : BD_ERR_LIMIT;
        return 1;
    }
    return 0;
}

/* The identity's records still in the store into r->list, grouped by breach in the order
 * each breach first appears (breach-search's order within a breach); returns how many. */
static int group(bd_job_render *r, const identity *id)
{
    int kept = 0;
    for (uint32_t i = 0; i < id->n; i++) {
        const uint8_t *p = id->ids + 8 * (size_t)i;
        uint64_t v;
        bd_job_blob_get_le(&p, p + 8, 8, &v);
        ptrdiff_t at = find_id(r, (int64_t)v);
        if (at >= 0 && r->recs[at].breach)
            r->order[kept++] = (int)at;
    }
    int n = 0;
    for (int i = 0; i < kept; i++) {
        const breach_entry *b = r->recs[r->order[i]].breach;
        bool first = true;
        for (int k = 0; k < i && first; k++)
            first = r->recs[r->order[k]].breach != b;
        for (int k = i; first && k < kept; k++)
            if (r->recs[r->order[k]].breach == b)
                r->list[n++] = &r->recs[r->order[k]];
    }
    return n;
}

static void write_line(bd_job_render *r, bd_buf *out, int64_t index, const char *type,
                       const identity *id, int kept)
{
    bd_json w;
    bd_json_init(&w, out);
    bd_json_object_begin(&w);
    bd_json_key(&w, "index");
    bd_json_int(&w, index);
    bd_json_key(&w, "type");
    bd_json_cstring(&w, type);
    bd_json_key(&w, "account");
    if (id->account.ptr)
        bd_json_string(&w, id->account);
    else
        bd_json_null(&w);
    if (id->found == BD_JOB_FOUND_OUT_OF_SCOPE) { /* not looked up: found 0, no breaches */
        bd_json_key(&w, "status");
        bd_json_cstring(&w, "out_of_scope");
    }
    bd_json_key(&w, "found");
    bd_json_int(&w, id->found < 0 ? 0 : id->found);
    bd_json_key(&w, "breaches");
    bd_json_array_begin(&w);
    for (int i = 0; i < kept; i++) {
        const rendered *f = r->list[i];
        if (i == 0 || r->list[i - 1]->breach != f->breach) {
            if (i > 0) {
                bd_json_array_end(&w);
                bd_json_object_end(&w);
            }
            bd_json_object_begin(&w);
            bd_json_key(&w, "breach_id");
            bd_json_cstring(&w, f->breach->uuid);
            bd_json_key(&w, "source_name");
            bd_json_cstring(&w, f->breach->name);
            bd_json_key(&w, "records");
            bd_json_array_begin(&w);
        }
        bd_json_raw(&w, (bd_slice){r->json.data + f->json_at, f->json_end - f->json_at});
    }
    if (kept > 0) {
        bd_json_array_end(&w);
        bd_json_object_end(&w);
    }
    bd_json_array_end(&w);
    bd_json_object_end(&w);
    if (bd_json_result(&w) != BD_OK || bd_buf_append_char(out, '\n') != BD_OK)
        r->err = BD_ERR_LIMIT;
}

static void write_rows(bd_job_render *r, bd_buf *out, int64_t index, const char *type,
                       const identity *id, int kept)
{
    char head[64];
    for (int i = 0; i < (kept ? kept : 1) && r->err == BD_OK; i++) {
        snprintf(head, sizeof head, "%lld,%s,", (long long)index, type);
        bd_result res = bd_buf_append_str(out, head);
        if (res == BD_OK)
            res = bd_csv_cell_quoted(out, id->account);
        bool out_of_scope = id->found == BD_JOB_FOUND_OUT_OF_SCOPE;
        if (res == BD_OK)
            res = bd_buf_printf(out, ",%lld,", (long long)(out_of_scope ? 0 : id->found));
        const rendered *f = kept ? r->list[i] : NULL;
        if (res == BD_OK && f)
            res = bd_buf_append(out, r->csv.data + f->csv_at, f->csv_end - f->csv_at);
        else if (res == BD_OK) /* breach_id .. severity, all empty */
            res = bd_buf_append_str(out, ",,,,,,,,,,,,,,");
        if (res == BD_OK) /* status: empty for an identity looked up */
            res = bd_buf_append_str(out, out_of_scope ? ",out_of_scope\r\n" : ",\r\n");
        if (res != BD_OK)
            r->err = res;
    }
}

bd_result bd_job_render_open(bd_job_render *r, bd_slice blob, size_t *count)
{
    bd_result res = parse(r, blob, count);
    r->nidents = res == BD_OK ? *count : 0;
    return res;
}

bd_result bd_job_render_slice(bd_job_render *r, bd_store *s, int type, int64_t first_index,
                              size_t from, bool csv, bd_buf *out, size_t *to)
{
    /* the slice: one identity, and the next ones while their ids stay within the bound */
    size_t end = from, nids = 0;
    while (end < r->nidents && (end == from || nids + r->idents[end].n <= BD_JOB_RENDER_IDS))
        nids += r->idents[end++].n;
    *to = end;
    if (!reserve((void **)&r->ids, &r->cap_ids, nids ? nids : 1, sizeof *r->ids) ||
        !reserve((void **)&r->recs, &r->cap_recs, nids ? nids : 1, sizeof *r->recs))
        return BD_ERR_NOMEM;
    r->nids = 0;
    for (size_t i = from; i < end; i++)
        for (uint32_t k = 0; k < r->idents[i].n; k++) {
            const uint8_t *p = r->idents[i].ids + 8 * (size_t)k;
            bd_job_blob_get_le(&p, p + 8, 8, (uint64_t *)&r->ids[r->nids++]);
        }
    if (r->nids)
        qsort(r->ids, r->nids, sizeof *r->ids, cmp_id);
    size_t m = 0;
    for (size_t i = 0; i < r->nids; i++)
        if (m == 0 || r->ids[m - 1] != r->ids[i])
            r->ids[m++] = r->ids[i];
    r->nids = m;
    memset(r->recs, 0, (m ? m : 1) * sizeof *r->recs);
    bd_buf_reset(&r->json);
    bd_buf_reset(&r->csv);
    r->store = s;
    r->err = BD_OK;
    bd_result res = m ? bd_store_records_by_id(s, r->ids, m, render_record, r) : BD_OK;
    if (res == BD_OK)
        res = r->err;
    const char *tname = bd_id_type_name((bd_id_type)type);
    for (size_t i = from; res == BD_OK && i < end; i++) {
        int kept = group(r, &r->idents[i]);
        if (csv)
            write_rows(r, out, first_index + (int64_t)i, tname, &r->idents[i], kept);
        else
            write_line(r, out, first_index + (int64_t)i, tname, &r->idents[i], kept);
        res = r->err;
    }
    return res;
}
