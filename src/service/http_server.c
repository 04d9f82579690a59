/* http_server.c - the main thread: the HTTP front bound, started and
 * stopped (its requests are http.c's, on the HTTP threads), and the token
 * file read (at start-up and on SIGHUP).
 *
 * Stopping resumes everything first (libmicrohttpd must not be stopped
 * with suspended connections): no new connections, the long polls and
 * streams end, the requests in progress finish (at most 5 s), new
 * suspensions are refused, every suspended connection is resumed by what
 * it waits for (the loop still runs), then the server, the extender's
 * workers and the event timer stop.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "service/http_int.h"

/* libmicrohttpd's memory per connection (MHD_OPTION_CONNECTION_MEMORY_LIMIT):
 * it holds a request's headers, so they are limited to about this in all
 * (431 beyond, docs/api.md; Node.js's default is the same 16 KiB). It is
 * zeroed between requests: at 64 KiB that memset was a fifth of an HTTP
 * thread's time under a stream of GETs (docs/performance.md). */
#define CONN_POOL 16384
/* libmicrohttpd's idle timeout: a kept-alive connection with no request
 * for this long is closed (the guard holds it to the same, trickle or
 * not) */
#define IDLE_S 75

/* A TLS file (at most max bytes), or NULL after logging why, naming it. */
static char *slurp(const char *what, const char *path, size_t max)
{
    FILE *f;
    char *s = NULL;
    size_t n;
    const char *why = NULL;

    errno = 0;
    if ((f = fopen(path, "rb")) == NULL)
        why = strerror(errno != 0 ? errno : EIO);
    else if ((s = malloc(max + 1)) == NULL)
        why = "out of memory";
    else {
        errno = 0;
        n = fread(s, 1, max, f);
        if (ferror(f))
            why = strerror(errno != 0 ? errno : EIO);
        else if (n == max && fgetc(f) != EOF)
            why = "larger than 1 MiB";
        else
            s[n] = '\0';
    }
    if (f != NULL)
        fclose(f);
    if (why != NULL) {
        ms_log("error", "cannot read a TLS file", json_pack("{s:s,s:s,s:s}", "option", what, "file", path,
                                                            "why", why));
        free(s);
        return NULL;
    }
    return s;
}

/* At start-up an unusable token file stops the daemon; on SIGHUP it keeps
 * the token it has and says so (a typo in a rotation must not open the API
 * or lock every client out). */
int svc_token_load(svc_t *d)
{
    char err[512], *t;
    size_t n;
    bool reload;

    if (d->cfg->token_file == NULL)
        return 0;
    pthread_mutex_lock(&d->tmu);
    reload = d->token != NULL;
    pthread_mutex_unlock(&d->tmu);
    if ((t = ms_http_token_read(d->cfg->token_file, &n, err, sizeof(err))) == NULL) {
        ms_log("error", reload ? "SIGHUP: the token file is not usable; the previous token stays"
                               : "the token file is not usable",
               json_pack("{s:s,s:s}", "file", d->cfg->token_file, "why", err));
        return -1;
    }
    pthread_mutex_lock(&d->tmu);
    free(d->token);
    d->token = t;
    d->token_len = n;
    pthread_mutex_unlock(&d->tmu);
    return 0;
}

static void http_free(svc_http_t *h)
{
    ms_http_guard_stop(h->guard);   /* after the server: no connection is left */
    if (h->timer)
        svc_evtimer_stop(h->d);
    if (h->workers)
        svc_ext_workers_stop(h->d);
    free(h->cert);
    free(h->key);
    free(h);
}

int svc_http_listen(svc_t *d)
{
    struct sockaddr_in sa;
    int rc, fd, one = 1;

    d->listen_fd = -1;
    if ((rc = ms_http_parse_listen(d->cfg->listen, d->cfg->allow_remote, &sa)) != 0) {
        ms_log("error", rc == -2 ? "--listen: not a loopback address (give --allow-remote to listen on it)"
                                  : "--listen: HOST:PORT with an IPv4 address or localhost",
                json_pack("{s:s}", "listen", d->cfg->listen));
        return -1;
    }
    if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) < 0 ||
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
        bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(fd, SOMAXCONN) != 0) {
        ms_log("error", "cannot listen", json_pack("{s:s,s:s}", "listen", d->cfg->listen, "why", strerror(errno)));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    d->listen_fd = fd;
    return 0;
}

