/* test_penalty_physics.c: the penalty backend through the whole pipeline (collide once a
 * step, the narrow phase of its Verlet list every substep, seed 002's law at every contact
 * point, semi-implicit Euler): known answers, and the step's record of contacts. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "penalty_law.h"
#include "simtest.h"
#include "test.h"
#include "vec3.h"

static double totalEnergy(const cdSim *s) {
  return cd_worldKineticEnergy(&s->scene, s->world) + cd_worldPotentialEnergy(&s->scene, s->world);
}

CD_TEST(penaltyPipelineMiniExampleRestsAtWeightOverStiffness) {
  /* seed 002's mini example (scenes/mini-example.json): rests at 1.1 - m g / k */
  cdSim s;
  if (cd_simMakeFile(&s, "mini-example.json", "penalty", NULL, NULL)) return;
  if (cd_simRun(&s, s.scene.nstep)) {
    cd_simFree(&s);
    return;
  }
  int ball = cd_simBody(&s, "ball");
  double z = s.world->x[3 * ball + 2];
  printf("    mini example: z = %.9f after %ld steps (1.1 - m g / k = %.9f)\n", z, s.scene.nstep, 1.1 - 9.81e-5);
  CHECK_NEAR(z, 1.1 - 9.81 / 1e5, 1e-6);
  CHECK_NEAR(s.world->x[3 * ball], 0, 1e-12);
  CHECK_NEAR(s.world->v[6 * ball + 2], 0, 1e-6);
  cd_simFree(&s);
}

/* a 1 kg sphere (r 0.05) dropped 0.5 m onto the ground, stiffness exponent 1.5 and k = 1e10
 * (a contact of 0.3 ms: gravity changes the velocity by 3e-3 m/s in it, 1% of the
 * rebound at e = 0.1), no d_c, no friction; dt = 1e-4 because semi-implicit Euler loses
 * g^2 dt^2 / 2 per step in free flight (at dt = 1e-3 that is 1.5% of e = 0.1's apex);
 * the restitution from the rebound apex, e = sqrt((z_apex - r) / (z0 - r)) */
static double pipelineRestitution(int model, double e) {
  char text[1024];
  snprintf(text, sizeof text,
           "{\"gravity\": [0, 0, -9.81], \"dt\": 1e-4, \"steps\": 10000,"
           " \"ground\": {\"height\": 0, \"material\": \"m\"},"
           " \"materials\": {\"m\": {\"friction\": 0, \"restitution\": %.17g, \"stiffness\": 1e10, \"damping\": 0,"
           "   \"stiffness_exponent\": 1.5, \"impact_model\": %d}},"
           " \"bodies\": [{\"name\": \"ball\", \"shape\": \"sphere\", \"radius\": 0.05, \"mass\": 1,"
           "   \"position\": [0, 0, 0.55], \"material\": \"m\"}]}",
           e, model);
  cdSim s;
  if (cd_simMake(&s, text, "penalty", NULL)) return NAN;
  int touched = 0;
  double apex = -1;
  for (long k = 0; k < s.scene.nstep; k++) {
    if (cd_simStep(&s)) break;
    double z = s.world->x[2], vz = s.world->v[2];
    if (z < 0.05) touched = 1;
    if (touched && z > 0.05 && z > apex) apex = z;
    if (touched && apex > 0 && vz < 0) break; /* past the apex */
  }
  cd_simFree(&s);
  return apex > 0.05 ? sqrt((apex - 0.05) / 0.5) : NAN;
}

CD_TEST(penaltyDroppedSphereReboundsWithModelRestitution) {
  const double es[] = {0.1, 0.3, 0.5, 0.7, 0.9};
  printf("    pipeline drop: e_res | model 2 | Hunt-Crossley\n");
  for (int i = 0; i < 5; i++) {
    double e2 = pipelineRestitution(2, es[i]);
    double e1 = pipelineRestitution(1, es[i]);
    printf("    %.1f | %.4f | %.4f\n", es[i], e2, e1);
    CHECK_MSG(fabs(e2 - es[i]) <= 0.03 * es[i], "model 2 e = %g: rebound gives %g", es[i], e2);
    if (es[i] == 0.9) CHECK_MSG(fabs(e1 - 0.9) <= 0.03 * 0.9, "Hunt-Crossley e = 0.9: %g", e1);
  }
}

