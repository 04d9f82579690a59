/* fuzz.h - what every libFuzzer harness in fuzz/ shares (fuzz/README.md).
 * A harness is one file fuzz/fuzz_NAME.c with LLVMFuzzerTestOneInput and
 * a seed corpus fuzz/corpus/NAME/; mk/fuzz.mk and scripts/fuzz.sh pick up
 * both by wildcard. Harnesses assert the readers' contracts (a status from
 * the list, a diagnostic on failure, nothing allocated on failure), and
 * the sanitizers (ASan, UBSan with float-cast-overflow) turn every memory
 * error or undefined behaviour into a crash. */
#ifndef MIGSCHED_FUZZ_H
#define MIGSCHED_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "migsched/geometry.h"
#include "migsched/status.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The input as a read-only stream (an empty input reads as /dev/null). */
static inline FILE *fuzz_stream(const uint8_t *d, size_t n)
{
    if (n == 0)
        return fopen("/dev/null", "r");
    return fmemopen((void *)(uintptr_t)d, n, "r");
}

/* The input as a NUL-terminated string (malloc'd; NULL if out of memory).
 * Bytes after an embedded NUL are what a C string caller never sees. */
static inline char *fuzz_string(const uint8_t *d, size_t n)
{
    char *s = malloc(n + 1);

    if (s != NULL) {
        memcpy(s, d, n);
        s[n] = '\0';
    }
    return s;
}

/* The A100 geometry with its classic profiles, built once per process. */
static inline const ms_geom_t *fuzz_a100(void)
{
    static ms_geom_t *g;

    if (g == NULL && ms_geom_create(ms_model_find("A100-40GB"), 0, &g) != MS_OK)
        abort();
    return g;
}

/* A status must be one of the list (status.h) and, on failure of a reader
 * that takes a diagnostic, come with a message unless out of memory. */
static inline void fuzz_check_status(ms_status_t st, const ms_diag_t *d)
{
    if ((unsigned)st > (unsigned)MS_ESTATE)
        abort();
    if (st != MS_OK && st != MS_ENOMEM && d != NULL && d->msg[0] == '\0')
        abort();
}

#endif
