/* Zeroed memory whose pages are written before use, for tables probed at random while other
 * threads of the process run (the import's hash sets). */
#ifndef BD_CORE_ZEROED_H
#define BD_CORE_ZEROED_H

#include <stddef.h>

/* n bytes of zeros, aligned to a cache line, every page already written; NULL when out of
 * memory. Free with free(). calloc would hand fresh pages over unwritten: each is then the
 * kernel's shared zero page until its first write, which replaces the mapping and makes every
 * CPU running another thread of the process flush its TLB. */
void *bd_zeroed_alloc(size_t n);

#endif
