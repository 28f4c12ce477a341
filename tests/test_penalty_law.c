/* test_penalty_law.c: seed 002's contact law on its own (no pipeline): the force of each
 * impact model and branch, the state it keeps, and 1-D drops integrated here with the
 * same semi-implicit Euler and the same automatic substep as the penalty backend. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "penalty_law.h"
#include "scene.h"
#include "test.h"
#include "vec3.h"

/* ---- a 1-D body above a surface: gap = z, gravity -g along the normal ---- */

typedef struct {
  cdMaterial m;
  double mass, g;
  double z, v;     /* gap (m) and its rate (m/s) */
  double state[4]; /* the contact state, carried as the core does */
  int fresh;
  cdPenaltyForce f; /* the force of the last substep */
} cdBall1d;

static cdMaterial testMaterial(int model, double k, double n, double d, double e) {
  cdMaterial m = cd_materialDefault();
  m.impact_model = model;
  m.stiffness = k;
  m.stiffness_exponent = n;
  m.damping = d;
  m.restitution = e;
  m.friction = 0;
  return m;
}

static void ballInit(cdBall1d *b, cdMaterial m, double mass, double g, double z, double v) {
  memset(b, 0, sizeof *b);
  b->m = m;
  b->mass = mass;
  b->g = g;
  b->z = z;
  b->v = v;
  b->fresh = 1;
}

/* the substep count of a step dt, as the backend computes it for a lone contact */
static int ballSubsteps(const cdBall1d *b, double dt) {
  double w = 1 / b->mass, overlap = b->z < 0 ? -b->z : 0;
  double speed = (b->v < 0 ? -b->v : 0) + b->g * dt;
  double k = cd_penaltyStiffness(&b->m, w, b->g, overlap, speed);
  double h = cd_penaltyStepLimit(sqrt(k * w), k * w);
  double n = ceil(dt / h);
  return n < 1 ? 1 : (int)n;
}

/* one substep of length h with an extra force `pull` along +z (N) */
static void ballSubstep(cdBall1d *b, double h, double pull) {
  const double vt[3] = {0, 0, 0};
  cd_penaltyContactForce(&b->m, b->z, b->v, vt, b->fresh, b->state, &b->f);
  cd_penaltyLimitForce(&b->m, h, 1 / b->mass, 1 / b->mass, b->v, vt, &b->f);
  b->fresh = 0;
  b->v += h * (b->f.fn / b->mass - b->g + pull / b->mass);
  b->z += h * b->v;
}

static double ballEnergy(const cdBall1d *b) { return 0.5 * b->mass * b->v * b->v + b->mass * b->g * b->z; }

/* the restitution of one impact: a ball arriving at 4.43 m/s (a 1 m drop) on a stiff
 * surface (k = 1e10 N/m^1.5: gravity changes the velocity by 2e-3 m/s during the contact),
 * substeps `refine` times finer than the automatic ones. e = v_out / v_in with v_in the
 * stored impact velocity, v_out the velocity when the gap opens again. */
static double measureRestitution(int model, double e, double n, int refine, int *substeps) {
  cdBall1d b;
  ballInit(&b, testMaterial(model, 1e10, n, 0, e), 1.0, 9.81, 1e-4, -sqrt(2 * 9.81 * 1.0));
  double dt = 1e-3;
  int touched = 0, total = 0;
  for (int step = 0; step < 1000; step++) {
    int ns = ballSubsteps(&b, dt) * refine;
    double h = dt / ns;
    for (int s = 0; s < ns; s++) {
      ballSubstep(&b, h, 0);
      if (touched) total++;
      if (b.f.touching) touched = 1;
      if (touched && !b.f.touching) {
        if (substeps) *substeps = total;
        return b.v / b.state[CD_PENALTY_IMPACT];
      }
    }
  }
  return NAN;
}

CD_TEST(penaltyMiniExampleRestsAtWeightOverStiffness) {
  /* seed 002 mini example in 1-D: a 1 kg ball (r 0.1) on a fixed sphere (r 1) at the origin,
   * from z = 1.2 at rest; k = 1e5, d = 1e3, linear model. gap = z - 1.1. */
  cdBall1d b;
  ballInit(&b, testMaterial(0, 1e5, 1, 1e3, 1), 1.0, 9.81, 0.1, 0);
  double dt = 1e-3;
  for (int step = 0; step < 1000; step++) {
    int ns = ballSubsteps(&b, dt);
    for (int s = 0; s < ns; s++) ballSubstep(&b, dt / ns, 0);
  }
  double z = 1.1 + b.z;
  printf("    mini example: z = %.9f (1.1 - m g / k = %.9f)\n", z, 1.1 - 9.81 / 1e5);
  CHECK_NEAR(z, 1.1 - 9.81 / 1e5, 1e-6);
  CHECK_NEAR(b.v, 0, 1e-6);
}

CD_TEST(penaltyModel2RestitutionWithinThreePercent) {
  /* NUMERICS.md: model 2 with n_exp = 1.5 gives 0.101 0.205 0.304 0.500 0.700 0.900 */
  const double es[] = {0.1, 0.2, 0.3, 0.5, 0.7, 0.9};
  const double table[] = {0.101, 0.205, 0.304, 0.500, 0.700, 0.900};
  printf("    e_res | model 2 auto (substeps/contact) | model 2 fine | Hunt-Crossley auto | HC fine\n");
  for (int i = 0; i < 6; i++) {
    int ns = 0, nsh = 0;
    double e2 = measureRestitution(2, es[i], 1.5, 1, &ns);
    double e2f = measureRestitution(2, es[i], 1.5, 10, NULL);
    double e1 = measureRestitution(1, es[i], 1.5, 1, &nsh);
    double e1f = measureRestitution(1, es[i], 1.5, 10, NULL);
    printf("    %5.2f | %.4f (%d) | %.4f | %.4f (%d) | %.4f\n", es[i], e2, ns, e2f, e1, nsh, e1f);
    CHECK_MSG(fabs(e2 - es[i]) <= 0.03 * es[i], "model 2, e = %g: achieved %g with the automatic substep", es[i], e2);
    CHECK_MSG(fabs(e2f - es[i]) <= 0.03 * es[i], "model 2, e = %g: achieved %g with fine substeps", es[i], e2f);
    /* the table's 3 decimals, plus the 2e-3 m/s gravity takes off the rebound (relative
     * 2e-3 / (4.43 e)), plus the integrator's O(h) */
    CHECK_NEAR(e2f, table[i], 1e-3 + 2e-3 / 4.43 + 1e-3);
    /* the automatic substep is as good as a 10 times finer one, to 1% */
    CHECK_NEAR(e2, e2f, 0.01 * es[i]);
  }
}

