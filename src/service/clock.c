/* clock.c - the daemon's real clock (svc.h: svc_clock_t). Any thread.
 * Tests give the daemon a fake one instead, so that its decisions can be
 * replayed at any time they choose. */
#include <math.h>

#include "daemon/daemon.h"
#include "service/svc.h"

static double wall(void *ctx)
{
    (void)ctx;
    return ms_clock_wall();
}

static double mono(void *ctx)
{
    (void)ctx;
    return ms_clock_mono();
}

const svc_clock_t svc_clock_real = { wall, mono, NULL };

double svc_clock_real_deadline(const svc_clock_t *c, double until, double max_s)
{
    return ms_clock_mono() + fmin(max_s, until - svc_clock_mono(c));
}
