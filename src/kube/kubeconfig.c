/* kubeconfig.c - the API-server client's credentials from files: a
 * kubeconfig's current context (YAML read with libyaml into JSON, its
 * aliases expanded into a bounded number of nodes), base64 CA data, and
 * token files, each bounded in size and checked (kube.h). */
#include "kube/kube_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <yaml.h>

#define MAX_FILE (1 << 20)

/* The whole file at path (NUL-terminated; *n_out its length), or NULL with
 * errno set: EFBIG when it is larger than MAX_FILE, so that the caller can
 * say so instead of whatever errno an earlier call left behind. */
static char *slurp(const char *path, size_t *n_out)
{
    FILE *f;
    char *s;
    size_t n;
    int e;

    errno = 0;
    if ((f = fopen(path, "rb")) == NULL)
        return NULL;
    if ((s = malloc(MAX_FILE + 1)) == NULL) {
        fclose(f);
        errno = ENOMEM;
        return NULL;
    }
    n = fread(s, 1, MAX_FILE, f);
    if (ferror(f) || (n == MAX_FILE && fgetc(f) != EOF)) {
        e = ferror(f) ? (errno != 0 ? errno : EIO) : EFBIG;
        fclose(f);
        free(s);
        errno = e;
        return NULL;
    }
    fclose(f);
    s[n] = '\0';
    if (n_out != NULL)
        *n_out = n;
    return s;
}

/* Why slurp failed, for a message. */
static const char *slurp_why(void)
{
    return errno == EFBIG ? "larger than 1 MiB" : strerror(errno != 0 ? errno : EIO);
}

/* A token is non-empty visible ASCII: no space, control byte or NUL. */
bool ms__kube_token_ok(const char *t)
{
    if (*t == '\0')
        return false;
    for (; *t; t++)
        if ((unsigned char)*t < 0x21 || (unsigned char)*t > 0x7e)
            return false;
    return true;
}

/* A bearer token read from path into a malloc'd string: the file's text
 * without trailing white space, which must be non-empty visible ASCII
 * (RFC 6750's b64token is a subset). A NUL, an inner line break or any
 * other control byte is refused, never cut: a token that is silently
 * shortened, or one that carries a header onto the next line, is worse
 * than an error. NULL with err set otherwise. */
char *ms__kube_token_read(const char *path, char *err, size_t errlen)
{
    size_t len, i;
    char *t = slurp(path, &len);

    if (t == NULL) {
        ms__kube_set_err(err, errlen, "the token file %s: %s", path, slurp_why());
        return NULL;
    }
    while (len > 0 && (t[len - 1] == '\n' || t[len - 1] == '\r' || t[len - 1] == ' ' || t[len - 1] == '\t'))
        t[--len] = '\0';
    for (i = 0; i < len; i++) {
        unsigned char c = (unsigned char)t[i];

        if (c < 0x21 || c > 0x7e) {
            ms__kube_set_err(err, errlen, "the token file %s: byte %zu is 0x%02x; a token is visible ASCII on one line",
                    path, i + 1, c);
            free(t);
            return NULL;
        }
    }
    if (len == 0) {
        ms__kube_set_err(err, errlen, "the token file %s is empty", path);
        free(t);
        return NULL;
    }
    return t;
}

void ms__kube_trim_end(char *s)
{
    size_t n = strlen(s);

    while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' ' || s[n - 1] == '\t'))
        s[--n] = '\0';
}

/* --- kubeconfig: YAML into JSON (scalars stay strings) ------------------ */

/* A kubeconfig is a few dozen nodes; the cap is far above any real one and
 * bounds what YAML aliases can expand to: libyaml keeps an alias as a
 * reference, but turning the document into JSON copies the aliased node at
 * every use, so ten nested aliases of ten items each ("billion laughs")
 * would otherwise build 10^10 nodes from 800 bytes. */
#define YAML_MAX_NODES 100000

/* The JSON of node n; *left counts down the nodes still allowed (NULL once
 * it goes below 0: the caller reports it). */
static json_t *yaml_node_json(yaml_document_t *doc, yaml_node_t *n, int depth, long *left)
{
    json_t *o;

    if (n == NULL || depth > 32 || --*left < 0)
        return NULL;
    switch (n->type) {
    case YAML_SCALAR_NODE:
        return json_stringn((const char *)n->data.scalar.value, n->data.scalar.length);
    case YAML_SEQUENCE_NODE: {
        yaml_node_item_t *it;

        if ((o = json_array()) == NULL)
            return NULL;
        for (it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
            json_t *v = yaml_node_json(doc, yaml_document_get_node(doc, *it), depth + 1, left);

            if (v != NULL)
                json_array_append_new(o, v);
        }
        return o;
    }
    case YAML_MAPPING_NODE: {
        yaml_node_pair_t *p;

        if ((o = json_object()) == NULL)
            return NULL;
        for (p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
            yaml_node_t *k = yaml_document_get_node(doc, p->key);
            json_t *v = yaml_node_json(doc, yaml_document_get_node(doc, p->value), depth + 1, left);
            char key[256];

            if (k == NULL || k->type != YAML_SCALAR_NODE || v == NULL || k->data.scalar.length >= sizeof(key)) {
                json_decref(v);
                continue;
            }
            memcpy(key, k->data.scalar.value, k->data.scalar.length);
            key[k->data.scalar.length] = '\0';
            json_object_set_new(o, key, v);
        }
        return o;
    }
    default:
        return NULL;
    }
}

