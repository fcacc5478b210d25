/* SQLite schema, one migration per entry: never edit a shipped entry, append a new one.
 *
 * Why the columns look the way they do:
 * - records hold display values plus lookup keys; passwords, SSNs and card numbers exist
 *   only masked and as HMAC-SHA-256 under the server secret, which lives outside this file.
 * - breach_date is copied into records so that every per-field index is ordered the way
 *   search pages are read (newest breach first, then id): a page is an index range seek.
 * - partial indexes (WHERE col IS NOT NULL) keep each lookup index as small as its data.
 * - dedup is a content hash: importing the same record twice inserts it once.
 * - cards keep the BIN, the last four digits reversed (tail) and the length, so a prefix
 *   pattern is a range on bin and a suffix pattern a range on tail; owner and bank words
 *   live in an external-content FTS5 index over the cards table.
 * - card_counts keeps how many cards share each BIN (kind 0) and each reversed last four
 *   (kind 1), updated with every insert, so counting a plain prefix or suffix pattern reads
 *   a few rows instead of every matching index entry; and (kind 2, migration 20) how many
 *   share each owner word and expiry. */
#include "store/sqlite/schema.h"

#include "store/sql_common.h"

/* The lookup indexes of records and cards, defined once: the initial schema creates them,
 * and a bulk import drops and rebuilds them (see sq_bulk_begin in conn.c). */
/* clang-format off */
#define RECORD_INDEXES \
    "CREATE INDEX records_by_breach ON records(breach_id);" \
    RECORD_LOOKUP_INDEXES
/* The indexes searches look records up by (all but records_by_breach, which the records'
 * key (breach_id, dedup) stands for where it is an index of its own: dedup_key.c) */
#define RECORD_LOOKUP_INDEXES \
    "CREATE INDEX records_by_email ON records(email, breach_date) WHERE email IS NOT NULL;" \
    "CREATE INDEX records_by_domain ON records(email_domain, breach_date)" \
    "  WHERE email_domain IS NOT NULL;" \
    "CREATE INDEX records_by_phone ON records(phone_key, breach_date) WHERE phone_key IS NOT NULL;" \
    "CREATE INDEX records_by_user ON records(user_name_key, breach_date)" \
    "  WHERE user_name_key IS NOT NULL;" \
    "CREATE INDEX records_by_ip ON records(ip_address, breach_date) WHERE ip_address IS NOT NULL;" \
    "CREATE INDEX records_by_ssn ON records(ssn_hmac, breach_date) WHERE ssn_hmac IS NOT NULL;" \
    "CREATE INDEX records_by_password ON records(password_hmac, breach_date)" \
    "  WHERE password_hmac IS NOT NULL;" \
    "CREATE INDEX records_by_hash ON records(password_hash, breach_date)" \
    "  WHERE password_hash IS NOT NULL;" \
    "CREATE INDEX records_by_bitcoin ON records(bitcoin_address, breach_date)" \
    "  WHERE bitcoin_address IS NOT NULL;"
/* Added by the migration of issue 35 (website of a stealer log), with its column. */
#define RECORD_INDEX_BY_WEBSITE \
    "CREATE INDEX records_by_website ON records(website_domain, breach_date)" \
    "  WHERE website_domain IS NOT NULL;"

#define CARD_INDEXES_BY_NUMBER_AND_DATE \
    "CREATE INDEX cards_by_hmac ON cards(number_hmac);" \
    "CREATE INDEX cards_by_bin ON cards(bin, tail, length);" \
    "CREATE INDEX cards_by_tail ON cards(tail, length);" \
    "CREATE INDEX cards_by_created ON cards(created_at, card_id);" \
    "CREATE INDEX cards_by_expire ON cards(expire_date, card_id);"
#define CARD_INDEX_BY_LEAK "CREATE INDEX cards_by_leak ON cards(leak_id) WHERE leak_id IS NOT NULL;"
/* The initial schema's: cards_by_cvv indexed the CVVs in clear until the migration that
 * keyed them (cards_by_cvv_hmac below). */
