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
 * Both keep an inventory of instances in memory, guarded by a mutex. It
 * is kept in STATE_DIR/<kind>-inventory.json (a snapshot, replaced by
 * renaming a temporary file over it) and <kind>-inventory.journal: after
 * every op one line holding the whole new state of the op's GPUs is
 * appended with one write, and the snapshot is rewritten when the journal
 * outgrows it, at every start and at a clean stop. A reader (the restarted
 * daemon) sees the state before or after an op, never half of one. Neither
 * file is fsynced: the sim models GPUs that survive a daemon crash (kill
 * -9), where the page cache keeps the files; a power cut loses real GPU
 * instances too.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/fdio.h"
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
    svc_jtext_t out;            /* rendered text, its memory kept between calls */
    char *jpath;                /* the journal: <path>.journal */
    int jfd;                    /* appended to after every op; -1 not open */
    bool jbroken;               /* an append failed: compact at the next op */
    size_t jbytes, snapbytes;   /* the journal's length, the snapshot's */
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

/* --- the inventory file: rendered by hand, written with one write ------- */

static void render_inst(svc_jtext_t *t, const svc_binst_t *in, bool first)
{
    svc_jtext_raw(t, first ? "{\"gpu\":" : ",{\"gpu\":");
    svc_jtext_int(t, in->gpu);
    svc_jtext_raw(t, ",\"start\":");
    svc_jtext_int(t, in->start);
    svc_jtext_raw(t, ",\"prof\":");
    svc_jtext_int(t, in->prof);
    svc_jtext_raw(t, ",\"job\":");
    svc_jtext_str(t, in->job);   /* tags come from requests and pod names */
    svc_jtext_raw(t, ",\"uuid\":");
    svc_jtext_str(t, in->uuid);
    svc_jtext_raw(t, "}");
}

/* The whole inventory as JSON ({"ngpus", "uuid_seq", "instances": [...]},
 * the format load reads and tests edit). */
static int render(svc_backend_t *b)
{
    svc_jtext_t *t = &b->out;
    int i;

    svc_jtext_reset(t);
    svc_jtext_raw(t, "{\"ngpus\":");
    svc_jtext_int(t, b->ngpus);
    svc_jtext_raw(t, ",\"uuid_seq\":");
    svc_jtext_int(t, (long long)b->uuid_seq);
    svc_jtext_raw(t, ",\"instances\":[");
    for (i = 0; i < b->n; i++)
        render_inst(t, &b->v[i], i == 0);
    svc_jtext_raw(t, "]}\n");
    return t->oom ? -1 : 0;
}

/* Replace the snapshot (a temporary file renamed over the old one), then
 * empty the journal. A crash between the two replays a journal that the
 * snapshot already holds: each record sets whole GPUs, so replaying the
 * records in order ends where the snapshot is. */
