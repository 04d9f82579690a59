/* agent_int.h - private to src/backend/agent.c and agent_http.c: one HTTP
 * exchange with a node's migsched-agent. */
#ifndef MIGSCHED_BACKEND_AGENT_INT_H
#define MIGSCHED_BACKEND_AGENT_INT_H

#include <jansson.h>
#include <stdbool.h>

#include "backend/backend.h"

#define MS__AGENT_MAX_REPLY (16L << 20)   /* an agent's answer is small; refuse a runaway */
#define MS__AGENT_TIMEOUT_S 60.0          /* a real MIG create takes seconds, not minutes */

/* METHOD base_url + path with body (NULL none) and the Authorization header
 * auth (NULL none), within timeout_s seconds (connecting within 5 s of
 * them). Returns the HTTP status (0: no answer, why says why, with the
 * field "unreachable"); *reply receives the parsed JSON body (NULL if none
 * or not JSON); *sent (may be NULL) whether any of the request went out, so
 * that a caller knows an unanswered request may have been acted on. Holds
 * no lock: any thread, any number at once. */
long ms__agent_call(const char *base_url, const char *auth, const char *method, const char *path,
                    json_t *body, double timeout_s, json_t **reply, bool *sent, ms_diag_t *why);

#endif
