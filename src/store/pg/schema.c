/* PostgreSQL schema, one migration per entry: never edit a shipped entry, append a new one.
 * 1-6 are numbered like the SQLite schema's (src/store/sqlite/schema.c); 7 on are what only
 * this store has (the shared rate limits). The meta table's schema_version says how many ran.
 *
 * The tables hold what SQLite's hold (see that file for why the columns look the way they
 * do), in PostgreSQL's types: bigint identity keys, bytea for keyed hashes, and every text
 * column COLLATE "C", so that ordering and ranges compare bytes as SQLite does, whatever
 * locale the database was created with.
 * - The record lookup indexes carry (key, breach_date, id): a search page, newest breach
 *   first and then id descending, is one backward range scan, and the keyset position
 *   (breach_date, id) < (d, i) is a condition on the index itself.
 * - records.breach_id is a real foreign key (SQLite declares it, unenforced): with several
 *   writers, an import must not add records to a breach that an erasure just removed.
 * - Cards keep SQLite's tables, with two differences. card_words stands for SQLite's FTS5
 *   index: each word of a card's owner (col 0) and bank (col 1), split by FTS5's own
 *   tokenizer (pg/cards_sql.c), with its position, so a word is an index lookup, a word
 *   prefix an index range and a phrase a check of positions. cards_by_expire keeps NULL
 *   first, as SQLite orders it, so a page in expiry order can walk it either way. */
#include <stdio.h>
#include <stdlib.h>

#include "store/pg/pg_impl.h"
#include "store/sql_common.h"

#define T "text COLLATE \"C\""

/* clang-format off */
#define RECORD_INDEXES \
    "CREATE INDEX records_by_breach ON records(breach_id);" \
    "CREATE INDEX records_by_email ON records(email, breach_date, id) WHERE email IS NOT NULL;" \
    "CREATE INDEX records_by_domain ON records(email_domain, breach_date, id)" \
    "  WHERE email_domain IS NOT NULL;" \
    "CREATE INDEX records_by_phone ON records(phone_key, breach_date, id)" \
    "  WHERE phone_key IS NOT NULL;" \
    "CREATE INDEX records_by_user ON records(user_name_key, breach_date, id)" \
    "  WHERE user_name_key IS NOT NULL;" \
    "CREATE INDEX records_by_ip ON records(ip_address, breach_date, id)" \
    "  WHERE ip_address IS NOT NULL;" \
    "CREATE INDEX records_by_ssn ON records(ssn_hmac, breach_date, id)" \
    "  WHERE ssn_hmac IS NOT NULL;" \
    "CREATE INDEX records_by_password ON records(password_hmac, breach_date, id)" \
    "  WHERE password_hmac IS NOT NULL;" \
    "CREATE INDEX records_by_hash ON records(password_hash, breach_date, id)" \
    "  WHERE password_hash IS NOT NULL;" \
    "CREATE INDEX records_by_bitcoin ON records(bitcoin_address, breach_date, id)" \
    "  WHERE bitcoin_address IS NOT NULL;"
/* Added by the migration of issue 35 (website of a stealer log), with its column. */
#define RECORD_INDEX_BY_WEBSITE \
    "CREATE INDEX records_by_website ON records(website_domain, breach_date, id)" \
    "  WHERE website_domain IS NOT NULL;"

#define CARD_INDEXES_BY_NUMBER_AND_DATE \
    "CREATE INDEX cards_by_hmac ON cards(number_hmac);" \
    "CREATE INDEX cards_by_bin ON cards(bin, tail, length);" \
    "CREATE INDEX cards_by_tail ON cards(tail, length);" \
    "CREATE INDEX cards_by_created ON cards(created_at, card_id);" \
    "CREATE INDEX cards_by_expire ON cards(expire_date NULLS FIRST, card_id);"
#define CARD_INDEX_BY_LEAK "CREATE INDEX cards_by_leak ON cards(leak_id) WHERE leak_id IS NOT NULL;"
/* The initial schema's: cards_by_cvv indexed the CVVs in clear until the migration that
 * keyed them (cards_by_cvv_hmac) */
#define CARD_INDEXES \
    CARD_INDEXES_BY_NUMBER_AND_DATE \
    "CREATE INDEX cards_by_cvv ON cards(cvv) WHERE cvv IS NOT NULL;" \
    CARD_INDEX_BY_LEAK
