/* test_redo.c - a store that cannot write (src/service/redo.c, loop.c,
 * store.c): every write SQLite makes fails with SQLITE_FULL while the test
 * says the disk is full (a VFS of this file around the real one, so the
 * daemon's code is untouched), while jobs run on the sim backend and a
 * fake clock (fixture.c). Asserted:
 *   - the loop does not abort; nothing of the failed batch leaves: its
 *     answer is held and its plan does not reach the executor;
 *   - an op the executor ran meanwhile is not reported failed: its job
 *     runs in the view, and the backend has its instance;
 *   - new submissions are answered 503, /readyz says the store is down;
 *   - once there is room the held answer goes out (201), the held plan
 *     runs, and the store holds exactly the view: a restart from it finds
 *     every job in the state the view had and every instance owned.
 * On a daemon without redo.c the failed commit aborted the process. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "service/fixture.h"

/* --- a full disk: a VFS whose files fail every write while `full` -------- */

static int full;
static sqlite3_vfs *real_vfs, full_vfs;

typedef struct ffile {
    sqlite3_file base;             /* pMethods = &fio */
    sqlite3_file *real;            /* the real VFS's file, allocated after */
} ffile_t;

#define REAL(f) (((ffile_t *)(void *)(f))->real)

static int f_close(sqlite3_file *f)
{
    int rc = REAL(f)->pMethods->xClose(REAL(f));

    return rc;
}
static int f_read(sqlite3_file *f, void *b, int n, sqlite3_int64 o) { return REAL(f)->pMethods->xRead(REAL(f), b, n, o); }
static int f_write(sqlite3_file *f, const void *b, int n, sqlite3_int64 o)
{
    return full ? SQLITE_FULL : REAL(f)->pMethods->xWrite(REAL(f), b, n, o);
}
static int f_truncate(sqlite3_file *f, sqlite3_int64 n) { return REAL(f)->pMethods->xTruncate(REAL(f), n); }
static int f_sync(sqlite3_file *f, int fl) { return REAL(f)->pMethods->xSync(REAL(f), fl); }
static int f_size(sqlite3_file *f, sqlite3_int64 *n) { return REAL(f)->pMethods->xFileSize(REAL(f), n); }
static int f_lock(sqlite3_file *f, int l) { return REAL(f)->pMethods->xLock(REAL(f), l); }
static int f_unlock(sqlite3_file *f, int l) { return REAL(f)->pMethods->xUnlock(REAL(f), l); }
static int f_check(sqlite3_file *f, int *o) { return REAL(f)->pMethods->xCheckReservedLock(REAL(f), o); }
static int f_ctl(sqlite3_file *f, int op, void *a) { return REAL(f)->pMethods->xFileControl(REAL(f), op, a); }
static int f_sector(sqlite3_file *f) { return REAL(f)->pMethods->xSectorSize(REAL(f)); }
static int f_chars(sqlite3_file *f) { return REAL(f)->pMethods->xDeviceCharacteristics(REAL(f)); }
static int f_shmmap(sqlite3_file *f, int i, int sz, int w, void volatile **p)
{
    return REAL(f)->pMethods->xShmMap(REAL(f), i, sz, w, p);
}
static int f_shmlock(sqlite3_file *f, int o, int n, int fl) { return REAL(f)->pMethods->xShmLock(REAL(f), o, n, fl); }
static void f_shmbarrier(sqlite3_file *f) { REAL(f)->pMethods->xShmBarrier(REAL(f)); }
static int f_shmunmap(sqlite3_file *f, int del) { return REAL(f)->pMethods->xShmUnmap(REAL(f), del); }

static const sqlite3_io_methods fio = {
    2, f_close, f_read, f_write, f_truncate, f_sync, f_size, f_lock, f_unlock, f_check, f_ctl, f_sector, f_chars,
    f_shmmap, f_shmlock, f_shmbarrier, f_shmunmap, NULL, NULL,
};

static int v_open(sqlite3_vfs *v, const char *name, sqlite3_file *f, int flags, int *out)
{
    ffile_t *ff = (ffile_t *)(void *)f;
    int rc;

    (void)v;
    ff->real = (sqlite3_file *)(void *)(ff + 1);
    rc = real_vfs->xOpen(real_vfs, name, ff->real, flags, out);
    ff->base.pMethods = rc == SQLITE_OK ? &fio : NULL;
    return rc;
}

static void full_vfs_install(void)
{
    real_vfs = sqlite3_vfs_find(NULL);
    full_vfs = *real_vfs;
    full_vfs.zName = "full-disk";
    full_vfs.szOsFile = (int)sizeof(ffile_t) + real_vfs->szOsFile;
    full_vfs.xOpen = v_open;
    assert_int_equal(sqlite3_vfs_register(&full_vfs, 1), SQLITE_OK);
}

static int answered;

static void on_reply(svc_msg_t *m)
{
    (void)m;
    answered++;
}

