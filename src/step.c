/* step.c: one time step, read top to bottom.
 *
 * Impulse backends (lcp, ccp), the velocity-impulse scheme of seeds 000/001:
 *   collide -> carry warm starts by key -> free velocity v_f -> problem (J, G, g)
 *   -> backend solves for lambda -> v+ = v_f + M^-1 J^T lambda -> x+ = x + dt v+.
 * Force backends (penalty): collide once with the margin of the whole step (a Verlet list),
 * then each of n substeps of h = dt / n:
 *   narrow phase of the listed pairs -> carry per-contact state by key -> contact forces
 *   -> v += h M^-1 f -> x += h v.
 * Both are semi-implicit (symplectic) Euler with the exact rotation of each quaternion
 * by its angular velocity (vec3.h cd_quatIntegrate; a ball's, in the substeps, by its
 * series, cd_quatIntegrateSmall: the same to round-off).
 */
#include <string.h>
#include <time.h>

#include "alloc.h"
#include "contact_cache.h"
#include "problem_build.h"
#include "vec3.h"
#include "world.h"

/* positions and orientations forward by h at the current velocities; the rotation matrix
 * and the inverse world inertia follow. In the force models' substeps (substep = 1) an
 * isotropic body's inverse inertia stays as it is (R I^-1 R^T = I^-1 whatever R), and a
 * ball's orientation, which nothing reads within the step (world.h: no narrow phase reads
 * its R), turns by the series of cd_quatIntegrateSmall; its normalisation and its R wait for
 * the end of the step (syncBalls) */
static void integratePositions(const cdScene *scene, cdWorld *w, double h, int substep) {
  for (int i = 0; i < w->nbody; i++) {
    if (w->dof[i] < 0) continue;
    cd_v3addScaled(&w->x[3 * i], &w->x[3 * i], &w->v[6 * i], h);
    int round = substep ? w->round[i] : 0;
    if (round & CD_WORLD_BALL) {
      cd_quatIntegrateSmall(&w->q[4 * i], &w->v[6 * i + 3], h);
      continue;
    }
    cd_quatIntegrate(&w->q[4 * i], &w->v[6 * i + 3], h);
    cd_quatToMat(&w->R[9 * i], &w->q[4 * i]);
    if (!(round & CD_WORLD_ISOTROPIC)) cd_worldUpdateInertia(scene, w, i);
  }
}

/* the balls' orientations normalised and their rotation matrices, after the substeps */
static void syncBalls(cdWorld *w) {
  for (int i = 0; i < w->nbody; i++) {
    if (w->dof[i] < 0 || !(w->round[i] & CD_WORLD_BALL)) continue;
    cd_quatNormalize(&w->q[4 * i]);
    cd_quatToMat(&w->R[9 * i], &w->q[4 * i]);
  }
}

/* v += h M^-1 (gravity + contact force - w x I w), per body (M is block diagonal); an
 * isotropic body has no gyroscopic torque (w x I w = I w x w = 0) and I^-1 = 1/I */
static void integrateForces(const cdScene *scene, cdWorld *w, double h) {
  for (int i = 0; i < w->nbody; i++) {
    if (w->dof[i] < 0) continue;
    const cdBodyDef *b = &scene->body[i];
    double *v = &w->v[6 * i], *om = &w->v[6 * i + 3], *f = &w->force[6 * i];
    double tq[3], dw[3];
    for (int e = 0; e < 3; e++) v[e] += h * (scene->gravity[e] + f[e] / b->mass);
    if (w->round[i] & CD_WORLD_ISOTROPIC) {
      cd_v3addScaled(om, om, &f[3], h / b->inertia[0]);
      continue;
    }
    double Iw[9], Io[3];
    cd_m3rotateDiag(Iw, &w->R[9 * (size_t)i], b->inertia);
    cd_m3mulv(Io, Iw, om);
    cd_v3cross(tq, om, Io);
    cd_v3sub(tq, &f[3], tq);
    cd_m3mulv(dw, &w->Iinv[9 * (size_t)i], tq);
    cd_v3addScaled(om, om, dw, h);
  }
}

/* the relative velocity of b w.r.t. a at each contact point with the new velocities and the
 * start-of-step lever arms: the contact velocity the model itself computed (J v+), so it must
 * run before the positions move */
static void postVelocities(cdWorld *w) {
  for (int i = 0; i < w->contacts.ncon; i++) {
    cdContact *c = &w->contacts.con[i];
    double vr[3];
    cd_worldContactVelocity(w, c, vr);
    c->post_vn = cd_v3dot(vr, c->normal);
    cd_v3addScaled(c->post_vt, vr, c->normal, -c->post_vn);
  }
}

static double seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* the contacts of the current poses, with the previous set's values carried by key */
static int collide(const cdScene *scene, cdWorld *w, double h) {
  double t0 = seconds();
  cdContactSet tmp = w->previous;
  w->previous = w->contacts;
  w->contacts = tmp;
  if (w->contacts.nalpha != w->previous.nalpha && cd_contactSetSetAlpha(&w->contacts, w->previous.nalpha))
    return CD_ERR_NOMEM;
  int st = cd_collide(w->collider, scene, w->x, w->R, w->v, h, &w->contacts);
  if (!st) cd_contactSetCarry(&w->contacts, &w->previous);
  w->time_collide += seconds() - t0;
  return st;
}