#define CARD_INDEX_BY_CVV_HMAC \
    "CREATE INDEX cards_by_cvv_hmac ON cards(cvv_hmac) WHERE cvv_hmac IS NOT NULL;"

/* Added by migration 2 (SQLite's cards_expiry_by_id is not: here card_owner_words counts an
 * owner word within expiry ranges on its own) */
#define CARD_INDEXES_2 \
    "CREATE INDEX cards_by_bin_created ON cards(bin, created_at, card_id);"

#define DOMAIN_COUNT_REBUILD \
    "DELETE FROM domain_counts;" \
    "INSERT INTO domain_counts(domain, n) SELECT email_domain, count(*) FROM records" \
    "  WHERE email_domain IS NOT NULL GROUP BY email_domain;"

/* The owner key of owner.c, over a records row. convert_to gives the UTF-8 bytes that the
 * program hashed (its connections speak UTF-8), whatever the database's encoding. */
#define OWNER_KEY_SQL \
    "encode(substr(sha256(convert_to(CASE" \
    " WHEN email IS NOT NULL THEN 'email:' || email" \
    " WHEN user_name_key IS NOT NULL THEN 'user:' || user_name_key" \
    " WHEN phone_key IS NOT NULL THEN 'phone:' || phone_key" \
    " WHEN ip_address IS NOT NULL THEN 'ip:' || ip_address" \
    " WHEN bitcoin_address IS NOT NULL THEN 'bitcoin:' || bitcoin_address" \
    " WHEN ssn_hmac IS NOT NULL THEN 'ssn:' || encode(ssn_hmac, 'hex')" \
    " WHEN password_hash IS NOT NULL THEN 'hash:' || password_hash" \
    " WHEN password_hmac IS NOT NULL THEN 'password:' || encode(password_hmac, 'hex')" \
    " ELSE 'record:' || encode(dedup, 'hex') END, 'UTF8')), 1, 16), 'hex')::uuid"

