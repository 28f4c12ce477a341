/* test_lcp_physics.c: the LCP model (--model lcp) through the whole pipeline (collide,
 * problem build, solve, integrate) on scenes whose discrete answer is known (DESIGN §5,
 * NUMERICS.md): a sliding cube's stopping distance and flatness, a cube on an incline that
 * sticks or slides, a rolling sphere, a standing stack, and the direction bias of the
 * polygonal cone. Semi-implicit Euler with an exactly solved LCP reproduces the discrete
 * answers to roundoff, so the tolerances are the solver tolerance propagated, not the
 * integrator's error. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ccp_velocity.h"
#include "lcp.h"
#include "problem.h"
#include "simtest.h"
#include "test.h"

#define GRAV 9.81

static const char *kSlidingCube =
    "{\"gravity\": [0, 0, -9.81], \"dt\": 0.01, \"steps\": 100,"
    " \"ground\": {\"height\": 0, \"material\": \"m\"},"
    " \"materials\": {\"m\": {\"friction\": 0.5}},"
    " \"bodies\": [{\"name\": \"cube\", \"shape\": \"cube\", \"size\": 0.2, \"mass\": 1,"
    "   \"position\": [0, 0, 0.1], \"velocity\": [2, 0, 0], \"material\": \"m\"}]}";

/* the discrete stopping distance of NUMERICS.md: v_k = v0 - k a dt, x_k = x_{k-1} + dt v_k */
static double eulerSlideDistance(double v0, double a, double dt, int *K) {
  int k = (int)ceil(v0 / (a * dt));
  double d = 0.0;
  for (int j = 1; j < k; j++) d += dt * (v0 - j * a * dt);
  if (K) *K = k;
  return d;
}

CD_TEST(lcpSlidingCubeStopsAtTheSemiImplicitEulerDistance) {
  /* Lemke is exact to roundoff; bgs stops at ||min(z, Az + b)|| <= 1e-8, so its contact
   * velocities are right to ~1e-8 and the thresholds below grow accordingly */
  const char *solvers[2] = {NULL, "bgs"};
  for (int si = 0; si < 2; si++) {
    double vtol = si ? 1e-6 : 1e-9;
    cdBackendOptions opt = {.solver = solvers[si], .friction_dirs = 4};
    cdSim sim;
    if (cd_simMake(&sim, kSlidingCube, "lcp", &opt)) return;
    int K;
    double dref = eulerSlideDistance(2.0, 0.5 * GRAV, 0.01, &K);
    double zmax = 0.0, vnmax = 0.0, x0 = sim.world->x[0], z0 = sim.world->x[2], resmax = 0.0;
    int stop_step = -1, minc = 1 << 30, maxc = 0;
    for (long k = 0; k < sim.scene.nstep; k++) {
      if (cd_simStep(&sim)) break;
      const cdWorld *w = sim.world;
      zmax = fmax(zmax, fabs(w->x[2] - z0));
      resmax = fmax(resmax, sim.stats.residual);
      for (int c = 0; c < w->contacts.ncon; c++)
        if (w->contacts.con[c].lambda[0] > 0) vnmax = fmax(vnmax, fabs(w->contacts.con[c].post_vn));
      minc = w->contacts.ncon < minc ? w->contacts.ncon : minc;
      maxc = w->contacts.ncon > maxc ? w->contacts.ncon : maxc;
      if (stop_step < 0 && fabs(w->v[0]) < vtol) stop_step = (int)k + 1;
    }
    double d = sim.world->x[0] - x0;
    printf("    %s: %d contacts, stops after %d steps (Euler: %d) at %.10f m (Euler: %.10f m), max |dz| %.1e, "
           "max |post v_n| %.1e, max residual %.1e, solver %s\n",
           solvers[si] ? solvers[si] : "default", minc, stop_step, K, d, dref, zmax, vnmax, resmax,
           sim.backend->solverName(sim.bstate));
    CHECK(minc >= 4 && maxc <= 8);
    CHECK(sim.nonconverged == 0);
    CHECK(stop_step == K);
    /* per step the impulse is exact to the residual (<= 1e-8 for bgs), so the distance is
     * exact to ~K dt residual */
    CHECK_NEAR(d, dref, 1e-6);
    CHECK_NEAR(d, 0.3978, 5e-5);
    CHECK_MSG(zmax <= vtol, "the cube lifts or sinks by %.3g m", zmax);
    CHECK_MSG(vnmax <= vtol, "loaded contact leaves the ground at %.3g m/s", vnmax);
    CHECK_NEAR(sim.world->v[1], 0.0, vtol);
    for (int t = 3; t < 6; t++) CHECK_NEAR(sim.world->v[t], 0.0, 10 * vtol); /* no tipping, no yaw */
    cd_simFree(&sim);
  }
}

