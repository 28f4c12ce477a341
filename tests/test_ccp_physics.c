/* test_ccp_physics.c: the CCP model (seed 001) through the real pipeline, against the answers
 * of DESIGN §5 and NUMERICS "The CCP on a sliding contact".
 *
 * Every tolerance comes from the solver's own residual, measured after each step on the
 * problem the step solved (w->cp: G, g and the impulses lambda). Per contact, with
 * c̄ = G lambda + g (post-step contact velocity plus phi/dt in the normal component),
 *     r = lambda - Proj_K(lambda - c̄),   p = lambda - r = Proj_K(lambda - c̄),
 * and Moreau's decomposition of lambda - c̄ gives exactly
 *     p ∈ K,   c̄ - r ∈ K*,   (c̄ - r)^T p = 0.
 * So a computed answer is an exact CCP answer moved by r, and rho = max_i ||r_i|| (the
 * natural map with a unit step, computed here; the solvers' own residual is the natural map
 * with the step meff_i, cone.h, which vanishes with it) bounds:
 *  (R1) a loaded contact (lambda_N > rho, so p != 0): c̄ - r lies on the boundary of K* or p
 *       is inside K with c̄ = r; either way
 *           |c̄_N - mu ||c̄_T||| <= |r_N| + mu ||r_T|| <= sqrt(1 + mu^2) rho,
 *       i.e. c_N = mu ||c_T|| - phi/dt to sqrt(1 + mu^2) rho;
 *  (R2) a contact with mu lambda_N - ||lambda_T|| > sqrt(1 + mu^2) rho has p strictly inside K,
 *       hence c̄ = r: it sticks, ||c_T|| <= rho and |c_N + phi/dt| <= rho;
 *  (R3) two answers a, b of the same problem (same state): M (v_a - v_b) = J^T (lambda_a -
 *       lambda_b), so
 *           ||v_a - v_b||_M^2 = (c̄_a - c̄_b)^T (lambda_a - lambda_b)
 *             <= r_a^T (p_a + c̄_a - lambda_b - c̄_b + r_b) + r_b^T (p_b + c̄_b - lambda_a - c̄_a + r_a)
 *       (expand, then use (c̄ - r) ⟂ p and K* ∋ c̄ - r, K ∋ p). With b an exact answer
 *       (r_b = 0) this bounds the distance to the exact velocities, for any solver.
 * v_a, v_b in (R3) are the pipeline's body velocities, not recomputed from lambda, and so is
 * the contact velocity c = J(q_t) v+ the checks use (contactVelocity: the arms of the start of
 * the step, as in J). cdContact.post_vn / post_vt, which src/step.c evaluates with the same
 * start-of-step arms, are checked against it separately
 * (postStepContactVelocityIsTheModelsOnARollingSphere below), not used by the checks.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "ccp.h"
#include "cone.h"
#include "simtest.h"
#include "test.h"
#include "vec3.h"

/* the sliding-cube scene: scenes/README.md */
#define SC_MU 0.5
#define SC_V0 2.0
#define SC_G 9.81
#define SC_DT 0.01
#define SC_HALF 0.1 /* half size a; the contact plane is a below the centre (h = a) */

/* r and p of lambda given c̄ (one contact) */
static void moreau(double mu, const double l[3], const double c[3], double r[3], double pp[3]) {
  double z[3] = {l[0] - c[0], l[1] - c[1], l[2] - c[2]};
  cd_coneProject(mu, z, pp);
  for (int k = 0; k < 3; k++) r[k] = l[k] - pp[k];
}

/* rho: the natural map with a unit step, max_i ||r_i||, of the problem the last step solved */
static double stepResidual(const cdSim *s) {
  cdContactProblem *p = &s->world->cp;
  if (p->ncon == 0) return 0.0;
  /* a velocity-space solver (primal) leaves G unbuilt: build it for the check */
  if (cd_contactProblemDelassus(p)) return INFINITY;
  double *cb = cd_malloc((size_t)p->ncon * 3 * sizeof(double));
  if (!cb) return INFINITY;
  cd_blockMatrixMul(&p->G, p->lambda, cb);
  double rho = 0.0;
  for (int i = 0; i < p->ncon; i++) {
    double r[3], pp[3];
    for (int k = 0; k < 3; k++) cb[3 * i + k] += p->g[3 * i + k];
    moreau(p->mu[i], &p->lambda[3 * i], &cb[3 * i], r, pp);
    rho = fmax(rho, sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2]));
    if (!isfinite(rho)) rho = INFINITY;
  }
  cd_free(cb);
  return rho;
}

/* the right side of (R3) for answers (la, ca) and (lb, cb) of problem p */
static double r3Bound(const cdContactProblem *p, const double *la, const double *ca, const double *lb,
                      const double *cb) {
  double sa = 0.0, sb = 0.0;
  for (int i = 0; i < p->ncon; i++) {
    const double *lai = &la[3 * i], *cai = &ca[3 * i], *lbi = &lb[3 * i], *cbi = &cb[3 * i];
    double ra[3], pa[3], rb[3], pb[3];
    moreau(p->mu[i], lai, cai, ra, pa);
    moreau(p->mu[i], lbi, cbi, rb, pb);
    for (int k = 0; k < 3; k++) {
      sa += ra[k] * (pa[k] + cai[k] - lbi[k] - cbi[k] + rb[k]);
      sb += rb[k] * (pb[k] + cbi[k] - lai[k] - cai[k] + ra[k]);
    }
  }
  return fabs(sa) + fabs(sb);
}

