/* Cards on PostgreSQL: imports that keep the word and count tables, and searches that give
 * what the SQLite store gives, row for row and in the same order.
 *
 * - card_put is one statement: the card, its BIN's and tail's counts, its owner's words
 *   with its expiry (card_owner_words), its BIN lookup row (card_bins, which routes a BIN
 *   page to one shard of a Citus cluster), and the words of its owner and bank with their
 *   positions (card_words); inside a transaction the cards are streamed and moved by a
 *   statement doing the same for many (copy.c). The words are split here, by the tokenizer
 *   SQLite's FTS5 index uses (cards_sql.c), so a word matches on both stores alike.
 * - card_search is one statement: the count and the page. It counts from one row of
 *   card_counts for a lone plain prefix or tail, and one range of card_counts for an
 *   owner word within expiry ranges, as SQLite does, and a lone word, prefix or phrase off
 *   card_words alone; anything else through the cards table.
 * - The page is ordered by the sort keys, then card_id in the first key's direction. SQLite
 *   puts NULL before every value, so an ascending key is NULLS FIRST and a descending one
 *   NULLS LAST here (created_at, never NULL, says neither, so that its index serves both
 *   directions). Which index drives a search is PostgreSQL's choice: planned once per
 *   shape when no value can change it, else for its very values each time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/pg/batch_sql.h"
#include "store/pg/cards_sql.h"

/* $20 and $21: the owner's and the bank's words, separated by spaces; $22 the CVV's keyed
 * hash ($11 its mask). Returns how many
 * cards went in: 1 or 0 (a card with that id exists). The counts are kept during a bulk
 * load too: one small upsert per card, cheaper than recounting millions at its end. */
static const pg_stmt CARD_PUT = {
    PG_Q_CARD_PUT,
    "WITH ins AS (INSERT INTO cards(card_id, created_at, bank, number_masked, bin, last4, tail, "
    "length, number_hmac, owner, cvv, expire_date, cvss, leak_id, leak_name, leak_publish_date, "
    "leak_discover_date, leak_size, leak_tags, cvv_hmac) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, "
    "$9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $22) ON CONFLICT (card_id) DO NOTHING "
    "RETURNING id, card_id, created_at, bin, tail, expire_date), "
    "ow AS (SELECT DISTINCT t.word, ins.expire_date, ins.card_id FROM ins, "
    "unnest(string_to_array($20::text, ' ')) AS t(word) WHERE ins.expire_date IS NOT NULL), "
    "counted AS (INSERT INTO card_counts(kind, key, n) SELECT k.kind, k.key, 1 FROM ("
    "SELECT v.kind, v.key FROM ins, "
    "LATERAL (VALUES (0::smallint, ins.bin), (1::smallint, ins.tail)) AS v(kind, key) "
    "UNION ALL SELECT 2::smallint, ow.word || ' ' || ow.expire_date FROM ow) AS k "
    "ON CONFLICT (kind, key) DO UPDATE SET n = card_counts.n + 1), "
    "owner_words AS (INSERT INTO card_owner_words(word, expire_date, card_id) "
    "SELECT word, expire_date, card_id FROM ow ON CONFLICT DO NOTHING), "
    "bins AS (INSERT INTO card_bins(bin, created_at, card_id) "
    "SELECT bin, created_at, card_id FROM ins), "
    "words AS (INSERT INTO card_words(col, word, id, pos) "
    "SELECT 0, t.word, ins.id, t.pos FROM ins, "
    "unnest(string_to_array($20::text, ' ')) WITH ORDINALITY AS t(word, pos) "
    "UNION ALL SELECT 1, t.word, ins.id, t.pos FROM ins, "
    "unnest(string_to_array($21::text, ' ')) WITH ORDINALITY AS t(word, pos)) "
    "SELECT count(*) FROM ins"};

static const char *opt(const char *v)
{
    return v[0] ? v : NULL;
}

