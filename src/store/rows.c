/* Row helpers both backends share: whether a record query is a whole domain's, a record's
 * lookup keys by field, and the landed row (its lookup keys and shown values) of a record or card put. Apart from the
 * front (store.c), which calls into the backends, so that they never call back into it. */
#include <string.h>

#include "store/store_impl.h"

bool bd_record_query_whole_domain(const bd_record_query *q)
{
    if (q->field != BD_FIELD_EMAIL_DOMAIN || q->scope_tenant)
        return false;
    for (int f = 0; f < BD_FIELD_COUNT; f++)
        if (q->filter[f].mode != BD_FILTER_NONE)
            return false;
    return true;
}

void bd_record_keys(const bd_record_in *r, bd_slice key[BD_FIELD_COUNT])
{
    key[BD_FIELD_EMAIL] = r->email;
    key[BD_FIELD_EMAIL_DOMAIN] = r->email_domain;
    key[BD_FIELD_PHONE] = r->phone_key;
    key[BD_FIELD_USERNAME] = r->user_name_key;
    key[BD_FIELD_IP] = r->ip_address;
    key[BD_FIELD_SSN] = r->ssn_hmac;
    key[BD_FIELD_PASSWORD] = r->password_hmac;
    key[BD_FIELD_PASSWORD_HASH] = r->password_hash;
    key[BD_FIELD_BITCOIN] = r->bitcoin_address;
    key[BD_FIELD_WEBSITE_DOMAIN] = r->website_domain;
}

void bd_landed_of_record(const bd_record_in *r, int64_t breach_id, bd_landed_row *out)
{
    bd_landed_row l = {.breach_id = breach_id};
    bd_record_keys(r, l.key);
    l.shown[BD_FIELD_EMAIL] = r->email;
    l.shown[BD_FIELD_EMAIL_DOMAIN] = r->email;
    l.shown[BD_FIELD_PHONE] = r->phone_number;
    l.shown[BD_FIELD_USERNAME] = r->user_name;
    l.shown[BD_FIELD_IP] = r->ip_address;
    l.shown[BD_FIELD_SSN] = r->ssn_masked;
    l.shown[BD_FIELD_PASSWORD] = r->password_masked;
    l.shown[BD_FIELD_PASSWORD_HASH] = r->password_hash;
    l.shown[BD_FIELD_BITCOIN] = r->bitcoin_address;
    l.shown[BD_FIELD_WEBSITE_DOMAIN] = r->website_domain;
    *out = l;
}

void bd_landed_of_card(const bd_card_in *c, bd_landed_row *out)
{
    *out = (bd_landed_row){.card = true,
                           .bin = {c->bin, strlen(c->bin)},
                           .number_masked = {c->number_masked, strlen(c->number_masked)}};
}
