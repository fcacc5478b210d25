/* The import's watch matcher (watch.h): the watches in a hash set by (type, lookup key), the
 * landed rows looked up field by field, matches summed per watch and breach until the
 * batch's commit writes them as alerts. A lookup is one hash per field a row has: the cost
 * per row does not grow with the number of watches. */
#include <sodium.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/json.h"
#include "core/uuid.h"
#include "ingest/watch.h"

typedef struct {
    int64_t id, key_id;
    int type;
    char *key; /* lookup key as the rows hold it: bytes for password and SSN */
    size_t key_len;
    char *shown;
    size_t shown_len;
    int next; /* the next entry in its hash chain, -1: none */
} watch_entry;

typedef struct {
    int watch;         /* entry index */
    int64_t breach_id; /* 0: cards */
    int64_t matched;
    int nshown;
    char *shown[BD_ALERT_MAX_IDENTITIES];
    size_t shown_len[BD_ALERT_MAX_IDENTITIES];
} match_acc;

/* A key that expires stops matching within this many seconds (a revoked one or a watch
 * removed: from the next batch, by the generations). */
#define RELOAD_EVERY_S 60

struct bd_watch_matcher {
    bd_store *s;
    int64_t generation, key_generation; /* of the watches and keys loaded */
    int64_t loaded_at;                  /* Unix seconds */
    watch_entry *w;
    int nw;
    int *heads; /* nheads chains */
    size_t nheads;
    match_acc *acc;
    size_t nacc, capacc;
    bd_result err; /* a failure inside the landed callback, reported by write */
    int64_t alerts;
};

static uint64_t hash_key(int type, const char *key, size_t n)
{
    uint64_t h = 1469598103934665603ull ^ (uint64_t)type;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (uint8_t)key[i]) * 1099511628211ull;
    return h;
}

static void free_watches(bd_watch_matcher *m)
{
    for (int i = 0; i < m->nw; i++) {
        free(m->w[i].key);
        free(m->w[i].shown);
    }
    free(m->w);
    free(m->heads);
    m->w = NULL;
    m->heads = NULL;
    m->nw = 0;
    m->nheads = 0;
}

