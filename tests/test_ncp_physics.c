/* test_ncp_physics.c: the exact Coulomb model (--model ncp) through the real pipeline, against
 * the discrete answers of NUMERICS.md: the sliding cube stops at the semi-implicit Euler
 * distance without lifting, at any slide angle (the cone is circular); an incline sticks, or
 * slides at g (sin - mu cos) from the first step; a sphere rolls at 5/7 g sin; a sphere rolls
 * on level ground for ever; ten cubes stand; without friction it is the CCP and the LCP.
 * (Resting cube-on-cube and sphere-on-cube, determinism and reliability run every model,
 * ncp included: test_resting.c, test_cli.c, test_reliability.c.)
 *
 * Every tolerance comes from the step's own residual, computed here from the problem the step
 * solved (w->cp). Per contact, with the impulse as a velocity l = lambda / meff (problem.h) and
 * ĉ = c̄ + (mu ||c̄_T||, 0, 0),
 *     r = l - Proj_K(l - ĉ),   p = l - r = Proj_K(l - ĉ),
 * and Moreau's decomposition gives exactly p ∈ K, ĉ - r ∈ K*, (ĉ - r)^T p = 0: p is an exact
 * Coulomb answer for the velocity ĉ - r. With rho = max_i ||r_i|| (m/s; ncp.h's residual times
 * ||g||_inf) and s = sqrt(1 + mu^2):
 *  (N1) a loaded contact (l_N > rho, so p != 0): if p is on the cone's boundary, ĉ - r is on
 *       K*'s, c̄_N + mu ||c̄_T|| - r_N = mu ||c̄_T - r_T||; if p is inside, ĉ = r. Either way
 *           |c̄_N| <= |r_N| + mu ||r_T|| <= s rho:
 *       the contact leaves the step at c_N = -phi/dt to s rho, so the next gap is dt c̄_N: no lift;
 *  (N2) mu l_N - ||l_T|| > s rho (l farther than rho inside K) puts p inside K, so ĉ = r: the
 *       contact sticks, ||c̄_T|| <= rho and |c̄_N| <= s rho;
 *  (N3) a loaded contact that slides (||c̄_T|| > rho) has p on the boundary, p_T = -mu p_N u with
 *       u the direction of c̄_T - r_T: its friction impulse is -mu lambda_N c̄_T / ||c̄_T|| to
 *           meff ((1 + mu) rho + mu l_N 2 rho / ||c̄_T||)
 *       (||l - p|| <= rho on each part, and the direction u is within 2 rho / ||c̄_T|| of c̄_T's).
 * A body's velocity change is the sum of its contacts' impulses over its mass, so (N3) summed
 * over the corners bounds each step's deceleration, and the sum over the steps the distance.
 * The contact velocity c = J(q_t) v+ is the pipeline's (start-of-step arms, as in J).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "cone.h"
#include "ncp.h"
#include "simtest.h"
#include "test.h"
#include "vec3.h"

#define GRAV 9.81

/* c̄ = G lambda + g of the problem the last step solved, into a new array (3 ncon), or NULL */
static double *stepCbar(const cdSim *s) {
  const cdContactProblem *p = &s->world->cp;
  double *c = cd_malloc((size_t)(p->ncon > 0 ? p->ncon : 1) * 3 * sizeof(double));
  if (!c) return NULL;
  cd_blockMatrixMul(&p->G, p->lambda, c);
  for (int k = 0; k < 3 * p->ncon; k++) c[k] += p->g[k];
  return c;
}

