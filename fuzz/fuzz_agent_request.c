/* fuzz_agent_request.c - migsched-agent's request bodies (src/agent/req.c):
 * any body is accepted or refused with a 400 that names a reason; an
 * accepted body has every field in its range, and written back as JSON it
 * parses to the same request (what the agent acts on is what was sent). The
 * first byte picks the parser ('o' the op parser, anything else create),
 * the rest is the body. */
#include "fuzz.h"

#include <jansson.h>

#include "agent/agent.h"
#include "migsched/plan.h"

static void check_err(const ag_err_t *e)
{
    if (e->code != 400 || e->reason[0] == '\0' || e->msg[0] == '\0')
        abort();
}

static void fuzz_create(const char *b, size_t n)
{
    ag_create_t rq, rq2;
    ag_err_t e;
    json_t *o;
    char *s;

    memset(&e, 0, sizeof(e));
    if (ag_parse_create(b, n, &rq, &e) != 0) {
        check_err(&e);
        return;
    }
    if (rq.gpu < 0 || rq.gpu > 255 || rq.start < 0 || rq.start > 15 || rq.profile[0] == '\0' ||
        !ag_job_valid(rq.job))
        abort();
    o = json_pack("{s:i,s:s,s:i,s:s}", "gpu", rq.gpu, "profile", rq.profile, "start", rq.start, "job", rq.job);
    if (o == NULL || (s = json_dumps(o, JSON_COMPACT)) == NULL)
        abort();
    if (ag_parse_create(s, strlen(s), &rq2, &e) != 0 || memcmp(&rq, &rq2, sizeof(rq)) != 0)
        abort();
    free(s);
    json_decref(o);
}

static void fuzz_op(const char *b, size_t n)
{
    static const char *const NAMES[] = { "", "create", "destroy", "start", "move", "stop", "reap" };
    ag_op_t rq, rq2;
    ag_err_t e;
    json_t *o;
    char *s;

    memset(&e, 0, sizeof(e));
    if (ag_parse_op(b, n, &rq, &e) != 0) {
        check_err(&e);
        return;
    }
    if (rq.kind < MS_OP_CREATE || rq.kind > AG_OP_REAP || rq.gpu < 0 || rq.gpu > 255 || rq.start < -1 ||
        rq.start > 15 || !ag_job_valid(rq.job) || (rq.kind == MS_OP_CREATE && rq.start < 0) ||
        (rq.kind == MS_OP_MOVE && (rq.from_gpu < 0 || rq.from_start < -1)))
        abort();
    o = json_pack("{s:s,s:i,s:i,s:s,s:s,s:b}", "op", NAMES[rq.kind], "gpu", rq.gpu, "start", rq.start, "profile",
                  rq.profile, "job", rq.job, "bbm", rq.bbm);
    if (o != NULL && rq.kind == MS_OP_MOVE) {
        json_object_set_new(o, "from_gpu", json_integer(rq.from_gpu));
        json_object_set_new(o, "from_start", json_integer(rq.from_start));
    }
    if (o == NULL || (s = json_dumps(o, JSON_COMPACT)) == NULL)
        abort();
    if (ag_parse_op(s, strlen(s), &rq2, &e) != 0 || memcmp(&rq, &rq2, sizeof(rq)) != 0)
        abort();
    free(s);
    json_decref(o);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    if (data[0] == 'o')
        fuzz_op((const char *)data + 1, size - 1);
    else
        fuzz_create((const char *)data + 1, size - 1);
    return 0;
}
