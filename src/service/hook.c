/* hook.c - an executor lane's thread: the migration hook (docs/service.md).
 * For a MOVE, `sh -c --migrate-hook` with the move in its environment;
 * exit 0 within --migrate-timeout means the work moved. The deadline is
 * the daemon's clock's.
 *
 * The hook runs in a process group of its own (issue 20, defect 9): at the
 * deadline, or when it fails, the whole group gets SIGTERM, then SIGKILL
 * after a grace (HOOK_GRACE_S, or as soon as every process of the group has
 * let go of the hook's output), so no child of it goes on moving a job
 * whose move the scheduler rolls back. The group is signalled before its
 * leader is reaped (waitid with WNOWAIT), so its id cannot have been given
 * to another process meanwhile. Its stdout and stderr go to a pipe the
 * executor reads while it waits; the last HOOK_TAIL bytes, made printable,
 * are logged as one field of the hook's log line, never raw into the
 * daemon's JSON log. The hook starts with default signal handling and an
 * empty signal mask (the daemon's threads block the signals they take with
 * sigwait), stdin from /dev/null.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "service/svc.h"

#define HOOK_GRACE_S 5.0     /* SIGTERM to SIGKILL */
#define HOOK_TAIL 4096       /* bytes of its output kept */

extern char **environ;

/* The last HOOK_TAIL bytes of the hook's output. */
typedef struct tail {
    char buf[HOOK_TAIL];
    size_t n, pos;           /* bytes held; where the next goes */
    size_t total;
    bool eof;
} tail_t;

/* The hook's environment: the move's variables, then ours without any
 * MIGSCHED_ one. env holds the texts, envp[64] the pointers. */
static void hook_env(svc_t *d, const svc_xop_t *x, char env[10][160], char **envp)
{
    const ms_op_t *op = &x->op;
    char from_uuid[48], to_uuid[48];
    int i, n = 0;

    ms_backend_inst_uuid(d->be, op->from_gpu, op->from_start, x->job, from_uuid, sizeof(from_uuid));
    ms_backend_inst_uuid(d->be, op->gpu, op->start, NULL, to_uuid, sizeof(to_uuid));
    snprintf(env[0], 160, "MIGSCHED_JOB=%s", x->job);
    snprintf(env[1], 160, "MIGSCHED_PROFILE=%s", x->prof_name);
    snprintf(env[2], 160, "MIGSCHED_FROM_GPU=%d", (int)op->from_gpu);
    snprintf(env[3], 160, "MIGSCHED_FROM_START=%d", (int)op->from_start);
    snprintf(env[4], 160, "MIGSCHED_FROM_UUID=%s", from_uuid);
    snprintf(env[5], 160, "MIGSCHED_TO_GPU=%d", (int)op->gpu);
    snprintf(env[6], 160, "MIGSCHED_TO_START=%d", (int)op->start);
    snprintf(env[7], 160, "MIGSCHED_TO_UUID=%s", to_uuid);
    snprintf(env[8], 160, "MIGSCHED_MOVE=%s", op->bbm ? "break-before-make" : "make-before-break");
    for (i = 0; i < 9; i++)
        envp[n++] = env[i];
    for (i = 0; environ != NULL && environ[i] != NULL && n < 63; i++)
        if (strncmp(environ[i], "MIGSCHED_", 9) != 0)
            envp[n++] = environ[i];
    envp[n] = NULL;
}

/* Read what the pipe holds now into the tail. */
static void drain(int fd, tail_t *t)
{
    char chunk[1024];
    ssize_t r = -1;

    while (!t->eof && (r = read(fd, chunk, sizeof(chunk))) != 0) {
        ssize_t i;

        if (r < 0) {
            if (errno == EINTR)
                continue;
            return;   /* EAGAIN: nothing more now */
        }
        for (i = 0; i < r; i++) {
            t->buf[t->pos] = chunk[i];
            t->pos = (t->pos + 1) % HOOK_TAIL;
            if (t->n < HOOK_TAIL)
                t->n++;
        }
        t->total += (size_t)r;
    }
    if (r == 0)
        t->eof = true;
}

/* The tail as printable text (tabs and newlines kept, any other byte that
 * is not printable ASCII a '?'), at most len - 1 of its last bytes. */
static void tail_text(const tail_t *t, char *out, size_t len)
{
    size_t n = t->n < len - 1 ? t->n : len - 1, i, start = (t->pos + HOOK_TAIL - n) % HOOK_TAIL;

    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)t->buf[(start + i) % HOOK_TAIL];

        out[i] = (c == '\n' || c == '\t' || (c >= 0x20 && c < 0x7f)) ? (char)c : '?';
    }
    out[n] = '\0';
}

static void nap(void)
{
    struct timespec ts = { 0, 10 * 1000 * 1000 };

    nanosleep(&ts, NULL);
}

/* Has the group's leader exited? (not reaped: its id stays the group's)
 * *si says how; a leader that cannot be waited for counts as exited, with
 * si_pid 0. */
static bool exited(pid_t pid, siginfo_t *si)
{
    memset(si, 0, sizeof(*si));
    if (waitid(P_PID, (id_t)pid, si, WEXITED | WNOHANG | WNOWAIT) != 0) {
        memset(si, 0, sizeof(*si));
        return errno != EINTR;
    }
    return si->si_pid == pid;
}