/* rho = max_i ||l_i - Proj_K(l_i - ĉ_i)|| (m/s) of the last step's problem and answer */
static double stepRho(const cdSim *s) {
  const cdContactProblem *p = &s->world->cp;
  if (p->ncon == 0) return 0.0;
  double *c = stepCbar(s), rho = 0.0;
  if (!c) return INFINITY;
  for (int i = 0; i < p->ncon; i++) {
    double w = 1.0 / cd_contactProblemMeff(p, i), mu = p->mu[i], a[3], pa[3];
    double ch[3] = {c[3 * i] + mu * hypot(c[3 * i + 1], c[3 * i + 2]), c[3 * i + 1], c[3 * i + 2]};
    for (int k = 0; k < 3; k++) a[k] = w * p->lambda[3 * i + k] - ch[k];
    cd_coneProject(mu, a, pa);
    double d0 = w * p->lambda[3 * i] - pa[0], d1 = w * p->lambda[3 * i + 1] - pa[1], d2 = w * p->lambda[3 * i + 2] - pa[2];
    rho = fmax(rho, sqrt(d0 * d0 + d1 * d1 + d2 * d2));
  }
  cd_free(c);
  return isfinite(rho) ? rho : INFINITY;
}

/* the discrete stopping distance of NUMERICS.md: v_k = v0 - k a dt, x_k = x_{k-1} + dt v_k */
static double eulerSlideDistance(double v0, double a, double dt) {
  double d = 0.0;
  for (int j = 1; v0 - j * a * dt > 0.0; j++) d += dt * (v0 - j * a * dt);
  return d;
}

/* (N3) summed over the loaded sliding contacts of the last step on body 0 (mass m): the bound
 * on |m dv_T - (sum of the Coulomb friction impulses)| / m, and the sum of lambda_N */
static double slideStepBound(const cdSim *s, double rho, double m, double *sumN) {
  const cdContactProblem *p = &s->world->cp;
  double *c = stepCbar(s), b = 0.0;
  *sumN = 0.0;
  if (!c) return INFINITY;
  for (int i = 0; i < p->ncon; i++) {
    double meff = cd_contactProblemMeff(p, i), mu = p->mu[i], ct = hypot(c[3 * i + 1], c[3 * i + 2]);
    *sumN += p->lambda[3 * i];
    if (ct <= rho) {
      b += meff * s->world->cp.mu[i] * rho * 2.0; /* sticking: friction anywhere in the cone's reach */
      continue;
    }
    b += meff * ((1.0 + mu) * rho + mu * (p->lambda[3 * i] / meff) * 2.0 * rho / ct);
  }
  cd_free(c);
  return b / m;
}

/* The sliding cube (0.2 m, 1 kg, v0 = 2 m/s, mu = 0.5, dt = 0.01) set sliding at angle deg.
 * Exact Coulomb with phi/dt: every corner stays loaded (the pitch torque mu N h is balanced by
 * moving load forward, mu h / a = 0.5 < 1), c̄_N = 0, so v_z = 0, omega = 0 and each step takes
 * mu g dt off the speed along the slide, until the step whose speed is below mu g dt sticks:
 * the discrete distance 0.3978 m, along the slide direction. */
