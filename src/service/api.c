/* api.c - the JSON of the HTTP API: request validation (every malformed
 * field is a 4xx naming the field), the canonical request used for
 * idempotency, errors, and a job's JSON. Any thread: pure functions (the
 * HTTP threads parse and render, the loop and the main thread parse).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "service/svc.h"

#define MAX_LABELS 32
/* A label's value, bytes: room for a pod's NAMESPACE/NAME (63 + 1 + 253),
 * the extender's k8s.pod label (a pod with a long legal name was refused) */
#define MAX_LABEL_VALUE 512

void svc_err_set(svc_err_t *e, int code, const char *field, const char *fmt, ...)
{
    va_list ap;

    e->code = code;
    snprintf(e->field, sizeof(e->field), "%s", field != NULL ? field : "");
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
    va_end(ap);
}

char *svc_err_body(const svc_err_t *e)
{
    json_t *o = json_pack("{s:{s:s?,s:s}}", "error", "field", e->field[0] ? e->field : NULL,
                          "message", e->msg);
    char *s = o != NULL ? json_dumps(o, JSON_COMPACT) : NULL;

    json_decref(o);
    return s;
}

bool svc_id_valid(const char *id)
{
    size_t n = strlen(id), i;

    /* "." and ".." are path segments: no ordinary HTTP client can address
     * /v1/jobs/. or /v1/jobs/.. (they normalise the URL first) */
    if (n == 0 || n > 127 || strcmp(id, ".") == 0 || strcmp(id, "..") == 0)
        return false;
    for (i = 0; i < n; i++) {
        char c = id[i];

        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_' || c == '.' || c == ':'))
            return false;
    }
    return true;
}

/* Digits without a leading zero, at most max_digits of them; the end. */
static const char *number(const char *p, int max_digits)
{
    int n = 0;

    if (*p < '1' || *p > '9')
        return NULL;
    while (*p >= '0' && *p <= '9' && n <= max_digits) {
        p++;
        n++;
    }
    return n <= max_digits ? p : NULL;
}

bool svc_profile_syntax(const char *s)
{
    const ms_model_t *models;
    const char *p;
    int i, nm;

    /* a name some model has, in any case: "3g.20gb", "1g+me", "1g.2xmem" */
    models = ms_models(&nm);
    for (i = 0; i < nm; i++)
        if (ms_model_profile_find(&models[i], s) >= 0)
            return true;
    /* else the shapes the library resolves (docs/sched.md): a size "5g",
     * or a product name "5g.25gb" (which may still be no model's: 422) */
    if ((p = number(s, 2)) == NULL || *p++ != 'g')
        return false;
    if (*p == '\0')
        return true;
    if (*p++ != '.' || (p = number(p, 4)) == NULL)
        return false;
    return strcmp(p, "gb") == 0;
}

static const char *const FIELDS[] = { "id", "profile", "mem_gb", "model", "isolation", "gang",
                                      "priority", "migratable", "duration_s", "estimate_s",
                                      "labels", "tenant", "checkpoint_s", NULL };

/* A tenant's name as the scheduler takes it: 1..63 of [A-Za-z0-9._-]. */
static bool tenant_syntax(const char *n)
{
    size_t i;

    for (i = 0; n[i] != '\0'; i++)
        if (!((n[i] >= 'a' && n[i] <= 'z') || (n[i] >= 'A' && n[i] <= 'Z') || (n[i] >= '0' && n[i] <= '9') ||
              n[i] == '.' || n[i] == '_' || n[i] == '-'))
            return false;
    return i > 0 && i <= 63;
}

static int get_num(json_t *o, const char *k, double lo, double hi, double *out, svc_err_t *err)
{
    json_t *v = json_object_get(o, k);

    if (v == NULL || json_is_null(v))   /* null: absent (the canonical form writes it) */
        return 0;
    if (!json_is_number(v) || !isfinite(json_number_value(v)) || json_number_value(v) < lo ||
        json_number_value(v) > hi) {
        svc_err_set(err, 400, k, "must be a number in [%g, %g]", lo, hi);
        return -1;
    }
    *out = json_number_value(v);
    return 0;
}

static int get_int(json_t *o, const char *k, long lo, long hi, int *out, svc_err_t *err)
{
    json_t *v = json_object_get(o, k);

    if (v == NULL || json_is_null(v))   /* null: absent (the canonical form writes it) */
        return 0;
    if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi) {
        svc_err_set(err, 400, k, "must be an integer in [%ld, %ld]", lo, hi);
        return -1;
    }
    *out = (int)json_integer_value(v);
    return 0;
}