static int hex_digit(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

static char *copy_bytes(const char *p, size_t n)
{
    char *c = malloc(n + 1);
    if (c) {
        memcpy(c, p, n);
        c[n] = '\0';
    }
    return c;
}

typedef struct {
    bd_watch_matcher *m;
    int cap;
    bd_result r;
} load_ctx;

/* One stored watch into the table (chains are linked after the load). */
static int add_watch(void *ctx, const bd_watch_row *row)
{
    load_ctx *lc = ctx;
    bd_watch_matcher *m = lc->m;
    if (m->nw == lc->cap) {
        int cap = lc->cap ? 2 * lc->cap : 64;
        watch_entry *w = realloc(m->w, (size_t)cap * sizeof *w);
        if (!w) {
            lc->r = BD_ERR_NOMEM;
            return 1;
        }
        m->w = w;
        lc->cap = cap;
    }
    watch_entry *e = &m->w[m->nw];
    *e = (watch_entry){.id = row->id, .key_id = row->key_id, .type = row->type, .next = -1};
    if (row->type == BD_FIELD_PASSWORD || row->type == BD_FIELD_SSN) { /* hex of the hash */
        if (row->key.len != 2 * BD_MAC_LEN)
            return 0;
        e->key = malloc(BD_MAC_LEN);
        for (size_t i = 0; e->key && i < BD_MAC_LEN; i++)
            e->key[i] =
                (char)(hex_digit(row->key.ptr[2 * i]) * 16 + hex_digit(row->key.ptr[2 * i + 1]));
        e->key_len = BD_MAC_LEN;
    } else {
        e->key = copy_bytes(row->key.ptr, row->key.len);
        e->key_len = row->key.len;
    }
    e->shown = copy_bytes(row->shown.ptr, row->shown.len);
    e->shown_len = row->shown.len;
    if (!e->key || !e->shown) {
        free(e->key);
        free(e->shown);
        lc->r = BD_ERR_NOMEM;
        return 1;
    }
    m->nw++;
    return 0;
}

static void landed(void *ctx, const bd_landed_row *row);

static bd_result load(bd_watch_matcher *m)
{
    free_watches(m);
    load_ctx lc = {.m = m, .r = BD_OK};
    m->loaded_at = (int64_t)time(NULL);
    /* only the watches of keys that are neither revoked nor expired */
    bd_result r = bd_store_watch_list_live(m->s, m->loaded_at, add_watch, &lc);
    if (r == BD_OK)
        r = lc.r;
    if (r == BD_OK && m->nw > 0) {
        m->nheads = 64;
        while (m->nheads < 2 * (size_t)m->nw)
            m->nheads *= 2;
        m->heads = malloc(m->nheads * sizeof *m->heads);
        if (!m->heads)
            r = BD_ERR_NOMEM;
        for (size_t i = 0; r == BD_OK && i < m->nheads; i++)
            m->heads[i] = -1;
        for (int i = 0; r == BD_OK && i < m->nw; i++) {
            size_t h = hash_key(m->w[i].type, m->w[i].key, m->w[i].key_len) & (m->nheads - 1);
            m->w[i].next = m->heads[h];
            m->heads[h] = i;
        }
    }
    if (r != BD_OK)
        free_watches(m);
    /* Without watches the store need not report what lands (on PostgreSQL that is a
     * leaner move of the staged rows). */
    bd_store_on_landed(m->s, m->nw > 0 ? landed : NULL, m);
    return r;
}

bd_result bd_watch_matcher_open(bd_store *s, bd_watch_matcher **out)
{
    *out = NULL;
    bd_watch_matcher *m = calloc(1, sizeof *m);
    if (!m)
        return BD_ERR_NOMEM;
    m->s = s;
    bd_result r = bd_store_watch_generation(s, &m->generation);
    if (r == BD_OK)
        r = bd_store_key_generation(s, &m->key_generation);
    if (r == BD_OK)
        r = load(m);
    if (r != BD_OK) {
        bd_watch_matcher_close(m);
        return r;
    }
    *out = m;
    return BD_OK;
}

bd_result bd_watch_matcher_refresh(bd_watch_matcher *m)
{
    int64_t gen, key_gen;
    bd_result r = bd_store_watch_generation(m->s, &gen);
    if (r == BD_OK)
        r = bd_store_key_generation(m->s, &key_gen);
    if (r != BD_OK)
        return r;
    if (gen == m->generation && key_gen == m->key_generation &&
        (int64_t)time(NULL) - m->loaded_at < RELOAD_EVERY_S)
        return BD_OK;
    bd_watch_matcher_discard(m); /* accumulators point at entries by index */
    m->generation = gen;
    m->key_generation = key_gen;
    return load(m);
}

/* The accumulator of (watch, breach), made when missing; NULL when out of memory. The last
 * one found is tried first: the rows of a dump come breach by breach. */
static match_acc *acc_of(bd_watch_matcher *m, int watch, int64_t breach_id)
{
    for (size_t i = m->nacc; i-- > 0;)
        if (m->acc[i].watch == watch && m->acc[i].breach_id == breach_id)
            return &m->acc[i];
    if (m->nacc == m->capacc) {
        size_t cap = m->capacc ? 2 * m->capacc : 16;
        match_acc *a = realloc(m->acc, cap * sizeof *a);
        if (!a)
            return NULL;
        m->acc = a;
        m->capacc = cap;
    }
    match_acc *a = &m->acc[m->nacc++];
    memset(a, 0, sizeof *a);
    a->watch = watch;
    a->breach_id = breach_id;
    return a;
}

static void note_match(bd_watch_matcher *m, int watch, int64_t breach_id, bd_slice shown)
{
    match_acc *a = acc_of(m, watch, breach_id);
    if (!a) {
        m->err = BD_ERR_NOMEM;
        return;
    }
    a->matched++;
    if (!shown.ptr || a->nshown == BD_ALERT_MAX_IDENTITIES)
        return;
    for (int i = 0; i < a->nshown; i++)
        if (a->shown_len[i] == shown.len && memcmp(a->shown[i], shown.ptr, shown.len) == 0)
            return;
    a->shown[a->nshown] = copy_bytes(shown.ptr, shown.len);
    if (!a->shown[a->nshown]) {
        m->err = BD_ERR_NOMEM;
        return;
    }
    a->shown_len[a->nshown++] = shown.len;
}

static void lookup(bd_watch_matcher *m, int type, bd_slice key, int64_t breach_id, bd_slice shown)
{
    if (!key.ptr || key.len == 0)
        return;
    size_t h = hash_key(type, key.ptr, key.len) & (m->nheads - 1);
    for (int i = m->heads[h]; i >= 0; i = m->w[i].next) {
        const watch_entry *e = &m->w[i];
        if (e->type == type && e->key_len == key.len && memcmp(e->key, key.ptr, key.len) == 0)
            note_match(m, i, breach_id, shown);
    }
}

static void landed(void *ctx, const bd_landed_row *row)
{
    bd_watch_matcher *m = ctx;
    if (m->nw == 0)
        return;
    if (row->card) {
        lookup(m, BD_WATCH_BIN, row->bin, 0, row->number_masked);
        return;
    }
    for (int f = 0; f < BD_FIELD_COUNT; f++)
        lookup(m, f, row->key[f], row->breach_id, row->shown[f]);
}

static bd_result write_alert(bd_watch_matcher *m, const match_acc *a, bd_buf *json)
{
    const watch_entry *e = &m->w[a->watch];
    bd_json w;
    bd_buf_reset(json);
    bd_json_init(&w, json);
    bd_json_array_begin(&w);
    for (int i = 0; i < a->nshown; i++)
        bd_json_string(&w, (bd_slice){a->shown[i], a->shown_len[i]});
    bd_json_array_end(&w);
    bd_result r = bd_json_result(&w);
    if (r != BD_OK)
        return r;
    uint8_t rnd[16];
    randombytes_buf(rnd, sizeof rnd);
    bd_alert_in in = {
        .watch_id = e->id,
        .key_id = e->key_id,
        .watch_type = e->type,
        .watch_shown = {e->shown, e->shown_len},
        .breach_id = a->breach_id,
        .matched = a->matched,
        .identities = {json->data, json->len},
        .created_at = (int64_t)time(NULL),
    };
    bd_uuid_from_bytes(rnd, in.event_id);
    return bd_store_alert_add(m->s, &in);
}

bd_result bd_watch_matcher_write(bd_watch_matcher *m)
{
    if (m->nw == 0)
        return BD_OK;
    bd_result r = bd_store_flush(m->s);
    if (r == BD_OK)
        r = m->err;
    bd_buf json;
    bd_buf_init(&json, 64 * 1024);
    for (size_t i = 0; i < m->nacc && r == BD_OK; i++) {
        r = write_alert(m, &m->acc[i], &json);
        if (r == BD_OK)
            m->alerts++;
    }
    bd_buf_free(&json);
    bd_watch_matcher_discard(m);
    return r;
}

void bd_watch_matcher_discard(bd_watch_matcher *m)
{
    for (size_t i = 0; i < m->nacc; i++)
        for (int j = 0; j < m->acc[i].nshown; j++)
            free(m->acc[i].shown[j]);
    m->nacc = 0;
    m->err = BD_OK;
}

int64_t bd_watch_matcher_alerts(const bd_watch_matcher *m)
{
    return m->alerts;
}

void bd_watch_matcher_close(bd_watch_matcher *m)
{
    if (!m)
        return;
    bd_store_on_landed(m->s, NULL, NULL);
    bd_watch_matcher_discard(m);
    free(m->acc);
    free_watches(m);
    free(m);
}
