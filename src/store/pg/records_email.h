/* What records.c and records_email.c share: the record columns both read, and the email
 * searches that fixed statements answer (records_email.c). Private to src/store/pg/. */
#ifndef BD_STORE_PG_RECORDS_EMAIL_H
#define BD_STORE_PG_RECORDS_EMAIL_H

#include <stdbool.h>
#include <stdint.h>

#include "store/pg/direct.h"
#include "store/pg/pg_impl.h"

/* A record row's columns, in the order pg_record_rows reads
 * them, over records as r. */
#define RECORD_ROW_COLUMNS                                                                         \
    "r.id, r.breach_date, r.user_name, r.first_name, r.last_name, r.email, r.email_domain, "      \
    "r.phone_number, r.ip_address, r.bitcoin_address, r.password_masked, r.password_hash, "        \
    "r.ssn_masked, r.other_attributes, r.severity, r.breach_id"

/* Whether q is an email search that a fixed statement answers: no filter of any kind and
 * no tenant's scope. */
bool pg_plain_email(const bd_record_query *q);
/* Runs such a search (pg_plain_email(q) true): its page, and for a first page its count in
 * *found (if found). */
bd_result pg_search_email(pg_store *p, const bd_record_query *q, bd_record_cb cb, void *ctx,
                          int64_t *found);

/* What a worker runs for direct reads (direct.c completes each with its placement check for
 * %s and the shard for %lld): an email's page as the routed fixed statements' (their
 * columns, with the data version from the check, and no row at all when the shard moved),
 * and the batched pages of the lookup dispatcher (pg_email_batch_*_sql's columns, the
 * version NULL on every row when the shard moved). */
extern const char *const pg_email_direct_sql[PG_DIRECT__COUNT];

#endif
