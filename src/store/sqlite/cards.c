/* The SQLite backend's cards: insert (with the owner words, the BIN and last-four counts and
 * the FTS5 word index), and count and page of a card search, choosing the table or index
 * that answers each shape of query cheapest. The WHERE clause itself is cards_sql.c's. */
#include <math.h>
#include <string.h>

#include "store/sqlite/sqlite_impl.h"
#include "store/sqlite/statements.h"

static void bind_text_opt(sqlite3_stmt *st, int i, const char *v)
{
    if (v[0])
        sqlite3_bind_text(st, i, v, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, i);
}

/* The FTS5 unicode61 tokenizer with the options cards_words was made with. */
static Fts5Tokenizer *word_tokenizer(sqlite_store *s)
{
    if (s->words)
        return s->words;
    fts5_api *api = NULL;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, "SELECT fts5(?1)", -1, &st, NULL) != SQLITE_OK)
        return NULL;
    sqlite3_bind_pointer(st, 1, (void *)&api, "fts5_api_ptr", NULL);
    sqlite3_step(st);
    sqlite3_finalize(st);
    void *ctx;
    const char *args[] = {"remove_diacritics", "2"};
    if (!api || api->xFindTokenizer(api, "unicode61", &ctx, &s->tokenizer) != SQLITE_OK ||
        s->tokenizer.xCreate(ctx, args, 2, &s->words) != SQLITE_OK)
        s->words = NULL;
    return s->words;
}

typedef struct {
    sqlite_store *s;
    const char *expire_date;
    const char *card_id;
    int64_t id;
    bd_result r;
} owner_word_put;

static int put_owner_word(void *ctx, int flags, const char *token, int n, int start, int end)
{
    (void)flags, (void)start, (void)end;
    owner_word_put *w = ctx;
    sqlite3_stmt *st =
        sq_fixed(w->s, w->s->bulk_cards ? Q_CARD_OWNER_WORD_STAGE : Q_CARD_OWNER_WORD_PUT);
    if (!st) {
        w->r = BD_ERR_STORE;
        return SQLITE_ERROR;
    }
    sqlite3_bind_text(st, 1, token, n, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, w->expire_date, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, w->card_id, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 4, w->id);
    w->r = sq_step_done(w->s, st);
    /* its count (kind 2, "word expiry"), which a bulk load recounts at its end instead */
    if (w->r == BD_OK && !w->s->bulk_cards && sqlite3_changes(w->s->db) > 0)
        w->r = sq_card_count_add(w->s, 2, token, (size_t)n, w->expire_date, strlen(w->expire_date));
    return w->r == BD_OK ? SQLITE_OK : SQLITE_ERROR;
}

/* Adds each word of a card's owner, with its expiry, card id and row id, to
 * card_owner_words. */
static bd_result owner_words_put(sqlite_store *s, bd_slice owner, const char *expire_date,
                                 const char *card_id, int64_t id)
{
    Fts5Tokenizer *t = word_tokenizer(s);
    if (!t)
        return BD_ERR_STORE;
    owner_word_put w = {s, expire_date, card_id, id, BD_OK};
    int rc = s->tokenizer.xTokenize(t, &w, FTS5_TOKENIZE_DOCUMENT, owner.ptr, (int)owner.len,
                                    put_owner_word);
    return w.r != BD_OK ? w.r : rc == SQLITE_OK ? BD_OK : BD_ERR_STORE;
}

/* card_owner_words keyed by card id (migration 21), the row id kept beside it for the
 * page's join: made again from the table keyed by row id, in key order, when it still is
 * (a store wound back to an older version keeps the newer table: nothing to do). */
static const char OWNER_WORDS_BY_CARD[] =
    "CREATE TABLE card_owner_words_by_card(word TEXT NOT NULL, expire_date TEXT NOT NULL,"
    "  card_id TEXT NOT NULL, id INTEGER NOT NULL,"
    "  PRIMARY KEY(word, expire_date, card_id)) WITHOUT ROWID;"
    "INSERT INTO card_owner_words_by_card(word, expire_date, card_id, id)"
    "  SELECT w.word, w.expire_date, c.card_id, c.id FROM card_owner_words w"
    "  JOIN cards c ON c.id = w.id ORDER BY 1, 2, 3;"
    "DROP TABLE card_owner_words;"
    "ALTER TABLE card_owner_words_by_card RENAME TO card_owner_words;";

