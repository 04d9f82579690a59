/* backend.c - the sim, dry-run and nvml backends (backend.h).
 *
 * nvml: real GPUs through src/nvml/ (dlopen of libnvidia-ml.so.1, or the
 * library MIGSCHEDD_NVML_LIB names: the tests' fake). Global GPU g is NVML
 * device g; at open every configured GPU must exist, be the configured
 * model and, on a MIG node, have MIG enabled (migschedd never changes MIG
 * mode). The hardware is the truth for which GIs exist: the inventory is
 * read from NVML at open and each CREATE and DESTROY is executed there
 * first; what runs on an instance (the job tag) is the daemon's own
 * knowledge, kept in nvml-inventory.json like the sim's inventory. A
 * placement the hardware refuses fails the op (the scheduler rolls back).
 *
 * Both keep an inventory of instances in memory, guarded by a mutex, and
 * persist it after every op to STATE_DIR/<kind>-inventory.json by writing a
 * temporary file and renaming it over the old one: a reader (the restarted
 * daemon) sees the state before or after an op, never half of one. The file
 * is not fsynced: the sim models GPUs that survive a daemon crash (kill -9),
 * where the page cache keeps the file; a power cut loses real GPU instances
 * too.
 */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nvml/nvml.h"
#include "service/backend.h"
#include "service/svc.h"

struct svc_backend {
    char kind[16];
    bool dry;
    int ngpus;
    double delay;
    int fail_kind;              /* 0 none, -1 any, else MS_OP_* */
    long fail_every;
    long count[6];
    uint64_t uuid_seq;
    char *path, *tmp, *log_path;
    FILE *log;
    pthread_mutex_t mu;
    svc_binst_t *v;
    int n, cap;
    char (*gpu_uuid)[48];
    ms_nvml_t *nv;              /* nvml kind only */
    const ms_geom_t **geom;     /* [ngpus] nvml kind only */
    uint32_t salt;              /* mixed into made-up uuids (cfg uuid_salt) */
    svc_abe_t *ag;              /* agent kind only: everything goes there */
};

static const char *const KIND[] = { "?", "create", "destroy", "start", "move", "stop" };

static int find(const svc_backend_t *b, int gpu, int start, const char *job)
{
    int i;

    for (i = 0; i < b->n; i++) {
        if (b->v[i].gpu != gpu || b->v[i].start != start)
            continue;
        if (start >= 0 || job == NULL || strcmp(b->v[i].job, job) == 0)
            return i;
    }
    return -1;
}

static int add(svc_backend_t *b, int gpu, int start, int prof, const char *job)
{
    svc_binst_t *in;

    if (b->n == b->cap) {
        int cap = b->cap ? b->cap * 2 : 64;
        svc_binst_t *v = realloc(b->v, (size_t)cap * sizeof(*v));

        if (v == NULL)
            return -1;
        b->v = v;
        b->cap = cap;
    }
    in = &b->v[b->n++];
    memset(in, 0, sizeof(*in));
    in->gpu = gpu;
    in->start = (int8_t)start;
    in->prof = (int8_t)prof;
    snprintf(in->job, sizeof(in->job), "%s", job != NULL ? job : "");
    if (start >= 0)
        snprintf(in->uuid, sizeof(in->uuid), "MIG-%08x-%04x-4000-8000-%012" PRIx64,
                 (unsigned)gpu ^ b->salt, (unsigned)start, ++b->uuid_seq);
    return 0;
}

static void del(svc_backend_t *b, int i)
{
    b->v[i] = b->v[--b->n];
}

