/* fake_agent.c - a migsched-agent that misbehaves (fake_agent.h): one
 * thread, poll(2) over its listening socket, its connections and a pipe
 * that wakes it. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "service/fake_agent.h"

#define MAXC 64

typedef struct conn {
    int fd;
    char buf[8192];
    size_t n;
    bool held;
} conn_t;

struct fake_agent {
    fake_agent_mode_t mode;
    int ngpus;
    int lfd, wake[2];
    char url[64];
    pthread_t th;
    pthread_mutex_t mu;            /* the counters and the flags below */
    int posts, gets, nheld;
    bool release, stop;
    conn_t c[MAXC];
};

static void conn_close(fake_agent_t *a, conn_t *c)
{
    if (c->held) {
        pthread_mutex_lock(&a->mu);
        a->nheld--;
        pthread_mutex_unlock(&a->mu);
    }
    close(c->fd);
    c->fd = -1;
    c->n = 0;
    c->held = false;
}

static void answer_inventory(fake_agent_t *a, conn_t *c)
{
    char body[2048], head[256];
    size_t n = 0;
    int g, k;

    n += (size_t)snprintf(body + n, sizeof(body) - n, "{\"node\":\"fake\",\"gpus\":[");
    for (g = 0; g < a->ngpus; g++)
        n += (size_t)snprintf(body + n, sizeof(body) - n,
                              "%s{\"index\":%d,\"model\":\"A100-40GB\",\"uuid\":\"GPU-fa4e0000-0000-4000-8000-%012d\"}",
                              g > 0 ? "," : "", g, g);
    n += (size_t)snprintf(body + n, sizeof(body) - n, "],\"instances\":[]}");
    k = snprintf(head, sizeof(head), "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n\r\n", n);
    if (write(c->fd, head, (size_t)k) < 0 || write(c->fd, body, n) < 0)
        return;
}

/* A whole request is in c->buf (headers and Content-Length bytes)? */
static bool whole(const conn_t *c)
{
    const char *end = strstr(c->buf, "\r\n\r\n"), *cl;
    long len = 0;

    if (end == NULL)
        return false;
    if ((cl = strstr(c->buf, "Content-Length:")) != NULL || (cl = strstr(c->buf, "content-length:")) != NULL)
        len = strtol(cl + 15, NULL, 10);
    return (size_t)(end + 4 - c->buf) + (size_t)len <= c->n;
}

static void on_request(fake_agent_t *a, conn_t *c)
{
    bool post = strncmp(c->buf, "POST", 4) == 0, release;

    pthread_mutex_lock(&a->mu);
    if (post)
        a->posts++;
    else
        a->gets++;
    release = a->release;
    pthread_mutex_unlock(&a->mu);
    if (!post) {
        answer_inventory(a, c);
        c->n = 0;   /* keep-alive: the next request */
        c->buf[0] = '\0';
        return;
    }
    if (a->mode == FAKE_AGENT_HANG && !release) {
        c->held = true;
        pthread_mutex_lock(&a->mu);
        a->nheld++;
        pthread_mutex_unlock(&a->mu);
    } else
        conn_close(a, c);
}

static void *serve(void *arg)
{
    fake_agent_t *a = arg;

    for (;;) {
        struct pollfd p[MAXC + 2];
        int np = 0, i, map[MAXC + 2];
        bool stop, release;

        pthread_mutex_lock(&a->mu);
        stop = a->stop;
        release = a->release;
        pthread_mutex_unlock(&a->mu);
        if (stop)
            break;
        for (i = 0; i < MAXC; i++)
            if (a->c[i].fd >= 0 && a->c[i].held && release)
                conn_close(a, &a->c[i]);
        p[np].fd = a->lfd;
        p[np].events = POLLIN;
        map[np++] = -1;
        p[np].fd = a->wake[0];
        p[np].events = POLLIN;
        map[np++] = -2;
        for (i = 0; i < MAXC; i++)
            if (a->c[i].fd >= 0) {
                p[np].fd = a->c[i].fd;
                p[np].events = POLLIN;
                map[np++] = i;
            }
        if (poll(p, (nfds_t)np, -1) < 0)
            continue;
        for (i = 0; i < np; i++) {
            if (!(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            if (map[i] == -1) {
                int fd = accept(a->lfd, NULL, NULL), k;

                for (k = 0; fd >= 0 && k < MAXC && a->c[k].fd >= 0; k++)
                    ;
                if (fd >= 0 && k == MAXC)
                    close(fd);
                else if (fd >= 0)
                    a->c[k].fd = fd;
            } else if (map[i] == -2) {
                char x[16];

                if (read(a->wake[0], x, sizeof(x)) < 0)
                    continue;
            } else {
                conn_t *c = &a->c[map[i]];
                ssize_t r = read(c->fd, c->buf + c->n, sizeof(c->buf) - 1 - c->n);

                if (r <= 0) {
                    conn_close(a, c);
                    continue;
                }
                if (c->held)
                    continue;   /* whatever more it sends, no answer */
                c->n += (size_t)r;
                c->buf[c->n] = '\0';
                if (whole(c))
                    on_request(a, c);
            }
        }
    }
    return NULL;
}

static void kick(fake_agent_t *a)
{
    if (write(a->wake[1], "x", 1) < 0)
        return;
}

fake_agent_t *fake_agent_start(fake_agent_mode_t mode, int ngpus)
{
    fake_agent_t *a = calloc(1, sizeof(*a));
    struct sockaddr_in sa;
    socklen_t sl = sizeof(sa);
    int i;

    if (a == NULL)
        abort();
    a->mode = mode;
    a->ngpus = ngpus;
    for (i = 0; i < MAXC; i++)
        a->c[i].fd = -1;
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if ((a->lfd = socket(AF_INET, SOCK_STREAM, 0)) < 0 || bind(a->lfd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
        listen(a->lfd, 16) != 0 || getsockname(a->lfd, (struct sockaddr *)&sa, &sl) != 0 || pipe(a->wake) != 0)
        abort();
    snprintf(a->url, sizeof(a->url), "http://127.0.0.1:%d", (int)ntohs(sa.sin_port));
    pthread_mutex_init(&a->mu, NULL);
    if (pthread_create(&a->th, NULL, serve, a) != 0)
        abort();
    return a;
}

const char *fake_agent_url(const fake_agent_t *a)
{
    return a->url;
}

static int counter(fake_agent_t *a, const int *v)
{
    int n;

    pthread_mutex_lock(&a->mu);
    n = *v;
    pthread_mutex_unlock(&a->mu);
    return n;
}

int fake_agent_posts(fake_agent_t *a)
{
    return counter(a, &a->posts);
}

int fake_agent_gets(fake_agent_t *a)
{
    return counter(a, &a->gets);
}

int fake_agent_held(fake_agent_t *a)
{
    return counter(a, &a->nheld);
}

void fake_agent_release(fake_agent_t *a)
{
    pthread_mutex_lock(&a->mu);
    a->release = true;
    pthread_mutex_unlock(&a->mu);
    kick(a);
}

void fake_agent_stop(fake_agent_t *a)
{
    int i;

    pthread_mutex_lock(&a->mu);
    a->stop = true;
    pthread_mutex_unlock(&a->mu);
    kick(a);
    pthread_join(a->th, NULL);
    for (i = 0; i < MAXC; i++)
        if (a->c[i].fd >= 0)
            close(a->c[i].fd);
    close(a->lfd);
    close(a->wake[0]);
    close(a->wake[1]);
    pthread_mutex_destroy(&a->mu);
    free(a);
}
