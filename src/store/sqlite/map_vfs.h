/* A VFS for the store's readers that maps the whole database file, where the default one
 * maps at most SQLITE_MAX_MMAP_SIZE (2 GB in Debian's build) and reads every page past that
 * with pread(2) into the connection's page cache. At 10M records and 10M cards the store is
 * 11-14 GB: a page of a domain's records or of an owner's cards is a random page of it.
 *
 * It wraps the default VFS and changes one thing: the main database file's xFetch answers
 * from a read-only shared mapping of the whole file. The mapping follows SQLite's own
 * protocol for it (the unix VFS's): it is made at the first fetch, at the file's size then,
 * and looked at again when the pager says the file changed (xUnfetch with no page, which it
 * only does with no page out): where the unix VFS unmaps the whole file there, this one
 * keeps the mapping, grown or cut to the file's new size (the pages' contents are the page
 * cache's, shared). A page past the mapping is left to xRead. Everything else passes
 * through. Only connections that never write use it (PRAGMA query_only): a file they map is
 * only ever grown or truncated by another connection, whose commit the pager notices before
 * it fetches again, as it must for its own mapping. */
#ifndef BD_STORE_SQLITE_MAP_VFS_H
#define BD_STORE_SQLITE_MAP_VFS_H

#include <stdint.h>

/* The VFS's name, registered on first use (thread-safe); NULL when it could not be (out of
 * memory, no default VFS): readers then open with the default one. */
const char *sq_map_vfs(void);

/* Pages the calling thread's readers took from the whole-file mappings, the main files'
 * pages they read with xRead instead, and the mappings they made (for the tests). */
void sq_map_vfs_counts(uint64_t *mapped, uint64_t *read, uint64_t *made);

#endif