static int get_str(json_t *o, const char *k, size_t max, char **out, svc_err_t *err)
{
    json_t *v = json_object_get(o, k);

    if (v == NULL || json_is_null(v))   /* null: absent (the canonical form writes it) */
        return 0;
    if (!json_is_string(v) || json_string_length(v) == 0 || json_string_length(v) > max ||
        strlen(json_string_value(v)) != json_string_length(v)) {
        svc_err_set(err, 400, k, "must be a non-empty string of at most %zu bytes", max);
        return -1;
    }
    if ((*out = strdup(json_string_value(v))) == NULL) {
        svc_err_set(err, 500, k, "out of memory");
        return -1;
    }
    return 0;
}

static int get_labels(json_t *o, json_t **out, svc_err_t *err)
{
    json_t *v = json_object_get(o, "labels"), *x;
    const char *k;

    *out = NULL;
    if (v == NULL) {
        *out = json_object();
        return *out != NULL ? 0 : -1;
    }
    if (!json_is_object(v) || json_object_size(v) > MAX_LABELS) {
        svc_err_set(err, 400, "labels", "must be an object of at most %d string values", MAX_LABELS);
        return -1;
    }
    json_object_foreach(v, k, x) {
        if (strlen(k) == 0 || strlen(k) > 63 || strchr(k, '=') != NULL || strchr(k, ',') != NULL ||
            !json_is_string(x) || json_string_length(x) > MAX_LABEL_VALUE ||
            strlen(json_string_value(x)) != json_string_length(x)) {
            svc_err_set(err, 400, "labels",
                        "label '%.63s': keys 1-63 bytes without '=' or ',', values strings of at most %d bytes",
                        k, MAX_LABEL_VALUE);
            return -1;
        }
    }
    *out = json_deep_copy(v);
    return *out != NULL ? 0 : -1;
}

typedef struct label {
    const char *k, *v;
} label_t;

static int cmp_label(const void *a, const void *b)
{
    return strcmp(((const label_t *)a)->k, ((const label_t *)b)->k);
}

/* The canonical request: every field, absent ones as null (or their
 * default), keys sorted, no spaces; byte for byte what jansson's
 * json_dumps(JSON_COMPACT | JSON_SORT_KEYS) writes for the same object
 * (the form the stores of earlier versions hold, which a retried
 * submission is compared with as text). Written as text: building the
 * object and dumping it was a seventh of the daemon's CPU a submission
 * (docs/performance.md). NULL out of memory. */
static char *canon_text(const svc_req_t *req)
{
    ms_jtext_t t = { 0 };
    label_t lab[MAX_LABELS];
    const char *k;
    json_t *x;
    size_t n = 0, i;

    json_object_foreach(req->labels, k, x) {
        if (n < MAX_LABELS) {   /* get_labels allows no more */
            lab[n].k = k;
            lab[n++].v = json_string_value(x);
        }
    }
    qsort(lab, n, sizeof(lab[0]), cmp_label);
    if (req->checkpoint_s > 0) {   /* only when given, as tenant: bodies without it read as before */
        ms_jtext_raw(&t, "{\"checkpoint_s\":");
        ms_jtext_real(&t, req->checkpoint_s);
        ms_jtext_raw(&t, ",\"duration_s\":");
    } else {
        ms_jtext_raw(&t, "{\"duration_s\":");
    }
    ms_jtext_real(&t, req->duration_s);
    ms_jtext_raw(&t, ",\"estimate_s\":");
    ms_jtext_real(&t, req->estimate_s);
    ms_jtext_raw(&t, ",\"gang\":");
    ms_jtext_int(&t, req->gang);
    ms_jtext_raw(&t, req->isolation == MS_ISO_MIG ? ",\"isolation\":\"mig\",\"labels\":{"
                                                   : ",\"isolation\":\"any\",\"labels\":{");
    for (i = 0; i < n; i++) {
        if (i > 0)
            ms_jtext_add(&t, ",", 1);
        ms_jtext_str(&t, lab[i].k);
        ms_jtext_add(&t, ":", 1);
        ms_jtext_str(&t, lab[i].v);
    }
    ms_jtext_raw(&t, "},\"mem_gb\":");
    if (req->mem_gb > 0)
        ms_jtext_real(&t, req->mem_gb);
    else
        ms_jtext_raw(&t, "null");
    ms_jtext_raw(&t, req->migratable ? ",\"migratable\":true,\"model\":" : ",\"migratable\":false,\"model\":");
    ms_jtext_str(&t, req->model);
    ms_jtext_raw(&t, ",\"priority\":");
    ms_jtext_int(&t, req->priority);
    ms_jtext_raw(&t, ",\"profile\":");
    ms_jtext_str(&t, req->profile);
    if (req->tenant != NULL) {   /* only when given: a body without one reads as before */
        ms_jtext_raw(&t, ",\"tenant\":");
        ms_jtext_str(&t, req->tenant);
    }
    ms_jtext_add(&t, "}", 1);
    return ms_jtext_take(&t);
}