static int persist(svc_backend_t *b)
{
    json_t *root = json_object(), *arr = json_array();
    int i, rc = -1;

    if (root == NULL || arr == NULL)
        goto out;
    for (i = 0; i < b->n; i++) {
        const svc_binst_t *in = &b->v[i];
        json_t *o = json_pack("{s:i,s:i,s:i,s:s,s:s}", "gpu", (int)in->gpu, "start", (int)in->start,
                              "prof", (int)in->prof, "job", in->job, "uuid", in->uuid);

        if (o == NULL || json_array_append_new(arr, o) != 0)
            goto out;
    }
    if (json_object_set_new(root, "ngpus", json_integer(b->ngpus)) != 0 ||
        json_object_set_new(root, "uuid_seq", json_integer((json_int_t)b->uuid_seq)) != 0 ||
        json_object_set(root, "instances", arr) != 0)
        goto out;
    if (json_dump_file(root, b->tmp, JSON_COMPACT) != 0)
        goto out;
    if (rename(b->tmp, b->path) != 0)
        goto out;
    rc = 0;
out:
    json_decref(arr);
    json_decref(root);
    return rc;
}

static int load(svc_backend_t *b, const char **err)
{
    json_error_t je;
    json_t *root, *arr, *o;
    size_t i;

    root = json_load_file(b->path, 0, &je);
    if (root == NULL) {
        FILE *f = fopen(b->path, "r");

        if (f == NULL && errno == ENOENT)
            return 0;   /* fresh hardware */
        if (f != NULL)
            fclose(f);
        *err = "the backend's inventory file is unreadable";
        return -1;
    }
    if (json_integer_value(json_object_get(root, "ngpus")) != b->ngpus) {
        json_decref(root);
        *err = "the backend's inventory has another number of GPUs than the configured nodes";
        return -1;
    }
    b->uuid_seq = (uint64_t)json_integer_value(json_object_get(root, "uuid_seq"));
    arr = json_object_get(root, "instances");
    json_array_foreach(arr, i, o) {
        int gpu = (int)json_integer_value(json_object_get(o, "gpu"));
        int start = (int)json_integer_value(json_object_get(o, "start"));
        int prof = (int)json_integer_value(json_object_get(o, "prof"));
        const char *job = json_string_value(json_object_get(o, "job"));
        const char *uuid = json_string_value(json_object_get(o, "uuid"));

        if (gpu < 0 || gpu >= b->ngpus || start < -1 || start > 15 || prof < 0 || prof > 15 ||
            add(b, gpu, start, prof, job) != 0) {
            json_decref(root);
            *err = "the backend's inventory has an impossible instance";
            return -1;
        }
        if (uuid != NULL)
            snprintf(b->v[b->n - 1].uuid, sizeof(b->v[0].uuid), "%s", uuid);
    }
    json_decref(root);
    return 0;
}

static char *path_join(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);

    if (p != NULL)
        snprintf(p, n, "%s/%s", dir, name);
    return p;
}

static int parse_fail(svc_backend_t *b, const char *spec)
{
    const char *colon;
    char *end;
    int k;

    if (spec == NULL || *spec == '\0')
        return 0;
    if ((colon = strchr(spec, ':')) == NULL)
        return -1;
    b->fail_kind = 0;
    if ((size_t)(colon - spec) == 3 && strncmp(spec, "any", 3) == 0)
        b->fail_kind = -1;
    for (k = 1; k <= MS_OP_STOP; k++)
        if (strlen(KIND[k]) == (size_t)(colon - spec) && strncmp(spec, KIND[k], strlen(KIND[k])) == 0)
            b->fail_kind = k;
    errno = 0;
    b->fail_every = strtol(colon + 1, &end, 10);
    if (b->fail_kind == 0 || errno != 0 || *end != '\0' || b->fail_every < 1)
        return -1;
    return 0;
}

/* --- nvml ------------------------------------------------------------------ */

static char nvml_err[512];   /* open's message: one open at start-up, one thread */

/* nvml_err already says what failed. */
static int nvml_fail(svc_backend_t *b, const char **err)
{
    *err = nvml_err;
    svc_backend_close(b);
    return -1;
}

