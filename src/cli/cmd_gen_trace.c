/* cmd_gen_trace.c - `migsched gen-trace`: a synthetic trace (Poisson
 * arrivals, a profile mix, a duration distribution). */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include <limits.h>

#include "cli/cli.h"
#include "migsched/trace.h"

#define C "gen-trace"

static void usage(FILE *f)
{
    fprintf(f,
        "usage: migsched gen-trace --jobs N (--rate R | --load L --gpus N) [options] -o T.csv\n"
        "  --jobs N         number of jobs, 0..100000000\n"
        "  --rate R         arrivals per second, 1e-6..1e6\n"
        "  --load L         offered load, 0.000001..1000: compute-slice demand /\n"
        "                   (compute x GPUs)\n"
        "  --gpus N         cluster size the load refers to, 1..1000000\n"
        "  --mix LIST       profile weights in [0, 1e6], e.g. 1g=3,2g=2,7g=1\n"
        "                   (default: uniform)\n"
        "  --dist D         exp | uniform | lognormal durations (default exp)\n"
        "  --mean S         mean duration, 0.001..1e8 seconds (default 600)\n"
        "  --min S --max S  uniform range, 0..1e8 seconds, max > min\n"
        "                   (default 0 .. 2 x mean)\n"
        "  --sigma S        lognormal sigma, 0.01..10 (default 1)\n"
        "  --seed S         random seed, any 64-bit integer (default 1)\n"
        "  --model M        GPU model (default A100-40GB)\n"
        "  --profiles LIST  active profile set (default: the classic ones)\n"
        "  --priority P     every job's priority, -1000000..1000000 (a priority\n"
        "                   column; default none: 0)\n"
        "  --checkpoint S   every job saves its progress every S seconds of its run,\n"
        "                   0.001..1e8 (a checkpoint_s column; default none)\n"
        "  -o FILE          output trace CSV ('-' = stdout)\n");
}

/* Every job of t at priority prio, saving every ckpt seconds (0: never). */
static ms_status_t set_reqs(ms_trace_t *t, int32_t prio, double ckpt)
{
    size_t i;

    if (t->n > 0 && (t->req = calloc(t->n, sizeof(*t->req))) == NULL)
        return MS_ENOMEM;
    for (i = 0; i < t->n; i++) {
        t->req[i].priority = prio;
        t->req[i].checkpoint_s = ckpt;
    }
    return MS_OK;
}

/* t into out ('-': stdout); the exit status. */
static int write_out(const char *out, const ms_trace_t *t)
{
    FILE *f = strcmp(out, "-") == 0 ? stdout : fopen(out, "w");
    ms_diag_t d;
    ms_status_t st;

    ms_diag_clear(&d);
    if (f == NULL) {
        ms_diag_set(&d, out, 0, NULL, "cannot create the file");
        return ms_cli_fail("gen-trace", MS_EIO, &d);
    }
    st = ms_trace_write(f, t);
    if (f != stdout && fclose(f) != 0)
        st = MS_EIO;
    if (st != MS_OK) {
        ms_diag_set(&d, out, 0, NULL, "write failed");
        return ms_cli_fail("gen-trace", st, &d);
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
        { "priority", required_argument, NULL, 'P' },
        { "checkpoint", required_argument, NULL, 'c' },
        { "output", required_argument, NULL, 'o' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    const char *model = "A100-40GB", *profiles = "", *mix = NULL, *out = NULL;
    long jobs = -1, gpus = 0, seed = 1, prio = 0;
    double rate = 0, load = 0, mean = 600, lo = 0, hi = 0, sigma = 0, ckpt = 0;
    bool have_lo = false, have_hi = false;
    int dist = 0, c, rc = 0;
    ms_geom_t *g = NULL;
    ms_trace_t *t = NULL;
    ms_gen_cfg_t gc;
    double w[MS_MAX_PROFILES];
    ms_diag_t d;
    ms_status_t st;

    ms_diag_clear(&d);
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
        bool ok = true;

        switch (c) {
        case 'n': ok = ms_cli_opt_long(C, "jobs", optarg, 0, 100000000, &jobs); break;
        case 'r': ok = ms_cli_opt_double(C, "rate", optarg, 1e-6, 1e6, &rate); break;
        case 'l': ok = ms_cli_opt_double(C, "load", optarg, 1e-6, 1000, &load); break;
        case 'g': ok = ms_cli_opt_long(C, "gpus", optarg, 1, 1000000, &gpus); break;
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
        case 'M': ok = ms_cli_opt_double(C, "mean", optarg, 0.001, 1e8, &mean); break;
        case 'a': ok = have_lo = ms_cli_opt_double(C, "min", optarg, 0, 1e8, &lo); break;
        case 'b': ok = have_hi = ms_cli_opt_double(C, "max", optarg, 0, 1e8, &hi); break;
        case 's': ok = ms_cli_opt_double(C, "sigma", optarg, 0.01, 10, &sigma); break;
        case 'S':
            ok = ms_cli_opt_long(C, "seed", optarg, LONG_MIN, LONG_MAX, &seed);
            break;
        case 'm': model = optarg; break;
        case 'p': profiles = optarg; break;
        case 'P': ok = ms_cli_opt_long(C, "priority", optarg, -1000000, 1000000, &prio); break;
        case 'c': ok = ms_cli_opt_double(C, "checkpoint", optarg, 0.001, 1e8, &ckpt); break;
        case 'o': out = optarg; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
        if (!ok) {
            if (c == 'd')
                fprintf(stderr, "migsched gen-trace: --dist: '%s' is not one of exp, uniform, "
                                "lognormal\n", optarg);
            return 2;
        }
    }
    if (optind != argc || jobs < 0 || out == NULL || (rate <= 0 && (load <= 0 || gpus <= 0))) {
        ms_cli_usage_error(C, optind != argc ? argv[optind] : NULL,
                           "--jobs, -o and --rate (or --load with --gpus) are required");
        usage(stderr);
        return 2;
    }
    if (dist == 1 && (have_lo || have_hi)) {
        if (!have_hi)
            hi = 2.0 * mean;
        if (!(hi > lo)) {
            fprintf(stderr, "migsched gen-trace: --max (%g) must be greater than --min (%g)\n",
                    hi, lo);
            return 2;
        }
    } else if (have_lo || have_hi) {
        fprintf(stderr, "migsched gen-trace: --min and --max apply to --dist uniform only\n");
        return 2;
    }
    if ((rc = ms_cli_geom("gen-trace", model, profiles, &g)) != 0)
        return rc;
    if (mix != NULL && (st = ms_cli_parse_weights(g, "mix", mix, w, &d)) != MS_OK) {
        ms_cli_fail(C, st, &d);
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
    if (st == MS_ERANGE) {
        fprintf(stderr, "migsched gen-trace: the arrivals would pass 1e9 s (the longest "
                        "trace); raise --rate or --load, or lower --jobs\n");
        ms_geom_destroy(g);
        return 2;
    }
    if (st == MS_EINVAL) {
        fprintf(stderr, "migsched gen-trace: inconsistent options (a --mix with no weight, "
                        "or --min/--max/--mean that give no durations)\n");
        ms_geom_destroy(g);
        return 2;
    }
    if (st == MS_OK && (prio != 0 || ckpt > 0))
        st = set_reqs(t, (int32_t)prio, ckpt);
    if (st != MS_OK) {
        ms_trace_free(t);
        ms_geom_destroy(g);
        return ms_cli_fail("gen-trace", st, NULL);
    }
    rc = write_out(out, t);
    ms_trace_free(t);
    ms_geom_destroy(g);
    return rc;
}