int svc_req_parse(const char *body, size_t len, char **id, svc_req_t *req, char **canon,
                  svc_err_t *err)
{
    json_error_t je;
    json_t *o;
    const char *k;
    json_t *x;
    char *iso = NULL;
    int rc = -1, i;

    *id = NULL;
    *canon = NULL;
    memset(req, 0, sizeof(*req));
    req->gang = 1;
    o = json_loadb(body, len, JSON_REJECT_DUPLICATES, &je);
    if (o == NULL) {
        svc_err_set(err, 400, "body", "malformed JSON at byte %d: %s", je.position, je.text);
        return -1;
    }
    if (!json_is_object(o)) {
        svc_err_set(err, 400, "body", "the body must be a JSON object");
        goto out;
    }
    json_object_foreach(o, k, x) {
        for (i = 0; FIELDS[i] != NULL && strcmp(FIELDS[i], k) != 0; i++)
            ;
        if (FIELDS[i] == NULL) {
            svc_err_set(err, 400, k, "unknown field");
            goto out;
        }
    }
    if (get_str(o, "id", 127, id, err) != 0)
        goto out;
    if (*id != NULL && !svc_id_valid(*id)) {
        svc_err_set(err, 400, "id", "1-127 characters of A-Z a-z 0-9 - _ . :");
        goto out;
    }
    if (get_str(o, "profile", 31, &req->profile, err) != 0 ||
        get_num(o, "mem_gb", 0.001, 100000, &req->mem_gb, err) != 0 ||
        get_str(o, "model", 63, &req->model, err) != 0 || get_str(o, "isolation", 8, &iso, err) != 0 ||
        get_int(o, "gang", 1, 64, &req->gang, err) != 0 ||
        get_int(o, "priority", -1000000, 1000000, &req->priority, err) != 0 ||
        get_num(o, "duration_s", 0, 1e9, &req->duration_s, err) != 0 ||
        get_num(o, "estimate_s", 0, 1e9, &req->estimate_s, err) != 0 ||
        get_num(o, "checkpoint_s", 0, 1e9, &req->checkpoint_s, err) != 0 ||
        get_labels(o, &req->labels, err) != 0 || get_str(o, "tenant", 63, &req->tenant, err) != 0)
        goto out;
    if (req->tenant != NULL && !tenant_syntax(req->tenant)) {
        svc_err_set(err, 400, "tenant", "a tenant's name is 1..63 of A-Z a-z 0-9 . _ -");
        goto out;
    }
    if ((x = json_object_get(o, "migratable")) != NULL) {
        if (!json_is_boolean(x)) {
            svc_err_set(err, 400, "migratable", "must be true or false");
            goto out;
        }
        req->migratable = json_is_true(x);
    }
    if (iso != NULL) {
        if (strcmp(iso, "any") == 0)
            req->isolation = MS_ISO_ANY;
        else if (strcmp(iso, "mig") == 0)
            req->isolation = MS_ISO_MIG;
        else {
            svc_err_set(err, 400, "isolation", "must be \"any\" or \"mig\"");
            goto out;
        }
    }
    if (req->profile != NULL && !svc_profile_syntax(req->profile)) {
        svc_err_set(err, 400, "profile", "'%.32s' is not a profile: give a size (\"3g\") or a product name (\"3g.20gb\")",
                    req->profile);
        goto out;
    }
    if ((req->profile != NULL) == (req->mem_gb > 0)) {
        svc_err_set(err, 400, "profile", "give exactly one of profile (\"2g.10gb\", \"2g\") and mem_gb");
        goto out;
    }
    if ((*canon = canon_text(req)) == NULL) {
        svc_err_set(err, 500, "", "out of memory");
        goto out;
    }
    rc = 0;
out:
    if (rc != 0) {
        free(*id);
        *id = NULL;
        svc_req_free(req);
    }
    free(iso);
    json_decref(o);
    return rc;
}

