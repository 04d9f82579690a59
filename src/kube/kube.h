/* kube.h - a small Kubernetes API-server client (libcurl, jansson): what
 * migschedd needs to bind pods and follow them, nothing more.
 *
 * Credentials, in this order:
 *   - api URL given: that server, a bearer token from token_file (re-read
 *     at every request, since service-account tokens rotate), the CA from
 *     ca_file (none: the system's roots);
 *   - kubeconfig given: its current-context's cluster (server,
 *     certificate-authority or certificate-authority-data,
 *     insecure-skip-tls-verify) and user (token, tokenFile); client
 *     certificates are not supported (an error says so);
 *   - neither: in-cluster, https://$KUBERNETES_SERVICE_HOST:
 *     $KUBERNETES_SERVICE_PORT with the pod's service-account token and CA
 *     (/var/run/secrets/kubernetes.io/serviceaccount/).
 *
 * Every call is thread-safe: each makes its own curl handle and shares one
 * connection and TLS-session cache. list+watch (ms_kube_watch) lists, then
 * watches from the list's resourceVersion with allowWatchBookmarks=true,
 * follows bookmarks, reconnects with exponential backoff (0.2 s doubling
 * to 10 s) and relists when the server answers 410 Gone (the version is
 * too old).
 */
#ifndef MIGSCHED_KUBE_H
#define MIGSCHED_KUBE_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

typedef struct ms_kube ms_kube_t;

typedef struct ms_kube_cfg {
    const char *api;           /* https://host:port, or NULL */
    const char *token_file;
    const char *ca_file;
    const char *kubeconfig;    /* used when api is NULL */
    const char *sa_dir;        /* in-cluster secrets dir (NULL: the standard one; tests) */
} ms_kube_cfg_t;

/* 0, or -1 with err filled (names the file or setting that is wrong). */
int ms_kube_open(const ms_kube_cfg_t *cfg, ms_kube_t **out, char *err, size_t errlen);
void ms_kube_close(ms_kube_t *k);   /* NULL-safe */
const char *ms_kube_server(const ms_kube_t *k);

/* One request: method GET, POST, PATCH (body a JSON merge patch), DELETE;
 * path from the server root ("/api/v1/..."), with its query. *status is
 * the HTTP status (0 when no answer came), *resp the body (malloc'd, may
 * be NULL). Returns 0 when an answer came, -1 otherwise (err says why). */
int ms_kube_request(ms_kube_t *k, const char *method, const char *path, const char *body,
                    long *status, char **resp, char *err, size_t errlen);
/* The same within timeout_ms (ms_kube_request: 30 s; connecting at most
 * 10 s of it). */
int ms_kube_request_within(ms_kube_t *k, const char *method, const char *path, const char *body, long timeout_ms,
                           long *status, char **resp, char *err, size_t errlen);
/* The same, answered by deadline (seconds of CLOCK_MONOTONIC, as
 * ms_clock_mono gives) or not at all: a write that must not land after
 * this replica's leadership ends (the leader's writes in src/service/:
 * dra_write.c, ext_bind.c, ext_evict.c, kctl_api.c). The time left
 * is read just before the transfer starts; when none is, nothing is sent
 * and MS_KUBE_LATE is returned (err says so). */
#define MS_KUBE_LATE (-2)
int ms_kube_request_by(ms_kube_t *k, const char *method, const char *path, const char *body, double deadline,
                       long *status, char **resp, char *err, size_t errlen);

/* Called for the list's items (type "LIST", once per object, then once
 * with type "SYNCED" and obj NULL) and for every watch event ("ADDED",
 * "MODIFIED", "DELETED"); obj is borrowed. */
typedef void (*ms_kube_event_fn)(void *ctx, const char *type, json_t *obj);

/* List+watch the collection at path ("/api/v1/pods", optional query
 * "fieldSelector=..." without '?') until *stop becomes true (checked at
 * least once a second). Returns 0 when stopped. */
int ms_kube_watch(ms_kube_t *k, const char *path, const char *query, ms_kube_event_fn fn, void *ctx,
                  volatile int *stop);

/* JSON-escape-free helper: percent-encode s into buf (a path segment or a
 * query value); false if it does not fit. */
bool ms_kube_escape(const char *s, char *buf, size_t len);

#endif