/* the cradle as seed 002's law gives it, in 1-D: n equal balls of mass m and radius r in a
 * row, neighbours i, i+1 pushed apart by f = k delta - d (v_{i+1} - v_i) while they overlap
 * (delta = 2 r - (x_{i+1} - x_i) > 0), integrated by RK4 at h, far finer than the pipeline;
 * the velocities after t_end in v (n <= 8) */
static void cradleReference(int n, double m, double r, double k, double d, double v0, double h, double t_end,
                            double *v) {
  double x[8], xs[8], vs[8], kx[4][8], kv[4][8];
  for (int i = 0; i < n; i++) x[i] = 2 * r * i, v[i] = i == 0 ? v0 : 0;
  static const double c[4] = {0, 0.5, 0.5, 1};
  for (double t = 0; t < t_end; t += h) {
    for (int s = 0; s < 4; s++) {
      for (int i = 0; i < n; i++) {
        xs[i] = x[i] + (s ? c[s] * h * kx[s - 1][i] : 0);
        vs[i] = v[i] + (s ? c[s] * h * kv[s - 1][i] : 0);
        kx[s][i] = vs[i];
        kv[s][i] = 0;
      }
      for (int i = 0; i + 1 < n; i++) {
        double delta = 2 * r - (xs[i + 1] - xs[i]);
        if (delta <= 0) continue;
        double f = k * delta - d * (vs[i + 1] - vs[i]);
        kv[s][i + 1] += f / m;
        kv[s][i] -= f / m;
      }
    }
    for (int i = 0; i < n; i++) {
      x[i] += h / 6 * (kx[0][i] + 2 * kx[1][i] + 2 * kx[2][i] + kx[3][i]);
      v[i] += h / 6 * (kv[0][i] + 2 * kv[1][i] + 2 * kv[2][i] + kv[3][i]);
    }
  }
}

CD_TEST(penaltyNewtonsCradlePassesMomentumAlong) {
  /* scenes/newtons-cradle.json: five touching steel balls (r 0.05, 7800 kg/m^3), the first at
   * 1 m/s, no gravity, k 1e7, d 100. Linear springs do not pass the momentum on whole (the
   * row is a discrete wave guide): the law's own answer, cradleReference, is (-0.1219,
   * -0.0674, -0.0208, 0.3036, 0.9066) m/s. The pipeline integrates it by semi-implicit Euler
   * at the automatic substep, about pi / (30 omega) (CD_PENALTY_SUBSTEPS_PER_CONTACT, set for
   * 1% of the model's restitution): each velocity within 1% of v0. */
  cdSim s;
  if (cd_simMakeFile(&s, "newtons-cradle.json", "penalty", NULL, NULL)) return;
  int n = s.scene.nbody;
  double p0 = 0, e0 = cd_worldKineticEnergy(&s.scene, s.world);
  for (int i = 0; i < n; i++) p0 += s.scene.body[i].mass * s.world->v[6 * i];
  double worst_p = 0, worst_e = 0;
  for (long k = 0; k < s.scene.nstep; k++) {
    if (cd_simStep(&s)) break;
    double p[3] = {0, 0, 0};
    for (int i = 0; i < n; i++) cd_v3addScaled(p, p, &s.world->v[6 * i], s.scene.body[i].mass);
    double dp = fabs(p[0] - p0) + fabs(p[1]) + fabs(p[2]);
    if (dp > worst_p) worst_p = dp;
    double e = cd_worldKineticEnergy(&s.scene, s.world);
    if (e - e0 > worst_e) worst_e = e - e0;
  }
  double ref[8];
  CHECK(n == 5);
  cradleReference(n, s.scene.body[0].mass, 0.05, 1e7, 100, 1.0, 2e-7, 0.02, ref);
  printf("    cradle: v =");
  for (int i = 0; i < n; i++) printf(" %.4f", s.world->v[6 * i]);
  printf(" (the law in 1-D:");
  for (int i = 0; i < n; i++) printf(" %.4f", ref[i]);
  printf(")  |dp|/p0 = %.2g, max KE gain %.2g J of %.4g\n", worst_p / p0, worst_e, e0);
  CHECK(worst_p <= 1e-9 * p0);
  CHECK(worst_e <= 0);
  for (int i = 0; i < n; i++) {
    CHECK_NEAR(s.world->v[6 * i], ref[i], 0.01);
    CHECK_NEAR(s.world->v[6 * i + 1], 0, 1e-12); /* along the row only */
    CHECK_NEAR(s.world->v[6 * i + 2], 0, 1e-12);
  }
  cd_simFree(&s);
}

