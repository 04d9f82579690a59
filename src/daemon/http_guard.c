/* http_guard.c - deadlines for slow HTTP clients (http_guard.h). The
 * callbacks run on libmicrohttpd's threads, guard_main on the guard's own
 * thread; both only under g->mu (a leaf lock).
 *
 * Each connection waits in at most one list, by phase: HEAD (request line
 * and headers), IDLE (kept alive, no request yet) and BODY. Every entry of
 * a list got its deadline as "now + that phase's length", so a list is in
 * deadline order by construction: the thread looks at the heads only, and
 * its work is the connections it closes.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>

#include "daemon/daemon.h"
#include "daemon/http_guard.h"

enum { PH_HEAD, PH_IDLE, PH_BODY, PH_N, PH_NONE = PH_N, PH_DEAD };

typedef struct gconn {
    struct gconn *prev, *next;
    struct ms_http_guard *g;
    int phase;                     /* PH_*: the list it is in (PH_NONE, PH_DEAD: none) */
    double deadline;               /* ms_clock_mono() */
    MHD_socket fd;
} gconn_t;

typedef struct glist {
    gconn_t *head, *tail;
} glist_t;

struct ms_http_guard {
    pthread_mutex_t mu;
    pthread_cond_t cv;             /* CLOCK_MONOTONIC: stop */
    pthread_t th;
    bool stop;
    double len[PH_N];              /* each phase's length, s */
    glist_t list[PH_N];
    _Atomic uint64_t closed;
};

#define NAP_S 0.25                 /* the thread's longest sleep */

static void unlink_conn(ms_http_guard_t *g, gconn_t *k)
{
    glist_t *l;

    if (k->phase >= PH_N)
        return;
    l = &g->list[k->phase];
    if (k->prev != NULL)
        k->prev->next = k->next;
    else
        l->head = k->next;
    if (k->next != NULL)
        k->next->prev = k->prev;
    else
        l->tail = k->prev;
    k->prev = k->next = NULL;
}

/* Move k to phase ph (g->mu held): out of its list, onto the tail of ph's
 * with the deadline now + its length. A connection shut down stays so. */
static void set_phase(ms_http_guard_t *g, gconn_t *k, int ph)
{
    glist_t *l;

    if (k->phase == PH_DEAD || k->phase == ph)
        return;
    unlink_conn(g, k);
    k->phase = ph;
    if (ph >= PH_N)
        return;
    l = &g->list[ph];
    k->deadline = ms_clock_mono() + g->len[ph];
    k->prev = l->tail;
    if (l->tail != NULL)
        l->tail->next = k;
    else
        l->head = k;
    l->tail = k;
}

static gconn_t *conn_of(struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

    return ci != NULL ? ci->socket_context : NULL;
}

static void phase_of(struct MHD_Connection *c, int ph)
{
    gconn_t *k = conn_of(c);

    if (k == NULL)
        return;
    pthread_mutex_lock(&k->g->mu);
    set_phase(k->g, k, ph);
    pthread_mutex_unlock(&k->g->mu);
}

void ms_http_guard_notify(void *cls, struct MHD_Connection *c, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
    ms_http_guard_t *g = cls;
    gconn_t *k = *socket_context;

    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);

        if (ci == NULL || (k = calloc(1, sizeof(*k))) == NULL) {
            /* unguarded is unbounded: refuse it rather than serve it */
            if (ci != NULL)
                (void)shutdown(ci->connect_fd, SHUT_RDWR);
            return;
        }
        k->g = g;
        k->fd = ci->connect_fd;
        k->phase = PH_NONE;
        pthread_mutex_lock(&g->mu);
        set_phase(g, k, PH_HEAD);
        pthread_mutex_unlock(&g->mu);
        *socket_context = k;
        return;
    }
    if (k == NULL)
        return;
    /* CLOSED: before libmicrohttpd closes the socket, so the thread can
     * never shut down a descriptor that was reused meanwhile */
    pthread_mutex_lock(&g->mu);
    unlink_conn(g, k);
    pthread_mutex_unlock(&g->mu);
    free(k);
    *socket_context = NULL;
}