/* a cube (or sphere) at rest on the ground under gravity tilted by 30 degrees about y: an
 * incline of 30 degrees whose downhill direction is +x */
static void inclineScene(char *buf, size_t n, const char *shape, double mu, int steps) {
  double th = 30.0 * M_PI / 180.0;
  snprintf(buf, n,
           "{\"gravity\": [%.17g, 0, %.17g], \"dt\": 0.01, \"steps\": %d,"
           " \"ground\": {\"height\": 0, \"material\": \"m\"},"
           " \"materials\": {\"m\": {\"friction\": %.17g}},"
           " \"bodies\": [{\"name\": \"b\", \"shape\": \"%s\", %s, \"mass\": 1, \"position\": [0, 0, 0.1],"
           " \"material\": \"m\"}]}",
           GRAV * sin(th), -GRAV * cos(th), steps, mu, shape, strcmp(shape, "cube") ? "\"radius\": 0.1" : "\"size\": 0.2");
}

CD_TEST(lcpCubeOnAnInclineSticksWhenMuExceedsTanTheta) {
  /* mu = 0.8 > tan 30 = 0.577: the friction cone holds it; the LCP's sticking contact has
   * zero post-step slip, so it never moves */
  char scene[2048];
  inclineScene(scene, sizeof scene, "cube", 0.8, 100);
  cdSim sim;
  if (cd_simMake(&sim, scene, "lcp", NULL)) return;
  double x0[3];
  memcpy(x0, sim.world->x, sizeof x0);
  cd_simRun(&sim, sim.scene.nstep);
  double dx = 0.0;
  for (int t = 0; t < 3; t++) dx = fmax(dx, fabs(sim.world->x[t] - x0[t]));
  printf("    mu 0.8: max displacement after 1 s %.1e m\n", dx);
  CHECK(sim.nonconverged == 0);
  CHECK_MSG(dx <= 1e-9, "the cube creeps by %.3g m", dx);
  cd_simFree(&sim);
}

/* least-squares slope of v_x over steps k0..k1 (velocities in vx[], one per step) */
static double slope(const double *vx, int k0, int k1, double dt) {
  double st = 0, sv = 0, stt = 0, stv = 0;
  int n = k1 - k0 + 1;
  for (int k = k0; k <= k1; k++) {
    double t = k * dt;
    st += t, sv += vx[k], stt += t * t, stv += t * vx[k];
  }
  return (n * stv - st * sv) / (n * stt - st * st);
}

CD_TEST(lcpCubeOnAnInclineSlidesAtGTimesSinMinusMuCos) {
  /* mu = 0.3 < tan 30: it slides with a = g (sin 30 - mu cos 30) = 2.3563 m/s^2; downhill is
   * +x, along the direction d_0 = t1, so the polygon is exact here */
  char scene[2048];
  inclineScene(scene, sizeof scene, "cube", 0.3, 50);
  cdSim sim;
  if (cd_simMake(&sim, scene, "lcp", NULL)) return;
  double vx[51], zmax = 0.0, z0 = sim.world->x[2];
  vx[0] = 0.0;
  for (int k = 1; k <= 50; k++) {
    if (cd_simStep(&sim)) break;
    vx[k] = sim.world->v[0];
    zmax = fmax(zmax, fabs(sim.world->x[2] - z0));
  }
  double th = 30.0 * M_PI / 180.0, a = GRAV * (sin(th) - 0.3 * cos(th)), am = slope(vx, 1, 50, 0.01);
  printf("    mu 0.3: measured a = %.10f m/s^2, g (sin - mu cos) = %.10f, max |dz| %.1e\n", am, a, zmax);
  CHECK(sim.nonconverged == 0);
  CHECK_NEAR(am, a, 1e-8 * a);
  /* every step the same: v_k = k a dt exactly up to the solver tolerance */
  CHECK_NEAR(vx[50], 50 * a * 0.01, 1e-8);
  CHECK(zmax <= 1e-9);
  cd_simFree(&sim);
}

