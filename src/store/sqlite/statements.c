/* The SQLite backend's statements: the SQL of the fixed ones, prepared once per connection,
 * the per-connection cache of generated search SQL, and running them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "store/sql_common.h"
#include "store/sqlite/statements.h"

/* The breach columns every breach-returning query selects, in bd_breach_row order. */
#define BREACH_COLS BD_SQL_BREACH_COLS

static const char *const FIXED_SQL[Q__COUNT] = {
    [Q_META_GET] = "SELECT value FROM meta WHERE key = ?1",
    [Q_META_SET] = "INSERT INTO meta(key, value) VALUES (?1, ?2) "
                   "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
    [Q_BEGIN] = "BEGIN IMMEDIATE",
    [Q_BEGIN_READ] = "BEGIN DEFERRED",
    [Q_OTHERS_VERSION] = "PRAGMA data_version",
    [Q_COMMIT] = "COMMIT",
    [Q_ROLLBACK] = "ROLLBACK",
    [Q_PING] = "SELECT count(*) FROM meta", /* reads the file: SELECT 1 would not */
    [Q_BREACH_PUT] =
        "INSERT INTO breaches(uuid, source_name, site_domain, breach_type, site_categories, "
        "site_country, site_language, password_types, leaked_data_types, description, "
        "service_article_url, site_logo, date_leaked, pwned_count, name, added_at, modified_at, "
        "hibp_flags) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18) "
        "ON CONFLICT(uuid) DO NOTHING",
    [Q_BREACH_LIST] = "SELECT " BREACH_COLS " FROM breaches b "
                      "ORDER BY b.date_leaked DESC, b.source_name, b.uuid",
    [Q_BREACH_LIST_LIMIT] = "SELECT " BREACH_COLS " FROM breaches b "
                            "ORDER BY b.date_leaked DESC, b.source_name, b.uuid LIMIT ?1",
    [Q_BREACH_GET] = "SELECT " BREACH_COLS " FROM breaches b WHERE b.uuid = ?1",
    [Q_BREACH_BY_ID] = "SELECT " BREACH_COLS " FROM breaches b WHERE b.id = ?1",
    [Q_BREACH_ID] = "SELECT id, date_leaked FROM breaches WHERE uuid = ?1",
    [Q_BREACH_REFRESH] =
        "UPDATE breaches SET pwned_count_derived = (SELECT count(DISTINCT coalesce(email, "
        "user_name_key, phone_key, ip_address, bitcoin_address, hex(ssn_hmac), "
        "password_hash)) FROM records WHERE breach_id = breaches.id) "
        "WHERE uuid = ?1 AND pwned_count IS NULL", /* an imported count is what is shown */
    [Q_BREACH_NAME_TAKEN] = "SELECT 1 FROM breaches WHERE name = ?1 COLLATE NOCASE",
    [Q_BREACH_UNNAMED] = "SELECT id, source_name FROM breaches WHERE name IS NULL AND id > ?1 "
                         "ORDER BY id LIMIT 1",
    [Q_BREACH_SET_NAME] = "UPDATE breaches SET name = ?2 WHERE id = ?1",
    [Q_BREACH_BY_NAME] = "SELECT " BREACH_COLS " FROM breaches b WHERE b.name = ?1 COLLATE NOCASE",
    /* the email's records through records_by_email, then each of their breaches once */
    [Q_BREACHES_OF_EMAIL] = "SELECT " BREACH_COLS " FROM breaches b WHERE b.id IN "
                            "(SELECT breach_id FROM records WHERE email = ?1) ORDER BY b.name",
    /* the domain's records through records_by_domain, at most ?2 of them */
    [Q_DOMAIN_BREACHES] = "SELECT r.email, b.name FROM (SELECT email, breach_id FROM records "
                          "WHERE email_domain = ?1 AND email IS NOT NULL LIMIT ?2) r "
                          "JOIN breaches b ON b.id = r.breach_id "
                          "GROUP BY r.email, b.name ORDER BY r.email, b.name",
    [Q_META_DELETE] = "DELETE FROM meta WHERE key = ?1",
    [Q_RECORD_PUT] =
        "INSERT INTO records(breach_id, breach_date, user_name, user_name_key, first_name, "
        "last_name, email, email_domain, phone_number, phone_key, ip_address, bitcoin_address, "
        "password_masked, password_hmac, password_hash, ssn_masked, ssn_hmac, "
        "other_attributes, severity, dedup, website_domain) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, "
        "?18, ?19, ?20, ?21) ON CONFLICT DO NOTHING",
    [Q_CARD_PUT] =
        "INSERT INTO cards(card_id, created_at, bank, number_masked, bin, last4, tail, length, "
        "number_hmac, owner, cvv, expire_date, cvss, leak_id, leak_name, leak_publish_date, "
        "leak_discover_date, leak_size, leak_tags, cvv_hmac) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, "
        "?18, ?19, ?20) ON CONFLICT(card_id) DO NOTHING",
    [Q_CARD_WORDS_PUT] = "INSERT INTO cards_words(rowid, owner, bank) VALUES (?1, ?2, ?3)",
    [Q_CARD_OWNER_WORD_PUT] = "INSERT OR IGNORE INTO card_owner_words(word, expire_date, "
                              "card_id, id) VALUES (?1, ?2, ?3, ?4)",
    /* a bulk card load's owner words, in put order (conn.c: sq_bulk_begin and _end) */
    [Q_CARD_OWNER_WORD_STAGE] = "INSERT INTO temp.owner_words_staged(word, expire_date, "
                                "card_id, id) VALUES (?1, ?2, ?3, ?4)",
    [Q_CARD_COUNT_ADD] = "INSERT INTO card_counts(kind, key, n) VALUES (?1, ?2, ?3) "
                         "ON CONFLICT(kind, key) DO UPDATE SET n = n + excluded.n",
    [Q_CARD_COUNT_SUM] = "SELECT coalesce(sum(n), 0) FROM card_counts "
                         "WHERE kind = ?1 AND key >= ?2 AND key < ?3",
    /* nothing goes in when tenant ?12 (not 0) does not exist */
    [Q_KEY_ADD] = "INSERT INTO api_keys(name, hash, plan, rate_per_hour, created_at, "
                  "expires_at, exact_per_day, quota_per_month, max_jobs, "
                  "max_queued_identities, max_result_rows, tenant_id, types, allow_ip, role) "
                  "SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15 "
                  "WHERE ?12 = 0 OR EXISTS (SELECT 1 FROM tenants WHERE id = ?12)",
#define KEY_COLS "id, name, hash, plan, rate_per_hour, created_at, expires_at, revoked_at, " \
                 "exact_per_day, quota_per_month, max_jobs, max_queued_identities, "     \
                 "max_result_rows, tenant_id, types, allow_ip, role"
    [Q_KEY_LIST] = "SELECT " KEY_COLS " FROM api_keys ORDER BY id",
    [Q_KEY_GET] = "SELECT " KEY_COLS " FROM api_keys WHERE id = ?1",
#undef KEY_COLS
    [Q_KEY_SET_QUOTA] = "UPDATE api_keys SET quota_per_month = ?2 "
                        "WHERE id = ?1 AND revoked_at = 0",
    /* a limit below 0 stays as it is */
    [Q_KEY_SET_JOB_LIMITS] = "UPDATE api_keys SET "
                             "max_jobs = CASE WHEN ?2 < 0 THEN max_jobs ELSE ?2 END, "
                             "max_queued_identities = CASE WHEN ?3 < 0 "
                             "THEN max_queued_identities ELSE ?3 END, "
                             "max_result_rows = CASE WHEN ?4 < 0 THEN max_result_rows ELSE ?4 END "
                             "WHERE id = ?1 AND revoked_at = 0",
    /* ?1 key, ?2 month, ?3 count, ?4 quota (0: none): no row back when the quota refuses */
    [Q_USAGE_MONTH] = "INSERT INTO key_usage(key_id, period, requests) "
                      "SELECT ?1, ?2, ?3 WHERE ?4 = 0 OR ?3 <= ?4 "
                      "ON CONFLICT(key_id, period) DO UPDATE SET requests = requests + ?3 "
                      "WHERE ?4 = 0 OR requests + ?3 <= ?4 RETURNING requests",
    [Q_USAGE_DAY] = "INSERT INTO key_usage(key_id, period, requests) VALUES (?1, ?2, ?3) "
                    "ON CONFLICT(key_id, period) DO UPDATE SET requests = requests + ?3",
    [Q_USAGE_GIVE_BACK] = "UPDATE key_usage SET requests = max(0, requests - ?4) "
                          "WHERE key_id = ?1 AND period IN (?2, ?3)",
    [Q_USAGE_GET] = "SELECT coalesce(max(CASE WHEN period = ?2 THEN requests END), 0), "
                    "coalesce(max(CASE WHEN period = ?3 THEN requests END), 0) "
                    "FROM key_usage WHERE key_id = ?1 AND period IN (?2, ?3)",
    [Q_KEY_REVOKE] = "UPDATE api_keys SET revoked_at = ?2 WHERE id = ?1 AND revoked_at = 0",
    [Q_KEY_BUMP] = "UPDATE meta SET value = CAST(value AS INTEGER) + 1 "
                   "WHERE key = 'key_generation'",
    [Q_STATS] = "SELECT b.uuid, b.source_name, "
                "(SELECT count(*) FROM records r WHERE r.breach_id = b.id), "
                "coalesce(b.pwned_count, b.pwned_count_derived) FROM breaches b "
                "ORDER BY b.date_leaked DESC, b.source_name, b.uuid",
    [Q_COUNT_RECORDS] = "SELECT count(*) FROM records",
    [Q_DOMAIN_COUNT] = "SELECT n FROM domain_counts WHERE domain = ?1",
    [Q_DOMAIN_COUNT_ADD] = "INSERT INTO domain_counts(domain, n) VALUES (?1, 1) "
                           "ON CONFLICT(domain) DO UPDATE SET n = n + 1",
    /* run before the records go: takes their number off each of their domains */
    [Q_ERASE_EMAIL_DOMAINS] = "UPDATE domain_counts SET n = domain_counts.n - gone.n FROM ("
                              "  SELECT email_domain AS domain, count(*) AS n FROM records"
                              "  WHERE email = ?1 AND email_domain IS NOT NULL GROUP BY 1) AS gone "
                              "WHERE domain_counts.domain = gone.domain",
    [Q_ERASE_BREACH_DOMAINS] = "UPDATE domain_counts SET n = domain_counts.n - gone.n FROM ("
                               "  SELECT email_domain AS domain, count(*) AS n FROM records"
                               "  WHERE breach_id = (SELECT id FROM breaches WHERE uuid = ?1)"
                               "  AND email_domain IS NOT NULL GROUP BY 1) AS gone "
                               "WHERE domain_counts.domain = gone.domain",
    [Q_ERASE_EMAIL_BREACHES] = "SELECT b.uuid, b.source_name, count(*), 0 FROM records r "
                               "JOIN breaches b ON b.id = r.breach_id WHERE r.email = ?1 "
                               "GROUP BY b.id ORDER BY b.date_leaked DESC, b.source_name",
    [Q_ERASE_EMAIL] = "DELETE FROM records WHERE email = ?1",
    /* the SHA-1s of the breach's emails that no other breach holds (email_hashes keeps the
     * address beside its hash, for the range's breach names): before the records go */
    [Q_ERASE_BREACH_EMAIL_HASHES] =
        "DELETE FROM email_hashes WHERE email IN (SELECT r.email FROM records r"
        "  WHERE r.breach_id = (SELECT id FROM breaches WHERE uuid = ?1) AND r.email IS NOT NULL"
        "  AND NOT EXISTS (SELECT 1 FROM records o WHERE o.email = r.email"
        "    AND o.breach_id <> r.breach_id))",
    [Q_ERASE_BREACH_RECORDS] = "DELETE FROM records WHERE breach_id = "
                               "(SELECT id FROM breaches WHERE uuid = ?1)",
    [Q_ERASE_BREACH] = "DELETE FROM breaches WHERE uuid = ?1",
    [Q_COUNT_CARDS] = "SELECT count(*) FROM cards",
    [Q_MAX_CARD] = "SELECT coalesce(max(id), 0) FROM cards",
    [Q_RANGE_GET] = "SELECT hashes FROM password_ranges WHERE bucket = ?1",
    [Q_RANGE_PUT] = "INSERT OR REPLACE INTO password_ranges(bucket, hashes) VALUES (?1, ?2)",
    [Q_MAX_RECORD] = "SELECT coalesce(max(id), 0) FROM records",
    [Q_CHANGE_ADD] = "INSERT INTO changes(at, kind, subject, name, n) "
                     "SELECT ?1, ?2, uuid, NULL, ?4 FROM breaches WHERE uuid = ?3",
    [Q_CHANGES_RECORDS] = "INSERT INTO changes(at, kind, subject, name, n) "
                          "SELECT ?1, 4, b.uuid, NULL, c.n FROM (SELECT breach_id, "
                          "count(*) AS n FROM records WHERE id > ?2 GROUP BY breach_id) c "
                          "JOIN breaches b ON b.id = c.breach_id ORDER BY b.id",
    [Q_CHANGES_CARDS] = "INSERT INTO changes(at, kind, subject, name, n) "
                        "SELECT ?1, 6, leak_id, leak_name, count(*) FROM cards WHERE id > ?2 "
                        "GROUP BY leak_id, leak_name",
    [Q_CHANGE_CARDS_ADD] = "INSERT INTO changes(at, kind, subject, name, n) "
                           "VALUES (?1, 6, ?2, ?3, ?4)",
    [Q_CHANGE_BREACH] = "INSERT INTO changes(at, kind, subject, name, n) "
                        "SELECT ?1, 2, uuid, NULL, "
                        "coalesce(pwned_count, pwned_count_derived) FROM breaches WHERE uuid = ?2",
    [Q_CHANGES_ERASE_EMAIL] = "INSERT INTO changes(at, kind, subject, name, n) "
                              "SELECT ?1, 5, b.uuid, NULL, count(*) FROM records r "
                              "JOIN breaches b ON b.id = r.breach_id WHERE r.email = ?2 "
                              "GROUP BY b.id ORDER BY b.date_leaked DESC, b.source_name",
    [Q_CHANGES_LIST] = "SELECT c.seq, c.at, c.kind, c.subject, CASE c.kind WHEN 6 THEN c.name "
                       "ELSE b.source_name END, c.n FROM changes c LEFT JOIN breaches b "
                       "ON c.kind <> 6 AND b.uuid = c.subject WHERE c.seq > ?1 ORDER BY c.seq "
                       "LIMIT ?2",
    [Q_BREACH_COUNT] = "SELECT coalesce(pwned_count, pwned_count_derived) FROM breaches "
                       "WHERE uuid = ?1",
    [Q_BREACH_SET_COUNT] = "UPDATE breaches SET pwned_count_derived = ?2 "
                           "WHERE uuid = ?1 AND pwned_count IS NULL",
    /* both off the index led by breach_id (records_key, or records_by_breach in stores
     * loaded before it: dedup_key.c): a count of index entries, no record read */
    [Q_BREACH_RECORDS] = "SELECT count(*), coalesce(min(id), 0) FROM records "
                         "WHERE breach_id = (SELECT id FROM breaches WHERE uuid = ?1)",
    [Q_RECORDS_LAST_ID] = "SELECT coalesce(max(id), 0) FROM records",
    [Q_CHANGE_VERSION] = "SELECT coalesce(max(seq), 0) FROM changes",
    [Q_STATUS] = "SELECT coalesce(max(seq), 0), coalesce(max(at), 0), "
                 "coalesce(max(CASE WHEN kind IN (4, 6) THEN at END), 0), "
                 "(SELECT count(*) FROM breaches), "
                 "coalesce(sum(CASE kind WHEN 4 THEN n WHEN 3 THEN -n WHEN 5 THEN -n END), 0), "
                 "coalesce(sum(CASE kind WHEN 6 THEN n END), 0) FROM changes",
    [Q_JOB_PUT] = "INSERT INTO jobs(uuid, key_id, type, status, total, chunks, created_at) "
                  "VALUES (?1, ?2, ?3, 0, ?4, ?5, ?6)",
    [Q_JOB_CHUNK_PUT] = "INSERT INTO job_chunks(job, chunk, inputs) VALUES (?1, ?2, ?3)",
#define JOB_COLS "uuid, key_id, type, status, total, done, chunks, created_at, finished_at, " \
                 "attempts, lease, result_rows, truncated"
    [Q_JOB_GET] = "SELECT " JOB_COLS " FROM jobs WHERE uuid = ?1 AND key_id = ?2",
    /* of the waiting jobs (queued, yielded, or whose runner's lease ran out: ?1 now), the
     * oldest of the key served least recently; a yielded job (running, no lease) is taken
     * back without counting an attempt */
    [Q_JOB_CLAIM] = "UPDATE jobs SET status = 1, lease = ?2, lease_until = ?1 + ?3, "
                    "attempts = attempts + (status <> 1 OR lease <> 0), "
                    "served = (SELECT coalesce(max(served), 0) + 1 FROM jobs) "
                    "WHERE uuid = (SELECT uuid FROM jobs j WHERE "
                    "status = 0 OR (status = 1 AND lease_until < ?1) ORDER BY "
                    "(SELECT max(served) FROM jobs k WHERE k.key_id = j.key_id), created_at, uuid "
                    "LIMIT 1) RETURNING " JOB_COLS,
    [Q_JOB_YIELD] = "UPDATE jobs SET lease = 0, lease_until = 0 "
                    "WHERE uuid = ?1 AND lease = ?2 AND status = 1",
    /* ?1 key: its jobs queued or running, their identities not looked up, its rows */
    [Q_JOB_USAGE] = "SELECT coalesce(sum(status IN (0, 1)), 0), "
                    "coalesce(sum(CASE WHEN status IN (0, 1) THEN total - done END), 0), "
                    "coalesce(sum(result_rows), 0), coalesce(min(created_at), 0) FROM jobs "
                    "WHERE key_id = ?1",
    /* the same for the key of job ?1 */
    [Q_JOB_USAGE_OF] = "SELECT coalesce(sum(status IN (0, 1)), 0), "
                       "coalesce(sum(CASE WHEN status IN (0, 1) THEN total - done END), 0), "
                       "coalesce(sum(result_rows), 0), coalesce(min(created_at), 0) FROM jobs "
                       "WHERE key_id = "
                       "(SELECT key_id FROM jobs WHERE uuid = ?1)",
    [Q_JOB_NEXT_CHUNK] = "SELECT chunk, inputs FROM job_chunks WHERE job = ?1 AND chunk >= ?2 AND results IS NULL "
                         "ORDER BY chunk LIMIT 1",
    /* the inputs go: nothing reads them once the results are there */
    [Q_JOB_CHUNK_RESULTS] = "UPDATE job_chunks SET results = ?3, inputs = x'' "
                            "WHERE job = ?1 AND chunk = ?2 AND results IS NULL",
    [Q_JOB_PROGRESS] = "UPDATE jobs SET done = done + ?3, lease_until = ?4, "
                       "result_rows = result_rows + ?5, truncated = truncated + ?6 "
                       "WHERE uuid = ?1 AND lease = ?2 AND status = 1",
    [Q_JOB_FINISH] = "UPDATE jobs SET status = ?3, finished_at = ?4 "
                     "WHERE uuid = ?1 AND lease = ?2 AND status = 1",
    [Q_JOB_RESULT] = "SELECT results FROM job_chunks WHERE job = ?1 AND chunk = ?2 "
                     "AND results IS NOT NULL",
    [Q_JOB_EXPIRE_CHUNKS] = "DELETE FROM job_chunks WHERE job IN "
                            "(SELECT uuid FROM jobs WHERE created_at < ?1)",
    [Q_JOB_EXPIRE] = "DELETE FROM jobs WHERE created_at < ?1",
    /* tenants.c: each field changes when its flag (?2, ?4, ...) is 1 */
    [Q_KEY_CHANGE] = "UPDATE api_keys SET "
                     "name = CASE WHEN ?2 = 1 THEN ?3 ELSE name END, "
                     "plan = CASE WHEN ?4 = 1 THEN ?5 ELSE plan END, "
                     "rate_per_hour = CASE WHEN ?6 = 1 THEN ?7 ELSE rate_per_hour END, "
                     "quota_per_month = CASE WHEN ?8 = 1 THEN ?9 ELSE quota_per_month END, "
                     "types = CASE WHEN ?10 = 1 THEN ?11 ELSE types END, "
                     "allow_ip = CASE WHEN ?12 = 1 THEN ?13 ELSE allow_ip END, "
                     "expires_at = CASE WHEN ?14 = 1 THEN ?15 ELSE expires_at END "
                     "WHERE id = ?1 AND revoked_at = 0",
    /* no row goes in (nothing changed) when the name is taken */
    [Q_TENANT_ADD] = "INSERT INTO tenants(name, created_at) VALUES (?1, ?2) "
                     "ON CONFLICT(name) DO NOTHING",
    [Q_TENANT_LIST] = "SELECT id, name, created_at FROM tenants ORDER BY id",
    [Q_TENANT_GET] = "SELECT id, name, created_at FROM tenants WHERE id = ?1",
    [Q_TENANT_RENAME] = "UPDATE OR IGNORE tenants SET name = ?2 WHERE id = ?1",
    [Q_TENANT_KEYS] = "SELECT count(*) FROM api_keys WHERE tenant_id = ?1 AND revoked_at = 0",
    [Q_TENANT_REMOVE] = "DELETE FROM tenants WHERE id = ?1",
    [Q_TENANT_DOMAINS_DROP] = "DELETE FROM tenant_domains WHERE tenant_id = ?1",
    /* the domains equal to ?1, a parent of it, or under it: whose they are, and whether equal */
    [Q_DOMAIN_CLASH] = "SELECT tenant_id, domain = ?1 FROM tenant_domains WHERE domain = ?1 "
                       "OR substr(?1, -length(domain) - 1) = '.' || domain "
                       "OR substr(domain, -length(?1) - 1) = '.' || ?1",
    [Q_DOMAIN_ADD] = "INSERT INTO tenant_domains(domain, tenant_id) VALUES (?1, ?2)",
    [Q_DOMAIN_REMOVE] = "DELETE FROM tenant_domains WHERE domain = ?1 AND tenant_id = ?2",
    [Q_DOMAINS_OF] = "SELECT tenant_id, domain FROM tenant_domains WHERE tenant_id = ?1 "
                     "ORDER BY domain",
    [Q_DOMAINS_ALL] = "SELECT tenant_id, domain FROM tenant_domains ORDER BY tenant_id, domain",
    /* audit.c */
    [Q_AUDIT_ADD] = "INSERT INTO audit(at, key_id, address, action, target, before, after) "
                    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    [Q_AUDIT_LIST] = "SELECT id, at, key_id, address, action, target, before, after FROM audit "
                     "WHERE id < ?1 ORDER BY id DESC LIMIT ?2",
    [Q_LOOKUP_ADD] = "INSERT INTO lookups(at, key_id, type, hash) VALUES (?1, ?2, ?3, ?4)",
    /* The buckets present (lookups_by_bucket's first column), newest first, one seek each,
     * and the hash's rows in each. */
    [Q_LOOKUP_FIND] = "WITH RECURSIVE b(x) AS (SELECT (SELECT " BD_SQL_LOOKUP_BUCKET
                      " FROM lookups ORDER BY " BD_SQL_LOOKUP_BUCKET " DESC LIMIT 1) "
                      "UNION ALL SELECT (SELECT " BD_SQL_LOOKUP_BUCKET " FROM lookups WHERE "
                      BD_SQL_LOOKUP_BUCKET " < b.x ORDER BY " BD_SQL_LOOKUP_BUCKET
                      " DESC LIMIT 1) FROM b WHERE b.x IS NOT NULL) "
                      "SELECT l.at, l.key_id, l.type, l.hash FROM b CROSS JOIN lookups l "
                      "ON " BD_SQL_LOOKUP_BUCKET " = b.x AND l.hash = ?1 "
                      "ORDER BY l.at DESC LIMIT ?2",
    [Q_LOOKUP_EXPIRE] = "DELETE FROM lookups WHERE at < ?1",
#undef JOB_COLS
};