static void time_or_null(ms_jtext_t *t, double v)
{
    if (v > 0)
        ms_jtext_real(t, v);
    else
        ms_jtext_raw(t, "null");
}

/* Written as text (jtext.h): on every GET and every submission's answer,
 * parsing the stored request back into a jansson tree and dumping it all
 * again was most of an HTTP thread's time (docs/performance.md). The
 * request is the canonical body as it is, and its "labels" member is found
 * in it by a light scan; a body that does not scan as one object (a store
 * written by hand) is left out, as a body that did not parse was before. */
void svc_job_render(ms_jtext_t *t, const char *id, const char *body, const svc_jview_t *v,
                    ms_backend_t *be)
{
    const char *labels;
    size_t nbody = strlen(body), nlabels;
    bool whole = ms_jtext_member(body, nbody, "labels", &labels, &nlabels);

    ms_jtext_raw(t, "{\"id\":");
    ms_jtext_str(t, id);
    ms_jtext_raw(t, ",\"state\":");
    ms_jtext_str(t, ms_job_state_name((ms_job_state_t)v->state));
    ms_jtext_raw(t, ",\"submitted_at\":");
    time_or_null(t, v->submit_t);
    ms_jtext_raw(t, ",\"started_at\":");
    time_or_null(t, v->start_t);
    ms_jtext_raw(t, ",\"ended_at\":");
    time_or_null(t, v->end_t);
    if (v->kept_s > 0) {   /* a job that checkpoints, preempted: what it will not run again */
        ms_jtext_raw(t, ",\"kept_s\":");
        ms_jtext_real(t, v->kept_s);
    }
    if (whole) {
        const char *ten;
        size_t nten;

        ms_jtext_raw(t, ",\"tenant\":");   /* the canonical request holds it when not the default */
        if (ms_jtext_member(body, nbody, "tenant", &ten, &nten) && nten > 0 && ten[0] == '"')
            ms_jtext_add(t, ten, nten);
        else
            ms_jtext_raw(t, "\"default\"");
        ms_jtext_raw(t, ",\"request\":");
        ms_jtext_add(t, body, nbody);
        if (nlabels > 0 && labels[0] == '{') {   /* the canonical request always holds them */
            ms_jtext_raw(t, ",\"labels\":");
            ms_jtext_add(t, labels, nlabels);
        }
    }
    if (v->reason != NULL && v->reason[0]) {
        ms_jtext_raw(t, ",\"reason\":");
        ms_jtext_str(t, v->reason);
    }
    if (v->resolved != NULL) {
        ms_jtext_raw(t, ",\"resolved_to\":");
        ms_jtext_raw(t, v->resolved);
    }
    if (v->place.node >= 0) {
        ms_jtext_raw(t, ",\"placement\":{\"node\":");
        ms_jtext_str(t, v->place.node_name);
        ms_jtext_raw(t, ",\"gpu\":");
        ms_jtext_int(t, v->place.gpu);
        ms_jtext_raw(t, ",\"start\":");
        ms_jtext_int(t, v->place.start);
        ms_jtext_raw(t, ",\"profile\":");
        ms_jtext_str(t, v->place.profile);
        ms_jtext_raw(t, ",\"gpus\":");
        ms_jtext_int(t, v->place.ninst);
        if (be != NULL) {
            const char *gpu_uuid = ms_backend_gpu_uuid(be, v->place.gpu_global);
            char buf[48];

            if (gpu_uuid != NULL) {
                ms_jtext_raw(t, ",\"gpu_uuid\":");
                ms_jtext_str(t, gpu_uuid);
            }
            if (v->place.start >= 0) {
                ms_backend_inst_uuid(be, v->place.gpu_global, v->place.start, id, buf, sizeof(buf));
                if (buf[0]) {
                    ms_jtext_raw(t, ",\"instance_uuid\":");
                    ms_jtext_str(t, buf);
                }
            }
        }
        ms_jtext_raw(t, "}");
    }
    ms_jtext_raw(t, "}");
}

char *svc_job_text(const char *id, const char *body, const svc_jview_t *v, ms_backend_t *be)
{
    ms_jtext_t t = { 0 };

    svc_job_render(&t, id, body, v, be);
    return ms_jtext_take(&t);
}