bd_result sq_owner_words_note(sqlite_store *s)
{
    char v[8];
    bd_result r = sq_meta_get(&s->base, "pending_owner_words_by_card", v, sizeof v);
    if (r == BD_ERR_NOT_FOUND || (r == BD_OK && strcmp(v, "1") != 0))
        return BD_OK;
    sqlite3_stmt *st;
    bool by_row = false;
    if (r == BD_OK && sqlite3_prepare_v2(s->db,
                                         "SELECT 1 FROM pragma_table_info('card_owner_words') "
                                         "WHERE name = 'card_id'",
                                         -1, &st, NULL) == SQLITE_OK) {
        by_row = sqlite3_step(st) != SQLITE_ROW;
        sqlite3_finalize(st);
    }
    if (r == BD_OK && by_row)
        r = sq_exec(s, OWNER_WORDS_BY_CARD);
    return r == BD_OK ? sq_meta_set(&s->base, "pending_owner_words_by_card", "0") : r;
}

/* Binds a card's columns to Q_CARD_PUT; tail is its last four reversed. */
static void bind_card(sqlite3_stmt *st, const bd_card_in *c, const char *tail)
{
    sqlite3_bind_text(st, 1, c->id, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, c->created_at, -1, SQLITE_STATIC);
    sq_bind_slice(st, 3, c->bank);
    sqlite3_bind_text(st, 4, c->number_masked, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 5, c->bin, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 6, c->last4, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 7, tail, 4, SQLITE_STATIC);
    sqlite3_bind_int(st, 8, c->length);
    sqlite3_bind_blob(st, 9, c->number_hmac, BD_HMAC_LEN, SQLITE_STATIC);
    sq_bind_slice(st, 10, c->owner);
    bind_text_opt(st, 11, c->cvv_masked);
    bind_text_opt(st, 12, c->expire_date);
    if (c->has_cvss)
        sqlite3_bind_double(st, 13, c->cvss);
    else
        sqlite3_bind_null(st, 13);
    sq_bind_slice(st, 14, c->leak_id);
    sq_bind_slice(st, 15, c->leak_name);
    bind_text_opt(st, 16, c->leak_publish_date);
    bind_text_opt(st, 17, c->leak_discover_date);
    sq_bind_known(st, 18, c->leak_size);
    sq_bind_slice(st, 19, c->leak_tags);
    if (c->cvv_masked[0])
        sqlite3_bind_blob(st, 20, c->cvv_hmac, BD_HMAC_LEN, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, 20);
}

/* Adds a new card (row id rowid) to what a bulk load rebuilds at its end instead: the
 * counts per BIN and per reversed last four, and the FTS5 word index. */
static bd_result card_summaries_put(sqlite_store *s, const bd_card_in *c, const char *tail,
                                    int64_t rowid)
{
    bd_result r = sq_card_count_add(s, 0, c->bin, 6, NULL, 0);
    if (r == BD_OK)
        r = sq_card_count_add(s, 1, tail, 4, NULL, 0);
    if (r != BD_OK || (!c->owner.ptr && !c->bank.ptr))
        return r;
    sqlite3_stmt *st = sq_fixed(s, Q_CARD_WORDS_PUT);
    if (!st)
        return BD_ERR_STORE;
    sqlite3_bind_int64(st, 1, rowid);
    sq_bind_slice(st, 2, c->owner);
    sq_bind_slice(st, 3, c->bank);
    return sq_step_done(s, st);
}

/* Alone, a put is a transaction of its own: the change log moves with it. */
static bd_result card_put_alone(sqlite_store *s, const bd_card_in *c, bool *inserted)
{
    bd_result r = sq_begin(&s->base);
    if (r == BD_OK)
        r = sq_card_put(&s->base, c, inserted);
    if (r == BD_OK)
        r = sq_commit(&s->base);
    if (r != BD_OK) {
        sq_rollback(&s->base);
        *inserted = false;
    }
    return r;
}

