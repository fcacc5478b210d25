/* The import's watch matcher (watch_match.h): the watches grouped by what they name (type, lookup
 * key), the landed rows looked up field by field, matches summed per value group and breach
 * until the batch's commit writes them as one alert per watch of the group and breach
 * (watch_index.h). A row costs one hash lookup per field it has, and one more per match:
 * neither grows with the number of watches, even when many name the same value. */
#include <sodium.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/hex.h"
#include "core/json.h"
#include "core/uuid.h"
#include "auth/secret.h"
#include "ingest/watch_index.h"
#include "ingest/watch_match.h"

typedef struct {
    int64_t id, key_id;
    int type;
    char *key; /* lookup key as the rows hold it: bytes for password and SSN */
    size_t key_len;
    char *shown;
    size_t shown_len;
} watch_entry;

/* What a batch matched of one value group in one breach: index slot i is acc[i]. */
typedef struct {
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
    watch_entry *w; /* by watch number in ix */
    int nw;
    bd_watch_index *ix; /* NULL without watches */
    match_acc *acc;
    size_t nacc, capacc;
    bd_result err; /* a failure inside the landed callback, reported by write */
    int64_t alerts;
};

static void free_watches(bd_watch_matcher *m)
{
    bd_watch_index_free(m->ix); /* it borrows the entries' keys */
    m->ix = NULL;
    for (int i = 0; i < m->nw; i++) {
        free(m->w[i].key);
        free(m->w[i].shown);
    }
    free(m->w);
    m->w = NULL;
    m->nw = 0;
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
    *e = (watch_entry){.id = row->id, .key_id = row->key_id, .type = row->type};
    if (row->type == BD_FIELD_PASSWORD || row->type == BD_FIELD_SSN) {
        uint8_t mac[BD_MAC_LEN]; /* stored as the lower-case hex watch_spec.c writes */
        if (!bd_hex_decode(row->key, mac, sizeof mac, BD_HEX_LOWER))
            return 0;
        e->key = malloc(BD_MAC_LEN);
        if (e->key)
            memcpy(e->key, mac, BD_MAC_LEN);
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
        m->ix = bd_watch_index_new();
        if (!m->ix)
            r = BD_ERR_NOMEM;
        for (int i = 0; r == BD_OK && i < m->nw; i++) /* watch number i is entry i */
            if (bd_watch_index_add(m->ix, m->w[i].type, m->w[i].key, m->w[i].key_len) < 0)
                r = BD_ERR_NOMEM;
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

/* The accumulator of (value group, breach), made when missing; NULL when out of memory. */
static match_acc *acc_of(bd_watch_matcher *m, int group, int64_t breach_id)
{
    int i = bd_watch_index_slot(m->ix, group, breach_id);
    if (i < 0)
        return NULL;
    if ((size_t)i < m->nacc)
        return &m->acc[i];
    if (m->nacc == m->capacc) { /* a new slot is the next number */
        size_t cap = m->capacc ? 2 * m->capacc : 16;
        match_acc *a = realloc(m->acc, cap * sizeof *a);
        if (!a)
            return NULL; /* the slot stays without a tally: the batch fails with NOMEM */
        m->acc = a;
        m->capacc = cap;
    }
    match_acc *a = &m->acc[m->nacc++];
    memset(a, 0, sizeof *a);
    return a;
}

static void note_match(bd_watch_matcher *m, int group, int64_t breach_id, bd_slice shown)
{
    if (m->err != BD_OK) /* the batch fails: slots and tallies may no longer agree */
        return;
    match_acc *a = acc_of(m, group, breach_id);
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
    int g = bd_watch_index_find(m->ix, type, key.ptr, key.len);
    if (g >= 0)
        note_match(m, g, breach_id, shown);
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

/* The identities of a as a JSON array, into json. */
static bd_result identities_json(const match_acc *a, bd_buf *json)
{
    bd_json w;
    bd_buf_reset(json);
    bd_json_init(&w, json);
    bd_json_array_begin(&w);
    for (int i = 0; i < a->nshown; i++)
        bd_json_string(&w, (bd_slice){a->shown[i], a->shown_len[i]});
    bd_json_array_end(&w);
    return bd_json_result(&w);
}

/* The alert of watch entry e for what a holds of breach_id (identities: a's, as JSON). */
static bd_result write_alert(bd_watch_matcher *m, const watch_entry *e, const match_acc *a,
                             int64_t breach_id, const bd_buf *json)
{
    uint8_t rnd[16];
    randombytes_buf(rnd, sizeof rnd);
    bd_alert_in in = {
        .watch_id = e->id,
        .key_id = e->key_id,
        .watch_type = e->type,
        .watch_shown = {e->shown, e->shown_len},
        .breach_id = breach_id,
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
        int g;
        int64_t breach_id;
        bd_watch_index_slot_of(m->ix, (int)i, &g, &breach_id);
        r = identities_json(&m->acc[i], &json);
        for (int w = bd_watch_index_first(m->ix, g); w >= 0 && r == BD_OK;
             w = bd_watch_index_next(m->ix, w)) {
            r = write_alert(m, &m->w[w], &m->acc[i], breach_id, &json);
            if (r == BD_OK)
                m->alerts++;
        }
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
    if (m->ix)
        bd_watch_index_clear_slots(m->ix);
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
