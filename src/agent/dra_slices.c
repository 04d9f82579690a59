/* dra_slices.c - the node's ResourceSlices (dra.h), pure: what to publish,
 * built from the geometry tables, never from the API server's state. No
 * I/O, no globals; any thread (the publisher's writer, in the agent).
 *
 * Layout (Kubernetes 1.35+, as NVIDIA's driver publishes): the counter sets
 * in slices of their own ("counters-<i>", at most 8 sets each), then one
 * device slice per GPU ("gpu-<ggg>", zero-padded so that kube-scheduler's
 * allocator, which walks slices by name, walks the GPUs in order). One pool
 * per node, named after it; every slice carries the pool's generation and
 * slice count.
 *
 * What each kind of GPU publishes, and why:
 *   MIG on     the whole GPU "gpu-<g>" (prepared as the full-size instance,
 *              7g on the 8-slice family: the agent never changes MIG mode)
 *              and one device per legal (profile, start); a counter set
 *              "gpu-<g>-counter-set" with memory-slice-<i> (1 each), memory
 *              and compute-slices, plus instances-<token>-<id> for a profile
 *              whose count is capped before its slices run out. A MIG
 *              device consumes its slices [start, start+size), its memory,
 *              its compute slices (and one of its capped count); the whole
 *              GPU consumes everything. So kube-scheduler's counter
 *              arithmetic allows exactly the layouts the geometry allows
 *              (tests/dra checks every subset of every model's devices).
 *   MIG off    the whole GPU alone, no counters (nothing shares it).
 *   time-sliced the whole GPU with allowMultipleAllocations and a "shares"
 *              capacity of the replicas (each claim takes 1 by default, as
 *              NVIDIA's consumable shares do); its memory is not consumed
 *              by default (a request policy of 0), or a second claim could
 *              never fit.
 * Capacity "memory" is the profile's memory as its product name says
 * (1g.5gb: 5Gi; NVML's exact size is a little less), the model's for the
 * whole GPU. The memory counter's total is the most that memory-disjoint
 * instances can sum to: product names round up (2 x 3g.71gb = 142 GB on a
 * 141 GB H200), and a counter must never refuse what the slices allow.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/dra.h"

#define MAX_COUNTERS 32

/* --- counters ----------------------------------------------------------- */

static long long mib_of_gb(double gb)
{
    return (long long)llround(gb * 1024.0);
}

typedef struct sum_ctx {
    const ms_geom_t *g;
    long long best;
} sum_ctx_t;

static int sum_layout(void *ctx, const ms_gi_t *gis, int n)
{
    sum_ctx_t *c = ctx;
    long long s = 0;
    int i;

    for (i = 0; i < n; i++)
        s += mib_of_gb(ms_geom_profile_mem_gb(c->g, gis[i].prof));
    if (s > c->best)
        c->best = s;
    return 0;
}

/* The memory counter's total in MiB (above). */
static long long memory_total_mib(const ms_geom_t *g)
{
    sum_ctx_t c = { g, (long long)ms_geom_model(g)->mem_gb * 1024 };

    ms_geom_each_maximal(g, sum_layout, &c);
    return c.best;
}

/* Is profile k's count tracked by the geometry (capped before geometry)? */
static bool capped(const ms_geom_t *g, int k)
{
    return ms_state_count(g, ms_geom_empty_state(), k) >= 0;
}

static int capped_name(const ms_geom_t *g, int k, char *buf, size_t len)
{
    char tok[48];
    const ms_profile_t *p = ms_geom_profile(g, k);

    if (ag_dra_profile_token(p->name, tok, sizeof(tok)) != 0)
        return -1;
    return (size_t)snprintf(buf, len, "instances-%s-%u", tok, (unsigned)p->gi_id) < len ? 0 : -1;
}

long long ag_dra_counter_total(const ag_dra_gpu_t *gpu, const char *name)
{
    const ms_geom_t *g = gpu->geom;
    char buf[64];
    int i, k;

    if (!gpu->mig)
        return -1;
    for (i = 0; i < ms_geom_width(g); i++) {
        snprintf(buf, sizeof(buf), "memory-slice-%d", i);
        if (strcmp(buf, name) == 0)
            return 1;
    }
    if (strcmp(name, "memory") == 0)
        return memory_total_mib(g) * 1048576LL;
    if (strcmp(name, "compute-slices") == 0)
        return ms_geom_compute(g);
    for (k = 0; k < ms_geom_nprofiles(g); k++)
        if (capped(g, k) && capped_name(g, k, buf, sizeof(buf)) == 0 && strcmp(buf, name) == 0)
            return ms_geom_profile(g, k)->max_count;
    return -1;
}

