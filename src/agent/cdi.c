/* cdi.c - one CDI spec file per instance (docs/agent.md). Runs on the
 * thread that holds ag_t.mu: a connection's (ops.c), or main at start-up.
 *
 * CDI_DIR/migsched-<uuid>.json holds a spec of kind migsched.io/mig with one
 * device named by the instance's uuid, so a pod annotated
 * cdi.k8s.io/migsched: migsched.io/mig=<uuid> gets exactly that instance.
 * A file is written as .migsched-<uuid>.json.tmp (a name no CDI loader
 * reads: they take *.json and *.yaml), fsynced and renamed into place, so a
 * runtime sees the whole spec or none. Only files named migsched-*.json
 * (and our temporaries) are ever removed: the directory is shared with
 * other vendors' specs.
 *
 * Device nodes: the GPU's /dev/nvidia<minor> with minor = the NVML index
 * (inferred: true on ordinary machines, where the driver numbers minors in
 * PCI order like NVML, not guaranteed), /dev/nvidiactl, /dev/nvidia-uvm and
 * /dev/nvidia-uvm-tools; and, where the driver publishes them, the MIG
 * capability nodes of the instance's GI and CI, /dev/nvidia-caps/nvidia-cap<N>
 * with N read from CAPS/gpu<minor>/mig/gi<G>/access and .../ci<C>/access
 * ("DeviceFileMinor: N"). The sim has no GI ids, so no capability nodes.
 * The dry-run backend writes and removes no spec file.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/agent.h"
#include "core/fdio.h"

#define PREFIX "migsched-"
#define SUFFIX ".json"

/* The "DeviceFileMinor: N" of a capability file; -1 if unknown. */
static long cap_minor(const char *path)
{
    FILE *f = fopen(path, "r");
    char line[256];
    long v = -1;

    if (f == NULL)
        return -1;
    while (fgets(line, sizeof(line), f) != NULL) {
        char *end;

        if (strncmp(line, "DeviceFileMinor:", 16) == 0) {
            errno = 0;
            v = strtol(line + 16, &end, 10);
            if (errno != 0 || end == line + 16 || v < 0 || v > 1048575)
                v = -1;
            break;
        }
    }
    fclose(f);
    return v;
}

/* One device node: its path in the container, and where it is on the host
 * when --dev-root moves the driver's /dev (CDI hostPath). */
static int add_node(const ag_t *a, json_t *nodes, const char *path)
{
    char host[600];

    if (a->cfg->dev_root == NULL || a->cfg->dev_root[0] == '\0')
        return json_array_append_new(nodes, json_pack("{s:s}", "path", path));
    snprintf(host, sizeof(host), "%.400s%s", a->cfg->dev_root, path);
    return json_array_append_new(nodes, json_pack("{s:s,s:s}", "path", path, "hostPath", host));
}

int ag_cdi_nodes(const ag_t *a, const ms_binst_t *in, json_t *nodes)
{
    char buf[600], path[512];
    long m;

    snprintf(buf, sizeof(buf), "/dev/nvidia%d", (int)in->gpu);
    if (add_node(a, nodes, buf) != 0 || add_node(a, nodes, "/dev/nvidiactl") != 0 ||
        add_node(a, nodes, "/dev/nvidia-uvm") != 0 || add_node(a, nodes, "/dev/nvidia-uvm-tools") != 0)
        return -1;
    if (in->start >= 0 && in->gi_id > 0 && a->cfg->caps_root != NULL) {
        snprintf(path, sizeof(path), "%.400s/gpu%d/mig/gi%u/access", a->cfg->caps_root, (int)in->gpu,
                 (unsigned)in->gi_id);
        if ((m = cap_minor(path)) >= 0) {
            snprintf(buf, sizeof(buf), "/dev/nvidia-caps/nvidia-cap%ld", m);
            if (add_node(a, nodes, buf) != 0)
                return -1;
        }
        snprintf(path, sizeof(path), "%.400s/gpu%d/mig/gi%u/ci%u/access", a->cfg->caps_root, (int)in->gpu,
                 (unsigned)in->gi_id, (unsigned)in->ci_id);
        if ((m = cap_minor(path)) >= 0) {
            snprintf(buf, sizeof(buf), "/dev/nvidia-caps/nvidia-cap%ld", m);
            if (add_node(a, nodes, buf) != 0)
                return -1;
        }
    }
    return 0;
}

