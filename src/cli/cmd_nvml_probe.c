/* cmd_nvml_probe.c - `migsched nvml-probe`: what the driver says about each
 * GPU's MIG profiles and placements, next to migsched's tables.
 *
 * Read-only by construction: it calls only ms_nvml_gpu_info,
 * ms_nvml_profile_info and ms_nvml_placements (src/nvml/nvml.h), never a
 * create, destroy or mode change. Its purpose is to check the tables that
 * are inferred, not measured (H200, GH200, B200, GB200: mig-hardware.md
 * [I]), on the first real machine that has them.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli/cli.h"
#include "migsched/json_write.h"
#include "nvml/nvml.h"

static void usage(FILE *f)
{
    fprintf(f,
        "usage: migsched nvml-probe [--lib PATH] [--json]\n"
        "Reads every GPU through NVML and prints, per GPU, its model, MIG mode and\n"
        "the possible placements of every GPU-instance profile, next to migsched's\n"
        "tables, flagging every difference. Read-only: never changes MIG mode or\n"
        "instances.\n"
        "  --lib PATH   the NVML library (default libnvidia-ml.so.1)\n"
        "  --json       one JSON object instead of the table\n"
        "Exit 0 if driver and tables agree, 1 if they differ, 2 on bad usage,\n"
        "3 if NVML could not be loaded or a GPU could not be read.\n");
}

#define MAX_ROWS (MS_MAX_PROFILES + MS_NVML_PROFILE_INDICES)

typedef struct prow {
    const ms_profile_t *p;          /* our profile; NULL: the driver's only */
    unsigned index;                 /* NVML enum index */
    int have_info;
    ms_nvml_profile_t info;
    int have_pl;
    int npl;
    ms_nvml_placement_t pl[MS_NVML_MAX_PLACEMENTS];
    char diff[160];                 /* what differs, "" if nothing */
    char note[120];
} prow_t;

typedef struct pgpu {
    int index;
    ms_nvml_gpu_t info;
    char error[320];                /* "" unless the GPU could not be read */
    int nrow;
    prow_t row[MAX_ROWS];
    int ndiff;
} pgpu_t;

static void add_diff(prow_t *r, const char *what)
{
    size_t len = strlen(r->diff);

    snprintf(r->diff + len, sizeof(r->diff) - len, "%s%s", len ? ", " : "", what);
}

static void table_placements(const ms_profile_t *p, char *buf, size_t n)
{
    size_t len = 0;
    int s;

    buf[0] = '\0';
    for (s = 0; s < MS_MAX_WIDTH && len + 8 < n; s++)
        if ((p->start_mask >> s) & 1u)
            len += (size_t)snprintf(buf + len, n - len, "%s%d:%u", len ? " " : "", s, p->msize);
}

static void driver_placements(const prow_t *r, char *buf, size_t n)
{
    size_t len = 0;
    int i;

    buf[0] = '\0';
    for (i = 0; i < r->npl && len + 12 < n; i++)
        len += (size_t)snprintf(buf + len, n - len, "%s%u:%u", len ? " " : "", r->pl[i].start,
                                r->pl[i].size);
}

/* Do the driver's placements equal the table's (as sets)? */
static int same_placements(const prow_t *r, const ms_profile_t *p)
{
    uint32_t got = 0;
    int i;

    for (i = 0; i < r->npl; i++) {
        if (r->pl[i].size != p->msize || r->pl[i].start >= MS_MAX_WIDTH)
            return 0;
        got |= 1u << r->pl[i].start;
    }
    return got == p->start_mask;
}

static void probe_placements(ms_nvml_t *nv, int gpu, unsigned id, prow_t *r)
{
    ms_nvml_err_t e;

    if (ms_nvml_placements(nv, gpu, id, r->pl, MS_NVML_MAX_PLACEMENTS, &r->npl, &e) == MS_OK) {
        r->have_pl = 1;
    } else {
        r->npl = 0;
        snprintf(r->note, sizeof(r->note), "placements: %s", ms_nvml_rc_name(e.nvml_rc));
    }
}

