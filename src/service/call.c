/* call.c - messages to the loop and their answers (svc.h). The posting
 * functions run on any thread; svc_msg_answer on the syncer's (the reply
 * path of the message table); the svc_reply_* setters on the loop's.
 *
 * A caller that may block (an extender worker, the pod watch, kctl) waits
 * in svc_call on its own condition variable, so answering a batch wakes
 * exactly its callers (one broadcast woke every waiting thread for every
 * batch: 64 threads on two cores, most of them back to sleep). An HTTP
 * thread never waits: svc_call_async's callback resumes its connection.
 */
#include <stdlib.h>
#include <string.h>

#include "service/extender.h"
#include "service/svc.h"

void svc_msg_free(svc_msg_t *m)
{
    if (m == NULL)
        return;
    free(m->id);
    svc_req_free(&m->req);
    free(m->canon);
    free(m->q_state);
    free(m->q_label);
    free(m->q_cursor);
    svc_ext_msg_free(m->ext);
    free(m->rview.reason);
    free(m->rview.resolved);
    free(m->body);
    free(m->why);
    free(m);
}

void svc_post(svc_t *d, svc_msg_t *m)
{
    m->t_enq = svc_clock_mono(d->clock);
    if (svc_queue_push(&d->loop.q, &m->link) != 0)
        svc_msg_free(m);   /* the loop has stopped: an outcome no one would read */
}

void svc_call(svc_t *d, svc_msg_t *m)
{
    svc_waiter_t w;

    memset(&w, 0, sizeof(w));
    if (pthread_mutex_init(&w.mu, NULL) != 0) {
        m->status = 503;
        m->body = strdup("{\"error\":{\"message\":\"out of resources\"}}");
        return;
    }
    if (pthread_cond_init(&w.cv, NULL) != 0) {
        pthread_mutex_destroy(&w.mu);
        m->status = 503;
        m->body = strdup("{\"error\":{\"message\":\"out of resources\"}}");
        return;
    }
    m->t_enq = svc_clock_mono(d->clock);
    m->waiter = &w;
    m->on_reply = NULL;
    if (svc_queue_push(&d->loop.q, &m->link) != 0) {
        m->waiter = NULL;
        m->status = 503;
        m->body = strdup("{\"error\":{\"message\":\"shutting down\"}}");
    } else {
        pthread_mutex_lock(&w.mu);
        while (!w.done)
            pthread_cond_wait(&w.cv, &w.mu);
        pthread_mutex_unlock(&w.mu);
        m->waiter = NULL;
    }
    pthread_mutex_destroy(&w.mu);
    pthread_cond_destroy(&w.cv);
}

int svc_call_async(svc_t *d, svc_msg_t *m, void (*fn)(svc_msg_t *m), void *arg)
{
    m->t_enq = svc_clock_mono(d->clock);
    m->on_reply = fn;
    m->reply_arg = arg;
    m->waiter = NULL;
    return svc_queue_push(&d->loop.q, &m->link);
}

void svc_msg_answer(svc_msg_t *m)
{
    svc_waiter_t *w = m->waiter;

    m->link.next = NULL;
    if (m->on_reply != NULL) {
        m->on_reply(m);   /* m is the caller's from here */
        return;
    }
    if (w != NULL) {
        /* under w's lock: the waiter cannot return (and free w and m)
         * before the signal; neither is touched after the unlock */
        pthread_mutex_lock(&w->mu);
        w->done = true;
        pthread_cond_signal(&w->cv);
        pthread_mutex_unlock(&w->mu);
    }
}

void svc_reply_json(svc_msg_t *m, int status, json_t *o)
{
    m->status = status;
    m->body = o != NULL ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    if (m->body == NULL) {
        m->status = 500;
        m->body = strdup("{\"error\":{\"message\":\"out of memory\"}}");
    }
}

/* The HTTP thread renders the job, off the loop. */
void svc_reply_view(svc_msg_t *m, int status, svc_job_t *j)
{
    if (svc_jview_of(j, &m->rview) != 0) {
        m->status = 500;
        m->body = strdup("{\"error\":{\"message\":\"out of memory\"}}");
        return;
    }
    m->status = status;
    m->rjob = j;
}

void svc_reply_err(svc_msg_t *m, int status, const char *field, const char *msg)
{
    svc_err_t e;

    svc_err_set(&e, status, field, "%s", msg);
    m->status = status;
    m->body = svc_err_body(&e);
}