/* A btree entry holds at most 2,704 bytes: a longer word would fail the card's import. A
 * word past WORD_MAX bytes is kept cut (at a character) and marked with \x01, which no word
 * holds: it keeps its place in phrases and still matches a prefix of up to WORD_MAX bytes,
 * and only a search for all of such a word (a query holds at most 4,096 bytes) misses it. */
#define WORD_MAX 2000

static bd_slice words_of(bd_buf *b)
{
    size_t in = 0, out = 0;
    while (in < b->len) {
        size_t n = strcspn(b->data + in, " ");
        size_t keep = n;
        if (n > WORD_MAX)
            for (keep = WORD_MAX; ((uint8_t)b->data[in + keep] & 0xC0) == 0x80; keep--)
                ;
        memmove(b->data + out, b->data + in, keep);
        out += keep;
        if (keep < n)
            b->data[out++] = '\x01';
        in += n;
        if (in < b->len)
            b->data[out++] = b->data[in++]; /* the space */
    }
    b->len = out;
    return (bd_slice){b->data ? b->data : "", b->len};
}

static bd_result insert_card(pg_store *p, const bd_card_in *c, bool *inserted)
{
    bd_buf *owner = &p->words[0], *bank = &p->words[1];
    bd_buf_reset(owner);
    bd_buf_reset(bank);
    int n;
    bd_result r = pg_changes_note_put(p, true);
    if (r == BD_OK)
        r = pg_card_words(c->owner, owner, &n);
    if (r == BD_OK)
        r = pg_card_words(c->bank, bank, &n);
    char tail[5] = {c->last4[3], c->last4[2], c->last4[1], c->last4[0], '\0'};
    char cvss[32];
    snprintf(cvss, sizeof cvss, "%.17g", c->cvss + 0.0); /* -0 is 0, as SQLite keeps it */
    pg_params pp = {0};
    pg_param_str(&pp, c->id);
    pg_param_str(&pp, c->created_at);
    pg_param_text(&pp, c->bank);
    pg_param_str(&pp, c->number_masked);
    pg_param_str(&pp, c->bin);
    pg_param_str(&pp, c->last4);
    pg_param_str(&pp, tail);
    pg_param_int(&pp, c->length);
    pg_param_text(&pp, (bd_slice){(const char *)c->number_hmac, BD_HMAC_LEN});
    pg_param_text(&pp, c->owner);
    pg_param_str(&pp, opt(c->cvv_masked));
    pg_param_str(&pp, opt(c->expire_date));
    pg_param_str(&pp, c->has_cvss ? cvss : NULL);
    pg_param_text(&pp, c->leak_id);
    pg_param_text(&pp, c->leak_name);
    pg_param_str(&pp, opt(c->leak_publish_date));
    pg_param_str(&pp, opt(c->leak_discover_date));
    if (c->leak_size >= 0)
        pg_param_int(&pp, c->leak_size);
    else
        pg_param_str(&pp, NULL);
    pg_param_text(&pp, c->leak_tags);
    pg_param_text(&pp, words_of(owner));
    pg_param_text(&pp, words_of(bank));
    pg_param_text(&pp,
                  (bd_slice){c->cvv_masked[0] ? (const char *)c->cvv_hmac : NULL, BD_HMAC_LEN});
    PGresult *res;
    if (r == BD_OK)
        r = pg_run(p, &CARD_PUT, &pp, &res);
    if (r == BD_OK) {
        *inserted = pg_int(res, 0, 0) > 0;
        PQclear(res);
    }
    return r;
}

/* Inside a write transaction the card is streamed (copy.c): *inserted says it was staged,
 * and a duplicate is found when the cards move. */
static bd_result stage_card(pg_store *p, const bd_card_in *c, bool *inserted)
{
    bd_buf *owner = &p->words[0], *bank = &p->words[1];
    bd_buf_reset(owner);
    bd_buf_reset(bank);
    int n;
    bd_result r = pg_changes_note_put(p, true);
    if (r == BD_OK)
        r = pg_card_words(c->owner, owner, &n);
    if (r == BD_OK)
        r = pg_card_words(c->bank, bank, &n);
    if (r == BD_OK)
        r = pg_copy_put_card(p, c, words_of(owner), words_of(bank));
    *inserted = r == BD_OK;
    return r;
}

