/* http_util.h - HTTP plumbing shared by migschedd (src/service/http.c) and
 * migsched-agent (src/agent/http.c): a request body collected up to a
 * limit, the --listen address rule, and the bearer-token comparison. */
#ifndef MIGSCHED_SVC_HTTP_UTIL_H
#define MIGSCHED_SVC_HTTP_UTIL_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>

/* A request body: buf is NUL-terminated; too_big once it passed the limit
 * (then the bytes are dropped and buf is NULL). */
typedef struct svc_http_body {
    char *buf;
    size_t len, cap;
    bool too_big;
} svc_http_body_t;

/* Append n bytes, keeping at most max; 0, or -1 out of memory. */
int svc_http_body_add(svc_http_body_t *b, const char *data, size_t n, size_t max);
void svc_http_body_free(svc_http_body_t *b);

/* "HOST:PORT" (an IPv4 address or localhost, port 1..65535) into *sa: 0,
 * -1 malformed, -2 not loopback while allow_remote is false. */
int svc_http_parse_listen(const char *s, bool allow_remote, struct sockaddr_in *sa);

/* Does the Authorization header value carry "Bearer TOKEN" for this token?
 * Constant time in the token's length: no early exit on a mismatch. */
bool svc_http_bearer_ok(const char *header, const char *token, size_t token_len);

#endif
