/* sim_int.h - private to src/backend/sim.c and dryrun.c: the simulated
 * backend both are. */
#ifndef MIGSCHED_BACKEND_SIM_INT_H
#define MIGSCHED_BACKEND_SIM_INT_H

#include <stdio.h>

#include "backend/backend_int.h"

typedef struct ms__sim {
    ms__inv_t inv;
    bool dry;                   /* dry-run: no delay, no failures, a log line per op */
    double delay;               /* seconds per op */
    int fail_kind;              /* 0 none, -1 any, else MS_OP_* (inv.mu) */
    long fail_every;
    long count[MS_OP_STOP + 1]; /* ops by kind (inv.mu) */
    FILE *log;                  /* dry-run: STATE_DIR/dry-run.jsonl (dryrun.c) */
    const ms_geom_t **geom;     /* [ngpus] copied from the config; NULL: no placement check */
    /* sim faults (sim_fault.c): STATE_DIR/sim-faults, read again when it
     * changes (inv.mu) */
    char *fault_path;
    long long fault_sig[3];     /* its inode, size and mtime (ns) when read; all 0: absent */
    uint8_t *fault;             /* [ngpus] MS__SIM_LOST | MS__SIM_FAIL */
} ms__sim_t;

#define MS__SIM_LOST 1u         /* the GPU fell off the bus: ops and probes fail (gpu-lost) */
#define MS__SIM_FAIL 2u         /* every op on the GPU fails (the op's own); probes answer */

ms_status_t ms__sim_open(const ms_backend_cfg_t *cfg, bool dry, ms__sim_t **out, ms_diag_t *why);
void ms__sim_close(ms__sim_t *s);
/* One op on the model: the delay, an injected failure, the change and its
 * journal line (a forced one: the change and the line only). */
ms_status_t ms__sim_op(ms__sim_t *s, const ms_backend_op_t *op, ms_diag_t *why);
/* sim_fault.c (inv.mu held): the faults of STATE_DIR/sim-faults now (read
 * again if the file changed); set up / freed with the sim. */
int ms__sim_fault_init(ms__sim_t *s, const char *state_dir);
void ms__sim_fault_fini(ms__sim_t *s);
uint8_t ms__sim_fault(ms__sim_t *s, int gpu);
/* The ops table entries dry-run shares. */
ms_status_t ms__sim_inventory(void *impl, ms_binst_t **out, int *n, ms_diag_t *why);
ms_status_t ms__sim_adopt_uuid(void *impl, int gpu, int start, const char *uuid, ms_diag_t *why);
const char *ms__sim_gpu_uuid(const void *impl, int gpu);
void ms__sim_inst_uuid(void *impl, int gpu, int start, const char *job, char *buf, size_t len);
ms_status_t ms__sim_probe(void *impl, int gpu, double timeout_s, ms_diag_t *why);

#endif