bd_result pg_card_put(bd_store *s, const bd_card_in *c, bool *inserted)
{
    pg_store *p = pg_of(s);
    *inserted = false;
    if (p->in_tx)
        return stage_card(p, c, inserted);
    bool own;
    bd_result r = pg_write_begin(p, &own);
    if (r != BD_OK)
        return r;
    r = pg_write_end(p, own, insert_card(p, c, inserted));
    if (r != BD_OK)
        *inserted = false;
    return r;
}

/* ---- counting ------------------------------------------------------------------------- */

static bool plain_digits(const char *p)
{
    for (; *p; p++)
        if (*p < '0' || *p > '9')
            return false;
    return true;
}

/* A query counting a lone prefix-only or suffix-only plain number pattern from
 * card_counts (kind 0: BINs, kind 1: reversed last fours), or false when q is not of that
 * shape. */
static bool count_from_summary(pg_card_sql *c, const bd_card_query *q)
{
    const bd_card_cond *k = q->where;
    if (k->kind != BD_CC_NUMBER || k->length || k->min_length > 12)
        return false;
    size_t bl = strlen(k->bin), tl = strlen(k->last4);
    if ((bl == 0) == (tl == 0) || !plain_digits(bl ? k->bin : k->last4))
        return false;
    char from[7], to[7];
    size_t n = bl ? bl : tl;
    if (n == 0 || n > 6)
        return false;
    for (size_t i = 0; i < n; i++)
        from[i] = bl ? k->bin[i] : k->last4[tl - 1 - i];
    memcpy(to, from, n);
    to[n - 1]++; /* '9' + 1 is ':', after every digit */
    pg_card_emit(c, bl ? "SELECT coalesce(sum(n), 0) FROM card_counts WHERE kind = 0 AND key >= "
                       : "SELECT coalesce(sum(n), 0) FROM card_counts WHERE kind = 1 AND key >= ");
    pg_card_value(c, from, n);
    pg_card_emit(c, " AND key < ");
    pg_card_value(c, to, n);
    return true;
}

/* The shape of "owner:WORD AND expireDate:[...]" alone: k ANDs one owner word (one term, not
 * a prefix) with expiry ranges and nothing else. On true, *w is the word's condition, *range
 * the first range and *ranges their number (at least 1). */
static bool owner_and_expiry(const bd_card_cond *k, const bd_card_cond **w,
                             const bd_card_cond **range, size_t *ranges)
{
    *w = *range = NULL;
    *ranges = 0;
    if (!k || k->kind != BD_CC_AND)
        return false;
    for (size_t i = 0; i < k->nkids; i++) {
        const bd_card_cond *kid = k->kids[i];
        if (kid->kind == BD_CC_WORDS && kid->column == BD_CARD_OWNER && kid->nwords == 1 &&
            !kid->prefix && !*w)
            *w = kid;
        else if (kid->kind == BD_CC_RANGE && kid->column == BD_CARD_EXPIRE_DATE) {
            if (!*range)
                *range = kid;
            (*ranges)++;
        } else
            return false;
    }
    return *w && *ranges;
}

/* Whether k is "owner:WORD AND expireDate:[...]": one owner word (one word once split the
 * way the index splits it) and expiry ranges, all ANDed. Such a query is answered off
 * card_owner_words, which holds only cards with an expiry, as a range always needs one.
 * On true, word holds the word. */
static bool owner_word_with_expiry(const bd_card_cond *k, bd_buf *word)
{
    const bd_card_cond *w, *range;
    size_t ranges;
    bd_buf_reset(word);
    int n = 0;
    return owner_and_expiry(k, &w, &range, &ranges) &&
           pg_card_words(w->words[0], word, &n) == BD_OK && n == 1;
}