/* The hardware's GIs, with the job tags of the tag file where they match. */
static int nvml_load(svc_backend_t *b, const char **err)
{
    svc_binst_t *tags = b->v;
    int ntags = b->n, g, i, t;

    b->v = NULL;
    b->n = b->cap = 0;
    for (g = 0; g < b->ngpus; g++) {
        ms_nvml_inventory_t inv;
        ms_nvml_err_t e;
        const ms_model_t *m = ms_geom_model(b->geom[g]);

        if (ms_nvml_inventory(b->nv, g, &inv, &e) != MS_OK) {
            if (e.kind == MS_NVML_K_UNSUPPORTED)
                continue;   /* MIG off: a whole or time-sliced GPU holds no GI */
            free(tags);
            snprintf(nvml_err, sizeof(nvml_err), "GPU %d: cannot read its instances: %.320s", g, e.msg);
            *err = nvml_err;
            return -1;
        }
        for (i = 0; i < inv.ngi; i++) {
            const ms_nvml_gi_t *gi = &inv.gi[i];
            int k = gi->prof >= 0 ? ms_geom_profile_find(b->geom[g], m->profiles[gi->prof].name) : -1;

            if (k < 0) {
                /* a GI migsched cannot describe: left alone, its slices stay
                 * taken (creates there fail, and the scheduler is told) */
                svc_log("warn", "nvml: a GPU instance of a profile migsched does not use",
                        json_pack("{s:i,s:i,s:i}", "gpu", g, "start", (int)gi->start,
                                  "profile_id", (int)gi->profile_id));
                continue;
            }
            if (add(b, g, (int)gi->start, k, NULL) != 0) {
                free(tags);
                *err = "out of memory";
                return -1;
            }
            snprintf(b->v[b->n - 1].uuid, sizeof(b->v[0].uuid), "%.47s",
                     gi->nci > 0 ? gi->ci[0].uuid : "");
            b->v[b->n - 1].gi_id = (uint16_t)gi->id;
            b->v[b->n - 1].ci_id = (uint16_t)(gi->nci > 0 ? gi->ci[0].id : 0);
            for (t = 0; t < ntags; t++)
                if (tags[t].gpu == g && tags[t].start == (int8_t)gi->start && tags[t].prof == k)
                    snprintf(b->v[b->n - 1].job, sizeof(b->v[0].job), "%s", tags[t].job);
        }
    }
    /* time-slice slots are the daemon's alone */
    for (t = 0; t < ntags; t++)
        if (tags[t].start < 0 && add(b, tags[t].gpu, -1, tags[t].prof, tags[t].job) != 0) {
            free(tags);
            *err = "out of memory";
            return -1;
        }
    free(tags);
    return persist(b) == 0 ? 0 : (*err = "cannot write nvml-inventory.json", -1);
}

