/* http_guard.h - deadlines for slow HTTP clients, shared by migschedd and
 * migsched-agent (http_guard.c). The only header of src/daemon that needs
 * libmicrohttpd: the backends include daemon.h and link no HTTP server.
 *
 * libmicrohttpd's connection timeout is an idle timeout: any byte restarts
 * it, so a client that trickles a header or a body one byte every few
 * seconds keeps its connection for ever, and --max-conns of them keep the
 * daemon unreachable (slowloris). The guard gives every request absolute
 * deadlines instead, counted from events libmicrohttpd reports:
 *
 *   accepted (NOTIFY_CONNECTION STARTED)   request line and headers within
 *                                          header_s (a TLS handshake too)
 *   kept alive (NOTIFY_COMPLETED)          the next request line within
 *                                          idle_s (libmicrohttpd's idle
 *                                          timeout, now not extended by
 *                                          trickled bytes), then its headers
 *                                          within header_s of it (URI log)
 *   headers in (the handler's first call)  the body within body_s
 *   request in (the handler's last call)   no deadline: the answer may wait
 *                                          on the loop, a long poll or a
 *                                          stream; suspended connections are
 *                                          never touched
 *
 * A connection past its deadline is shut down (shutdown(2) on its socket,
 * under the guard's lock, which libmicrohttpd's CLOSED notification takes
 * before it closes the socket, so a reused descriptor is never hit);
 * libmicrohttpd then sees the end of the stream and closes it as a client
 * that went away.
 *
 * Threads: the callbacks below run on libmicrohttpd's threads (the epoll
 * threads of migschedd, the connection threads of the agent) and only take
 * the guard's lock (a leaf); the guard's own thread wakes at the earliest
 * deadline (at most every 0.25 s) and shuts the late connections down.
 */
#ifndef MIGSCHED_DAEMON_HTTP_GUARD_H
#define MIGSCHED_DAEMON_HTTP_GUARD_H

#include <stdint.h>

#include <microhttpd.h>

typedef struct ms_http_guard ms_http_guard_t;

/* Start the guard's thread; deadlines in seconds (> 0). 0, or -1 (out of
 * memory or threads). Start it before the server, stop it after. */
int ms_http_guard_start(ms_http_guard_t **out, double header_s, double body_s, double idle_s);
/* Stop the thread and free the guard (the server stopped: every connection
 * it had was notified CLOSED). NULL-safe. */
void ms_http_guard_stop(ms_http_guard_t *g);
/* Connections shut down for a deadline so far (any thread). */
uint64_t ms_http_guard_closed(const ms_http_guard_t *g);

/* MHD_OPTION_NOTIFY_CONNECTION, ms_http_guard_notify, g */
void ms_http_guard_notify(void *g, struct MHD_Connection *c, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe);
/* MHD_OPTION_URI_LOG_CALLBACK, ms_http_guard_uri, g: returns NULL (the
 * request's context stays the handler's to make) */
void *ms_http_guard_uri(void *g, const char *uri, struct MHD_Connection *c);
/* From the access handler: its first call (the headers are in) and the call
 * that answers (the body is in). */
void ms_http_guard_headers(struct MHD_Connection *c);
void ms_http_guard_request(struct MHD_Connection *c);
/* From NOTIFY_COMPLETED: the request is over; a kept-alive connection
 * waits for the next one. */
void ms_http_guard_completed(struct MHD_Connection *c);

#endif