/* One GPU: every profile of our table, then every driver profile we lack. */
static void probe_gpu(ms_nvml_t *nv, int gpu, pgpu_t *out)
{
    const ms_model_t *m;
    ms_nvml_err_t e;
    unsigned idx;
    int k;

    memset(out, 0, sizeof(*out));
    out->index = gpu;
    if (ms_nvml_gpu_info(nv, gpu, &out->info, &e) != MS_OK) {
        snprintf(out->error, sizeof(out->error), "%s", e.msg);
        return;
    }
    m = out->info.model;
    for (k = 0; m != NULL && k < m->nprofiles; k++) {
        const ms_profile_t *p = &m->profiles[k];
        prow_t *r = &out->row[out->nrow++];
        ms_status_t st;

        r->p = p;
        r->index = p->nvml_index;
        st = ms_nvml_profile_info(nv, gpu, p->nvml_index, &r->info, &e);
        if (st == MS_OK) {
            r->have_info = 1;
            if (r->info.id != p->gi_id)
                add_diff(r, "profile ID");
            if (r->info.slices != p->cslices)
                add_diff(r, "compute slices");
            if (r->info.instances != p->max_count)
                add_diff(r, "max instances");
            /* a driver with only the v1 profile call gives no names */
            if (r->info.name[0] != '\0' && strcasecmp(r->info.name, p->name) != 0)
                add_diff(r, "name");
            probe_placements(nv, gpu, r->info.id, r);
        } else if (st == MS_ENOTSUP && out->info.mig_current) {
            add_diff(r, "absent on this GPU");
        } else if (st == MS_ENOTSUP || st == MS_EINVAL) {
            /* MIG disabled: no profile info, but placements still answer */
            snprintf(r->note, sizeof(r->note), "profile info needs MIG enabled; placements by table ID");
            probe_placements(nv, gpu, p->gi_id, r);
        } else {
            snprintf(out->error, sizeof(out->error), "%s", e.msg);
            return;
        }
        if (r->have_pl && !same_placements(r, p))
            add_diff(r, "placements");
        if (!r->have_pl && r->diff[0] == '\0' && st == MS_OK)
            add_diff(r, "placements unreadable");
    }
    for (idx = 0; idx < MS_NVML_PROFILE_INDICES; idx++) {
        ms_nvml_profile_t info;
        prow_t *r;
        int ours = 0;

        for (k = 0; m != NULL && k < m->nprofiles; k++)
            ours |= m->profiles[k].nvml_index == idx;
        if (ours || ms_nvml_profile_info(nv, gpu, idx, &info, &e) != MS_OK)
            continue;
        r = &out->row[out->nrow++];
        r->index = idx;
        r->have_info = 1;
        r->info = info;
        if (r->info.name[0] == '\0')
            snprintf(r->info.name, sizeof(r->info.name), "(unnamed)");
        probe_placements(nv, gpu, info.id, r);
        add_diff(r, m != NULL ? "not in migsched's table" : "no migsched model");
    }
    for (k = 0; k < out->nrow; k++)
        out->ndiff += out->row[k].diff[0] != '\0';
    if (m == NULL)
        out->ndiff++;   /* a GPU we cannot schedule is a difference too */
}

static void print_text(const pgpu_t *g)
{
    int k;

    if (g->error[0] != '\0') {
        printf("GPU %d: cannot read: %s\n\n", g->index, g->error);
        return;
    }
    printf("GPU %d: %s  %s\n", g->index, g->info.name, g->info.uuid);
    printf("  model %s, MIG %s (pending: %s)\n",
           g->info.model != NULL ? g->info.model->name : "unknown (not one of migsched's models)",
           g->info.mig_current ? "enabled" : "disabled",
           g->info.mig_pending ? "enabled" : "disabled");
    printf("  %-16s %5s %4s %4s %4s  %-30s %-30s %s\n", "profile", "index", "id", "c", "max",
           "driver placements", "table placements", "check");
    for (k = 0; k < g->nrow; k++) {
        const prow_t *r = &g->row[k];
        char dp[160], tp[160], id[16], c[16], mx[16];

        driver_placements(r, dp, sizeof(dp));
        if (r->p != NULL)
            table_placements(r->p, tp, sizeof(tp));
        else
            snprintf(tp, sizeof(tp), "-");
        snprintf(id, sizeof(id), "%u", r->have_info ? r->info.id : (r->p != NULL ? r->p->gi_id : 0u));
        snprintf(c, sizeof(c), "%s", "-");
        snprintf(mx, sizeof(mx), "%s", "-");
        if (r->have_info) {
            snprintf(c, sizeof(c), "%u", r->info.slices);
            snprintf(mx, sizeof(mx), "%u", r->info.instances);
        }
        printf("  %-16s  0x%-2x %4s %4s %4s  %-30s %-30s %s%s%s%s\n",
               r->p != NULL ? r->p->name : r->info.name, r->index, id, c, mx,
               r->have_pl ? dp : "-", tp, r->diff[0] ? "DIFFERS: " : "ok", r->diff,
               r->note[0] ? "  " : "", r->note);
    }
    printf("  %d difference%s\n\n", g->ndiff, g->ndiff == 1 ? "" : "s");
}