CD_TEST(lcpSphereRollsDownAnInclineWithoutSlipping) {
  /* mu = 0.8: rolling, a = 5/7 g sin 30 = 3.5036 m/s^2 and v = omega r at every step (the
   * sticking contact's post-step slip is zero) */
  char scene[2048];
  inclineScene(scene, sizeof scene, "sphere", 0.8, 50);
  cdSim sim;
  if (cd_simMake(&sim, scene, "lcp", NULL)) return;
  double vx[51], slip = 0.0;
  vx[0] = 0.0;
  for (int k = 1; k <= 50; k++) {
    if (cd_simStep(&sim)) break;
    const double *v = sim.world->v;
    vx[k] = v[0];
    /* contact point velocity: v + omega x (-r z) = (v_x - omega_y r, v_y + omega_x r, v_z) */
    slip = fmax(slip, fabs(v[0] - 0.1 * v[4]));
  }
  double th = 30.0 * M_PI / 180.0, a = 5.0 / 7.0 * GRAV * sin(th), am = slope(vx, 1, 50, 0.01);
  printf("    sphere: measured a = %.10f m/s^2, 5/7 g sin = %.10f, max |v - omega r| %.1e\n", am, a, slip);
  CHECK(sim.nonconverged == 0);
  CHECK_NEAR(am, a, 1e-8 * a);
  CHECK(slip <= 1e-9);
  cd_simFree(&sim);
}

CD_TEST(lcpSphereRollingOnFlatGroundKeepsItsSpeed) {
  /* a sphere rolling without slip on level ground (v = omega x r) needs no friction, and the
   * model has no rolling resistance: the LCP must give it no tangential impulse, so it keeps
   * its speed and spin exactly (to the solver tolerance) for 2 s. This is why a sphere pile
   * never comes to rest on the ground: its bottom layer rolls away (README) */
  const char *scene =
      "{\"gravity\": [0, 0, -9.81], \"dt\": 0.01, \"steps\": 200, \"ground\": {\"height\": 0, \"material\": \"m\"},"
      " \"materials\": {\"m\": {\"friction\": 0.5}}, \"bodies\": [{\"name\": \"s\", \"shape\": \"sphere\","
      " \"radius\": 0.1, \"mass\": 1, \"position\": [0, 0, 0.1], \"velocity\": [1, 0, 0],"
      " \"angular_velocity\": [0, 10, 0], \"material\": \"m\"}]}";
  cdSim sim;
  if (cd_simMake(&sim, scene, "lcp", NULL)) return;
  double dv = 0.0, slip = 0.0;
  for (long k = 0; k < sim.scene.nstep; k++) {
    if (cd_simStep(&sim)) break;
    const double *v = sim.world->v;
    dv = fmax(dv, fabs(v[0] - 1.0) + fabs(v[4] - 10.0));
    slip = fmax(slip, fabs(v[0] - 0.1 * v[4]));
  }
  printf("    after 2 s: x = %.12f m (1 m/s x 2 s = 2), max |dv| + |d omega| %.1e, max slip %.1e\n", sim.world->x[0], dv, slip);
  CHECK(sim.nonconverged == 0);
  CHECK(dv <= 1e-9);
  CHECK(slip <= 1e-9);
  CHECK_NEAR(sim.world->x[0], 2.0, 1e-8);
  cd_simFree(&sim);
}

/* a stack of k cubes (0.2 m, 1 kg) resting exactly on each other on the ground, 200 steps */
static void stackScene(char *scene, size_t size, int k) {
  int len = snprintf(scene, size,
                     "{\"gravity\": [0, 0, -9.81], \"dt\": 0.01, \"steps\": 200,"
                     " \"ground\": {\"height\": 0, \"material\": \"m\"},"
                     " \"materials\": {\"m\": {\"friction\": 0.5}}, \"bodies\": [");
  for (int b = 0; b < k; b++)
    len += snprintf(scene + len, size - (size_t)len,
                    "%s{\"name\": \"c%d\", \"shape\": \"cube\", \"size\": 0.2, \"mass\": 1,"
                    " \"position\": [0, 0, %.17g], \"material\": \"m\"}",
                    b ? ", " : "", b, 0.1 + 0.2 * b);
  snprintf(scene + len, size - (size_t)len, "]}");
}

