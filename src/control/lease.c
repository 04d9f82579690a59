/* lease.c - leader election decisions (include/migsched/lease.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "migsched/lease.h"

struct ms_lease {
    ms_lease_cfg_t cfg;
    char id[MS_LEASE_ID_MAX + 1];
    ms_lease_record_t seen;          /* the record as last observed */
    bool have_seen;
    double seen_at;                  /* monotonic: when it last changed */
    bool pending_mine;               /* the write in flight makes us the holder */
    ms_lease_record_t pending;       /* that write */
    double pending_at;
    bool holding;                    /* our last write succeeded */
    double renewed_at;               /* monotonic: when that write was sent */
};

void ms_lease_cfg_defaults(ms_lease_cfg_t *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->duration_s = 10;
    cfg->renew_deadline_s = 7;
    cfg->retry_s = 2;
}

ms_status_t ms_lease_create(const ms_lease_cfg_t *cfg, ms_lease_t **out, ms_diag_t *diag)
{
    ms_lease_t *l;
    size_t n;

    *out = NULL;
    n = cfg->identity ? strlen(cfg->identity) : 0;
    if (n < 1 || n > MS_LEASE_ID_MAX) {
        ms_diag_set(diag, NULL, 0, "identity", "must be 1..%d characters", MS_LEASE_ID_MAX);
        return MS_EINVAL;
    }
    if (!isfinite(cfg->duration_s) || !isfinite(cfg->renew_deadline_s) || !isfinite(cfg->retry_s) ||
        cfg->retry_s <= 0 || cfg->renew_deadline_s <= cfg->retry_s ||
        cfg->duration_s <= cfg->renew_deadline_s || cfg->duration_s > 3600) {
        ms_diag_set(diag, NULL, 0, "duration_s",
                    "need 0 < retry_s < renew_deadline_s < duration_s <= 3600");
        return MS_ERANGE;
    }
    l = calloc(1, sizeof(*l));
    if (!l)
        return MS_ENOMEM;
    l->cfg = *cfg;
    memcpy(l->id, cfg->identity, n + 1);
    l->cfg.identity = l->id;
    *out = l;
    return MS_OK;
}

void ms_lease_destroy(ms_lease_t *l)
{
    free(l);
}

static bool same_record(const ms_lease_record_t *a, const ms_lease_record_t *b)
{
    return a->exists == b->exists && strcmp(a->holder, b->holder) == 0 &&
           a->renew_t == b->renew_t && a->acquire_t == b->acquire_t &&
           a->transitions == b->transitions && a->duration_s == b->duration_s;
}

static void mine(const ms_lease_t *l, ms_lease_record_t *w, double wall_now)
{
    size_t n = strlen(l->id);

    memcpy(w->holder, l->id, n + 1);
    w->exists = true;
    w->duration_s = l->cfg.duration_s;
    w->renew_t = wall_now;
}

ms_lease_do_t ms_lease_decide(ms_lease_t *l, const ms_lease_record_t *seen, double mono_now,
                              double wall_now, ms_lease_record_t *write)
{
    ms_lease_record_t s = *seen;
    double dur;

    s.holder[MS_LEASE_ID_MAX] = '\0';             /* whatever the caller filled */
    memset(write, 0, sizeof(*write));
    l->pending_mine = false;
    if (!l->have_seen || !same_record(&s, &l->seen)) {
        l->seen = s;
        l->seen_at = mono_now;
        l->have_seen = true;
    }
    if (!s.exists) {
        l->holding = false;
        mine(l, write, wall_now);
        write->acquire_t = wall_now;
        write->transitions = 0;
        l->pending_mine = true;
        l->pending = *write;
        l->pending_at = mono_now;
        return MS_LEASE_CREATE;
    }
    if (strcmp(s.holder, l->id) == 0) {           /* ours: renew */
        *write = s;
        mine(l, write, wall_now);
        l->pending_mine = true;
        l->pending = *write;
        l->pending_at = mono_now;
        return MS_LEASE_UPDATE;
    }
    l->holding = false;                           /* someone else's, or released */
    dur = isfinite(s.duration_s) && s.duration_s > 0 ? s.duration_s : l->cfg.duration_s;
    if (s.holder[0] && mono_now - l->seen_at < dur)
        return MS_LEASE_WAIT;
    *write = s;
    mine(l, write, wall_now);
    write->acquire_t = wall_now;
    write->transitions = s.transitions + 1;
    l->pending_mine = true;
    l->pending = *write;
    l->pending_at = mono_now;
    return MS_LEASE_UPDATE;
}

void ms_lease_written(ms_lease_t *l, bool ok, double mono_now)
{
    if (!l->pending_mine)
        return;
    l->pending_mine = false;
    if (ok) {
        l->holding = true;
        l->renewed_at = l->pending_at;
        l->seen = l->pending;            /* what the API server now holds */
        l->seen_at = mono_now;
        l->have_seen = true;
    }
    /* A failed renewal keeps `holding`: the leadership ends by itself when
     * renew_deadline_s passes without a successful one. */
}

bool ms_lease_is_leader(const ms_lease_t *l, double mono_now)
{
    return l->holding && mono_now - l->renewed_at < l->cfg.renew_deadline_s;
}

double ms_lease_leader_until(const ms_lease_t *l)
{
    return l->holding ? l->renewed_at + l->cfg.renew_deadline_s : 0;
}

bool ms_lease_release(ms_lease_t *l, double wall_now, ms_lease_record_t *write)
{
    memset(write, 0, sizeof(*write));
    if (!l->holding)
        return false;
    *write = l->seen;
    write->exists = true;
    write->holder[0] = '\0';
    write->duration_s = 1;
    write->renew_t = wall_now;
    l->holding = false;
    return true;
}