#define CARD_INDEXES \
    CARD_INDEXES_BY_NUMBER_AND_DATE \
    "CREATE INDEX cards_by_cvv ON cards(cvv) WHERE cvv IS NOT NULL;" \
    CARD_INDEX_BY_LEAK

/* Added by migration 2:
 * - a BIN's cards newest first, so the commonest card search (a BIN prefix, default sort)
 *   reads its page straight off one index range instead of walking every card by date and
 *   testing each one's BIN;
 * - each card's expiry by row id: counting owner words within an expiry range tests the
 *   expiry of every card with the word, and this narrow index answers that without
 *   descending the wide cards table once per card. */
#define CARD_INDEXES_2 \
    "CREATE INDEX cards_by_bin_created ON cards(bin, created_at, card_id);" \
    "CREATE INDEX cards_expiry_by_id ON cards(id, expire_date);"

/* Added by migration 3:
 * - card_owner_words holds each word of a card's owner (as the FTS5 tokenizer splits it)
 *   with the card's expiry, for cards that have one. "owner:WORD AND expireDate:[...]" is
 *   then counted as one contiguous index range instead of a lookup per card with the word
 *   (4,239 cards: 0.17 ms instead of 8.7 ms on the benchmark's 1M store). */
#define CARD_OWNER_WORDS \
    "CREATE TABLE card_owner_words(word TEXT NOT NULL, expire_date TEXT NOT NULL," \
    "  id INTEGER NOT NULL, PRIMARY KEY(word, expire_date, id)) WITHOUT ROWID;"

/* Added by migration 4:
 * - domain_counts keeps how many records each email domain has, moved by every record
 *   insert and erasure, so an unfiltered domain search counts records_found with one
 *   lookup: counting bigcorp.example's 1.2M index entries took ~40 ms in the 10M benchmark
 *   run. A bulk load recounts it at the end. (Triggers would keep it too, but in this
 *   SQLite build a trigger doubled the time of a plain import: 22.6 -> 44.0 s for 1M
 *   records, mostly malloc and memmove of the trigger's frame per row.) */
#define DOMAIN_COUNT_REBUILD \
    "DELETE FROM domain_counts;" \
    "INSERT INTO domain_counts(domain, n) SELECT email_domain, count(*) FROM records" \
    "  WHERE email_domain IS NOT NULL GROUP BY email_domain;"

/* Added by migration 20:
 * - card_counts kind 2: a row per owner word and expiry, keyed "word expiry" (the word as
 *   card_owner_words holds it, a space, the date), moved by every owner word put and
 *   recounted by a bulk load, so that an owner word's count within expiry ranges sums
 *   some dozens of rows instead of reading each of the word's cards in card_owner_words
 *   (cards.c, owner_word_count; the PostgreSQL store's migration 15 does the same). */
#define OWNER_WORD_COUNT_REBUILD \
    "DELETE FROM card_counts WHERE kind = 2;" \
    "INSERT INTO card_counts(kind, key, n) SELECT 2, word || ' ' || expire_date, count(*)" \
    "  FROM card_owner_words GROUP BY word, expire_date;"

/* Added by migration 5:
 * - api_keys.exact_per_day: each key's daily budget of card lookups by full number or
 *   Hash:, which test a guess at a hidden card number one at a time (docs/API.md,
 *   "Exact-number lookups and their budget"). Keys made before it get the default, 20. */
#define KEY_EXACT_BUDGET \
    "ALTER TABLE api_keys ADD COLUMN exact_per_day INTEGER NOT NULL DEFAULT 20;"

/* Added by migration 6, for the Have I Been Pwned API v3 (docs/API.md):
 * - each breach's Name (unique regardless of case: the index answers /breach/{name}), the
 *   times it was added and last modified (Unix seconds) and its flags (BD_BREACH_* bits,
 *   0 = verified and nothing else). Breaches already stored were added no later than the
 *   upgrade: it is the time they get. Their Names need C (store/breach_name.h), so the
 *   migration leaves a note in meta that the runner acts on in the same transaction
 *   (sq_migration_notes in breaches.c). */
