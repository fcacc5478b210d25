/* The card condition tree's leaves as PostgreSQL SQL, with the meaning SQLite's writer gives
 * them (sqlite/cards_sql.c), and the words of owners and banks as SQLite's FTS5
 * index holds them.
 *
 * - Numbers: the BIN and the last four digits reversed (the tail column) are compared as
 *   text: a plain digit prefix is a range (an index range scan), a full one an equality, one
 *   with '?' a LIKE with '_' (the columns hold digits only, so LIKE and SQLite's GLOB agree).
 * - Words: card_words holds each word of each card's owner (col 0) and bank (col 1) with its
 *   position. One word is an index lookup, a word prefix an index range; a phrase counts, for
 *   each card and possible start, the phrase words found where they belong, which is FTS5's
 *   own way of matching a phrase: every word present at start + its place.
 * - NOT: SQL says NULL for a card whose field is NULL; like SQLite, that unknown is taken as
 *   false before negating it, so NOT includes such cards (store/card_sql.c walks the tree
 *   for both backends). */
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

#include "core/hex.h"
#include "store/pg/cards_sql.h"

#define SQL_MAX (1024 * 1024)
#define VALS_MAX (1024 * 1024)
#define HEADER 20 /* ndim, has-nulls flag, element type, length, lower bound */
#define TEXT_OID 25

static void put_be32(char *at, uint32_t v)
{
    at[0] = (char)(v >> 24);
    at[1] = (char)(v >> 16);
    at[2] = (char)(v >> 8);
    at[3] = (char)v;
}

void pg_card_sql_init(pg_card_sql *c)
{
    bd_buf_init(&c->sql, SQL_MAX);
    bd_buf_init(&c->vals, VALS_MAX);
    bd_buf_init(&c->words, 65536);
    bd_buf_init(&c->text, 65536);
    bd_buf_init(&c->end, 4096);
    bd_buf_init(&c->owner_word, 65536);
    c->nvals = 0;
    c->err = BD_OK;
}

void pg_card_sql_begin(pg_card_sql *c)
{
    bd_buf_reset(&c->sql);
    bd_buf_reset(&c->vals);
    c->nvals = 0;
    char header[HEADER] = {0};
    c->err = bd_buf_append(&c->vals, header, sizeof header);
}

void pg_card_sql_free(pg_card_sql *c)
{
    bd_buf_free(&c->sql);
    bd_buf_free(&c->vals);
    bd_buf_free(&c->words);
    bd_buf_free(&c->text);
    bd_buf_free(&c->end);
    bd_buf_free(&c->owner_word);
}

void pg_card_emit(pg_card_sql *c, const char *text)
{
    if (c->err == BD_OK)
        c->err = bd_buf_append_str(&c->sql, text);
}

/* Adds an element to the array; returns its 1-based index. */
static int add_value(pg_card_sql *c, const char *p, size_t n)
{
    char len[4];
    put_be32(len, (uint32_t)n);
    if (c->err == BD_OK)
        c->err = bd_buf_append(&c->vals, len, sizeof len);
    if (c->err == BD_OK)
        c->err = bd_buf_append(&c->vals, p, n);
    return ++c->nvals;
}

static void emit_ref(pg_card_sql *c, int index)
{
    if (c->err == BD_OK)
        c->err = bd_buf_printf(&c->sql, "(($1::text[])[%d])", index);
}

void pg_card_value(pg_card_sql *c, const char *p, size_t n)
{
    emit_ref(c, add_value(c, p, n));
}

void pg_card_add_value(pg_card_sql *c, const char *p, size_t n)
{
    add_value(c, p, n);
}

void pg_card_params(pg_card_sql *c, pg_params *pp)
{
    if (c->nvals == 0)
        return;
    char *h = c->vals.data;
    put_be32(h, 1);
    put_be32(h + 4, 0);
    put_be32(h + 8, TEXT_OID);
    put_be32(h + 12, (uint32_t)c->nvals);
    put_be32(h + 16, 1);
    pg_param_text(pp, (bd_slice){c->vals.data, c->vals.len});
}