/* c̄ = G lambda + g into a new array (3 ncon), or NULL */
static double *cbarOf(cdContactProblem *p, const double *lambda) {
  double *c = cd_malloc((size_t)(p->ncon > 0 ? p->ncon : 1) * 3 * sizeof(double));
  if (!c || cd_contactProblemDelassus(p)) {
    cd_free(c);
    return NULL;
  }
  cd_blockMatrixMul(&p->G, lambda, c);
  for (int k = 0; k < 3 * p->ncon; k++) c[k] += p->g[k];
  return c;
}

/* ||v_a - v_b||_M over the bodies, with the world inertia R I R^T of a */
static double massNormDiff(const cdSim *a, const double *va, const double *vb) {
  double s = 0.0;
  for (int i = 0; i < a->world->nbody; i++) {
    if (a->world->dof[i] < 0) continue;
    const cdBodyDef *b = &a->scene.body[i];
    double dv[3], dw[3], Iw[9], Idw[3];
    for (int e = 0; e < 3; e++) {
      dv[e] = va[6 * i + e] - vb[6 * i + e];
      dw[e] = va[6 * i + 3 + e] - vb[6 * i + 3 + e];
    }
    cd_m3rotateDiag(Iw, &a->world->R[9 * (size_t)i], b->inertia);
    cd_m3mulv(Idw, Iw, dw);
    s += b->mass * cd_v3dot(dv, dv) + cd_v3dot(dw, Idw);
  }
  return sqrt(s);
}

/* dst takes src's state (poses and velocities), so that its next step solves the same problem */
static void syncState(cdSim *dst, const cdSim *src) {
  cdWorld *d = dst->world;
  const cdWorld *s = src->world;
  size_t nb = (size_t)d->nbody;
  memcpy(d->x, s->x, nb * 3 * sizeof(double));
  memcpy(d->q, s->q, nb * 4 * sizeof(double));
  memcpy(d->v, s->v, nb * 6 * sizeof(double));
  memcpy(d->R, s->R, nb * 9 * sizeof(double));
  for (int i = 0; i < d->nbody; i++) cd_worldUpdateInertia(&dst->scene, d, i);
}

/* both sims solved the same problem: same contact keys, same g (the same arithmetic on the
 * same state gives the same numbers) */
static int sameProblem(const cdSim *a, const cdSim *b) {
  const cdContactSet *ca = &a->world->contacts, *cb = &b->world->contacts;
  if (ca->ncon != cb->ncon) return 0;
  for (int i = 0; i < ca->ncon; i++)
    if (cd_contactKeyCompare(&ca->con[i], &cb->con[i]) != 0) return 0;
  for (int k = 0; k < 3 * ca->ncon; k++)
    if (fabs(a->world->cp.g[k] - b->world->cp.g[k]) > 1e-12 * (1.0 + fabs(a->world->cp.g[k]))) return 0;
  return 1;
}

/* (R3) between the answers of a and b of the step both just took from the same state:
 * returns ||v_a - v_b||_M - sqrt(bound) (<= 0 when it holds), -INFINITY on no memory */
static double r3Excess(const cdSim *a, const cdSim *b, double *vdiff) {
  cdContactProblem *p = &a->world->cp;
  *vdiff = massNormDiff(a, a->world->v, b->world->v);
  if (p->ncon == 0) return *vdiff - 1e-12;
  double *ca = cbarOf(p, p->lambda), *cb = cbarOf(p, b->world->cp.lambda);
  if (!ca || !cb) {
    cd_free(ca);
    cd_free(cb);
    return -INFINITY;
  }
  double B = r3Bound(p, p->lambda, ca, b->world->cp.lambda, cb);
  cd_free(ca);
  cd_free(cb);
  /* 1e-9: round-off of the two products G lambda and M^-1 J^T lambda at these sizes */
  return *vdiff - (sqrt(B) + 1e-9);
}

/* the model's post-step contact velocity c = J(q_t) v+ of contact i in (n, t1, t2): the
 * relative velocity of b w.r.t. a at the contact point, with the arms of the start of the
 * step (xOld: the centres before it), from the pipeline's body velocities */
static void contactVelocity(const cdSim *s, const double *xOld, int i, double c[3]) {
  const cdWorld *w = s->world;
  const cdContact *k = &w->contacts.con[i];
  double vr[3] = {0, 0, 0};
  for (int e = 0; e < 2; e++) {
    int b = k->body[e];
    if (b < 0) continue;
    double arm[3], wxr[3], vp[3];
    cd_v3sub(arm, k->point, &xOld[3 * b]);
    cd_v3cross(wxr, &w->v[6 * b + 3], arm);
    cd_v3add(vp, &w->v[6 * b], wxr);
    cd_v3addScaled(vr, vr, vp, e == 1 ? 1.0 : -1.0);
  }
  c[0] = cd_v3dot(vr, k->normal);
  c[1] = cd_v3dot(vr, k->t1);
  c[2] = cd_v3dot(vr, k->t2);
}

/* one step, keeping the centres of the start of the step in xOld (3 nbody) */
static int stepKeep(cdSim *s, double *xOld) {
  memcpy(xOld, s->world->x, (size_t)s->world->nbody * 3 * sizeof(double));
  return cd_simStep(s);
}

/* (R1) on every loaded contact of the last step; returns the worst excess over the bound */
static double r1Excess(const cdSim *s, const double *xOld, double rho, int *nloaded) {
  const cdWorld *w = s->world;
  double worst = -INFINITY;
  for (int i = 0; i < w->contacts.ncon; i++) {
    const cdContact *c = &w->contacts.con[i];
    if (c->lambda[0] <= rho) continue;
    double mu = w->cp.mu[i], cv[3];
    contactVelocity(s, xOld, i, cv);
    double rel = cv[0] + c->gap / s->scene.dt - mu * hypot(cv[1], cv[2]);
    /* 1e-12: c from the body velocities, c̄ from G lambda + g: round-off apart */
    worst = fmax(worst, fabs(rel) - (sqrt(1.0 + mu * mu) * rho + 1e-12));
    (*nloaded)++;
  }
  return worst;
}

