/* The card condition-tree SQL writer: a bd_card_cond tree as a WHERE clause over "cards c"
 * with bound parameters, shaped so that SQLite plans it once and uses the number indexes. */
#include <stdint.h>
#include <string.h>

#include "store/sqlite/cards_sql.h"

void sq_cond_begin(cond_sql *c, bd_buf *sql, bd_buf *text)
{
    c->sql = sql;
    c->text = text;
    c->nbinds = 0;
    c->err = BD_OK;
    bd_buf_reset(text);
}

void sq_emit(cond_sql *c, const char *text)
{
    if (c->err == BD_OK)
        c->err = bd_buf_append_str(c->sql, text);
}

static void bind_later(cond_sql *c, int type, const void *p, size_t len, int64_t n)
{
    if (c->nbinds == MAX_BINDS) {
        c->err = BD_ERR_LIMIT;
        return;
    }
    c->binds[c->nbinds++] = (bind_value){type, p, (int)len, n};
}

/* Keeps a string made for binding in c->text; returns its offset (the buffer may move, so
 * offsets are turned into pointers only when binding). */
static size_t keep_text(cond_sql *c, const char *a, size_t alen, const char *b)
{
    size_t at = c->text->len;
    if (c->err == BD_OK)
        c->err = bd_buf_append(c->text, a, alen);
    if (c->err == BD_OK && b)
        c->err = bd_buf_append_str(c->text, b);
    if (c->err == BD_OK)
        c->err = bd_buf_append_char(c->text, '\0');
    return at;
}

static void bind_kept(cond_sql *c, size_t at)
{
    bind_later(c, BIND_TEXT, (const void *)(uintptr_t)at, 0, -1);
}

void sq_bind_copy(cond_sql *c, const char *p, size_t n, const char *suffix)
{
    bind_kept(c, keep_text(c, p, n, suffix));
}

/* " AND col matches pattern" for a bin (full 6) or reversed-tail (full 4) pattern. A plain
 * digit prefix becomes a range: SQLite recompiles a statement whose GLOB pattern is a
 * bound parameter every time the value bound changes; a range or an equality plans once. */
static void digit_pattern(cond_sql *c, const char *col, const char *p, size_t n, size_t full)
{
    sq_emit(c, " AND ");
    sq_emit(c, col);
    bool digits = bd_card_plain_digits(p);
    if (n == full) {
        sq_emit(c, digits ? " = ?" : " GLOB ?");
        sq_bind_copy(c, p, n, NULL);
    } else if (digits) {
        char end[8];
        bd_card_digits_end(p, n, end);
        sq_emit(c, " >= ? AND ");
        sq_emit(c, col);
        sq_emit(c, " < ?");
        sq_bind_copy(c, p, n, NULL);
        sq_bind_copy(c, end, n, NULL);
    } else {
        sq_emit(c, " GLOB ?");
        sq_bind_copy(c, p, n, "*");
    }
}

/* " AND <table><col> <op> ?" with v bound. */
static void bound(cond_sql *c, const char *table, const char *col, const char *op, bd_slice v)
{
    sq_emit(c, " AND ");
    sq_emit(c, table);
    sq_emit(c, col);
    sq_emit(c, op);
    bind_later(c, BIND_TEXT, v.ptr, v.len, 0);
}

void sq_range_bounds(cond_sql *c, const char *table, const char *col, const bd_card_cond *k)
{
    if (k->low.ptr)
        bound(c, table, col, k->low_inclusive ? " >= ?" : " > ?", k->low);
    if (k->high.ptr)
        bound(c, table, col, k->high_inclusive ? " <= ?" : " < ?", k->high);
}

/* NUMBER: bin and tail patterns and length bounds, ANDed. */
static void write_number(void *w, const bd_card_cond *k)
{
    cond_sql *c = w;
    char tail[5];
    int min_length = bd_card_number_layout(k, tail);
    size_t bl = strlen(k->bin), tl = strlen(tail);
    sq_emit(c, "(1");
    if (bl == 6 && bd_card_plain_digits(k->bin)) {
        /* equality, so the (bin, tail, length) index also serves the tail */
        sq_emit(c, " AND c.bin = ?");
        bind_later(c, BIND_TEXT, k->bin, 6, 0);
    } else if (bl) {
        digit_pattern(c, "c.bin", k->bin, bl, 6);
    }
    if (tl)
        digit_pattern(c, "c.tail", tail, tl, 4);
    if (k->length) {
        sq_emit(c, " AND c.length = ?");
        bind_later(c, BIND_INT, NULL, 0, k->length);
    }
    if (min_length) {
        sq_emit(c, " AND c.length >= ?");
        bind_later(c, BIND_INT, NULL, 0, min_length);
    }
    sq_emit(c, ")");
}

