/* cmd_gen_trace.c - `migsched gen-trace`: a synthetic trace (Poisson
 * arrivals, a profile mix, a duration distribution). */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "migsched/trace.h"

static void usage(FILE *f)
{
    fprintf(f,
        "usage: migsched gen-trace --jobs N (--rate R | --load L --gpus N) [options] -o T.csv\n"
        "  --jobs N         number of jobs\n"
        "  --rate R         arrivals per second\n"
        "  --load L         offered load: compute-slice demand / (compute x GPUs)\n"
        "  --gpus N         cluster size the load refers to\n"
        "  --mix LIST       profile weights, e.g. 1g=3,2g=2,7g=1 (default: uniform)\n"
        "  --dist D         exp | uniform | lognormal durations (default exp)\n"
        "  --mean S         mean duration in seconds (default 600)\n"
        "  --min S --max S  uniform range (default 0 .. 2 x mean)\n"
        "  --sigma S        lognormal sigma (default 1)\n"
        "  --seed S         random seed (default 1)\n"
        "  --model M        GPU model (default A100-40GB)\n"
        "  --profiles LIST  active profile set (default: the classic ones)\n"
        "  -o FILE          output trace CSV ('-' = stdout)\n");
}

/* "1g=3,2g=2" -> weights per active profile (unnamed profiles get 0). */
static int parse_mix(const ms_geom_t *g, const char *list, double *w)
{
    const char *p = list;
    int k;

    for (k = 0; k < ms_geom_nprofiles(g); k++)
        w[k] = 0.0;
    while (p != NULL && *p != '\0') {
        const char *end = strchr(p, ',');
        size_t len = end != NULL ? (size_t)(end - p) : strlen(p);
        char buf[64], *eq;
        double v;

        if (len == 0 || len >= sizeof(buf)) {
            fprintf(stderr, "migsched gen-trace: bad --mix '%s'\n", list);
            return -1;
        }
        memcpy(buf, p, len);
        buf[len] = '\0';
        eq = strchr(buf, '=');
        if (eq == NULL) {
            fprintf(stderr, "migsched gen-trace: --mix item '%s' lacks =weight\n", buf);
            return -1;
        }
        *eq = '\0';
        k = ms_geom_profile_find(g, buf);
        if (k < 0) {
            fprintf(stderr, "migsched gen-trace: --mix: unknown or inactive profile '%s'\n", buf);
            return -1;
        }
        if (!ms_cli_parse_double(eq + 1, &v) || v < 0) {
            fprintf(stderr, "migsched gen-trace: --mix: bad weight '%s'\n", eq + 1);
            return -1;
        }
        w[k] = v;
        p = end != NULL ? end + 1 : NULL;
    }
    return 0;
}

