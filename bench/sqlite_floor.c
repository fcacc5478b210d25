/* SQLite alone answering scenario 1's lookup, in a loop on one connection: the floor under
 * breachd's search statement on a SQLite store, and how the ways of reading a first page
 * and its count compare there (issue 31).
 *
 *   sqlite_floor STORE EMAILS_FILE ROUNDS LOOKUPS
 *
 * STORE is a breachd SQLite store (read only), EMAILS_FILE the corpus's sample emails
 * (bench/gen_corpus.py's emails.txt). Each round runs every variant for LOOKUPS lookups of
 * the sample emails in a scattered order, in one read transaction, the connection set up
 * as a breachd reader's (the whole file mapped, a 64 MiB page cache):
 *   ids         the email's record ids off records_by_email, no row read (an index only)
 *   page        the page of one record as breachd asks for it (two rows at most: the page
 *               and the probe telling whether more follow), every column of the first read
 *   page+count  the same, then a count off the index when the page was full (what breachd
 *               did before it read ahead)
 *   read-ahead  the page's statement with room for 8 more rows, stepped to its end (what
 *               breachd does since)
 * and prints each variant's microseconds per lookup, each round and the median, as JSON.
 * A bench tool, not part of breachd: built by `make $(BUILD)/sqlite_floor`. */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define COLS                                                                                       \
    "r.id, r.breach_date, r.user_name, r.first_name, r.last_name, r.email, r.email_domain, "       \
    "r.phone_number, r.ip_address, r.bitcoin_address, r.password_masked, r.password_hash, "        \
    "r.ssn_masked, r.other_attributes, r.severity, r.breach_id"
#define FROM " FROM records r INDEXED BY records_by_email WHERE r.email = ?1"
#define ORDER " ORDER BY r.breach_date DESC, r.id DESC LIMIT ?2"
#define VARIANTS 4
#define MAX_ROUNDS 64

static const char *const names[VARIANTS] = {"ids", "page", "page+count", "read-ahead"};

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static sqlite3_stmt *prepare(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, &st, NULL) != SQLITE_OK) {
        fprintf(stderr, "sqlite_floor: %s\n", sqlite3_errmsg(db));
        exit(1);
    }
    return st;
}

/* Steps a page statement to its end; decodes every column of the first row, as a page of
 * one record is written. Returns the rows it gave. */
static int run_page(sqlite3_stmt *st, const char *email, int limit)
{
    sqlite3_bind_text(st, 1, email, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 2, limit);
    int rows = 0;
    while (sqlite3_step(st) == SQLITE_ROW)
        if (++rows == 1)
            for (int c = 0; c < 16; c++) {
                (void)sqlite3_column_text(st, c);
                (void)sqlite3_column_bytes(st, c);
            }
    sqlite3_reset(st);
    return rows;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: sqlite_floor STORE EMAILS_FILE ROUNDS LOOKUPS\n");
        return 2;
    }
    int rounds = atoi(argv[3]), lookups = atoi(argv[4]);
    if (rounds < 1 || rounds > MAX_ROUNDS || lookups < 1) {
        fprintf(stderr, "sqlite_floor: 1 to %d rounds, at least one lookup\n", MAX_ROUNDS);
        return 2;
    }
    sqlite3 *db;
    if (sqlite3_open_v2(argv[1], &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL) !=
        SQLITE_OK) {
        fprintf(stderr, "sqlite_floor: cannot open %s\n", argv[1]);
        return 1;
    }
    sqlite3_exec(db, "PRAGMA mmap_size=2147418112; PRAGMA cache_size=-65536", NULL, NULL, NULL);
    sqlite3_stmt *ids = prepare(db, "SELECT r.id" FROM ORDER);
    sqlite3_stmt *page = prepare(db, "SELECT " COLS FROM ORDER);
    sqlite3_stmt *count = prepare(db, "SELECT count(*)" FROM);
    FILE *f = fopen(argv[2], "r");
    if (!f) {
        fprintf(stderr, "sqlite_floor: cannot read %s\n", argv[2]);
        return 1;
    }
    size_t n = 0, cap = 1024;
    char **emails = malloc(cap * sizeof *emails), line[512];
    while (emails && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        if (n == cap && !(emails = realloc(emails, (cap *= 2) * sizeof *emails)))
            break;
        emails[n++] = strdup(line);
    }
    fclose(f);
    if (!emails || n == 0) {
        fprintf(stderr, "sqlite_floor: no emails\n");
        return 1;
    }
    sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
    double us[VARIANTS][MAX_ROUNDS];
    long found[VARIANTS] = {0};
    for (int r = 0; r < rounds; r++)
        for (int v = 0; v < VARIANTS; v++) {
            double t0 = now();
            for (int i = 0; i < lookups; i++) {
                const char *e = emails[((size_t)i * 7919u) % n]; /* scattered, each round alike */
                int rows;
                if (v == 0) {
                    rows = run_page(ids, e, 1000);
                } else if (v == 3) {
                    rows = run_page(page, e, 2 + 8);
                } else {
                    rows = run_page(page, e, 2);
                    if (v == 2 && rows == 2) {
                        sqlite3_bind_text(count, 1, e, -1, SQLITE_STATIC);
                        if (sqlite3_step(count) == SQLITE_ROW)
                            rows = sqlite3_column_int(count, 0);
                        sqlite3_reset(count);
                    }
                }
                found[v] += rows;
            }
            us[v][r] = (now() - t0) / lookups * 1e6;
        }
    printf("{\"lookups\": %d, \"rounds\": %d", lookups, rounds);
    for (int v = 0; v < VARIANTS; v++) {
        printf(", \"%s\": {\"us_each_round\": [", names[v]);
        for (int r = 0; r < rounds; r++)
            printf("%s%.2f", r ? ", " : "", us[v][r]);
        qsort(us[v], (size_t)rounds, sizeof us[v][0], cmp_double);
        printf("], \"us_median\": %.2f, \"rows_per_lookup\": %.2f}", us[v][rounds / 2],
               (double)found[v] / ((double)lookups * rounds));
    }
    printf("}\n");
    sqlite3_close(db);
    return 0;
}
