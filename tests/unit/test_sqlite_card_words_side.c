/* A bulk card load into an empty SQLite table builds its owner and bank word index on
 * another thread, in a file beside the store, and copies it in (store/sqlite/
 * card_words_side.c): the index must be FTS5's own, word for word what a plain load
 * gives, and the side file must not outlive the load, nor a leftover's removal follow a
 * link. */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>
#include <sys/file.h>
#include <unistd.h>

#include "core/buf.h"
#include "store/sqlite/sqlite_impl.h"
#include "store/store.h"
#include "test.h"

static char dir[] = "/tmp/breachd-words-XXXXXX";
static char path[256];

#define NCARDS 3000

static bd_store *fresh(void)
{
    static int n;
    snprintf(path, sizeof path, "%s/s%d.db", dir, n++);
    bd_store *s = NULL;
    char why[256];
    if (bd_store_open(path, BD_STORE_WRITE | BD_STORE_CREATE, &s, why, sizeof why) != BD_OK)
        fprintf(stderr, "%s\n", why);
    return s;
}

/* Card n, with an owner and a bank of a few words (some shared, one with diacritics), or
 * none: every seventh has no owner, every fifth no bank. */
static bd_card_in card(int n, char owner[64], char bank[64])
{
    static const char *const first[] = {"John", "Jane", "Zo\xc3\xab", "Ann-Marie", "Li"};
    static const char *const last[] = {"Smith", "M\xc3\xbcller", "O'Brien", "Doe", "Nguyen"};
    bd_card_in c;
    memset(&c, 0, sizeof c);
    snprintf(c.id, sizeof c.id, "c0000000-0000-4000-8000-%012d", n);
    snprintf(c.created_at, sizeof c.created_at, "2024-01-%02d 12:00:00", 1 + n % 28);
    snprintf(c.number_masked, sizeof c.number_masked, "411111******%04d", n);
    memcpy(c.bin, "411111", 6);
    snprintf(c.last4, sizeof c.last4, "%04d", n);
    c.length = 16;
    memcpy(c.number_hmac, &n, sizeof n);
    snprintf(c.expire_date, sizeof c.expire_date, "20%02d-0%d-01", 25 + n % 5, 1 + n % 9);
    snprintf(owner, 64, "%s %s %d", first[n % 5], last[(n / 5) % 5], n % 97);
    snprintf(bank, 64, "Bank of Z\xc3\xbcrich %d", n % 13);
    c.owner = n % 7 ? bd_slice_from(owner) : (bd_slice){0};
    c.bank = n % 5 ? bd_slice_from(bank) : (bd_slice){0};
    c.leak_size = -1;
    return c;
}

static void put_cards(bd_store *s, int from, int to)
{
    for (int n = from; n <= to; n++) {
        char owner[64], bank[64];
        bd_card_in c = card(n, owner, bank);
        bool ins = false;
        CHECK_INT(bd_store_card_put(s, &c, &ins), BD_OK);
        CHECK(ins);
    }
}

/* How many files of the store's directory are named as its side files are
 * (<store>-words-XXXXXX); the path of the last one in *last (static). */
static int side_scan(char **last)
{
    static char p[400];
    char prefix[300];
    snprintf(prefix, sizeof prefix, "%s-words-", strrchr(path, '/') + 1);
    p[0] = '\0';
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL)
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0) {
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            n++;
        }
    if (d)
        closedir(d);
    *last = p;
    return n;
}

static int side_files(void)
{
    char *last = NULL;
    return side_scan(&last);
}