/* " WHERE ..." over card_owner_words (as w) for a query owner_word_with_expiry accepted. */
static void owner_word_where(pg_card_sql *c, const bd_card_cond *k, const bd_buf *word)
{
    pg_card_emit(c, " WHERE w.word = ");
    pg_card_value(c, word->data, word->len);
    for (size_t i = 0; i < k->nkids; i++) {
        const bd_card_cond *r = k->kids[i];
        if (r->kind != BD_CC_RANGE)
            continue;
        if (r->low.ptr) {
            pg_card_emit(c, r->low_inclusive ? " AND w.expire_date >= " : " AND w.expire_date > ");
            pg_card_value(c, r->low.ptr, r->low.len);
        }
        if (r->high.ptr) {
            pg_card_emit(c, r->high_inclusive ? " AND w.expire_date <= " : " AND w.expire_date < ");
            pg_card_value(c, r->high.ptr, r->high.len);
        }
    }
}

#define OWNER_KEY_MAX 256

/* Emits word + sep + v, at most OWNER_KEY_MAX bytes, as a value of the statement. */
static void owner_word_key(pg_card_sql *c, const bd_buf *word, char sep, bd_slice v)
{
    char key[OWNER_KEY_MAX];
    memcpy(key, word->data, word->len);
    key[word->len] = sep;
    memcpy(key + word->len + 1, v.ptr, v.len);
    pg_card_value(c, key, word->len + 1 + v.len);
}

/* The count of a query owner_word_with_expiry accepted, off card_counts (kind 2: a row per
 * owner word and expiry, keyed "word expiry"): a sum over the word's expiry dates in the
 * ranges, some dozens of rows, instead of reading every card of the word in card_owner_words
 * (0.6 of a scenario-5 search's 0.9 ms at 1M cards). Words hold no space, and a key's
 * date part compares as the date does, so the word's keys lie in ["word ", "word!") and a
 * range of dates is a range of keys. False when a key would not fit (a very long word). */
static bool owner_word_count(pg_card_sql *c, const bd_card_cond *k, const bd_buf *word)
{
    for (size_t i = 0; i < k->nkids; i++) {
        const bd_card_cond *r = k->kids[i];
        if (r->kind == BD_CC_RANGE && (word->len + 1 + r->low.len > OWNER_KEY_MAX ||
                                       word->len + 1 + r->high.len > OWNER_KEY_MAX))
            return false;
    }
    pg_card_emit(c, "SELECT coalesce(sum(n), 0) FROM card_counts WHERE kind = 2 AND key >= ");
    owner_word_key(c, word, ' ', (bd_slice){"", 0});
    pg_card_emit(c, " AND key < ");
    owner_word_key(c, word, '!', (bd_slice){"", 0});
    for (size_t i = 0; i < k->nkids; i++) {
        const bd_card_cond *r = k->kids[i];
        if (r->kind != BD_CC_RANGE)
            continue;
        if (r->low.ptr) {
            pg_card_emit(c, r->low_inclusive ? " AND key >= " : " AND key > ");
            owner_word_key(c, word, ' ', r->low);
        }
        if (r->high.ptr) {
            pg_card_emit(c, r->high_inclusive ? " AND key <= " : " AND key < ");
            owner_word_key(c, word, ' ', r->high);
        }
    }
    return true;
}

/* The query counting q's cards: off the count or word tables where q's shape allows. */
static void count_query(pg_card_sql *c, const bd_card_query *q, bd_buf *word)
{
    if (count_from_summary(c, q))
        return;
    if (owner_word_with_expiry(q->where, word)) {
        if (!owner_word_count(c, q->where, word)) {
            pg_card_emit(c, "SELECT count(*) FROM card_owner_words w");
            owner_word_where(c, q->where, word);
        }
    } else if (!pg_card_word_count(c, q->where)) {
        pg_card_emit(c, "SELECT count(*) FROM cards c WHERE ");
        pg_card_cond(c, q->where);
    }
}

/* ---- pages ---------------------------------------------------------------------------- */

/* " ORDER BY ..." in SQLite's order: NULL first ascending, last descending; ties by
 * card_id in the first key's direction. by_word: the first key is card_owner_words'
 * expiry (as w), never NULL. outer: the keys are the page's columns (as p). */