bd_result sq_card_put(bd_store *base, const bd_card_in *c, bool *inserted)
{
    sqlite_store *s = S(base);
    *inserted = false;
    if (sqlite3_get_autocommit(s->db))
        return card_put_alone(s, c, inserted);
    bd_result noted = sq_changes_note_put(s, true);
    if (noted != BD_OK)
        return noted;
    sqlite3_stmt *st = sq_fixed(s, Q_CARD_PUT);
    if (!st)
        return BD_ERR_STORE;
    char tail[5] = {c->last4[3], c->last4[2], c->last4[1], c->last4[0], '\0'};
    bind_card(st, c, tail);
    bd_result r = sq_step_done(s, st);
    *inserted = r == BD_OK && sqlite3_changes(s->db) > 0;
    if (!*inserted)
        return r;
    sq_leak_tally_add(s, c->leak_id, c->leak_name);
    if (s->landed)
        sq_landed_card(s, c);
    int64_t rowid = sqlite3_last_insert_rowid(s->db);
    if (s->words_side)
        sq_words_side_note(s, rowid, c->owner, c->bank);
    if (c->owner.ptr && c->expire_date[0])
        r = owner_words_put(s, c->owner, c->expire_date, c->id, rowid);
    if (r != BD_OK || s->bulk_cards)
        return r;
    return card_summaries_put(s, c, tail, rowid);
}

/* The statement for the SQL in s->sql, with the values c collected bound from parameter 1;
 * NULL on failure. */
static sqlite3_stmt *prepared(sqlite_store *s, cond_sql *c)
{
    sqlite3_stmt *st = sq_dynamic(s, s->sql.data);
    if (st)
        sq_bind_all(c, st, 1);
    return st;
}

/* Writes " WHERE <cond>" for q into s->sql, collecting its bound values in c. */
static bd_result card_where(sqlite_store *s, const bd_card_query *q, cond_sql *c)
{
    sq_cond_begin(c, &s->sql, &s->text);
    return sq_cond_where(c, q->where);
}

/* Counts a lone prefix-only or suffix-only number pattern from card_counts. Returns false
 * when q is not of that shape (the caller then counts through the indexes). */
static bool count_from_summary(sqlite_store *s, const bd_card_query *q, int64_t *count,
                               bd_result *r)
{
    const bd_card_cond *k = q->where;
    char tail[5];
    if (k->kind != BD_CC_NUMBER || k->length || bd_card_number_layout(k, tail))
        return false;
    bool has_bin = k->bin[0] != '\0', has_tail = tail[0] != '\0';
    if (has_bin == has_tail || !bd_card_plain_digits(has_bin ? k->bin : tail))
        return false;
    sqlite3_stmt *st = sq_fixed(s, Q_CARD_COUNT_SUM);
    if (!st) {
        *r = BD_ERR_STORE;
        return true;
    }
    const char *prefix = has_bin ? k->bin : tail;
    size_t n = strlen(prefix);
    char end[8];
    bd_card_digits_end(prefix, n, end);
    sqlite3_bind_int(st, 1, has_bin ? 0 : 1);
    sqlite3_bind_text(st, 2, prefix, (int)n, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, end, (int)n, SQLITE_STATIC);
    *r = sq_step_count(st, count);
    return true;
}

/* Whether k tests nothing but owner or bank words and expiry ranges: the row id and the
 * expiry are all it reads, which the narrow cards_expiry_by_id index holds. */
static bool reads_only_id_and_expiry(const bd_card_cond *k, int depth)
{
    if (depth > 64)
        return false;
    switch (k->kind) {
    case BD_CC_WORDS:
        return true;
    case BD_CC_RANGE:
        return k->column == BD_CARD_EXPIRE_DATE;
    case BD_CC_AND:
    case BD_CC_OR:
    case BD_CC_NOT:
        for (size_t i = 0; i < k->nkids; i++)
            if (!reads_only_id_and_expiry(k->kids[i], depth + 1))
                return false;
        return true;
    default:
        return false;
    }
}

typedef struct {
    char word[256];
    int n, tokens;
} query_word;

static int take_query_word(void *ctx, int flags, const char *token, int n, int start, int end)
{
    (void)flags, (void)start, (void)end;
    query_word *w = ctx;
    if (w->tokens++ == 0 && n < (int)sizeof w->word) {
        memcpy(w->word, token, (size_t)n);
        w->n = n;
    }
    return SQLITE_OK;
}

/* Whether k is "owner:WORD AND expireDate:[...]": one whole owner word and expiry ranges,
 * all ANDed. Such a query is answered off card_owner_words, which holds only cards with an
 * expiry (a range never matches a card without one). On true, w holds the word as FTS5
 * reads it in a query (the plain case is one token). */
