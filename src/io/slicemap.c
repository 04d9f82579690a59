/* slicemap.c - text slice maps: each memory slice is 4 columns wide. */
#include "migsched/slicemap.h"

#include <string.h>

#define CELL 4

void ms_slicemap_row(FILE *f, const ms_geom_t *g, const char *label,
                     const ms_gi_t *gis, int n, const char *const *tags,
                     const char *note)
{
    int w = ms_geom_width(g), s, i;
    int owner[MS_MAX_WIDTH];

    for (s = 0; s < w; s++)
        owner[s] = -1;
    for (i = 0; i < n; i++) {
        int ms = ms_geom_profile(g, gis[i].prof)->msize;
        for (s = gis[i].start; s < gis[i].start + ms && s < w; s++)
            owner[s] = i;
    }
    fprintf(f, "%s |", label);
    for (s = 0; s < w;) {
        if (owner[s] < 0) {
            fprintf(f, "%*s|", CELL - 1, "");
            s++;
            continue;
        }
        i = owner[s];
        {
            int ms = ms_geom_profile(g, gis[i].prof)->msize;
            int width = ms * CELL - 1;
            const char *t = (tags != NULL && tags[i] != NULL) ? tags[i]
                                                            : ms_geom_profile(g, gis[i].prof)->generic;
            int len = (int)strlen(t);
            if (len > width)
                len = width;
            fprintf(f, "%.*s", len, t);
            fprintf(f, "%*s|", width - len, "");
            s += ms;
        }
    }
    if (note != NULL && note[0] != '\0')
        fprintf(f, "  %s", note);
    fputc('\n', f);
}

void ms_slicemap_ruler(FILE *f, const ms_geom_t *g, int label_width)
{
    int s;

    fprintf(f, "%*s  ", label_width, "");
    for (s = 0; s < ms_geom_width(g); s++)
        fprintf(f, "%-*d", CELL, s);
    fputc('\n', f);
}