static void order_by(pg_card_sql *c, const bd_card_query *q, bool by_word, bool outer)
{
    const char *table = outer ? "p." : "c.";
    pg_card_emit(c, " ORDER BY ");
    for (size_t i = 0; i < q->nsort && i < BD_CARD_MAX_SORT; i++) {
        bd_card_column col = q->sort[i].column;
        bool desc = q->sort[i].descending;
        pg_card_emit(c, by_word && i == 0 && !outer ? "w." : table);
        pg_card_emit(c, bd_card_sql_col(col));
        if (col == BD_CARD_CREATED_AT || (by_word && i == 0 && !outer))
            pg_card_emit(c, desc ? " DESC, " : " ASC, ");
        else
            pg_card_emit(c, desc ? " DESC NULLS LAST, " : " ASC NULLS FIRST, ");
    }
    bool first_desc = q->nsort ? q->sort[0].descending : true;
    pg_card_emit(c, table);
    pg_card_emit(c, first_desc ? "card_id DESC" : "card_id ASC");
}

void pg_card_rows(PGresult *res, int first, int n, bd_card_cb cb, void *ctx)
{
    for (int i = first; i < first + n; i++) {
        bd_card_row row;
        row.id = pg_slice(res, i, 0);
        row.created_at = pg_slice(res, i, 1);
        row.bank = pg_slice(res, i, 2);
        row.number_masked = pg_slice(res, i, 3);
        row.owner = pg_slice(res, i, 4);
        row.cvv = pg_slice(res, i, 5);
        row.expire_date = pg_slice(res, i, 6);
        row.has_cvss = !PQgetisnull(res, i, 7);
        row.cvss = row.has_cvss ? strtod(PQgetvalue(res, i, 7), NULL) : 0;
        row.leak_id = pg_slice(res, i, 8);
        row.leak_name = pg_slice(res, i, 9);
        row.leak_publish_date = pg_slice(res, i, 10);
        row.leak_discover_date = pg_slice(res, i, 11);
        row.has_leak_size = !PQgetisnull(res, i, 12);
        row.leak_size = row.has_leak_size ? pg_int(res, i, 12) : 0;
        row.leak_tags = pg_slice(res, i, 13);
        if (cb(ctx, &row))
            break;
    }
}

/* Whether the best plan of q's search is the same whatever its values: a lone condition
 * (every card, a number pattern, an exact hash, one value, a word or phrase, a range) or an
 * owner word within expiry ranges. Such a search is prepared, planned once per shape. One
 * combining conditions is planned for its values each time, unprepared: which condition
 * should drive it depends on how many cards each matches. */
static bool plan_fits_every_value(const bd_card_query *q, bool by_word)
{
    switch (q->where->kind) {
    case BD_CC_AND:
    case BD_CC_OR:
    case BD_CC_NOT:
        return by_word;
    default:
        return true;
    }
}

/* ---- pages routed by a lookup table ------------------------------------------------------ */

/* card_bins holds a BIN page in its order, and a Citus cluster keeps it on one shard. */
bool pg_card_bin_page(const bd_card_query *q)
{
    const bd_card_cond *k = q->where;
    return k->kind == BD_CC_NUMBER && !k->length && k->min_length <= 12 && !k->last4[0] &&
           strlen(k->bin) == 6 && plain_digits(k->bin) && q->nsort == 1 &&
           q->sort[0].column == BD_CARD_CREATED_AT;
}

/* Whether q is an owner word within expiry ranges in expiry order alone: card_owner_words
 * holds its page in that order. On true, word holds the word. */
static bool owner_word_page(const bd_card_query *q, bd_buf *word)
{
    return q->nsort == 1 && q->sort[0].column == BD_CARD_EXPIRE_DATE &&
           owner_word_with_expiry(q->where, word);
}

/* The cards of a page whose card ids (column 0 of ids, rows with a NULL id skipped) came off
 * a lookup table, in q's order. On a Citus cluster the card ids prune the statement to the
 * shards that hold the page. */
