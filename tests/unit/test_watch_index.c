/* ingest/watch_index.h: watches grouped by value (type and key), their members in order, and
 * a batch's slots by (group, breach) numbered as first seen, through growth and clearing. */
#include <stdio.h>

#include "ingest/watch_index.h"
#include "test.h"

static int add(bd_watch_index *ix, int type, const char *key)
{
    return bd_watch_index_add(ix, type, key, strlen(key));
}

static int find(const bd_watch_index *ix, int type, const char *key)
{
    return bd_watch_index_find(ix, type, key, strlen(key));
}

/* The watches of group g as "0,3,4," */
static const char *members(const bd_watch_index *ix, int g)
{
    static char out[8192];
    out[0] = '\0';
    for (int w = bd_watch_index_first(ix, g); w >= 0; w = bd_watch_index_next(ix, w)) {
        size_t n = strlen(out);
        snprintf(out + n, sizeof out - n, "%d,", w);
    }
    return out;
}

TEST(test_watches_of_one_value_share_a_group_in_the_order_added)
{
    bd_watch_index *ix = bd_watch_index_new();
    CHECK_INT(add(ix, 1, "example.com"), 0);   /* watch 0 */
    CHECK_INT(add(ix, 0, "a@example.com"), 1); /* watch 1 */
    CHECK_INT(add(ix, 1, "example.com"), 0);   /* watch 2 */
    CHECK_INT(add(ix, 0, "example.com"), 2);   /* watch 3: same key, other type */
    CHECK_INT(add(ix, 1, "example.co"), 3);    /* watch 4: a prefix is another value */
    CHECK_INT(add(ix, 1, "example.com"), 0);   /* watch 5 */
    CHECK_INT(bd_watch_index_groups(ix), 4);
    CHECK_STR(members(ix, 0), "0,2,5,");
    CHECK_STR(members(ix, 1), "1,");
    CHECK_STR(members(ix, 2), "3,");
    CHECK_STR(members(ix, 3), "4,");
    CHECK_INT(find(ix, 1, "example.com"), 0);
    CHECK_INT(find(ix, 0, "example.com"), 2);
    CHECK_INT(find(ix, 1, "example.co"), 3);
    CHECK_INT(find(ix, 1, "example.comm"), -1);
    CHECK_INT(find(ix, 2, "example.com"), -1);
    CHECK_INT(find(ix, 1, ""), -1);
    CHECK_INT(bd_watch_index_first(ix, 4), -1); /* no such group */
    CHECK_INT(bd_watch_index_next(ix, 6), -1);  /* no such watch */
    /* keys are bytes: a NUL inside is part of the value */
    CHECK_INT(bd_watch_index_add(ix, 7, "a\0b", 3), 4);
    CHECK_INT(bd_watch_index_find(ix, 7, "a\0b", 3), 4);
    CHECK_INT(bd_watch_index_find(ix, 7, "a\0c", 3), -1);
    CHECK_INT(bd_watch_index_find(ix, 7, "a", 1), -1);
    bd_watch_index_free(ix);
}

TEST(test_seven_hundred_watches_on_one_domain_are_one_group)
{
    bd_watch_index *ix = bd_watch_index_new();
    char want[8192] = "";
    for (int i = 0; i < 700; i++) {
        CHECK_INT(add(ix, 1, "example.com"), 0);
        size_t n = strlen(want);
        snprintf(want + n, sizeof want - n, "%d,", i);
    }
    CHECK_INT(bd_watch_index_groups(ix), 1);
    CHECK_STR(members(ix, 0), want);
    /* one slot per breach, whatever the number of watches */
    CHECK_INT(bd_watch_index_slot(ix, 0, 7), 0);
    CHECK_INT(bd_watch_index_slot(ix, 0, 7), 0);
    CHECK_INT(bd_watch_index_slots(ix), 1);
    bd_watch_index_free(ix);
}

TEST(test_many_values_grow_the_table_and_stay_found)
{
    enum { N = 20000 };
    static char keys[N][16]; /* the index borrows its keys: they outlive it */
    bd_watch_index *ix = bd_watch_index_new();
    for (int i = 0; i < N; i++) {
        snprintf(keys[i], sizeof keys[i], "user%d", i);
        CHECK_INT(add(ix, i % 3, keys[i]), i);
    }
    CHECK_INT(bd_watch_index_groups(ix), N);
    int found = 0;
    char key[16];
    for (int i = 0; i < N; i++) {
        snprintf(key, sizeof key, "user%d", i); /* other bytes of the same value */
        found += find(ix, i % 3, key) == i && find(ix, (i + 1) % 3, key) == -1 &&
                 bd_watch_index_first(ix, i) == i && bd_watch_index_next(ix, i) == -1;
    }
    CHECK_INT(found, N);
    bd_watch_index_free(ix);
}

TEST(test_slots_are_numbered_as_first_seen_and_cleared_per_batch)
{
    bd_watch_index *ix = bd_watch_index_new();
    add(ix, 0, "a");
    add(ix, 0, "b");
    CHECK_INT(bd_watch_index_slot(ix, 0, 7), 0);
    CHECK_INT(bd_watch_index_slot(ix, 1, 7), 1);
    CHECK_INT(bd_watch_index_slot(ix, 0, 8), 2);
    CHECK_INT(bd_watch_index_slot(ix, 0, 0), 3); /* breach 0: cards */
    CHECK_INT(bd_watch_index_slot(ix, 1, 7), 1);
    CHECK_INT(bd_watch_index_slot(ix, 0, 7), 0);
    CHECK_INT(bd_watch_index_slots(ix), 4);
    int g;
    int64_t b;
    bd_watch_index_slot_of(ix, 2, &g, &b);
    CHECK_INT(g, 0);
    CHECK_INT(b, 8);
    bd_watch_index_clear_slots(ix);
    CHECK_INT(bd_watch_index_slots(ix), 0);
    CHECK_INT(bd_watch_index_slot(ix, 1, 7), 0); /* numbered afresh */
    CHECK_INT(find(ix, 0, "b"), 1);              /* the groups stay */
    bd_watch_index_clear_slots(ix);
    /* 100,000 (group, breach) pairs: distinct numbers in order, each found again */
    int ok = 0;
    for (int i = 0; i < 100000; i++)
        ok += bd_watch_index_slot(ix, i % 2, (int64_t)(i / 2) * 1000003) == i;
    CHECK_INT(ok, 100000);
    ok = 0;
    for (int i = 0; i < 100000; i++) {
        bd_watch_index_slot_of(ix, i, &g, &b);
        ok += bd_watch_index_slot(ix, i % 2, (int64_t)(i / 2) * 1000003) == i && g == i % 2 &&
              b == (int64_t)(i / 2) * 1000003;
    }
    CHECK_INT(ok, 100000);
    CHECK_INT(bd_watch_index_slots(ix), 100000);
    bd_watch_index_clear_slots(ix);
    CHECK_INT(bd_watch_index_slot(ix, 1, 99), 0);
    bd_watch_index_free(ix);
}

int main(void)
{
    RUN(test_watches_of_one_value_share_a_group_in_the_order_added);
    RUN(test_seven_hundred_watches_on_one_domain_are_one_group);
    RUN(test_many_values_grow_the_table_and_stay_found);
    RUN(test_slots_are_numbered_as_first_seen_and_cleared_per_batch);
    return TEST_EXIT();
}