CD_TEST(penaltySlidingCubeStopsNearAnalyticDistance) {
  /* scenes/sliding-cube.json under penalty: v0 = 2, mu 0.5 -> v0^2 / (2 mu g) = 0.4077 m.
   * Model error: the cube starts at zero gap and carries its full friction only once the
   * corner springs hold its weight, within the overdamped settling time ~ 2 ms (k 1e6,
   * d 2e3 on a quarter of 1 kg): at most v0 x 2 ms = 4 mm, 1%; the regularisation's creep
   * (v_reg^2 / (mu g) ~ 2e-7 m) and the substep (v0 h ~ 1e-4 m) are far smaller. */
  cdSim s;
  if (cd_simMakeFile(&s, "sliding-cube.json", "penalty", NULL, NULL)) return;
  double zmax = 0, zmin = 1;
  long nsub = 0;
  for (long k = 0; k < s.scene.nstep; k++) {
    if (cd_simStep(&s)) break;
    nsub += s.stats.substeps;
    if (s.world->x[2] > zmax) zmax = s.world->x[2];
    if (s.world->x[2] < zmin) zmin = s.world->x[2];
  }
  double d = s.world->x[0], expect = 4.0 / (2 * 0.5 * 9.81);
  printf("    sliding cube: %.5f m (analytic %.5f), v %.2g m/s, z in [%.6f, %.6f], %ld substeps\n", d, expect,
         s.world->v[0], zmin, zmax, nsub);
  CHECK_NEAR(d, expect, 0.01 * expect);
  CHECK_NEAR(s.world->v[0], 0, 1e-3);
  cd_simFree(&s);
}

CD_TEST(penaltySpinningSphereEndsRollingAtTwoSevenths) {
  /* r 0.1, omega0 = 20 rad/s about y set on the ground: ends rolling at 2/7 r omega0 */
  const char *text =
      "{\"gravity\": [0, 0, -9.81], \"dt\": 0.001, \"steps\": 300,"
      " \"ground\": {\"height\": 0, \"material\": \"m\"},"
      " \"materials\": {\"m\": {\"friction\": 0.5, \"stiffness\": 1e6, \"damping\": 2e3}},"
      " \"bodies\": [{\"name\": \"ball\", \"shape\": \"sphere\", \"radius\": 0.1, \"mass\": 1,"
      "   \"position\": [0, 0, 0.1], \"angular_velocity\": [0, 20, 0], \"material\": \"m\"}]}";
  cdSim s;
  if (cd_simMake(&s, text, "penalty", NULL)) return;
  cd_simRun(&s, s.scene.nstep);
  double v = s.world->v[0], w = s.world->v[4], expect = 2.0 / 7.0 * 0.1 * 20;
  printf("    rolling: v = %.6f (2/7 r w0 = %.6f), slip v - w r = %.2g\n", v, expect, v - w * 0.1);
  CHECK_NEAR(v, expect, 1e-3 * expect);
  CHECK_NEAR(v - w * 0.1, 0, 1e-3);
  cd_simFree(&s);
}

