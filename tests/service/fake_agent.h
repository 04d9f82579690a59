/* fake_agent.h - a migsched-agent that misbehaves, on loopback, for the
 * executor's and the agent backend's fault tests (fake_agent.c): it
 * answers GET /v1/inventory with a fixed node of A100-40GB GPUs and no
 * instance (so the agent backend opens), and a POST /v1/ops as its mode
 * says: hang (read it, never answer, until released) or drop (read it,
 * close the connection without an answer). It counts what it got. A real
 * socket, so libcurl's deadlines and connection errors are the real ones. */
#ifndef MIGSCHED_TESTS_FAKE_AGENT_H
#define MIGSCHED_TESTS_FAKE_AGENT_H

typedef enum { FAKE_AGENT_HANG, FAKE_AGENT_DROP } fake_agent_mode_t;

typedef struct fake_agent fake_agent_t;

/* A fake agent of ngpus GPUs on 127.0.0.1 (an ephemeral port); asserts. */
fake_agent_t *fake_agent_start(fake_agent_mode_t mode, int ngpus);
/* "http://127.0.0.1:PORT" */
const char *fake_agent_url(const fake_agent_t *a);
/* Requests received so far. */
int fake_agent_posts(fake_agent_t *a);
int fake_agent_gets(fake_agent_t *a);
/* POSTs it holds unanswered right now. */
int fake_agent_held(fake_agent_t *a);
/* Close every held connection (their callers see the connection end),
 * and hold no more: later POSTs are dropped. */
void fake_agent_release(fake_agent_t *a);
void fake_agent_stop(fake_agent_t *a);

#endif
