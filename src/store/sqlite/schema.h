/* SQLite schema migrations, applied in order; the store's meta table records how many ran. */
#ifndef BD_STORE_SQLITE_SCHEMA_H
#define BD_STORE_SQLITE_SCHEMA_H

extern const char *const bd_sqlite_migrations[];
extern const int bd_sqlite_migration_count;
/* CREATE INDEX statements of the record and card lookup indexes (created by the migrations). */
extern const char *const bd_sqlite_record_indexes;
/* The same without records_by_breach: a store whose records are keyed by records_key
 * (breach_id, dedup) has no other index by breach (store/sqlite/dedup_key.c). */
extern const char *const bd_sqlite_record_lookup_indexes;
extern const char *const bd_sqlite_card_indexes;
/* CREATE VIRTUAL TABLE of the cards' owner and bank word index, as migration 1 made it (a
 * bulk card load builds its twin in a file of its own: card_words_side.c). */
extern const char *const bd_sqlite_card_words_table;
/* The statements that recount domain_counts (after a bulk load). */
extern const char *const bd_sqlite_domain_count_rebuild;
/* The statements that recount card_counts' owner words per expiry (kind 2), after a bulk
 * load. */
extern const char *const bd_sqlite_owner_word_count_rebuild;

#endif
