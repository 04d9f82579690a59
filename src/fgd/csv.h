/* csv.h - the small CSV helpers shared by the FGD node and pod readers
 * (internal to src/fgd). Plain comma-separated fields, no quoting. */
#ifndef MIGSCHED_FGD_CSV_H
#define MIGSCHED_FGD_CSV_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "migsched/status.h"

#define MS_CSV_MAX_FIELDS 32

typedef struct ms_csv {
    FILE *f;
    const char *name;       /* for diagnostics */
    char *buf;              /* getline buffer */
    size_t cap;
    long line;              /* 1-based number of the line in buf */
    int nf;
    char *field[MS_CSV_MAX_FIELDS];
} ms_csv_t;

void ms_csv_open(ms_csv_t *c, FILE *f, const char *name);
void ms_csv_close(ms_csv_t *c);
/* Next non-empty line split into fields: 1 when read, 0 at EOF, <0 on error
 * (MS_EIO or MS_EPARSE status negated; d filled). */
int ms_csv_next(ms_csv_t *c, ms_diag_t *d);
/* Column index of a header name in the current line, -1 if absent. */
int ms_csv_col(const ms_csv_t *c, const char *name);
/* Strict integer field in [lo, hi]; fills d naming line and field. */
ms_status_t ms_csv_int(const ms_csv_t *c, int col, const char *field, int64_t lo, int64_t hi,
                       int64_t *out, ms_diag_t *d);
/* Field text, or an error naming the line and field when the row is short. */
ms_status_t ms_csv_str(const ms_csv_t *c, int col, const char *field, const char **out,
                       ms_diag_t *d);

#endif
