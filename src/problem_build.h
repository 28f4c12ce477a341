/* problem_build.h: the step's contact problem from the world (problem.c). */
#ifndef CD_PROBLEM_BUILD_H
#define CD_PROBLEM_BUILD_H

#include "world.h"

/* w->cp from w->contacts and the bodies' state: the free velocity v_f = v + dt M^-1 (m g,
 * -w x I w), the Jacobian blocks, g = J v_f + phi/dt, mu, the effective normal masses, and
 * lambda from each contact's carried impulse (the warm start); G is left pending
 * (cd_contactProblemDelassus). CD_OK, CD_ERR_NOMEM, or CD_ERR_LIMIT when G would exceed
 * CD_WORLD_MAX_DELASSUS_BLOCKS (world.h) */
int cd_problemBuild(const cdScene *scene, cdWorld *w, double dt);
/* v+ = v_f + M^-1 J^T lambda into w->v, and each contact's lambda from the solution */
int cd_problemApply(cdWorld *w);

#endif
