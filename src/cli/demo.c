/* breachctl demo: a deterministic synthetic corpus that shows every feature, loaded through
 * the same importer as real data, plus one demo key.
 *
 * Everything in it is fake by construction: names from short lists, addresses at reserved
 * domains (RFC 2606 .example and example.com/.net/.org), phone numbers in the fictional
 * 555-01xx range, IPs from the documentation ranges (RFC 5737, RFC 3849), SSNs from the
 * 987-65-432x advertising block, and card numbers on the issuers' public test BINs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "auth/keys.h"
#include "cli/args.h"
#include "cli/cli.h"
#include "core/json.h"
#include "ingest/import.h"
#include "store/pastes.h"

typedef struct {
    uint64_t s;
} rng;

/* splitmix64: tiny, and the same sequence on every machine. */
static uint64_t next(rng *r)
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static unsigned pick(rng *r, unsigned n)
{
    return (unsigned)(next(r) % n);
}

typedef struct {
    const char *uuid, *name, *domain, *date, *type, *categories, *country, *language,
        *password_types, *data_types, *description, *article, *logo;
} demo_breach;

static const demo_breach BREACHES[] = {
    {"6f1c2a3b-4d5e-4f60-8a71-b2c3d4e5f601", "ExampleSocial", "social.example", "2024-03-18",
     "Database", "Social network", "United States", "English", "plaintext",
     "email,username,password,ip_address,phone_number",
     "A misconfigured backup of the ExampleSocial user table was posted on a forum.",
     "https://breachd.example/articles/examplesocial", "https://social.example/logo.png"},
    {"7a2d3b4c-5e6f-4a71-9b82-c3d4e5f60712", "ShopDemo", "shop.example", "2023-10-04", "Database",
     "E-commerce", "Germany", "German", "bcrypt",
     "email,password_hash,first_name,last_name,phone_number",
     "Customer accounts of the ShopDemo store, with bcrypt password hashes.", NULL,
     "https://shop.example/logo.png"},
    {"8b3e4c5d-6f70-4b82-8c93-d4e5f6071823", "ForumTest", "forum.example", "2022-06-30", "Scrape",
     "Forum,Technology", "United Kingdom", "English", "md5",
     "email,username,password_hash,ip_address", "Scraped profiles of the ForumTest board.",
     "https://breachd.example/articles/forumtest", NULL},
    {"9c4f5d6e-7081-4c93-9da4-e5f607182934", "CRM Sample", "crm.example", "2021-01-15", "Database",
     "Business services", "United States", "English", "none",
     "email,first_name,last_name,social_security_number,phone_number",
     "A customer relationship database including social security numbers.", NULL, NULL},
    {"ad506e7f-8192-4da4-8eb5-f60718293a45", "GameVault", "games.example", "2020-11-02", "Database",
     "Gaming", "France", "French", "plaintext", "email,username,password,bitcoin_address",
     "Player accounts of GameVault, some with linked wallet addresses.", NULL,
     "https://games.example/logo.png"},
    {"be617f80-92a3-4eb5-9fc6-0718293a4b56", "Stealer logs 2025-07", "", "2025-07-21",
     "Stealer logs", "Malware", "Unknown", "Unknown", "plaintext",
     "email,password,ip_address,username",
     "Credentials captured by information-stealing malware, grouped by collection month.", NULL,
     NULL},
};
#define NBREACHES (sizeof BREACHES / sizeof BREACHES[0])

static const char *const FIRST[] = {
    "Alice",   "Bob",  "Carol",  "Dave",  "Erin",   "Frank", "Grace", "Heidi",  "Ivan",   "Judy",
    "Mallory", "Niaj", "Olivia", "Peggy", "Rupert", "Sybil", "Trent", "Victor", "Walter", "Zoë"};
static const char *const LAST[] = {"Example", "Sample", "Tester",  "Demo", "Placeholder",
                                   "Dummy",   "Mock",   "Fixture", "Stub", "Fakename"};
static const char *const DOMAINS[] = {"example.com", "example.net", "example.org", "mail.example",
                                      "corp.example"};