static void slidingCubeAtAngle(double deg, double *dist, double *dirDeg, double *lift) {
  const double mu = 0.5, v0 = 2.0, dt = 0.01, a = mu * GRAV, th = deg * M_PI / 180.0;
  char set[128];
  snprintf(set, sizeof set, "/bodies/0/velocity=[%.17g, %.17g, 0]", v0 * cos(th), v0 * sin(th));
  const char *const sets[] = {set, NULL};
  cdSim s;
  if (cd_simMakeFile(&s, "sliding-cube.json", "ncp", NULL, sets)) return;
  const double e[2] = {cos(th), sin(th)}, s1 = sqrt(1.0 + mu * mu);
  double vPrev = v0, vzPrev = 0.0, vExact = v0, velErr = 0.0, distErr = 0.0, rhoMax = 0.0, xOld[3];
  double liftMax = 0.0, liftBound = 0.0;
  long stopped = 0;
  for (long k = 1; k <= 60; k++) {
    memcpy(xOld, s.world->x, sizeof xOld);
    if (cd_simStep(&s)) break;
    const cdWorld *w = s.world;
    double rho = stepRho(&s), sumN = 0.0;
    rhoMax = fmax(rhoMax, rho);
    CHECK_MSG(s.stats.converged, "%g deg, step %ld did not converge", deg, k);
    CHECK_MSG(w->contacts.ncon == 4, "%g deg, step %ld: %d contacts", deg, k, w->contacts.ncon);
    double along = w->v[0] * e[0] + w->v[1] * e[1], across = -w->v[0] * e[1] + w->v[1] * e[0];
    double om = cd_v3norm(&w->v[3]);
    /* (N1) on the four loaded corners: v_z and the rotation it would need are s rho-small; the
     * lowest corner starts the next step at dt c̄_N, plus the rotation's (omega dt)^2 a */
    CHECK_MSG(fabs(w->v[2]) <= s1 * rho + 0.1 * sqrt(3.0) * om + 1e-15, "%g deg, step %ld: v_z %.3g", deg, k, w->v[2]);
    liftBound = fmax(liftBound, dt * s1 * rho + om * om * dt * dt * 0.2);
    liftMax = fmax(liftMax, fabs(cd_simLowestZ(&s, 0)));
    /* (N3): the step's change of the velocity along the slide is -mu sum(lambda_N) / m to the
     * bound; and the momentum balance sum(lambda_N) = m (g dt + dv_z) holds to round-off */
    double bStep = slideStepBound(&s, rho, 1.0, &sumN);
    CHECK_NEAR(sumN, GRAV * dt + w->v[2] - vzPrev, 1e-14);
    if (vExact > a * dt) {
      vExact -= a * dt;
      CHECK_NEAR(along - vPrev, -mu * sumN, bStep + 1e-15);
    } else {
      vExact = 0.0;
    }
    /* the velocity error against the discrete answer accumulates the steps' bounds, and the
     * normal impulse's error mu |dv_z| */
    velErr += bStep + mu * fabs(w->v[2]) * 2.0;
    CHECK_MSG(fabs(along - vExact) <= velErr + 1e-12, "%g deg, step %ld: v %.12f, discrete %.12f (bound %.3g)", deg, k,
              along, vExact, velErr);
    CHECK_MSG(fabs(across) <= velErr + 1e-12, "%g deg, step %ld: the slide turned (v across %.3g)", deg, k, across);
    distErr += dt * velErr;
    if (!stopped && vExact == 0.0) stopped = k;
    vPrev = along;
    vzPrev = w->v[2];
  }
  double dx = s.world->x[0], dy = s.world->x[1];
  *dist = dx * e[0] + dy * e[1];
  *dirDeg = atan2(dy, dx) * 180.0 / M_PI;
  *lift = liftMax;
  double dref = eulerSlideDistance(v0, a, dt);
  printf("    %4.1f deg: stops at step %ld, %.9f m along the slide (discrete %.9f, bound %.1e), direction %.6f deg, "
         "max lift %.1e m (bound %.1e), rho max %.1e m/s\n",
         deg, stopped, *dist, dref, distErr, *dirDeg, liftMax, liftBound, rhoMax);
  CHECK_NEAR(*dist, dref, distErr + 1e-12);
  CHECK_NEAR(-dx * e[1] + dy * e[0], 0.0, distErr + 1e-12);
  CHECK(liftMax <= liftBound + 1e-12);
  CHECK(liftMax < 1e-6); /* the figure: no lift at all at the micrometre */
  cd_simFree(&s);
}

CD_TEST(ncpSlidingCubeStopsAtTheDiscreteDistanceWithoutLiftAtAnyAngle) {
  double d0, a0, l0, d45, a45, l45, d30, a30, l30;
  slidingCubeAtAngle(0.0, &d0, &a0, &l0);
  slidingCubeAtAngle(45.0, &d45, &a45, &l45);
  slidingCubeAtAngle(30.0, &d30, &a30, &l30);
  /* isotropic: the same distance whatever the angle (the LCP's 4-direction cone gives 0.5667 m
   * at 45 degrees), the direction kept */
  CHECK_NEAR(d45, d0, 1e-9);
  CHECK_NEAR(d30, d0, 1e-9);
  CHECK_NEAR(a45, 45.0, 1e-6);
  CHECK_NEAR(a30, 30.0, 1e-6);
}