static bool owner_word_with_expiry(sqlite_store *s, const bd_card_cond *k, query_word *w)
{
    const bd_card_cond *word = NULL;
    size_t ranges = 0;
    if (k->kind != BD_CC_AND)
        return false;
    for (size_t i = 0; i < k->nkids; i++) {
        const bd_card_cond *kid = k->kids[i];
        if (kid->kind == BD_CC_WORDS && kid->column == BD_CARD_OWNER && kid->nwords == 1 &&
            !kid->prefix && !word)
            word = kid;
        else if (kid->kind == BD_CC_RANGE && kid->column == BD_CARD_EXPIRE_DATE)
            ranges++;
        else
            return false;
    }
    if (!word || !ranges)
        return false;
    Fts5Tokenizer *t = word_tokenizer(s);
    *w = (query_word){.n = -1};
    return t &&
           s->tokenizer.xTokenize(t, w, FTS5_TOKENIZE_QUERY, word->words[0].ptr,
                                  (int)word->words[0].len, take_query_word) == SQLITE_OK &&
           w->tokens == 1 && w->n >= 0;
}

/* " WHERE ..." over card_owner_words (as w) for a query owner_word_with_expiry accepted. */
static bd_result owner_word_where(sqlite_store *s, const bd_card_cond *k, const query_word *w,
                                  cond_sql *c)
{
    sq_cond_begin(c, &s->sql, &s->text);
    sq_emit(c, " WHERE w.word = ?");
    sq_bind_copy(c, w->word, (size_t)w->n, NULL);
    for (size_t i = 0; i < k->nkids; i++)
        if (k->kids[i]->kind == BD_CC_RANGE)
            sq_range_bounds(c, "w.", "expire_date", k->kids[i]);
    return c->err;
}

/* The longest "word expiry" key of card_counts a count binds; a longer one (a very long
 * word or bound) is counted off card_owner_words instead. */
#define OWNER_KEY_MAX 320

/* Binds the card_counts key word + sep + v (the caller checked its length). */
static void bind_owner_key(cond_sql *c, const query_word *w, char sep, bd_slice v)
{
    char key[OWNER_KEY_MAX];
    memcpy(key, w->word, (size_t)w->n);
    key[w->n] = sep;
    if (v.len)
        memcpy(key + w->n + 1, v.ptr, v.len);
    sq_bind_copy(c, key, (size_t)w->n + 1 + v.len, NULL);
}

/* The count of a query owner_word_with_expiry accepted, off card_counts (kind 2: a row per
 * owner word and expiry, keyed "word expiry"): a sum over the word's expiry dates in the
 * ranges, some dozens of rows, instead of reading every card of the word that is in them
 * in card_owner_words (thousands at 1M cards: most of a scenario-5 search). Words hold no
 * byte below '!' (the tokenizer splits there), and a key's date part compares as the date
 * does, so the word's keys lie in ["word ", "word!") and a range of dates is a range of
 * keys. False when a key would not fit. */
static bool owner_word_count(sqlite_store *s, const bd_card_cond *k, const query_word *w,
                             cond_sql *c)
{
    for (size_t i = 0; i < k->nkids; i++) {
        const bd_card_cond *b = k->kids[i];
        if (b->kind == BD_CC_RANGE && ((size_t)w->n + 1 + b->low.len > OWNER_KEY_MAX ||
                                       (size_t)w->n + 1 + b->high.len > OWNER_KEY_MAX))
            return false;
    }
    sq_cond_begin(c, &s->sql, &s->text);
    sq_emit(c, "SELECT coalesce(sum(n), 0) FROM card_counts WHERE kind = 2 AND key >= ?");
    bind_owner_key(c, w, ' ', (bd_slice){"", 0});
    sq_emit(c, " AND key < ?");
    bind_owner_key(c, w, '!', (bd_slice){"", 0});
    for (size_t i = 0; i < k->nkids; i++) {
        const bd_card_cond *b = k->kids[i];
        if (b->kind != BD_CC_RANGE)
            continue;
        if (b->low.ptr) {
            sq_emit(c, b->low_inclusive ? " AND key >= ?" : " AND key > ?");
            bind_owner_key(c, w, ' ', b->low);
        }
        if (b->high.ptr) {
            sq_emit(c, b->high_inclusive ? " AND key <= ?" : " AND key < ?");
            bind_owner_key(c, w, ' ', b->high);
        }
    }
    return true;
}

/* Counts an owner word within expiry ranges off card_counts, or as one contiguous range of
 * card_owner_words where a key would not fit, instead of testing the expiry of every card
 * with the word. */
