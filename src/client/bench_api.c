/* bench_api.c - `migsched bench-api`: a bounded load generator for
 * migschedd on loopback. C client threads (one keep-alive connection each)
 * submit R jobs in all (POST /v1/jobs, each acknowledged only once durable),
 * then read them back (GET /v1/jobs/{id}); it reports requests per second
 * and latency percentiles for both. Figures, not a test: it never fails on
 * time.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>

#include "client/client.h"
#include "migsched/number.h"

/* An option value in [lo, hi], in the library's number syntax (number.h). */
static bool num(const char *s, long lo, long hi, long *out)
{
    int64_t v;

    if (ms_number_int(s, lo, hi, &v) != MS_OK)
        return false;
    *out = (long)v;
    return true;
}

typedef struct worker {
    const char *server, *prefix, *profile;
    long from, to;            /* job numbers [from, to) */
    bool get;
    double *lat;              /* [to - from] */
    long errors;
    pthread_t th;
} worker_t;

static double mono(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static size_t sink(char *p, size_t size, size_t n, void *ctx)
{
    (void)p;
    (void)ctx;
    return size * n;
}

static void *run(void *arg)
{
    worker_t *w = arg;
    CURL *h = curl_easy_init();
    struct curl_slist *hdr = curl_slist_append(NULL, "Content-Type: application/json");
    char url[512], body[512];
    long i, code;

    if (h == NULL || hdr == NULL) {
        w->errors = w->to - w->from;
        curl_easy_cleanup(h);
        curl_slist_free_all(hdr);
        return NULL;
    }
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, sink);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_TIMEOUT, 60L);
    for (i = w->from; i < w->to; i++) {
        double t0 = mono();

        if (w->get) {
            snprintf(url, sizeof(url), "%s/v1/jobs/%s-%ld", w->server, w->prefix, i);
            curl_easy_setopt(h, CURLOPT_URL, url);
            curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
        } else {
            snprintf(url, sizeof(url), "%s/v1/jobs", w->server);
            snprintf(body, sizeof(body), "{\"id\":\"%s-%ld\",\"profile\":\"%s\",\"duration_s\":1}", w->prefix, i,
                     w->profile);
            curl_easy_setopt(h, CURLOPT_URL, url);
            curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
            curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
        }
        if (curl_easy_perform(h) != CURLE_OK || curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code) != CURLE_OK ||
            code >= 300)
            w->errors++;
        w->lat[i - w->from] = mono() - t0;
    }
    curl_slist_free_all(hdr);
    curl_easy_cleanup(h);
    return NULL;
}

/* The daemon's loop counters (migsched_loop_*), to split where the time
 * went independently of what else runs on the machine. */
typedef struct loopstat {
    double batches, msgs, wait, decide, commit, reply, syncs, sync;
    bool ok;
} loopstat_t;

typedef struct membuf {
    char *s;
    size_t n;
    bool oom;
} membuf_t;

static size_t keep(char *p, size_t size, size_t n, void *ctx)
{
    membuf_t *b = ctx;
    char *s;

    if (b->oom || (s = realloc(b->s, b->n + size * n + 1)) == NULL) {
        b->oom = true;
        return size * n;
    }
    memcpy(s + b->n, p, size * n);
    b->n += size * n;
    s[b->n] = '\0';
    b->s = s;
    return size * n;
}

static double metric(const char *text, const char *name)
{
    const char *p = text;
    size_t k = strlen(name);

    while ((p = strstr(p, name)) != NULL) {
        if ((p == text || p[-1] == '\n') && (p[k] == ' ' || p[k] == '\0'))
            return strtod(p + k, NULL);
        p += k;
    }
    return 0;
}

static loopstat_t loop_stats(const char *server)
{
    loopstat_t s = { 0, 0, 0, 0, 0, 0, 0, 0, false };
    CURL *h = curl_easy_init();
    membuf_t b = { NULL, 0, false };
    char url[512];

    if (h == NULL)
        return s;
    snprintf(url, sizeof(url), "%s/metrics", server);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, keep);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_TIMEOUT, 30L);
    if (curl_easy_perform(h) == CURLE_OK && !b.oom && b.s != NULL &&
        strstr(b.s, "migsched_loop_batches_total") != NULL) {
        s.batches = metric(b.s, "migsched_loop_batches_total");
        s.msgs = metric(b.s, "migsched_loop_messages_total");
        s.wait = metric(b.s, "migsched_loop_seconds_total{phase=\"queue_wait\"}");
        s.decide = metric(b.s, "migsched_loop_seconds_total{phase=\"decide\"}");
        s.commit = metric(b.s, "migsched_loop_seconds_total{phase=\"commit\"}");
        s.reply = metric(b.s, "migsched_loop_seconds_total{phase=\"reply\"}");
        s.syncs = metric(b.s, "migsched_store_syncs_total");
        s.sync = metric(b.s, "migsched_store_sync_seconds_total");
        s.ok = true;
    }
    free(b.s);
    curl_easy_cleanup(h);
    return s;
}