CD_TEST(lcpStackOfTenCubesStandsStill) {
  /* ten cubes resting exactly on each other (gaps 0), 40 contacts, n = 240: the default
   * picks Lemke. Each step's LCP gives v+ = 0 to its residual. On this nearly degenerate
   * problem a step may still fall back to bgs (tolerance 1e-8; measured: Lemke solves all
   * 200 steps to 1e-10, the stack moves 1.4e-11 m). The bound covers a fallback:
   * a residual r allows body velocity errors of ~20 r on this stack (G singular; measured at
   * the solver level in test_lcp.c), over 2 s that is 2 s x 20 x 2.5e-8 = 1e-6 m at most,
   * and the phi/dt stabilisation pulls penetration back each step; 1e-7 m is asserted
   * (measured 1.3e-8 m), with every step's residual <= 1e-7. */
  char scene[4096];
  stackScene(scene, sizeof scene, 10);
  cdSim sim;
  if (cd_simMake(&sim, scene, "lcp", NULL)) return;
  double x0[30];
  memcpy(x0, sim.world->x, sizeof x0);
  double dmax = 0.0, resmax = 0.0;
  int itmax = 0, ncon = 0;
  for (long k = 0; k < sim.scene.nstep; k++) {
    if (cd_simStep(&sim)) break;
    resmax = fmax(resmax, sim.stats.residual);
    itmax = sim.stats.iterations > itmax ? sim.stats.iterations : itmax;
    ncon = sim.world->contacts.ncon;
    for (int t = 0; t < 30; t++) dmax = fmax(dmax, fabs(sim.world->x[t] - x0[t]));
  }
  printf("    %d contacts, solver %s, max iterations a step %d, max residual %.1e, %ld fallbacks, %ld steps not "
         "converged, max displacement over 2 s %.1e m\n",
         ncon, sim.backend->solverName(sim.bstate), itmax, resmax, sim.world->warn_fallback, sim.nonconverged, dmax);
  CHECK_MSG(resmax <= 1e-7, "a step's residual reaches %.3g", resmax);
  CHECK_MSG(dmax <= 1e-7, "the stack moves by %.3g m", dmax);
  cd_simFree(&sim);
}

CD_TEST(lcpPolygonalConeBiasOfASlidingCubeShrinksWithM) {
  /* the cube sent at 22.5 degrees to the pyramid's edges t1 = x (and at 10 degrees, a
   * generic angle, and at 45): at m = 4 the friction impulse sits on the vertex most opposed
   * to the slip, so the cube veers; the deviation of its stopping direction shrinks with m
   * (it is 0 by symmetry when the angle is a direction or the bisector of two).
   * The distance at 45 degrees, derived: the m directions d_k = (cos 2 pi k/m, sin 2 pi k/m)
   * span the polygon {sum_k alpha_k d_k : sum_k alpha_k <= mu lambda_N}, whose edges lie
   * mu cos(pi/m) from the centre. Along a bisector of two directions the most opposed part
   * of the polygon is a whole edge, and every point of it has the component mu cos(pi/m)
   * lambda_N against the slip (the split between its two ends, not unique, only moves the
   * impulse along the edge, across the slip, where the symmetry of the problem leaves it at
   * the middle); along a direction it is the vertex, mu lambda_N. 45 degrees is the bisector
   * of x and y for m = 4 and a direction for m = 8 and 16: the cube slides straight and
   * decelerates at mu g / sqrt 2 (m = 4) or mu g; the semi-implicit Euler distance follows
   * (eulerSlideDistance, exact for an exactly solved LCP: 1e-6 as for the axis test). */
  const double angles[3] = {22.5, 10.0, 45.0};
  for (int ai = 0; ai < 3; ai++) {
    double prev = INFINITY;
    for (int m = 4; m <= 16; m *= 2) {
      double th = angles[ai] * M_PI / 180.0;
      char vel[128];
      snprintf(vel, sizeof vel, "/bodies/0/velocity=[%.17g, %.17g, 0]", 2.0 * cos(th), 2.0 * sin(th));
      const char *sets[2] = {vel, NULL};
      cdBackendOptions opt = {.friction_dirs = m};
      cdSim sim;
      if (cd_simMakeSet(&sim, kSlidingCube, "lcp", &opt, sets)) return;
      cd_simRun(&sim, sim.scene.nstep);
      double dx = sim.world->x[0], dy = sim.world->x[1], dirn = atan2(dy, dx) * 180.0 / M_PI;
      double dev = fabs(dirn - angles[ai]), yaw = fabs(sim.world->q[3]);
      printf("    cube at %4.1f deg, m = %2d: stops at %.4f m in direction %.3f deg (deviation %.3f deg), "
             "yaw quaternion |z| %.1e\n",
             angles[ai], m, hypot(dx, dy), dirn, dev, yaw);
      CHECK(sim.nonconverged == 0);
      CHECK(fabs(sim.world->v[0]) + fabs(sim.world->v[1]) < 1e-12); /* stopped within 1 s */
      CHECK_MSG(dev < prev || dev < 1e-9, "%.1f deg, m = %d: deviation %.4f, %.4f at m / 2", angles[ai], m, dev, prev);
      if (angles[ai] == 45.0) {
        double a = 0.5 * GRAV * (m == 4 ? cos(M_PI / 4) : 1.0);
        CHECK_NEAR(hypot(dx, dy), eulerSlideDistance(2.0, a, 0.01, NULL), 1e-6);
        CHECK_NEAR(dev, 0.0, 1e-6);
      }
      prev = dev;
      cd_simFree(&sim);
    }
  }
}

