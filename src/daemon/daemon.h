/* daemon.h - what migschedd (src/service/) and migsched-agent (src/agent/)
 * share, and the backends (src/backend/) use: structured logs, the real
 * clocks, HTTP plumbing and JSON written as text. Not part of libmigsched
 * (it prints); built into build/libmsdaemon.a (mk/backend.mk).
 *
 * Every function here may be called from any thread.
 */
#ifndef MIGSCHED_DAEMON_H
#define MIGSCHED_DAEMON_H

#include <jansson.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <time.h>

/* --- logs and clocks (log.c) --------------------------------------------- */

/* One JSON object a line on stderr: ts, level, msg and the fields (may be
 * NULL; the reference is stolen). Lines of concurrent callers never mix. */
void ms_log(const char *level, const char *msg, json_t *fields);
/* The real clocks, in seconds: CLOCK_REALTIME and CLOCK_MONOTONIC. A
 * daemon's decisions read time through its own clock interface
 * (svc_clock_t), which is these by default; logs and I/O deadlines read
 * them directly. */
double ms_clock_wall(void);
double ms_clock_mono(void);
/* The absolute time s seconds from now on clock clk (CLOCK_REALTIME, or
 * CLOCK_MONOTONIC for a condition variable made with that clock), as
 * pthread_cond_timedwait takes it; s below 0 counts as 0. */
struct timespec ms_clock_after(clockid_t clk, double s);
/* Sleep until s seconds from now by CLOCK_MONOTONIC, whole: a signal does
 * not cut it short, and a process stopped (kill -STOP) past that time goes
 * on at once when continued (the tests' failpoints, which stall a thread
 * on purpose). */
void ms_clock_sleep(double s);

/* --- HTTP plumbing (http_util.c) ----------------------------------------- */

/* A request body: buf is NUL-terminated; too_big once it passed the limit
 * (then the bytes are dropped and buf is NULL). */
typedef struct ms_http_body {
    char *buf;
    size_t len, cap;
    bool too_big;
} ms_http_body_t;

/* Append n bytes, keeping at most max; 0, or -1 out of memory. */
int ms_http_body_add(ms_http_body_t *b, const char *data, size_t n, size_t max);
void ms_http_body_free(ms_http_body_t *b);

/* "HOST:PORT" (an IPv4 address or localhost, port 1..65535) into *sa: 0,
 * -1 malformed, -2 not loopback while allow_remote is false. */
int ms_http_parse_listen(const char *s, bool allow_remote, struct sockaddr_in *sa);

/* Does the Authorization header value carry "Bearer TOKEN" for this token?
 * Constant time in the token's length: no early exit on a mismatch. */
bool ms_http_bearer_ok(const char *header, const char *token, size_t token_len);

/* The bearer token of a --token-file (both daemons): the file's text
 * without trailing white space (a final newline), which must be
 * MS_HTTP_TOKEN_MIN to MS_HTTP_TOKEN_MAX bytes of visible ASCII (0x21-0x7e)
 * on one line. A NUL, an inner line break or any other control byte is
 * refused with its offset, never cut: a token silently shortened, or one
 * that carries a header onto the next line, is worse than an error (the
 * API server's token files get the same rule in src/kube/). The token
 * (malloc'd) and *len, or NULL with err saying what is wrong, naming the
 * file. */
#define MS_HTTP_TOKEN_MIN 16
#define MS_HTTP_TOKEN_MAX 4096
char *ms_http_token_read(const char *path, size_t *len, char *err, size_t errlen);

/* The TLS versions both daemons serve (libmicrohttpd's GnuTLS priority
 * string): TLS 1.2 and 1.3, never 1.1, 1.0 or SSL 3 (RFC 8996). */
#define MS_HTTP_TLS_PRIORITIES "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2"

/* --- JSON written as text (jtext.c) -------------------------------------- */

/* For the hot paths that render the same shapes over and over (a job's JSON
 * on every GET and submission, the backend's inventory journal): appending
 * to one growable buffer costs a fraction of building a jansson tree and
 * dumping it (docs/performance.md).
 *
 * Appends never fail on their own: out of memory, the buffer remembers it
 * and ms_jtext_take returns NULL, so a renderer checks once at the end. */
typedef struct ms_jtext {
    char *p;                       /* len bytes, NUL-terminated when p != NULL */
    size_t len, cap;
    bool oom;                      /* an append ran out of memory */
} ms_jtext_t;

/* Empty it, keeping its memory (and forgetting an earlier failure). */
void ms_jtext_reset(ms_jtext_t *t);
void ms_jtext_free(ms_jtext_t *t);
void ms_jtext_add(ms_jtext_t *t, const char *p, size_t n);
void ms_jtext_raw(ms_jtext_t *t, const char *s);            /* s as it is */
void ms_jtext_int(ms_jtext_t *t, long long v);
/* v as jansson writes a real (17 significant digits, always a '.' or an
 * exponent, so it reads back as a real); null when not finite */
void ms_jtext_real(ms_jtext_t *t, double v);
/* s quoted as jansson quotes it: quotes, backslashes and control bytes
 * escaped (\n \t ... or \u00XX), the rest (UTF-8) as it is; NULL is
 * written as null */
void ms_jtext_str(ms_jtext_t *t, const char *s);
/* The text (malloc'd, NUL-terminated; the caller frees it) and t emptied;
 * NULL if an append failed. */
char *ms_jtext_take(ms_jtext_t *t);

/* The light scanner behind ms_jtext_member, for readers that take one
 * member of a body without building a tree (ext_names.c): each returns the
 * index after what starts at s[i] (blanks; a string, s[i] its quote; any
 * value, balanced), or MS_JTEXT_BAD when it is not closed within s[0..n)
 * or a string holds a raw control byte. Escapes are skipped, not checked. */
#define MS_JTEXT_BAD ((size_t)-1)
size_t ms_jtext_skip_ws(const char *s, size_t i, size_t n);
size_t ms_jtext_skip_string(const char *s, size_t i, size_t n);
size_t ms_jtext_skip_value(const char *s, size_t i, size_t n);

/* The span of the value of key `key` in the JSON object text s[0..n): *at
 * and *len; false when s is not a well-formed object (by a light scan:
 * balanced, strings closed, nothing after it) or has no such key at its top
 * level. Keys are compared as written, without unescaping. */
bool ms_jtext_member(const char *s, size_t n, const char *key, const char **at, size_t *len);

#endif