static const char *const PASSWORDS[] = {
    "hunter2", "correct horse battery", "Pässwörd!", "letmein", "qwerty123", "Tr0ub4dor&3",
    "dragon",  "秘密のパスワード",      "x",         "ab",      "monkey99",  "sunshine!"};

static void kv(bd_json *w, const char *k, const char *v)
{
    bd_json_key(w, k);
    bd_json_cstring(w, v);
}

static bool write_line(FILE *f, bd_buf *b)
{
    return fwrite(b->data, 1, b->len, f) == b->len && fputc('\n', f) != EOF;
}

static bool gen_breaches(FILE *f, bd_buf *b)
{
    for (size_t i = 0; i < NBREACHES; i++) {
        const demo_breach *d = &BREACHES[i];
        bd_json w;
        bd_buf_reset(b);
        bd_json_init(&w, b);
        bd_json_object_begin(&w);
        kv(&w, "uuid", d->uuid);
        kv(&w, "source_name", d->name);
        kv(&w, "site_domain", d->domain);
        kv(&w, "date_leaked", d->date);
        kv(&w, "breach_type", d->type);
        kv(&w, "site_categories", d->categories);
        kv(&w, "site_country", d->country);
        kv(&w, "site_language", d->language);
        kv(&w, "password_types", d->password_types);
        kv(&w, "leaked_data_types", d->data_types);
        kv(&w, "description", d->description);
        kv(&w, "service_article_url", d->article);
        kv(&w, "site_logo", d->logo);
        bd_json_object_end(&w);
        if (bd_json_result(&w) != BD_OK || !write_line(f, b))
            return false;
    }
    return true;
}

#define PEOPLE 600

static bool gen_records(FILE *f, bd_buf *b)
{
    rng r = {20261122};
    char email[96], user[64], phone[32], ip[48], ssn[16], btc[40], hash[72], attrs[96];
    for (unsigned p = 0; p < PEOPLE; p++) {
        const char *first = FIRST[p % 20], *last = LAST[(p / 20) % 10];
        /* Person 0 is alice@example.com, the identity the README's tour searches. */
        const char *domain = p == 0 ? "example.com" : DOMAINS[pick(&r, 5)];
        if (p < 200)
            snprintf(email, sizeof email, "%s.%s@%s", first, last, domain);
        else
            snprintf(email, sizeof email, "%s.%s%u@%s", first, last, p, domain);
        if (p == 0)
            snprintf(email, sizeof email, "Alice@Example.com");
        snprintf(user, sizeof user, "%s_%s%u", first, last, p % 97);
        snprintf(phone, sizeof phone, "+1 (555) 01%02u-%04u", p % 100, p);
        unsigned nb = 1 + pick(&r, 3); /* three distinct breaches at most */
        unsigned start = p == 0 ? 0 : pick(&r, NBREACHES);
        for (unsigned k = 0; k < nb; k++) {
            size_t bi = (start + k * 2) % NBREACHES;
            const demo_breach *d = &BREACHES[bi];
            bd_json w;
            bd_buf_reset(b);
            bd_json_init(&w, b);
            bd_json_object_begin(&w);
            kv(&w, "breach_uuid", d->uuid);
            kv(&w, "email", email);
            if (strstr(d->data_types, "username"))
                kv(&w, "user_name", user);
            if (strstr(d->data_types, "first_name")) {
                kv(&w, "first_name", first);
                kv(&w, "last_name", last);
            }
            if (strstr(d->data_types, "phone_number"))
                kv(&w, "phone_number", phone);
            if (strstr(d->data_types, "ip_address")) {
                unsigned v = pick(&r, 4);
                if (v == 3)
                    snprintf(ip, sizeof ip, "2001:DB8:0:0:%x:0:0:%x", p % 7, p + 1);
                else
                    snprintf(ip, sizeof ip, "%s.%u",
                             v == 0   ? "192.0.2"
                             : v == 1 ? "198.51.100"
                                      : "203.0.113",
                             1 + p % 254);
                kv(&w, "ip_address", ip);
            }
            if (strcmp(d->password_types, "plaintext") == 0)
                kv(&w, "password", p == 0 ? "hunter2" : PASSWORDS[pick(&r, 12)]);
            if (strstr(d->data_types, "password_hash")) {
                uint64_t h1 = next(&r), h2 = next(&r);
                if (strcmp(d->password_types, "bcrypt") == 0)
                    snprintf(hash, sizeof hash, "$2b$12$%016llx%016llxabcdefghijklmnopqrstu",
                             (unsigned long long)h1, (unsigned long long)h2);
                else
                    snprintf(hash, sizeof hash, "%016llX%016llX", (unsigned long long)h1,
                             (unsigned long long)h2);
                kv(&w, "password_hash", hash);
            }
            if (strstr(d->data_types, "social_security_number")) {
                snprintf(ssn, sizeof ssn, "987-65-432%u", p % 10);
                kv(&w, "social_security_number", ssn);
            }
            if (strstr(d->data_types, "bitcoin_address") && p % 3 == 0) {
                static const char b58[] =
                    "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
                btc[0] = '1';
                for (int i = 1; i < 34; i++)
                    btc[i] = b58[pick(&r, 58)];
                btc[34] = '\0';
                kv(&w, "bitcoin_address", btc);
            }
            if (p % 5 == 0) {
                snprintf(attrs, sizeof attrs, "{\"country\":\"US\",\"signup_year\":%u}",
                         2010 + p % 12);
                kv(&w, "other_attributes", attrs);
            }
            bd_json_object_end(&w);
            if (bd_json_result(&w) != BD_OK || !write_line(f, b))
                return false;
        }
    }
    return true;
}

