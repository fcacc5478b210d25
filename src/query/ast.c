/* Query tree: node storage inside one allocation, AND/OR flattening, NOT collapsing, and the
 * canonical S-expression form used by tests and logs. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "query/query_impl.h"

bd_query *query_alloc(size_t len)
{
    if (len > BD_QUERY_MAX_BYTES)
        return NULL;
    /* Words are at least one byte and separated by at least one, so len/2 + 1 of them fit any
     * query; text holds every normalised value (never longer than what was typed) plus one NUL
     * per word and per term. */
    size_t words_cap = len / 2 + 2;
    size_t text_cap = 2 * len + 2 * BD_QUERY_MAX_TERMS;
    size_t size = sizeof(bd_query) + words_cap * sizeof(bd_slice) + text_cap;
    /* Not zeroed (about 25 KiB, per search): a node is set whole when it is made, and its
     * links with it; the pools are written before they are read. */
    bd_query *q = malloc(size);
    if (!q)
        return NULL;
    q->n_nodes = 0;
    q->n_exact = 0;
    q->root = -1;
    q->text_len = 0;
    q->n_words = 0;
    q->words = (bd_slice *)(void *)(q + 1);
    q->words_cap = words_cap;
    q->text = (char *)(q->words + words_cap);
    q->text_cap = text_cap;
    return q;
}

void bd_query_free(bd_query *q)
{
    free(q);
}

const bd_query_node *bd_query_root(const bd_query *q)
{
    return &q->nodes[q->root];
}

int bd_query_exact_terms(const bd_query *q)
{
    return q->n_exact;
}

int query_node_new(bd_query *q, bd_query_kind kind, bd_query_field field, int pos)
{
    if (q->n_nodes >= QUERY_MAX_NODES)
        return -1;
    int i = q->n_nodes++;
    q->nodes[i] = (bd_query_node){.kind = kind, .field = field, .pos = pos};
    q->first[i] = q->last[i] = q->next[i] = -1;
    return i;
}

int query_combine(bd_query *q, bd_query_kind kind, int left, int right)
{
    bd_query_node *l = &q->nodes[left], *r = &q->nodes[right];
    bool lk = l->kind == kind, rk = r->kind == kind;
    if (lk && rk) { /* (a b) (c d): r's children join l's; r is left unused */
        q->next[q->last[left]] = q->first[right];
        q->last[left] = q->last[right];
        l->n_children += r->n_children;
        return left;
    }
    if (lk) {
        q->next[q->last[left]] = right;
        q->next[right] = -1;
        q->last[left] = right;
        l->n_children++;
        return left;
    }
    if (rk) {
        q->next[left] = q->first[right];
        q->first[right] = left;
        r->n_children++;
        r->pos = l->pos;
        return right;
    }
    int n = query_node_new(q, kind, BD_QUERY_FIELD_NONE, l->pos);
    if (n < 0)
        return -1;
    q->first[n] = left;
    q->last[n] = right;
    q->next[left] = right;
    q->next[right] = -1;
    q->nodes[n].n_children = 2;
    return n;
}

int query_negate(bd_query *q, int child, int pos)
{
    if (q->nodes[child].kind == BD_QUERY_NOT) {
        int inner = q->first[child];
        /* Nodes are made children first, so a NOT at the root of a group is the newest. */
        if (child == q->n_nodes - 1)
            q->n_nodes--;
        return inner;
    }
    int n = query_node_new(q, BD_QUERY_NOT, BD_QUERY_FIELD_NONE, pos);
    if (n < 0)
        return -1;
    q->first[n] = q->last[n] = child;
    q->next[child] = -1;
    q->nodes[n].n_children = 1;
    return n;
}

char *query_text_add(bd_query *q, const char *p, size_t n)
{
    if (n + 1 > q->text_cap - q->text_len)
        return NULL;
    char *dst = q->text + q->text_len;
    if (n)
        memcpy(dst, p, n);
    dst[n] = '\0';
    q->text_len += n + 1;
    return dst;
}

void query_finish(bd_query *q)
{
    int stack[QUERY_MAX_NODES];
    int top = 0;
    size_t used = 0;
    stack[top++] = q->root;
    while (top > 0) {
        int i = stack[--top];
        bd_query_node *n = &q->nodes[i];
        if (n->kind != BD_QUERY_AND && n->kind != BD_QUERY_OR && n->kind != BD_QUERY_NOT)
            continue;
        n->children = &q->child_ptrs[used];
        for (int c = q->first[i]; c >= 0; c = q->next[c]) {
            /* Every live node has one parent, so both arrays have room. */
            q->child_ptrs[used++] = &q->nodes[c];
            stack[top++] = c;
        }
    }
}

