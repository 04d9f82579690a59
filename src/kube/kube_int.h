/* kube_int.h - private to src/kube/: the client's handle and what its two
 * files share (kube.c: open, requests, list+watch; kubeconfig.c: the
 * kubeconfig file and token files). Not installed. */
#ifndef MIGSCHED_KUBE_INT_H
#define MIGSCHED_KUBE_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include <curl/curl.h>

#include "kube/kube.h"

struct ms_kube {
    char *server;
    char *token;               /* a fixed token (kubeconfig's token), or NULL */
    char *token_file;          /* re-read at every request */
    char *ca_file;
    char *ca_blob;             /* PEM bytes (certificate-authority-data) */
    size_t ca_blob_len;
    bool insecure;
    CURLSH *share;
    pthread_mutex_t locks[CURL_LOCK_DATA_LAST];
};

/* Format into err[len] (NULL-safe). kube.c */
void ms__kube_set_err(char *err, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* kubeconfig.c */
/* A bearer token is visible ASCII on one line. */
bool ms__kube_token_ok(const char *t);
/* The token in a token file (trailing newline dropped), or NULL with err
 * saying why. */
char *ms__kube_token_read(const char *path, char *err, size_t errlen);
/* Drop trailing blanks and newlines in place. */
void ms__kube_trim_end(char *s);
/* Fill k's server, credentials and CA from the kubeconfig at path (its
 * current context): 0, or -1 with err saying why. */
int ms__kube_from_kubeconfig(ms_kube_t *k, const char *path, char *err, size_t errlen);

#endif