static bd_result fetch_page(pg_store *p, const bd_card_query *q, PGresult *ids, bd_card_cb cb,
                            void *ctx)
{
    pg_card_sql *c = &p->card;
    pg_card_sql_begin(c);
    for (int i = 0, n = PQntuples(ids); i < n; i++)
        if (!PQgetisnull(ids, i, 0))
            pg_card_add_value(c, PQgetvalue(ids, i, 0), (size_t)PQgetlength(ids, i, 0));
    if (c->nvals == 0)
        return c->err;
    pg_card_emit(c, "SELECT c.card_id, c.created_at, c.bank, c.number_masked, c.owner, c.cvv, "
                    "c.expire_date, c.cvss, c.leak_id, c.leak_name, c.leak_publish_date, "
                    "c.leak_discover_date, c.leak_size, c.leak_tags FROM cards c "
                    "WHERE c.card_id = ANY($1::text[])");
    order_by(c, q, false, false);
    pg_params pp = {0};
    pg_card_params(c, &pp);
    PGresult *res;
    bd_result r = c->err;
    if (r == BD_OK)
        r = pg_run_sql(p, c->sql.data, &pp, true, &res);
    if (r == BD_OK) {
        pg_card_rows(res, 0, PQntuples(res), cb, ctx);
        PQclear(res);
    }
    return r;
}

/* A BIN page or an owner word's page in expiry order, in two statements, each on one shard
 * of a Citus cluster or a few: the page's card ids off the lookup table, with the data
 * version and the count; then the cards (fetch_page). */
static bd_result search_routed(pg_store *p, const bd_card_query *q, bool by_bin, int64_t *found,
                               bd_card_cb cb, void *ctx)
{
    pg_card_sql *c = &p->card;
    bd_buf *word = &c->owner_word;
    bool desc = q->sort[0].descending;
    pg_card_emit(c, "SELECT l.card_id, " PG_DATA_VERSION_SQL ", (");
    count_query(c, q, word);
    if (by_bin) {
        pg_card_emit(c, ") FROM (SELECT 1) AS o LEFT JOIN LATERAL (SELECT b.card_id, "
                        "b.created_at AS k FROM card_bins b WHERE b.bin = ");
        pg_card_value(c, q->where->bin, 6);
        pg_card_emit(c, desc ? " ORDER BY b.created_at DESC, b.card_id DESC"
                             : " ORDER BY b.created_at ASC, b.card_id ASC");
    } else {
        pg_card_emit(c, ") FROM (SELECT 1) AS o LEFT JOIN LATERAL (SELECT w.card_id, "
                        "w.expire_date AS k FROM card_owner_words w");
        owner_word_where(c, q->where, word);
        pg_card_emit(c, desc ? " ORDER BY w.expire_date DESC, w.card_id DESC"
                             : " ORDER BY w.expire_date ASC, w.card_id ASC");
    }
    pg_params pp = {0};
    pg_card_params(c, &pp);
    pg_param_int(&pp, q->limit);
    pg_param_int(&pp, q->offset);
    if (c->err == BD_OK)
        c->err = bd_buf_printf(&c->sql,
                               " LIMIT $%d OFFSET $%d) AS l ON true ORDER BY l.k %s, "
                               "l.card_id %s",
                               pp.n - 1, pp.n, desc ? "DESC" : "ASC", desc ? "DESC" : "ASC");
    PGresult *ids;
    bd_result r = c->err;
    if (r == BD_OK)
        r = pg_run_sql(p, c->sql.data, &pp, true, &ids);
    if (r != BD_OK)
        return r;
    pg_note_version(p, pg_slice(ids, 0, 1));
    *found = pg_int(ids, 0, 2);
    r = fetch_page(p, q, ids, cb, ctx);
    PQclear(ids);
    return r;
}

/* For the lookup dispatcher (batch_sql.h): each BIN's count as count_from_summary counts a
 * lone BIN prefix, once per BIN (LATERAL before the page), and its page as the search below
 * reads it ("c.bin = BIN" is all number_cond writes for a plain 6-digit prefix whose
 * length is not bounded above 12, every stored number's least). */