/* Resting faces (a cube on the ground or on a cube: four corner contacts an interface). The
 * exact answer sticks every corner (mu > the friction the rest needs), but the four corners'
 * impulses are not unique (G is singular) and an answer may put some corners on their cone's
 * edge, where (N2) cannot prove from the impulses that they stick. Checked per interface
 * (contacts grouped by their upper body): at least one corner strictly inside (N2: it slips by
 * <= rho), every corner loaded ((N1): |c̄_N| <= s rho, so the face tilts at <= 2 s rho / 2a),
 * and every corner's slip ||c̄_T|| within 2 rho: the edge corners stick as the exact answer
 * does, so the face turns about its normal at <= (2 rho + rho) / 2a. Returns the count of
 * failing interfaces. */
static int interfacesStick(const cdSim *s, double rho, long step) {
  const cdWorld *w = s->world;
  int inside[64] = {0}, loaded[64] = {0}, total[64] = {0}, bad = 0;
  double slip[64] = {0};
  double *cb = stepCbar(s);
  if (!cb) return 1;
  for (int i = 0; i < w->contacts.ncon; i++) {
    const cdContact *c = &w->contacts.con[i];
    int b = c->body[1];
    if (b < 0 || b >= 64) continue;
    double mu = w->cp.mu[i], meff = cd_contactProblemMeff(&w->cp, i);
    inside[b] += (mu * c->lambda[0] - hypot(c->lambda[1], c->lambda[2])) / meff > sqrt(1.0 + mu * mu) * rho;
    loaded[b] += c->lambda[0] / meff > rho;
    slip[b] = fmax(slip[b], hypot(cb[3 * i + 1], cb[3 * i + 2]));
    total[b]++;
  }
  cd_free(cb);
  for (int b = 0; b < 64 && b < w->nbody; b++) {
    if (!total[b]) continue;
    if (inside[b] < 1 || loaded[b] < total[b] || !(slip[b] <= 2.0 * rho + 1e-15)) {
      cd_testFail(__FILE__, __LINE__,
                  "step %ld, the face under body %d: %d of %d corners strictly inside, %d loaded, slip %.3g (rho %.3g)",
                  step, b, inside[b], total[b], loaded[b], slip[b], rho);
      bad++;
    }
  }
  return bad;
}

/* The 30 degree incline (gravity tilted: g (sin 30, 0, -cos 30)); corners at arm a = 0.1 along
 * x and h = 0.1 below the centre. mu = 0.8 > tan 30: the face sticks (interfacesStick), so the
 * centre moves a step by at most 2 rho (slip) + sqrt(2) a 3 rho / 2a (the turn) + h (2 s rho +
 * (gmax - gmin) / dt) / (2a) (the tilt rate, from the loaded corners' normal velocities and the
 * gaps they start from: the creep bound of the CCP's test). */