CD_TEST(penaltyHuntCrossleyGoodNearOneOffForSmallE) {
  /* seed 002: Hunt-Crossley is valid for small energy loss (NUMERICS: 0.909 at e = 0.9) */
  double e9 = measureRestitution(1, 0.9, 1.5, 10, NULL);
  double e1 = measureRestitution(1, 0.1, 1.5, 10, NULL);
  CHECK_MSG(fabs(e9 - 0.9) <= 0.03 * 0.9, "HC at e = 0.9: %g", e9);
  CHECK_NEAR(e9, 0.909, 0.005);
  CHECK_MSG(fabs(e1 - 0.1) > 0.03 * 0.1, "HC at e = 0.1 should miss e (known limitation): %g", e1);
  CHECK(e1 > 0.3); /* it is far too bouncy */
}

CD_TEST(penaltyElasticImpactModelsRestituteOne) {
  /* e_res = 1: no hysteresis, so a contact without d_c gives back its energy, up to the
   * O(h omega) error of the integrator at 30 substeps a contact */
  for (int model = 1; model <= 2; model++) {
    double e = measureRestitution(model, 1.0, 1.5, 1, NULL);
    CHECK_NEAR(e, 1.0, 0.02);
  }
}

CD_TEST(penaltyHysteresisFactorMatchesSeedFormulas) {
  cdMaterial m = testMaterial(1, 2e5, 1.5, 0, 0.6);
  double vi = 0.8;
  CHECK_NEAR(cd_penaltyHysteresis(&m, vi), 2e5 / vi * 1.5 * (0.6 - 1), 1e-9);
  m.impact_model = 2;
  CHECK_NEAR(cd_penaltyHysteresis(&m, vi), 2e5 / vi * 1.5 * (0.6 - 1) * (11 - 0.6) / (1 + 9 * 0.6), 1e-9);
  m.restitution = 0.2;
  CHECK_NEAR(cd_penaltyHysteresis(&m, vi), 2e5 / vi * (0.04 - 1) / 0.2, 1e-9);
  /* Carvalho-Martins and Gonthier agree at e = 1/3 */
  m.restitution = 1.0 / 3.0;
  double g = cd_penaltyHysteresis(&m, vi);
  m.restitution = 1.0 / 3.0 + 1e-12;
  CHECK_NEAR(cd_penaltyHysteresis(&m, vi), g, 1e-6 * fabs(g));
  m.impact_model = 0;
  CHECK(cd_penaltyHysteresis(&m, vi) == 0);
  m.impact_model = 2;
  CHECK(cd_penaltyHysteresis(&m, 0) == 0);
}

CD_TEST(penaltyHysteresisForceSignsFollowTheGapVelocity) {
  /* f_c = k delta^n + lambda delta^n v_n: more than the spring while closing, less while
   * opening; f_d = -d_c v_n */
  cdMaterial m = testMaterial(2, 1e6, 1.5, 50, 0.5);
  double st[4] = {0}, vt[3] = {0, 0, 0};
  cdPenaltyForce f;
  double delta = 1e-4, dn = pow(delta, 1.5);
  cd_penaltyContactForce(&m, -delta, -0.5, vt, 1, st, &f);
  double lambda = cd_penaltyHysteresis(&m, 0.5);
  CHECK_NEAR(f.fc, 1e6 * dn + lambda * dn * -0.5, 1e-9);
  CHECK(f.fc > 1e6 * dn);
  CHECK_NEAR(f.fd, 25, 1e-12);
  CHECK_NEAR(f.fn, f.fc + f.fd, 1e-12);
  cd_penaltyContactForce(&m, -delta, 0.3, vt, 0, st, &f);
  CHECK_NEAR(f.fc, 1e6 * dn + lambda * dn * 0.3, 1e-9);
  CHECK(f.fc < 1e6 * dn);
  CHECK_NEAR(f.fd, -15, 1e-12);
}

CD_TEST(penaltyImpactVelocityTakenAtFirstTouchAndBoundedBelow) {
  cdMaterial m = testMaterial(1, 1e6, 1, 0, 0.5);
  double st[4] = {0}, vt[3] = {0, 0, 0};
  cdPenaltyForce f;
  /* approaching inside the margin: no force, no impact velocity yet */
  cd_penaltyContactForce(&m, 1e-3, -2.0, vt, 1, st, &f);
  CHECK(!f.touching && f.fn == 0);
  CHECK(st[CD_PENALTY_IMPACT] == 0);
  CHECK_NEAR(st[CD_PENALTY_GAP], 1e-3, 0);
  /* first touch at 1.5 m/s */
  cd_penaltyContactForce(&m, -1e-5, -1.5, vt, 0, st, &f);
  CHECK(f.touching);
  CHECK_NEAR(st[CD_PENALTY_IMPACT], 1.5, 0);
  /* still in contact, slower: the impact velocity stays */
  cd_penaltyContactForce(&m, -2e-5, -0.5, vt, 0, st, &f);
  CHECK_NEAR(st[CD_PENALTY_IMPACT], 1.5, 0);
  double lambda = cd_penaltyHysteresis(&m, 1.5);
  CHECK_NEAR(f.fc, 1e6 * 2e-5 + lambda * 2e-5 * -0.5, 1e-12);
  /* opens, closes again at 0.2 m/s: a new impact */
  cd_penaltyContactForce(&m, 1e-6, 0.4, vt, 0, st, &f);
  cd_penaltyContactForce(&m, -1e-6, -0.2, vt, 0, st, &f);
  CHECK_NEAR(st[CD_PENALTY_IMPACT], 0.2, 1e-15);
  /* the minimum impact velocity bounds it from below */
  m.min_impact_velocity = 0.7;
  cd_penaltyContactForce(&m, 1e-6, -0.2, vt, 0, st, &f);
  cd_penaltyContactForce(&m, -1e-6, -0.2, vt, 0, st, &f);
  CHECK_NEAR(st[CD_PENALTY_IMPACT], 0.7, 0);
  /* a contact that reappears (fresh) already overlapping starts a new impact */
  cd_penaltyContactForce(&m, -1e-6, -1.1, vt, 1, st, &f);
  CHECK_NEAR(st[CD_PENALTY_IMPACT], 1.1, 0);
}

