/* backend.h: the one small interface every contact model sits behind.
 *
 * The core calls a backend only through this table; solvers/backends.c lists them and
 * the run loop picks one by name. Two kinds:
 *  - impulse backends (lcp, ccp): each step the core builds the contact problem
 *    (problem.h) and the backend solves it for the impulses lambda;
 *  - force backends (penalty): each substep the core updates the contacts (collided once a
 *    step, contact_cache.h), the backend adds the contact forces and torques to
 *    world->force, and the core integrates.
 */
#ifndef CD_BACKEND_H
#define CD_BACKEND_H

#include <stddef.h>

#include "contact.h"
#include "problem.h"
#include "scene.h"

struct cdWorld;

typedef enum { CD_BACKEND_IMPULSE = 0, CD_BACKEND_FORCE = 1 } cdBackendKind;

typedef struct cdBackendOptions {
  const char *solver;  /* backend-specific solver name, or NULL for the default */
  double tolerance;    /* stopping tolerance of iterative solvers (0: the backend's default) */
  int max_iterations;  /* (0: the backend's default) */
  int friction_dirs;   /* LCP: m polyhedral directions (even, >= 4) */
  int substeps;        /* penalty: forced substep count (0: automatic) */
} cdBackendOptions;

/* what a step's solve did. iterations means one documented thing per solver (its file says
 * which); the work it does not count is in factorizations and products, so that no figure
 * hides work */
typedef struct cdSolveStats {
  int iterations;  /* solver iterations (pivots for Lemke) this step */
  double residual; /* how far from the model's complementarity conditions (see each backend) */
  int converged;   /* 1 when the stopping rule was met */
  int substeps;    /* force backends: substeps taken this step */
  int fallbacks;   /* times a solver fell back to another this step */
  int cholmod_warnings; /* CHOLMOD calls of the step that returned a warning (status > 0) */
  int factorizations;   /* sparse matrix factorizations (numeric) of the step */
  int products;         /* products with G (or J, J^T pairs) not counted in iterations */
} cdSolveStats;

/* return codes shared by the core and the backends */
enum {
  CD_OK = 0,
  CD_ERR_NOMEM = -1,   /* an allocation failed */
  CD_ERR_NUMERIC = -2, /* a numerical breakdown the backend could not recover from */
  CD_ERR_USAGE = -3,   /* bad option (unknown solver name, ...) */
  CD_ERR_LIMIT = -4    /* the step exceeds a size or work limit (world.h): a degenerate scene */
};

typedef struct cdBackend {
  const char *name;    /* "lcp", "ccp", "penalty" */
  cdBackendKind kind;
  /* checks the options and makes the backend's state; on a bad option writes one line to
   * err and returns CD_ERR_USAGE */
  int (*make)(const cdScene *scene, const cdBackendOptions *opt, void **state, char *err, size_t errlen);
  /* the solver in use, for the output's "solver" attribute (e.g. "lemke+bgs") */
  const char *(*solverName)(const void *state);
  /* impulse: solve p for p->lambda (warm start in it); may also fill each contact's beta
   * and the set's alpha rows. contacts->con[i] is the contact of block i. */
  int (*solve)(void *state, cdContactProblem *p, cdContactSet *contacts, cdSolveStats *stats);
  /* force: the number of substeps for a step of dt (>= 1; or CD_ERR_NOMEM), from contacts:
   * those the step starts from, at the present poses within the margin of the whole step
   * (its Verlet list, contact_cache.h), with the carried state */
  int (*substeps)(void *state, const cdScene *scene, const struct cdWorld *world, const cdContactSet *contacts,
                  double dt);
  /* force: for the substep's contacts contacts->con[live[k]], k < nlive (their present
   * geometry and gap), add the forces and torques to world->force, add force * h to each
   * one's lambda (the impulse over the step, in its frame) and update its state for a
   * substep of length h */
  int (*forces)(void *state, const cdScene *scene, struct cdWorld *world, cdContactSet *contacts, const int *live,
                int nlive, double h, cdSolveStats *stats);
  /* force: after the step's last substep (the contacts' impulses summed over the step, their
   * post-step velocities set): what of the stats needs the step's end, the residual */
  int (*finish)(void *state, const cdScene *scene, const struct cdWorld *world, const cdContactSet *contacts,
                double dt, cdSolveStats *stats);
  void (*free)(void *state);
} cdBackend;

#endif