static int nvml_open(const svc_backend_cfg_t *cfg, svc_backend_t **out, const char **err)
{
    svc_backend_t *b = calloc(1, sizeof(*b));
    const char *lib = getenv("MIGSCHEDD_NVML_LIB");
    char e[256];
    int g;

    if (b == NULL) {
        *err = "out of memory";
        return -1;
    }
    snprintf(b->kind, sizeof(b->kind), "nvml");
    b->ngpus = cfg->ngpus;
    pthread_mutex_init(&b->mu, NULL);
    b->path = path_join(cfg->state_dir, "nvml-inventory.json");
    b->tmp = path_join(cfg->state_dir, "nvml-inventory.json.tmp");
    b->gpu_uuid = calloc((size_t)(cfg->ngpus > 0 ? cfg->ngpus : 1), sizeof(*b->gpu_uuid));
    b->geom = calloc((size_t)(cfg->ngpus > 0 ? cfg->ngpus : 1), sizeof(*b->geom));
    if (b->path == NULL || b->tmp == NULL || b->gpu_uuid == NULL || b->geom == NULL ||
        cfg->gpu_geom == NULL) {
        *err = "out of memory";
        svc_backend_close(b);
        return -1;
    }
    if (ms_nvml_open(lib != NULL && lib[0] != '\0' ? lib : NULL, &b->nv, e, sizeof(e)) != MS_OK) {
        snprintf(nvml_err, sizeof(nvml_err), "%s", e);
        return nvml_fail(b, err);
    }
    if (ms_nvml_gpu_count(b->nv) < cfg->ngpus) {
        snprintf(nvml_err, sizeof(nvml_err), "the nodes have %d GPUs, NVML reports %d on this machine",
                 cfg->ngpus, ms_nvml_gpu_count(b->nv));
        return nvml_fail(b, err);
    }
    for (g = 0; g < cfg->ngpus; g++) {
        ms_nvml_gpu_t gi;
        ms_nvml_err_t ne;
        const ms_model_t *want = ms_geom_model(cfg->gpu_geom[g]);

        b->geom[g] = cfg->gpu_geom[g];
        if (ms_nvml_gpu_info(b->nv, g, &gi, &ne) != MS_OK) {
            snprintf(nvml_err, sizeof(nvml_err), "GPU %d: %.300s", g, ne.msg);
            return nvml_fail(b, err);
        }
        if (gi.model != want) {
            snprintf(nvml_err, sizeof(nvml_err), "GPU %d is a %.96s, the nodes say %s", g, gi.name,
                     want->name);
            return nvml_fail(b, err);
        }
        if (cfg->gpu_mig != NULL && cfg->gpu_mig[g] && gi.mig_current != 1) {
            snprintf(nvml_err, sizeof(nvml_err),
                     "GPU %d: MIG is disabled; migschedd never changes MIG mode (enable it with "
                     "nvidia-smi -mig 1, or give the node :whole)", g);
            return nvml_fail(b, err);
        }
        snprintf(b->gpu_uuid[g], sizeof(b->gpu_uuid[g]), "%.47s", gi.uuid);
    }
    if (load(b, err) != 0 || nvml_load(b, err) != 0) {
        svc_backend_close(b);
        return -1;
    }
    *out = b;
    return 0;
}

/* CREATE and DESTROY on the hardware (b->mu held); the rest is tags. */
static int nvml_op(svc_backend_t *b, const ms_op_t *op, const char **why)
{
    static __thread char msg[400];
    ms_nvml_err_t e;
    ms_nvml_gi_t gi;
    const ms_profile_t *p;
    ms_status_t st;
    int i;

    if (op->kind == MS_OP_CREATE) {
        p = ms_geom_profile(b->geom[op->gpu], op->prof);
        if (find(b, op->gpu, op->start, NULL) >= 0) {
            *why = "an instance exists at that start";
            return -1;
        }
        if (ms_nvml_create(b->nv, op->gpu, p, (unsigned)op->start, &gi, &e) != MS_OK) {
            snprintf(msg, sizeof(msg), "nvml: %.320s", e.msg);
            *why = msg;
            return -1;
        }
        if (add(b, op->gpu, op->start, op->prof, NULL) != 0) {
            *why = "out of memory";
            return -1;
        }
        snprintf(b->v[b->n - 1].uuid, sizeof(b->v[0].uuid), "%.47s", gi.nci > 0 ? gi.ci[0].uuid : "");
        b->v[b->n - 1].gi_id = (uint16_t)gi.id;
        b->v[b->n - 1].ci_id = (uint16_t)(gi.nci > 0 ? gi.ci[0].id : 0);
        return 0;
    }
    if ((i = find(b, op->gpu, op->start, NULL)) < 0 || op->start < 0) {
        *why = "no such instance";
        return -1;
    }
    if (b->v[i].job[0] != '\0') {
        *why = "the instance runs a job";
        return -1;
    }
    p = ms_geom_profile(b->geom[op->gpu], b->v[i].prof);
    st = ms_nvml_destroy(b->nv, op->gpu, p, (unsigned)op->start, &e);
    if (st != MS_OK && st != MS_ENOENT) {   /* ENOENT: gone already */
        snprintf(msg, sizeof(msg), "nvml: %.320s", e.msg);
        *why = msg;
        return -1;
    }
    del(b, i);
    return 0;
}