static bool gen_cards(FILE *f, bd_buf *b)
{
    static const struct {
        const char *bin;
        int len;
        const char *bank;
    } ISSUERS[] = {{"411111", 16, "Example Bank"},       {"555555", 16, "Demo Credit Union"},
                   {"378282", 15, "Test National Bank"}, {"601111", 16, "Sample Savings"},
                   {"400000", 19, "Example Bank"},       {"411111", 19, "Example Bank"}};
    static const char *const LEAKS[][3] = {{"leak-2023-001", "Carding forum dump", "paid"},
                                           {"leak-2024-017", "Paste site collection", "free"},
                                           {"leak-2025-042", "Marketplace listing", "paid"}};
    rng r = {4111111111111111ULL};
    char num[24], created[24], expire[16], cvv[8], owner[64];
    for (unsigned i = 0; i < 360; i++) {
        unsigned is = i % 6, lk = pick(&r, 3);
        int len = ISSUERS[is].len;
        memcpy(num, ISSUERS[is].bin, 6);
        for (int k = 6; k < len; k++)
            num[k] = (char)('0' + pick(&r, 10));
        /* A few shared last-four digits so that *1111 finds cards across issuers. */
        if (i % 9 == 0)
            memcpy(num + len - 4, "1111", 4);
        num[len] = '\0';
        snprintf(created, sizeof created, "20%02u-%02u-%02u %02u:%02u:%02u", 19 + pick(&r, 7),
                 1 + pick(&r, 12), 1 + pick(&r, 28), pick(&r, 24), pick(&r, 60), pick(&r, 60));
        snprintf(expire, sizeof expire, "20%02u-%02u", 24 + pick(&r, 7), 1 + pick(&r, 12));
        snprintf(cvv, sizeof cvv, len == 15 ? "%04u" : "%03u", pick(&r, len == 15 ? 10000 : 1000));
        snprintf(owner, sizeof owner, "%s %s", FIRST[pick(&r, 20)], LAST[pick(&r, 10)]);
        bd_json w;
        bd_buf_reset(b);
        bd_json_init(&w, b);
        bd_json_object_begin(&w);
        kv(&w, "createdAt", created);
        kv(&w, "bank", ISSUERS[is].bank);
        kv(&w, "number", num);
        kv(&w, "owner", owner);
        kv(&w, "cvv", cvv);
        kv(&w, "expireDate", expire);
        bd_json_key(&w, "cvssScore");
        bd_json_double(&w, (double)(10 + pick(&r, 90)) / 10.0);
        kv(&w, "leakId", LEAKS[lk][0]);
        kv(&w, "leakName", LEAKS[lk][1]);
        kv(&w, "leakPublishDate", lk == 0 ? "2023-05-02" : lk == 1 ? "2024-08-19" : "2025-09-30");
        kv(&w, "leakDiscoverDate", lk == 0 ? "2023-05-04" : lk == 1 ? "2024-08-20" : "2025-10-01");
        bd_json_key(&w, "leakSize");
        bd_json_int(&w, 120); /* each leak holds 120 of the 360 cards, about */
        kv(&w, "leakTags", LEAKS[lk][2]);
        bd_json_object_end(&w);
        if (bd_json_result(&w) != BD_OK || !write_line(f, b))
            return false;
    }
    return true;
}