/* Submit body; the message (its answer callback counts answers). */
static svc_msg_t *submit(fx_t *f, const char *body)
{
    svc_msg_t *m = fx_submit_msg(body);

    m->on_reply = on_reply;
    fx_batch(f, &m, 1);
    return m;
}

static int instances_of(fx_t *f, const char *job)
{
    ms_binst_t *inv;
    int n, i, k = 0;

    assert_int_equal(ms_backend_inventory(f->d.be, &inv, &n, NULL), MS_OK);
    for (i = 0; i < n; i++)
        k += strcmp(inv[i].job, job) == 0;
    free(inv);
    return k;
}

static void test_full_disk_holds_and_converges(void **state)
{
    fx_t f;
    svc_msg_t *m, *r;
    json_t *o;
    int plans;

    (void)state;
    full_vfs_install();
    fx_setup(&f, "a=2xA100-40GB", "best-fit", NULL);
    fx_start(&f);
    f.d.ready = true;
    assert_int_equal(fx_run(&f, "{\"id\":\"a\",\"profile\":\"3g.20gb\"}"), MS_JOB_RUNNING);
    /* b is decided and committed; its plan waits for the executor */
    answered = 0;
    m = submit(&f, "{\"id\":\"b\",\"profile\":\"3g.20gb\"}");
    assert_int_equal(answered, 1);
    svc_msg_free(m);
    assert_true(svc_queue_len(&f.d.exec.q) >= 1);

    /* the disk fills */
    full = 1;
    /* the executor runs b's plan: its outcome cannot be stored */
    assert_true(fx_exec(&f) >= 1);
    assert_true(f.d.loop.store_down);
    assert_int_equal(fx_state(&f, "b"), MS_JOB_RUNNING);   /* not reported failed */
    assert_int_equal(instances_of(&f, "b"), 1);
    assert_int_equal(fx_sql(&f, "SELECT COUNT(*) FROM jobs WHERE id='b' AND state='starting'"), 1);
    /* a's done is decided in memory, its answer held and its plan (the
     * instance's removal) not executed */
    answered = 0;
    m = fx_msg(SVC_M_DONE, "a");
    m->on_reply = on_reply;
    fx_batch(&f, &m, 1);
    assert_int_equal(answered, 0);                          /* held */
    assert_int_equal(fx_state(&f, "a"), MS_JOB_DONE);       /* in memory */
    plans = (int)svc_queue_len(&f.d.exec.q);
    assert_int_equal(plans, 0);                             /* its plan stays staged */
    assert_int_equal(fx_sql(&f, "SELECT COUNT(*) FROM jobs WHERE id='a' AND state='running'"), 1);
    /* new submissions are refused; /readyz says why */
    r = fx_submit_msg("{\"id\":\"d\",\"profile\":\"1g.5gb\"}");
    fx_batch(&f, &r, 1);
    assert_int_equal(r->status, 503);
    assert_null(svc_jobs_find(&f.d.jobs, "d"));
    svc_msg_free(r);
    r = fx_msg(SVC_M_READY, NULL);
    fx_batch(&f, &r, 1);
    assert_int_equal(r->status, 503);
    assert_non_null(o = json_loads(r->body, 0, NULL));
    assert_true(json_is_false(json_object_get(o, "store")));
    json_decref(o);
    svc_msg_free(r);

    /* room again: the next batch commits everything held, in order */
    full = 0;
    fx_batch(&f, NULL, 0);
    assert_false(f.d.loop.store_down);
    assert_int_equal(answered, 1);
    assert_int_equal(m->status, 200);
    svc_msg_free(m);
    assert_int_equal(fx_sql(&f, "SELECT COUNT(*) FROM jobs WHERE id='b' AND state='running'"), 1);
    assert_int_equal(fx_sql(&f, "SELECT COUNT(*) FROM jobs WHERE id='a' AND state='done'"), 1);
    while (fx_exec(&f) > 0)
        ;
    assert_int_equal(instances_of(&f, "a"), 0);   /* a's done: its plan ran once journalled */
    assert_int_equal(fx_sql(&f, "SELECT COUNT(*) FROM ops WHERE result='pending'"), 0);
    assert_int_equal(fx_sql(&f, "SELECT COUNT(*) FROM events WHERE job='b' AND state='running'"), 1);

    /* a restart from the store agrees with what ran */
    {
        char dir[64];

        snprintf(dir, sizeof(dir), "%s", f.dir);
        fx_stop(&f);
        fx_setup_dir(&f, dir, "a=2xA100-40GB", "best-fit", NULL);
        fx_start(&f);
        assert_int_equal(fx_state(&f, "a"), MS_JOB_DONE);
        assert_int_equal(fx_state(&f, "b"), MS_JOB_RUNNING);
        assert_int_equal(instances_of(&f, "b"), 1);
        assert_int_equal(f.d.destroyed_at_start, 0);
    }
    fx_teardown(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_full_disk_holds_and_converges),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