CD_TEST(lcpDelassusProductThroughTheBodiesIsG) {
  /* cd_lcpDelassusMul takes y = (J M^-1)(J^T x) where that is cheaper than G x, and G x
   * otherwise. On the 10-cube stack (40 contacts, 4 a face: ~12 blocks a row of G, 9
   * multiply-adds each, against 72 a contact through the bodies) it must take the bodies'
   * form and agree with G to roundoff: each entry is a sum of ~50 products of entries of J
   * M^-1 and J, so 1e-13 of ||G||_inf ||x||_inf bounds it (eps 2.2e-16 times the terms and
   * their magnitudes). On one sphere (one contact, one block) it must keep G, bit for bit.
   * While G is not built the product is J (M^-1 (J^T x)), held to the same bound. */
  char scene[4096];
  stackScene(scene, sizeof scene, 10);
  const char *sphere =
      "{\"gravity\": [0, 0, -9.81], \"dt\": 0.01, \"steps\": 2,"
      " \"ground\": {\"height\": 0, \"material\": \"m\"}, \"materials\": {\"m\": {\"friction\": 0.5}},"
      " \"bodies\": [{\"name\": \"s\", \"shape\": \"sphere\", \"radius\": 0.1, \"mass\": 1,"
      " \"position\": [0, 0, 0.1], \"material\": \"m\"}]}";
  const char *scenes[2] = {scene, sphere};
  for (int sc = 0; sc < 2; sc++) {
    cdSim sim;
    if (cd_simMake(&sim, scenes[sc], "lcp", NULL)) return;
    CHECK(cd_simStep(&sim) == 0);
    cdContactProblem *p = &sim.world->cp;
    CHECK(p->ncon == (sc ? 1 : 40) && cd_contactProblemDelassus(p) == 0);
    size_t nb = cd_lcpDelassusScratch(p);
    CHECK(nb == (sc ? 0 : 6 * (size_t)p->nbody));
    int n3 = 3 * p->ncon;
    double *x = malloc(3 * (size_t)n3 * sizeof *x + (nb ? nb : 1) * sizeof *x), *y1 = x + n3, *y2 = y1 + n3;
    double *wb = nb ? y2 + n3 : NULL, xmax = 0.0, gmax = 0.0, err = 0.0;
    CHECK(x != NULL);
    if (!x) return;
    for (int k = 0; k < n3; k++) x[k] = sin(1.7 * k + 0.3), xmax = fmax(xmax, fabs(x[k]));
    for (int i = 0; i < p->ncon; i++)
      for (int r = 0; r < 3; r++) {
        double row = 0.0;
        for (int t = p->G.rowptr[i]; t < p->G.rowptr[i + 1]; t++)
          for (int c = 0; c < 3; c++) row += fabs(p->G.val[9 * (size_t)t + 3 * r + c]);
        gmax = fmax(gmax, row);
      }
    cd_blockMatrixMul(&p->G, x, y1);
    cd_lcpDelassusMul(p, x, y2, wb);
    for (int k = 0; k < n3; k++) err = fmax(err, fabs(y1[k] - y2[k]));
    printf("    %s: %d contacts, %d blocks of G, %s form, max |G x - product| %.2e (||G|| ||x|| %.2e)\n",
           sc ? "one sphere" : "10-cube stack", p->ncon, p->G.rowptr[p->ncon], nb ? "bodies'" : "G's", err, gmax * xmax);
    if (sc) CHECK(err == 0.0);
    else CHECK_MSG(err <= 1e-13 * gmax * xmax, "max difference %.3g", err);
    if (!sc) {
      /* while G is not built (the active-set method's body form needs none) the product is
       * J (M^-1 (J^T x)): the same bound */
      p->delassus_pending = 1;
      CHECK(cd_lcpDelassusScratch(p) == 6 * (size_t)p->nbody);
      cd_lcpDelassusMul(p, x, y2, wb);
      p->delassus_pending = 0;
      double err2 = 0.0;
      for (int k = 0; k < n3; k++) err2 = fmax(err2, fabs(y1[k] - y2[k]));
      printf("    10-cube stack, G not built: max |G x - J M^-1 J^T x| %.2e\n", err2);
      CHECK_MSG(err2 <= 1e-13 * gmax * xmax, "max difference %.3g", err2);
    }
    free(x);
    cd_simFree(&sim);
  }
}