static json_t *yaml_load(const char *text, size_t len, char *err, size_t errlen, const char *path)
{
    yaml_parser_t p;
    yaml_document_t doc;
    json_t *o = NULL;
    long left = YAML_MAX_NODES;

    if (!yaml_parser_initialize(&p))
        return NULL;
    yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
    if (!yaml_parser_load(&p, &doc)) {
        char where[64];

        snprintf(where, sizeof(where), "line %lu", (unsigned long)p.problem_mark.line + 1);
        ms__kube_set_err(err, errlen, "%s: not YAML (%s)", path, where);
        yaml_parser_delete(&p);
        return NULL;
    }
    o = yaml_node_json(&doc, yaml_document_get_root_node(&doc), 0, &left);
    yaml_document_delete(&doc);
    yaml_parser_delete(&p);
    if (left < 0) {
        json_decref(o);
        ms__kube_set_err(err, errlen, "%s: expands to more than %d YAML nodes (aliases?); not a kubeconfig", path,
                YAML_MAX_NODES);
        return NULL;
    }
    return o;
}

/* The element of list (kubeconfig's clusters, users, contexts) named name,
 * its member `member`. */
static json_t *named(json_t *list, const char *name, const char *member)
{
    size_t i;
    json_t *e;

    if (!json_is_array(list) || name == NULL)
        return NULL;
    json_array_foreach(list, i, e) {
        const char *n = json_string_value(json_object_get(e, "name"));

        if (n != NULL && strcmp(n, name) == 0)
            return json_object_get(e, member);
    }
    return NULL;
}

static int b64val(int c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+')
        return 62;
    if (c == '/')
        return 63;
    return -1;
}

static char *b64decode(const char *s, size_t *outlen)
{
    size_t n = strlen(s), o = 0;
    char *out = malloc(n / 4 * 3 + 4);
    unsigned acc = 0;
    int bits = 0;

    if (out == NULL)
        return NULL;
    for (; *s; s++) {
        int v;

        if (*s == '=' || *s == '\n' || *s == '\r' || *s == ' ')
            continue;
        if ((v = b64val((unsigned char)*s)) < 0) {
            free(out);
            return NULL;
        }
        acc = (acc << 6) | (unsigned)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = (char)((acc >> bits) & 0xff);
        }
    }
    out[o] = '\0';
    *outlen = o;
    return out;
}

static char *rel_path(const char *base, const char *p)
{
    const char *slash = strrchr(base, '/');
    size_t n;
    char *s;

    if (p[0] == '/' || slash == NULL)
        return strdup(p);
    n = (size_t)(slash - base) + 1 + strlen(p) + 1;
    if ((s = malloc(n)) != NULL)
        snprintf(s, n, "%.*s/%s", (int)(slash - base), base, p);
    return s;
}

int ms__kube_from_kubeconfig(ms_kube_t *k, const char *path, char *err, size_t errlen)
{
    size_t len;
    char *text = slurp(path, &len);
    json_t *o, *ctx, *cl, *us, *v;
    const char *cur, *s;
    int rc = -1;

    if (text == NULL) {
        ms__kube_set_err(err, errlen, "--kubeconfig %s: %s", path, slurp_why());
        return -1;
    }
    o = yaml_load(text, len, err, errlen, path);
    free(text);
    if (!json_is_object(o)) {
        if (o != NULL)
            ms__kube_set_err(err, errlen, "%s: %s", path, "not a kubeconfig (a mapping)");
        json_decref(o);
        return -1;
    }
    cur = json_string_value(json_object_get(o, "current-context"));
    ctx = named(json_object_get(o, "contexts"), cur, "context");
    if (!json_is_object(ctx)) {
        ms__kube_set_err(err, errlen, "%s: current-context names no context", path);
        goto out;
    }
    cl = named(json_object_get(o, "clusters"), json_string_value(json_object_get(ctx, "cluster")), "cluster");
    us = named(json_object_get(o, "users"), json_string_value(json_object_get(ctx, "user")), "user");
    if (!json_is_object(cl) || (s = json_string_value(json_object_get(cl, "server"))) == NULL) {
        ms__kube_set_err(err, errlen, "%s: the context's cluster has no server", path);
        goto out;
    }
    if ((k->server = strdup(s)) == NULL)
        goto out;
    if ((s = json_string_value(json_object_get(cl, "certificate-authority"))) != NULL &&
        (k->ca_file = rel_path(path, s)) == NULL)
        goto out;
    if ((s = json_string_value(json_object_get(cl, "certificate-authority-data"))) != NULL &&
        (k->ca_blob = b64decode(s, &k->ca_blob_len)) == NULL) {
        ms__kube_set_err(err, errlen, "%s: certificate-authority-data is not base64", path);
        goto out;
    }
    v = json_object_get(cl, "insecure-skip-tls-verify");
    k->insecure = v != NULL && json_string_value(v) != NULL && strcmp(json_string_value(v), "true") == 0;
    if (json_is_object(us)) {
        if (json_object_get(us, "client-certificate") != NULL ||
            json_object_get(us, "client-certificate-data") != NULL) {
            ms__kube_set_err(err, errlen, "%s: client certificates are not supported; use a token", path);
            goto out;
        }
        if ((s = json_string_value(json_object_get(us, "token"))) != NULL && (k->token = strdup(s)) == NULL)
            goto out;
        if ((s = json_string_value(json_object_get(us, "tokenFile"))) != NULL &&
            (k->token_file = rel_path(path, s)) == NULL)
            goto out;
    }
    rc = 0;
out:
    json_decref(o);
    return rc;
}
