/* The PostgreSQL store's pastes and email hashes (pastes.c; store/pastes.h). */
#ifndef BD_STORE_PG_PG_PASTES_H
#define BD_STORE_PG_PG_PASTES_H

#include "store/store_impl.h"

bd_result pg_paste_put(bd_store *s, const bd_paste_row *p, const bd_slice *emails, size_t n,
                       bool *inserted);
bd_result pg_pastes_of_email(bd_store *s, bd_slice email, bd_paste_cb cb, void *ctx);
bd_result pg_email_hashes_sync(bd_store *s, int64_t *added);
bd_result pg_email_hashes_range(bd_store *s, const char prefix[7], bd_email_hash_cb cb,
                                void *ctx);
bd_result pg_email_hash_forget(bd_store *s, bd_slice email);
bd_result pg_stealer_logs(bd_store *s, bd_stealer_by by, bd_slice key, int64_t max,
                          bd_stealer_cb cb, void *ctx);

#endif
