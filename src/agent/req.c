/* req.c - the agent's request bodies: strict JSON objects, every field
 * checked, unknown fields refused (a typo must not silently create the
 * wrong instance). Pure: no I/O, no globals; any thread. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent.h"
#include "migsched/plan.h"

void ag_err_set(ag_err_t *e, int code, const char *reason, const char *field, const char *fmt, ...)
{
    va_list ap;

    e->code = code;
    snprintf(e->reason, sizeof(e->reason), "%s", reason);
    snprintf(e->field, sizeof(e->field), "%s", field);
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
    va_end(ap);
}

char *ag_err_body(const ag_err_t *e)
{
    json_t *o = json_pack("{s:{s:s,s:s,s:s}}", "error", "reason", e->reason, "field", e->field, "message",
                          e->msg);
    char *s = o != NULL ? json_dumps(o, JSON_COMPACT) : NULL;

    json_decref(o);
    return s;
}

/* max of A-Z a-z 0-9 - _ . :, and not "." or ".." (path segments: no HTTP
 * client can name them in a URL) */
static bool idchars(const char *s, size_t max)
{
    size_t n = 0;

    if (strcmp(s, ".") == 0 || strcmp(s, "..") == 0)
        return false;

    for (; s[n] != '\0'; n++) {
        char c = s[n];

        if (n >= max || !((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                          c == '-' || c == '_' || c == '.' || c == ':'))
            return false;
    }
    return true;
}

bool ag_uuid_valid(const char *s)
{
    return s != NULL && s[0] != '\0' && idchars(s, 47);
}

bool ag_job_valid(const char *s)
{
    return s != NULL && idchars(s, 127);
}

static json_t *load(const char *body, size_t len, ag_err_t *e)
{
    json_error_t je;
    json_t *o;

    if (body == NULL || len == 0) {
        ag_err_set(e, 400, "invalid", "", "a JSON object body is required");
        return NULL;
    }
    o = json_loadb(body, len, JSON_REJECT_DUPLICATES, &je);
    if (o == NULL) {
        ag_err_set(e, 400, "invalid", "", "not JSON: %s (column %d)", je.text, je.column);
        return NULL;
    }
    if (!json_is_object(o)) {
        json_decref(o);
        ag_err_set(e, 400, "invalid", "", "the body must be a JSON object");
        return NULL;
    }
    return o;
}

static int get_int(json_t *o, const char *k, int lo, int hi, bool need, int *out, ag_err_t *e)
{
    json_t *v = json_object_get(o, k);
    json_int_t x;

    if (v == NULL) {
        if (!need)
            return 0;
        ag_err_set(e, 400, "invalid", k, "%s is required (an integer in [%d, %d])", k, lo, hi);
        return -1;
    }
    if (!json_is_integer(v) || (x = json_integer_value(v)) < lo || x > hi) {
        ag_err_set(e, 400, "invalid", k, "%s must be an integer in [%d, %d]", k, lo, hi);
        return -1;
    }
    *out = (int)x;
    return 0;
}

static int get_str(json_t *o, const char *k, char *out, size_t cap, bool need, bool (*ok)(const char *),
                   const char *what, ag_err_t *e)
{
    json_t *v = json_object_get(o, k);
    const char *s;

    if (v == NULL) {
        if (!need) {
            out[0] = '\0';
            return 0;
        }
        ag_err_set(e, 400, "invalid", k, "%s is required (%s)", k, what);
        return -1;
    }
    if (!json_is_string(v) || (s = json_string_value(v)) == NULL || strlen(s) >= cap ||
        strlen(s) != json_string_length(v) || (ok != NULL && !ok(s))) {
        ag_err_set(e, 400, "invalid", k, "%s must be %s", k, what);
        return -1;
    }
    memcpy(out, s, strlen(s) + 1);
    return 0;
}

static bool prof_ok(const char *s)
{
    return s[0] != '\0' && idchars(s, 31);
}

static bool prof_or_empty(const char *s)
{
    return s[0] == '\0' || prof_ok(s);
}

/* Refuse keys outside the list. */
static int only(json_t *o, const char *const *keys, ag_err_t *e)
{
    const char *k;
    json_t *v;
    int i;

    json_object_foreach(o, k, v) {
        for (i = 0; keys[i] != NULL && strcmp(keys[i], k) != 0; i++)
            ;
        if (keys[i] == NULL) {
            ag_err_set(e, 400, "invalid", "", "unknown field '%.64s'", k);
            return -1;
        }
    }
    return 0;
}

int ag_parse_create(const char *body, size_t len, ag_create_t *out, ag_err_t *e)
{
    static const char *const KEYS[] = { "gpu", "profile", "start", "job", NULL };
    json_t *o = load(body, len, e);
    int rc = -1;

    memset(out, 0, sizeof(*out));
    if (o == NULL)
        return -1;
    if (only(o, KEYS, e) == 0 && get_int(o, "gpu", 0, 255, true, &out->gpu, e) == 0 &&
        get_int(o, "start", 0, 15, true, &out->start, e) == 0 &&
        get_str(o, "profile", out->profile, sizeof(out->profile), true, prof_ok,
                "a profile name such as \"3g.20gb\" or \"3g\"", e) == 0 &&
        get_str(o, "job", out->job, sizeof(out->job), false, ag_job_valid,
                "a job id: up to 127 of A-Z a-z 0-9 - _ . :", e) == 0)
        rc = 0;
    json_decref(o);
    return rc;
}

int ag_parse_op(const char *body, size_t len, ag_op_t *out, ag_err_t *e)
{
    static const char *const KEYS[] = { "op", "gpu", "start", "profile", "job", "from_gpu", "from_start", "bbm",
                                        NULL };
    static const char *const NAMES[] = { "", "create", "destroy", "start", "move", "stop", "reap" };
    json_t *o = load(body, len, e), *v;
    char kind[16];
    int k, rc = -1;

    memset(out, 0, sizeof(*out));
    out->from_gpu = -1;
    out->from_start = -1;
    if (o == NULL)
        return -1;
    if (only(o, KEYS, e) != 0 ||
        get_str(o, "op", kind, sizeof(kind), true, NULL, "create, destroy, start, move, stop or reap", e) != 0)
        goto out;
    for (k = 1; k <= AG_OP_REAP && strcmp(NAMES[k], kind) != 0; k++)
        ;
    if (k > AG_OP_REAP) {
        ag_err_set(e, 400, "invalid", "op", "op must be create, destroy, start, move, stop or reap");
        goto out;
    }
    out->kind = k;
    if (get_int(o, "gpu", 0, 255, true, &out->gpu, e) != 0 || get_int(o, "start", -1, 15, true, &out->start, e) != 0 ||
        get_str(o, "profile", out->profile, sizeof(out->profile), false, prof_or_empty,
                "a profile name such as \"3g.20gb\"", e) != 0 ||
        get_str(o, "job", out->job, sizeof(out->job), false, ag_job_valid,
                "a job id: up to 127 of A-Z a-z 0-9 - _ . :", e) != 0)
        goto out;
    if (k == MS_OP_MOVE &&
        (get_int(o, "from_gpu", 0, 255, true, &out->from_gpu, e) != 0 ||
         get_int(o, "from_start", -1, 15, true, &out->from_start, e) != 0))
        goto out;
    if ((v = json_object_get(o, "bbm")) != NULL) {
        if (!json_is_boolean(v)) {
            ag_err_set(e, 400, "invalid", "bbm", "bbm must be true or false");
            goto out;
        }
        out->bbm = json_is_true(v);
    }
    if ((k == MS_OP_CREATE || k == MS_OP_MOVE || (k == MS_OP_START && out->start < 0)) && out->profile[0] == '\0') {
        ag_err_set(e, 400, "invalid", "profile", "profile is required for this op");
        goto out;
    }
    if (k == MS_OP_CREATE && out->start < 0) {
        ag_err_set(e, 400, "invalid", "start", "create needs a start >= 0");
        goto out;
    }
    if ((k == MS_OP_START || k == MS_OP_MOVE || k == MS_OP_STOP) && out->job[0] == '\0') {
        ag_err_set(e, 400, "invalid", "job", "job is required for this op");
        goto out;
    }
    rc = 0;
out:
    json_decref(o);
    return rc;
}