CD_TEST(penaltyEdinburghBranchesAndPlasticOverlap) {
  /* k_c = 1e5, lambda_P = 0.5 (k2 = 2e5), k_adh = 1e4, n = n_adh = 1, no pull-off */
  cdMaterial m = testMaterial(0, 1e5, 1, 0, 1);
  m.plasticity_ratio = 0.5;
  m.adhesion_coefficient = 1e4;
  double st[4] = {0}, vt[3] = {0, 0, 0};
  cdPenaltyForce f;
  /* virgin loading: branch 1, f = k_c delta, delta_p = lambda_P delta */
  cd_penaltyContactForce(&m, -1e-3, 0, vt, 1, st, &f);
  CHECK(f.branch == 1);
  CHECK_NEAR(f.fn, 100, 1e-9);
  CHECK_NEAR(st[CD_PENALTY_PLASTIC], 0.5e-3, 1e-15);
  cd_penaltyContactForce(&m, -2e-3, 0, vt, 0, st, &f);
  CHECK(f.branch == 1);
  CHECK_NEAR(f.fn, 200, 1e-9);
  CHECK_NEAR(st[CD_PENALTY_PLASTIC], 1e-3, 1e-15);
  /* unloading: branch 2, f = k2 (delta - delta_p), delta_p stays */
  cd_penaltyContactForce(&m, -1.5e-3, 0, vt, 0, st, &f);
  CHECK(f.branch == 2);
  CHECK_NEAR(f.fn, 2e5 * 0.5e-3, 1e-9);
  CHECK_NEAR(st[CD_PENALTY_PLASTIC], 1e-3, 1e-15);
  /* reloading below the virgin curve: still branch 2 */
  cd_penaltyContactForce(&m, -1.9e-3, 0, vt, 0, st, &f);
  CHECK(f.branch == 2);
  CHECK_NEAR(f.fn, 2e5 * 0.9e-3, 1e-9);
  /* past it: back on branch 1, delta_p grows again */
  cd_penaltyContactForce(&m, -2.1e-3, 0, vt, 0, st, &f);
  CHECK(f.branch == 1);
  CHECK_NEAR(f.fn, 210, 1e-9);
  CHECK_NEAR(st[CD_PENALTY_PLASTIC], 1.05e-3, 1e-15);
  /* unloading past delta* = k2 delta_p / (k2 + k_adh) = 1e-3: still branch 2 above it
   * (pulling: f = k2 (delta - delta_p) < 0), the adhesive branch 3 below it */
  cd_penaltyContactForce(&m, -1.02e-3, 0, vt, 0, st, &f);
  CHECK(f.branch == 2);
  CHECK_NEAR(f.fn, 2e5 * (1.02e-3 - 1.05e-3), 1e-9);
  cd_penaltyContactForce(&m, -0.9e-3, 0, vt, 0, st, &f);
  CHECK(f.branch == 3);
  CHECK_NEAR(f.fn, -1e4 * 0.9e-3, 1e-9);
  CHECK_NEAR(st[CD_PENALTY_PLASTIC], 1.05e-3, 1e-15);
  /* separation resets the plastic overlap */
  cd_penaltyContactForce(&m, 1e-6, 0, vt, 0, st, &f);
  CHECK(!f.touching && f.fn == 0);
  CHECK(st[CD_PENALTY_PLASTIC] == 0);
}

CD_TEST(penaltyEdinburghBranchesWithExponent) {
  /* n_exp = 1.5: delta_p = lambda_P^(1/n) delta on loading keeps f_c continuous */
  cdMaterial m = testMaterial(0, 1e7, 1.5, 0, 1);
  m.plasticity_ratio = 0.3;
  double dp = 0, d = 2e-3;
  int br = 0;
  double f1 = cd_penaltyEdinburgh(&m, d, &dp, &br);
  CHECK(br == 1);
  CHECK_NEAR(dp, pow(0.3, 1 / 1.5) * d, 1e-15);
  CHECK_NEAR(f1, 1e7 * pow(d, 1.5), 1e-9);
  /* the unloading branch at the same overlap gives the same force */
  double k2 = 1e7 / 0.7;
  double f2 = k2 * (pow(d, 1.5) - pow(dp, 1.5));
  CHECK_NEAR(f2, f1, 1e-9 * f1);
  double f3 = cd_penaltyEdinburgh(&m, 0.99 * d, &dp, &br);
  CHECK(br == 2);
  CHECK_NEAR(f3, k2 * (pow(0.99 * d, 1.5) - pow(dp, 1.5)), 1e-9);
}

CD_TEST(penaltyPullOffForceActsAtZeroOverlap) {
  cdMaterial m = testMaterial(0, 1e5, 1, 0, 1);
  m.pull_off_force = 5;
  m.plasticity_ratio = 0.2; /* the Edinburgh model on */
  double st[4] = {0}, vt[3] = {0, 0, 0};
  cdPenaltyForce f;
  cd_penaltyContactForce(&m, -1e-12, 0, vt, 1, st, &f);
  CHECK(f.touching);
  CHECK_NEAR(f.fn, -5, 1e-6); /* pulls b towards a */
  cd_penaltyContactForce(&m, 1e-12, 0, vt, 0, st, &f);
  CHECK(f.fn == 0); /* none once apart */
}

/* seed 002: plasticity_ratio "set to 0 in order to fully deactivate" the Edinburgh model
 * (Exudyn applies f_adh and k_adh only when it is not 0): the plain spring k_c delta^n_exp */
CD_TEST(penaltyPlasticityRatioZeroTurnsTheEdinburghModelOff) {
  cdMaterial m = testMaterial(0, 1e5, 1.5, 0, 1);
  m.pull_off_force = 5;
  m.adhesion_coefficient = 1e4;
  double st[4] = {0}, vt[3] = {0, 0, 0};
  cdPenaltyForce f;
  cd_penaltyContactForce(&m, -1e-12, 0, vt, 1, st, &f);
  CHECK(f.touching);
  CHECK_NEAR(f.fn, 1e5 * pow(1e-12, 1.5), 1e-20);
  /* loaded, then unloaded to a tenth: the same spring both ways, no plastic overlap */
  cd_penaltyContactForce(&m, -1e-3, 0, vt, 0, st, &f);
  CHECK_NEAR(f.fn, 1e5 * pow(1e-3, 1.5), 1e-12);
  cd_penaltyContactForce(&m, -1e-4, 0, vt, 0, st, &f);
  CHECK_NEAR(f.fn, 1e5 * pow(1e-4, 1.5), 1e-12);
  CHECK(st[CD_PENALTY_PLASTIC] == 0);
}

/* holds a 0.1 kg ball on the surface, then ramps a pull along +z to `pull` over 0.5 s and
 * holds it 0.3 s; returns the final gap. press > 0 first presses the ball down with that
 * force (ramped up and down), which makes a plastic overlap; *dp gets it. */