/* The exact first step of the sliding cube, derived for the cube (not a point): with no
 * rotation the four corners share c_T = v_x and c_N = v_z (phi = 0), so each loaded corner's
 * c_N = mu |c_T| and the momentum balance give the NUMERICS point-mass numbers for the centre,
 *     v_x = (v0 - mu g dt) / (1 + mu^2),   v_z = mu v_x,   omega = 0,
 * and the pitch torque of the friction, mu N h, must be balanced by shifting the load forward:
 * N_front - N_back = mu N h / a. That keeps every corner loaded (N_back = N (1 - mu h/a) / 2 > 0)
 * for mu < a/h = 1: the cube does not pitch, and these impulses are an exact CCP answer (in K,
 * c̄ on the boundary of K*, orthogonal), so (R3) with r_b = 0 bounds the distance of the
 * pipeline's velocities from it. */
static void slidingCubeExactFirstStep(const cdSim *s, double *vstar, double *lstar, double *cstar) {
  const cdWorld *w = s->world;
  double cT = (SC_V0 - SC_MU * SC_G * SC_DT) / (1.0 + SC_MU * SC_MU), cN = SC_MU * cT;
  double N = 1.0 * (cN + SC_G * SC_DT); /* total normal impulse, m = 1 */
  memset(vstar, 0, 6 * sizeof(double));
  vstar[0] = cT;
  vstar[2] = cN;
  for (int i = 0; i < w->contacts.ncon; i++) {
    const cdContact *c = &w->contacts.con[i];
    double front = c->point[0] > w->x[0] ? 1.0 : -1.0;
    double ln = N * (1.0 + front * SC_MU * 1.0 /* h / a */) / 4.0;
    double f[3] = {-SC_MU * ln, 0.0, 0.0}, vr[3] = {cT, 0.0, cN};
    lstar[3 * i] = ln;
    lstar[3 * i + 1] = cd_v3dot(f, c->t1);
    lstar[3 * i + 2] = cd_v3dot(f, c->t2);
    cstar[3 * i] = cd_v3dot(vr, c->normal) + c->gap / s->scene.dt;
    cstar[3 * i + 1] = cd_v3dot(vr, c->t1);
    cstar[3 * i + 2] = cd_v3dot(vr, c->t2);
  }
}

/* checks the first step of the sliding cube against the exact answer; returns the
 * velocity distance measured */
static double checkSlidingFirstStep(const cdSim *s) {
  const cdWorld *w = s->world;
  cdContactProblem *p = &s->world->cp;
  CHECK_MSG(w->contacts.ncon == 4, "the resting cube touches at its 4 corners, got %d", w->contacts.ncon);
  if (w->contacts.ncon != 4) return INFINITY;
  double vstar[6], lstar[12], cstar[12];
  slidingCubeExactFirstStep(s, vstar, lstar, cstar);
  double *ca = cbarOf(p, p->lambda);
  if (!ca) return INFINITY;
  double B = r3Bound(p, p->lambda, ca, lstar, cstar);
  cd_free(ca);
  double d = massNormDiff(s, w->v, vstar);
  CHECK_MSG(d <= sqrt(B) + 1e-9, "first step ||v - v*||_M = %.3g above the residual's bound %.3g", d,
            sqrt(B) + 1e-9);
  return d;
}

