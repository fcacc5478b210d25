/* Minimal unit-test harness: each test_*.c defines TEST functions and a main that runs them
 * with RUN. A failed CHECK prints file:line and the compared values and marks the test failed;
 * main returns non-zero when any test failed. */
#ifndef BD_TEST_H
#define BD_TEST_H

#include <stdio.h>
#include <string.h>

static int test_failures;
static int test_current_failed;

#define TEST(name) static void name(void)

#define RUN(name)                                                                                  \
    do {                                                                                           \
        test_current_failed = 0;                                                                   \
        name();                                                                                    \
        printf("%s %s\n", test_current_failed ? "FAIL" : "ok  ", #name);                           \
    } while (0)

#define TEST_FAIL(...)                                                                             \
    do {                                                                                           \
        fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                                            \
        fprintf(stderr, __VA_ARGS__);                                                              \
        fputc('\n', stderr);                                                                       \
        test_failures++;                                                                           \
        test_current_failed = 1;                                                                   \
    } while (0)

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond))                                                                               \
            TEST_FAIL("CHECK(%s) failed", #cond);                                                  \
    } while (0)

#define CHECK_INT(got, want)                                                                       \
    do {                                                                                           \
        long long g_ = (long long)(got), w_ = (long long)(want);                                   \
        if (g_ != w_)                                                                              \
            TEST_FAIL("%s == %lld, want %lld", #got, g_, w_);                                      \
    } while (0)

#define CHECK_STR(got, want)                                                                       \
    do {                                                                                           \
        const char *g_ = (got), *w_ = (want);                                                      \
        if (!g_ || !w_ ? g_ != w_ : strcmp(g_, w_) != 0)                                           \
            TEST_FAIL("%s == \"%s\", want \"%s\"", #got, g_ ? g_ : "(null)", w_ ? w_ : "(null)");  \
    } while (0)

#define TEST_EXIT()                                                                                \
    (test_failures ? (fprintf(stderr, "%d check(s) failed\n", test_failures), 1) : 0)

#endif