static double adhesionPullTest(cdMaterial m, double press, double pull, double *dp) {
  cdBall1d b;
  ballInit(&b, m, 0.1, 9.81, 0, 0);
  double dt = 1e-3, t = 0;
  for (int step = 0; step < 1800; step++) {
    int ns = ballSubsteps(&b, dt);
    double h = dt / ns;
    for (int s = 0; s < ns; s++, t += h) {
      double P;
      if (t < 0.2)
        P = 0;
      else if (t < 0.5)
        P = -press * sin(M_PI * (t - 0.2) / 0.3); /* press down and release */
      else if (t < 0.6)
        P = 0;
      else if (t < 1.1)
        P = pull * (t - 0.6) / 0.5;
      else
        P = pull;
      if (dp && t >= 0.55 && t < 0.55 + h) *dp = b.state[CD_PENALTY_PLASTIC];
      ballSubstep(&b, h, P);
      if (b.z > 0.01) return b.z; /* gone */
    }
  }
  return b.z;
}

CD_TEST(penaltyAdhesionHoldsUpToPullOffForce) {
  /* lambda_P = 0.1, k_adh = 0: unloading follows k2 down to delta_p, then the adhesive
   * branch holds -f_adh down to delta = 0: the ball leaves when the net pull P - m g
   * passes f_adh. With lambda_P = 0 (the Edinburgh model off) f_adh does not act and any
   * net pull takes it off. */
  cdMaterial m = testMaterial(0, 1e5, 1, 100, 1);
  m.pull_off_force = 5;
  m.plasticity_ratio = 0.1;
  double weight = 0.1 * 9.81, threshold = m.pull_off_force + weight;
  double below = adhesionPullTest(m, 0, 0.97 * threshold, NULL);
  double above = adhesionPullTest(m, 0, 1.03 * threshold, NULL);
  CHECK_MSG(below < 0, "pulled with 0.97 of f_adh + m g the ball should stay (gap %g)", below);
  CHECK_MSG(above > 1e-3, "pulled with 1.03 of f_adh + m g the ball should leave (gap %g)", above);
  m.plasticity_ratio = 0;
  double off = adhesionPullTest(m, 0, 0.97 * threshold, NULL);
  CHECK_MSG(off > 1e-3, "lambda_P = 0: f_adh must not hold the ball (gap %g)", off);
}

CD_TEST(penaltyAdhesionWithPlasticityHoldsUpToAdhesiveBranchPeak) {
  /* after pressing, unloading follows k2 down to the adhesive line -k_adh delta, met at
   * delta* = k2 delta_p / (k2 + k_adh): the largest pull the contact holds is
   * f_adh + k_adh delta* (n = n_adh = 1) */
  cdMaterial m = testMaterial(0, 1e5, 1, 100, 1);
  m.pull_off_force = 2;
  m.plasticity_ratio = 0.5;
  m.adhesion_coefficient = 5e4;
  double k2 = m.stiffness / (1 - m.plasticity_ratio), dp = 0;
  double weight = 0.1 * 9.81;
  adhesionPullTest(m, 100, 0, &dp);
  CHECK(dp > 0);
  double dstar = k2 * dp / (k2 + m.adhesion_coefficient);
  double threshold = weight + m.pull_off_force + m.adhesion_coefficient * dstar;
  printf("    plastic overlap %.3g m, hold limit %.4g N (f_adh + m g = %.4g N)\n", dp, threshold,
         weight + m.pull_off_force);
  double dp2 = 0;
  double below = adhesionPullTest(m, 100, 0.97 * threshold, &dp2);
  CHECK_NEAR(dp2, dp, 1e-12); /* same history, same plastic overlap */
  double above = adhesionPullTest(m, 100, 1.03 * threshold, NULL);
  CHECK_MSG(below < 0, "0.97 of the limit should hold (gap %g)", below);
  CHECK_MSG(above > 1e-3, "1.03 of the limit should pull it off (gap %g)", above);
  /* and the adhesive term matters: the plain pull-off force alone is well below */
  CHECK(m.adhesion_coefficient * dstar > 0.1 * (weight + m.pull_off_force));
}

CD_TEST(penaltyFrictionIsRegularisedCoulomb) {
  double ft[3];
  /* below v_reg: linear in the slip, -mu f_n v_t / v_reg */
  const double slow[3] = {0.5e-3, -0.2e-3, 0};
  cd_penaltyFriction(0.5, 1e-3, 10, slow, cd_v3norm(slow), ft);
  CHECK_NEAR(ft[0], -0.5 * 10 * 0.5, 1e-12);
  CHECK_NEAR(ft[1], 0.5 * 10 * 0.2, 1e-12);
  CHECK_NEAR(ft[2], 0, 0);
  /* above: mu f_n against the slip */
  const double fast[3] = {3, 4, 0};
  /* the coefficient c of f_t = -c v_t: mu f_n / |v_t| */
  CHECK_NEAR(cd_penaltyFriction(0.5, 1e-3, 10, fast, cd_v3norm(fast), ft), 0.5 * 10 / 5, 1e-15);
  CHECK_NEAR(ft[0], -5 * 0.6, 1e-12);
  CHECK_NEAR(ft[1], -5 * 0.8, 1e-12);
  /* continuous at v_reg */
  const double at[3] = {1e-3, 0, 0};
  cd_penaltyFriction(0.5, 1e-3, 10, at, cd_v3norm(at), ft);
  CHECK_NEAR(ft[0], -5, 1e-12);
  /* no friction from a tensile normal force, none without slip */
  cd_penaltyFriction(0.5, 1e-3, -10, fast, cd_v3norm(fast), ft);
  CHECK(ft[0] == 0 && ft[1] == 0);
  const double none[3] = {0, 0, 0};
  cd_penaltyFriction(0.5, 1e-3, 10, none, cd_v3norm(none), ft);
  CHECK(ft[0] == 0 && ft[1] == 0);
}

CD_TEST(penaltyContactFrictionUsesTheNormalForce) {
  cdMaterial m = testMaterial(0, 1e5, 1, 100, 1);
  m.friction = 0.4;
  m.friction_regularization = 0.01;
  double st[4] = {0};
  const double vt[3] = {0, 2, 0};
  cdPenaltyForce f;
  cd_penaltyContactForce(&m, -1e-4, -0.01, vt, 1, st, &f);
  CHECK_NEAR(f.fn, 10 + 1, 1e-12);
  CHECK_NEAR(f.ft[1], -0.4 * 11, 1e-12);
  CHECK_NEAR(st[CD_PENALTY_SLIP], 2, 0);
}