int ms_cli_gen_trace(int argc, char **argv)
{
    static const struct option opts[] = {
        { "jobs", required_argument, NULL, 'n' },
        { "rate", required_argument, NULL, 'r' },
        { "load", required_argument, NULL, 'l' },
        { "gpus", required_argument, NULL, 'g' },
        { "mix", required_argument, NULL, 'x' },
        { "dist", required_argument, NULL, 'd' },
        { "mean", required_argument, NULL, 'M' },
        { "min", required_argument, NULL, 'a' },
        { "max", required_argument, NULL, 'b' },
        { "sigma", required_argument, NULL, 's' },
        { "seed", required_argument, NULL, 'S' },
        { "model", required_argument, NULL, 'm' },
        { "profiles", required_argument, NULL, 'p' },
        { "output", required_argument, NULL, 'o' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    const char *model = "A100-40GB", *profiles = "", *mix = NULL, *out = NULL;
    long jobs = -1, gpus = 0, seed = 1;
    double rate = 0, load = 0, mean = 600, lo = 0, hi = 0, sigma = 0;
    int dist = 0, c, rc = 0;
    ms_geom_t *g = NULL;
    ms_trace_t *t = NULL;
    ms_gen_cfg_t gc;
    double w[MS_MAX_PROFILES];
    ms_diag_t d;
    ms_status_t st;
    FILE *f;

    ms_diag_clear(&d);
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
        bool ok = true;

        switch (c) {
        case 'n': ok = ms_cli_parse_long(optarg, &jobs) && jobs >= 0; break;
        case 'r': ok = ms_cli_parse_double(optarg, &rate) && rate > 0; break;
        case 'l': ok = ms_cli_parse_double(optarg, &load) && load > 0; break;
        case 'g': ok = ms_cli_parse_long(optarg, &gpus) && gpus > 0 && gpus <= 100000000; break;
        case 'x': mix = optarg; break;
        case 'd':
            if (strcmp(optarg, "exp") == 0 || strcmp(optarg, "exponential") == 0)
                dist = 0;
            else if (strcmp(optarg, "uniform") == 0)
                dist = 1;
            else if (strcmp(optarg, "lognormal") == 0)
                dist = 2;
            else
                ok = false;
            break;
        case 'M': ok = ms_cli_parse_double(optarg, &mean) && mean > 0; break;
        case 'a': ok = ms_cli_parse_double(optarg, &lo) && lo >= 0; break;
        case 'b': ok = ms_cli_parse_double(optarg, &hi) && hi >= 0; break;
        case 's': ok = ms_cli_parse_double(optarg, &sigma) && sigma > 0; break;
        case 'S': ok = ms_cli_parse_long(optarg, &seed); break;
        case 'm': model = optarg; break;
        case 'p': profiles = optarg; break;
        case 'o': out = optarg; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
        if (!ok) {
            const struct option *o = opts;

            while (o->name != NULL && o->val != c)
                o++;
            fprintf(stderr, "migsched gen-trace: bad value '%s' for --%s\n", optarg,
                    o->name != NULL ? o->name : "?");
            return 2;
        }
    }
    if (optind != argc || jobs < 0 || out == NULL || (rate <= 0 && (load <= 0 || gpus <= 0))) {
        usage(stderr);
        return 2;
    }
    if ((rc = ms_cli_geom("gen-trace", model, profiles, &g)) != 0)
        return rc;
    if (mix != NULL && parse_mix(g, mix, w) != 0) {
        ms_geom_destroy(g);
        return 2;
    }
    memset(&gc, 0, sizeof(gc));
    gc.njobs = (size_t)jobs;
    gc.rate = rate;
    gc.load = load;
    gc.ngpus = (int)gpus;
    gc.mix = mix != NULL ? w : NULL;
    gc.dist = dist;
    gc.mean_s = mean;
    gc.min_s = lo;
    gc.max_s = hi;
    gc.sigma = sigma;
    gc.seed = (uint64_t)seed;
    st = ms_trace_generate(g, &gc, &t);
    if (st == MS_EINVAL) {
        fprintf(stderr, "migsched gen-trace: inconsistent options (a --mix with no weight, "
                        "or --min/--max/--mean that give no durations)\n");
        ms_geom_destroy(g);
        return 2;
    }
    if (st != MS_OK) {
        ms_geom_destroy(g);
        return ms_cli_fail("gen-trace", st, NULL);
    }
    f = strcmp(out, "-") == 0 ? stdout : fopen(out, "w");
    if (f == NULL) {
        ms_diag_set(&d, out, 0, NULL, "cannot create the file");
        rc = ms_cli_fail("gen-trace", MS_EIO, &d);
    } else {
        st = ms_trace_write(f, t);
        if (f != stdout && fclose(f) != 0)
            st = MS_EIO;
        if (st != MS_OK) {
            ms_diag_set(&d, out, 0, NULL, "write failed");
            rc = ms_cli_fail("gen-trace", st, &d);
        }
    }
    ms_trace_free(t);
    ms_geom_destroy(g);
    return rc;
}