CD_TEST(penaltySphereRestsInsideHollowSphere) {
  /* a 1 kg ball (r 0.1) dropped inside a fixed hollow sphere (R 1) at the origin rests at
   * the bottom with overlap m g / k: z = -(R - r) - m g / k. (Started off the axis it
   * would roll to and fro for ever: rolling has no resistance in seed 002.) It never
   * leaves the shell: |x| <= R - r + the largest overlap of the impact. */
  const char *text =
      "{\"gravity\": [0, 0, -9.81], \"dt\": 0.002, \"steps\": 1000,"
      " \"materials\": {\"m\": {\"friction\": 0.3, \"stiffness\": 1e5, \"damping\": 1e3}},"
      " \"bodies\": [{\"name\": \"shell\", \"shape\": \"sphere\", \"radius\": 1, \"hollow\": true, \"fixed\": true,"
      "   \"position\": [0, 0, 0], \"material\": \"m\"},"
      "  {\"name\": \"ball\", \"shape\": \"sphere\", \"radius\": 0.1, \"mass\": 1,"
      "   \"position\": [0, 0, -0.85], \"material\": \"m\"}]}";
  cdSim s;
  if (cd_simMake(&s, text, "penalty", NULL)) return;
  double rmax = 0;
  for (long k = 0; k < s.scene.nstep; k++) {
    if (cd_simStep(&s)) break;
    double r = cd_v3norm(&s.world->x[3]);
    if (r > rmax) rmax = r;
  }
  const double *x = &s.world->x[3];
  CHECK(rmax < 0.9 + 0.01);
  printf("    hollow: ball at (%.3g, %.3g, %.9f), expected z %.9f\n", x[0], x[1], x[2], -0.9 - 9.81e-5);
  CHECK_NEAR(x[2], -0.9 - 9.81 / 1e5, 1e-6);
  CHECK_NEAR(x[0], 0, 1e-12);
  cd_simFree(&s);
}

CD_TEST(penaltyEnergyNeverGrowsWithoutAdhesion) {
  /* a tilted spinning cube and two spheres dropped onto the ground and each other, with
   * friction: kinetic + potential energy never exceeds its start (the contact springs only
   * store what they took) */
  const char *text =
      "{\"gravity\": [0, 0, -9.81], \"dt\": 0.002, \"steps\": 500,"
      " \"ground\": {\"height\": 0, \"material\": \"m\"},"
      " \"materials\": {\"m\": {\"friction\": 0.4, \"stiffness\": 1e6, \"damping\": 500}},"
      " \"bodies\": [{\"name\": \"cube\", \"shape\": \"cube\", \"size\": 0.2, \"mass\": 1,"
      "   \"position\": [0, 0, 0.4], \"orientation\": [0.9238795, 0.3826834, 0, 0],"
      "   \"velocity\": [0.5, 0, 0], \"angular_velocity\": [0, 3, 1], \"material\": \"m\"},"
      "  {\"name\": \"a\", \"shape\": \"sphere\", \"radius\": 0.05, \"mass\": 0.3,"
      "   \"position\": [0.01, 0.02, 0.7], \"velocity\": [0, 0, -1], \"material\": \"m\"},"
      "  {\"name\": \"b\", \"shape\": \"sphere\", \"radius\": 0.08, \"mass\": 0.5,"
      "   \"position\": [0.4, 0, 0.3], \"velocity\": [-1, 0, 0], \"angular_velocity\": [5, 0, 0], \"material\": \"m\"}]}";
  cdSim s;
  if (cd_simMake(&s, text, "penalty", NULL)) return;
  double e0 = totalEnergy(&s), worst = -INFINITY;
  int ncontact = 0;
  for (long k = 0; k < s.scene.nstep; k++) {
    if (cd_simStep(&s)) break;
    double e = totalEnergy(&s);
    if (e - e0 > worst) worst = e - e0;
    if (s.world->contacts.ncon > ncontact) ncontact = s.world->contacts.ncon;
  }
  double e1 = totalEnergy(&s);
  printf("    energy: start %.6f J, end %.6f J, largest rise %.3g J, up to %d contacts\n", e0, e1, worst, ncontact);
  CHECK(worst <= 0);
  CHECK(e1 < e0);
  CHECK(ncontact >= 3);
  cd_simFree(&s);
}

/* a 1 kg ball pressed into the ground by 3e-5 m, with gravity turned upwards (9.81 N pulling
 * it off), pull-off force f_adh and plasticity ratio lambda_P (linear model, k 1e5, d 1e3:
 * overdamped, no overshoot); returns the final gap */
static double pipelineAdhesionGap(double fadh, double lambda_p) {
  char text[1024];
  snprintf(text, sizeof text,
           "{\"gravity\": [0, 0, 9.81], \"dt\": 0.002, \"steps\": 250,"
           " \"ground\": {\"height\": 0, \"material\": \"m\"},"
           " \"materials\": {\"m\": {\"friction\": 0.3, \"stiffness\": 1e5, \"damping\": 1e3,"
           "   \"pull_off_force\": %.17g, \"plasticity_ratio\": %.17g}},"
           " \"bodies\": [{\"name\": \"ball\", \"shape\": \"sphere\", \"radius\": 0.1, \"mass\": 1,"
           "   \"position\": [0, 0, 0.09997], \"material\": \"m\"}]}",
           fadh, lambda_p);
  cdSim s;
  if (cd_simMake(&s, text, "penalty", NULL)) return NAN;
  cd_simRun(&s, s.scene.nstep);
  double gap = s.world->x[2] - 0.1;
  cd_simFree(&s);
  return gap;
}