const char *const pg_bin_batch_sql =
    "SELECT p.card_id, p.created_at, p.bank, p.number_masked, p.owner, p.cvv, p.expire_date, "
    "p.cvss, p.leak_id, p.leak_name, p.leak_publish_date, p.leak_discover_date, p.leak_size, "
    "p.leak_tags, " PG_DATA_VERSION_SQL ", n.found, k.i "
    "FROM unnest($1::text[], $2::integer[], $3::text[], $4::bigint[]) WITH ORDINALITY "
    "AS k(bin, lim, bin_end, off, i) "
    "CROSS JOIN LATERAL (SELECT coalesce(sum(s.n), 0) AS found FROM card_counts s "
    "WHERE s.kind = 0 AND s.key >= k.bin AND s.key < k.bin_end) n "
    "LEFT JOIN LATERAL (SELECT c.card_id, c.created_at, c.bank, c.number_masked, c.owner, "
    "c.cvv, c.expire_date, c.cvss, c.leak_id, c.leak_name, c.leak_publish_date, "
    "c.leak_discover_date, c.leak_size, c.leak_tags FROM cards c WHERE c.bin = k.bin "
    "ORDER BY c.created_at DESC, c.card_id DESC LIMIT k.lim OFFSET k.off) p ON true "
    "ORDER BY k.i, p.created_at DESC, p.card_id DESC";

/* Owner words the batched statement takes: the index's own split of a lower-case ASCII
 * letter-and-digit word is the word itself (pg_card_words, unicode61), so the request's
 * thread needs no tokenizer; any other word is searched synchronously. Short enough that
 * each card_counts key stays within OWNER_KEY_MAX, where the synchronous count reads it. */
#define OWNER_BATCH_WORD_MAX 64
#define OWNER_BATCH_BOUND_MAX 32

static bool plain_word(bd_slice v)
{
    if (v.len == 0 || v.len > OWNER_BATCH_WORD_MAX)
        return false;
    for (size_t i = 0; i < v.len; i++) {
        char ch = v.ptr[i];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9')))
            return false;
    }
    return true;
}

bool pg_card_owner_batch_page(const bd_card_query *q, bd_slice *word, bd_slice *low, bd_slice *high)
{
    const bd_card_cond *w, *range;
    size_t ranges;
    if (q->nsort != 1 || q->sort[0].column != BD_CARD_EXPIRE_DATE || q->sort[0].descending ||
        !owner_and_expiry(q->where, &w, &range, &ranges) || ranges != 1 || !plain_word(w->words[0]))
        return false;
    if (range->low.ptr && (!range->low_inclusive || range->low.len > OWNER_BATCH_BOUND_MAX))
        return false;
    if (range->high.ptr && (!range->high_inclusive || range->high.len > OWNER_BATCH_BOUND_MAX))
        return false;
    *word = w->words[0];
    *low = range->low;
    *high = range->high;
    return true;
}

/* An owner word's pages in expiry order for many words in one statement, each as the
 * synchronous statement reads it (owner_word_count, owner_word_where, order_by): the count
 * summed off card_counts' keys "word expiry" within the word's range, the page the first
 * entries of card_owner_words' range joined to their cards. An open low end is '' and an
 * open high end '~', past every date (the keys and dates compare in the C collation). */
const char *const pg_owner_batch_sql =
    "SELECT p.card_id, p.created_at, p.bank, p.number_masked, p.owner, p.cvv, p.expire_date, "
    "p.cvss, p.leak_id, p.leak_name, p.leak_publish_date, p.leak_discover_date, p.leak_size, "
    "p.leak_tags, " PG_DATA_VERSION_SQL ", n.found, k.i "
    "FROM unnest($1::text[], $2::integer[], $3::text[], $4::text[], $5::bigint[]) "
    "WITH ORDINALITY AS k(word, lim, low, high, off, i) "
    "CROSS JOIN LATERAL (SELECT coalesce(sum(s.n), 0) AS found FROM card_counts s "
    "WHERE s.kind = 2 AND s.key >= k.word || ' ' || k.low AND s.key <= k.word || ' ' || k.high "
    "AND s.key < k.word || '!') n "
    "LEFT JOIN LATERAL (SELECT c.card_id, c.created_at, c.bank, c.number_masked, c.owner, "
    "c.cvv, c.expire_date, c.cvss, c.leak_id, c.leak_name, c.leak_publish_date, "
    "c.leak_discover_date, c.leak_size, c.leak_tags "
    "FROM card_owner_words w JOIN cards c ON c.card_id = w.card_id "
    "WHERE w.word = k.word AND w.expire_date >= k.low AND w.expire_date <= k.high "
    "ORDER BY w.expire_date ASC, c.card_id ASC LIMIT k.lim OFFSET k.off) p ON true "
    "ORDER BY k.i, p.expire_date ASC NULLS FIRST, p.card_id ASC";

