/* PostgreSQL alone answering one statement as fast as it can: the floor under any server
 * that answers a request with that statement (issue 14's scenario 1, issue 16's ranges).
 *
 *   pg_floor URI SECONDS CONNECTIONS THREADS PARAMS_FILE SQL
 *
 * SQL is prepared once on each connection and executed with the parameters of the next
 * line of PARAMS_FILE (tab-separated, text format: a bytea parameter is written \x<hex>),
 * the lines taken in turn. Each thread keeps its share of the connections busy without
 * blocking on any one of them (libpq's asynchronous calls and poll), so the client spends
 * as little as a client can per statement: what it measures is the database server.
 * Results are asked for in binary and a session plans a prepared statement once, as
 * breachd's do. Prints one JSON object: statements executed, seconds, statements per
 * second, and the client's own CPU seconds.
 *
 * A bench tool, not part of breachd: built by `make $(BUILD)/pg_floor`. */
#include <libpq-fe.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define MAX_PARAMS 16
#define MAX_CONNS 256

typedef struct {
    int n;
    const char *v[MAX_PARAMS];
} param_line;

static param_line *g_lines;
static size_t g_nlines;
static const char *g_uri, *g_sql;
static double g_seconds;
static atomic_size_t g_next_line;
static atomic_llong g_done;
static atomic_int g_failed;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Splits the whole file into lines of tab-separated fields, in place. */
static int load_params(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = malloc((size_t)size + 1);
    if (!text || fread(text, 1, (size_t)size, f) != (size_t)size) {
        fclose(f);
        return -1;
    }
    fclose(f);
    text[size] = '\0';
    size_t cap = 1024;
    g_lines = malloc(cap * sizeof *g_lines);
    for (char *line = text; line && *line;) {
        char *end = strchr(line, '\n');
        if (end)
            *end = '\0';
        if (g_nlines == cap)
            g_lines = realloc(g_lines, (cap *= 2) * sizeof *g_lines);
        param_line *pl = &g_lines[g_nlines++];
        pl->n = 0;
        for (char *field = line; field && pl->n < MAX_PARAMS;) {
            char *tab = strchr(field, '\t');
            if (tab)
                *tab = '\0';
            pl->v[pl->n++] = field;
            field = tab ? tab + 1 : NULL;
        }
        line = end ? end + 1 : NULL;
    }
    return g_nlines ? 0 : -1;
}

static int send_next(PGconn *c)
{
    size_t i = atomic_fetch_add(&g_next_line, 1) % g_nlines;
    static const int formats[MAX_PARAMS] = {0};
    return PQsendQueryPrepared(c, "floor", g_lines[i].n, g_lines[i].v, NULL, formats, 1);
}

/* A result that is not rows is a failure of the measurement, reported once. */
static void check(PGresult *r, PGconn *c)
{
    ExecStatusType st = PQresultStatus(r);
    if (st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK && atomic_fetch_add(&g_failed, 1) == 0)
        fprintf(stderr, "pg_floor: %s", PQerrorMessage(c));
}

static void *run(void *arg)
{
    int n = *(int *)arg;
    PGconn *conns[MAX_CONNS];
    struct pollfd fds[MAX_CONNS];
    for (int i = 0; i < n; i++) {
        conns[i] = PQconnectdb(g_uri);
        if (PQstatus(conns[i]) != CONNECTION_OK) {
            fprintf(stderr, "pg_floor: %s", PQerrorMessage(conns[i]));
            exit(1);
        }
        /* as breachd's sessions (src/store/pg/conn.c): planned once, not per execution */
        PQclear(PQexec(conns[i], "SET plan_cache_mode = force_generic_plan"));
        PGresult *r = PQprepare(conns[i], "floor", g_sql, 0, NULL);
        if (PQresultStatus(r) != PGRES_COMMAND_OK) {
            fprintf(stderr, "pg_floor: %s", PQerrorMessage(conns[i]));
            exit(1);
        }
        PQclear(r);
        PQsetnonblocking(conns[i], 1);
        fds[i].fd = PQsocket(conns[i]);
        fds[i].events = POLLIN;
        if (!send_next(conns[i]) || PQflush(conns[i]) < 0)
            exit(1);
    }
    double end = now() + g_seconds;
    long long done = 0;
    while (now() < end) {
        if (poll(fds, (nfds_t)n, 100) < 0)
            break;
        for (int i = 0; i < n; i++) {
            if (!(fds[i].revents & POLLIN))
                continue;
            PGconn *c = conns[i];
            if (!PQconsumeInput(c)) {
                fprintf(stderr, "pg_floor: %s", PQerrorMessage(c));
                exit(1);
            }
            bool finished = false;
            while (!PQisBusy(c)) {
                PGresult *r = PQgetResult(c);
                if (!r) {
                    finished = true;
                    break;
                }
                check(r, c);
                PQclear(r);
            }
            if (finished) {
                done++;
                if (!send_next(c) || PQflush(c) < 0)
                    exit(1);
            }
        }
    }
    atomic_fetch_add(&g_done, done);
    for (int i = 0; i < n; i++)
        PQfinish(conns[i]);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 7) {
        fprintf(stderr, "usage: pg_floor URI SECONDS CONNECTIONS THREADS PARAMS_FILE SQL\n");
        return 2;
    }
    g_uri = argv[1];
    g_seconds = atof(argv[2]);
    int conns = atoi(argv[3]), threads = atoi(argv[4]);
    g_sql = argv[6];
    if (g_seconds <= 0 || threads < 1 || conns < threads || conns / threads > MAX_CONNS ||
        threads > 64) {
        fprintf(stderr, "pg_floor: bad SECONDS, CONNECTIONS or THREADS\n");
        return 2;
    }
    if (load_params(argv[5]) != 0) {
        fprintf(stderr, "pg_floor: cannot read parameters from %s\n", argv[5]);
        return 2;
    }
    pthread_t tid[64];
    int share[64];
    for (int t = 0; t < threads; t++) {
        share[t] = conns / threads + (t < conns % threads);
        pthread_create(&tid[t], NULL, run, &share[t]);
    }
    for (int t = 0; t < threads; t++)
        pthread_join(tid[t], NULL);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
                 (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
    long long done = atomic_load(&g_done);
    printf("{\"statements\": %lld, \"seconds\": %.3f, \"per_second\": %.1f, "
           "\"client_cpu_seconds\": %.3f, \"failed\": %d}\n",
           done, g_seconds, (double)done / g_seconds, cpu, atomic_load(&g_failed));
    return atomic_load(&g_failed) ? 1 : 0;
}