CD_TEST(penaltyLimitForceIsTheLawUnlessTheSubstepWouldReverseTheVelocity) {
  /* linear spring k 1e5, d_c 100, mu 0.4, v_reg 1e-2; overlap 1e-4 (k delta = 10 N) */
  cdMaterial m = testMaterial(0, 1e5, 1, 100, 1);
  m.friction = 0.4;
  m.friction_regularization = 0.01;
  const double slow[3] = {3e-3, -4e-3, 0}; /* |v_t| 5e-3 < v_reg: c = mu f_n / v_reg */
  double st[4] = {0};
  cdPenaltyForce law, f;
  cd_penaltyContactForce(&m, -1e-4, -0.01, slow, 1, st, &law);
  CHECK_NEAR(law.cn, 100, 0);
  /* c = 0.4 * 11 / 0.01 = 440 N s/m: with w_t = 2 uncapped while h <= 1 / 880 s */
  f = law;
  CHECK(cd_penaltyLimitForce(&m, 1e-3, 2, 2, -0.01, slow, &f) == 0);
  CHECK(memcmp(&f, &law, sizeof f) == 0);
  /* h = 1e-2: the explicit step would take h w_t c = 8.8 times the slip away; capped at
   * the impulse that stops it, |f_t| h w_t = |v_t|, against the slip; f_n is untouched
   * (h w_n d_c = 1e-2 * 0.5 * 100 = 0.5 <= 1) */
  f = law;
  CHECK(cd_penaltyLimitForce(&m, 1e-2, 0.5, 2, -0.01, slow, &f) == CD_PENALTY_LIMIT_FRICTION);
  CHECK(f.fn == law.fn);
  CHECK_NEAR(f.ft[0], -3e-3 / (1e-2 * 2), 1e-15);
  CHECK_NEAR(f.ft[1], 4e-3 / (1e-2 * 2), 1e-15);
  /* sliding fast: full Coulomb mu f_n = 4.4 N unless it would stop the slip in the substep */
  const double fast[3] = {0, 2, 0};
  cd_penaltyContactForce(&m, -1e-4, -0.01, fast, 1, st, &law);
  f = law;
  CHECK(cd_penaltyLimitForce(&m, 1e-2, 0.5, 2, -0.01, fast, &f) == 0); /* 4.4 * 0.02 < 2 */
  CHECK_NEAR(f.ft[1], -4.4, 1e-12);
  CHECK(cd_penaltyLimitForce(&m, 1, 1e-3, 2, -0.01, fast, &f) == CD_PENALTY_LIMIT_FRICTION); /* 8.8 > 2 */
  CHECK_NEAR(f.ft[1], -2 / (1.0 * 2), 1e-15);
  /* normal: Hunt-Crossley (e 0.5) closing at an impact velocity of 1e-6 m/s: lambda =
   * 1.5 (e - 1) k / 1e-6, cn = d_c + |lambda| delta; capped at 1 / (h w_n), the elastic
   * k delta stays */
  cdMaterial hc = testMaterial(1, 1e5, 1, 100, 0.5);
  double st2[4] = {0};
  cd_penaltyContactForce(&hc, -1e-4, -1e-6, fast, 1, st2, &law);
  double lambda = cd_penaltyHysteresis(&hc, 1e-6);
  CHECK_NEAR(law.cn, 100 - lambda * 1e-4, 1e-9 * law.cn);
  CHECK_NEAR(law.fn, 10 - law.cn * -1e-6, 1e-9);
  f = law;
  CHECK(cd_penaltyLimitForce(&hc, 1e-3, 0.5, 0.5, -1e-6, fast, &f) == CD_PENALTY_LIMIT_NORMAL);
  CHECK_NEAR(f.cn, 1 / (1e-3 * 0.5), 1e-9);
  CHECK_NEAR(f.fn - f.cn * 1e-6, 10, 1e-12); /* the elastic part */
  CHECK_NEAR(f.fd, 100 * 1e-6 * (f.cn / law.cn), 1e-18); /* -d_c v_n, scaled like the hysteresis */
  /* no contact, no force to limit */
  cd_penaltyContactForce(&m, 1e-4, -0.01, slow, 1, st, &law);
  f = law;
  CHECK(cd_penaltyLimitForce(&m, 1, 1, 1, -0.01, slow, &f) == 0 && f.fn == 0 && f.ft[0] == 0);
}

/* a drop from 0.05 m, 2 s; every out-of-contact energy <= the one before it */
static void checkDropEnergy(cdMaterial m, const char *what) {
  cdBall1d b;
  ballInit(&b, m, 1.0, 9.81, 0.05, 0);
  double dt = 1e-3, e_last = ballEnergy(&b), e0 = e_last;
  int ok = 1, bounces = 0, was = 0;
  for (int step = 0; step < 2000 && ok; step++) {
    int ns = ballSubsteps(&b, dt);
    for (int s = 0; s < ns; s++) {
      ballSubstep(&b, dt / ns, 0);
      if (b.f.touching) {
        was = 1;
        continue;
      }
      if (was) bounces++;
      was = 0;
      double e = ballEnergy(&b);
      if (e > e_last + 1e-12 * e0) {
        CHECK_MSG(0, "%s: energy grew from %.12g to %.12g J after %d bounces", what, e_last, e, bounces);
        ok = 0;
        break;
      }
      e_last = e;
    }
  }
  CHECK_MSG(bounces >= 1, "%s: no bounce", what);
}

CD_TEST(penaltyDropNeverGainsEnergyWithoutAdhesion) {
  checkDropEnergy(testMaterial(0, 1e6, 1, 100, 1), "linear + d_c");
  checkDropEnergy(testMaterial(0, 1e7, 1.5, 50, 1), "power law n 1.5 + d_c");
  cdMaterial ep = testMaterial(0, 1e6, 1, 0, 1);
  ep.plasticity_ratio = 0.4;
  checkDropEnergy(ep, "Edinburgh plastic");
  for (int model = 1; model <= 2; model++) {
    const double es[] = {0.1, 0.5, 0.9};
    for (int i = 0; i < 3; i++) {
      char what[64];
      snprintf(what, sizeof what, "model %d e %.1f", model, es[i]);
      checkDropEnergy(testMaterial(model, 1e7, 1.5, 0, es[i]), what);
      checkDropEnergy(testMaterial(model, 1e7, 1.5, 20, es[i]), what);
    }
  }
}

