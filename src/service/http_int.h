/* http_int.h - private to http.c (the HTTP threads) and http_server.c
 * (main): the HTTP front's state. */
#ifndef MIGSCHED_SVC_HTTP_INT_H
#define MIGSCHED_SVC_HTTP_INT_H

#include <stdatomic.h>

#include <microhttpd.h>

#include "daemon/http_guard.h"
#include "service/extender.h"
#include "service/svc.h"

struct svc_http {
    struct MHD_Daemon *mhd;
    svc_t *d;
    atomic_int inflight;           /* requests begun and not completed */
    atomic_int pending;            /* connections suspended for the loop or a worker */
    atomic_bool closing;           /* stopping: no new suspension (a 503 instead) */
    atomic_int streams;            /* open /v1/events/stream responses */
    char *cert, *key;
    ms_http_guard_t *guard;        /* slow clients' deadlines (src/daemon/http_guard.h) */
    bool timer;                    /* the event ring's timer runs */
    bool workers;                  /* the extender's workers run */
};

/* libmicrohttpd's callbacks (http.c, HTTP threads) */
enum MHD_Result svc_http_handler(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                 const char *version, const char *upload, size_t *upload_size, void **con_cls);
void svc_http_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                        enum MHD_RequestTerminationCode toe);

#endif
