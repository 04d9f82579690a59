/* svg.c - small SVG plots (see svg.h): axes, ticks, legend, four charts. */
#include "migsched/research/svg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define DEF_W 760
#define DEF_H 440
#define M_LEFT 72.0
#define M_RIGHT 170.0
#define M_TOP 42.0
#define M_BOTTOM 58.0

static const char *const PALETTE[] = {
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
    "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac",
    "#1f77b4", "#d62728",
};

const char *ms_svg_color(int i)
{
    int n = (int)(sizeof(PALETTE) / sizeof(PALETTE[0]));

    if (i < 0)
        i = -i;
    return PALETTE[i % n];
}

void ms_svg_escape(FILE *f, const char *s)
{
    if (s == NULL)
        return;
    for (; *s != '\0'; s++) {
        unsigned char c = (unsigned char)*s;

        switch (c) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&apos;", f); break;
        default:
            if (c >= 0x20 || c == '\t')
                fputc(c, f);
            break;
        }
    }
}

/* The plot frame: pixel size, data ranges and the mapping between them. */
typedef struct frame {
    double w, h;            /* whole image */
    double px0, px1, py0, py1; /* plot area: x left..right, y top..bottom */
    double x0, x1, y0, y1;  /* data range */
} frame_t;

static double fx(const frame_t *fr, double x)
{
    return fr->px0 + (x - fr->x0) / (fr->x1 - fr->x0) * (fr->px1 - fr->px0);
}

static double fy(const frame_t *fr, double y)
{
    if (y < fr->y0)
        y = fr->y0;
    if (y > fr->y1)
        y = fr->y1;
    return fr->py1 - (y - fr->y0) / (fr->y1 - fr->y0) * (fr->py1 - fr->py0);
}

static void frame_init(frame_t *fr, const ms_svg_chart_t *ch)
{
    fr->w = ch != NULL && ch->width > 0 ? ch->width : DEF_W;
    fr->h = ch != NULL && ch->height > 0 ? ch->height : DEF_H;
    fr->px0 = M_LEFT;
    fr->px1 = fr->w - M_RIGHT;
    fr->py0 = M_TOP;
    fr->py1 = fr->h - M_BOTTOM;
    if (fr->px1 < fr->px0 + 10.0)
        fr->px1 = fr->px0 + 10.0;
    if (fr->py1 < fr->py0 + 10.0)
        fr->py1 = fr->py0 + 10.0;
}

/* Make a degenerate or empty range usable. */
static void fix_range(double *lo, double *hi)
{
    if (!isfinite(*lo) || !isfinite(*hi) || *lo > *hi) {
        *lo = 0.0;
        *hi = 1.0;
    } else if (*hi == *lo) {
        double d = fabs(*lo) > 0.0 ? fabs(*lo) * 0.1 : 1.0;
        *lo -= d;
        *hi += d;
    }
}

/* At most this many ticks per axis: nice_step aims at about 5, and a
 * range it cannot divide (overflowing, or narrow against its magnitude)
 * still ends. */
#define MAX_TICKS 64

/* A "nice" tick step for about 5 ticks over [lo, hi]. */
static double nice_step(double lo, double hi)
{
    double raw = (hi - lo) / 5.0, mag, r;

    if (!(raw > 0.0))
        return 1.0;
    mag = pow(10.0, floor(log10(raw)));
    r = raw / mag;
    if (r < 1.5)
        return mag;
    if (r < 3.0)
        return 2.0 * mag;
    if (r < 7.0)
        return 5.0 * mag;
    return 10.0 * mag;
}

/* Widen [lo, hi] outward to whole ticks. */
static void nice_range(double *lo, double *hi)
{
    double st;

    fix_range(lo, hi);
    st = nice_step(*lo, *hi);
    *lo = floor(*lo / st + 1e-9) * st;
    *hi = ceil(*hi / st - 1e-9) * st;
    if (*hi <= *lo)
        *hi = *lo + st;
}

