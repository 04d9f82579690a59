/* cmd_frag.c - `migsched frag`: one GPU, drawn, with its FragCost. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "migsched/frag.h"
#include "migsched/slicemap.h"

static void usage(FILE *f)
{
    fprintf(f,
        "usage: migsched frag [--model M] [--profiles LIST] --used LIST [--json]\n"
        "                     [--all-profiles] [--weights 1g=3,2g=1,...]\n"
        "  --model M        GPU model (default A100-40GB; see `migsched models`)\n"
        "  --profiles LIST  active profile set (default: the classic ones)\n"
        "  --used LIST      instances on the GPU, e.g. 1g.5gb@1,3g@4 (\"\" = empty)\n"
        "  --json           print one JSON object instead of the drawing\n"
        "  --all-profiles   average over every profile, not only those with Ideal > 0\n"
        "  --weights LIST   weight per profile in [0, 1e6] (e.g. its share of demand);\n"
        "                   others 0; at least one > 0\n");
}

int ms_cli_frag(int argc, char **argv)
{
    static const struct option opts[] = {
        { "model", required_argument, NULL, 'm' },
        { "profiles", required_argument, NULL, 'p' },
        { "used", required_argument, NULL, 'u' },
        { "json", no_argument, NULL, 'j' },
        { "all-profiles", no_argument, NULL, 'a' },
        { "weights", required_argument, NULL, 'w' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    const char *model = "A100-40GB", *profiles = "", *used = NULL, *weights = NULL;
    double w[MS_MAX_PROFILES];
    ms_frag_opts_t fo = { NULL, false };
    int json = 0, c, n, k;
    const ms_model_t *m;
    ms_geom_t *g = NULL;
    ms_gi_t gis[MS_MAX_WIDTH];
    ms_state_t s;
    ms_diag_t d;
    ms_status_t st;
    double fc;

    ms_diag_clear(&d);
    optind = 1;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'm': model = optarg; break;
        case 'p': profiles = optarg; break;
        case 'u': used = optarg; break;
        case 'j': json = 1; break;
        case 'a': fo.all_profiles = true; break;
        case 'w': weights = optarg; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (used == NULL || optind != argc) {
        ms_cli_usage_error("frag", optind != argc ? argv[optind] : NULL, "--used is required");
        usage(stderr);
        return 2;
    }
    if ((c = ms_cli_geom("frag", model, profiles, &g)) != 0)
        return c;
    m = ms_geom_model(g);
    if (weights != NULL) {
        if ((st = ms_cli_parse_weights(g, "weights", weights, w, &d)) != MS_OK) {
            ms_geom_destroy(g);
            ms_cli_fail("frag", st, &d);
            return 2;
        }
        fo.weights = w;
    }
    if ((st = ms_cli_parse_used(g, used, gis, &n, &s, &d)) != MS_OK) {
        ms_geom_destroy(g);
        ms_cli_fail("frag", st, &d);
        return 2;
    }
    fc = ms_frag_cost(g, s, &fo);
    if (json) {
        printf("{\"model\":\"%s\",\"fragcost\":%.6f,\"mask\":%u,\"busy_compute\":%d,"
               "\"compute_slices\":%d,\"mfi\":%d,\"profiles\":[",
               m->name, fc, (unsigned)ms_state_mask(g, s), ms_state_compute(g, s),
               ms_geom_compute(g), ms_frag_mfi(g, s));
        for (k = 0; k < ms_geom_nprofiles(g); k++)
            printf("%s{\"profile\":\"%s\",\"ideal\":%d,\"feasible\":%d}", k ? "," : "",
                   ms_geom_profile(g, k)->name, ms_frag_ideal(g, s, k), ms_frag_feasible(g, s, k));
        printf("]}\n");
    } else {
        char note[64];
        snprintf(note, sizeof(note), "FragCost %.4f", fc);
        printf("%s, %d memory slices, %d compute slices busy of %d\n\n", m->name,
               ms_geom_width(g), ms_state_compute(g, s), ms_geom_compute(g));
        ms_slicemap_row(stdout, g, "GPU", gis, n, NULL, note);
        ms_slicemap_ruler(stdout, g, 3);
        printf("\n%-10s %6s %9s\n", "profile", "ideal", "feasible");
        for (k = 0; k < ms_geom_nprofiles(g); k++)
            printf("%-10s %6d %9d\n", ms_geom_profile(g, k)->name, ms_frag_ideal(g, s, k),
                   ms_frag_feasible(g, s, k));
    }
    ms_geom_destroy(g);
    return 0;
}
