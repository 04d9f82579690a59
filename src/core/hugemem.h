/* hugemem.h - private: ask the kernel to back a large array with
 * transparent huge pages (hugemem.c). */
#ifndef MIGSCHED_HUGEMEM_H
#define MIGSCHED_HUGEMEM_H

#include <stddef.h>

/* Advise huge pages for the whole 2 MB pages inside [p, p + n) when n is
 * at least 4 MB; a hint only (nothing where the kernel or the platform has
 * none, and never an error). Call it right after allocating, before the
 * array is first written. */
void ms__mem_huge(void *p, size_t n);

#endif
