/* world.h: the mutable state of a run and the step pipeline.
 *
 * The generalized velocity has 6 entries per moving body (linear then angular, both in
 * world coordinates); fixed bodies have no degrees of freedom (dof[i] = -1). M is block
 * diagonal (m I3, and the world inertia R I_body R^T); its inverse is kept per body in
 * closed form (Iinv, updated as each body turns), the one representation of M^-1 (problem.c).
 */
#ifndef CD_WORLD_H
#define CD_WORLD_H

#include "backend.h"
#include "collide.h"
#include "contact.h"
#include "scene.h"
#include "vec3.h"

typedef struct cdWorld {
  int nbody;
  int ndof;        /* 6 x (moving bodies) */
  int *dof;        /* (nbody) first dof of each body, -1 when fixed */
  long step;       /* steps taken */
  double time;     /* simulated time, s */
  double *x;       /* (nbody x 3) centre of mass, world, m */
  double *q;       /* (nbody x 4) unit quaternion (w, x, y, z), body to world */
  double *v;       /* (nbody x 6) linear (m/s), angular (rad/s), world */
  double *R;       /* (nbody x 9) rotation matrices of q, row-major */
  double *Iinv;    /* (nbody x 9) inverse world inertia, 1/(kg m^2); zero when fixed */
  double *force;   /* (nbody x 6) force (N) and torque (N m) accumulated by a force backend */
  unsigned char *round; /* (nbody) CD_WORLD_ISOTROPIC: the principal moments are equal
                           (I_world = I whatever R); CD_WORLD_BALL: also a sphere, whose R no
                           narrow phase reads (the force models update it once a step) */
  cdContactSet contacts;  /* contacts of the current step, sorted by key */
  cdContactSet previous;  /* those of the step before (warm start, penalty state) */
  cdCollider *collider;
  cdContactProblem cp;    /* contact problem of the step (impulse backends) */
  double *impulse;        /* (ndof) scratch: J^T lambda per moving body */
  int nmat_table;         /* materials of the friction table (0: no table) */
  double *mu_table;       /* (nmat_table^2) mixed friction of every pair of materials */
  /* where a run's time goes, s, added up over the steps (the summary's stage times) */
  double time_collide;    /* collision: broad and narrow phase, sorting, warm-start carry */
  double time_build;      /* the contact problem (J, v_f, g, and G where a solver asks for it) */
  double time_solve;      /* the backend: impulse solve, or the force evaluations */
  /* counters of numerical trouble over the run (recorded in the output) */
  long warn_cholmod;      /* CHOLMOD warnings (status > 0) reported by the solvers */
  long warn_nonconverged; /* steps whose solver did not meet its stopping rule */
  long warn_fallback;     /* solver fallbacks */
} cdWorld;

enum { CD_WORLD_ISOTROPIC = 1, CD_WORLD_BALL = 2 };

/* makes the world in the scene's initial state; NULL when memory runs out or CHOLMOD fails */
cdWorld *cd_worldMake(const cdScene *scene);
void cd_worldFree(cdWorld *w);

/* one time step of length dt through the pipeline (step.c): collide, build, solve,
 * integrate. Returns CD_OK, CD_ERR_NOMEM, CD_ERR_NUMERIC or CD_ERR_LIMIT: bodies deep
 * inside each other make every contact of a body touch every other, and the work grows
 * with the square of the bodies at one place; a step is refused (CD_ERR_LIMIT) rather than
 * run out of memory or stall when
 *   - impulse models: the Delassus operator G would exceed CD_WORLD_MAX_DELASSUS_BLOCKS
 *     3x3 blocks (bounded by sum over moving bodies of contacts^2; ~80 bytes a block), or
 *   - force models: the step's substeps x (CD_WORLD_FORCE_WORK_SUBSTEP
 *     + CD_WORLD_FORCE_WORK_BODY x bodies + contacts) would exceed CD_WORLD_MAX_FORCE_WORK:
 *     a unit is about the 30 ns one contact costs a substep (measured: a substep costs ~3 us,
 *     plus ~1 us a body for the collision, plus ~30 ns a contact), so a step is held to
 *     about 30 s on one core.
 * The contact set also holds at most CD_CONTACT_MAX contacts (contact.h; then CD_ERR_NOMEM). */
#define CD_WORLD_MAX_DELASSUS_BLOCKS 2000000.0
#define CD_WORLD_MAX_FORCE_WORK 1e9
#define CD_WORLD_FORCE_WORK_SUBSTEP 100.0
#define CD_WORLD_FORCE_WORK_BODY 30.0
int cd_worldStep(const cdScene *scene, cdWorld *w, const cdBackend *backend, void *bstate, double dt,
                 cdSolveStats *stats);

/* force models: the substeps the next cd_worldStep would take (>= 1), or -1 when memory
 * runs out; changes nothing the step depends on */
int cd_worldForceSubsteps(const cdScene *scene, cdWorld *w, const cdBackend *backend, void *bstate, double dt);

/* the mixed friction coefficient of a contact between bodies a and b (-1: the ground) */
double cd_worldFriction(const cdScene *scene, const cdWorld *w, int a, int b);
/* recomputes body i's inverse world inertia from its rotation */
void cd_worldUpdateInertia(const cdScene *scene, cdWorld *w, int i);

/* velocity of the material point of body i at lever arm r (p - x_i), world, m/s: v_i + w_i x r
 * (inline: the force models call it per contact per substep) */
static inline void cd_worldPointVelocity(const cdWorld *w, int i, const double r[3], double out[3]) {
  const double *v = &w->v[6 * (size_t)i];
  double wr[3];
  cd_v3cross(wr, &v[3], r);
  cd_v3add(out, v, wr);
}

/* velocity of b relative to a at contact c's point, world, m/s:
 * v_b + w_b x (p - x_b) - (v_a + w_a x (p - x_a)); the ground (-1) is at rest */
static inline void cd_worldContactVelocity(const cdWorld *w, const cdContact *c, double vrel[3]) {
  double vp[2][3] = {{0, 0, 0}, {0, 0, 0}}, r[3];
  for (int s = 0; s < 2; s++) {
    if (c->body[s] < 0) continue;
    cd_v3sub(r, c->point, &w->x[3 * c->body[s]]);
    cd_worldPointVelocity(w, c->body[s], r, vp[s]);
  }
  cd_v3sub(vrel, vp[1], vp[0]);
}

/* index of the first body with a non-finite position, orientation or velocity, or -1 */
int cd_worldCheckFinite(const cdWorld *w);

/* kinetic and potential (gravity) energy, J */
double cd_worldKineticEnergy(const cdScene *scene, const cdWorld *w);
double cd_worldPotentialEnergy(const cdScene *scene, const cdWorld *w);

#endif
