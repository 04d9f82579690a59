/* floor.c - the floor under scripts/bench-api-wrk.sh's latencies: a
 * one-thread epoll HTTP/1.1 server that answers every request on a
 * keep-alive connection with the same canned job JSON, the size of a
 * GET /v1/jobs/{id} answer, and does nothing else. What wrk measures
 * against it at a rate is what the machine, the kernel's loopback and wrk
 * itself cost at that rate on these cores; the daemon's figures beside it
 * say what the daemon adds. Not part of migsched: built by the script with
 * the system's cc (FLOOR=1), run on a port given as its only argument.
 * It assumes what wrk sends: one small request at a time per connection. */
#define _GNU_SOURCE
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#define BODY                                                                                        \
    "{\"id\":\"w0-2\",\"state\":\"running\",\"submitted_at\":1764612345.1234560,"                    \
    "\"started_at\":1764612345.1334560,\"ended_at\":null,\"request\":{\"duration_s\":60.0,"          \
    "\"estimate_s\":0.0,\"gang\":1,\"isolation\":\"any\",\"labels\":{},\"mem_gb\":null,"             \
    "\"migratable\":false,\"model\":null,\"priority\":0,\"profile\":\"1g.5gb\"},\"labels\":{},"      \
    "\"placement\":{\"node\":\"a\",\"gpu\":0,\"start\":0,\"profile\":\"1g.5gb\",\"gpus\":1,"         \
    "\"gpu_uuid\":\"GPU-00000000-0000-4000-8000-000000000000\"}}"

int main(int argc, char **argv)
{
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    struct epoll_event ev = { .events = EPOLLIN }, evs[128];
    char reply[1024];
    int ls, ep, one = 1, nreply;

    if (argc != 2 || atoi(argv[1]) <= 0 || atoi(argv[1]) > 65535) {
        fprintf(stderr, "usage: %s PORT\n", argv[0]);
        return 2;
    }
    nreply = snprintf(reply, sizeof(reply),
                      "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s",
                      strlen(BODY), BODY);
    a.sin_port = htons((uint16_t)atoi(argv[1]));
    if ((ls = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0)) < 0 ||
        setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
        bind(ls, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(ls, 1024) != 0 ||
        (ep = epoll_create1(0)) < 0) {
        perror("floor");
        return 1;
    }
    ev.data.fd = ls;
    if (epoll_ctl(ep, EPOLL_CTL_ADD, ls, &ev) != 0) {
        perror("floor");
        return 1;
    }
    for (;;) {
        int n = epoll_wait(ep, evs, 128, -1), i;

        for (i = 0; i < n; i++) {
            int fd = evs[i].data.fd, c;
            char buf[8192];
            ssize_t k;

            if (fd == ls) {
                while ((c = accept4(ls, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
                    struct epoll_event ce = { .events = EPOLLIN, .data.fd = c };

                    (void)setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
                    if (epoll_ctl(ep, EPOLL_CTL_ADD, c, &ce) != 0)
                        close(c);
                }
                continue;
            }
            if ((k = read(fd, buf, sizeof(buf))) <= 0 || write(fd, reply, (size_t)nreply) != nreply)
                close(fd);
        }
    }
}