static void num_label(char *buf, size_t len, double v, double step)
{
    if (fabs(v) < step * 1e-6)
        v = 0.0;
    if (fabs(v) >= 1e5 || (fabs(v) < 1e-3 && v != 0.0))
        snprintf(buf, len, "%.3g", v);
    else
        snprintf(buf, len, "%.6g", v);
}

static void header(FILE *f, const frame_t *fr, const ms_svg_chart_t *ch)
{
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" "
               "width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
               "font-family=\"Helvetica, Arial, sans-serif\" font-size=\"12\">\n",
            fr->w, fr->h, fr->w, fr->h);
    fprintf(f, "<rect class=\"bg\" x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" "
               "fill=\"#ffffff\"/>\n", fr->w, fr->h);
    if (ch != NULL && ch->title != NULL) {
        fprintf(f, "<text x=\"%.2f\" y=\"24\" text-anchor=\"middle\" font-size=\"15\" "
                   "font-weight=\"bold\">", (fr->px0 + fr->px1) / 2.0);
        ms_svg_escape(f, ch->title);
        fputs("</text>\n", f);
    }
}

static ms_status_t footer(FILE *f)
{
    fputs("</svg>\n", f);
    return ferror(f) ? MS_EIO : MS_OK;
}

/* Axes with grid lines and labels; xticks false leaves the x axis unlabelled
 * (bar charts label their groups instead). */
static void axes(FILE *f, const frame_t *fr, const ms_svg_chart_t *ch, bool xticks)
{
    double st, v;
    char buf[64];

    st = nice_step(fr->y0, fr->y1);
    /* Ticks by count, never by v += st: on a range narrow against its
     * magnitude (1e17 .. 1e17 + 16) adding st would not move v. */
    for (int k = 0; k <= MAX_TICKS; k++) {
        v = ceil(fr->y0 / st - 1e-9) * st + k * st;
        if (!(v <= fr->y1 + st * 1e-9))
            break;
        double y = fy(fr, v);
        num_label(buf, sizeof(buf), v, st);
        fprintf(f, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#e4e4e4\"/>\n",
                fr->px0, y, fr->px1, y);
        fprintf(f, "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"end\">%s</text>\n",
                fr->px0 - 6.0, y + 4.0, buf);
    }
    if (xticks) {
        st = nice_step(fr->x0, fr->x1);
        for (int k = 0; k <= MAX_TICKS; k++) {
            v = ceil(fr->x0 / st - 1e-9) * st + k * st;
            if (!(v <= fr->x1 + st * 1e-9))
                break;
            double x = fx(fr, v);
            num_label(buf, sizeof(buf), v, st);
            fprintf(f, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#e4e4e4\"/>\n",
                    x, fr->py0, x, fr->py1);
            fprintf(f, "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\">%s</text>\n",
                    x, fr->py1 + 16.0, buf);
        }
    }
    fprintf(f, "<path d=\"M%.2f %.2fV%.2fH%.2f\" fill=\"none\" stroke=\"#333333\"/>\n",
            fr->px0, fr->py0, fr->py1, fr->px1);
    if (ch != NULL && ch->xlabel != NULL) {
        fprintf(f, "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\">",
                (fr->px0 + fr->px1) / 2.0, fr->h - 12.0);
        ms_svg_escape(f, ch->xlabel);
        fputs("</text>\n", f);
    }
    if (ch != NULL && ch->ylabel != NULL) {
        double cy = (fr->py0 + fr->py1) / 2.0;
        fprintf(f, "<text x=\"16\" y=\"%.2f\" text-anchor=\"middle\" "
                   "transform=\"rotate(-90 16 %.2f)\">", cy, cy);
        ms_svg_escape(f, ch->ylabel);
        fputs("</text>\n", f);
    }
}