int svc_http_start(svc_t *d, svc_http_t **out)
{
    svc_http_t *h = calloc(1, sizeof(*h));
    /* one epoll thread (a pool of them with --http-threads N > 1); the
     * suspended connections are resumed through its inter-thread channel */
    unsigned flags = MHD_USE_EPOLL_INTERNAL_THREAD | MHD_USE_ERROR_LOG | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ITC;
    /* a pool only for N > 1 (libmicrohttpd warns about a pool of 0 or 1),
     * then TLS's options when it serves HTTPS */
    struct MHD_OptionItem opts[5];
    const svc_cfg_t *cfg = d->cfg;
    int k = 0;

    *out = NULL;
    if (h == NULL)
        return -1;
    h->d = d;
    if (d->listen_fd < 0) {   /* svc_http_listen comes first, before start-up */
        ms_log("error", "no socket to serve: svc_http_listen was not called", NULL);
        http_free(h);
        return -1;
    }
    if (cfg->http_threads > 1)
        opts[k++] = (struct MHD_OptionItem){ MHD_OPTION_THREAD_POOL_SIZE, cfg->http_threads, NULL };
    if (cfg->tls_cert != NULL || cfg->tls_key != NULL) {
        if (cfg->tls_cert == NULL || cfg->tls_key == NULL) {
            ms_log("error", "TLS needs both --tls-cert and --tls-key", NULL);
            http_free(h);
            return -1;
        }
        if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
            ms_log("error", "this libmicrohttpd is built without TLS", NULL);
            http_free(h);
            return -1;
        }
        if ((h->cert = slurp("--tls-cert", cfg->tls_cert, 1 << 20)) == NULL ||
            (h->key = slurp("--tls-key", cfg->tls_key, 1 << 20)) == NULL) {
            http_free(h);
            return -1;
        }
        flags |= MHD_USE_TLS;
        opts[k++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_CERT, 0, h->cert };
        opts[k++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_KEY, 0, h->key };
        /* TLS 1.2 at least: libmicrohttpd's default ("NORMAL") still
         * negotiated 1.0 and 1.1 */
        opts[k++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_PRIORITIES, 0, (void *)MS_HTTP_TLS_PRIORITIES };
    }
    opts[k] = (struct MHD_OptionItem){ MHD_OPTION_END, 0, NULL };
    if (ms_http_guard_start(&h->guard, cfg->header_timeout_s, cfg->body_timeout_s, (double)IDLE_S) != 0) {
        ms_log("error", "cannot start the HTTP deadline thread", NULL);
        http_free(h);
        return -1;
    }
    if (svc_ext_workers_start(d) != 0) {
        ms_log("error", "cannot start the HTTP workers", NULL);
        http_free(h);
        return -1;
    }
    h->workers = true;
    if (svc_evtimer_start(d) != 0) {
        ms_log("error", "cannot start the event timer", NULL);
        http_free(h);
        return -1;
    }
    h->timer = true;
    h->mhd = MHD_start_daemon(flags, 0, NULL, NULL, svc_http_handler, h, MHD_OPTION_LISTEN_SOCKET, d->listen_fd,
                              MHD_OPTION_ARRAY, opts, MHD_OPTION_CONNECTION_LIMIT, (unsigned)cfg->max_conns,
                              MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)cfg->max_conns_per_ip,
                              MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)IDLE_S, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
                              (size_t)CONN_POOL, MHD_OPTION_NOTIFY_COMPLETED, svc_http_completed, h,
                              MHD_OPTION_NOTIFY_CONNECTION, ms_http_guard_notify, h->guard,
                              MHD_OPTION_URI_LOG_CALLBACK, ms_http_guard_uri, h->guard, MHD_OPTION_END);
    if (h->mhd == NULL) {
        ms_log("error", "cannot serve HTTP", json_pack("{s:s}", "listen", cfg->listen));
        http_free(h);
        return -1;   /* the socket stays d's: main closes it */
    }
    d->listen_fd = -1;   /* libmicrohttpd closes it when it stops */
    *out = h;
    return 0;
}

static void nap(void)
{
    struct timespec ts = { 0, 10000000L };

    nanosleep(&ts, NULL);
}

/* Stop accepting; end the long polls and streams; let the requests in
 * progress finish (at most 5 s; a keep-alive client may go on sending);
 * then refuse new suspensions, wait for every suspended connection to be
 * resumed (the loop still runs, so the replies come) and stop. */
void svc_http_stop(svc_http_t *h)
{
    const svc_clock_t *clk;
    double t0;
    MHD_socket s;

    if (h == NULL)
        return;
    clk = h->d->clock;
    t0 = svc_clock_mono(clk);
    s = MHD_quiesce_daemon(h->mhd);
    svc_events_wake(h->d);
    while (atomic_load(&h->inflight) > 0 && svc_clock_mono(clk) - t0 < 5.0)
        nap();
    atomic_store(&h->closing, true);
    while (atomic_load(&h->pending) > 0 || svc_events_parked(h->d) > 0)
        nap();
    /* the last resumed ones send their answers */
    t0 = svc_clock_mono(clk);
    while (atomic_load(&h->inflight) > 0 && svc_clock_mono(clk) - t0 < 1.0)
        nap();
    MHD_stop_daemon(h->mhd);
    if (s != MHD_INVALID_SOCKET)
        close(s);
    http_free(h);
}
