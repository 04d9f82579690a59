/* http_util.c - HTTP plumbing shared by migschedd and migsched-agent
 * (daemon.h). Any thread. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/daemon.h"

int ms_http_body_add(ms_http_body_t *b, const char *data, size_t n, size_t max)
{
    if (!b->too_big && b->len + n > max) {
        b->too_big = true;
        free(b->buf);
        b->buf = NULL;
        b->len = b->cap = 0;
    }
    if (b->too_big)
        return 0;
    if (b->len + n + 1 > b->cap) {
        size_t cap = (b->len + n + 1) * 2;
        char *nb = realloc(b->buf, cap);

        if (nb == NULL)
            return -1;
        b->buf = nb;
        b->cap = cap;
    }
    memcpy(b->buf + b->len, data, n);
    b->len += n;
    b->buf[b->len] = '\0';
    return 0;
}

void ms_http_body_free(ms_http_body_t *b)
{
    free(b->buf);
    b->buf = NULL;
    b->len = b->cap = 0;
}

int ms_http_parse_listen(const char *s, bool allow_remote, struct sockaddr_in *sa)
{
    const char *colon = strrchr(s, ':');
    char host[64], *end;
    long port;

    memset(sa, 0, sizeof(*sa));
    if (colon == NULL || (size_t)(colon - s) >= sizeof(host))
        return -1;
    errno = 0;
    port = strtol(colon + 1, &end, 10);
    if (colon[1] == '\0' || *end != '\0' || errno != 0 || port < 1 || port > 65535)
        return -1;
    memcpy(host, s, (size_t)(colon - s));
    host[colon - s] = '\0';
    if (strcmp(host, "localhost") == 0)
        snprintf(host, sizeof(host), "127.0.0.1");
    sa->sin_family = AF_INET;
    sa->sin_port = htons((uint16_t)port);
    if (inet_pton(AF_INET, host, &sa->sin_addr) != 1)
        return -1;
    if (!allow_remote && (ntohl(sa->sin_addr.s_addr) >> 24) != 127)
        return -2;
    return 0;
}

bool ms_http_bearer_ok(const char *h, const char *token, size_t token_len)
{
    size_t i, n;
    unsigned diff;

    if (h == NULL || strncmp(h, "Bearer ", 7) != 0)
        return false;
    h += 7;
    n = strlen(h);
    diff = (unsigned)(n ^ token_len);
    for (i = 0; i < token_len; i++)
        diff |= (unsigned)((unsigned char)token[i] ^ (unsigned char)(i < n ? h[i] : 0));
    return diff == 0;
}

char *ms_http_token_read(const char *path, size_t *len, char *err, size_t errlen)
{
    /* room for the longest token and some trailing white space */
    const size_t cap = MS_HTTP_TOKEN_MAX + 64;
    FILE *f;
    char *t = NULL;
    size_t n, i;

    errno = 0;
    if ((f = fopen(path, "rb")) == NULL) {
        snprintf(err, errlen, "the token file %s: %s", path, strerror(errno != 0 ? errno : EIO));
        return NULL;
    }
    if ((t = malloc(cap + 1)) == NULL) {
        snprintf(err, errlen, "the token file %s: out of memory", path);
        fclose(f);
        return NULL;
    }
    errno = 0;
    n = fread(t, 1, cap, f);
    if (ferror(f)) {   /* a directory (EISDIR), an I/O error: not an empty token */
        snprintf(err, errlen, "the token file %s: %s", path, strerror(errno != 0 ? errno : EIO));
        goto fail;
    }
    if (n == cap && fgetc(f) != EOF) {
        snprintf(err, errlen, "the token file %s is larger than %d bytes", path, MS_HTTP_TOKEN_MAX);
        goto fail;
    }
    fclose(f);
    f = NULL;
    t[n] = '\0';
    while (n > 0 && (t[n - 1] == '\n' || t[n - 1] == '\r' || t[n - 1] == ' ' || t[n - 1] == '\t'))
        t[--n] = '\0';
    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)t[i];

        if (c < 0x21 || c > 0x7e) {
            snprintf(err, errlen, "the token file %s: byte %zu is 0x%02x; a token is visible ASCII on one line",
                     path, i + 1, c);
            goto fail;
        }
    }
    if (n < MS_HTTP_TOKEN_MIN || n > MS_HTTP_TOKEN_MAX) {
        snprintf(err, errlen, "the token file %s holds %zu characters; a token has %d to %d", path, n,
                 MS_HTTP_TOKEN_MIN, MS_HTTP_TOKEN_MAX);
        goto fail;
    }
    *len = n;
    return t;
fail:
    if (f != NULL)
        fclose(f);
    free(t);
    return NULL;
}
