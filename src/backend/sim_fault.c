/* sim_fault.c - the sim backend's faults that come and go: the file
 * STATE_DIR/sim-faults, one fault a line,
 *   lost GPU     the GPU fell off the bus: every op on it and every probe
 *                of it fails ("gpu-lost"), as NVML's GPU_IS_LOST would
 *   fail GPU     every op on it fails (the op's own failure); probes answer
 * ('#' starts a comment; GPU is the global number). Tests and operators
 * write and remove it while the daemon runs; the sim reads it again when
 * its inode, size or modification time changed (one stat per op). A line
 * it cannot read is logged once per reading and ignored. The --sim-fail
 * spec (every Nth op of a kind) is sim.c's.
 *
 * Any thread, under the inventory's mutex.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "backend/sim_int.h"

int ms__sim_fault_init(ms__sim_t *s, const char *state_dir)
{
    s->fault_path = ms__path_join(state_dir, "sim-faults");
    s->fault = calloc((size_t)(s->inv.ngpus > 0 ? s->inv.ngpus : 1), 1);
    return s->fault_path != NULL && s->fault != NULL ? 0 : -1;
}

void ms__sim_fault_fini(ms__sim_t *s)
{
    free(s->fault_path);
    free(s->fault);
    s->fault_path = NULL;
    s->fault = NULL;
}

/* One line: "lost N" or "fail N"; 0, or -1 when it is neither. */
static int parse_line(ms__sim_t *s, char *line)
{
    char *hash = strchr(line, '#'), *word, *num, *end, *save = NULL;
    long g;
    uint8_t bit;

    if (hash != NULL)
        *hash = '\0';
    if ((word = strtok_r(line, " \t\r\n", &save)) == NULL)
        return 0;
    if ((num = strtok_r(NULL, " \t\r\n", &save)) == NULL || strtok_r(NULL, " \t\r\n", &save) != NULL)
        return -1;
    if (strcmp(word, "lost") == 0)
        bit = MS__SIM_LOST;
    else if (strcmp(word, "fail") == 0)
        bit = MS__SIM_FAIL;
    else
        return -1;
    errno = 0;
    g = strtol(num, &end, 10);
    if (errno != 0 || *end != '\0' || g < 0 || g >= s->inv.ngpus)
        return -1;
    s->fault[g] |= bit;
    return 0;
}

static void reread(ms__sim_t *s)
{
    FILE *f;
    char line[256];
    long lineno = 0, bad = 0;

    memset(s->fault, 0, (size_t)s->inv.ngpus);
    if ((f = fopen(s->fault_path, "r")) == NULL)
        return;
    while (fgets(line, sizeof(line), f) != NULL) {
        lineno++;
        if (parse_line(s, line) != 0 && bad++ == 0)
            ms_log("warn", "sim-faults: a line is neither 'lost GPU' nor 'fail GPU' (ignored)",
                   json_pack("{s:s,s:I}", "file", s->fault_path, "line", (json_int_t)lineno));
    }
    fclose(f);
}

uint8_t ms__sim_fault(ms__sim_t *s, int gpu)
{
    struct stat st;
    long long sig[3] = { 0, 0, 0 };

    if (s->fault == NULL || gpu < 0 || gpu >= s->inv.ngpus)
        return 0;
    if (stat(s->fault_path, &st) == 0) {
        sig[0] = (long long)st.st_ino;
        sig[1] = (long long)st.st_size;
        sig[2] = (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
    }
    if (memcmp(sig, s->fault_sig, sizeof(sig)) != 0) {
        memcpy(s->fault_sig, sig, sizeof(sig));
        reread(s);
    }
    return s->fault[gpu];
}
