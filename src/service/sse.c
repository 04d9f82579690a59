/* sse.c - the HTTP threads: GET /v1/events/stream, the job state changes
 * as Server-Sent Events (text/event-stream), the push form of the long poll
 * GET /v1/events.
 *
 * Each event is
 *     id: SEQ
 *     event: job
 *     data: {"seq":SEQ,"t":...,"job":"...","state":"..."}
 * followed by a blank line; `id` is the event's sequence number, so a client
 * that reconnects with `Last-Event-ID: SEQ` (every EventSource does) gets
 * exactly the events after SEQ: none lost, none twice. Only committed events
 * are sent (the ring's published part, as for the long poll). When the ring
 * no longer holds the next event the stream says so once (`event:
 * truncated`, the first seq it still has) and goes on from there. A comment
 * line (": heartbeat") every heartbeat seconds keeps proxies and dead-peer
 * detection going.
 *
 * The content reader never blocks (one HTTP thread serves every
 * connection): with nothing to send it suspends its connection and parks it
 * on the event ring (svc_events_park) until there is something to send, a
 * heartbeat is due (the ring's timer thread), or the daemon stops (then the
 * stream ends). `?limit=N` ends the stream after N events (scripts, tests). The
 * number of open streams is bounded (svc_sse_max); one more is a 503.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <microhttpd.h>

#include "service/svc.h"
#include "service/sse.h"

typedef struct sse {
    svc_t *d;
    struct MHD_Connection *c;
    svc_ewait_t w;                 /* parked while there is nothing to send */
    atomic_int *open;              /* the streams counter, decremented on free */
    uint64_t next;                 /* seq of the next event to send */
    double heartbeat_s;
    double hb_due;                 /* the clock's mono: a heartbeat then, unless something was sent */
    uint64_t limit, sent;          /* end after limit events (0: never) */
    bool said_truncated;
    char out[2048];                /* formatted, not yet handed to MHD */
    size_t olen, opos;
} sse_t;

/* Escape a job id for the JSON of data: ids are [A-Za-z0-9-_.:], states are
 * names, so nothing needs escaping; checked anyway, since the ring's text is
 * the loop's. */
static bool plain(const char *s)
{
    for (; *s != '\0'; s++)
        if (*s == '"' || *s == '\\' || (unsigned char)*s < 0x20)
            return false;
    return true;
}

/* Under the ring's lock: format what there is to send into s->out. */
static void fill(sse_t *s)
{
    svc_t *d = s->d;
    size_t n = 0;

    if (s->next < d->ev.first) {
        if (!s->said_truncated) {
            int k = snprintf(s->out, sizeof(s->out),
                             "event: truncated\ndata: {\"since\":%" PRIu64 ",\"first\":%" PRIu64 "}\n\n",
                             s->next, d->ev.first);

            n = k > 0 && (size_t)k < sizeof(s->out) ? (size_t)k : 0;
            s->said_truncated = true;
        }
        s->next = d->ev.first;
    }
    while (s->next < d->ev.pub && (s->limit == 0 || s->sent < s->limit)) {
        const svc_event_t *e = &d->ev.ring[s->next % SVC_EVENTS];
        char line[512];
        int k;

        if (!plain(e->job) || !plain(e->state) || !plain(e->by))
            k = snprintf(line, sizeof(line), "id: %" PRIu64 "\nevent: job\ndata: {\"seq\":%" PRIu64 "}\n\n",
                         e->seq, e->seq);
        else   /* "by" on a "preempted" (the preemptor) or "over-limit" (the tenant) */
            k = snprintf(line, sizeof(line),
                         "id: %" PRIu64 "\nevent: job\ndata: {\"seq\":%" PRIu64
                         ",\"t\":%.6f,\"job\":\"%s\",\"state\":\"%s\"%s%s%s}\n\n",
                         e->seq, e->seq, e->t, e->job, e->state, e->by[0] ? ",\"by\":\"" : "", e->by,
                         e->by[0] ? "\"" : "");
        if (k <= 0 || (size_t)k >= sizeof(line) || n + (size_t)k > sizeof(s->out))
            break;   /* the rest on the next call (a line always fits an empty buffer) */
        memcpy(s->out + n, line, (size_t)k);
        n += (size_t)k;
        s->next++;
        s->sent++;
    }
    s->olen = n;
    s->opos = 0;
}