/* WORDS: an FTS5 query limited to one column: owner : "w1 w2" (a phrase), with a trailing
 * '*' for a prefix. Words hold no quotes, but any would be doubled. */
static void write_words(void *w, const bd_card_cond *k)
{
    cond_sql *c = w;
    size_t at = c->text->len;
    if (c->err == BD_OK)
        c->err = bd_buf_printf(c->text, "%s : \"", bd_card_sql_col(k->column));
    for (size_t i = 0; i < k->nwords && c->err == BD_OK; i++) {
        if (i)
            c->err = bd_buf_append_char(c->text, ' ');
        for (size_t j = 0; j < k->words[i].len && c->err == BD_OK; j++) {
            char ch = k->words[i].ptr[j];
            c->err = bd_buf_append(c->text, ch == '"' ? "\"\"" : &ch, ch == '"' ? 2 : 1);
        }
    }
    keep_text(c, k->prefix ? "\" *" : "\"", k->prefix ? 3 : 1, NULL);
    sq_emit(c, "c.id IN (SELECT rowid FROM cards_words WHERE cards_words MATCH ?)");
    bind_kept(c, at);
}

/* RANGE: the column within its bounds; without bounds, that it has a value. */
static void write_range(void *w, const bd_card_cond *k)
{
    cond_sql *c = w;
    const char *col = bd_card_sql_col(k->column);
    if (!k->low.ptr && !k->high.ptr) {
        sq_emit(c, "c.");
        sq_emit(c, col);
        sq_emit(c, " IS NOT NULL");
        return;
    }
    sq_emit(c, "(1");
    sq_range_bounds(c, "c.", col, k);
    sq_emit(c, ")");
}

/* HMAC, CVV: the keyed hash's column equals the one searched. */
static void write_hmac(void *w, const bd_card_cond *k)
{
    cond_sql *c = w;
    sq_emit(c, k->kind == BD_CC_HMAC ? "c.number_hmac = ?" : "c.cvv_hmac = ?");
    bind_later(c, BIND_BLOB, k->hmac, BD_HMAC_LEN, 0);
}

static void write_equals(void *w, const bd_card_cond *k)
{
    cond_sql *c = w;
    sq_emit(c, "c.");
    sq_emit(c, bd_card_sql_col(k->column));
    sq_emit(c, " = ?");
    bind_later(c, BIND_TEXT, k->value.ptr, k->value.len, 0);
}

static void emit_sql(void *w, const char *text)
{
    sq_emit(w, text);
}

static void fail(void *w, bd_result r)
{
    cond_sql *c = w;
    c->err = r;
}

/* SQLite's booleans are 1 and 0. */
static const bd_card_dialect SQLITE_CARDS = {
    .true_sql = "1",
    .false_sql = "0",
    .emit = emit_sql,
    .fail = fail,
    .number = write_number,
    .hmac = write_hmac,
    .equals = write_equals,
    .words = write_words,
    .range = write_range,
};

bd_result sq_cond_where(cond_sql *c, const bd_card_cond *k)
{
    sq_emit(c, " WHERE ");
    bd_card_cond_walk(&SQLITE_CARDS, c, k);
    return c->err;
}

void sq_bind_all(cond_sql *c, sqlite3_stmt *st, int first)
{
    for (size_t i = 0; i < c->nbinds; i++) {
        const bind_value *b = &c->binds[i];
        int at = first + (int)i;
        if (b->type == BIND_INT)
            sqlite3_bind_int64(st, at, b->n);
        else if (b->type == BIND_BLOB)
            sqlite3_bind_blob(st, at, b->ptr, b->len, SQLITE_STATIC);
        else if (b->n == -1) /* kept text: ptr holds an offset into c->text */
            sqlite3_bind_text(st, at, c->text->data + (uintptr_t)b->ptr, -1, SQLITE_STATIC);
        else
            sqlite3_bind_text(st, at, b->ptr, b->len, SQLITE_STATIC);
    }
}