static const char *const MIGRATIONS[] = {
    /* 1: the initial schema */
    "CREATE TABLE meta(key " T " PRIMARY KEY, value " T " NOT NULL);"
    "CREATE TABLE breaches("
    "  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
    "  uuid " T " NOT NULL UNIQUE,"
    "  source_name " T " NOT NULL,"
    "  site_domain " T ", date_leaked integer NOT NULL, breach_type " T ","
    "  site_categories " T ", site_country " T ", site_language " T ", password_types " T ","
    "  leaked_data_types " T ", description " T ", service_article_url " T ", site_logo " T ","
    "  pwned_count bigint, pwned_count_derived bigint NOT NULL DEFAULT 0);"
    "CREATE INDEX breaches_by_date ON breaches(date_leaked DESC, source_name);"
    "CREATE TABLE records("
    "  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
    "  breach_id bigint NOT NULL REFERENCES breaches(id),"
    "  breach_date integer NOT NULL,"
    "  user_name " T ", user_name_key " T ", first_name " T ", last_name " T ","
    "  email " T ", email_domain " T ", phone_number " T ", phone_key " T ","
    "  ip_address " T ", bitcoin_address " T ","
    "  password_masked " T ", password_hmac bytea, password_hash " T ","
    "  ssn_masked " T ", ssn_hmac bytea, other_attributes " T ","
    "  severity smallint NOT NULL,"
    "  dedup bytea NOT NULL UNIQUE);"
    RECORD_INDEXES
    "CREATE TABLE cards("
    "  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
    "  card_id " T " NOT NULL UNIQUE,"
    "  created_at " T " NOT NULL, bank " T ","
    "  number_masked " T " NOT NULL, bin " T " NOT NULL, last4 " T " NOT NULL,"
    "  tail " T " NOT NULL, length smallint NOT NULL, number_hmac bytea NOT NULL,"
    "  owner " T ", cvv " T ", expire_date " T ", cvss double precision, leak_id " T ","
    "  leak_name " T ", leak_publish_date " T ", leak_discover_date " T ", leak_size bigint,"
    "  leak_tags " T ");"
    CARD_INDEXES
    "CREATE TABLE card_counts(kind smallint NOT NULL, key " T " NOT NULL, n bigint NOT NULL,"
    "  PRIMARY KEY(kind, key));"
    "CREATE TABLE card_words(col smallint NOT NULL, word " T " NOT NULL, id bigint NOT NULL,"
    "  pos integer NOT NULL, PRIMARY KEY(col, word, id, pos));"
    "CREATE TABLE api_keys("
    "  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
    "  name " T " NOT NULL, hash bytea NOT NULL UNIQUE, plan " T " NOT NULL,"
    "  rate_per_hour bigint NOT NULL, created_at bigint NOT NULL,"
    "  expires_at bigint NOT NULL DEFAULT 0, revoked_at bigint NOT NULL DEFAULT 0);"
    "INSERT INTO meta(key, value) VALUES ('key_generation', '0'), ('data_version', '0');",
    /* 2: BIN pages in date order */
    CARD_INDEXES_2,
    /* 3: owner words with each card's expiry */
    "CREATE TABLE card_owner_words(word " T " NOT NULL, expire_date " T " NOT NULL,"
    "  id bigint NOT NULL, PRIMARY KEY(word, expire_date, id));",
    /* 4: records per email domain */
    "CREATE TABLE domain_counts(domain " T " PRIMARY KEY, n bigint NOT NULL);"
    DOMAIN_COUNT_REBUILD,
    /* 5: a per-key budget of exact card lookups */
    "ALTER TABLE api_keys ADD COLUMN exact_per_day bigint NOT NULL DEFAULT 20;",
    /* 6: no foreign key from records to breaches. The store keeps it true itself, as on
     * SQLite (whose foreign keys are off): a record is put only for a breach it found under
     * the writer lock, and a breach's records are erased in the breach's own transaction.
     * The key's check cost a lookup per record put: 6 of 14 us per record in a bulk load. */
    "ALTER TABLE records DROP CONSTRAINT IF EXISTS records_breach_id_fkey;",
    /* 7: rate-limit buckets that several servers share (breachd --shared-limits; limits.c).
     * Unlogged: a write per lease of requests is the hot path of every server, and the state
     * is worth no WAL. A crash of the primary empties it (every key's budget starts full
     * again), and standbys do not have it; servers reach it on the primary. */
    ("CREATE UNLOGGED TABLE rate_limits(kind smallint NOT NULL, id bigint NOT NULL,"
     "  tat bigint NOT NULL, granted bigint NOT NULL, PRIMARY KEY(id, kind));"),
    /* 8: the schema a Citus cluster can distribute (docs/SCALING.md): every unique key of a
     * distributed table holds its distribution column. Records get their owner key (ok,
     * owner.c) and are keyed by (id, ok) and (ok, dedup): two records with one dedup hash have
     * the same identities, so the same owner key, and the dedup key forbids what it forbade.
     * Cards are keyed by their card id alone; their row id, which the word tables name, keeps
     * an index that does not need to be unique (the identity still hands out each id once). */
    ("ALTER TABLE records ADD COLUMN ok uuid;"
     "UPDATE records SET ok = " OWNER_KEY_SQL ";"
     "ALTER TABLE records ALTER COLUMN ok SET NOT NULL,"
     "  DROP CONSTRAINT records_pkey, ADD PRIMARY KEY (id, ok),"
     "  DROP CONSTRAINT records_dedup_key,"
     "  ADD CONSTRAINT records_dedup_key UNIQUE (ok, dedup);"
     "ALTER TABLE cards DROP CONSTRAINT cards_card_id_key, DROP CONSTRAINT cards_pkey,"
     "  ADD PRIMARY KEY (card_id);"
     "CREATE INDEX cards_by_id ON cards(id);"),
    /* 9: the breach fields of the HIBP API v3, as SQLite's migration 6 (see that file): a
     * Name unique regardless of case, the added and modified times, the flags. Names of the
     * breaches already stored are given in C, in this transaction (pg_migration_notes). */
    ("ALTER TABLE breaches ADD COLUMN name " T ", ADD COLUMN added_at bigint NOT NULL DEFAULT 0,"
     "  ADD COLUMN modified_at bigint NOT NULL DEFAULT 0,"
     "  ADD COLUMN hibp_flags integer NOT NULL DEFAULT 0;"
     "UPDATE breaches SET added_at = extract(epoch FROM now())::bigint,"
     "  modified_at = extract(epoch FROM now())::bigint;"
     "CREATE UNIQUE INDEX breaches_by_name ON breaches(lower(name));"
     "INSERT INTO meta(key, value) VALUES ('pending_breach_names', '1')"
     "  ON CONFLICT (key) DO UPDATE SET value = excluded.value;"),
    /* 10: Pwned Passwords ranges, packed: one row per (mode, 20-bit prefix), the bucket's
     * hashes and counts in one bytea (layout: src/store/ranges.h), so a range request is one
     * primary-key lookup. Stored uncompressed (EXTERNAL): hashes do not compress, and pglz
     * would try on every write. */
    ("CREATE TABLE IF NOT EXISTS password_ranges(bucket integer PRIMARY KEY,"
     "  hashes bytea NOT NULL);"
     "ALTER TABLE password_ranges ALTER COLUMN hashes SET STORAGE EXTERNAL;"),
    /* 11 (usage and quotas): a key's monthly quota (0: none), and its requests per UTC day
     * (period yyyymmdd) and month (period yyyymm). Logged, unlike rate_limits: a month's
     * count must survive a crash of the primary. IF NOT EXISTS: a test winds the schema
     * version back over it to replay an older migration. */
    ("ALTER TABLE api_keys ADD COLUMN IF NOT EXISTS quota_per_month bigint NOT NULL DEFAULT 0;"
     "CREATE TABLE IF NOT EXISTS key_usage(key_id bigint NOT NULL, period integer NOT NULL,"
     "  requests bigint NOT NULL, PRIMARY KEY(key_id, period));"),
    /* 12 (the change log, store.h), as SQLite's migration 9: seeded with what the store
     * holds, only into an empty log (a test replays migrations). */
    ("CREATE TABLE IF NOT EXISTS changes(seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
     "  at bigint NOT NULL, kind smallint NOT NULL, subject " T ", name " T ", n bigint NOT NULL);"
     "INSERT INTO changes(at, kind, subject, name, n) SELECT * FROM ("
     "  SELECT added_at, 1, uuid, NULL, 1::bigint FROM breaches"
     "  UNION ALL SELECT extract(epoch FROM now())::bigint, 4, b.uuid, NULL, c.n"
     "    FROM (SELECT breach_id, count(*) AS n FROM records GROUP BY breach_id) c"
     "    JOIN breaches b ON b.id = c.breach_id"
     "  UNION ALL SELECT extract(epoch FROM now())::bigint, 6, leak_id, leak_name, count(*)"
     "    FROM cards GROUP BY leak_id, leak_name) s WHERE NOT EXISTS (SELECT 1 FROM changes);"),
    /* 13 (watches): an API key's watches and the alerts outbox, as SQLite's migration 10 */
    ("CREATE TABLE IF NOT EXISTS watches(id bigserial PRIMARY KEY, key_id bigint NOT NULL,"
     "  type integer NOT NULL, key text NOT NULL, shown text NOT NULL, url text NOT NULL,"
     "  secret text NOT NULL, created_at bigint NOT NULL, UNIQUE(key_id, type, key, url));"
     "CREATE TABLE IF NOT EXISTS alerts(seq bigserial PRIMARY KEY,"
     "  event_id text NOT NULL UNIQUE, watch_id bigint NOT NULL, key_id bigint NOT NULL,"
     "  watch_type integer NOT NULL, watch_shown text NOT NULL, breach_uuid text,"
     "  breach_name text, matched bigint NOT NULL, identities text NOT NULL,"
     "  created_at bigint NOT NULL, state integer NOT NULL DEFAULT 0,"
     "  attempts bigint NOT NULL DEFAULT 0, next_attempt_ms bigint NOT NULL,"
     "  lease_until_ms bigint NOT NULL DEFAULT 0);"
     "CREATE INDEX IF NOT EXISTS alerts_by_key ON alerts(key_id, seq);"
     "CREATE INDEX IF NOT EXISTS alerts_due ON alerts(next_attempt_ms) WHERE state = 0;"
     "INSERT INTO meta(key, value) VALUES ('watch_generation', '0') ON CONFLICT DO NOTHING;"),
    /* 14 (bulk jobs): as SQLite's migration 11 (see that file). Coordinator-local under
     * Citus, like key_usage: a job is looked up by its id and claimed by a runner, never
     * joined with records. */
    ("CREATE TABLE IF NOT EXISTS jobs(uuid text PRIMARY KEY, key_id bigint NOT NULL,"
     "  type smallint NOT NULL, status smallint NOT NULL, total bigint NOT NULL,"
     "  done bigint NOT NULL DEFAULT 0, chunks bigint NOT NULL, created_at bigint NOT NULL,"
     "  finished_at bigint NOT NULL DEFAULT 0, attempts bigint NOT NULL DEFAULT 0,"
     "  lease bigint NOT NULL DEFAULT 0, lease_until bigint NOT NULL DEFAULT 0);"
     "CREATE INDEX IF NOT EXISTS jobs_waiting ON jobs(status, created_at);"
     "CREATE INDEX IF NOT EXISTS jobs_by_created ON jobs(created_at);"
     "CREATE TABLE IF NOT EXISTS job_chunks(job text NOT NULL, chunk integer NOT NULL,"
     "  inputs bytea NOT NULL, results bytea, PRIMARY KEY(job, chunk));"),
    /* 15 (owner-word counts): card_counts kind 2, a row per owner word and expiry keyed
     * "word expiry", so that an owner word's count within expiry ranges sums some dozens
     * of rows instead of reading each of the word's cards (cards.c, owner_word_count). */
    ("DELETE FROM card_counts WHERE kind = 2;"
     "INSERT INTO card_counts(kind, key, n) SELECT 2, word || ' ' || expire_date, count(*)"
     "  FROM card_owner_words GROUP BY word, expire_date;"),
    /* 16 (routing on Citus, docs/SCALING.md): lookup rows that put each paged search of the
     * benchmark's hot scenarios on one shard. record_domains: a row per record with an email
     * domain, distributed by the domain, naming the record by owner key and id. card_bins: a
     * row per card, distributed by its BIN, naming it by card id. card_owner_words names its
     * cards by card id (their distribution column) instead of row id. Each key holds all a
     * page's step needs (record_domains' includes the owner key and the bits), so a page's
     * ids are read off the index alone once the table is vacuumed. All three are derived
     * from the records and cards, so they are built again from them here (a test replays
     * migrations over an older store). */
    ("DROP TABLE IF EXISTS record_domains;"
     "CREATE TABLE record_domains(domain " T " NOT NULL, ok uuid NOT NULL, id bigint NOT NULL,"
     "  breach_date integer NOT NULL, present smallint NOT NULL,"
     "  PRIMARY KEY(domain, breach_date, id) INCLUDE (ok, present));"
     "INSERT INTO record_domains(domain, ok, id, breach_date, present) SELECT email_domain, ok,"
     "  id, breach_date, " PG_RECORD_PRESENT_SQL_9 " FROM records WHERE email_domain IS NOT NULL;"
     "DROP TABLE IF EXISTS card_bins;"
     "CREATE TABLE card_bins(bin " T " NOT NULL, created_at " T " NOT NULL,"
     "  card_id " T " NOT NULL, PRIMARY KEY(bin, created_at, card_id));"
     "INSERT INTO card_bins(bin, created_at, card_id) SELECT bin, created_at, card_id FROM cards;"
     "DROP TABLE card_owner_words;"
     "CREATE TABLE card_owner_words(word " T " NOT NULL, expire_date " T " NOT NULL,"
     "  card_id " T " NOT NULL, PRIMARY KEY(word, expire_date, card_id));"
     "INSERT INTO card_owner_words(word, expire_date, card_id) SELECT DISTINCT w.word,"
     "  c.expire_date, c.card_id FROM card_words w JOIN cards c ON c.id = w.id"
     "  WHERE w.col = 0 AND c.expire_date IS NOT NULL;"),
    /* 17 (CVVs as secrets), as SQLite's migration 12 (see that file): each card's CVV is its
     * mask in cvv and its keyed hash in cvv_hmac; the CVVs of cards stored before stay in
     * clear until whoever opens the store with the server secret runs bd_store_cvv_upgrade
     * (pg_cvv_upgrade, cvv.c). The note says it waits; the runner takes it away at once,
     * with cards_by_cvv, when no card holds a CVV in clear (pg_migration_notes). IF NOT
     * EXISTS: a test winds the schema version back over it. */
    ("ALTER TABLE cards ADD COLUMN IF NOT EXISTS cvv_hmac bytea;"
     "CREATE INDEX IF NOT EXISTS cards_by_cvv_hmac ON cards(cvv_hmac) WHERE cvv_hmac IS NOT NULL;"
     "INSERT INTO meta(key, value) VALUES ('pending_cvv_hashes', '1')"
     "  ON CONFLICT (key) DO UPDATE SET value = excluded.value;"),
    /* 18 (job limits and turns), as SQLite's migration 13 (see that file). */
    ("ALTER TABLE api_keys ADD COLUMN IF NOT EXISTS max_jobs bigint NOT NULL DEFAULT 0;"
     "ALTER TABLE api_keys ADD COLUMN IF NOT EXISTS max_queued_identities bigint NOT NULL"
     "  DEFAULT 0;"
     "ALTER TABLE api_keys ADD COLUMN IF NOT EXISTS max_result_rows bigint NOT NULL DEFAULT 0;"
     "ALTER TABLE jobs ADD COLUMN IF NOT EXISTS result_rows bigint NOT NULL DEFAULT 0;"
     "ALTER TABLE jobs ADD COLUMN IF NOT EXISTS truncated bigint NOT NULL DEFAULT 0;"
     "ALTER TABLE jobs ADD COLUMN IF NOT EXISTS served bigint NOT NULL DEFAULT 0;"
     "CREATE INDEX IF NOT EXISTS jobs_by_key ON jobs(key_id, served);"),
    /* 19 (alert cursors per key), as SQLite's migration 14 (see that file): alerts.key_seq,
     * the next of the key's row in alert_cursors (coordinator-local, like alerts); alerts
     * stored before keep their cursor (seq), and every key goes on from the outbox
     * sequence's last value. IF NOT EXISTS: replayable. */
    ("ALTER TABLE alerts ADD COLUMN IF NOT EXISTS key_seq bigint NOT NULL DEFAULT 0;"
     "UPDATE alerts SET key_seq = seq WHERE key_seq = 0;"
     "CREATE TABLE IF NOT EXISTS alert_cursors(key_id bigint PRIMARY KEY, last bigint NOT NULL);"
     "INSERT INTO alert_cursors(key_id, last) SELECT id, (SELECT last_value FROM alerts_seq_seq)"
     "  FROM api_keys ON CONFLICT DO NOTHING;"
     "DROP INDEX IF EXISTS alerts_by_key;"
     "CREATE INDEX IF NOT EXISTS alerts_by_key_seq ON alerts(key_id, key_seq);"),
    /* (issue 33: tenants, scoped keys, audit trail, lookup log), as SQLite's migration of
     * the same name (see that file). Identity columns: ids are never given twice. IF NOT
     * EXISTS: replayable. */
    ("CREATE TABLE IF NOT EXISTS tenants(id bigint GENERATED BY DEFAULT AS IDENTITY"
     "  PRIMARY KEY, name " T " NOT NULL UNIQUE, created_at bigint NOT NULL);"
     "CREATE TABLE IF NOT EXISTS tenant_domains(domain " T " PRIMARY KEY,"
     "  tenant_id bigint NOT NULL);"
     "CREATE INDEX IF NOT EXISTS tenant_domains_by_tenant ON tenant_domains(tenant_id, domain);"
     "ALTER TABLE api_keys ADD COLUMN IF NOT EXISTS tenant_id bigint NOT NULL DEFAULT 0;"
     "ALTER TABLE api_keys ADD COLUMN IF NOT EXISTS types bigint NOT NULL DEFAULT 0;"
     "ALTER TABLE api_keys ADD COLUMN IF NOT EXISTS allow_ip " T " NOT NULL DEFAULT '';"
     "ALTER TABLE api_keys ADD COLUMN IF NOT EXISTS role integer NOT NULL DEFAULT 0;"
     "CREATE TABLE IF NOT EXISTS audit(id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,"
     "  at bigint NOT NULL, key_id bigint NOT NULL, address " T " NOT NULL,"
     "  action " T " NOT NULL, target " T " NOT NULL, before text, after text);"
     "CREATE TABLE IF NOT EXISTS lookups(at bigint NOT NULL, key_id bigint NOT NULL,"
     "  type integer NOT NULL, hash bytea NOT NULL);"
     "CREATE INDEX IF NOT EXISTS lookups_by_hash ON lookups(hash, at);"
     "CREATE INDEX IF NOT EXISTS lookups_by_at ON lookups(at);"),
    /* (issue 34: the console) as SQLite's migration of the same name: an alert's triage and
     * the console sessions signed out. */
    ("ALTER TABLE alerts ADD COLUMN IF NOT EXISTS triage integer NOT NULL DEFAULT 0;"
     "CREATE TABLE IF NOT EXISTS console_signouts(id " T " PRIMARY KEY,"
     "  until_at bigint NOT NULL);"),
    /* (issue 35: alert destinations) as SQLite's migration of the same name: what a watch's
     * alerts are sent as. */
    ("ALTER TABLE watches ADD COLUMN IF NOT EXISTS format integer NOT NULL DEFAULT 0;"),
    /* (issue 35: website of a stealer log) as SQLite's migration of the same name: each
     * record's website host, its index, and card BIN watches' type moved from 9 to 10. */
    ("ALTER TABLE records ADD COLUMN IF NOT EXISTS website_domain " T ";"
     "CREATE INDEX IF NOT EXISTS records_by_website ON records(website_domain, breach_date, id)"
     "  WHERE website_domain IS NOT NULL;"
     "UPDATE watches SET type = 10 WHERE type = 9;"
     "UPDATE alerts SET watch_type = 10 WHERE watch_type = 9;"
     /* the records already stored: their other_attributes' "site", in C, in this
      * transaction (store/website_backfill.h; their record_domains bit 9 with it) */
     "INSERT INTO meta(key, value) SELECT 'pending_website_domains', '1'"
     "  WHERE EXISTS (SELECT 1 FROM records)"
     "  ON CONFLICT (key) DO UPDATE SET value = excluded.value;"),
    /* (issue 35: pastes, email range) as SQLite's migration of the same name: pastes and
     * their emails, and the SHA-1 of records' emails, those already stored hashed in C in
     * this transaction (pending_email_hashes, pg_migration_notes). */
    ("CREATE TABLE IF NOT EXISTS pastes(id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
     "  source " T " NOT NULL, paste_id " T " NOT NULL, title " T ", date bigint,"
     "  email_count bigint NOT NULL, UNIQUE(source, paste_id));"
     "CREATE TABLE IF NOT EXISTS paste_emails(email " T " NOT NULL, paste bigint NOT NULL,"
     "  PRIMARY KEY(email, paste));"
     "CREATE TABLE IF NOT EXISTS email_hashes(sha1 " T " PRIMARY KEY, email " T " NOT NULL);"
     "INSERT INTO meta(key, value) VALUES ('pending_email_hashes', '1')"
     "  ON CONFLICT (key) DO UPDATE SET value = excluded.value;"),
    /* (issue 31: scenario 5) each count in card_counts' key: an owner word's count within
     * expiry ranges sums a row per expiry date (162 for one word and year at 1M cards),
     * which the key now answers alone (an index-only scan once vacuumed) instead of one
     * heap visit per row. PostgreSQL alone ran the scenario-5 statement 13,030-14,571
     * times a second before, 17,548-17,855 after (pgbench -M prepared, 2 clients). The key
     * columns, and so ON CONFLICT (kind, key), are unchanged. As on SQLite, whose
     * card_counts is keyed WITHOUT ROWID and holds n in the key's own rows already. Two
     * statements: Citus refuses an ADD CONSTRAINT beside another subcommand. */
    ("ALTER TABLE card_counts DROP CONSTRAINT card_counts_pkey;"
     "ALTER TABLE card_counts ADD PRIMARY KEY (kind, key) INCLUDE (n);"),
    /* (issue 31: the lookup log's flush) as SQLite's migration of the same name: the lookup
     * log indexed by ten-minute bucket of its time, then hash, so that a flush's rows go
     * into the current bucket's part of the index instead of one random leaf each (audit.c,
     * LOOKUP_FIND, visits each bucket present). */
    ("CREATE INDEX IF NOT EXISTS lookups_by_bucket ON lookups(" BD_SQL_LOOKUP_BUCKET ", hash, at);"
     "DROP INDEX IF EXISTS lookups_by_hash;"),
};
/* clang-format on */