/* ---- numbers --------------------------------------------------------------------------- */

/* " AND col matches p" for a bin (full 6) or reversed-tail (full 4) pattern of n chars. */
static void digit_pattern(pg_card_sql *c, const char *col, const char *p, size_t n, size_t full)
{
    char like[8];
    pg_card_emit(c, " AND ");
    pg_card_emit(c, col);
    if (bd_card_plain_digits(p) && n == full) {
        pg_card_emit(c, " = ");
        pg_card_value(c, p, n);
    } else if (bd_card_plain_digits(p)) {
        bd_card_digits_end(p, n, like);
        pg_card_emit(c, " >= ");
        pg_card_value(c, p, n);
        pg_card_emit(c, " AND ");
        pg_card_emit(c, col);
        pg_card_emit(c, " < ");
        pg_card_value(c, like, n);
    } else {
        for (size_t i = 0; i < n; i++)
            like[i] = p[i] == '?' ? '_' : p[i];
        if (n < full)
            like[n++] = '%';
        pg_card_emit(c, " LIKE ");
        pg_card_value(c, like, n);
    }
}

static void number_cond(void *w, const bd_card_cond *k)
{
    pg_card_sql *c = w;
    char tail[5];
    int min_length = bd_card_number_layout(k, tail);
    size_t bl = strlen(k->bin), tl = strlen(tail);
    char num[24];
    pg_card_emit(c, "(true");
    if (bl)
        digit_pattern(c, "c.bin", k->bin, bl, 6);
    if (tl)
        digit_pattern(c, "c.tail", tail, tl, 4);
    if (k->length || min_length) {
        const char *t = bd_i64_text(k->length ? k->length : min_length, num);
        pg_card_emit(c, k->length ? " AND c.length = " : " AND c.length >= ");
        pg_card_value(c, t, strlen(t));
        pg_card_emit(c, "::smallint");
    }
    pg_card_emit(c, ")");
}

/* ---- words ----------------------------------------------------------------------------- */

bool pg_card_prefix_end(const char *prefix, size_t n, bd_buf *out)
{
    size_t start = n;
    while (start > 0 && n - start < 4 && ((uint8_t)prefix[start - 1] & 0xC0) == 0x80)
        start--;
    if (start == 0)
        return false;
    start--;
    const uint8_t *s = (const uint8_t *)prefix + start;
    size_t len = n - start;
    uint32_t cp;
    if (s[0] < 0x80 && len == 1)
        cp = s[0];
    else if ((s[0] & 0xE0) == 0xC0 && len == 2)
        cp = (uint32_t)(s[0] & 0x1F) << 6 | (s[1] & 0x3F);
    else if ((s[0] & 0xF0) == 0xE0 && len == 3)
        cp = (uint32_t)(s[0] & 0x0F) << 12 | (uint32_t)(s[1] & 0x3F) << 6 | (s[2] & 0x3F);
    else if ((s[0] & 0xF8) == 0xF0 && len == 4)
        cp = (uint32_t)(s[0] & 0x07) << 18 | (uint32_t)(s[1] & 0x3F) << 12 |
             (uint32_t)(s[2] & 0x3F) << 6 | (s[3] & 0x3F);
    else
        return false;
    cp = cp + 1 == 0xD800 ? 0xE000 : cp + 1;
    if (cp > 0x10FFFF)
        return false;
    char enc[4];
    size_t m = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    static const uint8_t lead[] = {0, 0, 0xC0, 0xE0, 0xF0};
    for (size_t i = m - 1; i > 0; i--, cp >>= 6)
        enc[i] = (char)(0x80 | (cp & 0x3F));
    enc[0] = (char)(m == 1 ? cp : (lead[m] | cp));
    bd_buf_reset(out);
    return bd_buf_append(out, prefix, start) == BD_OK && bd_buf_append(out, enc, m) == BD_OK;
}

