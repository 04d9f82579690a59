/* log.c - structured logs: one JSON object a line on stderr, and the real
 * clocks (daemon.h). Any thread. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <time.h>

#include "daemon/daemon.h"

double ms_clock_wall(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double ms_clock_mono(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

struct timespec ms_clock_after(clockid_t clk, double s)
{
    struct timespec ts;
    double whole, frac = modf(s > 0 ? s : 0, &whole);

    clock_gettime(clk, &ts);
    ts.tv_sec += (time_t)whole;
    ts.tv_nsec += (long)(frac * 1e9);
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    return ts;
}

void ms_clock_sleep(double s)
{
    struct timespec until = ms_clock_after(CLOCK_MONOTONIC, s);

    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL) == EINTR)
        ;
}

void ms_log(const char *level, const char *msg, json_t *fields)
{
    json_t *o = fields != NULL && json_is_object(fields) ? fields : json_object();
    char *s;

    if (fields != NULL && o != fields)
        json_decref(fields);
    if (o == NULL)
        return;
    json_object_set_new(o, "ts", json_real(ms_clock_wall()));
    json_object_set_new(o, "level", json_string(level));
    json_object_set_new(o, "msg", json_string(msg));
    s = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
    if (s != NULL) {
        /* one stdio call: it holds stderr's lock throughout, so the lines of
         * concurrent callers never mix */
        fprintf(stderr, "%s\n", s);
        free(s);
    }
    json_decref(o);
}