CD_TEST(ccpSlidingCubeIsKickedHoversAndSettles) {
  cdSim s;
  if (cd_simMakeFile(&s, "sliding-cube.json", "ccp", NULL, NULL)) return;
  const double mu = SC_MU, dt = SC_DT, g = SC_G, a = SC_HALF;
  const double cT = (SC_V0 - mu * g * dt) / (1.0 + mu * mu), cN = mu * cT;
  const long nstep = 60; /* 0.6 s: the cube stops near t = 0.42 s and has then settled */

  double xOld[3];
  /* step 1: the kick */
  if (stepKeep(&s, xOld)) goto done;
  double rho1 = stepResidual(&s);
  CHECK(s.stats.converged);
  int nl = 0;
  CHECK_MSG(r1Excess(&s, xOld, rho1, &nl) <= 0.0, "step 1: a loaded corner misses c_N = mu |c_T| (R1)");
  CHECK_MSG(nl == 4, "step 1: all 4 corners loaded, got %d", nl);
  checkSlidingFirstStep(&s);
  /* the vertical velocity directly: (R3)'s bound is a square root; the tight statement is
   * (R1) on the four corners averaged: v_z - mu v_x differs from the mean of
   * (c_N - mu |c_T|) only by the rotation terms a |omega| (1 + mu) */
  {
    const double *v = s.world->v;
    double om = cd_v3norm(&v[3]);
    CHECK_NEAR(v[2], mu * v[0], sqrt(1.0 + mu * mu) * rho1 + (1.0 + mu) * sqrt(2.0) * a * om + 1e-12);
  }
  double vz1 = s.world->v[2], vx1 = s.world->v[0], om1 = cd_v3norm(&s.world->v[3]);

  /* flight: the corners are free (lambda ~ 0) until they come back down; the lowest point's
   * peak is the symplectic-Euler flight from vz1: dt sum_{j>=0} (vz1 - j g dt)^+ */
  double peak = 0.0;
  for (int j = 0; vz1 - j * g * dt > 0.0; j++) peak += dt * (vz1 - j * g * dt);
  double peakExact = 0.0;
  for (int j = 0; cN - j * g * dt > 0.0; j++) peakExact += dt * (cN - j * g * dt);

  double maxLift = cd_simLowestZ(&s, 0), rhoMax = rho1, prevVx = s.world->v[0], prevDevX = INFINITY,
         prevDevZ = INFINITY, rhoHist[8] = {rho1, rho1, rho1, rho1, rho1, rho1, rho1, rho1};
  long landed = 0, stopped = 0, steadyHover = 0;
  double xHover = 0.0, vHover = 0.0, xStop = 0.0, gapHover = 0.0;
  for (long k = 2; k <= nstep; k++) {
    /* the predicted gap of each corner from the last step, by key: phi+ = phi + dt c_N
     * = mu |c_T| dt when loaded (R1 times dt); kept to compare after the step */
    double predicted[8] = {0}, tolPred[8] = {0}, rhoPrev = stepResidual(&s);
    int npred = 0;
    cdContact prevCon[8];
    for (int i = 0; i < s.world->contacts.ncon && npred < 8; i++) {
      const cdContact *c = &s.world->contacts.con[i];
      if (c->lambda[0] <= rhoPrev) continue;
      double cv[3];
      contactVelocity(&s, xOld, i, cv);
      prevCon[npred] = *c;
      predicted[npred] = mu * hypot(cv[1], cv[2]) * dt;
      /* (R1) times dt, and the rotation's second-order term (omega dt)^2 |arm| */
      double om = cd_v3norm(&s.world->v[3]);
      tolPred[npred] = dt * sqrt(1.0 + mu * mu) * rhoPrev + om * om * dt * dt * sqrt(3.0) * a + 1e-12;
      npred++;
    }
    if (stepKeep(&s, xOld)) goto done;
    const cdWorld *w = s.world;
    double rho = stepResidual(&s);
    rhoMax = fmax(rhoMax, rho);
    CHECK_MSG(s.stats.converged, "step %ld did not converge", k);
    double low = cd_simLowestZ(&s, 0), vx = w->v[0];
    maxLift = fmax(maxLift, low);
    int loaded = 0;
    double ex = r1Excess(&s, xOld, rho, &loaded);
    CHECK_MSG(ex <= 0.0, "step %ld: a loaded contact misses c_N = mu |c_T| - phi/dt by %.3g over the bound", k,
              ex);
    /* hover: the corners carried from a loaded step start this one at mu |c_T| dt */
    for (int j = 0; j < npred; j++)
      for (int i = 0; i < w->contacts.ncon; i++)
        if (cd_contactKeyCompare(&w->contacts.con[i], &prevCon[j]) == 0)
          CHECK_MSG(fabs(w->contacts.con[i].gap - predicted[j]) <= tolPred[j],
                    "step %ld: corner starts at gap %.9g, model says mu |c_T| dt = %.9g", k,
                    w->contacts.con[i].gap, predicted[j]);
    if (!landed && loaded > 0 && k > 2) {
      landed = k;
    }
    /* steady hover: the normal velocity settles at -mu^2 g dt and the deceleration at mu g,
     * the fixed point of (R1) + momentum, approached by the factor q = mu^2 / (1 + mu^2) a
     * step: each step's distance from it is at most q times the last one's, plus the (R1)
     * errors of this step and the last (4 sqrt(1 + mu^2) rho each, as below). After 8 steps
     * the landing's transient (a velocity change below v0 = 2 m/s) is down to q^8 v0 = 5.1e-6
     * m/s: at an accurate solver's tolerance it is still seen (measured: 6.3e-7 m/s nine steps
     * after landing, shrinking by q), so the steps are checked against the contraction. The
     * errors are those of the last 8 steps (an error left in the cube's pitch relaxes at its
     * own rate, not by q): twice their largest (R1) bound */
    double devX = fabs(prevVx - vx - mu * g * dt), devZ = fabs(w->v[2] + mu * mu * g * dt);
    rhoHist[k % 8] = rho;
    if (landed && k > landed + 8 && vx > 0.05) {
      double rhoRecent = 0.0;
      for (int j = 0; j < 8; j++) rhoRecent = fmax(rhoRecent, rhoHist[j]);
      const double q = mu * mu / (1.0 + mu * mu), err = 8.0 * sqrt(1.0 + mu * mu) * rhoRecent + 1e-9;
      if (!steadyHover) {
        xHover = w->x[0];
        vHover = vx;
        gapHover = low;
      }
      steadyHover++;
      CHECK_MSG(devX <= q * prevDevX + err, "step %ld: deceleration off mu g by %.3g, last step %.3g", k, devX,
                prevDevX);
      CHECK_MSG(devZ <= q * prevDevZ + err, "step %ld: v_z off -mu^2 g dt by %.3g, last step %.3g", k, devZ,
                prevDevZ);
      CHECK(devX <= pow(q, 8) * SC_V0 + err / (1.0 - q) && devZ <= pow(q, 8) * SC_V0 + err / (1.0 - q));
      /* the hover gap: of the order mu |v_t| dt, never above what the kick gave */
      CHECK(low <= mu * cT * dt + dt * rho);
    }
    if (!stopped && landed && fabs(vx) <= 1e-6) {
      stopped = k;
      xStop = w->x[0];
    }
    prevVx = vx;
    prevDevX = devX;
    prevDevZ = devZ;
  }
  CHECK_MSG(maxLift > 0.0, "the CCP cube must leave the ground (kick)");
  /* the flight is free: separated corners carry lambda = 0 up to rho, which moves the cube by
   * at most (steps) dt rho */
  CHECK_NEAR(maxLift, peak, 20.0 * dt * rhoMax + 1e-12);
  CHECK_NEAR(peak, peakExact, 20.0 * dt * fabs(vz1 - cN) + 1e-12);
  CHECK_MSG(landed > 0, "the cube lands");
  CHECK_MSG(steadyHover >= 10, "the cube hovers for a while after landing (%ld steps)", steadyHover);
  CHECK_MSG(stopped > 0, "the cube stops before t = %.2f s", nstep * dt);
  /* in the steady hover it decelerates at mu g (checked step by step above) until the step
   * whose speed is below mu g dt sticks: from there the distance to the stop is the discrete
   * sum dt sum_{j>=1} (v_h - j mu g dt)^+ (about v_h^2 / (2 mu g) - v_h dt / 2). Tolerance:
   * the per-step errors above (4 sqrt(1 + mu^2) rho) summed twice over the <= 20 steps, times
   * dt, and the 1e-6 m/s the stop test leaves */
  double dStop = 0.0;
  for (int j = 1; vHover - j * mu * g * dt > 0.0; j++) dStop += dt * (vHover - j * mu * g * dt);
  if (steadyHover && stopped)
    CHECK_NEAR(xStop - xHover, dStop, dt * (400.0 * 4.0 * sqrt(1.0 + mu * mu) * rhoMax + 20.0 * 1e-6));
  printf("    kick: v_x %.7f v_z %.7f |omega| %.1e (closed form %.7f, %.7f, 0); max lift %.3f mm "
         "(discrete flight %.3f mm; MuJoCo's soft model 37 mm)\n",
         vx1, vz1, om1, cT, cN, 1e3 * maxLift, 1e3 * peakExact);
  printf("    lands at step %ld; hover from step %ld at %.3f mm (mu |v_t| dt = %.3f mm); stops at t = %.2f s, "
         "x = %.4f m (LCP: v0^2/(2 mu g) = %.4f m); from hover start %.5f m vs discrete %.5f m\n",
         landed, landed + 9, 1e3 * gapHover, 1e3 * mu * vHover * dt, stopped * dt, xStop,
         SC_V0 * SC_V0 / (2.0 * mu * g), xStop - xHover, dStop);
  /* settled: sticking corners (R2) leave each step at gap dt r_N, so the centre is back at
   * z = a to dt rho (plus the tilt this leaves, the same order), and the velocity is rho-small */
  {
    const cdWorld *w = s.world;
    printf("    settled: z - a = %.1e m, |v| = %.1e m/s (rho max %.1e)\n", w->x[2] - a, cd_v3norm(&w->v[0]), rhoMax);
    CHECK_NEAR(w->x[2], a, 2.0 * dt * rhoMax + 1e-12);
    CHECK(cd_v3norm(&w->v[0]) <= 4.0 * rhoMax);
    for (int i = 0; i < w->contacts.ncon; i++) {
      double cv[3];
      contactVelocity(&s, xOld, i, cv);
      CHECK(hypot(cv[1], cv[2]) <= rhoMax + 1e-12);
    }
  }
done:
  cd_simFree(&s);
}