#define MIGRATION_COUNT ((int)(sizeof MIGRATIONS / sizeof MIGRATIONS[0]))

const char *const pg_record_indexes = RECORD_INDEXES RECORD_INDEX_BY_WEBSITE;
/* The card indexes as they are now, which a bulk load drops and builds again */
const char *const pg_card_indexes =
    CARD_INDEXES_BY_NUMBER_AND_DATE CARD_INDEX_BY_LEAK CARD_INDEXES_2 CARD_INDEX_BY_CVV_HMAC;
const char *const pg_owner_key_sql = OWNER_KEY_SQL;

/* The schema version: 0 when there is no meta table yet. */
static bd_result schema_version(pg_store *p, int *v)
{
    PGresult *res;
    bd_result r = pg_run_sql(p, "SELECT to_regclass('meta') IS NOT NULL", NULL, false, &res);
    if (r != BD_OK)
        return r;
    bool has_meta = PQntuples(res) == 1 && PQgetvalue(res, 0, 0)[0] == 't';
    PQclear(res);
    *v = 0;
    if (!has_meta)
        return BD_OK;
    r = pg_run_sql(p, "SELECT value FROM meta WHERE key = 'schema_version'", NULL, false, &res);
    if (r != BD_OK)
        return r;
    *v = PQntuples(res) == 1 ? (int)pg_int(res, 0, 0) : -1; /* a meta table, not ours */
    PQclear(res);
    return BD_OK;
}

