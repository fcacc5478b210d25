/* A store connection per thread, closed with the pool (see store_pool.h). */
#include "store/pool.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct bd_store_pool {
    char *uri;
    int flags;
    pthread_key_t key; /* each thread's connection */
    pthread_mutex_t lock;
    bd_store **conns; /* every connection opened, closed by bd_store_pool_free */
    size_t n, cap;
};

bd_store_pool *bd_store_pool_new(const char *uri, int flags)
{
    bd_store_pool *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->uri = strdup(uri);
    p->flags = flags;
    if (!p->uri || pthread_key_create(&p->key, NULL) != 0) {
        free(p->uri);
        free(p);
        return NULL;
    }
    pthread_mutex_init(&p->lock, NULL);
    return p;
}

bd_result bd_store_pool_get(bd_store_pool *p, bd_store **out, char *why, size_t whylen)
{
    bd_store *s = pthread_getspecific(p->key);
    if (s) {
        *out = s;
        return BD_OK;
    }
    *out = NULL;
    bd_result r = bd_store_open(p->uri, p->flags, &s, why, whylen);
    if (r != BD_OK)
        return r;
    pthread_mutex_lock(&p->lock);
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 16;
        bd_store **grown = realloc(p->conns, cap * sizeof *grown);
        if (!grown) {
            pthread_mutex_unlock(&p->lock);
            bd_store_close(s);
            snprintf(why, whylen, "out of memory");
            return BD_ERR_NOMEM;
        }
        p->conns = grown;
        p->cap = cap;
    }
    p->conns[p->n++] = s;
    pthread_mutex_unlock(&p->lock);
    pthread_setspecific(p->key, s);
    *out = s;
    return BD_OK;
}

void bd_store_pool_drop(bd_store_pool *p)
{
    bd_store *s = pthread_getspecific(p->key);
    if (!s)
        return;
    pthread_mutex_lock(&p->lock);
    for (size_t i = 0; i < p->n; i++) {
        if (p->conns[i] == s) {
            p->conns[i] = p->conns[--p->n];
            break;
        }
    }
    pthread_mutex_unlock(&p->lock);
    pthread_setspecific(p->key, NULL);
    bd_store_close(s);
}

bd_result bd_store_pool_open_once(const bd_store_pool *p, bd_store **out, char *why,
                                  size_t whylen)
{
    return bd_store_open(p->uri, p->flags, out, why, whylen);
}

const char *bd_store_pool_uri(const bd_store_pool *p)
{
    return p->uri;
}

void bd_store_pool_free(bd_store_pool *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->n; i++)
        bd_store_close(p->conns[i]);
    free(p->conns);
    pthread_key_delete(p->key);
    pthread_mutex_destroy(&p->lock);
    free(p->uri);
    free(p);
}
