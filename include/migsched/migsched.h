/* migsched.h - the whole scheduling core in one include.
 *
 * The scheduling core: MIG geometry, FragCost, clusters, plans, policies,
 * the scheduler object and the simulator. Research tooling (FGD's own
 * whole-GPU model, the Alibaba importer, experiments, the zoo, reports,
 * SVG) has its own headers and is not pulled in here: include fgd.h,
 * alibaba.h, experiment.h, zoo.h, report.h or svg.h where you use them. */
#ifndef MIGSCHED_MIGSCHED_H
#define MIGSCHED_MIGSCHED_H

#include "migsched/version.h"
#include "migsched/status.h"
#include "migsched/geometry.h"
#include "migsched/frag.h"
#include "migsched/cluster.h"
#include "migsched/plan.h"
#include "migsched/rank.h"
#include "migsched/job.h"
#include "migsched/policy.h"
#include "migsched/sched.h"
#include "migsched/trace.h"
#include "migsched/sim.h"
#include "migsched/schedule.h"
#include "migsched/check.h"

#endif
