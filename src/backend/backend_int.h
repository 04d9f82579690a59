/* backend_int.h - private to src/backend/: the inventory model the sim,
 * dry-run and nvml backends share (inv.c) and its files (inv_file.c).
 *
 * An inventory is the instances a backend holds, guarded by its mutex,
 * kept in STATE_DIR/<kind>-inventory.json (a snapshot, replaced by renaming
 * a temporary file over it) and <kind>-inventory.journal: after every op
 * one line holding the whole new state of the op's GPUs is appended with
 * one write, and the snapshot is rewritten when the journal outgrows it, at
 * every start and at a clean stop. A reader (the restarted daemon) sees the
 * state before or after an op, never half of one. Neither file is fsynced:
 * the sim models GPUs that survive a daemon crash (kill -9), where the page
 * cache keeps the files; a power cut loses real GPU instances too.
 */
#ifndef MIGSCHED_BACKEND_INT_H
#define MIGSCHED_BACKEND_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend/backend.h"
#include "daemon/daemon.h"

typedef struct ms__inv {
    int ngpus;
    uint32_t salt;                 /* mixed into made-up uuids */
    char (*gpu_uuid)[48];          /* [ngpus]; fixed once open */
    pthread_mutex_t mu;            /* guards everything below */
    bool mu_init;
    ms_binst_t *v;
    int n, cap;
    uint64_t uuid_seq;
    /* the files (inv_file.c) */
    char *path, *tmp;              /* the snapshot and its temporary */
    char *jpath;                   /* the journal: <path without .json>.journal */
    int jfd;                       /* appended to after every op; -1 not open */
    bool jbroken;                  /* an append failed: compact at the next op */
    size_t jbytes, snapbytes;      /* the journal's length, the snapshot's */
    ms_jtext_t out;                /* rendered text, its memory kept between calls */
} ms__inv_t;

/* inv.c: the model. init sets up an empty inventory of ngpus GPUs whose
 * files are STATE_DIR/<base>.json and <base>.journal. */
ms_status_t ms__inv_init(ms__inv_t *inv, int ngpus, const char *state_dir, const char *base,
                         ms_diag_t *why);
/* A clean stop leaves the whole state in the snapshot. */
void ms__inv_fini(ms__inv_t *inv);
/* (mu held) The index of the instance at (gpu, start), for a time slice
 * (start -1) the one running job (NULL: any); -1 none. */
int ms__inv_find(const ms__inv_t *inv, int gpu, int start, const char *job);
/* (mu held) A new instance (a made-up uuid for a MIG one); MS_ENOMEM. */
ms_status_t ms__inv_add(ms__inv_t *inv, int gpu, int start, int prof, const char *job);
void ms__inv_del(ms__inv_t *inv, int i);
/* (mu held) What the op does to the model (the sim's and dry-run's whole
 * op; nvml's for everything but CREATE and DESTROY). */
ms_status_t ms__inv_apply(ms__inv_t *inv, const ms_backend_op_t *op, ms_diag_t *why);
/* Locking wrappers for the ops table entries every model backend shares. */
ms_status_t ms__inv_copy(ms__inv_t *inv, ms_binst_t **out, int *n, ms_diag_t *why);
ms_status_t ms__inv_adopt_uuid(ms__inv_t *inv, int gpu, int start, const char *uuid, ms_diag_t *why);
const char *ms__inv_gpu_uuid(const ms__inv_t *inv, int gpu);
void ms__inv_inst_uuid(ms__inv_t *inv, int gpu, int start, const char *job, char *buf, size_t len);

/* inv_file.c (mu held, or before the backend is shared) */
/* The snapshot (absent: fresh hardware), then the journal's records on
 * top; then the journal is opened for appending. The caller compacts once
 * the state is whole. */
ms_status_t ms__inv_load(ms__inv_t *inv, ms_diag_t *why);
/* Rewrite the snapshot and empty the journal. 0 or -1. */
int ms__inv_compact(ms__inv_t *inv);
/* After an op on GPU g1 (and g2 unless negative): the journal line. 0 or -1. */
int ms__inv_persist(ms__inv_t *inv, int g1, int g2);

/* "DIR/NAME", malloc'd; NULL out of memory. */
char *ms__path_join(const char *dir, const char *name);

#endif