/* Legend on the right: a short line (lines) or a swatch (bars) per entry. */
/* se (may be NULL): line series, for their colours and dashes */
static void legend(FILE *f, const frame_t *fr, const char *const *names, int n, bool swatch,
                   const ms_svg_series_t *se)
{
    int i;
    double x = fr->px1 + 14.0;

    for (i = 0; i < n; i++) {
        double y = fr->py0 + 6.0 + 18.0 * i;
        if (se != NULL)
            fprintf(f, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"%s\" "
                       "stroke-width=\"2.5\"%s/>\n", x, y - 4.0, x + 16.0, y - 4.0,
                    ms_svg_color(se[i].color > 0 ? se[i].color - 1 : i),
                    se[i].dashed ? " stroke-dasharray=\"6 4\"" : "");
        else if (swatch)
            fprintf(f, "<path class=\"key\" d=\"M%.2f %.2fh14v10h-14z\" fill=\"%s\"/>\n",
                    x, y - 9.0, ms_svg_color(i));
        else
            fprintf(f, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"%s\" "
                       "stroke-width=\"2.5\"/>\n", x, y - 4.0, x + 16.0, y - 4.0, ms_svg_color(i));
        fprintf(f, "<text x=\"%.2f\" y=\"%.2f\">", x + 22.0, y);
        ms_svg_escape(f, names != NULL && names[i] != NULL ? names[i] : "");
        fputs("</text>\n", f);
    }
}

static double sx(const ms_svg_series_t *s, size_t i)
{
    return s->x != NULL ? s->x[i] : (double)i;
}