CD_TEST(penaltyStepLimitResolvesTheContact) {
  /* a linear contact, 1 kg on k = 1e6: omega = 1000, h = pi / (30 omega) */
  cdMaterial m = testMaterial(0, 1e6, 1, 0, 1);
  double k = cd_penaltyStiffness(&m, 1.0, 9.81, 0, 1.0);
  CHECK_NEAR(k, 1e6, 0);
  double h = cd_penaltyStepLimit(sqrt(k), k);
  CHECK_NEAR(h, M_PI / (CD_PENALTY_SUBSTEPS_PER_CONTACT * 1000.0), 1e-15);
  /* the coupled bound takes over when it is below: 1 / sqrt(omega2) */
  CHECK_NEAR(cd_penaltyStepLimit(sqrt(k), 1e12), 1e-6, 1e-20);
  /* n = 1.5 linearised at the impact's largest overlap ((n+1) v^2 / (2 w k))^(1/(n+1)) */
  m = testMaterial(1, 1e8, 1.5, 0, 0.5);
  k = cd_penaltyStiffness(&m, 1.0, 9.81, 0, 2.0);
  double dmax = pow(2.5 * 4 / 2e8, 1 / 2.5);
  CHECK_NEAR(k, 1.5e8 * sqrt(dmax), 1e-6 * k);
  /* the Edinburgh model's un/reloading branch is the stiffer one: k_c / (1 - lambda_P) */
  m = testMaterial(0, 1e6, 1, 0, 1);
  m.plasticity_ratio = 0.5;
  CHECK_NEAR(cd_penaltyStiffness(&m, 1.0, 9.81, 0, 1.0), 2e6, 1e-9);
  /* the dissipative forces are capped, not resolved: damping, hysteresis and friction
   * leave the stiffness, hence the step, as it is */
  m = testMaterial(2, 1e6, 1, 1e5, 0.1);
  m.friction = 0.5;
  m.friction_regularization = 1e-3;
  CHECK_NEAR(cd_penaltyStiffness(&m, 1.0, 9.81, 1e-4, 0), 1e6, 0);
  CHECK(isinf(cd_penaltyStepLimit(0, 0)));
}

/* ---- the backend on hand-made worlds and contacts (no collision, no pipeline) ---- */

#include "contact.h"
#include "penalty.h"
#include "vec3.h"
#include "world.h"

typedef struct {
  cdScene scene;
  cdMaterial mat[2];
  cdBodyDef body[3];
  cdWorld w;
  double x[9], v[18], R[27], Iinv[27], force[18];
} cdHandWorld;

/* bodies get the default-like material 1 (k 1e6, d 2e3, mu 0.5, v_reg 1e-3); the caller
 * sets shapes, masses, poses and velocities, then calls handWorldFinish */
static void handWorldInit(cdHandWorld *hw, int nbody) {
  memset(hw, 0, sizeof *hw);
  hw->mat[0] = cd_materialDefault();
  hw->mat[1] = cd_materialDefault();
  strcpy(hw->mat[1].name, "test");
  hw->scene.gravity[2] = -9.81;
  hw->scene.dt = 0.01;
  hw->scene.has_ground = 1;
  hw->scene.ground_material = 1;
  hw->scene.nmaterial = 2;
  hw->scene.material = hw->mat;
  hw->scene.nbody = nbody;
  hw->scene.body = hw->body;
  for (int i = 0; i < nbody; i++) {
    hw->body[i].orientation[0] = 1;
    hw->body[i].material = 1;
  }
}

static void handWorldFinish(cdHandWorld *hw) {
  cd_sceneFinish(&hw->scene);
  cdWorld *w = &hw->w;
  w->nbody = hw->scene.nbody;
  w->x = hw->x;
  w->v = hw->v;
  w->R = hw->R;
  w->Iinv = hw->Iinv;
  w->force = hw->force;
  cd_contactSetInit(&w->contacts);
  for (int i = 0; i < w->nbody; i++) {
    const cdBodyDef *b = &hw->body[i];
    cd_v3copy(&hw->x[3 * i], b->position);
    cd_v3copy(&hw->v[6 * i], b->velocity);
    cd_v3copy(&hw->v[6 * i + 3], b->angular_velocity);
    cd_quatToMat(&hw->R[9 * i], b->orientation);
    double d[3] = {0, 0, 0};
    for (int k = 0; k < 3; k++) d[k] = b->fixed ? 0 : 1 / b->inertia[k];
    cd_m3rotateDiag(&hw->Iinv[9 * i], &hw->R[9 * i], d);
  }
}

static cdContact *handContact(cdHandWorld *hw, int a, int b, const double point[3], const double n[3], double gap) {
  cdContact *c = cd_contactSetPush(&hw->w.contacts);
  c->body[0] = a;
  c->body[1] = b;
  cd_v3copy(c->point, point);
  cd_v3copy(c->normal, n);
  cd_tangentFrame(c->normal, c->t1, c->t2);
  c->gap = gap;
  c->fresh = 1;
  return c;
}

static int penaltyForcesOnce(cdHandWorld *hw, double h) {
  void *st = NULL;
  char err[256];
  cdBackendOptions opt = {0};
  if (cd_backendPenalty.make(&hw->scene, &opt, &st, err, sizeof err) != CD_OK) return -1;
  cdSolveStats stats = {0};
  int live[8], n = hw->w.contacts.ncon;
  for (int k = 0; k < n && k < 8; k++) live[k] = k;
  int rc = cd_backendPenalty.forces(st, &hw->scene, &hw->w, &hw->w.contacts, live, n < 8 ? n : 8, h, &stats);
  cd_backendPenalty.free(st);
  return rc;
}

CD_TEST(penaltyBackendAcceptsOnlyTheExplicitSolver) {
  cdHandWorld hw;
  handWorldInit(&hw, 1);
  hw.body[0].radius = 0.1;
  hw.body[0].mass = 1;
  handWorldFinish(&hw);
  char err[256] = "";
  void *st = NULL;
  cdBackendOptions opt = {0};
  CHECK(cd_backendPenalty.kind == CD_BACKEND_FORCE);
  CHECK(strcmp(cd_backendPenalty.name, "penalty") == 0);
  CHECK(cd_backendPenalty.make(&hw.scene, &opt, &st, err, sizeof err) == CD_OK);
  CHECK(strcmp(cd_backendPenalty.solverName(st), "explicit") == 0);
  cd_backendPenalty.free(st);
  opt.solver = "explicit";
  CHECK(cd_backendPenalty.make(&hw.scene, &opt, &st, err, sizeof err) == CD_OK);
  cd_backendPenalty.free(st);
  opt.solver = "lemke";
  st = NULL;
  CHECK(cd_backendPenalty.make(&hw.scene, &opt, &st, err, sizeof err) == CD_ERR_USAGE);
  CHECK(st == NULL);
  CHECK(strstr(err, "lemke") != NULL && strchr(err, '\n') == NULL);
  /* a forced substep count is taken as given */
  opt.solver = NULL;
  opt.substeps = 17;
  CHECK(cd_backendPenalty.make(&hw.scene, &opt, &st, err, sizeof err) == CD_OK);
  CHECK(cd_backendPenalty.substeps(st, &hw.scene, &hw.w, &hw.w.contacts, 0.01) == 17);
  cd_backendPenalty.free(st);
  opt.substeps = -1;
  CHECK(cd_backendPenalty.make(&hw.scene, &opt, &st, err, sizeof err) == CD_ERR_USAGE);
  cd_contactSetFree(&hw.w.contacts);
}

