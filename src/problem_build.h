/* problem_build.h: the step's contact problem from the world (problem.c). */
#ifndef CD_PROBLEM_BUILD_H
#define CD_PROBLEM_BUILD_H

#include <cholmod.h>

#include "world.h"

/* the sparse matrices of one step, freed by cd_problemWorkFree */
typedef struct cdProblemWork {
  cholmod_sparse *Jt; /* (ndof x 3 ncon) J^T */
  cholmod_sparse *J;  /* (3 ncon x ndof) */
  cholmod_sparse *W;  /* (ndof x 3 ncon) M^-1 J^T */
} cdProblemWork;

/* the friction coefficient of a contact (materials mixed, scene.h) */
double cd_contactFriction(const cdScene *scene, const cdContact *c);

/* w->vf = v + dt M^-1 (gravity, gyroscopic torque) */
int cd_problemFreeVelocity(const cdScene *scene, cdWorld *w, double dt);
/* w->cp from w->contacts and w->vf: G = J M^-1 J^T, g, mu, and lambda from each contact's
 * carried impulse (the warm start) */
int cd_problemBuild(const cdScene *scene, cdWorld *w, double dt, cdProblemWork *pw);
/* v+ = v_f + M^-1 J^T lambda into w->v, and each contact's lambda from the solution */
int cd_problemApply(cdWorld *w, cdProblemWork *pw);
void cd_problemWorkFree(cdWorld *w, cdProblemWork *pw);

#endif