static void json_placements(const ms_nvml_placement_t *pl, int n)
{
    int i;

    putchar('[');
    for (i = 0; i < n; i++)
        printf("%s[%u,%u]", i ? "," : "", pl[i].start, pl[i].size);
    putchar(']');
}

static void print_json_gpu(const pgpu_t *g)
{
    int k;

    printf("{\"index\":%d", g->index);
    if (g->error[0] != '\0') {
        printf(",\"error\":");
        ms_json_write_str(stdout, g->error);
        printf("}");
        return;
    }
    printf(",\"name\":");
    ms_json_write_str(stdout, g->info.name);
    printf(",\"uuid\":");
    ms_json_write_str(stdout, g->info.uuid);
    printf(",\"model\":");
    if (g->info.model != NULL)
        ms_json_write_str(stdout, g->info.model->name);
    else
        printf("null");
    printf(",\"mig_current\":%s,\"mig_pending\":%s,\"profiles\":[",
           g->info.mig_current ? "true" : "false", g->info.mig_pending ? "true" : "false");
    for (k = 0; k < g->nrow; k++) {
        const prow_t *r = &g->row[k];
        printf("%s{\"name\":", k ? "," : "");
        ms_json_write_str(stdout, r->p != NULL ? r->p->name : r->info.name);
        printf(",\"index\":%u", r->index);
        if (r->p != NULL) {
            ms_nvml_placement_t tp[MS_MAX_WIDTH];
            int n = 0, s;
            for (s = 0; s < MS_MAX_WIDTH; s++)
                if ((r->p->start_mask >> s) & 1u) {
                    tp[n].start = (unsigned)s;
                    tp[n].size = r->p->msize;
                    n++;
                }
            printf(",\"table\":{\"id\":%u,\"slices\":%u,\"max\":%u,\"placements\":", r->p->gi_id,
                   r->p->cslices, r->p->max_count);
            json_placements(tp, n);
            printf("}");
        }
        if (r->have_info) {
            printf(",\"driver\":{\"id\":%u,\"name\":", r->info.id);
            ms_json_write_str(stdout, r->info.name);
            printf(",\"slices\":%u,\"max\":%u,\"memory_mb\":%llu", r->info.slices,
                   r->info.instances, r->info.memory_mb);
            if (r->have_pl) {
                printf(",\"placements\":");
                json_placements(r->pl, r->npl);
            }
            printf("}");
        } else if (r->have_pl) {
            printf(",\"driver\":{\"placements\":");
            json_placements(r->pl, r->npl);
            printf("}");
        }
        printf(",\"differs\":");
        ms_json_write_str(stdout, r->diff);
        if (r->note[0] != '\0') {
            printf(",\"note\":");
            ms_json_write_str(stdout, r->note);
        }
        printf("}");
    }
    printf("],\"differences\":%d}", g->ndiff);
}

int ms_cli_nvml_probe(int argc, char **argv)
{
    static const struct option opts[] = {
        { "lib", required_argument, NULL, 'l' },
        { "json", no_argument, NULL, 'j' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    const char *lib = NULL;
    int json = 0, c, i, n, diffs = 0, errors = 0;
    char err[512];
    ms_nvml_t *nv = NULL;
    pgpu_t *g;
    ms_status_t st;

    optind = 1;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'l': lib = optarg; break;
        case 'j': json = 1; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "migsched nvml-probe: unexpected argument '%s'\n", argv[optind]);
        return 2;
    }
    st = ms_nvml_open(lib, &nv, err, sizeof(err));
    if (st != MS_OK) {
        fprintf(stderr, "migsched nvml-probe: %s\n", err);
        return 3;
    }
    if ((g = malloc(sizeof(*g))) == NULL) {
        ms_nvml_close(nv);
        ms_cli_fail("nvml-probe", MS_ENOMEM, NULL);
        return 3;
    }
    n = ms_nvml_gpu_count(nv);
    if (json)
        printf("{\"gpus\":[");
    else
        printf("%d GPU%s (read-only probe; nothing is changed)\n\n", n, n == 1 ? "" : "s");
    for (i = 0; i < n; i++) {
        probe_gpu(nv, i, g);
        diffs += g->ndiff;
        errors += g->error[0] != '\0';
        if (json) {
            if (i > 0)
                putchar(',');
            print_json_gpu(g);
        } else {
            print_text(g);
        }
    }
    if (json)
        printf("],\"differences\":%d,\"errors\":%d}\n", diffs, errors);
    else
        printf("%d difference%s, %d GPU%s unreadable\n", diffs, diffs == 1 ? "" : "s", errors,
               errors == 1 ? "" : "s");
    free(g);
    ms_nvml_close(nv);
    return errors > 0 ? 3 : diffs > 0 ? 1 : 0;
}