CD_TEST(penaltyAdhesionHoldsWhatItShould) {
  /* lambda_P = 0.1: the first evaluation is virgin loading at delta0 = 3e-5, which sets
   * delta_p = lambda_P delta0; the net force then lifts the ball (overdamped: delta never
   * grows again) along the un/reloading branch k2 = k / (1 - lambda_P), held where
   * -f_adh + k2 (delta - delta_p) + m g = 0: delta = delta_p + (f_adh - m g) / k2 */
  double k2 = 1e5 / 0.9, dp = 0.1 * 3e-5;
  double held = pipelineAdhesionGap(12, 0.1);
  CHECK_NEAR(held, -(dp + (12 - 9.81) / k2), 1e-7);
  double gone = pipelineAdhesionGap(8, 0.1);
  CHECK_MSG(gone > 0.1, "f_adh < m g should let go (gap %g)", gone);
  /* lambda_P = 0 turns the Edinburgh model off (seed 002): f_adh holds nothing */
  double off = pipelineAdhesionGap(12, 0);
  CHECK_MSG(off > 0.1, "lambda_P = 0: f_adh must not act (gap %g)", off);
}

CD_TEST(penaltyPileSubstepsSetByTheNormalSprings) {
  /* eight spheres (r 0.1, 1 kg, k 1e6, d 1e3, mu 0.5, v_reg 1e-3: scenes/sphere-pile.json's
   * material) in two 2x2 layers, the upper one shifted, dropped onto each other and the
   * ground. The normal springs need pi / (30 omega) with omega = sqrt(k (1/m + 1/m)) for a
   * sphere pair, the fastest contact: N_k = ceil(30 dt omega / pi) substeps a step. The
   * friction (rate mu f_n / (v_reg m_eff) ~ 1e7 1/s in the impacts) is capped, not
   * resolved. The coupled springs' bound (penalty.c: omega^2 <= max_i sum_b sqrt(k w_ib) S_b)
   * is at most 2 n k / m with n the listed contacts of one sphere (every sqrt(k w) is
   * sqrt(k / m) for spheres), and its step 1 / omega is the shorter one only when
   * sqrt(n) > 30 / pi, n > 91: here a sphere can list at most the 7 others and the ground. So
   * a step that lists a sphere pair takes exactly N_k substeps, and none more. And the pile
   * stays stable: the energy never rises above its start, and at the end no sphere is deeper
   * in the ground than the whole pile's weight would press one: 8 m g / k. */
  const char *text =
      "{\"gravity\": [0, 0, -9.81], \"dt\": 0.01, \"steps\": 150,"
      " \"ground\": {\"height\": 0, \"material\": \"g\"},"
      " \"materials\": {\"g\": {\"friction\": 0.5, \"stiffness\": 1e6, \"damping\": 1000,"
      "   \"friction_regularization\": 1e-3}},"
      " \"bodies\": ["
      "  {\"name\": \"a0\", \"shape\": \"sphere\", \"radius\": 0.1, \"mass\": 1, \"position\": [-0.1, -0.1, 0.11], \"material\": \"g\"},"
      "  {\"name\": \"a1\", \"shape\": \"sphere\", \"radius\": 0.1, \"mass\": 1, \"position\": [0.1, -0.1, 0.11], \"material\": \"g\"},"
      "  {\"name\": \"a2\", \"shape\": \"sphere\", \"radius\": 0.1, \"mass\": 1, \"position\": [-0.1, 0.1, 0.11], \"material\": \"g\"},"
      "  {\"name\": \"a3\", \"shape\": \"sphere\", \"radius\": 0.1, \"mass\": 1, \"position\": [0.1, 0.1, 0.11], \"material\": \"g\"},"
      "  {\"name\": \"b0\", \"shape\": \"sphere\", \"radius\": 0.1, \"mass\": 1, \"position\": [-0.07, -0.08, 0.33], \"material\": \"g\"},"
      "  {\"name\": \"b1\", \"shape\": \"sphere\", \"radius\": 0.1, \"mass\": 1, \"position\": [0.13, -0.08, 0.33], \"material\": \"g\"},"
      "  {\"name\": \"b2\", \"shape\": \"sphere\", \"radius\": 0.1, \"mass\": 1, \"position\": [-0.07, 0.12, 0.33], \"material\": \"g\"},"
      "  {\"name\": \"b3\", \"shape\": \"sphere\", \"radius\": 0.1, \"mass\": 1, \"position\": [0.13, 0.12, 0.33], \"material\": \"g\"}]}";
  cdSim s;
  if (cd_simMake(&s, text, "penalty", NULL)) return;
  const double k = 1e6, m = 1, g = 9.81;
  int nk = (int)ceil(30 * s.scene.dt * sqrt(2 * k / m) / M_PI);
  double e0 = totalEnergy(&s), worst = -INFINITY;
  long total = 0;
  int most = 0, ncontact = 0;
  for (long step = 0; step < s.scene.nstep; step++) {
    if (cd_simStep(&s)) break;
    total += s.stats.substeps;
    if (s.stats.substeps > most) most = s.stats.substeps;
    double e = totalEnergy(&s);
    if (!(e - e0 <= worst)) worst = e - e0;
    if (s.world->contacts.ncon > ncontact) ncontact = s.world->contacts.ncon;
  }
  double lowest = INFINITY;
  for (int i = 0; i < s.scene.nbody; i++) {
    double z = cd_simLowestZ(&s, i);
    if (!(z >= lowest)) lowest = z;
  }
  printf("    pile of 8: %ld substeps in %ld steps, at most %d a step (springs need %d), up to %d contacts,"
         " energy rise %.3g J, lowest point %.3g m (8 m g / k = %.3g)\n",
         total, s.scene.nstep, most, nk, ncontact, worst, lowest, 8 * m * g / k);
  CHECK(ncontact >= 8);
  CHECK_MSG(most == nk, "%d substeps in one step, the springs need %d", most, nk);
  CHECK(worst <= 0);
  CHECK(lowest >= -8 * m * g / k);
  cd_simFree(&s);
}