/* With mu = 0 the cone K_0 is the ray lambda_T = 0, lambda_N >= 0, its dual the half-space
 * c̄_N >= 0, and the CCP is the frictionless LCP 0 <= lambda_N ⟂ G_NN lambda_N + g_N >= 0
 * (seed 004): the same problem. The LCP answer (Lemke, exact to round-off) must then have a
 * CCP residual at the LCP's own tolerance, and the CCP's velocities must be within (R3)
 * of the LCP's. The two run in lockstep: before each step the LCP world takes the CCP world's
 * state, so both solve the same problem every step (a free-running comparison of a pile would
 * measure its sensitivity to the 1e-6 differences, not the model). Normal impulses of a pile
 * need not be unique (more contacts than independent normal directions), their effect on every
 * body is: that is what (R3) compares. */
CD_TEST(frictionlessCcpEqualsLcpOnASpherePile) {
  const char *const sets[] = {"/materials/grain/friction=0", NULL};
  cdSim a, b;
  if (cd_simMakeFile(&a, "sphere-pile.json", "ccp", NULL, sets)) return;
  if (cd_simMakeFile(&b, "sphere-pile.json", "lcp", NULL, sets)) {
    cd_simFree(&a);
    return;
  }
  const long nstep = 40; /* the pile lands at step 6 and is in full contact by step 30 */
  double worstV = 0.0, worstL = 0.0;
  long contactSteps = 0;
  for (long k = 1; k <= nstep; k++) {
    syncState(&b, &a);
    if (cd_simStep(&a) || cd_simStep(&b)) break;
    CHECK_MSG(sameProblem(&a, &b), "step %ld: the two worlds built different problems", k);
    if (!sameProblem(&a, &b)) break;
    cdContactProblem *p = &a.world->cp;
    if (p->ncon == 0) continue;
    contactSteps++;
    CHECK_MSG(a.stats.converged && b.stats.converged, "step %ld: a solver did not converge", k);
    for (int i = 0; i < p->ncon; i++) CHECK(p->mu[i] == 0.0);
    /* the LCP answer is a CCP answer: frictionless, its natural residual is |min(lambda_N,
     * c̄_N)| (and lambda_T = 0), which the LCP stops at 1e-8 (bgs) or round-off (Lemke) */
    double *work = cd_malloc((size_t)p->ncon * 3 * sizeof(double));
    if (!work) break;
    cdConeResidual parts;
    cd_coneResidualOf(p, b.world->cp.lambda, work, &parts);
    cd_free(work);
    CHECK_MSG(parts.natural <= 1e-8 * parts.scale, "step %ld: the LCP answer has CCP residual %.3g", k,
              parts.natural);
    double dv;
    double ex = r3Excess(&a, &b, &dv);
    CHECK_MSG(ex <= 0.0, "step %ld: ||v_ccp - v_lcp||_M = %.3g exceeds the residual bound by %.3g", k, dv, ex);
    worstV = fmax(worstV, dv);
    for (int i = 0; i < p->ncon; i++) worstL = fmax(worstL, fabs(p->lambda[3 * i] - b.world->cp.lambda[3 * i]));
  }
  printf("    frictionless pile, %ld contact steps: max ||v_ccp - v_lcp||_M %.1e, max |lambda_N difference| %.1e N s\n",
         contactSteps, worstV, worstL);
  CHECK_MSG(contactSteps >= 30, "the pile was in contact for %ld steps only", contactSteps);
  /* the bound above is a square root of the residual; the measured agreement is far
   * tighter: velocities within 1e-3 m/s anywhere in the pile */
  CHECK(worstV <= 1e-3);
  cd_simFree(&a);
  cd_simFree(&b);
}