sqlite3_stmt *sq_prepare_fixed(sqlite_store *s, int q)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v3(s->db, FIXED_SQL[q], -1, SQLITE_PREPARE_PERSISTENT, &st, NULL) !=
        SQLITE_OK) {
        bd_log_own(BD_LOG_ERROR, "store", "prepare failed: %s", sqlite3_errmsg(s->db));
        return NULL;
    }
    s->fixed[q] = st;
    return st;
}

sqlite3_stmt *sq_dynamic(sqlite_store *s, const char *sql)
{
    int victim = 0;
    for (int i = 0; i < DYN_CACHE; i++) {
        if (s->dyn[i].sql && strcmp(s->dyn[i].sql, sql) == 0) {
            s->dyn[i].used = ++s->tick;
            return s->dyn[i].stmt;
        }
        if (s->dyn[i].used < s->dyn[victim].used)
            victim = i;
    }
    sqlite3_stmt *st;
    if (sqlite3_prepare_v3(s->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &st, NULL) != SQLITE_OK) {
        bd_log_own(BD_LOG_ERROR, "store", "prepare failed: %s", sqlite3_errmsg(s->db));
        return NULL;
    }
    char *copy = strdup(sql);
    if (!copy) {
        sqlite3_finalize(st);
        return NULL;
    }
    sqlite3_finalize(s->dyn[victim].stmt);
    free(s->dyn[victim].sql);
    s->dyn[victim].sql = copy;
    s->dyn[victim].stmt = st;
    s->dyn[victim].used = ++s->tick;
    return st;
}