#define BREACH_HIBP_FIELDS \
    "ALTER TABLE breaches ADD COLUMN name TEXT;" \
    "ALTER TABLE breaches ADD COLUMN added_at INTEGER NOT NULL DEFAULT 0;" \
    "ALTER TABLE breaches ADD COLUMN modified_at INTEGER NOT NULL DEFAULT 0;" \
    "ALTER TABLE breaches ADD COLUMN hibp_flags INTEGER NOT NULL DEFAULT 0;" \
    "UPDATE breaches SET added_at = CAST(strftime('%s', 'now') AS INTEGER)," \
    "  modified_at = CAST(strftime('%s', 'now') AS INTEGER);" \
    "CREATE UNIQUE INDEX breaches_by_name ON breaches(name COLLATE NOCASE);" \
    "INSERT INTO meta(key, value) VALUES ('pending_breach_names', '1')" \
    "  ON CONFLICT(key) DO UPDATE SET value = excluded.value;"

/* Added by the migration that keys CVVs (cards imported before it kept theirs in clear, and
 * the store never holds the server secret that hashing them needs):
 * - each card's CVV is its mask (one '*' per digit) in cvv and its keyed hash in cvv_hmac,
 *   which cvv: searches (cards_by_cvv_hmac);
 * - cards stored in clear before are left to bd_store_cvv_upgrade (sq_cvv_upgrade in
 *   cards.c), which whoever opens the store with the secret runs; the note in meta says it
 *   waits, and the migration runner takes it away at once when no card has a CVV in clear
 *   (sq_cvv_note), dropping cards_by_cvv, the index of the plain values, with it. */
#define CARD_INDEX_BY_CVV_HMAC \
    "CREATE INDEX cards_by_cvv_hmac ON cards(cvv_hmac) WHERE cvv_hmac IS NOT NULL;"
#define CVV_HASHES \
    "ALTER TABLE cards ADD COLUMN cvv_hmac BLOB;" \
    CARD_INDEX_BY_CVV_HMAC \
    "INSERT INTO meta(key, value) VALUES ('pending_cvv_hashes', '1')" \
    "  ON CONFLICT(key) DO UPDATE SET value = excluded.value;"
/* The owner and bank word index: FTS5 over the cards table's columns, no copy of its own. */
#define CARD_WORDS_TABLE \
    "CREATE VIRTUAL TABLE cards_words USING fts5(owner, bank, content='cards', " \
    "  content_rowid='id', tokenize='unicode61 remove_diacritics 2');"
/* clang-format on */

const char *const bd_sqlite_card_words_table = CARD_WORDS_TABLE;
const char *const bd_sqlite_domain_count_rebuild = DOMAIN_COUNT_REBUILD;
const char *const bd_sqlite_owner_word_count_rebuild = OWNER_WORD_COUNT_REBUILD;

const char *const bd_sqlite_record_indexes = RECORD_INDEXES RECORD_INDEX_BY_WEBSITE;
const char *const bd_sqlite_record_lookup_indexes = RECORD_LOOKUP_INDEXES RECORD_INDEX_BY_WEBSITE;
/* The card indexes as they are now, which a bulk load drops and builds again */
const char *const bd_sqlite_card_indexes =
    CARD_INDEXES_BY_NUMBER_AND_DATE CARD_INDEX_BY_LEAK CARD_INDEXES_2 CARD_INDEX_BY_CVV_HMAC;

