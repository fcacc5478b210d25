/* The bytes of request bodies the whole server holds at once (breachd --max-upload-memory):
 * one counter every connection's upload takes its share from before it keeps a byte, and
 * gives back when its request is answered or its connection closes (http/upload.h).
 *
 * Ownership: the server owns the budget; every function is safe from any thread. */
#ifndef BD_HTTP_UPLOAD_BUDGET_H
#define BD_HTTP_UPLOAD_BUDGET_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct {
    size_t total;        /* the most held at once */
    _Atomic size_t held; /* taken and not given back */
} bd_upload_budget;

/* An empty budget of total bytes. */
void bd_upload_budget_init(bd_upload_budget *b, size_t total);
/* Takes n bytes, all or none: false (nothing taken) when fewer than n are free. */
bool bd_upload_budget_take(bd_upload_budget *b, size_t n);
/* Gives back n bytes taken before (never more than were taken). */
void bd_upload_budget_give(bd_upload_budget *b, size_t n);
/* The bytes taken now. */
size_t bd_upload_budget_held(const bd_upload_budget *b);

#endif
