/* k8s_int.h - k8sconf's private types: a loaded YAML document with line
 * numbers (yaml_doc.c), the parsed policy (cfg.c), mig-devices entries. */
#ifndef MIGSCHED_K8S_INT_H
#define MIGSCHED_K8S_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <yaml.h>

#include "k8sconf/k8sconf.h"

#define MS__K8S_NAME 64       /* names: at most 63 characters (a label value) */
#define MS__K8S_MAX_GPUS 64   /* GPUs per node: a device set is a uint64_t */
#define MS__K8S_FIELD 64      /* ms_diag_t's field */

/* --- YAML ---------------------------------------------------------------- */

typedef struct ms__ydoc {
    yaml_document_t doc;
    bool loaded;
    const char *path;
    ms_diag_t *diag;
} ms__ydoc_t;

/* Load the first document of path; an empty file is an error. */
ms_status_t ms__ydoc_load(ms__ydoc_t *y, const char *path, ms_diag_t *diag);
ms_status_t ms__ydoc_load_stream(ms__ydoc_t *y, FILE *f, const char *name, ms_diag_t *diag);
void ms__ydoc_free(ms__ydoc_t *y);
yaml_node_t *ms__ydoc_root(ms__ydoc_t *y);
long ms__ynode_line(const yaml_node_t *n);
/* A scalar's text, or NULL (and the error set, naming field) if not one. */
const char *ms__yscalar(ms__ydoc_t *y, const yaml_node_t *n, const char *field);
/* Require a mapping (sequence); error naming field otherwise. */
bool ms__ymap(ms__ydoc_t *y, const yaml_node_t *n, const char *field);
bool ms__yseq(ms__ydoc_t *y, const yaml_node_t *n, const char *field);
/* Mapping pair i of n: key text (scalar keys only) and value node. */
int ms__ymap_len(const yaml_node_t *n);
const char *ms__ymap_key(ms__ydoc_t *y, const yaml_node_t *n, int i, const yaml_node_t **val,
                         const char *field);
int ms__yseq_len(const yaml_node_t *n);
yaml_node_t *ms__yseq_item(ms__ydoc_t *y, const yaml_node_t *n, int i);
/* An integer scalar in [lo, hi]; error naming field otherwise. */
bool ms__yint(ms__ydoc_t *y, const yaml_node_t *n, const char *field, long lo, long hi, long *out);
/* A boolean scalar (true/false); error naming field otherwise. */
bool ms__ybool(ms__ydoc_t *y, const yaml_node_t *n, const char *field, bool *out);
/* Set the error at n's line. Returns false (for `return ms__yerr(...)`). */
bool ms__yerr(ms__ydoc_t *y, const yaml_node_t *n, const char *field, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* --- mig-devices entries ------------------------------------------------- */

/* One entry of a layout: a device set and a count per profile name. */
typedef struct ms__k8s_entry {
    bool all;
    uint64_t devices;                  /* when !all */
    int maxdev;                        /* highest device index named, -1 if all */
    bool mig_enabled;
    bool filtered;                     /* has a device-filter (mig-parted's; check mode) */
    int nprof;
    char prof[MS_MAX_PROFILES][MS__K8S_NAME];
    int count[MS_MAX_PROFILES];
    long line, prof_line[MS_MAX_PROFILES];
} ms__k8s_entry_t;

/* Parse a layout: a sequence of {devices, mig-enabled, mig-devices}
 * mappings (field names the layout for errors); allow_filter accepts
 * mig-parted's device-filter key. Device sets may not overlap. *out is
 * malloc'd (NULL when empty). */
bool ms__k8s_parse_entries(ms__ydoc_t *y, const yaml_node_t *n, const char *field,
                           bool allow_filter, ms__k8s_entry_t **out, int *nout);
/* Check one entry on model m: every profile is m's (product or generic
 * name; their indices in m->profiles go to prof_idx[]) and the counts fit one
 * GPU with the library's geometry. Error at the entry's lines. */
bool ms__k8s_entry_check(const char *path, ms_diag_t *diag, const ms__k8s_entry_t *e,
                         const ms_model_t *m, const char *field, int *prof_idx);

/* Build a field path for diagnostics ("nodes[2].layout"); truncates
 * silently (ms_diag_t keeps 63 characters of it anyway). */
void ms__kfield(char *buf, size_t n, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* A valid name: 1..63 of [A-Za-z0-9._-], starting and ending alphanumeric. */
bool ms__k8s_name_ok(const char *s);

#endif
