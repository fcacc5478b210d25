/* The upgrade that gave records website_domain (issue 35: website of a stealer log) fills it
 * for the records stored before it: the migration sets meta's pending_website_domains to 1
 * when records exist; the stores' migration notes (sq_migration_notes, pg_migration_notes),
 * in the migration's transaction, then read the records' other_attributes in batches by id,
 * keep the host of their "site" member as the importer does (ingest/check.c: the host
 * bd_normalize gives for BD_ID_WEBSITE_DOMAIN; a site that gives none stays shown only,
 * website_domain NULL), and set the note to 0. A run stopped midway rolls back with the
 * migration, note included, and the next open runs it again; records that have a
 * website_domain already are left as they are. */
#ifndef BD_STORE_WEBSITE_BACKFILL_H
#define BD_STORE_WEBSITE_BACKFILL_H

#include <stdbool.h>
#include <stddef.h>

#include "core/result.h"
#include "core/slice.h"
#include "ingest/normalize.h"

#define BD_WEBSITE_BACKFILL_BATCH 1000
#define BD_WEBSITE_BACKFILL_NOTE "pending_website_domains"

/* The website domain the importer keeps for a record whose other_attributes are attrs (a
 * JSON object): true with the host in out (BD_NORM_MAX + 1 bytes, NUL-terminated) and
 * *len, or false when attrs have no "site" string that normalises. */
bool bd_website_of_attributes(bd_slice attrs, char *out, size_t *len);

struct bd_store;
/* Each store's run of the note (sqlite/website_backfill.c, pg/website_backfill.c), in the
 * caller's transaction: BD_OK when there was nothing to do or it is done. */
bd_result sq_website_domains_note(struct bd_store *s);
bd_result pg_website_domains_note(struct bd_store *s);

#endif