/* Writes one generated file and imports it. */
static int load(bd_store *s, const uint8_t *secret, bd_import_kind kind,
                bool (*gen)(FILE *, bd_buf *), const char *label)
{
    char path[] = "/tmp/breachd-demo-XXXXXX";
    int fd = mkstemp(path);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        fprintf(stderr, "breachctl demo: cannot create a temporary file\n");
        if (fd >= 0)
            close(fd);
        return BD_EXIT_FAIL;
    }
    bd_buf b;
    bd_buf_init(&b, 1 << 16);
    bool ok = gen(f, &b);
    bd_buf_free(&b);
    ok = fclose(f) == 0 && ok;
    int rc = BD_EXIT_FAIL;
    if (ok) {
        bd_import_options o = {.kind = kind, .format = BD_FMT_JSONL, .report = stderr};
        bd_import_counts c = {0};
        char why[512];
        int64_t hashed = 0;
        bd_result r = bd_import_file(s, secret, path, &o, &c, why, sizeof why);
        /* the records' emails hashed for the HIBP API's breachedaccount/range */
        if (r == BD_OK && kind == BD_IMPORT_RECORDS && (r = bd_store_begin(s)) == BD_OK) {
            r = bd_store_email_hashes_sync(s, &hashed);
            if (r == BD_OK)
                r = bd_store_commit(s);
            else
                bd_store_rollback(s);
            if (r != BD_OK)
                snprintf(why, sizeof why, "hashing its emails: %s", bd_result_str(r));
        }
        if (r == BD_OK && !c.rejected) {
            fprintf(stderr, "demo %s: %llu imported, %llu already present\n", label,
                    (unsigned long long)c.imported, (unsigned long long)c.duplicates);
            rc = BD_EXIT_OK;
        } else {
            fprintf(stderr, "breachctl demo: loading %s failed: %s\n", label, why);
        }
    }
    unlink(path);
    return rc;
}

int bd_cmd_demo(int argc, char **argv)
{
    const char *db = NULL, *secret = NULL;
    const bd_option opts[] = {{"--db", &db, NULL}, {"--secret", &secret, NULL}, {NULL, NULL, NULL}};
    if (!bd_parse_options("breachctl demo", argc, argv, opts, NULL, 0, NULL))
        return BD_EXIT_FAIL;
    if (!db) {
        fputs("usage: breachctl demo --db PATH [--secret FILE]\n", stderr);
        return BD_EXIT_FAIL;
    }
    if (access(db, F_OK) != 0 && bd_cli_init_store(db, secret) != BD_EXIT_OK)
        return BD_EXIT_FAIL;
    bd_store *s;
    uint8_t key[BD_SECRET_LEN];
    if (bd_cli_open(db, secret, &s, key) != BD_EXIT_OK)
        return BD_EXIT_FAIL;
    int rc = load(s, key, BD_IMPORT_BREACHES, gen_breaches, "breaches");
    if (rc == BD_EXIT_OK)
        rc = load(s, key, BD_IMPORT_RECORDS, gen_records, "breach records");
    if (rc == BD_EXIT_OK)
        rc = load(s, key, BD_IMPORT_CARDS, gen_cards, "cards");
    if (rc == BD_EXIT_OK)
        rc = bd_cli_create_key(s, "demo", "enterprise", 10000, BD_KEY_EXACT_PER_DAY, 0, 0, NULL);
    bd_store_close(s);
    return rc;
}