void *ms_http_guard_uri(void *cls, const char *uri, struct MHD_Connection *c)
{
    gconn_t *k = conn_of(c);

    (void)cls;
    (void)uri;
    if (k != NULL) {
        pthread_mutex_lock(&k->g->mu);
        if (k->phase == PH_IDLE)   /* a kept-alive connection's next request */
            set_phase(k->g, k, PH_HEAD);
        pthread_mutex_unlock(&k->g->mu);
    }
    return NULL;
}

void ms_http_guard_headers(struct MHD_Connection *c)
{
    phase_of(c, PH_BODY);
}

void ms_http_guard_request(struct MHD_Connection *c)
{
    phase_of(c, PH_NONE);
}

void ms_http_guard_completed(struct MHD_Connection *c)
{
    phase_of(c, PH_IDLE);
}

uint64_t ms_http_guard_closed(const ms_http_guard_t *g)
{
    return g != NULL ? atomic_load(&g->closed) : 0;
}

/* Shut down the connections past their deadline (g->mu held); the next
 * deadline, at most NAP_S away. */
static double expire(ms_http_guard_t *g, double now)
{
    double next = now + NAP_S;
    int ph;

    for (ph = 0; ph < PH_N; ph++) {
        gconn_t *k;

        while ((k = g->list[ph].head) != NULL && k->deadline <= now) {
            unlink_conn(g, k);
            k->phase = PH_DEAD;
            (void)shutdown(k->fd, SHUT_RDWR);
            atomic_fetch_add(&g->closed, 1);
        }
        if (k != NULL && k->deadline < next)
            next = k->deadline;
    }
    return next;
}

static void *guard_main(void *arg)
{
    ms_http_guard_t *g = arg;
    uint64_t told = 0;
    double last_log = 0;

    pthread_mutex_lock(&g->mu);
    while (!g->stop) {
        double now = ms_clock_mono(), next = expire(g, now), wait;
        uint64_t closed = atomic_load(&g->closed);
        struct timespec ts;

        if (closed != told && now - last_log >= 10.0) {
            /* one line at most every 10 s: the log is no lever for a flood */
            ms_log("warn", "closed slow connections (header or body deadline)",
                   json_pack("{s:I,s:I}", "since_last", (json_int_t)(closed - told), "total", (json_int_t)closed));
            told = closed;
            last_log = now;
        }
        wait = next - now > 0.001 ? next - now : 0.001;
        ts = ms_clock_after(CLOCK_MONOTONIC, wait);
        (void)pthread_cond_timedwait(&g->cv, &g->mu, &ts);
    }
    pthread_mutex_unlock(&g->mu);
    return NULL;
}

int ms_http_guard_start(ms_http_guard_t **out, double header_s, double body_s, double idle_s)
{
    ms_http_guard_t *g = calloc(1, sizeof(*g));
    pthread_condattr_t ca;
    bool mu = false, cv = false;

    *out = NULL;
    if (g == NULL || !(header_s > 0 && body_s > 0 && idle_s > 0))
        goto fail;
    g->len[PH_HEAD] = header_s;
    g->len[PH_BODY] = body_s;
    g->len[PH_IDLE] = idle_s;
    if (pthread_mutex_init(&g->mu, NULL) != 0)
        goto fail;
    mu = true;
    if (pthread_condattr_init(&ca) != 0)
        goto fail;
    cv = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) == 0 && pthread_cond_init(&g->cv, &ca) == 0;
    pthread_condattr_destroy(&ca);
    if (!cv || pthread_create(&g->th, NULL, guard_main, g) != 0)
        goto fail;
    *out = g;
    return 0;
fail:
    if (cv)
        pthread_cond_destroy(&g->cv);
    if (mu)
        pthread_mutex_destroy(&g->mu);
    free(g);
    return -1;
}

void ms_http_guard_stop(ms_http_guard_t *g)
{
    if (g == NULL)
        return;
    pthread_mutex_lock(&g->mu);
    g->stop = true;
    pthread_cond_signal(&g->cv);
    pthread_mutex_unlock(&g->mu);
    pthread_join(g->th, NULL);
    pthread_cond_destroy(&g->cv);
    pthread_mutex_destroy(&g->mu);
    free(g);
}
