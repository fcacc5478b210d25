/* A bulk card load's owner and bank word index (FTS5), built on a second core while the
 * writer builds the card indexes.
 *
 * Rebuilt on the load's own connection, the FTS5 index took 1.1-1.2 s of a 10 s load of 1M
 * cards, on one core, after the nine index builds, which leave the other core 40% idle.
 * Here the writer notes each card's rowid, owner and bank in an unlinked spool file as it
 * puts the card (its index entries cannot be read from another connection before the load
 * commits). At the load's end a thread reads the spool into an FTS5 table declared exactly
 * as cards_words, in a file of its own beside the store, while the writer builds the card
 * indexes; then the writer copies that table's three stored tables (the index's pages, its
 * term pages and each card's word counts) into cards_words' own, in the load's transaction:
 * 0.2 s where the rebuild took 1.2. The copy is FTS5's own format written by the same
 * library, and FTS5's integrity-check passes on it (test_sqlite_card_words_side).
 *
 * Only a load into an empty cards table builds its words this way (there is no index of
 * other cards to merge with). Whatever goes wrong on the side (no room for the spool, the
 * thread, the file) leaves the load to rebuild the index itself, as before. The side file
 * (`<store>-words-XXXXXX`, a name of its own for each load, private to the owner, holding
 * card owners' names as the store does) is attached to the load's connection, which SQLite
 * allows only between transactions, and removed when the load's transaction ends; a load
 * killed meanwhile leaves it, and the next bulk card load removes it. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/log.h"
#include "store/sqlite/schema.h"
#include "store/sqlite/sqlite_impl.h"
#include "store/sqlite/statements.h"

#define SPOOL_BUFFER (1u << 20)
#define NULL_LEN UINT32_MAX

struct sq_words_side {
    char *path;    /* the side file */
    int lock_fd;   /* the side file, flocked while the load lives */
    sqlite3 *db;   /* the side connection, the thread's while it runs */
    FILE *spool;   /* rowid, owner, bank of each card put, in put order */
    bool spool_ok; /* every card put so far is in the spool */
    bool attached; /* the side file is attached to the load's connection as "words" */
    bool running;  /* the thread was started and not yet joined */
    pthread_t thread;
    bool built;    /* the thread's outcome: the side index is complete */
    char why[160]; /* what the thread ran into, for the log */
};

static bool put_text(FILE *f, bd_slice v)
{
    uint32_t n = v.ptr ? (uint32_t)v.len : NULL_LEN;
    return fwrite(&n, sizeof n, 1, f) == 1 && (!v.ptr || !n || fwrite(v.ptr, n, 1, f) == 1);
}

/* A new file named prefix + 6 random characters, private to the owner (mkstemp: never an
 * existing name, so never a link); its name in *name when name is not NULL, else unlinked
 * at once. -1 on failure. */
static int make_unique(const char *prefix, char **name)
{
    size_t n = strlen(prefix);
    char *tmpl = malloc(n + 7);
    if (!tmpl)
        return -1;
    memcpy(tmpl, prefix, n);
    memcpy(tmpl + n, "XXXXXX", 7);
    int fd = mkstemp(tmpl);
    if (fd >= 0 && name) {
        *name = tmpl;
        return fd;
    }
    if (fd >= 0)
        unlink(tmpl);
    free(tmpl);
    return fd;
}

/* The spool: an unlinked file in the store's directory (where breachctl import points
 * SQLite's own temporary files: the disk that has room for the store). */
static FILE *spool_open(const char *prefix)
{
    int fd = make_unique(prefix, NULL);
    if (fd < 0)
        return NULL;
    FILE *f = fdopen(fd, "w+b");
    if (!f) {
        close(fd);
        return NULL;
    }
    setvbuf(f, NULL, _IOFBF, SPOOL_BUFFER);
    return f;
}

/* Removes the side files of loads that were killed: each load holds an exclusive flock on
 * its own for its life (SQLite's locks are fcntl locks, apart from these), so a side file
 * whose lock can be taken has no load left. Anything else of that name that is not a plain
 * file (a link) is removed too; the file a link names is never opened. */