CD_TEST(ncpCubeSticksOnTheInclineWhenMuExceedsTanTheta) {
  cdSim s;
  if (cd_simMakeFile(&s, "incline-cube.json", "ncp", NULL, NULL)) return;
  const double a = 0.1, h = 0.1, dt = s.scene.dt;
  double x0[3], bound = 0.0;
  memcpy(x0, s.world->x, sizeof x0);
  for (long k = 1; k <= 50; k++) {
    if (cd_simStep(&s)) break;
    const cdWorld *w = s.world;
    double rho = stepRho(&s), gmin = INFINITY, gmax = -INFINITY;
    CHECK(s.stats.converged);
    CHECK_MSG(w->contacts.ncon == 4, "step %ld: %d contacts", k, w->contacts.ncon);
    interfacesStick(&s, rho, k);
    for (int i = 0; i < w->contacts.ncon; i++) {
      gmin = fmin(gmin, w->contacts.con[i].gap);
      gmax = fmax(gmax, w->contacts.con[i].gap);
    }
    double s1 = sqrt(1.0 + 0.64);
    bound += dt * ((2.0 + 1.5 * sqrt(2.0)) * rho + h * (2.0 * s1 * rho + (gmax - gmin) / dt) / (2.0 * a));
  }
  double d = hypot(s.world->x[0] - x0[0], s.world->x[1] - x0[1]);
  printf("    incline mu 0.8: crept %.1e m in 50 steps (residual bound %.1e m)\n", d, bound);
  CHECK_MSG(d <= bound + 1e-12, "the cube crept %.3g m, the residual allows %.3g m", d, bound);
  cd_simFree(&s);
}

/* mu = 0.3 < tan 30: the cube slides at a = g (sin 30 - mu cos 30) = 2.3562872 m/s^2 from the
 * first step (no kick, no deficit: the CCP's first step is short by a mu^2 dt), on the ground:
 * its lowest corner stays at dt c̄_N (N1). */
CD_TEST(ncpCubeSlidesDownTheInclineAtTheCoulombAccelerationFromTheFirstStep) {
  const char *const sets[] = {"/materials/rough/friction=0.3", NULL};
  cdSim s;
  if (cd_simMakeFile(&s, "incline-cube.json", "ncp", NULL, sets)) return;
  const double mu = 0.3, dt = s.scene.dt, gs = s.scene.gravity[0], gc = -s.scene.gravity[2], s1 = sqrt(1.0 + mu * mu);
  const double acc = gs - mu * gc;
  double err = 0.0, rhoMax = 0.0, lowMax = 0.0;
  long n = 50;
  for (long k = 1; k <= n; k++) {
    if (cd_simStep(&s)) break;
    const cdWorld *w = s.world;
    double rho = stepRho(&s), sumN;
    rhoMax = fmax(rhoMax, rho);
    CHECK(s.stats.converged);
    /* (N3) summed over the corners, and the normal impulse m g cos dt to the normal drift */
    err += slideStepBound(&s, rho, 1.0, &sumN) + mu * 2.0 * fabs(w->v[2]);
    CHECK_MSG(fabs(w->v[2]) <= s1 * rho + 0.1 * sqrt(3.0) * cd_v3norm(&w->v[3]) + 1e-15, "step %ld: v_z %.3g", k,
              w->v[2]);
    CHECK_NEAR(w->v[0], acc * (double)k * dt, err + 1e-12);
    lowMax = fmax(lowMax, fabs(cd_simLowestZ(&s, 0)));
  }
  printf("    incline mu 0.3: v %.9f m/s after %ld steps (a t = %.9f, bound %.1e), lowest point within %.1e m "
         "(CCP: hovers at mu v dt, 3.5 mm at the end)\n",
         s.world->v[0], n, acc * n * dt, err, lowMax);
  CHECK(lowMax <= dt * s1 * rhoMax + 1e-9);
  cd_simFree(&s);
}

/* A solid sphere rolls without slipping (mu 0.8 >= 2/7 tan 30): the contact sticks (N2), so
 * v = omega (r + phi/2) to rho, and the momentum balance telescopes to v_x = n 5/7 g sin dt to
 * 2 max |c_T| / 3.5 (the CCP's test derives it). */