long long ag_dra_counter_use(const ag_dra_gpu_t *gpu, const ag_dra_dev_t *d, const char *name)
{
    const ms_geom_t *g = gpu->geom;
    const ms_profile_t *p;
    char buf[64];
    int i;

    if (ag_dra_counter_total(gpu, name) < 0)
        return -1;
    if (d->kind == AG_DRA_GPU)
        return ag_dra_counter_total(gpu, name);
    p = ms_geom_profile(g, d->prof);
    for (i = d->start; i < d->start + p->msize; i++) {
        snprintf(buf, sizeof(buf), "memory-slice-%d", i);
        if (strcmp(buf, name) == 0)
            return 1;
    }
    if (strcmp(name, "memory") == 0)
        return mib_of_gb(ms_geom_profile_mem_gb(g, d->prof)) * 1048576LL;
    if (strcmp(name, "compute-slices") == 0)
        return p->cslices;
    if (capped(g, d->prof) && capped_name(g, d->prof, buf, sizeof(buf)) == 0 && strcmp(buf, name) == 0)
        return 1;
    return 0;
}

/* Every counter name of a MIG GPU's set, in a fixed order. */
static int counter_names(const ag_dra_gpu_t *gpu, char names[][64], int *n)
{
    const ms_geom_t *g = gpu->geom;
    int i, k, m = 0;

    for (i = 0; i < ms_geom_width(g) && m < MAX_COUNTERS; i++)
        snprintf(names[m++], 64, "memory-slice-%d", i);
    if (m + 2 > MAX_COUNTERS)
        return -1;
    snprintf(names[m++], 64, "memory");
    snprintf(names[m++], 64, "compute-slices");
    for (k = 0; k < ms_geom_nprofiles(g); k++) {
        if (!capped(g, k))
            continue;
        if (m >= MAX_COUNTERS || capped_name(g, k, names[m], 64) != 0)
            return -1;
        m++;
    }
    *n = m;
    return 0;
}

/* A quantity in its canonical form: "<n>Gi" / "<n>Mi" for bytes that are
 * whole GiB / MiB, a plain integer otherwise. */
static json_t *quantity(long long v, bool bytes)
{
    char buf[48];

    if (bytes && v != 0 && v % 1073741824LL == 0)
        snprintf(buf, sizeof(buf), "%lldGi", v / 1073741824LL);
    else if (bytes && v != 0 && v % 1048576LL == 0)
        snprintf(buf, sizeof(buf), "%lldMi", v / 1048576LL);
    else
        snprintf(buf, sizeof(buf), "%lld", v);
    return json_string(buf);
}

static json_t *counters_of(const ag_dra_gpu_t *gpu, const ag_dra_dev_t *d)
{
    char names[MAX_COUNTERS][64];
    json_t *o = json_object();
    int n, i;

    if (o == NULL || counter_names(gpu, names, &n) != 0) {
        json_decref(o);
        return NULL;
    }
    for (i = 0; i < n; i++) {
        long long v = d != NULL ? ag_dra_counter_use(gpu, d, names[i]) : ag_dra_counter_total(gpu, names[i]);

        if (v <= 0)
            continue;
        if (json_object_set_new(o, names[i], json_pack("{s:o}", "value", quantity(v, strcmp(names[i], "memory") == 0))) != 0) {
            json_decref(o);
            return NULL;
        }
    }
    return o;
}

/* A GPU's counter set: "gpu-<g>-counter-set", as NVIDIA names it. */
static int set_name(char *buf, size_t len, int g)
{
    return (size_t)snprintf(buf, len, "gpu-%d-counter-set", g) < len ? 0 : -1;
}

/* --- devices ------------------------------------------------------------ */

static json_t *str_attr(const char *v)
{
    return json_pack("{s:s}", "string", v);
}

