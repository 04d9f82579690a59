/* metrics.c - histograms and HTTP counters for /metrics (render.c writes the
 * exposition). Any thread: the HTTP counters under their mutex, the loop's
 * histograms by the loop alone. Buckets: job waits like Kueue's admission wait (1 s, then
 * 2.5 x 2^k up to 40960 s); HTTP durations from 0.5 ms to 5 s, by route.
 */
#include <string.h>

#include "service/svc.h"

const char *const svc_rt_method[SVC_RT_N] = {
    "other", "POST", "GET", "GET", "DELETE", "POST", "GET", "GET", "GET", "GET", "GET", "GET", "GET", "POST", "GET",
    "POST", "POST",
};
const char *const svc_rt_path[SVC_RT_N] = {
    "other", "/v1/jobs", "/v1/jobs", "/v1/jobs/{id}", "/v1/jobs/{id}", "/v1/jobs/{id}/done", "/v1/events",
    "/v1/events/stream", "/v1/cluster", "/metrics", "/healthz", "/readyz", "/", "/extender/filter",
    "/v1/tenants", "/extender/prioritize", "/extender/bind",
};

void svc_hist_init(svc_hist_t *h, const double *le, int n)
{
    memset(h, 0, sizeof(*h));
    h->n = n < SVC_HIST_MAX ? n : SVC_HIST_MAX;
    memcpy(h->le, le, (size_t)h->n * sizeof(*le));
}

void svc_hist_add(svc_hist_t *h, double v)
{
    int i;

    for (i = 0; i < h->n && v > h->le[i]; i++)
        ;
    if (i < h->n)
        h->bucket[i]++;
    h->count++;
    h->sum += v;
}

void svc_metrics_init(svc_metrics_t *m)
{
    static const double wait[] = { 1, 2.5, 5, 10, 20, 40, 80, 160, 320, 640, 1280, 2560, 5120, 10240,
                                   20480, 40960 };
    /* edges at the API's latency targets (2 ms a read, 10 ms a submission) */
    static const double http[] = { 0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5,
                                   1, 2.5, 5 };

    int r;

    memset(m, 0, sizeof(*m));
    svc_hist_init(&m->wait, wait, (int)(sizeof(wait) / sizeof(wait[0])));
    for (r = 0; r < SVC_RT_N; r++)
        svc_hist_init(&m->http_dur[r], http, (int)(sizeof(http) / sizeof(http[0])));
    pthread_mutex_init(&m->http_mu, NULL);
}

void svc_metrics_destroy(svc_metrics_t *m)
{
    pthread_mutex_destroy(&m->http_mu);
}

void svc_metrics_http(svc_metrics_t *m, int code, int route, double secs)
{
    pthread_mutex_lock(&m->http_mu);
    if (code >= 100 && code < 600)
        m->http_codes[code]++;
    svc_hist_add(&m->http_dur[route >= 0 && route < SVC_RT_N ? route : SVC_RT_OTHER], secs);
    pthread_mutex_unlock(&m->http_mu);
}