static bool count_from_owner_words(sqlite_store *s, const bd_card_query *q, int64_t *count,
                                   bd_result *r)
{
    query_word w;
    if (!owner_word_with_expiry(s, q->where, &w))
        return false;
    cond_sql *c = &s->cond;
    bd_buf_reset(&s->sql);
    *r = BD_OK;
    if (owner_word_count(s, q->where, &w, c)) {
        *r = c->err;
    } else {
        *r = bd_buf_append_str(&s->sql, "SELECT count(*) FROM card_owner_words w");
        if (*r == BD_OK)
            *r = owner_word_where(s, q->where, &w, c);
    }
    sqlite3_stmt *st = *r == BD_OK ? prepared(s, c) : NULL;
    if (!st) {
        if (*r == BD_OK)
            *r = BD_ERR_STORE;
        return true;
    }
    *r = sq_step_count(st, count);
    return true;
}

static bd_result card_count(bd_store *base, const bd_card_query *q, int64_t *count)
{
    sqlite_store *s = S(base);
    bd_result summary = sq_card_counts_flush(s); /* this connection's own puts count too */
    if (summary != BD_OK)
        return summary;
    if (count_from_summary(s, q, count, &summary) || count_from_owner_words(s, q, count, &summary))
        return summary;
    cond_sql *c = &s->cond;
    bd_buf_reset(&s->sql);
    /* SQLite would look each word match up in the table by row id; the narrow index gives
     * the same answer from a fraction of the pages. */
    bd_result r = bd_buf_append_str(&s->sql, reads_only_id_and_expiry(q->where, 0)
                                                 ? "SELECT count(*) FROM cards c "
                                                   "INDEXED BY cards_expiry_by_id"
                                                 : "SELECT count(*) FROM cards c");
    if (r == BD_OK)
        r = card_where(s, q, c);
    if (r != BD_OK)
        return r;
    sqlite3_stmt *st = prepared(s, c);
    return st ? sq_step_count(st, count) : BD_ERR_STORE;
}

/* The index to walk in page order instead of sorting the matches, or NULL. Walking meets a
 * match about every N/matches rows, so a page costs (offset+limit)*N/matches index steps;
 * sorting costs a table lookup per match plus matches*log(matches) comparisons, and a
 * lookup cost ~15 index steps when measured (owner word and expiry range, 300k cards: 745
 * matches sorted in 2.2 ms, 3,000 index steps walked in 0.6 ms). Walk when that is
 * cheaper: many matches, shallow page.
 * Without the choice SQLite picks the filter's index and sorts, e.g. all 50,000 cards of a
 * common BIN to return 20 of them. N is estimated by the largest rowid, an O(log N) read. */
static const char *sort_order_index(sqlite_store *s, const bd_card_query *q, int64_t matches)
{
    if (q->nsort == 0 || matches <= 0)
        return NULL;
    /* One whole BIN in date order: its own index range is already the page order. */
    const bd_card_cond *k = q->where;
    if (q->nsort == 1 && q->sort[0].column == BD_CARD_CREATED_AT && k->kind == BD_CC_NUMBER &&
        strlen(k->bin) == 6 && bd_card_plain_digits(k->bin) && !k->last4[0] && !k->length &&
        !bd_card_number_layout(k, NULL))
        return "cards_by_bin_created";
    const char *index = q->sort[0].column == BD_CARD_CREATED_AT    ? "cards_by_created"
                        : q->sort[0].column == BD_CARD_EXPIRE_DATE ? "cards_by_expire"
                                                                   : NULL;
    if (!index)
        return NULL;
    int64_t n = sq_count_of(s, Q_MAX_CARD);
    double depth = (double)(q->offset + q->limit);
    double m = (double)matches;
    double sort_cost = m * (16 + (m > 2 ? log2(m) : 1));
    return depth * (double)n / m < sort_cost ? index : NULL;
}

/* The columns card_find selects, in bd_card_row order. */
#define CARD_COLS                                                                                  \
    "c.card_id, c.created_at, c.bank, c.number_masked, c.owner, c.cvv, c.expire_date, c.cvss, "    \
    "c.leak_id, c.leak_name, c.leak_publish_date, c.leak_discover_date, c.leak_size, "             \
    "c.leak_tags"

/* Fills a card row from CARD_COLS. */
static void card_from_cols(sqlite3_stmt *st, bd_card_row *row)
{
    row->id = sq_col_slice(st, 0);
    row->created_at = sq_col_slice(st, 1);
    row->bank = sq_col_slice(st, 2);
    row->number_masked = sq_col_slice(st, 3);
    row->owner = sq_col_slice(st, 4);
    row->cvv = sq_col_slice(st, 5);
    row->expire_date = sq_col_slice(st, 6);
    row->has_cvss = sqlite3_column_type(st, 7) != SQLITE_NULL;
    row->cvss = sqlite3_column_double(st, 7);
    row->leak_id = sq_col_slice(st, 8);
    row->leak_name = sq_col_slice(st, 9);
    row->leak_publish_date = sq_col_slice(st, 10);
    row->leak_discover_date = sq_col_slice(st, 11);
    row->has_leak_size = sqlite3_column_type(st, 12) != SQLITE_NULL;
    row->leak_size = sqlite3_column_int64(st, 12);
    row->leak_tags = sq_col_slice(st, 13);
}

