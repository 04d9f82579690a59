/* csv.h - the one CSV line reader for inputs other than traces: the Alibaba
 * openb lists (FGD node and pod readers in src/research/fgd, the MIG importer in
 * alibaba.c) and schedules (schedule_check.c). Plain comma-separated
 * fields, no quoting. Also the whole-stream reader of the report's JSON
 * inputs (report.c, report_json.c). Internal: not installed.
 *
 * Two dialects, chosen by `lax` after ms_csv_open:
 *   strict (FGD): a '"' is an error, at most MS_CSV_MAX_FIELDS fields,
 *                 header names match exactly, out of memory reads as an
 *                 I/O error;
 *   lax (importer): quotes are plain text, any number of fields, header
 *                 names match case-insensitively with spaces trimmed, out
 *                 of memory is MS_ENOMEM.
 */
#ifndef MIGSCHED_IO_CSV_H
#define MIGSCHED_IO_CSV_H

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
    int nf, fcap;
    char **field;           /* [fcap], nf in use */
    bool lax;               /* the importer's dialect (above) */
} ms_csv_t;

/* Strict dialect; set c->lax afterwards for the other one. */
void ms_csv_open(ms_csv_t *c, FILE *f, const char *name);
void ms_csv_close(ms_csv_t *c);
/* Next non-empty line split into fields: 1 when read, 0 at EOF, <0 on error
 * (a status negated; d filled for MS_EIO and MS_EPARSE). */
int ms_csv_next(ms_csv_t *c, ms_diag_t *d);
/* The header line: MS_OK, or at EOF MS_EPARSE with d = (name, 1, "",
 * empty_msg), or the read error. */
ms_status_t ms_csv_header(ms_csv_t *c, const char *empty_msg, ms_diag_t *d);
/* Column index of a header name in the current line, -1 if absent. */
int ms_csv_col(const ms_csv_t *c, const char *name);
/* Strict integer field in [lo, hi]; fills d naming line and field. */
ms_status_t ms_csv_int(const ms_csv_t *c, int col, const char *field, int64_t lo, int64_t hi,
                       int64_t *out, ms_diag_t *d);
/* Field text, or an error naming the line and field when the row is short. */
ms_status_t ms_csv_str(const ms_csv_t *c, int col, const char *field, const char **out,
                       ms_diag_t *d);
/* Room for one more element in a growing array v of *cap elements of
 * `size` bytes holding n: v itself, or v reallocated (first allocation:
 * `first` elements, then doubling; *cap updated), or NULL when out of
 * memory (v is then still valid). */
void *ms_csv_grow(void *v, size_t *cap, size_t n, size_t size, size_t first);
/* The rest of stream f, NUL-terminated, into *out (free it; *len bytes
 * before the NUL): MS_OK, MS_ENOMEM, MS_ERANGE past 1 GiB, or MS_EIO on a
 * read error. Fills no diagnostic. */
ms_status_t ms_csv_slurp(FILE *f, char **out, size_t *len);

/* A JSON number (RFC 8259 syntax, finite as a double) at p, before end:
 * the end of its text with *out set, or NULL if there is none. */
const char *ms_csv_json_number(const char *p, const char *end, double *out);

/* A reader of one stream into *out (ms_fgd_nodes_t, ms_ali_pods_t, ...). */
typedef ms_status_t (*ms_csv_reader_fn)(FILE *f, const char *name, void *out, ms_diag_t *d);
/* Zero out (out_size bytes), open path and read it with rd. A file that
 * cannot be opened is MS_EIO with d = (path, 0, "", "cannot open"), or
 * "cannot open: <strerror>" where say_errno. NULL path or out: MS_EINVAL. */
ms_status_t ms_csv_read_path(const char *path, void *out, size_t out_size, ms_csv_reader_fn rd,
                             bool say_errno, ms_diag_t *d);

#endif