/* seed 002's force and torques on markers 0 and 1, literally (h1 = -1 for a hollow 1) */
static void seedSphereSphere(const cdMaterial *m, const double p0[3], const double v0[3], const double w0[3],
                             double r0, const double p1[3], const double v1[3], const double w1[3], double r1,
                             int hollow1, double f0[3], double t0[3], double f1[3], double t1[3]) {
  double h1 = hollow1 ? -1 : 1, d[3], n[3];
  cd_v3sub(d, p1, p0);
  double dist = cd_v3norm(d);
  double g = h1 * dist - (r0 + h1 * r1), delta = -g;
  cd_v3scale(n, d, h1 / dist);
  double dv[3];
  cd_v3sub(dv, v1, v0);
  double vn = cd_v3dot(dv, n);
  double arm0[3], arm1[3], va0[3], va1[3], tmp[3];
  cd_v3scale(arm0, n, r0 - delta / 2);
  cd_v3cross(tmp, w0, arm0);
  cd_v3add(va0, v0, tmp);
  cd_v3scale(arm1, n, -(r1 - h1 * delta / 2));
  cd_v3cross(tmp, w1, arm1);
  cd_v3addScaled(va1, v1, tmp, h1);
  double vt[3];
  cd_v3sub(vt, va1, va0);
  cd_v3addScaled(vt, vt, n, -vn);
  double vrel = cd_v3norm(vt);
  double fn = m->stiffness * pow(delta, m->stiffness_exponent) - m->damping * vn; /* model 0, linear */
  double c = m->friction * fn / (vrel < m->friction_regularization ? m->friction_regularization : vrel);
  cd_v3scale(f1, n, fn);
  cd_v3addScaled(f1, f1, vt, -c);
  cd_v3scale(f0, f1, -1);
  double l1[3], l0[3];
  cd_v3scale(l1, n, -h1 * (r1 - h1 * delta / 2));
  cd_v3cross(t1, l1, f1);
  cd_v3scale(l0, n, r0 - delta / 2);
  cd_v3cross(t0, l0, f0);
}

/* two moving spheres in contact (the inner one inside a hollow one, or outside each other)
 * in arbitrary motion: the backend's forces and torques equal seed 002's formulas */
static void checkSphereSphereAgainstSeed(int hollow) {
  cdHandWorld hw;
  handWorldInit(&hw, 2);
  double ra = hollow ? 1.0 : 0.3, rb = 0.1, delta = 1e-3;
  hw.body[0].radius = ra;
  hw.body[0].hollow = hollow;
  hw.body[0].mass = 5;
  hw.body[1].radius = rb;
  hw.body[1].mass = 0.7;
  double u[3] = {0.3, -0.2, -0.9};
  cd_v3normalize(u);
  cd_v3set(hw.body[0].position, 0.01, 0, 0.02);
  /* inner: centres |x_b - x_a| = r_a - r_b + delta; outer: r_a + r_b - delta */
  double dist = hollow ? ra - rb + delta : ra + rb - delta;
  cd_v3addScaled(hw.body[1].position, hw.body[0].position, u, dist);
  cd_v3set(hw.body[0].velocity, 0.1, -0.05, 0.02);
  cd_v3set(hw.body[0].angular_velocity, 0.3, 0.7, -0.2);
  cd_v3set(hw.body[1].velocity, -0.02, 0.04, 0.01);
  cd_v3set(hw.body[1].angular_velocity, -1.1, 0.4, 0.9);
  handWorldFinish(&hw);
  /* the contact as collision gives it: n pushes b away from a; point midway between the
   * surfaces; gap -delta */
  double n[3], p[3];
  cd_v3scale(n, u, hollow ? -1 : 1);
  cd_v3addScaled(p, hw.body[0].position, u, hollow ? ra + delta / 2 : ra - delta / 2);
  handContact(&hw, 0, 1, p, n, -delta);
  /* a substep short enough that neither cap of cd_penaltyLimitForce acts (friction would
   * stop the slip only after |v_t| / (w_t mu f_n) ~ 1e-4 s): the law itself */
  CHECK(penaltyForcesOnce(&hw, 1e-7) == CD_OK);
  double f0[3], t0[3], f1[3], t1[3];
  const cdBodyDef *A = &hw.body[0], *B = &hw.body[1];
  if (hollow) /* the seed's marker 1 is the hollow sphere: markers (0, 1) = (b, a) */
    seedSphereSphere(&hw.mat[1], B->position, B->velocity, B->angular_velocity, rb, A->position, A->velocity,
                     A->angular_velocity, ra, 1, f0, t0, f1, t1);
  else /* markers (0, 1) = (a, b) */
    seedSphereSphere(&hw.mat[1], A->position, A->velocity, A->angular_velocity, ra, B->position, B->velocity,
                     B->angular_velocity, rb, 0, f1, t1, f0, t0);
  /* f1, t1 now belong to a, f0, t0 to b in both cases */
  double scale = cd_v3norm(f0);
  CHECK(scale > 100); /* k delta = 1000 N: a real contact */
  for (int k = 0; k < 3; k++) {
    CHECK_NEAR(hw.force[k], f1[k], 1e-9 * scale);
    CHECK_NEAR(hw.force[3 + k], t1[k], 1e-9 * scale);
    CHECK_NEAR(hw.force[6 + k], f0[k], 1e-9 * scale);
    CHECK_NEAR(hw.force[9 + k], t0[k], 1e-9 * scale);
  }
  cd_contactSetFree(&hw.w.contacts);
}

CD_TEST(penaltySphereSphereForcesMatchSeedFormulas) { checkSphereSphereAgainstSeed(0); }
CD_TEST(penaltyHollowSphereForcesMatchSeedFormulas) { checkSphereSphereAgainstSeed(1); }

