/* penalty.h: the penalty backend (--model penalty), seed 002's compliant contact applied
 * to every contact point; and the per-contact pieces it is built from, for the tests. */
#ifndef CD_PENALTY_H
#define CD_PENALTY_H

#include "backend.h"
#include "contact.h"
#include "scene.h"

struct cdWorld;

/* the backend table (kind CD_BACKEND_FORCE); solver names accepted: NULL or "explicit" */
extern const cdBackend cd_backendPenalty;

/* most substeps one step may take; a step that would need more takes this many */
#define CD_PENALTY_MAX_SUBSTEPS 1000000

/* inverse effective mass of body i (>= 0, moving) at point p along the unit direction d:
 * 1/m + (r x d)^T I^-1 (r x d), r = p - x_i; 0 for the ground and fixed bodies */
double cd_penaltyInverseMass(const cdScene *scene, const struct cdWorld *w, int i, const double p[3],
                             const double d[3]);

/* the automatic substep h (s) for the contacts cs of the world w and a step of dt (see
 * penalty.c for the bound); scratch holds nbody + 2 ncon doubles; INFINITY when nothing
 * bounds it */
double cd_penaltyStableStep(const cdScene *scene, const struct cdWorld *w, const cdContactSet *cs, double dt,
                            double *scratch);

#endif
