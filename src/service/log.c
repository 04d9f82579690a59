/* log.c - structured logs: one JSON object a line on stderr, and clocks. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "service/svc.h"

static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;

double svc_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double svc_mono(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void svc_log(const char *level, const char *msg, json_t *fields)
{
    json_t *o = fields != NULL && json_is_object(fields) ? fields : json_object();
    char *s;

    if (fields != NULL && o != fields)
        json_decref(fields);
    if (o == NULL)
        return;
    json_object_set_new(o, "ts", json_real(svc_now()));
    json_object_set_new(o, "level", json_string(level));
    json_object_set_new(o, "msg", json_string(msg));
    s = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
    if (s != NULL) {
        pthread_mutex_lock(&log_mu);
        fprintf(stderr, "%s\n", s);
        pthread_mutex_unlock(&log_mu);
        free(s);
    }
    json_decref(o);
}