CD_TEST(ncpSphereRollsDownTheInclineAtFiveSevenths) {
  cdSim s;
  if (cd_simMakeFile(&s, "incline-sphere.json", "ncp", NULL, NULL)) return;
  const double dt = s.scene.dt, r = s.scene.body[0].radius, gs = s.scene.gravity[0];
  double cMax = 0.0, worst = 0.0;
  for (long k = 1; k <= 50; k++) {
    if (cd_simStep(&s)) break;
    const double *v = s.world->v;
    double rho = stepRho(&s);
    CHECK(s.stats.converged);
    CHECK_MSG(s.world->contacts.ncon == 1, "step %ld: %d contacts", k, s.world->contacts.ncon);
    if (s.world->contacts.ncon != 1) break;
    double phi = s.world->contacts.con[0].gap, slip = rho + fabs(v[4]) * fabs(phi) / 2.0 + 1e-12;
    cMax = fmax(cMax, slip);
    CHECK_NEAR(v[0], r * v[4], slip);
    CHECK_NEAR(v[0], (double)k * 5.0 / 7.0 * gs * dt, 2.0 * cMax / 3.5);
    worst = fmax(worst, fabs(v[0] - r * v[4]));
  }
  printf("    sphere: v %.9f m/s after 50 steps (5/7 g sin t %.9f), max |v - omega r| %.1e m/s\n", s.world->v[0],
         50 * 5.0 / 7.0 * gs * dt, worst);
  cd_simFree(&s);
}

/* Rolling without slip on level ground needs no friction and the model has no rolling
 * resistance: speed and spin are kept for 2 s (to the residual, accumulated) */
CD_TEST(ncpSphereRollingOnFlatGroundKeepsItsSpeed) {
  const char *scene =
      "{\"gravity\": [0, 0, -9.81], \"dt\": 0.01, \"steps\": 200, \"ground\": {\"height\": 0, \"material\": \"m\"},"
      " \"materials\": {\"m\": {\"friction\": 0.5}}, \"bodies\": [{\"name\": \"s\", \"shape\": \"sphere\","
      " \"radius\": 0.1, \"mass\": 1, \"position\": [0, 0, 0.1], \"velocity\": [1, 0, 0],"
      " \"angular_velocity\": [0, 10, 0], \"material\": \"m\"}]}";
  cdSim s;
  if (cd_simMake(&s, scene, "ncp", NULL)) return;
  double dv = 0.0, bound = 0.0;
  for (long k = 0; k < s.scene.nstep; k++) {
    if (cd_simStep(&s)) break;
    const double *v = s.world->v;
    /* a sticking contact's impulse moves v by at most its (N2) velocity error, 3.5 times over
     * for the spin (I = 2/5 m r^2) */
    bound += 3.5 * sqrt(1.25) * stepRho(&s);
    dv = fmax(dv, fabs(v[0] - 1.0) + 0.1 * fabs(v[4] - 10.0));
  }
  printf("    after 2 s: x = %.12f m, max |dv| + r |d omega| %.1e (bound %.1e)\n", s.world->x[0], dv, bound);
  CHECK(s.nonconverged == 0);
  CHECK(dv <= bound + 1e-15);
  cd_simFree(&s);
}

/* Ten cubes on the ground: every face sticks (interfacesStick), and cube i moves at most
 * sum_{j<=i} (slip and turn (2 + 1.5 sqrt 2) rho + 2h |omega_j|) a step, the tilt rates adding
 * up to |omega_j| <= (j + 1) sqrt(5) s rho / a (the CCP's test's bound, with the face's turn and
 * (N1)'s s rho): (n (2 + 1.5 sqrt 2) + sqrt(5) n (n + 1)) s rho for the top cube. */
