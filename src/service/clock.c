/* clock.c - the daemon's real clock (svc.h: svc_clock_t). Any thread.
 * Tests give the daemon a fake one instead, so that its decisions can be
 * replayed at any time they choose. */
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