static void remove_leftovers(const char *prefix)
{
    const char *slash = strrchr(prefix, '/');
    size_t dlen = slash ? (size_t)(slash - prefix) : 0;
    const char *base = slash ? slash + 1 : prefix;
    size_t blen = strlen(base);
    char *dpath = slash ? strndup(prefix, dlen ? dlen : 1) : strdup(".");
    DIR *d = dpath ? opendir(dpath) : NULL;
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, base, blen) != 0 || strlen(e->d_name) != blen + 6)
            continue;
        int fd = openat(dirfd(d), e->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) == 0)
            unlinkat(dirfd(d), e->d_name, 0);
        if (fd >= 0)
            close(fd);
    }
    if (d)
        closedir(d);
    free(dpath);
}

/* Makes the side file (locked for the load's life) and its twin of cards_words. */
static bool side_create(struct sq_words_side *w, const char *prefix)
{
    remove_leftovers(prefix);
    w->lock_fd = make_unique(prefix, &w->path);
    if (w->lock_fd < 0 || flock(w->lock_fd, LOCK_EX | LOCK_NB) != 0)
        return false;
    if (sqlite3_open_v2(w->path, &w->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) !=
        SQLITE_OK)
        return false;
    /* a scratch file: no journal, no syncs (the load's commit is what is durable) */
    return sqlite3_exec(w->db, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF", NULL, NULL,
                        NULL) == SQLITE_OK &&
           sqlite3_exec(w->db, bd_sqlite_card_words_table, NULL, NULL, NULL) == SQLITE_OK;
}

static void side_free(struct sq_words_side *w)
{
    if (w->spool)
        fclose(w->spool);
    if (w->db)
        sqlite3_close(w->db);
    if (w->path)
        unlink(w->path);
    if (w->lock_fd >= 0)
        close(w->lock_fd);
    free(w->path);
    free(w);
}

bd_result sq_words_side_begin(sqlite_store *s)
{
    if (!sqlite3_get_autocommit(s->db) || s->words_side)
        return BD_ERR_INVALID;
    const char *store = sqlite3_db_filename(s->db, "main");
    if (!store || !store[0])
        return BD_ERR_INVALID; /* an in-memory store: nowhere beside it */
    struct sq_words_side *w = calloc(1, sizeof *w);
    size_t n = strlen(store);
    char *prefix = malloc(n + sizeof "-words-");
    if (!w || !prefix) {
        free(w);
        free(prefix);
        return BD_ERR_NOMEM;
    }
    w->lock_fd = -1;
    memcpy(prefix, store, n);
    memcpy(prefix + n, "-words-", sizeof "-words-");
    bool ok = side_create(w, prefix) && (w->spool = spool_open(w->path)) != NULL;
    free(prefix);
    if (ok) {
        sqlite3_stmt *st;
        ok = sqlite3_prepare_v2(s->db, "ATTACH ?1 AS words", -1, &st, NULL) == SQLITE_OK;
        if (ok) {
            sqlite3_bind_text(st, 1, w->path, -1, SQLITE_STATIC);
            ok = sqlite3_step(st) == SQLITE_DONE;
        }
        sqlite3_finalize(st);
        w->attached = ok;
    }
    if (!ok) {
        bd_log_own(BD_LOG_INFO, "store", "the card words are rebuilt in the load: %s",
                   w->db ? sqlite3_errmsg(w->db) : strerror(errno));
        side_free(w);
        return BD_ERR_IO;
    }
    w->spool_ok = true;
    s->words_side = w;
    return BD_OK;
}

void sq_words_side_note(sqlite_store *s, int64_t rowid, bd_slice owner, bd_slice bank)
{
    struct sq_words_side *w = s->words_side;
    /* a card with neither has no row in the index, as a plain put leaves it (cards.c) */
    if (!w || !w->spool_ok || (!owner.ptr && !bank.ptr))
        return;
    w->spool_ok = fwrite(&rowid, sizeof rowid, 1, w->spool) == 1 && put_text(w->spool, owner) &&
                  put_text(w->spool, bank);
}

/* The next text of the spool into *v (its bytes in b; a NULL ptr for NULL), as put_text
 * wrote it. */
static bool get_text(FILE *f, bd_buf *b, bd_slice *v)
{
    uint32_t n;
    *v = (bd_slice){0};
    if (fread(&n, sizeof n, 1, f) != 1)
        return false;
    if (n == NULL_LEN)
        return true;
    if (n && (bd_buf_reserve(b, n) != BD_OK || fread(b->data, n, 1, f) != 1))
        return false;
    *v = (bd_slice){n ? b->data : "", n};
    return true;
}

