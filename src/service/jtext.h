/* jtext.h - JSON written as text, for the hot paths that render the same
 * shapes over and over (a job's JSON on every GET and submission, the
 * backend's inventory journal): appending to one growable buffer costs a
 * fraction of building a jansson tree and dumping it (docs/performance.md).
 *
 * Appends never fail on their own: out of memory, the buffer remembers it
 * and svc_jtext_take returns NULL, so a renderer checks once at the end.
 */
#ifndef MIGSCHED_SVC_JTEXT_H
#define MIGSCHED_SVC_JTEXT_H

#include <stdbool.h>
#include <stddef.h>

typedef struct svc_jtext {
    char *p;                       /* len bytes, NUL-terminated when p != NULL */
    size_t len, cap;
    bool oom;                      /* an append ran out of memory */
} svc_jtext_t;

/* Empty it, keeping its memory (and forgetting an earlier failure). */
void svc_jtext_reset(svc_jtext_t *t);
void svc_jtext_free(svc_jtext_t *t);
void svc_jtext_add(svc_jtext_t *t, const char *p, size_t n);
void svc_jtext_raw(svc_jtext_t *t, const char *s);            /* s as it is */
void svc_jtext_int(svc_jtext_t *t, long long v);
/* v as jansson writes a real (17 significant digits, always a '.' or an
 * exponent, so it reads back as a real); null when not finite */
void svc_jtext_real(svc_jtext_t *t, double v);
/* s quoted as jansson quotes it: quotes, backslashes and control bytes
 * escaped (\n \t ... or \u00XX), the rest (UTF-8) as it is; NULL is
 * written as null */
void svc_jtext_str(svc_jtext_t *t, const char *s);
/* The text (malloc'd, NUL-terminated; the caller frees it) and t emptied;
 * NULL if an append failed. */
char *svc_jtext_take(svc_jtext_t *t);

/* The span of the value of key `key` in the JSON object text s[0..n): *at
 * and *len; false when s is not a well-formed object (by a light scan:
 * balanced, strings closed, nothing after it) or has no such key at its top
 * level. Keys are compared as written, without unescaping. */
bool svc_jtext_member(const char *s, size_t n, const char *key, const char **at, size_t *len);

#endif