/* Runs migrations from the version found up to the newest, in one transaction: a failure
 * leaves the schema as it was. pg_begin's writer lock serialises processes that open a new
 * store at the same time; the version is read again under it. */
static bd_result upgrade(pg_store *p, bool create, char *why, size_t whylen)
{
    bd_result r = pg_begin(&p->base);
    /* on Citus, writes over one connection per worker, so a migration may read what it
     * changed (the session's own settings come after the migrations) */
    if (r == BD_OK && p->citus)
        r = pg_exec(p, "SET LOCAL citus.multi_shard_modify_mode = 'sequential'");
    int v = 0;
    if (r == BD_OK)
        r = schema_version(p, &v); /* again: another process may have migrated meanwhile */
    if (r == BD_OK && v == 0 && !create)
        r = BD_ERR_NOT_FOUND;
    if (r == BD_OK && (v < 0 || v > MIGRATION_COUNT)) {
        bd_why(why, whylen, "the store's schema version %d is not one this program knows", v);
        r = BD_ERR_STORE;
    }
    for (; r == BD_OK && v < MIGRATION_COUNT; v++) {
        char set[160];
        snprintf(set, sizeof set,
                 "INSERT INTO meta(key, value) VALUES ('schema_version', '%d') "
                 "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                 v + 1);
        r = pg_exec(p, MIGRATIONS[v]); /* on Citus statement by statement (pg_exec) */
        if (r == BD_OK)
            r = pg_migration_notes(p);
        if (r == BD_OK)
            r = pg_exec(p, set);
        if (r != BD_OK)
            bd_why(why, whylen, "schema migration %d failed", v + 1);
    }
    if (r == BD_OK)
        return pg_commit(&p->base);
    pg_rollback(&p->base);
    return r;
}

/* A hot standby: its schema changes only by replaying its primary's. */
static bool in_recovery(pg_store *p)
{
    PGresult *res;
    if (pg_run_sql(p, "SELECT pg_is_in_recovery()", NULL, false, &res) != BD_OK)
        return false;
    bool yes = PQntuples(res) == 1 && PQgetvalue(res, 0, 0)[0] == 't';
    PQclear(res);
    return yes;
}

bd_result pg_migrate(pg_store *p, bool create, const char *shown_uri, char *why, size_t whylen)
{
    int v;
    bd_result r = schema_version(p, &v);
    if (r == BD_OK && v == MIGRATION_COUNT)
        return BD_OK; /* the common case: nothing to lock, nothing to change */
    if (r == BD_OK && v == 0 && !create)
        r = BD_ERR_NOT_FOUND;
    if (r == BD_OK && v > 0 && v < MIGRATION_COUNT && in_recovery(p)) {
        bd_why(why, whylen,
               "the store at %s has schema version %d and this program needs %d; it is a "
               "read-only standby, which follows its primary: upgrade the primary first "
               "(breachctl init --db PRIMARY_URI --secret FILE)",
               shown_uri, v, MIGRATION_COUNT);
        return BD_ERR_STORE;
    }
    if (r == BD_OK)
        r = upgrade(p, create, why, whylen);
    if (r == BD_ERR_NOT_FOUND)
        bd_why(why, whylen, "%s holds no breachd store; run 'breachctl init --db %s'", shown_uri,
               shown_uri);
    else if (r != BD_OK && why && whylen && !why[0])
        bd_why(why, whylen, "cannot read the store's schema version at %s", shown_uri);
    return r;
}