static int stepImpulse(const cdScene *scene, cdWorld *w, const cdBackend *be, void *bs, double dt,
                       cdSolveStats *stats) {
  int st = collide(scene, w, dt);
  if (st) return st;
  double t0 = seconds();
  st = cd_problemBuild(scene, w, dt);
  double t1 = seconds(), tg = w->cp.time_delassus;
  w->time_build += t1 - t0;
  if (st) return st;
  if (w->cp.ncon > 0) st = be->solve(bs, &w->cp, &w->contacts, stats);
  /* G, when the solver asked for it, is part of the build */
  double tg_step = w->cp.time_delassus - tg;
  w->time_solve += seconds() - t1 - tg_step;
  w->time_build += tg_step;
  stats->substeps = 1;
  if (st) return st;
  if ((st = cd_problemApply(w))) return st;
  postVelocities(w);
  integratePositions(scene, w, dt, 0);
  return CD_OK;
}

/* the force models' n substeps of h */
static int substeps(const cdScene *scene, cdWorld *w, const cdBackend *be, void *bs, cdContactCache *k, int n,
                    double h, cdSolveStats *stats) {
  for (int s = 0; s < n; s++) {
    const int *live;
    int nlive, st;
    double ts = seconds();
    if ((st = cd_contactCacheSubstep(k, w->collider, scene, w, h, (n - s) * h, &w->contacts, &live, &nlive)))
      return st;
    double t1 = seconds();
    w->time_collide += t1 - ts;
    memset(w->force, 0, (size_t)w->nbody * 6 * sizeof(double));
    st = be->forces(bs, scene, w, &w->contacts, live, nlive, h, stats);
    w->time_solve += seconds() - t1;
    if (st) return st;
    integrateForces(scene, w, h);
    if (s == n - 1) {
      if ((st = cd_contactCacheEnd(k, &w->contacts))) return st;
      postVelocities(w);
    }
    integratePositions(scene, w, h, 1);
  }
  return CD_OK;
}

/* the force models' step. The contacts are collided once, at the step's start, with the
 * margin of the whole step (a Verlet list, contact_cache.h); each substep updates the
 * listed pairs by the narrow phase. w->contacts becomes the step's record (every contact the
 * step had, with its impulse over all its substeps), w->previous the record before. */
static int stepForce(const cdScene *scene, cdWorld *w, const cdBackend *be, void *bs, double dt,
                     cdSolveStats *stats) {
  cdContactCache *k = cd_colliderCache(w->collider, scene);
  if (!k) return CD_ERR_NOMEM;
  double t0 = seconds();
  cdContactSet tmp = w->previous;
  w->previous = w->contacts;
  w->contacts = tmp;
  int st = cd_contactCacheBegin(k, w->collider, scene, w, dt, &w->contacts, &w->previous);
  w->time_collide += seconds() - t0;
  if (st) return st;
  int n = be->substeps(bs, scene, w, &w->contacts, dt);
  if (n == CD_ERR_NOMEM) return n;
  if (n < 1) n = 1;
  /* the work of the step (world.h), before any is done: from the larger of the step's
   * candidate contacts and the last step's */
  int nc = w->contacts.ncon > w->previous.ncon ? w->contacts.ncon : w->previous.ncon;
  double per = CD_WORLD_FORCE_WORK_SUBSTEP + CD_WORLD_FORCE_WORK_BODY * w->nbody + (double)nc;
  if ((double)n * per > CD_WORLD_MAX_FORCE_WORK) return CD_ERR_LIMIT;
  st = substeps(scene, w, be, bs, k, n, dt / n, stats);
  syncBalls(w);
  if (st) return st;
  stats->substeps = n;
  double t1 = seconds();
  st = be->finish ? be->finish(bs, scene, w, &w->contacts, dt, stats) : CD_OK;
  w->time_solve += seconds() - t1;
  return st;
}

int cd_worldForceSubsteps(const cdScene *scene, cdWorld *w, const cdBackend *be, void *bs, double dt) {
  cdContactCache *k = cd_colliderCache(w->collider, scene);
  const cdContactSet *probe = k ? cd_contactCacheProbe(k, w->collider, scene, w, dt) : NULL;
  if (!probe) return -1;
  int n = be->substeps(bs, scene, w, probe, dt);
  if (n == CD_ERR_NOMEM) return -1;
  return n < 1 ? 1 : n;
}

int cd_worldStep(const cdScene *scene, cdWorld *w, const cdBackend *backend, void *bstate, double dt,
                 cdSolveStats *stats) {
  memset(stats, 0, sizeof *stats);
  stats->converged = 1;
  int st = backend->kind == CD_BACKEND_IMPULSE ? stepImpulse(scene, w, backend, bstate, dt, stats)
                                               : stepForce(scene, w, backend, bstate, dt, stats);
  if (st) return st;
  w->step++;
  w->time = (double)w->step * dt;
  if (!stats->converged) w->warn_nonconverged++;
  w->warn_fallback += stats->fallbacks;
  w->warn_cholmod += stats->cholmod_warnings;
  return CD_OK;
}