static json_t *device_json(const ag_dra_gpu_t *gpu, const ag_dra_dev_t *d)
{
    const ms_geom_t *g = gpu->geom;
    const char *model = ms_geom_model(g)->name;
    char cset[64];
    json_t *dev, *attrs, *cap, *use;

    if (set_name(cset, sizeof(cset), d->gpu) != 0)
        return NULL;
    if (d->kind == AG_DRA_MIG) {
        attrs = json_pack("{s:o,s:o,s:o,s:o}", "type", str_attr("mig"), "profile",
                          str_attr(ms_geom_profile(g, d->prof)->name), "parentUUID", str_attr(gpu->uuid),
                          "productName", str_attr(model));
        cap = json_pack("{s:{s:o}}", "memory", "value",
                        quantity(mib_of_gb(ms_geom_profile_mem_gb(g, d->prof)) * 1048576LL, true));
    } else {
        long long mem = (long long)ms_geom_model(g)->mem_gb * 1073741824LL;

        attrs = json_pack("{s:o,s:o,s:o}", "type", str_attr("gpu"), "uuid", str_attr(gpu->uuid), "productName",
                          str_attr(model));
        if (gpu->replicas > 0)
            cap = json_pack("{s:{s:o,s:{s:s,s:{s:s,s:o,s:s}}},s:{s:o,s:{s:s,s:{s:s,s:o,s:s}}}}", "memory", "value",
                            quantity(mem, true), "requestPolicy", "default", "0", "validRange", "min", "0", "max",
                            quantity(mem, true), "step", "1Mi", "shares", "value", quantity(gpu->replicas, false),
                            "requestPolicy", "default", "1", "validRange", "min", "1", "max",
                            quantity(gpu->replicas, false), "step", "1");
        else
            cap = json_pack("{s:{s:o}}", "memory", "value", quantity(mem, true));
    }
    dev = json_pack("{s:s,s:o,s:o}", "name", d->name, "attributes", attrs, "capacity", cap);
    if (dev == NULL)
        return NULL;
    if (gpu->replicas > 0 && d->kind == AG_DRA_GPU && json_object_set_new(dev, "allowMultipleAllocations", json_true()) != 0) {
        json_decref(dev);
        return NULL;
    }
    if (gpu->mig) {
        if ((use = counters_of(gpu, d)) == NULL ||
            json_object_set_new(dev, "consumesCounters", json_pack("[{s:s,s:o}]", "counterSet", cset, "counters", use)) != 0) {
            json_decref(dev);
            return NULL;
        }
    }
    return dev;
}

/* --- slices ------------------------------------------------------------- */

