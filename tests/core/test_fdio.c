/* test_fdio.c - whole-buffer writes and reads (src/core/fdio.h): 1 MiB
 * through a pipe (many short writes and reads) arrives whole and in order;
 * a read stops at end of file with the count so far; errors are -1. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/fdio.h"

#define N (1 << 20)

static void test_through_a_pipe(void **state)
{
    unsigned char *out = malloc(N), *in = malloc(N + 16);
    int fds[2], wst = 0;
    pid_t pid;
    size_t i;

    (void)state;
    assert_non_null(out);
    assert_non_null(in);
    for (i = 0; i < N; i++)
        out[i] = (unsigned char)(i * 131 + (i >> 9));
    assert_int_equal(pipe(fds), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {   /* more than a pipe holds: the writes come back short */
        close(fds[0]);
        _exit(ms__write_all(fds[1], out, N) == 0 ? 0 : 1);
    }
    close(fds[1]);
    assert_int_equal(ms__read_full(fds[0], in, N + 16), N);   /* stops at EOF */
    assert_memory_equal(in, out, N);
    assert_int_equal(ms__read_full(fds[0], in, 16), 0);
    close(fds[0]);
    assert_int_equal(waitpid(pid, &wst, 0), pid);
    assert_true(WIFEXITED(wst) && WEXITSTATUS(wst) == 0);
    free(out);
    free(in);
}

static void test_errors(void **state)
{
    char b[4] = "abc";
    int fds[2];

    (void)state;
    assert_int_equal(ms__write_all(-1, b, sizeof(b)), -1);
    assert_int_equal(ms__read_full(-1, b, sizeof(b)), -1);
    assert_int_equal(pipe(fds), 0);
    assert_int_equal(ms__write_all(fds[0], b, sizeof(b)), -1);   /* the read end */
    assert_int_equal(ms__write_all(fds[1], b, 0), 0);
    close(fds[0]);
    close(fds[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_through_a_pipe),
        cmocka_unit_test(test_errors),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