/* The 30 degree incline (gravity tilted: g (sin 30, 0, -cos 30)); the cube's corners at
 * arm a along x and h = a below the centre. */
CD_TEST(ccpCubeSticksOnTheInclineWhenMuExceedsTanTheta) {
  cdSim s;
  if (cd_simMakeFile(&s, "incline-cube.json", "ccp", NULL, NULL)) return;
  const double a = SC_HALF, h = SC_HALF, dt = s.scene.dt;
  const long nstep = 50;
  double x0[3];
  memcpy(x0, s.world->x, sizeof x0);
  double bound = 0.0, xOld[3];
  for (long k = 1; k <= nstep; k++) {
    if (stepKeep(&s, xOld)) break;
    const cdWorld *w = s.world;
    double rho = stepResidual(&s), gmin = INFINITY, gmax = -INFINITY;
    CHECK(s.stats.converged);
    CHECK_MSG(w->contacts.ncon == 4, "step %ld: %d contacts", k, w->contacts.ncon);
    for (int i = 0; i < w->contacts.ncon; i++) {
      const cdContact *c = &w->contacts.con[i];
      double mu = w->cp.mu[i], margin = mu * c->lambda[0] - hypot(c->lambda[1], c->lambda[2]);
      /* mu 0.8 > tan 30 = 0.577: the exact answer sticks with friction tan 30 lambda_N, well
       * inside the cone; every corner must be strictly inside (R2) */
      CHECK_MSG(margin > sqrt(1.0 + mu * mu) * rho, "step %ld corner %d: not strictly inside the cone", k, i);
      double cv[3];
      contactVelocity(&s, xOld, i, cv);
      CHECK(hypot(cv[1], cv[2]) <= rho + 1e-12);
      gmin = fmin(gmin, c->gap);
      gmax = fmax(gmax, c->gap);
    }
    /* (R2) at the corners: each slips by <= rho; the centre also moves by the tilt rate times
     * h, and the tilt rate is at most the corners' normal-velocity spread over their spacing
     * 2a: (2 rho + (gmax - gmin)/dt) / (2a) */
    bound += dt * (rho + h * (2.0 * rho + (gmax - gmin) / dt) / (2.0 * a));
  }
  double d = hypot(s.world->x[0] - x0[0], s.world->x[1] - x0[1]);
  printf("    incline mu 0.8: crept %.1e m in %ld steps (residual bound %.1e m)\n", d, nstep, bound);
  CHECK_MSG(d <= bound + 1e-12, "the cube crept %.3g m, the residual allows %.3g m", d, bound);
  cd_simFree(&s);
}

/* mu = 0.3 < tan 30: the cube slides. The CCP makes it hover: each loaded corner leaves a step
 * with c_N = mu |c_T| - phi/dt, so the gap follows mu |v_t| dt and grows with the speed; the
 * normal velocity settles at mu a dt (a the slide acceleration), which keeps the normal
 * impulse at exactly m g cos(theta) dt per step, so the acceleration along the slope is the
 * Coulomb one, g (sin theta - mu cos theta), once the first step's kick transient (factor
 * mu^2 / (1 + mu^2) a step) has died. The kick costs a velocity deficit: the first step gives
 * c_T = (g sin dt - mu g cos dt) / (1 + mu^2), short of a dt. */
CD_TEST(ccpCubeSlidesDownTheInclineAtTheCoulombAcceleration) {
  const char *const sets[] = {"/materials/rough/friction=0.3", NULL};
  cdSim s;
  if (cd_simMakeFile(&s, "incline-cube.json", "ccp", NULL, sets)) return;
  const double mu = 0.3, dt = s.scene.dt, gs = s.scene.gravity[0], gc = -s.scene.gravity[2];
  const double acc = gs - mu * gc; /* g (sin 30 - mu cos 30) = 2.356 m/s^2 */
  const long k0 = 10, k1 = 50;
  double v0 = 0.0, rhoMax = 0.0, xOld[3], rhoPrev = 0.0, rho = 0.0;
  for (long k = 1; k <= k1; k++) {
    if (stepKeep(&s, xOld)) break;
    const cdWorld *w = s.world;
    rhoPrev = rho;
    rho = stepResidual(&s);
    rhoMax = fmax(rhoMax, rho);
    CHECK(s.stats.converged);
    int nl = 0;
    CHECK_MSG(r1Excess(&s, xOld, rho, &nl) <= 0.0, "step %ld: a loaded corner misses (R1)", k);
    if (k == 1) CHECK_NEAR(w->v[0], (gs - mu * gc) * dt / (1.0 + mu * mu), 4.0 * sqrt(1.0 + mu * mu) * rho);
    if (k == k0) v0 = w->v[0];
    if (k > k0) {
      /* the step's own error (R1), and the previous step's: the gap this step starts from,
       * whose phi/dt enters c_N, was left by the previous step's normal velocity */
      CHECK_NEAR(w->v[2], mu * acc * dt, 4.0 * sqrt(1.0 + mu * mu) * (rho + rhoPrev) + 1e-9);
      /* the hover: the lowest point is the next gap, mu |c_T| dt (R1), c_T = v_x up to the
       * rotation a |omega| */
      CHECK_NEAR(cd_simLowestZ(&s, 0), mu * w->v[0] * dt,
                 dt * (sqrt(1.0 + mu * mu) * rho + 2.0 * SC_HALF * cd_v3norm(&w->v[3])) + 1e-12);
    }
  }
  /* the kick's deficit: the first step is short of acc dt by acc dt q, q = mu^2 / (1 + mu^2),
   * and each later step makes up all but the factor q of the previous deficit, so the speed
   * settles at acc (t - mu^2 dt): the sum acc dt q / (1 - q) = acc mu^2 dt */
  CHECK_NEAR(s.world->v[0], acc * ((double)k1 - mu * mu) * dt, (double)k1 * 4.0 * sqrt(1.0 + mu * mu) * rhoMax + 1e-9);
  /* per step the speed gain is acc dt to (R1)-sized errors (~ sqrt(1 + mu^2) rho on the
   * normal and the cone's edge): over the window the mean acceleration is within
   * 4 sqrt(1 + mu^2) rho / dt, and the transient's 0.083^10 is far below */
  double am = (s.world->v[0] - v0) / ((double)(k1 - k0) * dt);
  printf("    incline mu 0.3: acceleration %.6f m/s^2 (Coulomb %.6f), lift rate %.6f m/s (mu a dt %.6f), "
         "v at %.2f s %.6f vs a t %.6f (a (t - mu^2 dt) %.6f), lowest point %.3f mm\n",
         am, acc, s.world->v[2], mu * acc * dt, k1 * dt, s.world->v[0], acc * k1 * dt,
         acc * (k1 - mu * mu) * dt, 1e3 * cd_simLowestZ(&s, 0));
  CHECK_NEAR(am, acc, 4.0 * sqrt(1.0 + mu * mu) * rhoMax / dt + 1e-9);
  cd_simFree(&s);
}