static void loop_report(const char *name, loopstat_t a, loopstat_t z)
{
    double nb = z.batches - a.batches, nm = z.msgs - a.msgs, ns = z.syncs - a.syncs;

    if (!a.ok || !z.ok || nb <= 0 || nm <= 0)
        return;
    printf("%-6s loop: %.0f batches, %.1f messages a batch; a batch: decide %.3f ms, commit %.3f ms, "
           "reply %.3f ms; a message waits %.3f ms in the queue\n",
           name, nb, nm / nb, (z.decide - a.decide) / nb * 1e3, (z.commit - a.commit) / nb * 1e3,
           (z.reply - a.reply) / nb * 1e3, (z.wait - a.wait) / nm * 1e3);
    if (ns > 0)
        printf("%-6s store: %.0f fsyncs (off the loop), %.3f ms each, %.1f batches each\n", name, ns,
               (z.sync - a.sync) / ns * 1e3, nb / ns);
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

static int phase(const char *name, const char *server, const char *prefix, const char *profile, long clients,
                 long total, bool get)
{
    worker_t *w = calloc((size_t)clients, sizeof(*w));
    double *all = malloc((size_t)total * sizeof(*all)), t0, dt;
    long c, errors = 0, per = total / clients, k = 0;

    if (w == NULL || all == NULL) {
        free(w);
        free(all);
        return 1;
    }
    t0 = mono();
    for (c = 0; c < clients; c++) {
        w[c].server = server;
        w[c].prefix = prefix;
        w[c].profile = profile;
        w[c].from = c * per;
        w[c].to = c == clients - 1 ? total : (c + 1) * per;
        w[c].get = get;
        w[c].lat = all + w[c].from;
        if (pthread_create(&w[c].th, NULL, run, &w[c]) != 0) {
            fprintf(stderr, "migsched bench-api: cannot start client threads\n");
            return 1;   /* threads already started are left to the exit */
        }
    }
    for (c = 0; c < clients; c++) {
        pthread_join(w[c].th, NULL);
        errors += w[c].errors;
    }
    dt = mono() - t0;
    k = total;
    qsort(all, (size_t)k, sizeof(*all), cmp);
    printf("%-6s %8ld requests  %3ld clients  %8.0f req/s  p50 %7.2f ms  p99 %7.2f ms  max %7.2f ms  errors %ld\n",
           name, total, clients, (double)total / dt, all[k / 2] * 1e3, all[(k * 99) / 100] * 1e3,
           all[k - 1] * 1e3, errors);
    free(w);
    free(all);
    return errors > 0;
}

int ms_cli_bench_api(int argc, char **argv)
{
    const char *server = "http://127.0.0.1:7070", *profile = "1g";
    char prefix[64];
    long clients = 64, total = 20000;
    int i, rc;

    snprintf(prefix, sizeof(prefix), "bench%ld", (long)time(NULL));
    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--server") == 0 && i + 1 < argc)
            server = argv[++i];
        else if (strcmp(argv[i], "--clients") == 0 && i + 1 < argc && num(argv[i + 1], 1, 1024, &clients))
            i++;
        else if (strcmp(argv[i], "--requests") == 0 && i + 1 < argc && num(argv[i + 1], 1, 10000000, &total))
            i++;
        else if (strcmp(argv[i], "--profile") == 0 && i + 1 < argc)
            profile = argv[++i];
        else if (strcmp(argv[i], "--prefix") == 0 && i + 1 < argc)
            snprintf(prefix, sizeof(prefix), "%s", argv[++i]);
        else {
            fprintf(stderr, "usage: migsched bench-api [--server URL] [--clients 1..1024 (64)] [--requests N (20000)]\n"
                            "                          [--profile P (1g)] [--prefix ID-PREFIX]\n"
                            "  submits N jobs from C concurrent clients, then GETs each; prints req/s and latency\n");
            return strcmp(argv[i], "--help") == 0 ? 0 : 2;
        }
    }
    if (clients > total)
        clients = total;
    curl_global_init(CURL_GLOBAL_DEFAULT);
    {
        loopstat_t a = loop_stats(server), z;

        rc = phase("POST", server, prefix, profile, clients, total, false);
        z = loop_stats(server);
        loop_report("POST", a, z);
        rc |= phase("GET", server, prefix, profile, clients, total, true);
    }
    curl_global_cleanup();
    return rc;
}