CD_TEST(ncpCubeStackStandsStillForTwoSeconds) {
  cdSim s;
  if (cd_simMakeFile(&s, "cube-stack.json", "ncp", NULL, NULL)) return;
  const int n = s.scene.nbody;
  double x0[30], bound = 0.0;
  if (n > 10) {
    cd_testFail(__FILE__, __LINE__, "the stack has %d cubes, expected 10", n);
    cd_simFree(&s);
    return;
  }
  memcpy(x0, s.world->x, (size_t)n * 3 * sizeof(double));
  for (long k = 1; k <= 200; k++) {
    if (cd_simStep(&s)) break;
    const cdWorld *w = s.world;
    double rho = stepRho(&s), s1 = sqrt(1.0 + 0.25);
    CHECK_MSG(s.stats.converged, "step %ld did not converge", k);
    CHECK_MSG(w->contacts.ncon == 4 * n, "step %ld: %d contacts", k, w->contacts.ncon);
    interfacesStick(&s, rho, k);
    bound += s.scene.dt * (n * (2.0 + 1.5 * sqrt(2.0)) + sqrt(5.0) * n * (n + 1)) * s1 * rho;
  }
  double worst = 0.0;
  for (int i = 0; i < 3 * n; i++) worst = fmax(worst, fabs(s.world->x[i] - x0[i]));
  printf("    stack: max displacement %.1e m in 200 steps (residual bound %.1e m), %ld steps fell back to the fixed "
         "point\n",
         worst, bound, s.world->warn_fallback);
  CHECK_MSG(worst <= bound + 1e-12, "a cube moved %.3g m, the residual allows %.3g m", worst, bound);
  CHECK(worst <= 1e-6);
  cd_simFree(&s);
}

/* Without friction K_0 is the ray and ĉ = c̄: the NCP is the CCP is the frictionless LCP
 * (seed 004), a monotone problem with unique velocities. In lockstep on the sphere pile (the
 * LCP and CCP worlds take the NCP world's state before each step, so that all three solve the
 * same problem), the LCP's answer (Lemke: exact) must have an NCP residual at the LCP's own
 * tolerance, and the three worlds' velocities must agree: for a monotone problem two answers
 * with residuals r_a, r_b satisfy ||v_a - v_b||_M^2 <= (bound of test_ccp_physics.c's (R3)),
 * here used with the LCP's answer as the (nearly) exact one. */
static void syncState(cdSim *dst, const cdSim *src) {
  size_t nb = (size_t)dst->world->nbody;
  memcpy(dst->world->x, src->world->x, nb * 3 * sizeof(double));
  memcpy(dst->world->q, src->world->q, nb * 4 * sizeof(double));
  memcpy(dst->world->v, src->world->v, nb * 6 * sizeof(double));
  memcpy(dst->world->R, src->world->R, nb * 9 * sizeof(double));
  for (int i = 0; i < dst->world->nbody; i++) cd_worldUpdateInertia(&dst->scene, dst->world, i);
}

/* ||v_a - v_b||_M over the bodies of a */
static double massNormDiff(const cdSim *a, const double *vb) {
  double s = 0.0;
  for (int i = 0; i < a->world->nbody; i++) {
    if (a->world->dof[i] < 0) continue;
    const double *va = &a->world->v[6 * i], *wb = &vb[6 * i];
    double dv[3], dw[3], Iw[9], Idw[3];
    for (int e = 0; e < 3; e++) {
      dv[e] = va[e] - wb[e];
      dw[e] = va[3 + e] - wb[3 + e];
    }
    cd_m3rotateDiag(Iw, &a->world->R[9 * (size_t)i], a->scene.body[i].inertia);
    cd_m3mulv(Idw, Iw, dw);
    s += a->scene.body[i].mass * cd_v3dot(dv, dv) + cd_v3dot(dw, Idw);
  }
  return sqrt(s);
}

/* (R3) with unit steps on the impulses: r = lambda - Proj_K(lambda - c̄), p = lambda - r;
 * ||v_a - v_b||_M^2 <= r_a^T (p_a + c̄_a - lambda_b - c̄_b + r_b) + r_b^T (p_b + c̄_b - lambda_a - c̄_a + r_a) */
