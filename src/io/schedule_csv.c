/* schedule_csv.c - the schedule CSV writer (see schedule.h). */
#include "migsched/schedule.h"

#include <stdlib.h>
#include <string.h>

#define BUF_SIZE (1u << 16)

struct ms_schedule_writer {
    FILE *f;
    const ms_trace_t *t;
    /* heterogeneous clusters: per GPU, its node and geometry (NULL when the
     * schedule is of one model, and then the two columns are absent) */
    const ms_node_spec_t *nodes;
    int32_t *gnode;
    int ngpus;
    size_t len;
    int err;
    char buf[BUF_SIZE];
};

static void flush(ms_schedule_writer_t *w)
{
    if (w->len > 0 && fwrite(w->buf, 1, w->len, w->f) != w->len)
        w->err = 1;
    w->len = 0;
}

ms_status_t ms_schedule_writer_open(FILE *f, const ms_trace_t *t,
                                    ms_schedule_writer_t **out)
{
    ms_schedule_writer_t *w;
    static const char header[] = "job_id,gpu,start,profile,begin_s,end_s\n";

    if (f == NULL || t == NULL || out == NULL)
        return MS_EINVAL;
    w = malloc(sizeof(*w));
    if (w == NULL)
        return MS_ENOMEM;
    w->f = f;
    w->t = t;
    w->nodes = NULL;
    w->gnode = NULL;
    w->ngpus = 0;
    w->err = 0;
    memcpy(w->buf, header, sizeof(header) - 1);
    w->len = sizeof(header) - 1;
    *out = w;
    return MS_OK;
}

ms_status_t ms_schedule_write(ms_schedule_writer_t *w, const ms_segment_t *seg)
{
    const char *name;
    size_t nlen;
    int n;

    if (w == NULL || seg == NULL || seg->job < 0 || (size_t)seg->job >= w->t->n)
        return MS_EINVAL;
    name = ms_trace_name(w->t, (size_t)seg->job);
    nlen = strlen(name);
    if (w->len + nlen + 128 > BUF_SIZE)
        flush(w);
    if (nlen + 128 > BUF_SIZE) {   /* absurdly long id: write it directly */
        if (fwrite(name, 1, nlen, w->f) != nlen)
            w->err = 1;
    } else {
        memcpy(w->buf + w->len, name, nlen);
        w->len += nlen;
    }
    if (w->gnode != NULL) {
        const ms_node_spec_t *nd;

        if (seg->gpu < 0 || seg->gpu >= w->ngpus)
            return MS_EINVAL;
        nd = &w->nodes[w->gnode[seg->gpu]];
        /* node names are short ([A-Za-z0-9._-]); the row fits the slack */
        n = snprintf(w->buf + w->len, BUF_SIZE - w->len, ",%d,%d,%s,%.6f,%.6f,%.64s,%s\n",
                     (int)seg->gpu, (int)seg->start, ms_geom_profile(nd->geom, seg->prof)->name,
                     seg->begin_s, seg->end_s, nd->name, ms_geom_model(nd->geom)->name);
    } else {
        n = snprintf(w->buf + w->len, BUF_SIZE - w->len, ",%d,%d,%s,%.6f,%.6f\n",
                     (int)seg->gpu, (int)seg->start,
                     ms_geom_profile(w->t->geom, seg->prof)->name, seg->begin_s, seg->end_s);
    }
    if (n < 0 || (size_t)n >= BUF_SIZE - w->len) {
        w->err = 1;
        return MS_EIO;
    }
    w->len += (size_t)n;
    return w->err ? MS_EIO : MS_OK;
}

ms_status_t ms_schedule_writer_set_nodes(ms_schedule_writer_t *w, const ms_node_spec_t *nodes,
                                         int nnodes)
{
    static const char header[] = "job_id,gpu,start,profile,begin_s,end_s,node,model\n";
    int i, g, k = 0;

    if (w == NULL || nodes == NULL || nnodes <= 0 || w->len != sizeof(header) - 12)
        return MS_EINVAL;
    for (i = 0; i < nnodes; i++)
        w->ngpus += nodes[i].ngpus;
    if ((w->gnode = malloc((size_t)w->ngpus * sizeof(*w->gnode))) == NULL)
        return MS_ENOMEM;
    for (i = 0; i < nnodes; i++)
        for (g = 0; g < nodes[i].ngpus; g++)
            w->gnode[k++] = i;
    w->nodes = nodes;
    memcpy(w->buf, header, sizeof(header) - 1);
    w->len = sizeof(header) - 1;
    return MS_OK;
}

void ms_schedule_on_segment(void *ctx, const ms_segment_t *seg)
{
    (void)ms_schedule_write(ctx, seg);
}

ms_status_t ms_schedule_writer_close(ms_schedule_writer_t *w)
{
    int err;

    if (w == NULL)
        return MS_OK;
    flush(w);
    if (fflush(w->f) != 0 || ferror(w->f))
        w->err = 1;
    err = w->err;
    free(w->gnode);
    free(w);
    return err ? MS_EIO : MS_OK;
}