int svc_backend_open(const svc_backend_cfg_t *cfg, svc_backend_t **out, const char **err)
{
    svc_backend_t *b;
    int g;

    *out = NULL;
    if (strcmp(cfg->kind, "nvml") == 0)
        return nvml_open(cfg, out, err);
    if (strcmp(cfg->kind, "agent") == 0) {
        if ((b = calloc(1, sizeof(*b))) == NULL) {
            *err = "out of memory";
            return -1;
        }
        snprintf(b->kind, sizeof(b->kind), "agent");
        pthread_mutex_init(&b->mu, NULL);
        if (svc_abe_open(cfg, &b->ag, err) != 0) {
            svc_backend_close(b);
            return -1;
        }
        *out = b;
        return 0;
    }
    if (strcmp(cfg->kind, "sim") != 0 && strcmp(cfg->kind, "dry-run") != 0) {
        *err = "unknown backend (sim, dry-run, nvml, agent)";
        return -1;
    }
    if ((b = calloc(1, sizeof(*b))) == NULL) {
        *err = "out of memory";
        return -1;
    }
    snprintf(b->kind, sizeof(b->kind), "%s", cfg->kind);
    b->dry = strcmp(cfg->kind, "dry-run") == 0;
    b->ngpus = cfg->ngpus;
    b->salt = cfg->uuid_salt;
    b->delay = b->dry ? 0.0 : cfg->op_delay_s;
    pthread_mutex_init(&b->mu, NULL);
    b->path = path_join(cfg->state_dir, b->dry ? "dry-run-inventory.json" : "sim-inventory.json");
    b->tmp = path_join(cfg->state_dir, b->dry ? "dry-run-inventory.json.tmp" : "sim-inventory.json.tmp");
    b->gpu_uuid = calloc((size_t)(cfg->ngpus > 0 ? cfg->ngpus : 1), sizeof(*b->gpu_uuid));
    if (b->path == NULL || b->tmp == NULL || b->gpu_uuid == NULL) {
        *err = "out of memory";
        svc_backend_close(b);
        return -1;
    }
    for (g = 0; g < cfg->ngpus; g++)
        snprintf(b->gpu_uuid[g], sizeof(b->gpu_uuid[g]), "GPU-%08x-0000-4000-8000-%012x",
                 0x5157u ^ b->salt, (unsigned)g);
    if (!b->dry && parse_fail(b, cfg->fail) != 0) {
        *err = "bad sim fail spec: KIND:N with KIND create, destroy, start, move, stop or any, N >= 1";
        svc_backend_close(b);
        return -1;
    }
    if (b->dry) {
        b->log_path = path_join(cfg->state_dir, "dry-run.jsonl");
        if (b->log_path == NULL || (b->log = fopen(b->log_path, "a")) == NULL) {
            *err = "cannot open dry-run.jsonl in the state directory";
            svc_backend_close(b);
            return -1;
        }
    }
    if (load(b, err) != 0) {
        svc_backend_close(b);
        return -1;
    }
    *out = b;
    return 0;
}

void svc_backend_close(svc_backend_t *b)
{
    if (b == NULL)
        return;
    svc_abe_close(b->ag);
    if (b->log != NULL)
        fclose(b->log);
    pthread_mutex_destroy(&b->mu);
    free(b->v);
    free(b->path);
    free(b->tmp);
    free(b->log_path);
    free(b->gpu_uuid);
    free(b->geom);
    ms_nvml_close(b->nv);
    free(b);
}

const char *svc_backend_kind(const svc_backend_t *b)
{
    return b->kind;
}

