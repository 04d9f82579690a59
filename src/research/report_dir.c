/* report_dir.c - a report directory from runs and fill experiments
 * (ms_report_write_dir, report.h: what `migsched report` writes): every
 * input read first, then README.md with one section per kind of input
 * (report_runs.c, report_fill.c), and the helpers those share. */
#include <stdlib.h>
#include <string.h>

#include "research/report_int.h"

/* "3-fa_medium" from run number 3 and path "runs/fa medium/". */
char *ms__report_safe_name(size_t idx, const char *src)
{
    const char *b = src, *p;
    size_t len, i, k;
    char *out;

    len = strlen(src);
    while (len > 1 && src[len - 1] == '/')
        len--;
    for (p = src; p < src + len; p++)
        if (*p == '/')
            b = p + 1;
    len = (size_t)(src + len - b);
    if (len > 5 && strncmp(b + len - 5, ".json", 5) == 0)
        len -= 5;
    if (len > 60)
        len = 60;
    out = malloc(len + 24);
    if (out == NULL)
        return NULL;
    k = (size_t)snprintf(out, 24, "%zu-", idx + 1);
    for (i = 0; i < len; i++) {
        char c = b[i];
        out[k++] = ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '-' || c == '_') ? c : '_';
    }
    out[k] = '\0';
    return out;
}

ms_status_t ms__report_closef(FILE *f, ms_status_t st)
{
    if (ferror(f) && st == MS_OK)
        st = MS_EIO;
    if (fclose(f) != 0 && st == MS_OK)
        st = MS_EIO;
    return st;
}

/* The line chart of s[0..k) into out/file. */
ms_status_t ms__report_lines(const char *out, const char *file, const ms_svg_chart_t *ch,
                             const ms_svg_series_t *s, int k)
{
    FILE *f;
    ms_status_t st = ms_report_fopen(out, file, &f);

    if (st == MS_OK)
        st = ms__report_closef(f, ms_svg_lines(f, ch, s, k));
    return st;
}

typedef ms_status_t (*json_reader_fn)(FILE *f, const char *name, void **out, ms_diag_t *d);

static ms_status_t read_fgd_v(FILE *f, const char *name, void **out, ms_diag_t *d)
{
    ms_report_fgd_t *r = NULL;
    ms_status_t st = ms_report_read_fgd(f, name, &r, d);

    *out = r;
    return st;
}

static ms_status_t read_fill_v(FILE *f, const char *name, void **out, ms_diag_t *d)
{
    ms_report_fill_t *r = NULL;
    ms_status_t st = ms_report_read_fill(f, name, &r, d);

    *out = r;
    return st;
}

static ms_status_t read_all(const char *const *paths, size_t n, json_reader_fn fn, void **out,
                            ms_diag_t *d)
{
    size_t i;
    ms_status_t st = MS_OK;

    for (i = 0; i < n && st == MS_OK; i++) {
        FILE *f = fopen(paths[i], "r");
        if (f == NULL) {
            ms_diag_set(d, paths[i], 0, "", "cannot open");
            return MS_EIO;
        }
        st = fn(f, paths[i], &out[i], d);
        fclose(f);
    }
    return st;
}

/* README.md: the inputs, then a section per kind. */
static ms_status_t write_readme(const ms_report_inputs_t *in, const char *out,
                                const ms__report_run_t *runs, size_t n, void **fgdr, void **fillr)
{
    FILE *md;
    ms_status_t st;
    size_t i;

    if ((st = ms_report_fopen(out, "README.md", &md)) != MS_OK)
        return st;
    fprintf(md, "# migsched report\n\nWritten by `migsched report`; inputs:\n\n");
    for (i = 0; i < n; i++)
        fprintf(md, "- run `%s`\n", runs[i].src);
    for (i = 0; i < in->nfgd; i++)
        fprintf(md, "- fgd-experiment `%s`\n", in->fgd[i]);
    for (i = 0; i < in->nfill; i++)
        fprintf(md, "- import-alibaba --fill `%s`\n", in->fill[i]);
    fputc('\n', md);
    if (n > 0)
        st = ms__report_write_runs(out, in->geom, runs, n, md);
    if (st == MS_OK && in->nfgd > 0)
        st = ms__report_write_fgd(out, (ms_report_fgd_t *const *)fgdr, in->nfgd, md);
    if (st == MS_OK && in->nfill > 0)
        st = ms__report_write_fill(out, (ms_report_fill_t *const *)fillr, in->nfill, md);
    return ms__report_closef(md, st);
}

ms_status_t ms_report_write_dir(const ms_report_inputs_t *in, const char *out, ms_diag_t *diag)
{
    size_t nruns = in->nruns + in->nmetrics, n = 0, i;
    ms__report_run_t *runs = calloc(nruns + 1, sizeof(*runs));
    void **fgdr = calloc(in->nfgd + 1, sizeof(*fgdr)), **fillr = calloc(in->nfill + 1, sizeof(*fillr));
    ms_status_t st = runs == NULL || fgdr == NULL || fillr == NULL ? MS_ENOMEM : MS_OK;

    for (i = 0; st == MS_OK && i < nruns; i++) {
        bool is_dir = i < in->nruns;
        st = ms__report_load_run(&runs[i], i, is_dir ? in->runs[i] : in->metrics[i - in->nruns],
                                 is_dir, in->geom, diag);
        n = i + 1;
    }
    if (st == MS_OK)
        st = read_all(in->fgd, in->nfgd, read_fgd_v, fgdr, diag);
    if (st == MS_OK)
        st = read_all(in->fill, in->nfill, read_fill_v, fillr, diag);
    if (st == MS_OK && (st = ms_report_mkdirs(out)) != MS_OK)
        ms_diag_set(diag, out, 0, "", "cannot create the directory");
    else if (st == MS_OK && (st = write_readme(in, out, runs, n, fgdr, fillr)) != MS_OK)
        ms_diag_set(diag, out, 0, "", "cannot write the report: %s", ms_strerror(st));
    for (i = 0; i < n; i++)
        ms__report_run_free(&runs[i]);
    free(runs);
    for (i = 0; fgdr != NULL && i < in->nfgd; i++)
        ms_report_fgd_free(fgdr[i]);
    for (i = 0; fillr != NULL && i < in->nfill; i++)
        ms_report_fill_free(fillr[i]);
    free(fgdr);
    free(fillr);
    return st;
}
