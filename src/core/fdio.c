/* fdio.c - whole-buffer writes and reads (fdio.h). */
#include "core/fdio.h"

#include <errno.h>
#include <unistd.h>

int ms__write_all(int fd, const void *p, size_t n)
{
    const char *c = p;

    while (n > 0) {
        ssize_t w = write(fd, c, n);

        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

long ms__read_full(int fd, void *p, size_t n)
{
    char *c = p;
    size_t got = 0;

    while (got < n) {
        ssize_t r = read(fd, c + got, n - got);

        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -1;
        if (r == 0)
            break;
        got += (size_t)r;
    }
    return (long)got;
}
