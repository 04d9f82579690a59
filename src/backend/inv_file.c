/* inv_file.c - an inventory's files (backend_int.h): the snapshot
 * <kind>-inventory.json, replaced by renaming a temporary file over it, and
 * the journal <kind>-inventory.journal, one line appended after every op.
 * Called with the inventory's mutex held, or while one thread owns it
 * (open, close); ms__inv_adopt_uuid takes the mutex itself.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/backend_int.h"
#include "core/fdio.h"

static void render_inst(ms_jtext_t *t, const ms_binst_t *in, bool first)
{
    ms_jtext_raw(t, first ? "{\"gpu\":" : ",{\"gpu\":");
    ms_jtext_int(t, in->gpu);
    ms_jtext_raw(t, ",\"start\":");
    ms_jtext_int(t, in->start);
    ms_jtext_raw(t, ",\"prof\":");
    ms_jtext_int(t, in->prof);
    ms_jtext_raw(t, ",\"job\":");
    ms_jtext_str(t, in->job);   /* tags come from requests and pod names */
    ms_jtext_raw(t, ",\"uuid\":");
    ms_jtext_str(t, in->uuid);
    ms_jtext_raw(t, "}");
}

/* The whole inventory as JSON ({"ngpus", "uuid_seq", "instances": [...]},
 * the format load reads and tests edit). */
static int render(ms__inv_t *inv)
{
    ms_jtext_t *t = &inv->out;
    int i;

    ms_jtext_reset(t);
    ms_jtext_raw(t, "{\"ngpus\":");
    ms_jtext_int(t, inv->ngpus);
    ms_jtext_raw(t, ",\"uuid_seq\":");
    ms_jtext_int(t, (long long)inv->uuid_seq);
    ms_jtext_raw(t, ",\"instances\":[");
    for (i = 0; i < inv->n; i++)
        render_inst(t, &inv->v[i], i == 0);
    ms_jtext_raw(t, "]}\n");
    return t->oom ? -1 : 0;
}

/* Replace the snapshot (a temporary file renamed over the old one), then
 * empty the journal. A crash between the two replays a journal that the
 * snapshot already holds: each record sets whole GPUs, so replaying the
 * records in order ends where the snapshot is. */
