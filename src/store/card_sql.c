/* What every backend's card search SQL has in common (card_sql.h). */
#include "store/card_sql.h"

#include <string.h>

static const char *const CARD_COL[] = {
    [BD_CARD_CREATED_AT] = "created_at",
    [BD_CARD_EXPIRE_DATE] = "expire_date",
    [BD_CARD_BANK] = "bank",
    [BD_CARD_OWNER] = "owner",
    [BD_CARD_CVSS] = "cvss",
    [BD_CARD_LEAK_NAME] = "leak_name",
    [BD_CARD_LEAK_PUBLISH_DATE] = "leak_publish_date",
    [BD_CARD_LEAK_DISCOVER_DATE] = "leak_discover_date",
    [BD_CARD_LEAK_SIZE] = "leak_size",
    [BD_CARD_LEAK_ID] = "leak_id",
};

const char *bd_card_sql_col(bd_card_column column)
{
    return CARD_COL[column];
}

int bd_card_number_layout(const bd_card_cond *k, char tail[5])
{
    if (tail) {
        size_t n = strlen(k->last4);
        for (size_t i = 0; i < n; i++)
            tail[i] = k->last4[n - 1 - i];
        tail[n] = '\0';
    }
    return k->length > 0 || k->min_length <= 12 ? 0 : k->min_length;
}

bool bd_card_plain_digits(const char *p)
{
    for (; *p; p++)
        if (*p < '0' || *p > '9')
            return false;
    return true;
}

void bd_card_digits_end(const char *p, size_t n, char *end)
{
    memcpy(end, p, n);
    end[n - 1]++;
    end[n] = '\0';
}

static void walk(const bd_card_dialect *d, void *w, const bd_card_cond *k, int depth)
{
    if (depth > BD_CARD_COND_MAX_DEPTH) {
        d->fail(w, BD_ERR_LIMIT);
        return;
    }
    switch (k->kind) {
    case BD_CC_ALL:
        d->emit(w, d->true_sql);
        break;
    case BD_CC_AND:
    case BD_CC_OR:
        d->emit(w, "(");
        for (size_t i = 0; i < k->nkids; i++) {
            if (i)
                d->emit(w, k->kind == BD_CC_AND ? " AND " : " OR ");
            walk(d, w, k->kids[i], depth + 1);
        }
        d->emit(w, ")");
        break;
    case BD_CC_NOT:
        d->emit(w, "NOT coalesce(");
        walk(d, w, k->kids[0], depth + 1);
        d->emit(w, ", ");
        d->emit(w, d->false_sql);
        d->emit(w, ")");
        break;
    case BD_CC_NUMBER:
        d->number(w, k);
        break;
    case BD_CC_HMAC:
    case BD_CC_CVV:
        d->hmac(w, k);
        break;
    case BD_CC_EQUALS:
        d->equals(w, k);
        break;
    case BD_CC_WORDS:
        d->words(w, k);
        break;
    case BD_CC_RANGE:
        d->range(w, k);
        break;
    }
}

void bd_card_cond_walk(const bd_card_dialect *d, void *w, const bd_card_cond *k)
{
    walk(d, w, k, 0);
}