/* A solid sphere (I = 2/5 m r^2) rolls without slipping when mu >= 2/7 tan theta (0.165 here,
 * mu 0.8): the contact sticks, so by (R2) its c_T is rho-small. The contact point sits midway
 * in the gap phi, at arm r + phi/2 below the centre: c_T = v_x - (r + phi/2) omega_y, so
 * v = omega r to rho + |omega| |phi| / 2. Per step the momentum balance gives
 * dv_x = 5/7 g sin dt + (dc_T) / 3.5 (c_T = v_x - r omega_y, impulse F: dv_x = g sin dt - F/m,
 * r d omega = 5/2 F/m): the c_T terms telescope, so v_x after n steps is n (5/7) g sin dt to
 * 2 max|c_T| / 3.5. */
CD_TEST(ccpSphereRollsDownTheInclineAtFiveSevenths) {
  cdSim s;
  if (cd_simMakeFile(&s, "incline-sphere.json", "ccp", NULL, NULL)) return;
  const double dt = s.scene.dt, r = s.scene.body[0].radius, gs = s.scene.gravity[0];
  const long nstep = 50;
  double cMax = 0.0, xOld[3], worst = 0.0;
  for (long k = 1; k <= nstep; k++) {
    if (stepKeep(&s, xOld)) break;
    const double *v = s.world->v;
    double rho = stepResidual(&s);
    CHECK(s.stats.converged);
    CHECK_MSG(s.world->contacts.ncon == 1, "step %ld: %d contacts", k, s.world->contacts.ncon);
    if (s.world->contacts.ncon != 1) break;
    double cv[3], phi = s.world->contacts.con[0].gap, om = fabs(v[4]);
    contactVelocity(&s, xOld, 0, cv);
    CHECK(hypot(cv[1], cv[2]) <= rho + 1e-12);
    double slip = rho + om * fabs(phi) / 2.0 + 1e-12;
    cMax = fmax(cMax, slip);
    CHECK_NEAR(v[0], r * v[4], slip);
    CHECK_NEAR(v[0], (double)k * 5.0 / 7.0 * gs * dt, 2.0 * cMax / 3.5);
    worst = fmax(worst, fabs(v[0] - r * v[4]));
  }
  printf("    sphere: v %.6f m/s after %ld steps (5/7 g sin t %.6f), max |v - omega r| %.1e m/s\n", s.world->v[0],
         nstep, nstep * 5.0 / 7.0 * gs * dt, worst);
  cd_simFree(&s);
}

/* Ten cubes stacked on the ground: every corner rests, strictly inside its cone (R2), so each
 * interface slips by <= rho and tilts by <= sqrt(5) rho / a per step (normal spread 4 rho,
 * tangential 2 rho, over the corner spacing 2a), and cube i (from 0 at the ground) moves at most
 * by sum_{j<=i} (rho + 2h |omega_j|) with |omega_j| <= (j + 1) sqrt(5) rho / a: for the top
 * cube (n = 10, h = a) |v| <= (n + sqrt(5) n (n + 1)) rho ~ 256 rho. Over 2 s that is the
 * displacement bound. */
CD_TEST(ccpCubeStackStandsStillForTwoSeconds) {
  cdSim s;
  if (cd_simMakeFile(&s, "cube-stack.json", "ccp", NULL, NULL)) return;
  const long nstep = 200;
  const int n = s.scene.nbody;
  double x0[30];
  if (n > 10) {
    cd_testFail(__FILE__, __LINE__, "the stack has %d cubes, expected 10", n);
    cd_simFree(&s);
    return;
  }
  memcpy(x0, s.world->x, (size_t)n * 3 * sizeof(double));
  double bound = 0.0;
  for (long k = 1; k <= nstep; k++) {
    if (cd_simStep(&s)) break;
    const cdWorld *w = s.world;
    double rho = stepResidual(&s);
    CHECK_MSG(s.stats.converged, "step %ld did not converge", k);
    CHECK_MSG(w->contacts.ncon == 4 * n, "step %ld: %d contacts", k, w->contacts.ncon);
    for (int i = 0; i < w->contacts.ncon; i++) {
      const cdContact *c = &w->contacts.con[i];
      double mu = w->cp.mu[i], margin = mu * c->lambda[0] - hypot(c->lambda[1], c->lambda[2]);
      CHECK_MSG(margin > sqrt(1.0 + mu * mu) * rho, "step %ld contact %d is not strictly inside its cone", k, i);
    }
    bound += s.scene.dt * (n + sqrt(5.0) * n * (n + 1)) * rho;
  }
  double worst = 0.0;
  for (int i = 0; i < 3 * n; i++) worst = fmax(worst, fabs(s.world->x[i] - x0[i]));
  printf("    stack: max displacement %.1e m in %ld steps (residual bound %.1e m)\n", worst, nstep, bound);
  CHECK_MSG(worst <= bound + 1e-12, "a cube moved %.3g m, the residual allows %.3g m", worst, bound);
  CHECK(worst <= 1e-3); /* and "still" at the scale of the 0.2 m cubes */
  cd_simFree(&s);
}