CD_TEST(penaltyContactClosingAtRestTakesTheSpringsSubsteps) {
  /* a 1 kg ball (r 0.1) that starts touching the ground (overlap 1e-9 m) at 1e-6 m/s:
   * impact model 2, e 0.5, no minimum impact velocity, no d_c. The seed's hysteresis
   * lambda ~ k / 1e-6 makes a damper of rate ~1e7 1/s at the static overlap m g / k (the
   * step would need ~1e5 substeps to resolve it); it is capped, so the step stays the one the
   * spring needs, ceil(30 dt sqrt(k / m) / pi), and the ball comes to rest at m g / k
   * without gaining energy (the cap stops v_n within a substep, never reverses it). */
  const char *text =
      "{\"gravity\": [0, 0, -9.81], \"dt\": 0.01, \"steps\": 100,"
      " \"ground\": {\"height\": 0, \"material\": \"m\"},"
      " \"materials\": {\"m\": {\"friction\": 0.3, \"stiffness\": 1e6, \"damping\": 0, \"restitution\": 0.5,"
      "   \"impact_model\": 2, \"min_impact_velocity\": 0}},"
      " \"bodies\": [{\"name\": \"ball\", \"shape\": \"sphere\", \"radius\": 0.1, \"mass\": 1,"
      "   \"position\": [0, 0, 0.099999999], \"velocity\": [0, 0, -1e-6], \"material\": \"m\"}]}";
  cdSim s;
  if (cd_simMake(&s, text, "penalty", NULL)) return;
  const double k = 1e6, m = 1, g = 9.81;
  int nk = (int)ceil(30 * s.scene.dt * sqrt(k / m) / M_PI);
  double e0 = totalEnergy(&s), worst = -INFINITY, impact = 0;
  int most = 0;
  for (long step = 0; step < s.scene.nstep; step++) {
    if (cd_simStep(&s)) break;
    if (s.stats.substeps > most) most = s.stats.substeps;
    double e = totalEnergy(&s);
    if (!(e - e0 <= worst)) worst = e - e0;
    if (s.world->contacts.ncon > 0 && s.world->contacts.con[0].state[CD_PENALTY_IMPACT] > impact)
      impact = s.world->contacts.con[0].state[CD_PENALTY_IMPACT];
  }
  double z = s.world->x[2];
  printf("    closing at rest: impact velocity %.2g m/s, at most %d substeps a step (spring: %d), z = %.9f"
         " (r - m g / k = %.9f), energy rise %.3g J\n",
         impact, most, nk, z, 0.1 - m * g / k, worst);
  CHECK_NEAR(impact, 1e-6, 1e-9);
  CHECK_MSG(most <= nk, "%d substeps in one step, the spring needs %d", most, nk);
  CHECK_NEAR(z, 0.1 - m * g / k, 1e-7);
  CHECK_NEAR(s.world->v[2], 0, 1e-6);
  CHECK(worst <= 0);
  cd_simFree(&s);
}