/* Appends "w.word >= lo AND w.word < hi" (or starts_with when there is no hi) for words
 * starting with p. */
static void word_prefix(pg_card_sql *c, const char *p, size_t n)
{
    pg_card_emit(c, "w.word >= ");
    pg_card_value(c, p, n);
    if (pg_card_prefix_end(p, n, &c->end)) {
        pg_card_emit(c, " AND w.word < ");
        pg_card_value(c, c->end.data, c->end.len);
    } else {
        pg_card_emit(c, " AND starts_with(w.word, ");
        pg_card_value(c, p, n);
        pg_card_emit(c, ")");
    }
}

/* FTS5 reads the query's words as one phrase, split by its own tokenizer (which may split
 * a word further, and folds accents): the same is done here, into c->words (words separated
 * by spaces); *n gets how many. */
static bd_result split_words(pg_card_sql *c, const bd_card_cond *k, int *n)
{
    bd_buf_reset(&c->text);
    bd_buf_reset(&c->words);
    bd_result r = BD_OK;
    for (size_t i = 0; i < k->nwords && r == BD_OK; i++) {
        if (i)
            r = bd_buf_append_char(&c->text, ' ');
        if (r == BD_OK)
            r = bd_buf_append_slice(&c->text, k->words[i]);
    }
    *n = 0;
    if (r == BD_OK)
        r = pg_card_words((bd_slice){c->text.data, c->text.len}, &c->words, n);
    return r;
}

/* Appends a SELECT of the ids of the cards whose column holds the n >= 1 words of w as a
 * phrase, the last a prefix when k says so. One word is an index lookup or range. For more,
 * each word found at position pos votes for the phrase starting at pos - its place, and a
 * card matches when some start has the votes of all n (a place holds one word, so no word
 * votes twice for a start): FTS5's own test, every word present at start + its place. */
static void word_ids(pg_card_sql *c, const bd_card_cond *k, const bd_buf *w, int n)
{
    const char *col = k->column == BD_CARD_OWNER ? "0" : "1";
    if (n == 1) {
        pg_card_emit(c, "SELECT w.id FROM card_words w WHERE w.col = ");
        pg_card_emit(c, col);
        pg_card_emit(c, k->prefix ? " AND " : " AND w.word = ");
        if (k->prefix)
            word_prefix(c, w->data, w->len);
        else
            pg_card_value(c, w->data, w->len);
        return;
    }
    int exact = k->prefix ? n - 1 : n, first = c->nvals + 1;
    const char *p = w->data;
    for (int i = 0; i < exact; i++) {
        size_t len = strcspn(p, " ");
        add_value(c, p, len);
        p += len + (p[len] == ' ');
    }
    if (c->err == BD_OK)
        c->err = bd_buf_printf(&c->sql,
                               "SELECT v.id FROM (SELECT w.id, w.pos - t.k AS s "
                               "FROM unnest(($1::text[])[%d:%d]) WITH ORDINALITY AS t(word, k) "
                               "JOIN card_words w ON w.col = %s AND w.word = t.word",
                               first, first + exact - 1, col);
    if (k->prefix) {
        if (c->err == BD_OK)
            c->err = bd_buf_printf(&c->sql,
                                   " UNION ALL SELECT w.id, w.pos - %d FROM card_words w "
                                   "WHERE w.col = %s AND ",
                                   n, col);
        word_prefix(c, p, strlen(p)); /* the last word */
    }
    if (c->err == BD_OK)
        c->err = bd_buf_printf(&c->sql, ") v GROUP BY v.id, v.s HAVING count(*) = %d", n);
}

