/* What a records import wrote into each breach, so that a breach's identity count
 * (breach.pwned_count when none was imported: its distinct identities, a record's identity
 * being the first it has of email, user name, phone, IP, bitcoin address, SSN, password
 * hash) is settled without the store reading the breach's records again: for a breach
 * whose records are all this import's, the import has counted them as it wrote them.
 * Recounting sorted every identity of the breach: 2.4 s of a 1M-record load. */
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/import_impl.h"

_Static_assert(sizeof((importer *)0)->ident_key == crypto_shorthash_KEYBYTES, "SipHash key");

/* 12.6M identities (a breach's, counted once per breach): a table of 2^24 slots, 128 MiB,
 * three quarters full (192 MiB while it doubles), so that with the bulk writer's page cache
 * (store/sqlite/conn.c) an import stays within 1 GiB whatever the file's size
 * (docs/OPERATIONS.md). Past them every touched breach is recounted, which reads all of
 * its records: 35 s of a 95 s load of 10M records when the cap was 8.4M (2^23, the same
 * table half full), which the corpus's 10M records, one identity per breach each but for
 * repeats, went past. */
#define MAX_IDENTITIES (3u << 22)

void bd_import_tally_begin(importer *im, int64_t last_id)
{
    im->last_id_before = last_id;
    bd_u64set_init(&im->idents, MAX_IDENTITIES);
    randombytes_buf(im->ident_key, sizeof im->ident_key);
    im->counting = true;
    im->nahead = im->ahead_first = 0;
}

/* Makes the index twice as large as it must be for one more breach; false out of memory. */
static bool index_room(importer *im)
{
    if (im->touched_slots >= 2 * (im->ntouched + 1))
        return true;
    size_t slots = im->touched_slots ? im->touched_slots * 2 : 64;
    size_t *at = calloc(slots, sizeof *at);
    if (!at)
        return false;
    for (size_t i = 0; i < im->ntouched; i++) {
        size_t k = bd_slice_hash(bd_slice_from(im->touched[i])) & (slots - 1);
        while (at[k])
            k = (k + 1) & (slots - 1);
        at[k] = i + 1;
    }
    free(im->touched_at);
    im->touched_at = at;
    im->touched_slots = slots;
    return true;
}

/* The index of uuid among the touched breaches, added when new; SIZE_MAX out of memory.
 * One hash and, but for a collision, one comparison per record: a 1M-record file over 200
 * breaches spent 2% of the import comparing uuids in a list. */
static size_t touch(importer *im, const char *uuid)
{
    if (!index_room(im))
        return SIZE_MAX; /* the count is refreshed by the next import of this breach */
    size_t k = bd_slice_hash(bd_slice_from(uuid)) & (im->touched_slots - 1);
    for (; im->touched_at[k]; k = (k + 1) & (im->touched_slots - 1))
        if (strcmp(im->touched[im->touched_at[k] - 1], uuid) == 0)
            return im->touched_at[k] - 1;
    size_t i = im->ntouched;
    if (i == im->cap_touched) {
        size_t cap = im->cap_touched ? im->cap_touched * 2 : 8;
        void *p = realloc(im->touched, cap * sizeof *im->touched);
        if (!p)
            return SIZE_MAX;
        im->touched = p;
        p = realloc(im->tally, cap * sizeof *im->tally);
        if (!p)
            return SIZE_MAX;
        im->tally = p;
        im->cap_touched = cap;
    }
    memcpy(im->touched[i], uuid, BD_UUID_LEN + 1);
    im->tally[i] = (bd_breach_tally){.identities = im->counting ? 0 : -1,
                                     .last_id_before = im->last_id_before};
    im->ntouched++;
    im->touched_at[k] = i + 1;
    return i;
}

/* The record's identity, in the order of the stores' count (SSN as lower-case hex); false
 * when it has none. */
static bool identity_of(const bd_record_in *r, bd_slice *v, char hex[], size_t hexlen)
{
    const bd_slice first[] = {r->email, r->user_name_key, r->phone_key, r->ip_address,
                              r->bitcoin_address};
    for (size_t i = 0; i < sizeof first / sizeof first[0]; i++)
        if (first[i].ptr) {
            *v = first[i];
            return true;
        }
    if (r->ssn_hmac.ptr && r->ssn_hmac.len * 2 < hexlen) {
        sodium_bin2hex(hex, hexlen, (const unsigned char *)r->ssn_hmac.ptr, r->ssn_hmac.len);
        *v = (bd_slice){hex, r->ssn_hmac.len * 2};
        return true;
    }
    *v = r->password_hash;
    return v->ptr != NULL;
}

#define TALLY_AHEAD (sizeof((importer *)0)->ahead_key / sizeof(uint64_t))

static void stop_counting(importer *im)
{
    im->counting = false;
    im->nahead = 0;
    bd_u64set_free(&im->idents);
    for (size_t i = 0; i < im->ntouched; i++)
        im->tally[i].identities = -1;
}

/* Adds the oldest pair waiting to the set, counting it for its breach when it is new. */
static void add_oldest(importer *im)
{
    uint64_t h = im->ahead_key[im->ahead_first];
    size_t t = im->ahead_breach[im->ahead_first];
    im->ahead_first = (im->ahead_first + 1) % TALLY_AHEAD;
    im->nahead--;
    int added = bd_u64set_add(&im->idents, h);
    if (added < 0)
        stop_counting(im);
    else
        im->tally[t].identities += added;
}

void bd_import_tally_record(importer *im, const bd_record_in *r, bool inserted)
{
    size_t t = touch(im, r->breach_uuid);
    if (t == SIZE_MAX || !inserted)
        return;
    im->tally[t].inserted++;
    char hex[129];
    bd_slice v;
    if (!im->counting || !identity_of(r, &v, hex, sizeof hex))
        return;
    uint64_t h;
    crypto_shorthash((unsigned char *)&h, (const unsigned char *)v.ptr, v.len, im->ident_key);
    h ^= (uint64_t)(t + 1) * 0x9E3779B97F4A7C15u; /* one key space per breach */
    /* Added TALLY_AHEAD records later: the set is tens of MB, each add a cache miss on the
     * writer's thread (0.35 s of a 1M-record --bulk load), now a load begun in advance. */
    bd_u64set_prefetch(&im->idents, h);
    if (im->nahead == TALLY_AHEAD)
        add_oldest(im);
    size_t at = (im->ahead_first + im->nahead++) % TALLY_AHEAD;
    im->ahead_key[at] = h;
    im->ahead_breach[at] = t;
}

/* Adds every pair still waiting. */
static void add_waiting(importer *im)
{
    while (im->nahead)
        add_oldest(im);
}

bd_result bd_import_tally_settle(importer *im)
{
    if (im->counting)
        add_waiting(im);
    return bd_store_breach_settle_counts(im->s, (const char(*)[BD_UUID_LEN + 1]) im->touched,
                                         im->tally, im->ntouched);
}

void bd_import_tally_end(importer *im)
{
    bd_u64set_free(&im->idents);
    free(im->touched);
    free(im->tally);
    free(im->touched_at);
    im->touched = NULL;
    im->tally = NULL;
    im->touched_at = NULL;
    im->ntouched = im->cap_touched = im->touched_slots = 0;
}
