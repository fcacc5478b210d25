/* The store contract of store/pastes.h: pastes (a put, a second put of the same source and
 * id: its emails added, nothing else changed; the pastes of one email newest first, unknown
 * dates last, then source and id), the SHA-1 of records' emails (a sync hashes only what is
 * new, a range by prefix, a forget), and the stealer log reads of records' website hosts
 * (distinct, sorted, bounded). Each test runs on a SQLite store and, when
 * BREACHD_TEST_PG_URI names a server, on a PostgreSQL store (store_fixture.h). */
#include "record_fixture.h"
#include "store/pastes.h"

static int take_paste(void *ctx, const bd_paste_row *p)
{
    (void)ctx;
    size_t n = strlen(text);
    snprintf(text + n, sizeof text - n, "%s%.*s/%.*s/%s%.*s/%lld/%lld", n ? "," : "",
             (int)p->source.len, p->source.ptr, (int)p->id.len, p->id.ptr,
             p->title.ptr ? "" : "(none)", (int)p->title.len, p->title.ptr ? p->title.ptr : "",
             (long long)p->date, (long long)p->email_count);
    return 0;
}

static const char *pastes_of(bd_store *s, const char *email)
{
    text[0] = '\0';
    bd_result r = bd_store_read_begin(s);
    if (r == BD_OK)
        r = bd_store_pastes_of_email(s, bd_slice_from(email), take_paste, NULL);
    bd_store_read_end(s);
    return r == BD_OK ? text : "error";
}

static bool paste(bd_store *s, const char *source, const char *id, const char *title,
                int64_t date, int64_t count, const char *e1, const char *e2)
{
    bd_paste_row p = {.source = bd_slice_from(source),
                      .id = bd_slice_from(id),
                      .title = title ? bd_slice_from(title) : (bd_slice){NULL, 0},
                      .date = date,
                      .email_count = count};
    bd_slice emails[2] = {bd_slice_from(e1), e2 ? bd_slice_from(e2) : (bd_slice){NULL, 0}};
    bool inserted = false;
    CHECK_INT(bd_store_begin(s), BD_OK);
    CHECK_INT(bd_store_paste_put(s, &p, emails, e2 ? 2 : 1, &inserted), BD_OK);
    CHECK_INT(bd_store_commit(s), BD_OK);
    return inserted;
}

TEST(test_pastes_of_an_email_newest_first_unknown_dates_last)
{
    bd_store *s = fresh();
    CHECK(paste(s, "Pastebin", "old", "first", 1000, 10, "a@x.example", "b@x.example"));
    CHECK(paste(s, "Pastebin", "undated", NULL, -1, 1, "a@x.example", NULL));
    CHECK(paste(s, "AdHocUrl", "new", "", 2000, 2, "a@x.example", NULL));
    CHECK(paste(s, "Pastie", "same-date", "t", 2000, 3, "a@x.example", NULL));
    CHECK_STR(pastes_of(s, "a@x.example"),
              "AdHocUrl/new//2000/2,Pastie/same-date/t/2000/3,Pastebin/old/first/1000/10,"
              "Pastebin/undated/(none)/-1/1");
    CHECK_STR(pastes_of(s, "b@x.example"), "Pastebin/old/first/1000/10");
    CHECK_STR(pastes_of(s, "c@x.example"), "");
}

TEST(test_a_second_put_adds_emails_and_changes_nothing_else)
{
    bd_store *s = fresh();
    CHECK(paste(s, "Pastebin", "p1", "title", 1000, 5, "a@x.example", NULL));
    CHECK(!paste(s, "Pastebin", "p1", "other", 9999, 99, "a@x.example", "c@x.example"));
    CHECK(paste(s, "Pastie", "p1", NULL, -1, 1, "a@x.example", NULL)); /* another source */
    CHECK_STR(pastes_of(s, "c@x.example"), "Pastebin/p1/title/1000/5");
    CHECK_STR(pastes_of(s, "a@x.example"), "Pastebin/p1/title/1000/5,Pastie/p1/(none)/-1/1");
}

static int take_pair(void *ctx, bd_slice a, bd_slice b)
{
    (void)ctx;
    size_t n = strlen(text);
    snprintf(text + n, sizeof text - n, "%s%.*s%s%.*s", n ? "," : "", (int)a.len, a.ptr,
             b.ptr ? "/" : "", (int)b.len, b.ptr ? b.ptr : "");
    return 0;
}

static const char *hashes_under(bd_store *s, const char *email)
{
    char hex[41];
    bd_email_sha1_hex(bd_slice_from(email), hex);
    hex[6] = '\0';
    text[0] = '\0';
    bd_result r = bd_store_read_begin(s);
    if (r == BD_OK)
        r = bd_store_email_hashes_range(s, hex, take_pair, NULL);
    bd_store_read_end(s);
    return r == BD_OK ? text : "error";
}