/* The thread: every card of the spool into the side file's index, in one transaction. */
static void *side_build(void *arg)
{
    struct sq_words_side *w = arg;
    /* the core the writer's index builds leave idle, not the writer's own: at the lowest
     * priority this thread runs when the writer and the sorter's helper wait */
    (void)setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 19);
    sqlite3 *db = w->db;
    sqlite3_stmt *st = NULL;
    bd_buf owner, bank;
    bd_buf_init(&owner, SIZE_MAX / 2);
    bd_buf_init(&bank, SIZE_MAX / 2);
    /* the term hash the rebuild used (conn.c, CARD_WORDS_REBUILD): a few large segments */
    bool ok = sqlite3_exec(db, SQ_CARD_WORDS_BULK_HASH "BEGIN", NULL, NULL, NULL) == SQLITE_OK &&
              sqlite3_prepare_v2(db,
                                 "INSERT INTO cards_words(rowid, owner, bank) "
                                 "VALUES (?1, ?2, ?3)",
                                 -1, &st, NULL) == SQLITE_OK;
    int64_t rowid;
    while (ok && fread(&rowid, sizeof rowid, 1, w->spool) == 1) {
        bd_slice o, b;
        ok = get_text(w->spool, &owner, &o) && get_text(w->spool, &bank, &b);
        if (!ok)
            break;
        sqlite3_bind_int64(st, 1, rowid);
        sq_bind_slice(st, 2, o);
        sq_bind_slice(st, 3, b);
        ok = sqlite3_step(st) == SQLITE_DONE;
        sqlite3_reset(st);
    }
    ok = ok && !ferror(w->spool) && feof(w->spool);
    sqlite3_finalize(st);
    ok = ok && sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) == SQLITE_OK;
    if (!ok)
        snprintf(w->why, sizeof w->why, "%s",
                 ferror(w->spool) ? "the spool could not be read" : sqlite3_errmsg(db));
    bd_buf_free(&owner);
    bd_buf_free(&bank);
    w->built = ok;
    return NULL;
}

void sq_words_side_start(sqlite_store *s)
{
    struct sq_words_side *w = s->words_side;
    if (!w || !w->spool_ok || w->running)
        return;
    if (fflush(w->spool) != 0 || fseek(w->spool, 0, SEEK_SET) != 0) {
        w->spool_ok = false;
        return;
    }
    w->running = pthread_create(&w->thread, NULL, side_build, w) == 0;
}

/* Joins the thread; true when it built the whole index. */
static bool side_join(struct sq_words_side *w)
{
    if (!w->running)
        return false;
    pthread_join(w->thread, NULL);
    w->running = false;
    if (!w->built)
        bd_log_own(BD_LOG_INFO, "store", "the card words are rebuilt in the load: %s", w->why);
    return w->built;
}

/* cards_words' stored tables, filled from the side index (they are empty: the load began
 * on an empty cards table, but FTS5 keeps its structure record even then). The last
 * statement writes the term hash size the rebuild path leaves, through FTS5 itself, which
 * also makes the connection read the index's structure afresh at its next use. */
static const char COPY_SIDE[] =
    "DELETE FROM main.cards_words_data;"
    "INSERT INTO main.cards_words_data SELECT * FROM words.cards_words_data;"
    "DELETE FROM main.cards_words_idx;"
    "INSERT INTO main.cards_words_idx SELECT * FROM words.cards_words_idx;"
    "DELETE FROM main.cards_words_docsize;"
    "INSERT INTO main.cards_words_docsize SELECT * FROM words.cards_words_docsize;"
    /* main's cards_words: an unqualified name is looked up there first */
    SQ_CARD_WORDS_SMALL_HASH;

bd_result sq_words_side_land(sqlite_store *s, bool *landed)
{
    *landed = false;
    struct sq_words_side *w = s->words_side;
    if (!w || !side_join(w))
        return BD_OK;
    bd_result r = sq_exec(s, COPY_SIDE);
    *landed = r == BD_OK;
    return r;
}

void sq_words_side_end(sqlite_store *s)
{
    struct sq_words_side *w = s->words_side;
    if (!w)
        return;
    if (w->running)
        side_join(w);
    /* DETACH only between transactions: the load's has ended when this is called */
    if (w->attached && sqlite3_get_autocommit(s->db))
        sqlite3_exec(s->db, "DETACH words", NULL, NULL, NULL);
    s->words_side = NULL;
    side_free(w);
}