/* ---- searches ---------------------------------------------------------------------------- */

/* The search is one statement, so one round trip and one snapshot: a single row holding
 * the data version and the count (subqueries run once), joined to the page's rows, if
 * any (a page past the last card still tells the count). The page keeps its order through
 * the outer ORDER BY on its own columns, which sorts at most a page. Where searches are
 * routed (pg_store.routed), a BIN page and an owner word's page in expiry order are two
 * (search_routed). */
bd_result pg_card_search(bd_store *s, const bd_card_query *q, int64_t *found, bd_card_cb cb,
                         void *ctx)
{
    pg_store *p = pg_of(s);
    *found = 0;
    if (!q->where)
        return BD_ERR_INVALID;
    pg_card_sql *c = &p->card;
    pg_card_sql_begin(c);
    bd_buf *word = &c->owner_word;
    bool by_bin = pg_card_bin_page(q);
    if (p->routed && (by_bin || owner_word_page(q, word)))
        return search_routed(p, q, by_bin, found, cb, ctx);
    pg_card_emit(c, "SELECT p.card_id, p.created_at, p.bank, p.number_masked, p.owner, p.cvv, "
                    "p.expire_date, p.cvss, p.leak_id, p.leak_name, p.leak_publish_date, "
                    "p.leak_discover_date, p.leak_size, p.leak_tags, " PG_DATA_VERSION_SQL ", (");
    count_query(c, q, word);
    pg_card_emit(c, ") FROM (SELECT 1) AS o LEFT JOIN LATERAL (SELECT c.card_id, c.created_at, "
                    "c.bank, c.number_masked, c.owner, c.cvv, c.expire_date, c.cvss, c.leak_id, "
                    "c.leak_name, c.leak_publish_date, c.leak_discover_date, c.leak_size, "
                    "c.leak_tags FROM ");
    /* An owner word in expiry order: card_owner_words is in that order already, so the page
     * is the first entries of one index range. */
    bool by_word = q->nsort && q->sort[0].column == BD_CARD_EXPIRE_DATE &&
                   owner_word_with_expiry(q->where, word);
    if (by_word) {
        pg_card_emit(c, "card_owner_words w JOIN cards c ON c.card_id = w.card_id");
        owner_word_where(c, q->where, word);
    } else {
        pg_card_emit(c, "cards c WHERE ");
        pg_card_cond(c, q->where);
    }
    order_by(c, q, by_word, false);
    pg_params pp = {0};
    pg_card_params(c, &pp);
    pg_param_int(&pp, q->limit);
    pg_param_int(&pp, q->offset);
    if (c->err == BD_OK)
        c->err = bd_buf_printf(&c->sql, " LIMIT $%d OFFSET $%d) AS p ON true", pp.n - 1, pp.n);
    order_by(c, q, by_word, true);
    PGresult *res;
    bd_result r = c->err;
    if (r == BD_OK)
        r = pg_run_sql(p, c->sql.data, &pp, plan_fits_every_value(q, by_word), &res);
    if (r == BD_OK) {
        pg_note_version(p, pg_slice(res, 0, 14));
        *found = pg_int(res, 0, 15);
        if (!PQgetisnull(res, 0, 0))
            pg_card_rows(res, 0, PQntuples(res), cb, ctx);
        PQclear(res);
    }
    return r;
}