int ms__inv_compact(ms__inv_t *inv)
{
    int fd, rc;

    if (render(inv) != 0 || (fd = open(inv->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) < 0)
        return -1;
    rc = ms__write_all(fd, inv->out.p, inv->out.len);
    if (close(fd) != 0 || rc != 0 || rename(inv->tmp, inv->path) != 0)
        return -1;
    inv->snapbytes = inv->out.len;
    if (inv->jfd >= 0) {
        if (ftruncate(inv->jfd, 0) != 0)
            return -1;
        inv->jbytes = 0;
        inv->jbroken = false;
    }
    return 0;
}

/* After an op on GPU g1 (and g2 unless negative): one journal line,
 * {"uuid_seq", "gpus": [...], "instances": [every instance on them]},
 * written with one write(2), so an op costs what its GPUs hold and not
 * what the cluster holds (rewriting the whole inventory after every op was
 * most of the daemon's CPU under a stream of submissions,
 * docs/performance.md); the snapshot is rewritten once the journal
 * outgrows it 4 times. A line cut short by a crash has no newline and is
 * ignored at load: that op never happened, and its outcome was never
 * reported. */
int ms__inv_persist(ms__inv_t *inv, int g1, int g2)
{
    ms_jtext_t *t = &inv->out;
    int i;
    bool first = true;

    if (inv->jfd < 0 || inv->jbroken)
        return ms__inv_compact(inv);
    ms_jtext_reset(t);
    ms_jtext_raw(t, "{\"uuid_seq\":");
    ms_jtext_int(t, (long long)inv->uuid_seq);
    ms_jtext_raw(t, ",\"gpus\":[");
    ms_jtext_int(t, g1);
    if (g2 >= 0 && g2 != g1) {
        ms_jtext_raw(t, ",");
        ms_jtext_int(t, g2);
    }
    ms_jtext_raw(t, "],\"instances\":[");
    for (i = 0; i < inv->n; i++)
        if (inv->v[i].gpu == g1 || (g2 >= 0 && inv->v[i].gpu == g2)) {
            render_inst(t, &inv->v[i], first);
            first = false;
        }
    ms_jtext_raw(t, "]}\n");
    if (t->oom)
        return -1;
    if (ms__write_all(inv->jfd, t->p, t->len) != 0) {
        inv->jbroken = true;   /* a torn line may end it: the snapshot takes over */
        return ms__inv_compact(inv);
    }
    inv->jbytes += t->len;
    return inv->jbytes > 4 * inv->snapbytes + 65536 ? ms__inv_compact(inv) : 0;
}

/* One instance of the snapshot or of a journal record. */
static int add_json(ms__inv_t *inv, json_t *o)
{
    int gpu = (int)json_integer_value(json_object_get(o, "gpu"));
    int start = (int)json_integer_value(json_object_get(o, "start"));
    int prof = (int)json_integer_value(json_object_get(o, "prof"));
    const char *job = json_string_value(json_object_get(o, "job"));
    const char *uuid = json_string_value(json_object_get(o, "uuid"));

    if (gpu < 0 || gpu >= inv->ngpus || start < -1 || start > 15 || prof < 0 || prof > 15 ||
        ms__inv_add(inv, gpu, start, prof, job) != MS_OK)
        return -1;
    if (uuid != NULL)
        snprintf(inv->v[inv->n - 1].uuid, sizeof(inv->v[0].uuid), "%s", uuid);
    return 0;
}

/* Replace every instance of the record's GPUs with the record's. */
static int replay_line(ms__inv_t *inv, json_t *rec)
{
    json_t *gpus = json_object_get(rec, "gpus"), *arr = json_object_get(rec, "instances"), *o;
    json_int_t seq = json_integer_value(json_object_get(rec, "uuid_seq"));
    size_t k;
    int i;

    if (!json_is_array(gpus) || !json_is_array(arr) || json_array_size(gpus) == 0)
        return -1;
    json_array_foreach(gpus, k, o) {
        json_int_t g = json_integer_value(o);

        if (!json_is_integer(o) || g < 0 || g >= inv->ngpus)
            return -1;
        for (i = inv->n - 1; i >= 0; i--)
            if (inv->v[i].gpu == g)
                ms__inv_del(inv, i);
    }
    json_array_foreach(arr, k, o) {
        json_int_t g = json_integer_value(json_object_get(o, "gpu"));
        bool listed = false;
        size_t q;
        json_t *x;

        json_array_foreach(gpus, q, x)
            listed = listed || json_integer_value(x) == g;
        if (!listed || add_json(inv, o) != 0)
            return -1;
    }
    if (seq > 0 && (uint64_t)seq > inv->uuid_seq)
        inv->uuid_seq = (uint64_t)seq;
    return 0;
}

/* Apply the journal's complete lines to what the snapshot loaded. An error
 * names the journal (why->file) and its line (why->line). */
static ms_status_t replay(ms__inv_t *inv, ms_diag_t *why)
{
    FILE *f = fopen(inv->jpath, "r");
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    long lineno = 0;
    ms_status_t st = MS_OK;

    if (f == NULL) {
        if (errno == ENOENT)
            return MS_OK;
        ms_diag_set(why, inv->jpath, 0, "", "the backend's inventory journal is unreadable");
        return MS_EIO;
    }
    while (st == MS_OK && (len = getline(&line, &cap, f)) > 0) {
        json_error_t je;
        json_t *rec;

        lineno++;
        if (line[len - 1] != '\n')
            break;   /* cut short by a crash */
        rec = json_loadb(line, (size_t)len, 0, &je);
        if (rec == NULL || replay_line(inv, rec) != 0) {
            ms_diag_set(why, inv->jpath, lineno, "", "%s",
                        rec == NULL ? je.text : "not a record of whole GPUs' instances");
            st = MS_EPARSE;
        }
        json_decref(rec);
    }
    free(line);
    fclose(f);
    return st;
}

ms_status_t ms__inv_load(ms__inv_t *inv, ms_diag_t *why)
{
    json_error_t je;
    json_t *root, *arr, *o;
    size_t i;

    root = json_load_file(inv->path, 0, &je);
    if (root == NULL) {
        FILE *f = fopen(inv->path, "r");

        if (f != NULL || errno != ENOENT) {
            if (f != NULL)
                fclose(f);
            ms_diag_set(why, inv->path, 0, "", "the backend's inventory file is unreadable");
            return MS_EPARSE;
        }
    } else {
        if (json_integer_value(json_object_get(root, "ngpus")) != inv->ngpus) {
            json_decref(root);
            ms_diag_set(why, inv->path, 0, "ngpus",
                        "the backend's inventory has another number of GPUs than the configured nodes");
            return MS_EINVAL;
        }
        inv->uuid_seq = (uint64_t)json_integer_value(json_object_get(root, "uuid_seq"));
        arr = json_object_get(root, "instances");
        json_array_foreach(arr, i, o) {
            if (add_json(inv, o) != 0) {
                json_decref(root);
                ms_diag_set(why, inv->path, 0, "instances", "the backend's inventory has an impossible instance");
                return MS_EINVAL;
            }
        }
        json_decref(root);
    }
    if (replay(inv, why) != MS_OK)
        return MS_EPARSE;
    if ((inv->jfd = open(inv->jpath, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644)) < 0) {
        ms_diag_set(why, inv->jpath, 0, "", "cannot open the backend's inventory journal");
        return MS_EIO;
    }
    return MS_OK;
}

void ms__inv_fini(ms__inv_t *inv)
{
    if (inv->jfd >= 0) {
        /* a clean stop leaves the whole state in the snapshot */
        if (inv->jbytes > 0 || inv->jbroken)
            (void)ms__inv_compact(inv);
        close(inv->jfd);
        inv->jfd = -1;
    }
    if (inv->mu_init)
        pthread_mutex_destroy(&inv->mu);
    free(inv->v);
    ms_jtext_free(&inv->out);
    free(inv->jpath);
    free(inv->path);
    free(inv->tmp);
    free(inv->gpu_uuid);
    memset(inv, 0, sizeof(*inv));
    inv->jfd = -1;
}

ms_status_t ms__inv_adopt_uuid(ms__inv_t *inv, int gpu, int start, const char *uuid, ms_diag_t *why)
{
    ms_status_t st = MS_OK;
    int i;

    if (uuid == NULL || uuid[0] == '\0' || strlen(uuid) >= sizeof(inv->v[0].uuid)) {
        ms_diag_set(why, NULL, 0, "", "not an instance uuid");
        return MS_EINVAL;
    }
    pthread_mutex_lock(&inv->mu);
    if ((i = ms__inv_find(inv, gpu, start, NULL)) < 0) {
        ms_diag_set(why, NULL, 0, "", "no such instance");
        st = MS_ENOENT;
    } else if (strcmp(inv->v[i].uuid, uuid) != 0) {
        snprintf(inv->v[i].uuid, sizeof(inv->v[i].uuid), "%s", uuid);
        if (ms__inv_persist(inv, gpu, -1) != 0) {
            ms_diag_set(why, NULL, 0, "", "cannot write the inventory file");
            st = MS_EIO;
        }
    }
    pthread_mutex_unlock(&inv->mu);
    return st;
}