static void sleep_s(double s)
{
    struct timespec ts;

    if (s <= 0.0)
        return;
    ts.tv_sec = (time_t)s;
    ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* Apply op to the inventory (b->mu held). */
static int apply(svc_backend_t *b, const ms_op_t *op, const char *job, const char **why)
{
    int i, k;

    switch (op->kind) {
    case MS_OP_CREATE:
        if (find(b, op->gpu, op->start, NULL) >= 0) {
            *why = "an instance exists at that start";
            return -1;
        }
        return add(b, op->gpu, op->start, op->prof, NULL);
    case MS_OP_DESTROY:
        if ((i = find(b, op->gpu, op->start, NULL)) < 0 || op->start < 0) {
            *why = "no such instance";
            return -1;
        }
        if (b->v[i].job[0] != '\0') {
            *why = "the instance runs a job";
            return -1;
        }
        del(b, i);
        return 0;
    case MS_OP_START:
        if (op->start < 0)
            return add(b, op->gpu, -1, op->prof, job);
        if ((i = find(b, op->gpu, op->start, NULL)) < 0 || b->v[i].job[0] != '\0') {
            *why = "no idle instance at that start";
            return -1;
        }
        snprintf(b->v[i].job, sizeof(b->v[i].job), "%s", job);
        return 0;
    case MS_OP_MOVE:
        if ((i = find(b, op->from_gpu, op->from_start, job)) < 0 || strcmp(b->v[i].job, job) != 0) {
            *why = "the job is not on the source instance";
            return -1;
        }
        if (op->from_start < 0 || op->bbm) {
            del(b, i);
            if (op->start >= 0 && find(b, op->gpu, op->start, NULL) >= 0) {
                *why = "the target start is taken";
                return -1;
            }
            return add(b, op->gpu, op->start, op->prof, job);
        }
        if ((k = find(b, op->gpu, op->start, NULL)) < 0 || b->v[k].job[0] != '\0') {
            *why = "no idle target instance";
            return -1;
        }
        snprintf(b->v[k].job, sizeof(b->v[k].job), "%s", job);
        b->v[i].job[0] = '\0';
        return 0;
    case MS_OP_STOP:
        if ((i = find(b, op->gpu, op->start, job)) < 0 || strcmp(b->v[i].job, job) != 0) {
            *why = "the job is not on that instance";
            return -1;
        }
        if (op->start < 0)
            del(b, i);
        else
            b->v[i].job[0] = '\0';
        return 0;
    default:
        *why = "unknown op";
        return -1;
    }
}

int svc_backend_op(svc_backend_t *b, const ms_op_t *op, const char *job, const char *prof_name,
                   const char **why)
{
    int rc;

    *why = "";
    if (b->ag != NULL)
        return svc_abe_op(b->ag, op, job, prof_name, why);
    sleep_s(b->delay);
    pthread_mutex_lock(&b->mu);
    if (op->kind >= 1 && op->kind <= MS_OP_STOP)
        b->count[op->kind]++;
    if (b->fail_every > 0 && (b->fail_kind == -1 || b->fail_kind == op->kind) &&
        b->count[op->kind] % b->fail_every == 0) {
        pthread_mutex_unlock(&b->mu);
        *why = "injected failure (sim fail spec)";
        return -1;
    }
    if (b->nv != NULL && (op->kind == MS_OP_CREATE || op->kind == MS_OP_DESTROY))
        rc = nvml_op(b, op, why);
    else
        rc = apply(b, op, job, why);
    if (rc == 0 && persist(b) != 0) {
        *why = "cannot write the inventory file";
        rc = -1;
    }
    pthread_mutex_unlock(&b->mu);
    if (b->dry && op->kind >= 1 && op->kind <= MS_OP_STOP) {
        json_t *o = json_pack("{s:s,s:i,s:i,s:s,s:s}", "op", KIND[op->kind], "gpu", (int)op->gpu,
                              "start", (int)op->start, "profile", prof_name, "job", job);
        char *s;

        if (o != NULL && op->kind == MS_OP_MOVE) {
            json_object_set_new(o, "from_gpu", json_integer(op->from_gpu));
            json_object_set_new(o, "from_start", json_integer(op->from_start));
            json_object_set_new(o, "bbm", json_boolean(op->bbm));
        }
        if (o != NULL && (s = json_dumps(o, JSON_COMPACT)) != NULL) {
            fprintf(b->log, "%s\n", s);
            fflush(b->log);
            svc_log("info", "dry-run op", json_deep_copy(o));
            free(s);
        }
        json_decref(o);
    }
    return rc;
}

int svc_backend_destroy(svc_backend_t *b, const svc_binst_t *in)
{
    int i, rc = -1;

    if (b->ag != NULL)
        return svc_abe_destroy(b->ag, in);
    pthread_mutex_lock(&b->mu);
    if ((i = find(b, in->gpu, in->start, in->job)) >= 0) {
        if (b->nv != NULL && in->start >= 0) {
            ms_op_t op;
            const char *why;

            memset(&op, 0, sizeof(op));
            op.kind = MS_OP_DESTROY;
            op.gpu = in->gpu;
            op.start = in->start;
            b->v[i].job[0] = '\0';   /* reconciliation destroys what no job owns */
            rc = nvml_op(b, &op, &why) == 0 ? persist(b) : -1;
        } else {
            del(b, i);
            rc = persist(b);
        }
    }
    pthread_mutex_unlock(&b->mu);
    return rc;
}

int svc_backend_create(svc_backend_t *b, int gpu, int prof, int start)
{
    int rc = -1;

    if (b->ag != NULL)
        return svc_abe_create(b->ag, gpu, prof, start);
    pthread_mutex_lock(&b->mu);
    if (b->nv != NULL) {
        ms_op_t op;
        const char *why;

        memset(&op, 0, sizeof(op));
        op.kind = MS_OP_CREATE;
        op.gpu = gpu;
        op.start = (int8_t)start;
        op.prof = (int8_t)prof;
        if (nvml_op(b, &op, &why) == 0)
            rc = persist(b);
    } else if (find(b, gpu, start, NULL) < 0 && add(b, gpu, start, prof, NULL) == 0) {
        rc = persist(b);
    }
    pthread_mutex_unlock(&b->mu);
    return rc;
}

int svc_backend_inventory(svc_backend_t *b, svc_binst_t **out, int *n)
{
    if (b->ag != NULL)
        return svc_abe_inventory(b->ag, out, n);
    pthread_mutex_lock(&b->mu);
    *out = malloc((size_t)(b->n > 0 ? b->n : 1) * sizeof(**out));
    if (*out == NULL) {
        pthread_mutex_unlock(&b->mu);
        return -1;
    }
    if (b->n > 0)
        memcpy(*out, b->v, (size_t)b->n * sizeof(**out));
    *n = b->n;
    pthread_mutex_unlock(&b->mu);
    return 0;
}

int svc_backend_adopt_uuid(svc_backend_t *b, int gpu, int start, const char *uuid)
{
    int i, rc = 0;

    if (uuid == NULL || uuid[0] == '\0' || strlen(uuid) >= sizeof(b->v[0].uuid))
        return -1;
    pthread_mutex_lock(&b->mu);
    if (b->nv == NULL) {           /* hardware names its own instances */
        i = find(b, gpu, start, NULL);
        if (i < 0) {
            rc = -1;
        } else if (strcmp(b->v[i].uuid, uuid) != 0) {
            snprintf(b->v[i].uuid, sizeof(b->v[i].uuid), "%s", uuid);
            rc = persist(b);
        }
    }
    pthread_mutex_unlock(&b->mu);
    return rc;
}

const char *svc_backend_gpu_uuid(const svc_backend_t *b, int gpu)
{
    if (b->ag != NULL)
        return svc_abe_gpu_uuid(b->ag, gpu);
    return gpu >= 0 && gpu < b->ngpus ? b->gpu_uuid[gpu] : "";
}

void svc_backend_inst_uuid(svc_backend_t *b, int gpu, int start, const char *job, char *buf,
                           size_t len)
{
    int i;

    if (b->ag != NULL) {
        svc_abe_inst_uuid(b->ag, gpu, start, job, buf, len);
        return;
    }
    pthread_mutex_lock(&b->mu);
    i = find(b, gpu, start, job);
    snprintf(buf, len, "%s", i >= 0 ? b->v[i].uuid : "");
    pthread_mutex_unlock(&b->mu);
}