void svc_conn_suspend(void *conn)
{
    MHD_suspend_connection(conn);
}

void svc_conn_wake(svc_ewait_t *w)
{
    MHD_resume_connection(w->arg);
}

static ssize_t reader(void *cls, uint64_t pos, char *buf, size_t max)
{
    sse_t *s = cls;
    svc_t *d = s->d;
    size_t k;

    (void)pos;
    if (s->opos == s->olen && s->limit > 0 && s->sent >= s->limit)
        return MHD_CONTENT_READER_END_OF_STREAM;
    while (s->opos == s->olen) {
        bool stop;

        pthread_mutex_lock(&d->ev.mu);
        stop = d->ev.stop;
        if (!stop)
            fill(s);
        pthread_mutex_unlock(&d->ev.mu);
        if (stop)
            return MHD_CONTENT_READER_END_OF_STREAM;
        if (s->olen > 0)
            break;
        if (svc_clock_mono(d->clock) >= s->hb_due) {
            static const char hb[] = ": heartbeat\n\n";

            memcpy(s->out, hb, sizeof(hb) - 1);
            s->olen = sizeof(hb) - 1;
            break;
        }
        s->w.since = s->next;
        s->w.deadline = s->hb_due;
        if (svc_events_park(d, &s->w, svc_conn_suspend, svc_clock_mono(d->clock)))
            return 0;   /* suspended: called again once woken */
        /* something came, or the heartbeat is due, or the daemon stops */
    }
    s->hb_due = svc_clock_mono(d->clock) + s->heartbeat_s;
    k = s->olen - s->opos < max ? s->olen - s->opos : max;
    memcpy(buf, s->out + s->opos, k);
    s->opos += k;
    return (ssize_t)k;
}

static void reader_free(void *cls)
{
    sse_t *s = cls;

    atomic_fetch_sub(s->open, 1);
    free(s);
}

int svc_sse_max(const svc_t *d)
{
    int n = d->cfg->max_conns / 4;

    return n < 1 ? 1 : n > 64 ? 64 : n;
}

struct MHD_Response *svc_sse_response(svc_t *d, struct MHD_Connection *c, atomic_int *open, uint64_t since,
                                      double heartbeat_s, uint64_t limit)
{
    struct MHD_Response *r;
    sse_t *s;

    if (atomic_fetch_add(open, 1) >= svc_sse_max(d)) {
        atomic_fetch_sub(open, 1);
        return NULL;
    }
    if ((s = calloc(1, sizeof(*s))) == NULL) {
        atomic_fetch_sub(open, 1);
        return NULL;
    }
    s->d = d;
    s->c = c;
    s->w.wake = svc_conn_wake;
    s->w.arg = c;
    s->open = open;
    s->next = since;
    s->heartbeat_s = heartbeat_s;
    s->hb_due = svc_clock_mono(d->clock) + heartbeat_s;
    s->limit = limit;
    /* a first comment, so the client sees the stream open at once */
    s->olen = (size_t)snprintf(s->out, sizeof(s->out), ": migschedd events from %" PRIu64 "\nretry: 1000\n\n",
                               since);
    r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, sizeof(s->out), reader, s, reader_free);
    if (r == NULL) {
        reader_free(s);
        return NULL;
    }
    MHD_add_response_header(r, "Content-Type", "text/event-stream");
    MHD_add_response_header(r, "Cache-Control", "no-store");
    MHD_add_response_header(r, "X-Accel-Buffering", "no");
    return r;
}