/* No word left matches nothing. */
static void words_cond(void *w, const bd_card_cond *k)
{
    pg_card_sql *c = w;
    int n;
    bd_result r = split_words(c, k, &n);
    if (r != BD_OK) {
        c->err = c->err == BD_OK ? r : c->err;
    } else if (n == 0) {
        pg_card_emit(c, "false");
    } else {
        pg_card_emit(c, "c.id IN (");
        word_ids(c, k, &c->words, n);
        pg_card_emit(c, ")");
    }
}

bool pg_card_word_count(pg_card_sql *c, const bd_card_cond *k)
{
    if (k->kind != BD_CC_WORDS)
        return false;
    int n;
    bd_result r = split_words(c, k, &n);
    if (r != BD_OK) {
        c->err = c->err == BD_OK ? r : c->err;
    } else if (n == 0) {
        pg_card_emit(c, "SELECT 0");
    } else {
        pg_card_emit(c, "SELECT count(DISTINCT x.id) FROM (");
        word_ids(c, k, &c->words, n);
        pg_card_emit(c, ") AS x");
    }
    return true;
}

/* ---- the tree ------------------------------------------------------------------------- */

static void range_cond(void *w, const bd_card_cond *k)
{
    pg_card_sql *c = w;
    const char *col = bd_card_sql_col(k->column);
    pg_card_emit(c, "(c.");
    pg_card_emit(c, col);
    if (!k->low.ptr && !k->high.ptr) {
        pg_card_emit(c, " IS NOT NULL)");
        return;
    }
    if (k->low.ptr) {
        pg_card_emit(c, k->low_inclusive ? " >= " : " > ");
        pg_card_value(c, k->low.ptr, k->low.len);
    }
    if (k->low.ptr && k->high.ptr) {
        pg_card_emit(c, " AND c.");
        pg_card_emit(c, col);
    }
    if (k->high.ptr) {
        pg_card_emit(c, k->high_inclusive ? " <= " : " < ");
        pg_card_value(c, k->high.ptr, k->high.len);
    }
    pg_card_emit(c, ")");
}

/* Whether p[0..n) is UTF-8 that PostgreSQL accepts as text: well-formed (no overlong form,
 * surrogate or code point past U+10FFFF) and without NUL. */
static bool valid_utf8(const char *p, size_t n)
{
    const uint8_t *s = (const uint8_t *)p;
    for (size_t i = 0; i < n;) {
        uint8_t b = s[i];
        size_t len = b == 0                   ? 0
                     : b < 0x80               ? 1
                     : b >= 0xC2 && b <= 0xDF ? 2
                     : b >= 0xE0 && b <= 0xEF ? 3
                     : b >= 0xF0 && b <= 0xF4 ? 4
                                              : 0;
        if (len == 0 || i + len > n)
            return false;
        for (size_t j = 1; j < len; j++)
            if ((s[i + j] & 0xC0) != 0x80)
                return false;
        if ((b == 0xE0 && s[i + 1] < 0xA0) || (b == 0xED && s[i + 1] > 0x9F) ||
            (b == 0xF0 && s[i + 1] < 0x90) || (b == 0xF4 && s[i + 1] > 0x8F))
            return false;
        i += len;
    }
    return true;
}

/* HMAC, CVV: the keyed hash's column equals the one searched, sent as hex text. */
static void hmac_cond(void *w, const bd_card_cond *k)
{
    pg_card_sql *c = w;
    char hex[2 * BD_HMAC_LEN];
    bd_hex_encode(k->hmac, BD_HMAC_LEN, hex);
    pg_card_emit(c, k->kind == BD_CC_HMAC ? "c.number_hmac = decode(" : "c.cvv_hmac = decode(");
    pg_card_value(c, hex, sizeof hex);
    pg_card_emit(c, ", 'hex')");
}