/* The tables and WHERE clause of a card page, appended to s->sql with its values in c;
 * *by_word tells whether the page reads card_owner_words (as w). */
static bd_result page_source(sqlite_store *s, const bd_card_query *q, int64_t matches, cond_sql *c,
                             bool *by_word)
{
    /* An owner word in expiry order: card_owner_words is already in that order, ties by
     * card id (page_order), so the page reads the first matches of one index range instead
     * of walking every card by expiry to test it against the word's matches, each card by
     * its row id; before the key held the card id (migration 21) the cards of the first
     * expiry dates were all read and sorted for each page, more the more cards the store
     * holds. */
    query_word w;
    *by_word = q->nsort && q->sort[0].column == BD_CARD_EXPIRE_DATE &&
               owner_word_with_expiry(s, q->where, &w);
    if (*by_word) {
        bd_result r =
            bd_buf_append_str(&s->sql, "card_owner_words w CROSS JOIN cards c ON c.id = w.id");
        return r == BD_OK ? owner_word_where(s, q->where, &w, c) : r;
    }
    bd_result r = bd_buf_append_str(&s->sql, "cards c");
    const char *order_index = sort_order_index(s, q, matches);
    if (r == BD_OK && order_index)
        r = bd_buf_printf(&s->sql, " INDEXED BY %s", order_index);
    return r == BD_OK ? card_where(s, q, c) : r;
}

/* " ORDER BY" the page's sort keys, ties broken by card id in the direction of the first,
 * then its LIMIT and OFFSET parameters. */
static bd_result page_order(cond_sql *c, const bd_card_query *q, bool by_word)
{
    bool first_desc = q->nsort ? q->sort[0].descending : true;
    sq_emit(c, " ORDER BY ");
    for (size_t i = 0; i < q->nsort && i < BD_CARD_MAX_SORT; i++) {
        sq_emit(c, by_word && i == 0 ? "w." : "c.");
        sq_emit(c, bd_card_sql_col(q->sort[i].column));
        sq_emit(c, q->sort[i].descending ? " DESC, " : " ASC, ");
    }
    /* the owner-word key's own tie-break when only the expiry is sorted on: the same order */
    sq_emit(c, by_word && q->nsort == 1 ? "w." : "c.");
    sq_emit(c, first_desc ? "card_id DESC LIMIT ? OFFSET ?" : "card_id ASC LIMIT ? OFFSET ?");
    return c->err;
}

static bd_result card_find(bd_store *base, const bd_card_query *q, int64_t matches, bd_card_cb cb,
                           void *ctx)
{
    sqlite_store *s = S(base);
    cond_sql *c = &s->cond;
    bool by_word = false;
    bd_buf_reset(&s->sql);
    bd_result r = bd_buf_append_str(&s->sql, "SELECT " CARD_COLS " FROM ");
    if (r == BD_OK)
        r = page_source(s, q, matches, c, &by_word);
    if (r == BD_OK)
        r = page_order(c, q, by_word);
    if (r != BD_OK)
        return r;
    sqlite3_stmt *st = prepared(s, c);
    if (!st)
        return BD_ERR_STORE;
    sqlite3_bind_int(st, (int)c->nbinds + 1, q->limit);
    sqlite3_bind_int64(st, (int)c->nbinds + 2, q->offset);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        bd_card_row row;
        card_from_cols(st, &row);
        if (cb(ctx, &row))
            break;
    }
    r = rc == SQLITE_ROW || rc == SQLITE_DONE ? BD_OK : sq_map_rc(rc);
    sq_done(st);
    return r;
}

/* The count first: it decides whether the page walks the sort order or sorts the matches
 * (sort_order_index), and whether there is a page at all. */
bd_result sq_card_search(bd_store *base, const bd_card_query *q, int64_t *found, bd_card_cb cb,
                         void *ctx)
{
    bd_result r = card_count(base, q, found);
    if (r != BD_OK || *found <= q->offset || q->limit <= 0)
        return r;
    return card_find(base, q, *found, cb, ctx);
}