static double r3Bound(const cdContactProblem *p, const double *la, const double *lb) {
  int n = 3 * p->ncon;
  double *ca = cd_malloc((size_t)2 * n * sizeof(double)), *cb = ca ? ca + n : NULL, sa = 0.0, sb = 0.0;
  if (!ca) return INFINITY;
  cd_blockMatrixMul(&p->G, la, ca);
  cd_blockMatrixMul(&p->G, lb, cb);
  for (int k = 0; k < n; k++) {
    ca[k] += p->g[k];
    cb[k] += p->g[k];
  }
  for (int i = 0; i < p->ncon; i++) {
    double ra[3], pa[3], rb[3], pb[3], za[3], zb[3];
    for (int k = 0; k < 3; k++) {
      za[k] = la[3 * i + k] - ca[3 * i + k];
      zb[k] = lb[3 * i + k] - cb[3 * i + k];
    }
    cd_coneProject(p->mu[i], za, pa);
    cd_coneProject(p->mu[i], zb, pb);
    for (int k = 0; k < 3; k++) {
      ra[k] = la[3 * i + k] - pa[k];
      rb[k] = lb[3 * i + k] - pb[k];
    }
    for (int k = 0; k < 3; k++) {
      sa += ra[k] * (pa[k] + ca[3 * i + k] - lb[3 * i + k] - cb[3 * i + k] + rb[k]);
      sb += rb[k] * (pb[k] + cb[3 * i + k] - la[3 * i + k] - ca[3 * i + k] + ra[k]);
    }
  }
  cd_free(ca);
  return fabs(sa) + fabs(sb);
}

CD_TEST(frictionlessNcpEqualsTheCcpAndTheLcpOnASpherePile) {
  const char *const sets[] = {"/materials/grain/friction=0", NULL};
  const char *models[3] = {"ncp", "ccp", "lcp"};
  cdSim s[3];
  for (int m = 0; m < 3; m++)
    if (cd_simMakeFile(&s[m], "sphere-pile.json", models[m], NULL, sets)) {
      for (int j = 0; j < m; j++) cd_simFree(&s[j]);
      return;
    }
  double worst[3] = {0, 0, 0};
  long contactSteps = 0;
  for (long k = 1; k <= 40; k++) {
    for (int m = 1; m < 3; m++) syncState(&s[m], &s[0]);
    int bad = 0;
    for (int m = 0; m < 3; m++) bad |= cd_simStep(&s[m]);
    if (bad) break;
    const cdContactProblem *p = &s[0].world->cp;
    if (p->ncon == 0) continue;
    contactSteps++;
    int same = 1;
    for (int m = 1; m < 3; m++) {
      same &= s[m].world->cp.ncon == p->ncon;
      for (int q = 0; same && q < 3 * p->ncon; q++) same &= s[m].world->cp.g[q] == p->g[q];
    }
    CHECK_MSG(same, "step %ld: the worlds built different problems", k);
    if (!same) break;
    for (int m = 0; m < 3; m++) CHECK_MSG(s[m].stats.converged, "step %ld: %s did not converge", k, models[m]);
    double work[3 * 200];
    if (p->ncon > 200) break;
    double lcpRes = cd_ncpResidualOf(p, s[2].world->cp.lambda, work, NULL);
    CHECK_MSG(lcpRes <= 1e-8, "step %ld: the LCP's answer has exact-Coulomb residual %.3g", k, lcpRes);
    for (int m = 0; m < 2; m++) {
      double dv = massNormDiff(&s[m], s[2].world->v), B = r3Bound(p, s[m].world->cp.lambda, s[2].world->cp.lambda);
      worst[m] = fmax(worst[m], dv);
      /* 1e-9: round-off of the products G lambda and M^-1 J^T lambda */
      CHECK_MSG(dv <= sqrt(B) + 1e-9, "step %ld: ||v_%s - v_lcp||_M %.3g above the bound %.3g", k, models[m], dv,
                sqrt(B) + 1e-9);
    }
  }
  printf("    frictionless pile, %ld contact steps: max ||v - v_lcp||_M ncp %.1e, ccp %.1e\n", contactSteps, worst[0],
         worst[1]);
  CHECK(contactSteps >= 30);
  for (int m = 0; m < 3; m++) cd_simFree(&s[m]);
}
