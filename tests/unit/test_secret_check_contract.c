/* The one check that a secret belongs to a store (auth/secret_check.h), which breachd and
 * breachctl both run, on SQLite and, when BREACHD_TEST_PG_URI names a server, on PostgreSQL
 * (store_fixture.h). */
#include "auth/secret_check.h"
#include "store_fixture.h"

static void secret_of(uint8_t fill, uint8_t secret[BD_SECRET_LEN])
{
    memset(secret, fill, BD_SECRET_LEN);
}

/* A new store that keeps the fingerprint of secret. */
static bd_store *store_for(const uint8_t secret[BD_SECRET_LEN])
{
    bd_store *s = fresh();
    char fp[65];
    bd_secret_fingerprint(secret, fp);
    CHECK_INT(bd_store_meta_set(s, "secret_fingerprint", fp), BD_OK);
    return s;
}

/* "the secret file PATH does not belong to the store " and the URI as bd_uri_redact shows
 * it. */
static void check_foreign(const char *why, const char *path)
{
    char want[256];
    snprintf(want, sizeof want, "the secret file %s does not belong to the store ", path);
    CHECK(strncmp(why, want, strlen(want)) == 0);
    CHECK(strlen(why) > strlen(want));
}

TEST(test_the_store_s_own_secret_passes_with_every_flag)
{
    uint8_t mine[BD_SECRET_LEN];
    secret_of(1, mine);
    bd_store *s = store_for(mine);
    static const int flags[] = {0, BD_SECRET_CHECK_WAIT, BD_SECRET_CHECK_STORE_APART,
                                BD_SECRET_CHECK_WAIT | BD_SECRET_CHECK_STORE_APART};
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++) {
        char why[512] = "";
        CHECK_INT(bd_secret_check(s, fresh_uri(), "/x/mine", mine, flags[i], why, sizeof why),
                  BD_OK);
        CHECK_STR(why, "");
    }
}

TEST(test_another_store_s_secret_is_refused_by_name)
{
    uint8_t mine[BD_SECRET_LEN], theirs[BD_SECRET_LEN];
    secret_of(1, mine);
    secret_of(2, theirs);
    bd_store *s = store_for(mine);
    char why[512];
    CHECK_INT(bd_secret_check(s, fresh_uri(), "/x/theirs", theirs,
                              BD_SECRET_CHECK_WAIT | BD_SECRET_CHECK_STORE_APART, why,
                              sizeof why),
              BD_ERR_INVALID);
    check_foreign(why, "/x/theirs");
    CHECK_INT(bd_secret_check(s, fresh_uri(), "/x/theirs", theirs, 0, why, sizeof why),
              BD_ERR_INVALID);
    check_foreign(why, "/x/theirs");
}

/* A store without a fingerprint belongs to no secret (asked once: WAIT would ask a
 * database server again for 5 s). */
TEST(test_a_store_without_a_fingerprint_refuses_every_secret)
{
    uint8_t mine[BD_SECRET_LEN];
    secret_of(1, mine);
    bd_store *s = fresh();
    char why[512];
    CHECK_INT(bd_secret_check(s, fresh_uri(), "/x/mine", mine, BD_SECRET_CHECK_STORE_APART, why,
                              sizeof why),
              BD_ERR_INVALID);
    check_foreign(why, "/x/mine");
}

static void suite(void)
{
    RUN_CONTRACT(test_the_store_s_own_secret_passes_with_every_flag);
    RUN_CONTRACT(test_another_store_s_secret_is_refused_by_name);
    RUN_CONTRACT(test_a_store_without_a_fingerprint_refuses_every_secret);
}

int main(void)
{
    return fx_main(suite);
}