/* SIGTERM to the group, SIGKILL after the grace (or once nothing of the
 * group holds its output any more); the leader stays unreaped. */
static void end_group(svc_t *d, pid_t pid, int fd, tail_t *t)
{
    double t0 = svc_clock_mono(d->clock);
    siginfo_t si;

    (void)kill(-pid, SIGTERM);
    while (svc_clock_mono(d->clock) - t0 < HOOK_GRACE_S) {
        drain(fd, t);
        if (t->eof && exited(pid, &si))
            break;
        nap();
    }
    (void)kill(-pid, SIGKILL);
}

/* Start the hook in its own group, output into fds[1]; 0 or an errno. */
static int spawn(svc_t *d, const svc_xop_t *x, int out_fd, pid_t *pid)
{
    char env[10][160], *envp[64];
    char *argv[] = { (char *)"sh", (char *)"-c", d->cfg->migrate_hook, NULL };
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    sigset_t none, dfl;
    int rc;

    hook_env(d, x, env, envp);
    sigemptyset(&none);
    sigemptyset(&dfl);
    sigaddset(&dfl, SIGTERM);
    sigaddset(&dfl, SIGINT);
    sigaddset(&dfl, SIGHUP);
    sigaddset(&dfl, SIGPIPE);
    if ((rc = posix_spawn_file_actions_init(&fa)) != 0)
        return rc;
    if ((rc = posix_spawnattr_init(&at)) != 0) {
        posix_spawn_file_actions_destroy(&fa);
        return rc;
    }
    if ((rc = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0)) == 0 &&
        (rc = posix_spawn_file_actions_adddup2(&fa, out_fd, 1)) == 0 &&
        (rc = posix_spawn_file_actions_adddup2(&fa, out_fd, 2)) == 0 &&
        (rc = posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)) ==
            0 &&
        (rc = posix_spawnattr_setpgroup(&at, 0)) == 0 && (rc = posix_spawnattr_setsigmask(&at, &none)) == 0 &&
        (rc = posix_spawnattr_setsigdefault(&at, &dfl)) == 0)
        rc = posix_spawn(pid, "/bin/sh", &fa, &at, argv, envp);
    posix_spawnattr_destroy(&at);
    posix_spawn_file_actions_destroy(&fa);
    return rc;
}

static void log_hook(const svc_xop_t *x, const char *result, double secs, const tail_t *t)
{
    char text[HOOK_TAIL + 1];

    tail_text(t, text, sizeof(text));
    ms_log(strcmp(result, "moved") == 0 ? "info" : "warn", "migration hook",
           json_pack("{s:s,s:s,s:f,s:I,s:s}", "job", x->job, "result", result, "seconds", secs, "output_bytes",
                     (json_int_t)t->total, "output", text));
}

int svc_hook_run(svc_t *d, const svc_xop_t *x, char *why, size_t len)
{
    tail_t *t = calloc(1, sizeof(*t));
    char res[64], last[160];
    siginfo_t si;
    double t0;
    pid_t pid;
    int fds[2], status = 0, rc;
    bool late = false, ok;

    if (t == NULL || pipe(fds) != 0) {
        free(t);
        snprintf(why, len, "migration hook: out of resources");
        return -1;
    }
    (void)fcntl(fds[0], F_SETFD, FD_CLOEXEC);
    (void)fcntl(fds[0], F_SETFL, O_NONBLOCK);
    (void)fcntl(fds[1], F_SETFD, FD_CLOEXEC);   /* dup2 onto 1 and 2 clears it there */
    rc = spawn(d, x, fds[1], &pid);
    close(fds[1]);
    if (rc != 0) {
        close(fds[0]);
        free(t);
        snprintf(why, len, "migration hook: cannot start /bin/sh: %s", strerror(rc));
        return -1;
    }
    t0 = svc_clock_mono(d->clock);
    for (;;) {
        drain(fds[0], t);
        if (exited(pid, &si))
            break;
        if (svc_clock_mono(d->clock) - t0 > d->cfg->migrate_timeout_s) {
            late = true;
            end_group(d, pid, fds[0], t);
            break;
        }
        nap();
    }
    ok = !late && si.si_pid == pid && si.si_code == CLD_EXITED && si.si_status == 0;
    if (!ok && !late)
        end_group(d, pid, fds[0], t);   /* what it left behind goes with it, before the reap */
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    drain(fds[0], t);
    close(fds[0]);
    if (late)
        snprintf(res, sizeof(res), "no answer within %.0f s", d->cfg->migrate_timeout_s);
    else if (si.si_pid != pid)
        snprintf(res, sizeof(res), "lost its process");
    else if (!ok)
        snprintf(res, sizeof(res), "%s %d", si.si_code == CLD_EXITED ? "exit" : "signal", si.si_status);
    log_hook(x, ok ? "moved" : res, svc_clock_mono(d->clock) - t0, t);
    if (!ok) {
        tail_text(t, last, sizeof(last));
        snprintf(why, len, "migration hook failed (%s)%s%s", res, last[0] ? ": " : "", last);
    }
    free(t);
    return ok ? 0 : -1;
}