static int64_t sync_hashes(bd_store *s)
{
    int64_t added = -1;
    CHECK_INT(bd_store_begin(s), BD_OK);
    CHECK_INT(bd_store_email_hashes_sync(s, &added), BD_OK);
    CHECK_INT(bd_store_commit(s), BD_OK);
    return added;
}

static void put_site(bd_store *s, const char *email, const char *site, int n)
{
    bd_record_in r = record(OLD, email, n);
    r.website_domain = bd_slice_from(site);
    CHECK(put(s, &r));
}

TEST(test_email_hashes_follow_the_records)
{
    bd_store *s = fresh();
    breaches(s);
    CHECK_INT(bd_store_begin(s), BD_OK);
    put_email(s, OLD, "a@x.example", 1);
    put_email(s, MID, "a@x.example", 2);
    put_email(s, OLD, "b@x.example", 3);
    CHECK_INT(bd_store_commit(s), BD_OK);
    CHECK_INT(sync_hashes(s), 2); /* one per distinct email */
    char hex[41];
    bd_email_sha1_hex(bd_slice_from("a@x.example"), hex);
    char want[128];
    snprintf(want, sizeof want, "%s/a@x.example", hex);
    CHECK_STR(hashes_under(s, "a@x.example"), want);
    CHECK_INT(sync_hashes(s), 0); /* nothing new */
    CHECK_INT(bd_store_begin(s), BD_OK);
    put_email(s, NEW, "c@x.example", 4);
    CHECK_INT(bd_store_commit(s), BD_OK);
    CHECK_INT(sync_hashes(s), 1);
    CHECK_INT(bd_store_begin(s), BD_OK);
    CHECK_INT(bd_store_email_hash_forget(s, bd_slice_from("a@x.example")), BD_OK);
    CHECK_INT(bd_store_commit(s), BD_OK);
    CHECK_STR(hashes_under(s, "a@x.example"), "");
    /* the SHA-1 of "a@x.example", as HIBP's clients compute it */
    CHECK_STR(hex, "E780FA894A834AB1ED6D92429DC693C583BD0400");
}

static const char *stealer(bd_store *s, bd_stealer_by by, const char *key, int64_t max)
{
    text[0] = '\0';
    bd_result r = bd_store_read_begin(s);
    if (r == BD_OK)
        r = bd_store_stealer_logs(s, by, bd_slice_from(key), max, take_pair, NULL);
    bd_store_read_end(s);
    return r == BD_OK ? text : r == BD_ERR_LIMIT ? "limit" : "error";
}

TEST(test_stealer_logs_are_distinct_sorted_and_bounded)
{
    bd_store *s = fresh();
    breaches(s);
    CHECK_INT(bd_store_begin(s), BD_OK);
    put_site(s, "b@x.example", "shop.example", 1);
    put_site(s, "a@x.example", "video.example", 2);
    put_site(s, "a@x.example", "shop.example", 3);
    put_site(s, "a@x.example", "shop.example", 4); /* another record, the same host */
    put_email(s, OLD, "c@x.example", 5);           /* no website */
    put_site(s, "d@y.example", "shop.example", 6);
    CHECK_INT(bd_store_commit(s), BD_OK);
    CHECK_STR(stealer(s, BD_STEALER_BY_EMAIL, "a@x.example", 10), "shop.example,video.example");
    CHECK_STR(stealer(s, BD_STEALER_BY_EMAIL, "c@x.example", 10), "");
    CHECK_STR(stealer(s, BD_STEALER_BY_WEBSITE, "shop.example", 10),
              "a@x.example,b@x.example,d@y.example");
    CHECK_STR(stealer(s, BD_STEALER_BY_EMAIL_DOMAIN, "x.example", 10),
              "a@x.example/shop.example,a@x.example/video.example,b@x.example/shop.example");
    /* x.example has 5 records with an email, shop.example 4: past the maximum, refused */
    CHECK_STR(stealer(s, BD_STEALER_BY_EMAIL_DOMAIN, "x.example", 4), "limit");
    CHECK_STR(stealer(s, BD_STEALER_BY_EMAIL_DOMAIN, "x.example", 5),
              "a@x.example/shop.example,a@x.example/video.example,b@x.example/shop.example");
    CHECK_STR(stealer(s, BD_STEALER_BY_WEBSITE, "shop.example", 3), "limit");
}

static void suite(void)
{
    RUN_CONTRACT(test_pastes_of_an_email_newest_first_unknown_dates_last);
    RUN_CONTRACT(test_a_second_put_adds_emails_and_changes_nothing_else);
    RUN_CONTRACT(test_email_hashes_follow_the_records);
    RUN_CONTRACT(test_stealer_logs_are_distinct_sorted_and_bounded);
}

int main(void)
{
    return fx_main(suite);
}
