/* The store contract of pastes (store/pastes.h): a put, a second put of the same source and
 * id (its emails added, nothing else changed), and the pastes of one email in their order
 * (newest first, unknown dates last, then source and id). Each test runs on a SQLite store
 * and, when BREACHD_TEST_PG_URI names a server, on a PostgreSQL store (store_fixture.h). */
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

static void suite(void)
{
    RUN_CONTRACT(test_pastes_of_an_email_newest_first_unknown_dates_last);
    RUN_CONTRACT(test_a_second_put_adds_emails_and_changes_nothing_else);
}

int main(void)
{
    return fx_main(suite);
}