CD_TEST(lcpDelassusProductLeavesOutContactsWithoutImpulseBitForBit) {
  /* cd_lcpDelassusMul leaves out the contacts with x_i = 0 (lcp.c: their products are zeros,
   * and a sum that starts at +0 never becomes -0): through G by columns (a row of three
   * spheres on the ground: 5 contacts, G's form) and through the bodies (the 10-cube stack),
   * the same bits as the products over every contact, cd_blockMatrixMul and J M^-1 (J^T x)
   * with cd_ccpJtMul; x with zero contacts (+0 and -0) among nonzero ones */
  char stack[4096];
  stackScene(stack, sizeof stack, 10);
  const char *row =
      "{\"gravity\": [0, 0, -9.81], \"dt\": 0.01, \"steps\": 2,"
      " \"ground\": {\"height\": 0, \"material\": \"m\"}, \"materials\": {\"m\": {\"friction\": 0.5}},"
      " \"bodies\": [{\"name\": \"a\", \"shape\": \"sphere\", \"radius\": 0.1, \"mass\": 1,"
      " \"position\": [0, 0, 0.0999], \"material\": \"m\"},"
      " {\"name\": \"b\", \"shape\": \"sphere\", \"radius\": 0.1, \"mass\": 2,"
      " \"position\": [0.1998, 0.001, 0.0999], \"material\": \"m\"},"
      " {\"name\": \"c\", \"shape\": \"sphere\", \"radius\": 0.1, \"mass\": 3,"
      " \"position\": [0.3996, -0.002, 0.0999], \"material\": \"m\"}]}";
  const char *scenes[2] = {row, stack};
  for (int sc = 0; sc < 2; sc++) {
    cdSim sim;
    if (cd_simMake(&sim, scenes[sc], "lcp", NULL)) return;
    CHECK(cd_simStep(&sim) == 0);
    cdContactProblem *p = &sim.world->cp;
    CHECK(p->ncon == (sc ? 40 : 5) && cd_contactProblemDelassus(p) == 0);
    size_t nb = cd_lcpDelassusScratch(p);
    CHECK(nb == (sc ? 6 * (size_t)p->nbody : 0));
    int n3 = 3 * p->ncon;
    double *x = malloc(3 * (size_t)n3 * sizeof *x + 2 * (nb ? nb : 1) * sizeof *x), *y1 = x + n3, *y2 = y1 + n3;
    double *wb = y2 + n3, *wr = wb + (nb ? nb : 1);
    CHECK(x != NULL);
    if (!x) return;
    for (int k = 0; k < n3; k++) x[k] = sin(1.7 * k + 0.3);
    for (int i = 1; i < p->ncon; i += 3) x[3 * i] = x[3 * i + 1] = x[3 * i + 2] = i % 2 ? 0.0 : -0.0;
    if (sc) {
      cd_ccpJtMul(p, x, wr);
      for (int i = 0; i < p->ncon; i++) cd_contactProblemRowsMul(p, p->JM, i, wr, &y1[3 * i]);
    } else {
      cd_blockMatrixMul(&p->G, x, y1);
    }
    cd_lcpDelassusMul(p, x, y2, nb ? wb : NULL);
    CHECK_MSG(memcmp(y1, y2, (size_t)n3 * sizeof *y1) == 0, "%s: the products differ", sc ? "stack" : "row");
    free(x);
    cd_simFree(&sim);
  }
}