static void equals_cond(void *w, const bd_card_cond *k)
{
    pg_card_sql *c = w;
    /* PostgreSQL refuses text that is not UTF-8, which SQLite compares and finds nowhere:
     * false is that answer (NULL and false are alike here, see NOT). */
    if (!valid_utf8(k->value.ptr, k->value.len)) {
        pg_card_emit(c, "false");
        return;
    }
    pg_card_emit(c, "c.");
    pg_card_emit(c, bd_card_sql_col(k->column));
    pg_card_emit(c, " = ");
    pg_card_value(c, k->value.ptr, k->value.len);
}

static void emit_sql(void *w, const char *text)
{
    pg_card_emit(w, text);
}

static void fail(void *w, bd_result r)
{
    pg_card_sql *c = w;
    c->err = r;
}

static const bd_card_dialect PG_CARDS = {
    .true_sql = "true",
    .false_sql = "false",
    .emit = emit_sql,
    .fail = fail,
    .number = number_cond,
    .hmac = hmac_cond,
    .equals = equals_cond,
    .words = words_cond,
    .range = range_cond,
};

void pg_card_cond(pg_card_sql *c, const bd_card_cond *k)
{
    bd_card_cond_walk(&PG_CARDS, c, k);
}

/* ---- the tokenizer --------------------------------------------------------------------- */

/* One in-memory SQLite connection for the process, made on first use, and its unicode61
 * tokenizer. A tokenizer instance keeps scratch space while it runs, so calls take turns;
 * a call takes microseconds. */
static pthread_once_t tokenizer_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t tokenizer_lock = PTHREAD_MUTEX_INITIALIZER;
static sqlite3 *tokenizer_db;
static fts5_tokenizer tokenizer_api;
static Fts5Tokenizer *tokenizer;

static void tokenizer_open(void)
{
    if (sqlite3_open_v2(":memory:", &tokenizer_db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK)
        return;
    fts5_api *api = NULL;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(tokenizer_db, "SELECT fts5(?1)", -1, &st, NULL) != SQLITE_OK)
        return;
    sqlite3_bind_pointer(st, 1, (void *)&api, "fts5_api_ptr", NULL);
    sqlite3_step(st);
    sqlite3_finalize(st);
    void *ctx;
    const char *args[] = {"remove_diacritics", "2"}; /* the SQLite store's cards_words */
    if (!api || api->xFindTokenizer(api, "unicode61", &ctx, &tokenizer_api) != SQLITE_OK ||
        tokenizer_api.xCreate(ctx, args, 2, &tokenizer) != SQLITE_OK)
        tokenizer = NULL;
}

typedef struct {
    bd_buf *out;
    int count;
    bd_result r;
} word_sink;

static int take_word(void *ctx, int flags, const char *token, int n, int start, int end)
{
    (void)flags, (void)start, (void)end;
    word_sink *w = ctx;
    if (w->count && w->r == BD_OK)
        w->r = bd_buf_append_char(w->out, ' ');
    if (w->r == BD_OK)
        w->r = bd_buf_append(w->out, token, (size_t)n);
    w->count++;
    return w->r == BD_OK ? SQLITE_OK : SQLITE_ERROR;
}

bd_result pg_card_words(bd_slice text, bd_buf *out, int *count)
{
    *count = 0;
    pthread_once(&tokenizer_once, tokenizer_open);
    if (!tokenizer)
        return BD_ERR_STORE;
    if (!text.ptr || text.len == 0)
        return BD_OK;
    if (text.len > (size_t)INT32_MAX)
        return BD_ERR_LIMIT;
    word_sink w = {out, 0, BD_OK};
    pthread_mutex_lock(&tokenizer_lock);
    int rc = tokenizer_api.xTokenize(tokenizer, &w, FTS5_TOKENIZE_DOCUMENT, text.ptr, (int)text.len,
                                     take_word);
    pthread_mutex_unlock(&tokenizer_lock);
    *count = w.count;
    return w.r != BD_OK ? w.r : rc == SQLITE_OK ? BD_OK : BD_ERR_STORE;
}