CD_TEST(penaltyBoxContactForcesAreEqualAndOppositeAtThePoint) {
  /* a box and a sphere touching at an off-centre point, both moving and spinning: the
   * forces cancel, the torques are (p - x) x F, so linear and angular momentum about the
   * origin are conserved; lambda holds F h (world, within the step) */
  cdHandWorld hw;
  handWorldInit(&hw, 2);
  hw.body[0].shape = CD_BOX;
  cd_v3set(hw.body[0].half, 0.2, 0.1, 0.15);
  hw.body[0].mass = 3;
  hw.body[1].radius = 0.05;
  hw.body[1].mass = 0.4;
  const double qa[4] = {0.9, 0.1, -0.3, 0.2};
  memcpy(hw.body[0].orientation, qa, sizeof qa);
  cd_quatNormalize(hw.body[0].orientation);
  cd_v3set(hw.body[0].position, 0.3, -0.1, 0.5);
  cd_v3set(hw.body[1].position, 0.5, 0.05, 0.7);
  cd_v3set(hw.body[0].velocity, 0.2, 0.1, -0.3);
  cd_v3set(hw.body[0].angular_velocity, 1, -2, 0.5);
  cd_v3set(hw.body[1].velocity, -0.4, 0.3, -0.2);
  cd_v3set(hw.body[1].angular_velocity, 3, 0, -1);
  handWorldFinish(&hw);
  double n[3] = {0.2, 0.3, 0.9}, p[3] = {0.48, 0.04, 0.66};
  cd_v3normalize(n);
  cdContact *c = handContact(&hw, 0, 1, p, n, -2e-4);
  double h = 1e-4;
  CHECK(penaltyForcesOnce(&hw, h) == CD_OK);
  double L[3] = {0, 0, 0}, P[3] = {0, 0, 0};
  for (int i = 0; i < 2; i++) {
    double xf[3];
    cd_v3cross(xf, &hw.x[3 * i], &hw.force[6 * i]);
    cd_v3add(L, L, xf);
    cd_v3add(L, L, &hw.force[6 * i + 3]);
    cd_v3add(P, P, &hw.force[6 * i]);
  }
  double scale = cd_v3norm(&hw.force[6]);
  CHECK(scale > 100);
  for (int k = 0; k < 3; k++) {
    CHECK_NEAR(P[k], 0, 1e-12 * scale);
    CHECK_NEAR(L[k], 0, 1e-12 * scale);
  }
  const double *Fb = &hw.force[6];
  /* within a step the impulse is summed in world coordinates (contact_cache.h) */
  for (int k = 0; k < 3; k++) CHECK_NEAR(c->lambda[k], h * Fb[k], 1e-15 * scale);
  /* the friction opposes the slip at the point */
  double vrel[3], vt[3], ft[3];
  cd_worldContactVelocity(&hw.w, c, vrel);
  cd_v3addScaled(vt, vrel, c->normal, -cd_v3dot(vrel, c->normal));
  cd_v3addScaled(ft, Fb, c->normal, -cd_v3dot(Fb, c->normal));
  CHECK(cd_v3dot(ft, vt) < 0);
  CHECK_NEAR(cd_v3norm(ft), 0.5 * cd_v3dot(Fb, c->normal), 1e-9 * scale); /* slipping fast: mu f_n */
  cd_contactSetFree(&hw.w.contacts);
}

CD_TEST(penaltyGroundTakesNoForceAndSeparatedContactsNone) {
  cdHandWorld hw;
  handWorldInit(&hw, 1);
  hw.body[0].radius = 0.1;
  hw.body[0].mass = 1;
  cd_v3set(hw.body[0].position, 0, 0, 0.1 - 1e-5);
  handWorldFinish(&hw);
  const double n[3] = {0, 0, 1}, p[3] = {0, 0, -0.5e-5}, p2[3] = {1, 0, 0};
  handContact(&hw, -1, 0, p, n, -1e-5);
  cdContact *open = handContact(&hw, -1, 0, p2, n, 1e-4); /* inside the margin, apart */
  open->feature[1] = 1;
  CHECK(penaltyForcesOnce(&hw, 1e-3) == CD_OK);
  CHECK_NEAR(hw.force[2], 1e6 * 1e-5, 1e-9);
  CHECK_NEAR(hw.force[0], 0, 0);
  CHECK(open->lambda[0] == 0);
  CHECK_NEAR(open->state[CD_PENALTY_GAP], 1e-4, 0);
  cd_contactSetFree(&hw.w.contacts);
}

CD_TEST(penaltySubstepsResolveTheFastestContact) {
  /* two 1 kg spheres stacked on the ground, no friction, no damping, k = 1e6: the pair
   * contact (w = 2/m) is the fastest, omega = sqrt(2 k / m); the stack's fastest mode has
   * omega^2 = (3 + sqrt 5)/2 k/m, and the step must stay below half its stability limit */
  cdHandWorld hw;
  handWorldInit(&hw, 2);
  hw.mat[1].friction = 0;
  hw.mat[1].damping = 0;
  for (int i = 0; i < 2; i++) {
    hw.body[i].radius = 0.1;
    hw.body[i].mass = 1;
    cd_v3set(hw.body[i].position, 0, 0, 0.1 + 0.2 * i);
  }
  handWorldFinish(&hw);
  const double n[3] = {0, 0, 1}, p0[3] = {0, 0, 0}, p1[3] = {0, 0, 0.2};
  handContact(&hw, -1, 0, p0, n, -1e-5);
  handContact(&hw, 0, 1, p1, n, -1e-5);
  double scratch[6];
  double h = cd_penaltyStableStep(&hw.scene, &hw.w, &hw.w.contacts, 0.01, scratch);
  CHECK_NEAR(h, M_PI / (CD_PENALTY_SUBSTEPS_PER_CONTACT * sqrt(2e6)), 1e-12 * h);
  CHECK(h <= 1 / sqrt((3 + sqrt(5)) / 2 * 1e6));
  void *st = NULL;
  char err[128];
  cdBackendOptions opt = {0};
  CHECK(cd_backendPenalty.make(&hw.scene, &opt, &st, err, sizeof err) == CD_OK);
  CHECK(cd_backendPenalty.substeps(st, &hw.scene, &hw.w, &hw.w.contacts, 0.01) == (int)ceil(0.01 / h));
  /* friction, capped in the forces, does not shorten the step */
  hw.mat[1].friction = 0.5;
  double hf = cd_penaltyStableStep(&hw.scene, &hw.w, &hw.w.contacts, 0.01, scratch);
  CHECK(hf == h);
  cd_backendPenalty.free(st);
  /* no contacts: nothing bounds the step */
  hw.w.contacts.ncon = 0;
  CHECK(isinf(cd_penaltyStableStep(&hw.scene, &hw.w, &hw.w.contacts, 0.01, scratch)));
  cd_contactSetFree(&hw.w.contacts);
}

#include "alloc.h"

CD_TEST(penaltyBackendMakeReportsAllocationFailure) {
  cdHandWorld hw;
  handWorldInit(&hw, 2);
  for (int i = 0; i < 2; i++) {
    hw.body[i].radius = 0.1;
    hw.body[i].mass = 1;
  }
  handWorldFinish(&hw);
  char err[128];
  cdBackendOptions opt = {0};
  for (long k = 1; k <= 4; k++) {
    long live = cd_allocLive();
    void *st = (void *)1;
    cd_allocFailAt(k);
    int rc = cd_backendPenalty.make(&hw.scene, &opt, &st, err, sizeof err);
    cd_allocFailAt(0);
    if (rc == CD_OK) {
      cd_backendPenalty.free(st);
    } else {
      CHECK(rc == CD_ERR_NOMEM);
      CHECK(st == NULL);
    }
    CHECK(cd_allocLive() == live);
  }
}