void sq_finalize_all(sqlite_store *s)
{
    for (int i = 0; i < Q__COUNT; i++)
        sqlite3_finalize(s->fixed[i]);
    for (int i = 0; i < DYN_CACHE; i++) {
        sqlite3_finalize(s->dyn[i].stmt);
        free(s->dyn[i].sql);
    }
}

bd_result sq_step_done(sqlite_store *s, sqlite3_stmt *st)
{
    int rc = sqlite3_step(st);
    bd_result r = sq_map_rc(rc);
    if (rc != SQLITE_DONE && rc != SQLITE_ROW)
        bd_log_own(BD_LOG_ERROR, "store", "%s", sqlite3_errmsg(s->db));
    sq_done(st);
    return r;
}

bd_result sq_exec(sqlite_store *s, const char *sql)
{
    char *err = NULL;
    int rc = sqlite3_exec(s->db, sql, NULL, NULL, &err);
    if (rc != SQLITE_OK) {
        bd_log_own(BD_LOG_ERROR, "store", "%s", err ? err : sqlite3_errmsg(s->db));
        sqlite3_free(err);
    }
    return sq_map_rc(rc);
}

bd_result sq_run_fixed(sqlite_store *s, int q)
{
    sqlite3_stmt *st = sq_fixed(s, q);
    return st ? sq_step_done(s, st) : BD_ERR_STORE;
}

bd_result sq_step_count(sqlite3_stmt *st, int64_t *n)
{
    int rc = sqlite3_step(st);
    *n = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sq_done(st);
    return sq_map_rc(rc);
}

int64_t sq_count_of(sqlite_store *s, int q)
{
    sqlite3_stmt *st = sq_fixed(s, q);
    int64_t n = -1;
    if (st && sqlite3_step(st) == SQLITE_ROW)
        n = sqlite3_column_int64(st, 0);
    if (st)
        sq_done(st);
    return n;
}