ms_status_t ms_svg_lines(FILE *f, const ms_svg_chart_t *ch,
                         const ms_svg_series_t *series, int nseries)
{
    frame_t fr;
    double xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY, yhi = -INFINITY;
    const char **names;
    int s;
    size_t i;

    if (f == NULL || nseries < 0 || (nseries > 0 && series == NULL))
        return MS_EINVAL;
    for (s = 0; s < nseries; s++) {
        if (series[s].n > 0 && series[s].y == NULL)
            return MS_EINVAL;
        for (i = 0; i < series[s].n; i++) {
            double x = sx(&series[s], i), y = series[s].y[i];
            if (!isfinite(x) || !isfinite(y))
                continue;
            xlo = fmin(xlo, x);
            xhi = fmax(xhi, x);
            ylo = fmin(ylo, y);
            yhi = fmax(yhi, y);
        }
    }
    if (ch != NULL && ch->y_from_zero && isfinite(ylo)) {
        ylo = fmin(ylo, 0.0);
        yhi = fmax(yhi, 0.0);
    }
    if (ch != NULL && ch->ymax > 0.0 && isfinite(yhi) && yhi > ch->ymax)
        yhi = ch->ymax;
    frame_init(&fr, ch);
    fix_range(&xlo, &xhi);
    nice_range(&ylo, &yhi);
    fr.x0 = xlo;
    fr.x1 = xhi;
    fr.y0 = ylo;
    fr.y1 = yhi;

    names = malloc((size_t)(nseries > 0 ? nseries : 1) * sizeof(*names));
    if (names == NULL)
        return MS_ENOMEM;
    header(f, &fr, ch);
    axes(f, &fr, ch, true);
    for (s = 0; s < nseries; s++) {
        const ms_svg_series_t *se = &series[s];
        double prev_y = NAN;
        int started = 0;

        names[s] = se->name;
        if (se->n == 0)
            continue;
        fprintf(f, "<polyline class=\"series\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\" "
                   "stroke-linejoin=\"round\"%s points=\"",
                ms_svg_color(se->color > 0 ? se->color - 1 : s),
                se->dashed ? " stroke-dasharray=\"6 4\"" : "");
        for (i = 0; i < se->n; i++) {
            double x = sx(se, i), y = se->y[i];
            if (!isfinite(x) || !isfinite(y))
                continue;
            if (ch != NULL && ch->step && started)
                fprintf(f, " %.2f,%.2f", fx(&fr, x), fy(&fr, prev_y));
            fprintf(f, "%s%.2f,%.2f", started ? " " : "", fx(&fr, x), fy(&fr, y));
            prev_y = y;
            started = 1;
        }
        fputs("\"/>\n", f);
    }
    legend(f, &fr, names, nseries, false, series);
    free(names);
    return footer(f);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

ms_status_t ms_svg_cdf(FILE *f, const ms_svg_chart_t *ch, const char *const *names,
                       const double *const *samples, const size_t *n, int nseries)
{
    ms_svg_series_t *ser;
    double **buf;
    ms_svg_chart_t c;
    ms_status_t st = MS_OK;
    int s;

    if (f == NULL || nseries < 0 || (nseries > 0 && (samples == NULL || n == NULL)))
        return MS_EINVAL;
    ser = calloc((size_t)(nseries > 0 ? nseries : 1), sizeof(*ser));
    buf = calloc((size_t)(nseries > 0 ? nseries : 1) * 2, sizeof(*buf));
    if (ser == NULL || buf == NULL) {
        free(ser);
        free(buf);
        return MS_ENOMEM;
    }
    for (s = 0; s < nseries && st == MS_OK; s++) {
        size_t i, m = 0;
        double *x, *y;

        ser[s].name = names != NULL ? names[s] : NULL;
        if (n[s] == 0)
            continue;
        if (samples[s] == NULL) {
            st = MS_EINVAL;
            break;
        }
        /* sorted finite samples, then the step's points (x_i, i/m) */
        x = malloc((n[s] + 1) * sizeof(*x));
        y = malloc((n[s] + 1) * sizeof(*y));
        buf[2 * s] = x;
        buf[2 * s + 1] = y;
        if (x == NULL || y == NULL) {
            st = MS_ENOMEM;
            break;
        }
        for (i = 0; i < n[s]; i++)
            if (isfinite(samples[s][i]))
                x[1 + m++] = samples[s][i];
        if (m == 0)
            continue;
        qsort(x + 1, m, sizeof(*x), cmp_double);
        x[0] = x[1];
        y[0] = 0.0;
        for (i = 1; i <= m; i++)
            y[i] = (double)i / (double)m;
        ser[s].x = x;
        ser[s].y = y;
        ser[s].n = m + 1;
    }
    if (st == MS_OK) {
        if (ch != NULL)
            c = *ch;
        else
            memset(&c, 0, sizeof(c));
        c.step = true;
        c.y_from_zero = true;
        c.ymax = 0.0;
        st = ms_svg_lines(f, &c, ser, nseries);
    }
    for (s = 0; s < 2 * nseries; s++)
        free(buf[s]);
    free(buf);
    free(ser);
    return st;
}

ms_status_t ms_svg_bars(FILE *f, const ms_svg_chart_t *ch, const ms_svg_bars_t *b)
{
    frame_t fr;
    double ylo = 0.0, yhi = -INFINITY, gw, bw;
    int g, s;

    if (f == NULL || b == NULL || b->ngroups < 0 || b->nseries < 0 ||
        ((size_t)b->ngroups * (size_t)b->nseries > 0 && b->value == NULL))
        return MS_EINVAL;
    for (g = 0; g < b->ngroups; g++)
        for (s = 0; s < b->nseries; s++) {
            size_t k = (size_t)g * (size_t)b->nseries + (size_t)s;
            double v = b->value[k], e = b->err != NULL && isfinite(b->err[k]) ? fabs(b->err[k]) : 0.0;
            if (!isfinite(v))
                continue;
            yhi = fmax(yhi, v + e);
            ylo = fmin(ylo, v - e);
        }
    if (!isfinite(yhi))
        yhi = 1.0;
    if (ch != NULL && ch->ymax > 0.0 && yhi > ch->ymax)
        yhi = ch->ymax;
    frame_init(&fr, ch);
    nice_range(&ylo, &yhi);
    fr.x0 = 0.0;
    fr.x1 = b->ngroups > 0 ? b->ngroups : 1;
    fr.y0 = ylo;
    fr.y1 = yhi;
    header(f, &fr, ch);
    axes(f, &fr, ch, false);

    gw = (fr.px1 - fr.px0) / (b->ngroups > 0 ? b->ngroups : 1);
    bw = gw * 0.8 / (b->nseries > 0 ? b->nseries : 1);
    for (g = 0; g < b->ngroups; g++) {
        double gx = fr.px0 + gw * g + gw * 0.1;
        for (s = 0; s < b->nseries; s++) {
            size_t k = (size_t)g * (size_t)b->nseries + (size_t)s;
            double v = b->value[k], x = gx + bw * s, ytop, ybase = fy(&fr, 0.0);
            if (!isfinite(v))
                continue;
            ytop = fy(&fr, v);
            fprintf(f, "<rect class=\"bar\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" "
                       "fill=\"%s\"><title>", x, fmin(ytop, ybase), bw * 0.92,
                    fabs(ybase - ytop), ms_svg_color(s));
            ms_svg_escape(f, b->groups != NULL ? b->groups[g] : "");
            fputs(" / ", f);
            ms_svg_escape(f, b->series != NULL ? b->series[s] : "");
            fprintf(f, ": %.6g", v);
            if (b->err != NULL && isfinite(b->err[k]))
                fprintf(f, " &#177; %.3g", fabs(b->err[k]));
            fputs("</title></rect>\n", f);
            if (b->err != NULL && isfinite(b->err[k]) && b->err[k] != 0.0) {
                double e = fabs(b->err[k]), cx = x + bw * 0.46, y0 = fy(&fr, v - e),
                       y1 = fy(&fr, v + e), hw = fmin(bw * 0.25, 5.0);
                fprintf(f, "<path class=\"err\" d=\"M%.2f %.2fV%.2fM%.2f %.2fh%.2fM%.2f %.2fh%.2f\" "
                           "stroke=\"#222222\" fill=\"none\"/>\n",
                        cx, y0, y1, cx - hw, y0, 2 * hw, cx - hw, y1, 2 * hw);
            }
        }
        fprintf(f, "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\">",
                fr.px0 + gw * (g + 0.5), fr.py1 + 16.0);
        ms_svg_escape(f, b->groups != NULL ? b->groups[g] : "");
        fputs("</text>\n", f);
    }
    legend(f, &fr, b->series, b->nseries, true, NULL);
    return footer(f);
}

ms_status_t ms_svg_gantt(FILE *f, const ms_svg_chart_t *ch, const ms_geom_t *g,
                         int ngpus, const ms_segment_t *segs, size_t n)
{
    frame_t fr;
    ms_svg_chart_t c;
    double tmax = 0.0, rowh;
    int w, np, k, gpu;
    size_t i;
    const char *names[MS_MAX_PROFILES];

    int all;

    if (f == NULL || g == NULL || ngpus <= 0 || (n > 0 && segs == NULL))
        return MS_EINVAL;
    all = ngpus;
    if (ngpus > MS_SVG_GANTT_MAX_GPUS)
        ngpus = MS_SVG_GANTT_MAX_GPUS;   /* segments on later GPUs are left out below */
    w = ms_geom_width(g);
    np = ms_geom_nprofiles(g);
    for (i = 0; i < n; i++)
        if (isfinite(segs[i].end_s))
            tmax = fmax(tmax, segs[i].end_s);
    if (ch != NULL)
        c = *ch;
    else
        memset(&c, 0, sizeof(c));
    if (c.height <= 0) {
        int h = (int)(M_TOP + M_BOTTOM) + ngpus * w * 7;
        c.height = h < DEF_H ? DEF_H : (h > 4000 ? 4000 : h);
    }
    frame_init(&fr, &c);
    fr.x0 = 0.0;
    fr.x1 = tmax;
    fix_range(&fr.x0, &fr.x1);
    fr.y0 = 0.0;
    fr.y1 = (double)ngpus * w;
    rowh = (fr.py1 - fr.py0) / fr.y1;

    header(f, &fr, &c);
    {
        /* axes: x ticks only; GPU bands labelled on the left */
        ms_svg_chart_t ax = c;
        double st = nice_step(fr.x0, fr.x1), v;
        char buf[64];

        for (int t = 0; t <= MAX_TICKS; t++) {   /* by count: see ticks above */
            v = t * st;
            if (!(v <= fr.x1 + st * 1e-9))
                break;
            double x = fx(&fr, v);
            num_label(buf, sizeof(buf), v, st);
            fprintf(f, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#e4e4e4\"/>\n",
                    x, fr.py0, x, fr.py1);
            fprintf(f, "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\">%s</text>\n",
                    x, fr.py1 + 16.0, buf);
        }
        for (gpu = 0; gpu < ngpus; gpu++) {
            double y = fr.py0 + rowh * w * gpu;
            if (gpu > 0)
                fprintf(f, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#888888\"/>\n",
                        fr.px0, y, fr.px1, y);
            if (ngpus <= 64 || gpu % (ngpus / 32) == 0)
                fprintf(f, "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"end\">GPU %d</text>\n",
                        fr.px0 - 6.0, y + rowh * w / 2.0 + 4.0, gpu);
        }
        fprintf(f, "<path d=\"M%.2f %.2fV%.2fH%.2f\" fill=\"none\" stroke=\"#333333\"/>\n",
                fr.px0, fr.py0, fr.py1, fr.px1);
        if (ax.xlabel != NULL) {
            fprintf(f, "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\">",
                    (fr.px0 + fr.px1) / 2.0, fr.h - 12.0);
            ms_svg_escape(f, ax.xlabel);
            if (all > ngpus)
                fprintf(f, " (GPUs 0-%d of %d shown)", ngpus - 1, all);
            fputs("</text>\n", f);
        } else if (all > ngpus) {
            fprintf(f, "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\">"
                       "GPUs 0-%d of %d shown</text>\n",
                    (fr.px0 + fr.px1) / 2.0, fr.h - 12.0, ngpus - 1, all);
        }
    }
    for (i = 0; i < n; i++) {
        const ms_segment_t *sg = &segs[i];
        double x0, x1, y, h;
        int ms;
        bool ts = sg->start < 0;

        if (sg->gpu < 0 || sg->gpu >= ngpus || sg->prof < 0 || sg->prof >= np ||
            !isfinite(sg->begin_s) || !isfinite(sg->end_s))
            continue;
        ms = ms_geom_profile(g, sg->prof)->msize;
        x0 = fx(&fr, sg->begin_s);
        x1 = fx(&fr, fmax(sg->end_s, sg->begin_s));
        y = fr.py0 + rowh * ((double)sg->gpu * w + (ts ? 0 : sg->start));
        h = rowh * (ts ? w : ms);
        fprintf(f, "<rect class=\"seg\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" "
                   "fill=\"%s\" fill-opacity=\"%s\" stroke=\"#ffffff\" stroke-width=\"0.4\">"
                   "<title>job %d %s GPU %d",
                x0, y, fmax(x1 - x0, 0.3), h, ms_svg_color(sg->prof), ts ? "0.25" : "0.9",
                (int)sg->job, ms_geom_profile(g, sg->prof)->name, (int)sg->gpu);
        if (!ts)
            fprintf(f, "@%d", (int)sg->start);
        fprintf(f, " %.1f-%.1f s</title></rect>\n", sg->begin_s, sg->end_s);
    }
    for (k = 0; k < np; k++)
        names[k] = ms_geom_profile(g, k)->name;
    legend(f, &fr, names, np, true, NULL);
    return footer(f);
}