static sqlite3 *raw(const char *p)
{
    sqlite3 *db = NULL;
    CHECK_INT(sqlite3_open_v2(p, &db, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
    return db;
}

/* Every word instance the index holds (term, card, column, position), in order, each
 * card's word counts, the owner words with their expiry and card, and the counts by BIN,
 * last four and owner word; "integrity check failed: ..." when FTS5 finds the index and the
 * cards at odds. */
static char *words_of(const char *p)
{
    sqlite3 *db = raw(p);
    char *err = NULL, *out = NULL;
    if (sqlite3_exec(db, "INSERT INTO cards_words(cards_words) VALUES ('integrity-check')", NULL,
                     NULL, &err) != SQLITE_OK) {
        size_t n = strlen(err) + 64;
        out = malloc(n);
        snprintf(out, n, "integrity check failed: %s", err);
        sqlite3_free(err);
        sqlite3_close(db);
        return out;
    }
    sqlite3_stmt *st;
    CHECK_INT(sqlite3_exec(db,
                           "CREATE VIRTUAL TABLE temp.v USING fts5vocab(main, cards_words, "
                           "instance)",
                           NULL, NULL, NULL),
              SQLITE_OK);
    CHECK_INT(sqlite3_prepare_v2(db,
                                 "SELECT count(*) || ' ' || coalesce(group_concat(w, ','), '') "
                                 "|| ' sizes ' || (SELECT coalesce(group_concat(z, ','), '') "
                                 "FROM (SELECT id || ':' || hex(sz) AS z "
                                 "FROM cards_words_docsize ORDER BY id)) "
                                 "FROM (SELECT term || ':' || doc || ':' || col || ':' || offset"
                                 " AS w FROM temp.v ORDER BY term, doc, col, offset)",
                                 -1, &st, NULL),
              SQLITE_OK);
    bd_buf b;
    bd_buf_init(&b, SIZE_MAX / 2);
    if (sqlite3_step(st) == SQLITE_ROW)
        bd_buf_append_str(&b, (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    CHECK_INT(sqlite3_prepare_v2(db,
                                 "SELECT ' owner words ' || count(*) || ' ' || "
                                 "coalesce(group_concat(w, ','), '') FROM (SELECT word || ':' || "
                                 "expire_date || ':' || card_id || ':' || id AS w "
                                 "FROM card_owner_words ORDER BY word, expire_date, card_id) "
                                 "UNION ALL "
                                 "SELECT ' counts ' || coalesce(group_concat(k, ','), '') FROM "
                                 "(SELECT kind || ':' || key || ':' || n AS k FROM card_counts "
                                 "ORDER BY kind, key)",
                                 -1, &st, NULL),
              SQLITE_OK);
    while (sqlite3_step(st) == SQLITE_ROW)
        bd_buf_append_str(&b, (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    sqlite3_close(db);
    out = strdup(b.len ? b.data : "");
    bd_buf_free(&b);
    return out;
}

/* Begins a bulk load and puts cards from..to, with a side when the table was empty. */
static void bulk_load_puts(bd_store *s, int from, int to)
{
    CHECK_INT(bd_store_begin(s), BD_OK);
    CHECK_INT(bd_store_bulk_begin(s, BD_BULK_CARDS), BD_OK);
    put_cards(s, from, to);
}

static void bulk_load(bd_store *s, int from, int to, bool side_expected)
{
    bulk_load_puts(s, from, to);
    CHECK((((sqlite_store *)s)->words_side != NULL) == side_expected);
    CHECK_INT(bd_store_bulk_end(s, BD_BULK_CARDS), BD_OK);
}

/* The one side file of the store, while a load has it. */
static const char *side_path(void)
{
    char *p;
    side_scan(&p);
    return p;
}

/* A store of cards 1..n put in one plain transaction, closed; its path in out. */
static void plain_store(int n, char out[256])
{
    bd_store *plain = fresh();
    snprintf(out, 256, "%s", path);
    CHECK_INT(bd_store_begin(plain), BD_OK);
    put_cards(plain, 1, n);
    CHECK_INT(bd_store_commit(plain), BD_OK);
    bd_store_close(plain);
}

TEST(test_sqlite_bulk_cards_into_an_empty_table_get_the_words_a_plain_load_gives)
{
    char plain_path[256];
    plain_store(NCARDS, plain_path);

    bd_store *bulk = fresh();
    bulk_load_puts(bulk, 1, NCARDS);
    /* the load's transaction leaves the side file to the side's connection: it can write */
    sqlite3 *side = raw(side_path());
    sqlite3_busy_timeout(side, 0);
    CHECK_INT(sqlite3_exec(side, "BEGIN IMMEDIATE; ROLLBACK", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(side);
    CHECK(((sqlite_store *)bulk)->words_side != NULL);
    CHECK_INT(bd_store_bulk_end(bulk, BD_BULK_CARDS), BD_OK);
    CHECK_INT(side_files(), 1); /* attached until the load's transaction ends */
    CHECK_INT(bd_store_commit(bulk), BD_OK);
    CHECK(((sqlite_store *)bulk)->words_side == NULL);
    CHECK_INT(side_files(), 0);

    char *want = words_of(plain_path), *got = words_of(path);
    CHECK(want && strncmp(want, "integrity", 9) != 0 && strtol(want, NULL, 10) > 5 * NCARDS);
    CHECK(got && want && strcmp(got, want) == 0);
    if (got && want && strcmp(got, want) != 0)
        fprintf(stderr, "  bulk: ...%.300s\n  plain: ...%.300s\n", strstr(got, " owner words "),
                strstr(want, " owner words "));
    free(want);
    free(got);

    /* the connection goes on using the index it copied: plain puts, and a search */
    CHECK_INT(bd_store_begin(bulk), BD_OK);
    put_cards(bulk, NCARDS + 1, NCARDS + 10);
    CHECK_INT(bd_store_commit(bulk), BD_OK);
    bd_store_close(bulk);
    got = words_of(path);
    CHECK(got && strncmp(got, "integrity", 9) != 0);
    free(got);
    sqlite3 *db = raw(path);
    sqlite3_stmt *st;
    CHECK_INT(sqlite3_prepare_v2(db,
                                 "SELECT count(*) FROM cards_words WHERE cards_words MATCH "
                                 "'owner: zurich OR bank: zurich'",
                                 -1, &st, NULL),
              SQLITE_OK);
    CHECK_INT(sqlite3_step(st), SQLITE_ROW);
    /* every card with a bank, as every bank is in Zürich (folded by remove_diacritics) */
    int banks = 0;
    for (int n = 1; n <= NCARDS + 10; n++)
        banks += n % 5 != 0;
    CHECK_INT(sqlite3_column_int(st, 0), banks);
    sqlite3_finalize(st);
    sqlite3_close(db);
}

/* A load killed after it made its side file leaves the file; the next bulk load removes
 * it, and a link of that name without opening what it names. A side file whose load still
 * holds its lock stays. */
TEST(test_sqlite_leftover_side_files_are_removed_and_links_not_followed)
{
    bd_store *s = fresh();
    char victim[300], name[300];
    snprintf(victim, sizeof victim, "%s/victim", dir);
    FILE *f = fopen(victim, "w");
    CHECK(f != NULL);
    if (!f)
        return;
    fputs("keep", f);
    fclose(f);
    snprintf(name, sizeof name, "%s-words-LINK01", path);
    CHECK_INT(symlink(victim, name), 0);
    snprintf(name, sizeof name, "%s-words-DEAD01", path);
    f = fopen(name, "w");
    CHECK(f != NULL);
    if (f)
        fclose(f);
    snprintf(name, sizeof name, "%s-words-HELD01", path);
    int held = open(name, O_RDWR | O_CREAT, 0600);
    CHECK(held >= 0 && flock(held, LOCK_EX) == 0);
    CHECK_INT(side_files(), 3);
    bulk_load(s, 1, 50, true);
    CHECK_INT(side_files(), 2); /* its own and the held one */
    CHECK_INT(bd_store_commit(s), BD_OK);
    CHECK_INT(side_files(), 1);
    CHECK_INT(access(name, F_OK), 0);
    close(held);
    char buf[16] = {0};
    f = fopen(victim, "r");
    CHECK(f != NULL);
    if (f) {
        CHECK(fread(buf, 1, sizeof buf - 1, f) == 4);
        fclose(f);
    }
    CHECK_STR(buf, "keep");
    bd_store_close(s);
    char *got = words_of(path);
    CHECK(got && strncmp(got, "integrity", 9) != 0);
    free(got);
}

/* A load rolled back leaves no side file and no words; the next load into the still empty
 * table builds them beside again. A load into a table with cards rebuilds the index in its
 * own transaction, as before. */
TEST(test_sqlite_a_rolled_back_load_leaves_nothing_beside)
{
    bd_store *s = fresh();
    bulk_load(s, 1, 100, true);
    bd_store_rollback(s);
    CHECK(((sqlite_store *)s)->words_side == NULL);
    CHECK_INT(side_files(), 0);
    char *got = words_of(path);
    CHECK_STR(got ? got : "", "0  sizes  owner words 0  counts ");
    free(got);

    bulk_load(s, 1, 100, true);
    CHECK_INT(bd_store_commit(s), BD_OK);
    bulk_load(s, 101, 200, false);
    CHECK_INT(bd_store_commit(s), BD_OK);
    CHECK_INT(side_files(), 0);
    bd_store_close(s);
    got = words_of(path);
    CHECK(got && strncmp(got, "integrity", 9) != 0);
    free(got);
}

/* What words_of gave, without the word counts of each card. */
static char *without_sizes(char *dump)
{
    char *from = strstr(dump, " sizes "), *to = from ? strstr(from, " owner words ") : NULL;
    if (to)
        memmove(from, to, strlen(to) + 1);
    return dump;
}

/* A side that fails after the cards went in (here its file lost its word index before the
 * thread came to fill it) leaves the load to rebuild the word index itself: the store ends
 * as a plain load leaves it. */
TEST(test_sqlite_a_failed_side_leaves_the_load_to_make_the_words_itself)
{
    char plain_path[256];
    plain_store(500, plain_path);

    bd_store *s = fresh();
    bulk_load_puts(s, 1, 500);
    sqlite3 *side = raw(side_path());
    CHECK_INT(sqlite3_exec(side, "DROP TABLE cards_words", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(side);
    CHECK_INT(bd_store_bulk_end(s, BD_BULK_CARDS), BD_OK);
    CHECK_INT(bd_store_commit(s), BD_OK);
    CHECK_INT(side_files(), 0);
    bd_store_close(s);
    char *want = words_of(plain_path), *got = words_of(path);
    CHECK(want && strstr(want, " owner words 0 ") == NULL);
    /* the rebuild gives a card with no owner and no bank a row of zero word counts, where a
     * put gives it none (as before this side existed): the rest is the same */
    CHECK(got && want && strcmp(without_sizes(got), without_sizes(want)) == 0);
    free(want);
    free(got);
}

int main(void)
{
    if (!mkdtemp(dir))
        return 1;
    RUN(test_sqlite_bulk_cards_into_an_empty_table_get_the_words_a_plain_load_gives);
    RUN(test_sqlite_leftover_side_files_are_removed_and_links_not_followed);
    RUN(test_sqlite_a_rolled_back_load_leaves_nothing_beside);
    RUN(test_sqlite_a_failed_side_leaves_the_load_to_make_the_words_itself);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        return 1;
    return TEST_EXIT();
}