const char *bd_query_field_name(bd_query_field f)
{
    switch (f) {
    case BD_QUERY_FIELD_CREATED_AT:
        return "createdAt";
    case BD_QUERY_FIELD_NUMBER:
        return "number";
    case BD_QUERY_FIELD_HASH:
        return "Hash";
    case BD_QUERY_FIELD_EXPIRE_DATE:
        return "expireDate";
    case BD_QUERY_FIELD_CVV:
        return "cvv";
    case BD_QUERY_FIELD_OWNER:
        return "owner";
    case BD_QUERY_FIELD_BANK:
        return "bank";
    case BD_QUERY_FIELD_LEAK_ID:
        return "leakId";
    case BD_QUERY_FIELD_NONE:
        break;
    }
    return "";
}

/* "..." with \" and \\ escaped and bytes outside printable ASCII as \xHH. */
static bd_result put_quoted(bd_buf *b, bd_slice s)
{
    static const char hex[] = "0123456789abcdef";
    bd_result r = bd_buf_append_char(b, '"');
    for (size_t i = 0; r == BD_OK && i < s.len; i++) {
        unsigned char c = (unsigned char)s.ptr[i];
        if (c == '"' || c == '\\') {
            char e[2] = {'\\', (char)c};
            r = bd_buf_append(b, e, 2);
        } else if (c >= 0x20 && c <= 0x7e) {
            r = bd_buf_append_char(b, (char)c);
        } else {
            char e[4] = {'\\', 'x', hex[c >> 4], hex[c & 15]};
            r = bd_buf_append(b, e, 4);
        }
    }
    return r == BD_OK ? bd_buf_append_char(b, '"') : r;
}

static bd_result put_node(bd_buf *b, const bd_query_node *n)
{
    bd_result r = BD_OK;
    const char *field = bd_query_field_name(n->field);
    switch (n->kind) {
    case BD_QUERY_ALL:
        return bd_buf_append_str(b, "(ALL)");
    case BD_QUERY_AND:
    case BD_QUERY_OR:
    case BD_QUERY_NOT:
        r = bd_buf_append_str(b, n->kind == BD_QUERY_AND  ? "(AND"
                                 : n->kind == BD_QUERY_OR ? "(OR"
                                                          : "(NOT");
        for (size_t i = 0; r == BD_OK && i < n->n_children; i++) {
            r = bd_buf_append_char(b, ' ');
            if (r == BD_OK)
                r = put_node(b, n->children[i]);
        }
        break;
    case BD_QUERY_NUMBER_PATTERN:
        if (n->length >= 0)
            return bd_buf_printf(b, "(number bin=%s last4=%s len=%d)", n->bin, n->last4, n->length);
        return bd_buf_printf(b, "(number bin=%s last4=%s len>=%d)", n->bin, n->last4,
                             n->min_length);
    case BD_QUERY_NUMBER_EXACT:
        return bd_buf_printf(b, "(number exact=%s)", n->value.ptr);
    case BD_QUERY_HASH:
        return bd_buf_printf(b, "(Hash %s)", n->value.ptr);
    case BD_QUERY_WORD:
        r = bd_buf_printf(b, "(%s", field);
        for (size_t i = 0; r == BD_OK && i < n->n_words; i++) {
            r = bd_buf_append_char(b, ' ');
            if (r == BD_OK)
                r = put_quoted(b, n->words[i]);
        }
        if (r == BD_OK && n->prefix)
            r = bd_buf_append_char(b, '*');
        break;
    case BD_QUERY_CVV:
    case BD_QUERY_LEAK_ID:
        r = bd_buf_printf(b, "(%s ", field);
        if (r == BD_OK)
            r = put_quoted(b, n->value);
        break;
    case BD_QUERY_DATE_RANGE:
        return bd_buf_printf(b, "(%s %c%s TO %s%c)", field, n->lower_inclusive ? '[' : '{',
                             n->has_lower ? n->lower : "*", n->has_upper ? n->upper : "*",
                             n->upper_inclusive ? ']' : '}');
    }
    return r == BD_OK ? bd_buf_append_char(b, ')') : r;
}

bd_result bd_query_to_string(const bd_query *q, bd_buf *out)
{
    return put_node(out, bd_query_root(q));
}