/* The stack's first step from zero impulses: primal's multiplier updates once every contact
 * sticks leave the Newton matrix as it was factored (D_i = rho_i I for each, ccp_primal.c
 * factorHeld), so the step solves with the factorization it has: fewer factorizations than
 * Newton steps (before: one each, 11 and 11 here), and the answer still meets the tolerance. */
CD_TEST(ccpColdStackReusesItsFactorization) {
  cdBackendOptions opt;
  memset(&opt, 0, sizeof opt);
  opt.solver = "primal";
  cdSim s;
  if (cd_simMakeFile(&s, "cube-stack.json", "ccp", &opt, NULL)) return;
  if (cd_simStep(&s) == 0) {
    const cdSolveStats *st = &s.stats;
    CHECK_MSG(st->converged && st->residual <= CD_CCP_NEWTON_TOL, "residual %g", st->residual);
    CHECK_MSG(st->iterations > 1 && st->factorizations >= 1 && st->factorizations < st->iterations,
              "%d factorizations for %d Newton steps", st->factorizations, st->iterations);
    printf("    cold stack: %d Newton steps, %d factorizations, residual %.1e\n", st->iterations, st->factorizations,
           st->residual);
  }
  cd_simFree(&s);
}

/* primal, apgd, pgs and ipm solve the same CCP: in lockstep on the sliding cube (kick, flight,
 * landing and hover: 20 steps) each answer is within (R3) of primal's, and each solver's first
 * step is within (R3) of the exact answer. */
CD_TEST(ccpSolversAgreeThroughThePipeline) {
  enum { NS = 4 };
  const char *names[NS] = {"primal", "apgd", "pgs", "ipm"};
  cdSim s[NS];
  for (int j = 0; j < NS; j++) {
    cdBackendOptions opt = {.solver = names[j]};
    if (cd_simMakeFile(&s[j], "sliding-cube.json", "ccp", &opt, NULL)) {
      for (int i = 0; i < j; i++) cd_simFree(&s[i]);
      return;
    }
  }
  double dmax[NS] = {0};
  for (long k = 1; k <= 20; k++) {
    for (int j = 1; j < NS; j++) syncState(&s[j], &s[0]);
    int bad = 0;
    for (int j = 0; j < NS; j++) bad |= cd_simStep(&s[j]);
    if (bad) break;
    for (int j = 0; j < NS; j++) {
      CHECK_MSG(s[j].stats.converged, "step %ld: %s did not converge", k, names[j]);
      if (k == 1) checkSlidingFirstStep(&s[j]);
    }
    for (int j = 1; j < NS; j++) {
      CHECK_MSG(sameProblem(&s[0], &s[j]), "step %ld: %s built a different problem", k, names[j]);
      double dv, ex = r3Excess(&s[0], &s[j], &dv);
      dmax[j] = fmax(dmax[j], dv);
      CHECK_MSG(ex <= 0.0, "step %ld: primal and %s differ by %.3g in velocity, %.3g over the bound", k, names[j], dv,
                ex);
    }
  }
  printf("    20 steps in lockstep: max ||v - v_primal||_M apgd %.1e, pgs %.1e, ipm %.1e\n", dmax[1], dmax[2], dmax[3]);
  for (int j = 0; j < NS; j++) cd_simFree(&s[j]);
}

/* post_vn / post_vt (and /contacts/normal_velocity in the output) are the model's contact
 * velocities: evaluated with the start-of-step lever arms the Jacobian used. A rolling sphere
 * never leaves the incline: its post-step normal velocity stays at the solver's accuracy
 * (with end-of-step arms it would read r omega dt v / r, ~0.3 m/s after 0.5 s). */
CD_TEST(postStepContactVelocityIsTheModelsOnARollingSphere) {
  cdSim s;
  if (cd_simMakeFile(&s, "incline-sphere.json", "ccp", NULL, NULL)) return;
  double xOld[3];
  long checked = 0;
  for (long k = 1; k <= 50; k++) {
    if (stepKeep(&s, xOld)) break;
    if (s.world->contacts.ncon != 1) continue;
    checked++;
    const cdContact *c = &s.world->contacts.con[0];
    double cv[3];
    contactVelocity(&s, xOld, 0, cv);
    /* the same velocities, only the arm differs: round-off apart when the arm is J's */
    CHECK_MSG(fabs(c->post_vn - cv[0]) <= 1e-12, "step %ld: post_vn %.6g, the model's c_N %.3g", k, c->post_vn,
              cv[0]);
    double dt1 = c->post_vt[0] - (cv[1] * c->t1[0] + cv[2] * c->t2[0]);
    CHECK(fabs(dt1) <= 1e-12);
  }
  /* the sphere rolls on the incline: one contact every step, or the test proved nothing */
  CHECK_MSG(checked == 50, "%ld of 50 steps had the one contact", checked);
  cd_simFree(&s);
}