/* clang-format off */
const char *const bd_sqlite_migrations[] = {
    /* 1: the initial schema */
    "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;"
    "CREATE TABLE breaches("
    "  id INTEGER PRIMARY KEY,"
    "  uuid TEXT NOT NULL UNIQUE,"
    "  source_name TEXT NOT NULL,"
    "  site_domain TEXT, date_leaked INTEGER NOT NULL, breach_type TEXT,"
    "  site_categories TEXT, site_country TEXT, site_language TEXT, password_types TEXT,"
    "  leaked_data_types TEXT, description TEXT, service_article_url TEXT, site_logo TEXT,"
    "  pwned_count INTEGER, pwned_count_derived INTEGER NOT NULL DEFAULT 0);"
    "CREATE INDEX breaches_by_date ON breaches(date_leaked DESC, source_name);"
    "CREATE TABLE records("
    "  id INTEGER PRIMARY KEY,"
    "  breach_id INTEGER NOT NULL REFERENCES breaches(id),"
    "  breach_date INTEGER NOT NULL,"
    "  user_name TEXT, user_name_key TEXT, first_name TEXT, last_name TEXT,"
    "  email TEXT, email_domain TEXT, phone_number TEXT, phone_key TEXT,"
    "  ip_address TEXT, bitcoin_address TEXT,"
    "  password_masked TEXT, password_hmac BLOB, password_hash TEXT,"
    "  ssn_masked TEXT, ssn_hmac BLOB, other_attributes TEXT,"
    "  severity INTEGER NOT NULL,"
    "  dedup BLOB NOT NULL UNIQUE);"
    RECORD_INDEXES
    "CREATE TABLE cards("
    "  id INTEGER PRIMARY KEY,"
    "  card_id TEXT NOT NULL UNIQUE,"
    "  created_at TEXT NOT NULL, bank TEXT,"
    "  number_masked TEXT NOT NULL, bin TEXT NOT NULL, last4 TEXT NOT NULL,"
    "  tail TEXT NOT NULL, length INTEGER NOT NULL, number_hmac BLOB NOT NULL,"
    "  owner TEXT, cvv TEXT, expire_date TEXT, cvss REAL, leak_id TEXT, leak_name TEXT,"
    "  leak_publish_date TEXT, leak_discover_date TEXT, leak_size INTEGER, leak_tags TEXT);"
    CARD_INDEXES
    "CREATE TABLE card_counts(kind INTEGER NOT NULL, key TEXT NOT NULL, n INTEGER NOT NULL,"
    "  PRIMARY KEY(kind, key)) WITHOUT ROWID;"
    CARD_WORDS_TABLE
    "CREATE TABLE api_keys("
    "  id INTEGER PRIMARY KEY,"
    "  name TEXT NOT NULL, hash BLOB NOT NULL UNIQUE, plan TEXT NOT NULL,"
    "  rate_per_hour INTEGER NOT NULL, created_at INTEGER NOT NULL,"
    "  expires_at INTEGER NOT NULL DEFAULT 0, revoked_at INTEGER NOT NULL DEFAULT 0);"
    "INSERT INTO meta(key, value) VALUES ('key_generation', '0');",
    /* 2: BIN pages in date order, expiry by id */
    CARD_INDEXES_2,
    /* 3: owner words with each card's expiry; filled from the words the FTS5 index holds */
    CARD_OWNER_WORDS
    "CREATE VIRTUAL TABLE temp.cards_words_instances"
    "  USING fts5vocab(main, cards_words, instance);"
    "INSERT OR IGNORE INTO card_owner_words(word, expire_date, id)"
    "  SELECT v.term, c.expire_date, v.doc FROM temp.cards_words_instances v"
    "  JOIN cards c ON c.id = v.doc WHERE v.col = 'owner' AND c.expire_date IS NOT NULL;"
    "DROP TABLE temp.cards_words_instances;",
    /* 4: records per email domain */
    "CREATE TABLE domain_counts(domain TEXT PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID;"
    DOMAIN_COUNT_REBUILD,
    /* 5: a per-key budget of exact card lookups */
    KEY_EXACT_BUDGET,
    /* 6: the breach fields of the HIBP API v3 */
    BREACH_HIBP_FIELDS,
    /* 7: Pwned Passwords ranges, packed: one row per (mode, 20-bit prefix), the bucket's
     * hashes and counts in one blob (layout: src/store/ranges.h). The rowid is the bucket
     * key, so a range request is one rowid lookup; 16 KiB pages keep buckets of up to ~16 KB
     * (about 800 SHA-1 hashes, i.e. 800M per mode) on their leaf page. IF NOT EXISTS: a
     * test winds user_version back over it to replay an older migration. */
    ("CREATE TABLE IF NOT EXISTS password_ranges(bucket INTEGER PRIMARY KEY,"
     "  hashes BLOB NOT NULL);"),
    /* 8 (usage and quotas): a key's monthly quota (0: none), and its requests per UTC day
     * (period yyyymmdd) and month (period yyyymm) */
    ("ALTER TABLE api_keys ADD COLUMN quota_per_month INTEGER NOT NULL DEFAULT 0;"
     "CREATE TABLE key_usage(key_id INTEGER NOT NULL, period INTEGER NOT NULL,"
     "  requests INTEGER NOT NULL, PRIMARY KEY(key_id, period)) WITHOUT ROWID;"),
    /* 9 (the change log, store.h): seeded with what the store holds, so a reader starting
     * from 0 sees every breach, record and card of it. IF NOT EXISTS and the seed only into
     * an empty log: a test winds user_version back over it to replay an older migration. */
    ("CREATE TABLE IF NOT EXISTS changes(seq INTEGER PRIMARY KEY AUTOINCREMENT,"
     "  at INTEGER NOT NULL, kind INTEGER NOT NULL, subject TEXT, name TEXT, n INTEGER NOT NULL);"
     "INSERT INTO changes(at, kind, subject, name, n) SELECT * FROM ("
     "  SELECT added_at, 1, uuid, NULL, 1 FROM breaches"
     "  UNION ALL SELECT CAST(strftime('%s', 'now') AS INTEGER), 4, b.uuid, NULL, c.n"
     "    FROM (SELECT breach_id, count(*) AS n FROM records GROUP BY breach_id) c"
     "    JOIN breaches b ON b.id = c.breach_id"
     "  UNION ALL SELECT CAST(strftime('%s', 'now') AS INTEGER), 6, leak_id, leak_name, count(*)"
     "    FROM cards GROUP BY leak_id, leak_name) WHERE NOT EXISTS (SELECT 1 FROM changes);"),
    /* 10 (watches): an API key's watches, and the alerts outbox that imports write in the
     * transaction of the rows that matched (seq: the cursor of GET /alerts, never reused);
     * state 0 pending, 1 delivered, 2 given up; times in Unix milliseconds where _ms */
    ("CREATE TABLE IF NOT EXISTS watches(id INTEGER PRIMARY KEY, key_id INTEGER NOT NULL,"
     "  type INTEGER NOT NULL, key TEXT NOT NULL, shown TEXT NOT NULL, url TEXT NOT NULL,"
     "  secret TEXT NOT NULL, created_at INTEGER NOT NULL, UNIQUE(key_id, type, key, url));"
     "CREATE TABLE IF NOT EXISTS alerts(seq INTEGER PRIMARY KEY AUTOINCREMENT,"
     "  event_id TEXT NOT NULL UNIQUE, watch_id INTEGER NOT NULL, key_id INTEGER NOT NULL,"
     "  watch_type INTEGER NOT NULL, watch_shown TEXT NOT NULL, breach_uuid TEXT,"
     "  breach_name TEXT, matched INTEGER NOT NULL, identities TEXT NOT NULL,"
     "  created_at INTEGER NOT NULL, state INTEGER NOT NULL DEFAULT 0,"
     "  attempts INTEGER NOT NULL DEFAULT 0, next_attempt_ms INTEGER NOT NULL,"
     "  lease_until_ms INTEGER NOT NULL DEFAULT 0);"
     "CREATE INDEX IF NOT EXISTS alerts_by_key ON alerts(key_id, seq);"
     "CREATE INDEX IF NOT EXISTS alerts_due ON alerts(next_attempt_ms) WHERE state = 0;"
     "INSERT OR IGNORE INTO meta(key, value) VALUES ('watch_generation', '0');"),
    /* 11 (bulk jobs, store.h "bulk lookup jobs"): a job, and its identities in chunks with
     * each chunk's results (record ids) beside them once the runner stored them. status 0 queued,
     * 1 running, 2 done, 3 failed; lease is the token of the claim that runs it until
     * lease_until (Unix seconds). IF NOT EXISTS: tests wind user_version back over it to
     * replay older migrations. */
    ("CREATE TABLE IF NOT EXISTS jobs(uuid TEXT PRIMARY KEY, key_id INTEGER NOT NULL,"
     "  type INTEGER NOT NULL, status INTEGER NOT NULL, total INTEGER NOT NULL,"
     "  done INTEGER NOT NULL DEFAULT 0, chunks INTEGER NOT NULL,"
     "  created_at INTEGER NOT NULL, finished_at INTEGER NOT NULL DEFAULT 0,"
     "  attempts INTEGER NOT NULL DEFAULT 0, lease INTEGER NOT NULL DEFAULT 0,"
     "  lease_until INTEGER NOT NULL DEFAULT 0);"
     "CREATE INDEX IF NOT EXISTS jobs_waiting ON jobs(status, created_at);"
     "CREATE INDEX IF NOT EXISTS jobs_by_created ON jobs(created_at);"
     "CREATE TABLE IF NOT EXISTS job_chunks(id INTEGER PRIMARY KEY, job TEXT NOT NULL,"
     "  chunk INTEGER NOT NULL, inputs BLOB NOT NULL, results BLOB,"
     "  UNIQUE(job, chunk));"),
    /* 12 (CVVs as secrets): each card's CVV masked and keyed (CVV_HASHES above) */
    CVV_HASHES,
    /* 13 (job limits and turns, store.h "bulk lookup jobs"): a key's limits on its jobs (0:
     * the defaults of auth/keys.h); a job's result rows, its identities whose records were
     * cut by those limits, and `served`, the claim sequence number of its last claim, so that
     * the runner serves first the key it claimed for least recently. */
    ("ALTER TABLE api_keys ADD COLUMN max_jobs INTEGER NOT NULL DEFAULT 0;"
     "ALTER TABLE api_keys ADD COLUMN max_queued_identities INTEGER NOT NULL DEFAULT 0;"
     "ALTER TABLE api_keys ADD COLUMN max_result_rows INTEGER NOT NULL DEFAULT 0;"
     "ALTER TABLE jobs ADD COLUMN result_rows INTEGER NOT NULL DEFAULT 0;"
     "ALTER TABLE jobs ADD COLUMN truncated INTEGER NOT NULL DEFAULT 0;"
     "ALTER TABLE jobs ADD COLUMN served INTEGER NOT NULL DEFAULT 0;"
     "CREATE INDEX IF NOT EXISTS jobs_by_key ON jobs(key_id, served);"),
    /* 14 (alert cursors per key): GET /alerts' cursor is each key's own sequence (key_seq,
     * the next from alert_cursors), so it tells nothing of other keys' alerts; seq stays the
     * outbox's number. Alerts stored before keep their cursor (key_seq = seq), and every key
     * goes on from the outbox's largest seq ever, so a poller's saved cursor stays good.
     * alerts is rebuilt with the column rather than altered: replayed (tests wind
     * user_version back over it), it copies whatever alerts holds again. */
    ("CREATE TABLE alerts_v2(seq INTEGER PRIMARY KEY AUTOINCREMENT,"
     "  event_id TEXT NOT NULL UNIQUE, watch_id INTEGER NOT NULL, key_id INTEGER NOT NULL,"
     "  watch_type INTEGER NOT NULL, watch_shown TEXT NOT NULL, breach_uuid TEXT,"
     "  breach_name TEXT, matched INTEGER NOT NULL, identities TEXT NOT NULL,"
     "  created_at INTEGER NOT NULL, state INTEGER NOT NULL DEFAULT 0,"
     "  attempts INTEGER NOT NULL DEFAULT 0, next_attempt_ms INTEGER NOT NULL,"
     "  lease_until_ms INTEGER NOT NULL DEFAULT 0, key_seq INTEGER NOT NULL);"
     "INSERT INTO alerts_v2(seq, event_id, watch_id, key_id, watch_type, watch_shown,"
     "  breach_uuid, breach_name, matched, identities, created_at, state, attempts,"
     "  next_attempt_ms, lease_until_ms, key_seq)"
     "  SELECT seq, event_id, watch_id, key_id, watch_type, watch_shown, breach_uuid,"
     "  breach_name, matched, identities, created_at, state, attempts, next_attempt_ms,"
     "  lease_until_ms, seq FROM alerts;"
     "INSERT INTO sqlite_sequence(name, seq) SELECT 'alerts_v2', 0"
     "  WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'alerts_v2');"
     "UPDATE sqlite_sequence SET seq = max(seq, coalesce((SELECT max(seq) FROM sqlite_sequence"
     "  WHERE name = 'alerts'), 0)) WHERE name = 'alerts_v2';"
     "CREATE TABLE IF NOT EXISTS alert_cursors(key_id INTEGER PRIMARY KEY,"
     "  last INTEGER NOT NULL);"
     "INSERT OR IGNORE INTO alert_cursors(key_id, last) SELECT id, (SELECT seq FROM"
     "  sqlite_sequence WHERE name = 'alerts_v2') FROM api_keys;"
     "DROP TABLE alerts;"
     "ALTER TABLE alerts_v2 RENAME TO alerts;"
     "CREATE INDEX alerts_by_key_seq ON alerts(key_id, key_seq);"
     "CREATE INDEX alerts_due ON alerts(next_attempt_ms) WHERE state = 0;"),
    /* (issue 33: tenants, scoped keys, audit trail, lookup log) Tenants and their domains
     * (a domain is one tenant's; store.h "tenants"), each key's tenant (0: none), identity
     * types (a mask, 0: the default), allowed addresses ('' anywhere) and role; the audit
     * trail of admin and breachctl changes; the lookup log, keyed hashes of searched
     * identities (expired by time: the index on at). AUTOINCREMENT: a removed tenant's id
     * is never given again (revoked keys still name it). */
    ("CREATE TABLE IF NOT EXISTS tenants(id INTEGER PRIMARY KEY AUTOINCREMENT,"
     "  name TEXT NOT NULL UNIQUE, created_at INTEGER NOT NULL);"
     "CREATE TABLE IF NOT EXISTS tenant_domains(domain TEXT PRIMARY KEY,"
     "  tenant_id INTEGER NOT NULL);"
     "CREATE INDEX IF NOT EXISTS tenant_domains_by_tenant ON tenant_domains(tenant_id, domain);"
     "ALTER TABLE api_keys ADD COLUMN tenant_id INTEGER NOT NULL DEFAULT 0;"
     "ALTER TABLE api_keys ADD COLUMN types INTEGER NOT NULL DEFAULT 0;"
     "ALTER TABLE api_keys ADD COLUMN allow_ip TEXT NOT NULL DEFAULT '';"
     "ALTER TABLE api_keys ADD COLUMN role INTEGER NOT NULL DEFAULT 0;"
     "CREATE TABLE IF NOT EXISTS audit(id INTEGER PRIMARY KEY AUTOINCREMENT,"
     "  at INTEGER NOT NULL, key_id INTEGER NOT NULL, address TEXT NOT NULL,"
     "  action TEXT NOT NULL, target TEXT NOT NULL, before TEXT, after TEXT);"
     "CREATE TABLE IF NOT EXISTS lookups(at INTEGER NOT NULL, key_id INTEGER NOT NULL,"
     "  type INTEGER NOT NULL, hash BLOB NOT NULL);"
     "CREATE INDEX IF NOT EXISTS lookups_by_hash ON lookups(hash, at);"
     "CREATE INDEX IF NOT EXISTS lookups_by_at ON lookups(at);"),
    /* (issue 34: the console) An alert's triage (store.h bd_alert_triage: 0 new,
     * 1 acknowledged, 2 resolved, 3 false positive), and the console sessions signed out
     * (id: 32 hex characters; until_at: the session's last possible moment, after which the
     * row is forgotten). */
    ("ALTER TABLE alerts ADD COLUMN triage INTEGER NOT NULL DEFAULT 0;"
     "CREATE TABLE IF NOT EXISTS console_signouts(id TEXT PRIMARY KEY,"
     "  until_at INTEGER NOT NULL);"),
    /* (issue 35: alert destinations) What a watch's alerts are sent as (store.h
     * bd_watch_format: 0 the signed JSON of before, 1 Slack, 2 Teams, 3 Splunk HEC, 4 email). */
    ("ALTER TABLE watches ADD COLUMN format INTEGER NOT NULL DEFAULT 0;"),
    /* (issue 35: website of a stealer log) Each record's website host (ingest/website.h),
     * searchable as website_domain; the field takes bd_field 9, so a card BIN watch's type
     * (BD_WATCH_BIN, the field count) moves from 9 to 10, in its watches and alerts. */
    ("ALTER TABLE records ADD COLUMN website_domain TEXT;"
     RECORD_INDEX_BY_WEBSITE
     "UPDATE watches SET type = 10 WHERE type = 9;"
     "UPDATE alerts SET watch_type = 10 WHERE watch_type = 9;"
     /* the records already stored: their other_attributes' "site", in C, in this
      * transaction (store/website_backfill.h) */
     "INSERT OR REPLACE INTO meta(key, value) SELECT 'pending_website_domains', '1'"
     "  WHERE EXISTS (SELECT 1 FROM records);"),
    /* (issue 35: pastes, email range) Pastes and the emails found in them (store/pastes.h),
     * for the HIBP API's pasteaccount: one row per paste, one per email of a paste, looked up
     * by email; and the SHA-1 of every records' email for its breachedaccount/range, which
     * SQL cannot compute: the records already stored are hashed in C, in this transaction
     * (pending_email_hashes, bd_store_email_hashes_note). */
    ("CREATE TABLE IF NOT EXISTS pastes(id INTEGER PRIMARY KEY, source TEXT NOT NULL,"
     "  paste_id TEXT NOT NULL, title TEXT, date INTEGER, email_count INTEGER NOT NULL,"
     "  UNIQUE(source, paste_id));"
     "CREATE TABLE IF NOT EXISTS paste_emails(email TEXT NOT NULL, paste INTEGER NOT NULL,"
     "  PRIMARY KEY(email, paste)) WITHOUT ROWID;"
     "CREATE TABLE IF NOT EXISTS email_hashes(sha1 TEXT PRIMARY KEY, email TEXT NOT NULL)"
     "  WITHOUT ROWID;"
     "INSERT OR REPLACE INTO meta(key, value) VALUES ('pending_email_hashes', '1');"),
    /* (issue 31: scenario 5) owner-word counts per expiry, card_counts kind 2 */
    OWNER_WORD_COUNT_REBUILD,
    /* (issue 31: scenario 5) card_owner_words is keyed by card id, not row id, so that its
     * key is the order of a page sorted by expiry (ties by card id, the order of every card
     * page): a page then reads its own rows and no more, where the cards of the first
     * expiry dates were each read and sorted. The row id stays beside the key, for the
     * page's join to cards. The PostgreSQL store's key is the same since its migration 16.
     * The table is made again in C (cards.c, sq_owner_words_note), only while it is still
     * keyed by row id. */
    ("INSERT OR REPLACE INTO meta(key, value) VALUES ('pending_owner_words_by_card', '1');"),
    /* (issue 32: bulk loads) The records' dedup key as an index of its own, records_key
     * (breach_id, dedup), which a bulk load into an empty table builds by sorting at its end
     * and which serves what records_by_breach served. The table is made again in C
     * (dedup_key.c, sq_dedup_key_note), only while it holds no row. */
    ("INSERT OR REPLACE INTO meta(key, value) VALUES ('pending_records_dedup_index', '1');"),
    /* (issue 31: the lookup log's flush) The lookup log indexed by ten-minute bucket of its
     * time first, then hash: a flush's rows go into the current bucket's part of the index,
     * pages the cache holds, where with the hash first each row was an insert at a random
     * place of an index as large as the whole log, a page read and written for each (20,000
     * rows into a log of 2M: 0.75 s -> 0.07 s). A search by hash visits each bucket present
     * (statements.c, Q_LOOKUP_FIND), both through BD_SQL_LOOKUP_BUCKET (store/sql_common.h). */
    ("CREATE INDEX IF NOT EXISTS lookups_by_bucket ON lookups(" BD_SQL_LOOKUP_BUCKET ", hash, at);"
     "DROP INDEX IF EXISTS lookups_by_hash;"),
};
/* clang-format on */

const int bd_sqlite_migration_count =
    (int)(sizeof bd_sqlite_migrations / sizeof bd_sqlite_migrations[0]);
