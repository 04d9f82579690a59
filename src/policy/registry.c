/* registry.c - every policy, in a fixed order, and the option defaults. */
#include "policy/policy_int.h"

#include <math.h>
#include <stddef.h>
#include <strings.h>

extern const ms_policy_ops_t ms_policy_fa;
extern const ms_policy_ops_t ms_policy_fa_plus;
extern const ms_policy_ops_t ms_policy_static;
extern const ms_policy_ops_t ms_policy_first_fit;
extern const ms_policy_ops_t ms_policy_best_fit;
extern const ms_policy_ops_t ms_policy_mfi;
extern const ms_policy_ops_t ms_policy_fgd;
extern const ms_policy_ops_t ms_policy_node_profile;
extern const ms_policy_ops_t ms_policy_timeslice;

static const ms_policy_ops_t *const registry[] = {
    &ms_policy_fa,
    &ms_policy_fa_plus,
    &ms_policy_static,
    &ms_policy_first_fit,
    &ms_policy_best_fit,
    &ms_policy_mfi,
    &ms_policy_fgd,
    &ms_policy_node_profile,
    &ms_policy_timeslice,
};

const ms_policy_ops_t *const *ms_policies(int *n)
{
    if (n != NULL)
        *n = (int)(sizeof(registry) / sizeof(registry[0]));
    return registry;
}

const ms_policy_ops_t *ms_policy_find(const char *name)
{
    size_t i;

    if (name == NULL)
        return NULL;
    for (i = 0; i < sizeof(registry) / sizeof(registry[0]); i++)
        if (strcasecmp(registry[i]->name, name) == 0)
            return registry[i];
    return NULL;
}

void ms_policy_cfg_defaults(ms_policy_cfg_t *cfg)
{
    cfg->lb_threshold = 0.4;
    cfg->balance = true;
    cfg->dynamic = true;
    cfg->migration = true;
    cfg->max_moves = 4;
    cfg->frag.weights = NULL;
    cfg->frag.all_profiles = false;
    cfg->static_layout = NULL;
    cfg->demand_window = 256;
    cfg->hysteresis_s = 300.0;
    cfg->replicas = 4;
    cfg->seed = 0;
    cfg->migrate_cost_s = 10.0;
    cfg->interference_beta = 0.05;
    cfg->room_queue_max = 32;
    cfg->pass_bound_s = INFINITY;
}