int ag_dra_slice_name(const char *node, const char *driver, const char *part, char *buf, size_t len)
{
    size_t nl = strlen(node), room;
    uint32_t h = 2166136261u;
    const char *s;
    int k;

    k = snprintf(buf, len, "%s-%s-%s", node, driver, part);
    if (k > 0 && (size_t)k < len && k <= 253)
        return 0;
    /* too long: a prefix of the node's name and a hash of all of it */
    for (s = node; *s != '\0'; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    room = 253 - strlen(driver) - strlen(part) - 12;
    if (strlen(driver) + strlen(part) + 12 >= 253 || len < 254)
        return -1;
    if (nl > room)
        nl = room;
    while (nl > 0 && (node[nl - 1] == '.' || node[nl - 1] == '-'))
        nl--;
    k = snprintf(buf, len, "%.*s-%08x-%s-%s", (int)nl, node, (unsigned)h, driver, part);
    return k > 0 && (size_t)k < len && k <= 253 ? 0 : -1;
}

static json_t *slice(const ag_dra_node_t *nd, const char *part, long long gen, long long count)
{
    char name[300];
    json_t *o;

    if (ag_dra_slice_name(nd->node, nd->driver, part, name, sizeof(name)) != 0)
        return NULL;
    o = json_pack("{s:s,s:s,s:{s:s},s:{s:s,s:{s:s,s:I,s:I},s:s}}", "apiVersion", "resource.k8s.io/v1", "kind",
                  "ResourceSlice", "metadata", "name", name, "spec", "driver", nd->driver, "pool", "name", nd->node,
                  "generation", (json_int_t)gen, "resourceSliceCount", (json_int_t)count, "nodeName", nd->node);
    if (o != NULL && nd->node_uid != NULL &&
        json_object_set_new(json_object_get(o, "metadata"), "ownerReferences",
                            json_pack("[{s:s,s:s,s:s,s:s,s:b}]", "apiVersion", "v1", "kind", "Node", "name", nd->node,
                                      "uid", nd->node_uid, "controller", 1)) != 0) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static int add_counter_slices(const ag_dra_node_t *nd, long long gen, long long count, json_t *out)
{
    json_t *cur = NULL, *sets = NULL;
    char part[32], cset[64];
    int g, nsets = 0, nslice = 0;

    for (g = 0; g < nd->ngpus; g++) {
        json_t *c;

        if (!nd->gpus[g].mig)
            continue;
        if (cur == NULL || nsets == AG_DRA_MAX_COUNTER_SETS) {
            snprintf(part, sizeof(part), "counters-%d", nslice++);
            if ((cur = slice(nd, part, gen, count)) == NULL || json_array_append_new(out, cur) != 0 ||
                json_object_set_new(json_object_get(cur, "spec"), "sharedCounters", sets = json_array()) != 0)
                return -1;
            nsets = 0;
        }
        if (set_name(cset, sizeof(cset), g) != 0 || (c = counters_of(&nd->gpus[g], NULL)) == NULL ||
            json_array_append_new(sets, json_pack("{s:s,s:o}", "name", cset, "counters", c)) != 0)
            return -1;
        nsets++;
    }
    return 0;
}

json_t *ag_dra_slices(const ag_dra_node_t *nd, long long gen, char *why, size_t whylen)
{
    json_t *out = json_array(), *s, *devs;
    ag_dra_dev_t *v = NULL;
    int g, i, n, nmig = 0;
    char part[32];

    snprintf(why, whylen, "out of memory");
    for (g = 0; g < nd->ngpus; g++)
        nmig += nd->gpus[g].mig;
    if (out == NULL ||
        add_counter_slices(nd, gen, (nmig + AG_DRA_MAX_COUNTER_SETS - 1) / AG_DRA_MAX_COUNTER_SETS + nd->ngpus, out) != 0)
        goto fail;
    for (g = 0; g < nd->ngpus; g++) {
        if (ag_dra_devices(&nd->gpus[g], g, &v, &n) != 0)
            goto fail;
        if (n > AG_DRA_MAX_SLICE_DEVICES) {
            snprintf(why, whylen, "GPU %d (%s) has %d devices, more than a ResourceSlice may hold (%d)", g,
                     ms_geom_model(nd->gpus[g].geom)->name, n, AG_DRA_MAX_SLICE_DEVICES);
            goto fail;
        }
        snprintf(part, sizeof(part), "gpu-%03d", g);
        if ((s = slice(nd, part, gen, (nmig + AG_DRA_MAX_COUNTER_SETS - 1) / AG_DRA_MAX_COUNTER_SETS + nd->ngpus)) == NULL ||
            json_array_append_new(out, s) != 0 ||
            json_object_set_new(json_object_get(s, "spec"), "devices", devs = json_array()) != 0)
            goto fail;
        for (i = 0; i < n; i++)
            if (json_array_append_new(devs, device_json(&nd->gpus[g], &v[i])) != 0)
                goto fail;
        free(v);
        v = NULL;
    }
    why[0] = '\0';
    return out;
fail:
    free(v);
    json_decref(out);
    return NULL;
}

bool ag_dra_covers(const json_t *have, const json_t *want)
{
    const char *k;
    json_t *w;
    size_t i;

    if (have == NULL || want == NULL)
        return have == want;
    if (json_is_object(want)) {
        if (!json_is_object(have))
            return false;
        json_object_foreach((json_t *)(uintptr_t)want, k, w)
            if (!ag_dra_covers(json_object_get(have, k), w))
                return false;
        return true;
    }
    if (json_is_array(want)) {
        if (!json_is_array(have) || json_array_size(have) != json_array_size(want))
            return false;
        for (i = 0; i < json_array_size(want); i++)
            if (!ag_dra_covers(json_array_get(have, i), json_array_get(want, i)))
                return false;
        return true;
    }
    return json_equal((json_t *)(uintptr_t)have, (json_t *)(uintptr_t)want) != 0;
}
