/* Starting and stopping a list of services in order (see service.h). */
#include "app/service.h"

#include <stdlib.h>

bd_result bd_services_start(bd_services *out, const bd_service *const *list, size_t n,
                            void *env, char *why, size_t whylen)
{
    *out = (bd_services){list, n, 0, NULL};
    if (why && whylen)
        why[0] = '\0';
    out->states = calloc(n ? n : 1, sizeof *out->states);
    if (!out->states)
        return BD_ERR_NOMEM;
    for (size_t i = 0; i < n; i++) {
        bd_result r = list[i]->start(env, &out->states[i], why, whylen);
        if (r != BD_OK) {
            bd_services_stop(out);
            return r;
        }
        out->started = i + 1;
    }
    return BD_OK;
}

void bd_services_stop(bd_services *s)
{
    for (size_t i = s->started; i-- > 0;)
        if (s->list[i]->drain)
            s->list[i]->drain(s->states[i]);
    for (size_t i = s->started; i-- > 0;)
        s->list[i]->stop(s->states[i]);
    s->started = 0;
    free(s->states);
    s->states = NULL;
}
