/* sse.h - private to migschedd: GET /v1/events/stream (sse.c). */
#ifndef MIGSCHED_SSE_H
#define MIGSCHED_SSE_H

#include <stdatomic.h>
#include <stdint.h>

#include <microhttpd.h>

#include "service/svc.h"

/* Streams open at once at most: a quarter of --max-conns, 1..64. */
int svc_sse_max(const svc_t *d);
/* A streaming response of the events with seq >= since (since >= 1), a
 * comment every heartbeat_s seconds without one, ending after limit events
 * (0: never), on connection c (suspended while it waits). *open counts the open
 * streams; NULL when there are svc_sse_max already (or out of memory). */
struct MHD_Response *svc_sse_response(svc_t *d, struct MHD_Connection *c, atomic_int *open, uint64_t since,
                                      double heartbeat_s, uint64_t limit);

/* A connection parked on the event ring (svc_events_park), for the long
 * poll and the stream alike: the waiter's arg is the MHD_Connection, which
 * svc_conn_suspend suspends and svc_conn_wake resumes. */
void svc_conn_suspend(void *conn);
void svc_conn_wake(svc_ewait_t *w);

#endif
