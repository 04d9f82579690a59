/* agent_http.c - one HTTP exchange with a migsched-agent (agent_int.h):
 * libcurl, an easy handle per call, a deadline per call, an answer of at
 * most MS__AGENT_MAX_REPLY bytes. Any thread; no lock.
 */
#include <curl/curl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/agent_int.h"

typedef struct buf {
    char *p;
    size_t n;
    bool over;
} buf_t;

static size_t on_data(char *d, size_t sz, size_t nm, void *ctx)
{
    buf_t *b = ctx;
    size_t k = sz * nm;
    char *p;

    if (b->over || b->n + k > (size_t)MS__AGENT_MAX_REPLY) {
        b->over = true;
        return 0;
    }
    if ((p = realloc(b->p, b->n + k + 1)) == NULL)
        return 0;
    b->p = p;
    memcpy(b->p + b->n, d, k);
    b->n += k;
    b->p[b->n] = '\0';
    return k;
}

/* A timeout in milliseconds for curl: at least 1 (0 means none to curl). */
static long ms_of(double s)
{
    return s <= 0.001 ? 1L : s > 86400.0 ? 86400000L : (long)(s * 1000.0);
}

long ms__agent_call(const char *base, const char *auth, const char *method, const char *path,
                    json_t *body, double timeout_s, json_t **reply, bool *sent, ms_diag_t *why)
{
    CURL *c = curl_easy_init();
    struct curl_slist *hdr = NULL, *h2;
    char url[1024], *text = NULL;
    buf_t b = { NULL, 0, false };
    long code = 0;
    CURLcode rc;

    *reply = NULL;
    if (sent != NULL)
        *sent = false;
    if (c == NULL || (size_t)snprintf(url, sizeof(url), "%s%s", base, path) >= sizeof(url)) {
        ms_diag_set(why, NULL, 0, "", "out of memory or URL too long");
        curl_easy_cleanup(c);
        return 0;
    }
    if (body != NULL && (text = json_dumps(body, JSON_COMPACT)) == NULL) {
        ms_diag_set(why, NULL, 0, "", "out of memory");
        curl_easy_cleanup(c);
        return 0;
    }
    if ((h2 = curl_slist_append(hdr, "Content-Type: application/json")) != NULL)
        hdr = h2;
    if (auth != NULL && (h2 = curl_slist_append(hdr, auth)) != NULL)
        hdr = h2;
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, ms_of(timeout_s));
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, ms_of(timeout_s < 5.0 ? timeout_s : 5.0));
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdr);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
    if (text != NULL)
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, text);
    rc = curl_easy_perform(c);
    if (sent != NULL) {
        long req = 0;

        *sent = curl_easy_getinfo(c, CURLINFO_REQUEST_SIZE, &req) != CURLE_OK || req > 0;
    }
    if (rc != CURLE_OK) {
        ms_diag_set(why, NULL, 0, b.over ? "" : MS_BACKEND_UNREACHABLE, "agent %.120s: %s", base,
                    b.over ? "the answer is too large" : curl_easy_strerror(rc));
    } else {
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
        if (b.p != NULL) {
            json_error_t je;

            *reply = json_loads(b.p, 0, &je);
        }
    }
    curl_slist_free_all(hdr);
    curl_easy_cleanup(c);
    free(text);
    free(b.p);
    return code;
}
