/* The watch matcher's two indexes (watch_match.c), both open-addressed hash tables:
 *   - value groups: the watches grouped by what they name (type and lookup key), so a landed
 *     field costs one lookup whatever number of watches share its value, and the watches
 *     of one group share one tally (they match exactly the same rows);
 *   - slots: a batch's tallies by (group, breach), so a match costs one more lookup, not a
 *     scan of the tallies made so far.
 * Groups and slots are numbered 0, 1, ... in the order they are first seen, so a caller
 * keeps what it tallies in plain arrays by slot number.
 *
 * Ownership: the index borrows the key bytes given to bd_watch_index_add; they must outlive
 * it. Nothing is thread-safe: an index belongs to one matcher. */
#ifndef BD_INGEST_WATCH_INDEX_H
#define BD_INGEST_WATCH_INDEX_H

#include <stddef.h>
#include <stdint.h>

typedef struct bd_watch_index bd_watch_index;

/* An empty index; NULL when out of memory. */
bd_watch_index *bd_watch_index_new(void);
/* Frees it; NULL is ignored. */
void bd_watch_index_free(bd_watch_index *ix);

/* Adds the next watch (watches are numbered 0, 1, ... in the order added) to the group of
 * (type, key[0..len)), made when missing. Returns the group's number, -1 when out of memory
 * (then nothing was added). */
int bd_watch_index_add(bd_watch_index *ix, int type, const char *key, size_t len);
/* The group of (type, key[0..len)), -1 when no watch names it. */
int bd_watch_index_find(const bd_watch_index *ix, int type, const char *key, size_t len);
/* Groups so far. */
int bd_watch_index_groups(const bd_watch_index *ix);
/* The first watch of group g and the one after watch w in its group, in the order they were
 * added; -1 past the last. */
int bd_watch_index_first(const bd_watch_index *ix, int g);
int bd_watch_index_next(const bd_watch_index *ix, int w);

/* The slot of (group g, breach_id), made when missing (it is then the next number:
 * bd_watch_index_slots() - 1). -1 when out of memory. */
int bd_watch_index_slot(bd_watch_index *ix, int g, int64_t breach_id);
/* Slots so far, and what slot i stands for. */
int bd_watch_index_slots(const bd_watch_index *ix);
void bd_watch_index_slot_of(const bd_watch_index *ix, int i, int *g, int64_t *breach_id);
/* Forgets every slot (the groups stay). */
void bd_watch_index_clear_slots(bd_watch_index *ix);

#endif