/* Runs the scene (one body against the ground) and checks, in every step, that the impulses
 * recorded in the step's contacts are the body's momentum change less gravity's impulse:
 * m (v+ - v) - m g dt = sum over its contacts of lambda_n n + lambda_t1 t1 + lambda_t2 t2.
 * Semi-implicit Euler makes this exact up to roundoff (every substep adds h F to both sides),
 * so the bound is roundoff: 1e-12 of the step's largest impulse or momentum. Returns the
 * largest mismatch over that scale; *straddles counts the steps whose contacts carry an
 * impulse of the same impact as the step after them (the impact spans the step boundary),
 * *opened the steps in which a contact pushed and was gone by the step's end. */
static double recordedImpulseMismatch(const char *text, int *straddles, int *opened) {
  cdSim s;
  *straddles = *opened = 0;
  if (cd_simMake(&s, text, "penalty", NULL)) return INFINITY;
  const double m = s.scene.body[0].mass, dt = s.scene.dt;
  double worst = 0;
  int pushed_before = 0;
  for (long k = 0; k < s.scene.nstep; k++) {
    double v0[3], dp[3];
    cd_v3copy(v0, &s.world->v[0]);
    if (cd_simStep(&s)) break;
    double J[3] = {0, 0, 0}, scale = m * (cd_v3norm(v0) + cd_v3norm(&s.world->v[0]) + cd_v3norm(s.scene.gravity) * dt);
    int pushed = 0;
    for (int i = 0; i < s.world->contacts.ncon; i++) {
      const cdContact *c = &s.world->contacts.con[i];
      double Ji[3];
      cd_v3scale(Ji, c->normal, c->lambda[0]);
      cd_v3addScaled(Ji, Ji, c->t1, c->lambda[1]);
      cd_v3addScaled(Ji, Ji, c->t2, c->lambda[2]);
      cd_v3add(J, J, Ji);
      if (c->lambda[0] > 0) {
        pushed = 1;
        if (c->state[CD_PENALTY_GAP] >= 0) (*opened)++;
      }
    }
    for (int e = 0; e < 3; e++) dp[e] = m * (s.world->v[e] - v0[e] - s.scene.gravity[e] * dt) - J[e];
    if (pushed && pushed_before) (*straddles)++;
    pushed_before = pushed;
    if (scale > 0 && cd_v3norm(dp) / scale > worst) worst = cd_v3norm(dp) / scale;
  }
  cd_simFree(&s);
  return worst;
}

