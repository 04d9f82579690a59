/* cmd_models.c - `migsched models`: the geometry tables, for humans. */
#include <getopt.h>
#include <string.h>

#include "cli/cli.h"
#include "migsched/frag.h"
#include "migsched/slicemap.h"

static void usage(FILE *f)
{
    fprintf(f,
        "usage: migsched models [--model M] [--profiles LIST] [--layouts]\n"
        "  without --model: one line per model\n"
        "  --model M        the model's profiles, starts and state-table facts\n"
        "  --profiles LIST  active profile set (default: the classic ones)\n"
        "  --layouts        also draw every maximal layout with its FragCost\n");
}

static void starts_str(uint16_t mask, char *buf, size_t n)
{
    size_t len = 0;
    int s;

    buf[0] = '\0';
    for (s = 0; s < MS_MAX_WIDTH && len + 4 < n; s++)
        if ((mask >> s) & 1u)
            len += (size_t)snprintf(buf + len, n - len, "%s%d", len ? "," : "", s);
}

static int draw_layout(void *ctx, const ms_gi_t *gis, int n)
{
    const ms_geom_t *g = ctx;
    ms_state_t s = ms_geom_empty_state();
    char note[48];
    int i;

    for (i = 0; i < n; i++)
        s = ms_state_place(g, s, gis[i].prof, gis[i].start);
    snprintf(note, sizeof(note), "FragCost %.3f", ms_frag_cost(g, s, NULL));
    ms_slicemap_row(stdout, g, "  ", gis, n, NULL, note);
    return 0;
}

int ms_cli_models(int argc, char **argv)
{
    static const struct option opts[] = {
        { "model", required_argument, NULL, 'm' },
        { "profiles", required_argument, NULL, 'p' },
        { "layouts", no_argument, NULL, 'l' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    const char *model = NULL, *profiles = "";
    int layouts = 0, c, i, n;
    const ms_model_t *all = ms_models(&n), *m;
    ms_geom_t *g = NULL;
    ms_geom_counts_t cnt;
    ms_diag_t d;

    ms_diag_clear(&d);
    optind = 1;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'm': model = optarg; break;
        case 'p': profiles = optarg; break;
        case 'l': layouts = 1; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (model == NULL) {
        printf("%-13s %6s %6s %7s %8s  %s\n", "model", "memory", "slices", "compute", "states",
               "profiles (classic)");
        for (i = 0; i < n; i++) {
            int k;
            if (ms_geom_create(&all[i], 0, &g) != MS_OK)
                return ms_cli_fail("models", MS_ENOMEM, NULL);
            printf("%-13s %4ugb %6d %7d %8d  ", all[i].name, all[i].mem_gb, ms_geom_width(g),
                   ms_geom_compute(g), ms_geom_nstates(g));
            for (k = 0; k < ms_geom_nprofiles(g); k++)
                printf("%s%s", k ? " " : "", ms_geom_profile(g, k)->name);
            printf("\n");
            ms_geom_destroy(g);
        }
        return 0;
    }
    if ((c = ms_cli_geom("models", model, profiles, &g)) != 0)
        return c;
    m = ms_geom_model(g);
    printf("%s (%s): %u GB, %d memory slices of %u GB, %d compute slices, up to %u instances\n\n",
           m->name, m->aliases, m->mem_gb, ms_geom_width(g), m->mem_slice_gb, ms_geom_compute(g),
           m->max_gis);
    printf("%-16s %-10s %5s %5s %3s %3s %-14s %3s %s\n", "profile", "generic", "id", "enum", "c",
           "m", "starts", "max", "active");
    for (i = 0; i < m->nprofiles; i++) {
        const ms_profile_t *p = &m->profiles[i];
        char starts[64];
        starts_str(p->start_mask, starts, sizeof(starts));
        printf("%-16s %-10s %5u %#5x %3u %3u %-14s %3u %s\n", p->name, p->generic, p->gi_id,
               p->nvml_index, p->cslices, p->msize, starts, p->max_count,
               ms_geom_profile_find(g, p->name) >= 0 ? "yes" : "");
    }
    ms_geom_count(g, &cnt);
    printf("\nactive set: %ld placement sets, %ld occupancy masks, %ld maximal layouts "
           "(%ld profile multisets), %d states\n",
           cnt.placement_sets, cnt.masks, cnt.maximal, cnt.maximal_multisets, ms_geom_nstates(g));
    if (layouts) {
        printf("\nmaximal layouts:\n");
        ms_geom_each_maximal(g, draw_layout, g);
        ms_slicemap_ruler(stdout, g, 2);
    }
    ms_geom_destroy(g);
    return 0;
}
