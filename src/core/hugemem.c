/* hugemem.c - transparent huge pages for the few arrays that grow with a
 * trace (a million jobs: the trace's rows, the simulator's job table).
 *
 * Why: such an array is touched first page by page (one fault per 4 KB)
 * and then at random (a TLB miss per access once it outgrows the TLB's
 * reach). Most distributions set THP to "madvise", so without the advice
 * these arrays get 4 KB pages: a 1,000,000-job simulate spent about 12%
 * of its time in page faults and TLB misses (docs/performance.md).
 * glibc can do the same for every allocation (GLIBC_TUNABLES
 * glibc.malloc.hugetlb=1), but only when set before the process starts.
 */
#define _DEFAULT_SOURCE   /* madvise, MADV_HUGEPAGE */
#include "core/hugemem.h"

#include <stdint.h>
#include <sys/mman.h>

#define HUGE_PAGE ((uintptr_t)2 << 20)

void ms__mem_huge(void *p, size_t n)
{
#ifdef MADV_HUGEPAGE
    uintptr_t lo, hi;

    if (p == NULL || n < 2 * HUGE_PAGE)
        return;
    lo = ((uintptr_t)p + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
    hi = ((uintptr_t)p + n) & ~(HUGE_PAGE - 1);
    if (hi > lo)
        (void)madvise((void *)lo, (size_t)(hi - lo), MADV_HUGEPAGE);
#else
    (void)p;
    (void)n;
#endif
}