CD_TEST(penaltyRecordedImpulsesAreTheMomentumChangeOfEveryStep) {
  /* the review's bounce: a 1 kg ball (r 0.05) dropped 0.2043 m onto the ground, e = 0.9,
   * k = 1e7, impact model 2, dt 0.01: the first impact (3.73 N s, 1 ms) spans steps 20 and
   * 21 (2.67 + 1.05 N s), and it bounces on. Before the record kept every contact of the
   * step, an impact's part in the step it ended in was in no contact row (the contact had
   * opened within the step): step 21's 1.05 N s, and the whole of the impacts at steps 56
   * and 85 */
  const char *bounce =
      "{\"gravity\": [0, 0, -9.81], \"dt\": 0.01, \"steps\": 120,"
      " \"ground\": {\"height\": 0, \"material\": \"m\"},"
      " \"materials\": {\"m\": {\"friction\": 0.3, \"restitution\": 0.9, \"stiffness\": 1e7, \"damping\": 0,"
      "   \"impact_model\": 2}},"
      " \"bodies\": [{\"name\": \"ball\", \"shape\": \"sphere\", \"radius\": 0.05, \"mass\": 1,"
      "   \"position\": [0, 0, 0.2543], \"velocity\": [0.3, 0, 0], \"material\": \"m\"}]}";
  int straddles, opened;
  double worst = recordedImpulseMismatch(bounce, &straddles, &opened);
  printf("    bounce: largest |m dv - m g dt - sum J| / scale %.2g over 120 steps; %d impacts across a step"
         " boundary, %d contacts that pushed and opened within their step\n",
         worst, straddles, opened);
  CHECK(worst <= 1e-12);
  CHECK(straddles >= 1);
  CHECK(opened >= 1);

  /* a cube dropped tilted and spinning onto the ground with friction: corners touch and
   * lift off within steps while it tumbles, then it slides and settles */
  const char *tumble =
      "{\"gravity\": [0, 0, -9.81], \"dt\": 0.01, \"steps\": 150,"
      " \"ground\": {\"height\": 0, \"material\": \"m\"},"
      " \"materials\": {\"m\": {\"friction\": 0.4, \"stiffness\": 1e6, \"damping\": 200}},"
      " \"bodies\": [{\"name\": \"cube\", \"shape\": \"cube\", \"size\": 0.2, \"mass\": 1,"
      "   \"position\": [0, 0, 0.25], \"orientation\": [0.9192945, 0.3807842, 0.0995037, 0],"
      "   \"velocity\": [1, 0.3, 0], \"angular_velocity\": [2, -5, 3], \"material\": \"m\"}]}";
  worst = recordedImpulseMismatch(tumble, &straddles, &opened);
  printf("    tumbling cube: largest mismatch / scale %.2g over 150 steps; %d contacts that pushed and opened"
         " within their step\n",
         worst, opened);
  CHECK(worst <= 1e-12);
  CHECK(opened >= 1);
}

CD_TEST(penaltyStepLeavesEveryRotationMatrixThatOfItsQuaternion) {
  /* a ball's R is not updated in the substeps (step.c: no narrow phase reads it) but once at
   * the step's end: after every step, every body's R is exactly that of its q. Spinning
   * spheres rolling into each other and into a spinning cube on the ground */
  const char *text =
      "{\"gravity\": [0, 0, -9.81], \"dt\": 0.005, \"steps\": 20, \"ground\": {\"height\": 0},"
      " \"bodies\": ["
      "  {\"name\": \"s0\", \"shape\": \"sphere\", \"radius\": 0.05, \"mass\": 0.1, \"position\": [0, 0, 0.05],"
      "   \"velocity\": [1, 0, 0], \"angular_velocity\": [0, 20, 3]},"
      "  {\"name\": \"s1\", \"shape\": \"sphere\", \"radius\": 0.05, \"mass\": 0.1, \"position\": [0.12, 0, 0.05],"
      "   \"angular_velocity\": [5, 0, -7]},"
      "  {\"name\": \"c\", \"shape\": \"cube\", \"size\": 0.1, \"mass\": 0.5, \"position\": [0.23, 0.01, 0.05],"
      "   \"angular_velocity\": [0, 0, 4]}]}";
  cdSim s;
  if (cd_simMake(&s, text, "penalty", NULL)) return;
  long mismatched = 0, steps = 0;
  for (long k = 0; k < s.scene.nstep; k++) {
    if (cd_simStep(&s)) break;
    steps++;
    for (int i = 0; i < s.scene.nbody; i++) {
      double R[9];
      cd_quatToMat(R, &s.world->q[4 * i]);
      if (memcmp(R, &s.world->R[9 * i], sizeof R) != 0) mismatched++;
    }
  }
  printf("    %ld steps of 3 spinning bodies: %ld rotation matrices not those of their quaternions\n", steps,
         mismatched);
  CHECK(steps == s.scene.nstep);
  CHECK(mismatched == 0);
  /* the spheres turned (their R is not the identity any more) */
  CHECK(s.world->R[0] != 1.0 && s.world->R[9] != 1.0);
  cd_simFree(&s);
}