static int compact(svc_backend_t *b)
{
    int fd, rc;

    if (render(b) != 0 || (fd = open(b->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) < 0)
        return -1;
    rc = ms__write_all(fd, b->out.p, b->out.len);
    if (close(fd) != 0 || rc != 0 || rename(b->tmp, b->path) != 0)
        return -1;
    b->snapbytes = b->out.len;
    if (b->jfd >= 0) {
        if (ftruncate(b->jfd, 0) != 0)
            return -1;
        b->jbytes = 0;
        b->jbroken = false;
    }
    return 0;
}

/* After an op on GPU g1 (and g2 unless negative): one journal line,
 * {"uuid_seq", "gpus": [...], "instances": [every instance on them]},
 * written with one write(2), so an op costs what its GPUs hold and not
 * what the cluster holds (rewriting the whole inventory after every op was
 * most of the daemon's CPU under a stream of submissions,
 * docs/performance.md); the snapshot is rewritten once the journal
 * outgrows it 4 times. A line cut short by a crash has no newline and is
 * ignored at load: that op never happened, and its outcome was never
 * reported. */
static int persist_gpus(svc_backend_t *b, int g1, int g2)
{
    svc_jtext_t *t = &b->out;
    int i;
    bool first = true;

    if (b->jfd < 0 || b->jbroken)
        return compact(b);
    svc_jtext_reset(t);
    svc_jtext_raw(t, "{\"uuid_seq\":");
    svc_jtext_int(t, (long long)b->uuid_seq);
    svc_jtext_raw(t, ",\"gpus\":[");
    svc_jtext_int(t, g1);
    if (g2 >= 0 && g2 != g1) {
        svc_jtext_raw(t, ",");
        svc_jtext_int(t, g2);
    }
    svc_jtext_raw(t, "],\"instances\":[");
    for (i = 0; i < b->n; i++)
        if (b->v[i].gpu == g1 || (g2 >= 0 && b->v[i].gpu == g2)) {
            render_inst(t, &b->v[i], first);
            first = false;
        }
    svc_jtext_raw(t, "]}\n");
    if (t->oom)
        return -1;
    if (ms__write_all(b->jfd, t->p, t->len) != 0) {
        b->jbroken = true;   /* a torn line may end it: the snapshot takes over */
        return compact(b);
    }
    b->jbytes += t->len;
    return b->jbytes > 4 * b->snapbytes + 65536 ? compact(b) : 0;
}

/* One instance of the snapshot or of a journal record. */
static int add_json(svc_backend_t *b, json_t *o)
{
    int gpu = (int)json_integer_value(json_object_get(o, "gpu"));
    int start = (int)json_integer_value(json_object_get(o, "start"));
    int prof = (int)json_integer_value(json_object_get(o, "prof"));
    const char *job = json_string_value(json_object_get(o, "job"));
    const char *uuid = json_string_value(json_object_get(o, "uuid"));

    if (gpu < 0 || gpu >= b->ngpus || start < -1 || start > 15 || prof < 0 || prof > 15 ||
        add(b, gpu, start, prof, job) != 0)
        return -1;
    if (uuid != NULL)
        snprintf(b->v[b->n - 1].uuid, sizeof(b->v[0].uuid), "%s", uuid);
    return 0;
}

/* Replace every instance of the record's GPUs with the record's. */
static int replay_line(svc_backend_t *b, json_t *rec)
{
    json_t *gpus = json_object_get(rec, "gpus"), *arr = json_object_get(rec, "instances"), *o;
    json_int_t seq = json_integer_value(json_object_get(rec, "uuid_seq"));
    size_t k;
    int i;

    if (!json_is_array(gpus) || !json_is_array(arr) || json_array_size(gpus) == 0)
        return -1;
    json_array_foreach(gpus, k, o) {
        json_int_t g = json_integer_value(o);

        if (!json_is_integer(o) || g < 0 || g >= b->ngpus)
            return -1;
        for (i = b->n - 1; i >= 0; i--)
            if (b->v[i].gpu == g)
                del(b, i);
    }
    json_array_foreach(arr, k, o) {
        json_int_t g = json_integer_value(json_object_get(o, "gpu"));
        bool listed = false;
        size_t q;
        json_t *x;

        json_array_foreach(gpus, q, x)
            listed = listed || json_integer_value(x) == g;
        if (!listed || add_json(b, o) != 0)
            return -1;
    }
    if (seq > 0 && (uint64_t)seq > b->uuid_seq)
        b->uuid_seq = (uint64_t)seq;
    return 0;
}

static char journal_err[512];   /* load's message: one load at start-up */

/* Apply the journal's complete lines to what the snapshot loaded. */
static int replay(svc_backend_t *b, const char **err)
{
    FILE *f = fopen(b->jpath, "r");
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int lineno = 0, rc = 0;

    if (f == NULL) {
        if (errno == ENOENT)
            return 0;
        *err = "the backend's inventory journal is unreadable";
        return -1;
    }
    while (rc == 0 && (len = getline(&line, &cap, f)) > 0) {
        json_error_t je;
        json_t *rec;

        lineno++;
        if (line[len - 1] != '\n')
            break;   /* cut short by a crash */
        rec = json_loadb(line, (size_t)len, 0, &je);
        if (rec == NULL || replay_line(b, rec) != 0) {
            snprintf(journal_err, sizeof(journal_err), "%.300s line %d: %s", b->jpath, lineno,
                     rec == NULL ? je.text : "not a record of whole GPUs' instances");
            *err = journal_err;
            rc = -1;
        }
        json_decref(rec);
    }
    free(line);
    fclose(f);
    return rc;
}

/* The snapshot (absent: fresh hardware), then the journal's records on top;
 * then the journal is opened for appending. The caller compacts once the
 * state is whole (the sim at once, nvml after reading the hardware), so
 * that each run starts with an empty journal. */
static int load(svc_backend_t *b, const char **err)
{
    json_error_t je;
    json_t *root, *arr, *o;
    size_t i, n = strlen(b->path);

    if ((b->jpath = malloc(n + 16)) == NULL) {
        *err = "out of memory";
        return -1;
    }
    /* sim-inventory.json -> sim-inventory.journal */
    snprintf(b->jpath, n + 16, "%.*s.journal", (int)(n > 5 ? n - 5 : n), b->path);
    root = json_load_file(b->path, 0, &je);
    if (root == NULL) {
        FILE *f = fopen(b->path, "r");

        if (f != NULL || errno != ENOENT) {
            if (f != NULL)
                fclose(f);
            *err = "the backend's inventory file is unreadable";
            return -1;
        }
    } else {
        if (json_integer_value(json_object_get(root, "ngpus")) != b->ngpus) {
            json_decref(root);
            *err = "the backend's inventory has another number of GPUs than the configured nodes";
            return -1;
        }
        b->uuid_seq = (uint64_t)json_integer_value(json_object_get(root, "uuid_seq"));
        arr = json_object_get(root, "instances");
        json_array_foreach(arr, i, o) {
            if (add_json(b, o) != 0) {
                json_decref(root);
                *err = "the backend's inventory has an impossible instance";
                return -1;
            }
        }
        json_decref(root);
    }
    if (replay(b, err) != 0)
        return -1;
    if ((b->jfd = open(b->jpath, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644)) < 0) {
        *err = "cannot open the backend's inventory journal";
        return -1;
    }
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
    return compact(b) == 0 ? 0 : (*err = "cannot write nvml-inventory.json", -1);
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
    b->jfd = -1;
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
        b->jfd = -1;
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
    b->jfd = -1;
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
    if (compact(b) != 0) {
        *err = "cannot write the backend's inventory file";
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
    if (b->jfd >= 0) {
        /* a clean stop leaves the whole state in the snapshot */
        if (b->jbytes > 0 || b->jbroken)
            (void)compact(b);
        close(b->jfd);
    }
    if (b->log != NULL)
        fclose(b->log);
    pthread_mutex_destroy(&b->mu);
    free(b->v);
    svc_jtext_free(&b->out);
    free(b->jpath);
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
    if (rc == 0 && persist_gpus(b, op->gpu, op->kind == MS_OP_MOVE ? op->from_gpu : -1) != 0) {
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
            rc = nvml_op(b, &op, &why) == 0 ? persist_gpus(b, in->gpu, -1) : -1;
        } else {
            del(b, i);
            rc = persist_gpus(b, in->gpu, -1);
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
            rc = persist_gpus(b, gpu, -1);
    } else if (find(b, gpu, start, NULL) < 0 && add(b, gpu, start, prof, NULL) == 0) {
        rc = persist_gpus(b, gpu, -1);
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
            rc = persist_gpus(b, gpu, -1);
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
