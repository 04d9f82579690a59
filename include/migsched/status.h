/* status.h - status codes shared by every libmigsched function.
 *
 * Every fallible public function returns an ms_status_t. The list below is
 * the single source of the enum, ms_strerror() and ms_status_name(); it only
 * grows, and values are never renumbered.
 *
 * Functions that parse input also fill an ms_diag_t (file, line, field and
 * message) so that the CLI or the daemon can print a precise error; the
 * library itself never prints.
 */
#ifndef MIGSCHED_STATUS_H
#define MIGSCHED_STATUS_H

#include <stddef.h>

#define MS_STATUS_MAP(X)                                        \
    X(OK,       0, "ok")                                        \
    X(ENOMEM,   1, "out of memory")                             \
    X(EINVAL,   2, "invalid argument")                          \
    X(ENOFIT,   3, "no placement fits")                         \
    X(ENOENT,   4, "not found")                                 \
    X(EPARSE,   5, "malformed input")                           \
    X(EIO,      6, "input/output error")                        \
    X(ERANGE,   7, "value out of range")                        \
    X(ENOTSUP,  8, "not supported")                             \
    X(ESTATE,   9, "invalid state")                             \
    X(EEXIST,  10, "already exists")

typedef enum ms_status {
#define MS__STATUS_ENUM(name, val, msg) MS_##name = (val),
    MS_STATUS_MAP(MS__STATUS_ENUM)
#undef MS__STATUS_ENUM
} ms_status_t;

/* Human text for a status ("out of memory"); never NULL. */
const char *ms_strerror(ms_status_t st);
/* Symbolic name for a status ("MS_ENOMEM"); never NULL. */
const char *ms_status_name(ms_status_t st);

/* Where a parse error happened. Filled by readers on failure; all fields are
 * optional to read (empty strings / 0 when unknown). */
typedef struct ms_diag {
    char file[256];    /* input name as given by the caller */
    long line;         /* 1-based line number, 0 if not line-oriented */
    char field[64];    /* column or option name */
    char msg[256];     /* what is wrong, in words */
} ms_diag_t;

/* Reset a diagnostic to empty. NULL-safe. */
void ms_diag_clear(ms_diag_t *d);
/* printf-style setter used by readers; NULL-safe (does nothing). */
void ms_diag_set(ms_diag_t *d, const char *file, long line, const char *field,
                 const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;

#endif