json_t *ag_cdi_spec(const ag_t *a, const ms_binst_t *in)
{
    const ms_profile_t *p = ms_geom_profile(a->geom[in->gpu], in->prof);
    json_t *nodes = json_array(), *env = json_array(), *spec;
    char buf[600];

    if (nodes == NULL || env == NULL || ag_cdi_nodes(a, in, nodes) != 0)
        goto fail;
    snprintf(buf, sizeof(buf), "NVIDIA_VISIBLE_DEVICES=%s", in->uuid);
    if (json_array_append_new(env, json_string(buf)) != 0)
        goto fail;
    snprintf(buf, sizeof(buf), "%d:%d", (int)in->gpu, (int)in->start);
    spec = json_pack("{s:s,s:s,s:{s:s,s:s,s:s},s:[{s:s,s:{s:o,s:o}}]}", "cdiVersion", "0.6.0", "kind",
                     "migsched.io/mig", "annotations", "migsched.io/gpu-uuid",
                     ms_backend_gpu_uuid(a->be, in->gpu), "migsched.io/profile", p->name,
                     "migsched.io/placement", buf, "devices", "name", in->uuid, "containerEdits", "env", env,
                     "deviceNodes", nodes);
    return spec;   /* json_pack's "o" steals env and nodes, even on failure */
fail:
    json_decref(nodes);
    json_decref(env);
    return NULL;
}

int ag_cdi_write_file(const ag_t *a, const char *name, const char *text)
{
    char path[4096], tmp[4096];
    size_t len = strlen(text);
    int fd, rc = -1;

    if ((size_t)snprintf(path, sizeof(path), "%s/%s", a->cfg->cdi_dir, name) >= sizeof(path) ||
        (size_t)snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", a->cfg->cdi_dir, name) >= sizeof(tmp))
        return -1;
    if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) < 0)
        return -1;
    if (ms__write_all(fd, text, len) == 0 && write(fd, "\n", 1) == 1 && fsync(fd) == 0)
        rc = 0;
    if (close(fd) != 0)
        rc = -1;
    if (rc == 0 && rename(tmp, path) != 0)
        rc = -1;
    if (rc != 0)
        unlink(tmp);
    return rc;
}

static int write_spec(ag_t *a, const ms_binst_t *in)
{
    char name[256], *text;
    json_t *spec = ag_cdi_spec(a, in);
    int rc;

    if (spec == NULL)
        return -1;
    text = json_dumps(spec, JSON_INDENT(2) | JSON_SORT_KEYS);
    json_decref(spec);
    if (text == NULL)
        return -1;
    snprintf(name, sizeof(name), PREFIX "%s" SUFFIX, in->uuid);
    rc = ag_cdi_write_file(a, name, text);
    free(text);
    if (rc == 0)
        a->st.cdi_written++;
    return rc;
}

static bool exists(const char *dir, const char *uuid)
{
    char path[4096];

    if ((size_t)snprintf(path, sizeof(path), "%s/" PREFIX "%s" SUFFIX, dir, uuid) >= sizeof(path))
        return false;
    return access(path, F_OK) == 0;
}

int ag_cdi_sync(ag_t *a, const ms_binst_t *inv, int n, bool rewrite)
{
    DIR *d;
    struct dirent *de;
    int i, rc = 0;

    /* dry-run touches nothing, the CDI directory included: a runtime must
     * not be offered devices that do not exist */
    if (strcmp(ms_backend_name(a->be), "dry-run") == 0)
        return 0;
    for (i = 0; i < n; i++)
        if (inv[i].uuid[0] != '\0' && inv[i].start >= 0 && ag_uuid_valid(inv[i].uuid) &&
            (rewrite || !exists(a->cfg->cdi_dir, inv[i].uuid)) && write_spec(a, &inv[i]) != 0) {
            ms_log("error", "cannot write a CDI spec file",
                    json_pack("{s:s,s:s,s:s}", "dir", a->cfg->cdi_dir, "uuid", inv[i].uuid, "error", strerror(errno)));
            rc = -1;
        }
    if ((d = opendir(a->cfg->cdi_dir)) == NULL)
        return -1;
    while ((de = readdir(d)) != NULL) {
        const char *nm = de->d_name;
        size_t len = strlen(nm), pl = strlen(PREFIX), sl = strlen(SUFFIX);
        bool ours = len > pl + sl && strncmp(nm, PREFIX, pl) == 0 && strcmp(nm + len - sl, SUFFIX) == 0;
        bool tmp = len > 1 + pl && nm[0] == '.' && strncmp(nm + 1, PREFIX, pl) == 0 &&
                   len > 4 && strcmp(nm + len - 4, ".tmp") == 0;
        char path[4096];
        bool keep = false;

        if (!ours && !tmp)
            continue;
        if (ours)
            for (i = 0; i < n && !keep; i++)
                keep = inv[i].start >= 0 && strlen(inv[i].uuid) == len - pl - sl &&
                       strncmp(inv[i].uuid, nm + pl, len - pl - sl) == 0;
        if (keep)
            continue;
        if ((size_t)snprintf(path, sizeof(path), "%s/%s", a->cfg->cdi_dir, nm) >= sizeof(path))
            continue;
        if (unlink(path) == 0) {
            if (ours)
                a->st.cdi_removed++;
        } else if (errno != ENOENT)
            rc = -1;
    }
    closedir(d);
    return rc;
}
