/* test_world.c: the world state and time stepping without contact (free flight). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "test.h"
#include "vec3.h"
#include "world.h"

/* a backend that must never be asked to solve: the scenes here have no contacts */
static int solveNever(void *s, cdContactProblem *p, cdContactSet *c, cdSolveStats *st) {
  (void)s, (void)p, (void)c, (void)st;
  cd_testFail(__FILE__, __LINE__, "solve called without contacts");
  return CD_ERR_NUMERIC;
}
static const cdBackend kNoContact = {.name = "none", .kind = CD_BACKEND_IMPULSE, .solve = solveNever};

/* one body, no ground */
static void oneBody(cdScene *s, cdBodyDef *b, cdMaterial *m, cdShape shape) {
  memset(s, 0, sizeof *s);
  memset(b, 0, sizeof *b);
  *m = cd_materialDefault();
  s->nmaterial = 1;
  s->material = m;
  s->nbody = 1;
  s->body = b;
  cd_v3set(s->gravity, 0, 0, -9.81);
  s->dt = 0.01;
  strcpy(b->name, "b");
  b->shape = shape;
  b->radius = 0.1;
  b->half[0] = 0.1;
  b->half[1] = 0.2;
  b->half[2] = 0.3;
  b->mass = 2.0;
  b->orientation[0] = 1;
  cd_sceneFinish(s);
}

CD_TEST(freeFlightFollowsTheDiscreteParabolaExactly) {
  cdScene s;
  cdBodyDef b;
  cdMaterial m;
  oneBody(&s, &b, &m, CD_SPHERE);
  cd_v3set(b.position, 0.5, -1, 2);
  cd_v3set(b.velocity, 1, 0.5, 5);
  cd_v3set(b.angular_velocity, 0, 0, 10);
  cdWorld *w = cd_worldMake(&s);
  CHECK(w != NULL);
  if (!w) return;
  const double dt = s.dt, g = 9.81;
  for (int n = 1; n <= 200; n++) {
    cdSolveStats st;
    CHECK(cd_worldStep(&s, w, &kNoContact, NULL, dt, &st) == CD_OK);
    /* semi-implicit Euler: z_n = z0 + n dt vz0 - g dt^2 n (n + 1) / 2 (NUMERICS.md) */
    double z = 2 + n * dt * 5 - g * dt * dt * n * (n + 1) / 2.0;
    CHECK_NEAR(w->x[2], z, 1e-12 * (1 + fabs(z)));
    CHECK_NEAR(w->x[0], 0.5 + n * dt * 1.0, 1e-12);
    CHECK_NEAR(w->x[1], -1 + n * dt * 0.5, 1e-12);
    CHECK_NEAR(w->v[5], 10.0, 1e-12); /* the spin is kept */
  }
  /* the orientation is the exact rotation about z by w t */
  double t = 200 * dt, angle = 10 * t;
  CHECK_NEAR(w->q[0], cos(angle / 2), 1e-10);
  CHECK_NEAR(w->q[3], sin(angle / 2), 1e-10);
  CHECK_NEAR(w->time, t, 1e-12);
  cd_worldFree(w);
}

CD_TEST(freeFlightEnergyFollowsTheDiscreteDriftExactly) {
  cdScene s;
  cdBodyDef b;
  cdMaterial m;
  oneBody(&s, &b, &m, CD_SPHERE);
  cd_v3set(b.velocity, 1, 0, 5);
  cdWorld *w = cd_worldMake(&s);
  if (!w) {
    CHECK(w != NULL);
    return;
  }
  /* semi-implicit Euler: v_n = v0 - n g dt, z_n = z0 + n dt v0 - g dt^2 n (n + 1) / 2, so
   * E_n - E_0 = m/2 ((v0 - n g dt)^2 - v0^2) + m g (z_n - z0) = -n m g^2 dt^2 / 2 exactly:
   * a loss of 0.0096 J a step here (2 kg, dt 0.01), to roundoff of E ~ 26 J */
  const double g = 9.81, dt = s.dt;
  double e0 = cd_worldKineticEnergy(&s, w) + cd_worldPotentialEnergy(&s, w);
  for (int n = 1; n <= 100; n++) {
    cdSolveStats st;
    CHECK(cd_worldStep(&s, w, &kNoContact, NULL, dt, &st) == CD_OK);
    double e = cd_worldKineticEnergy(&s, w) + cd_worldPotentialEnergy(&s, w);
    CHECK_NEAR(e - e0, -n * b.mass * g * g * dt * dt / 2, 1e-11);
  }
  cd_worldFree(w);
}

CD_TEST(tumblingBoxKeepsUnitQuaternionAndAngularMomentum) {
  cdScene s;
  cdBodyDef b;
  cdMaterial m;
  oneBody(&s, &b, &m, CD_BOX);
  s.gravity[2] = 0;
  cd_v3set(b.angular_velocity, 3, 0.1, 0.2); /* near the intermediate... a generic spin */
  s.dt = 1e-4;
  cdWorld *w = cd_worldMake(&s);
  if (!w) {
    CHECK(w != NULL);
    return;
  }
  double L0[3], L1[3], Iw[9];
  cd_m3rotateDiag(Iw, w->R, b.inertia);
  cd_m3mulv(L0, Iw, &w->v[3]);
  for (int n = 0; n < 2000; n++) {
    cdSolveStats st;
    CHECK(cd_worldStep(&s, w, &kNoContact, NULL, s.dt, &st) == CD_OK);
    double *q = w->q;
    CHECK_NEAR(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3], 1.0, 1e-12);
  }
  cd_m3rotateDiag(Iw, w->R, b.inertia);
  cd_m3mulv(L1, Iw, &w->v[3]);
  /* the explicit gyroscopic term conserves |L| to first order in dt over the run */
  for (int k = 0; k < 3; k++) CHECK_NEAR(L1[k], L0[k], 5e-3 * cd_v3norm(L0));
  cd_worldFree(w);
}

/* the series rotation of the force models' balls (vec3.h cd_quatIntegrateSmall) is the exact
 * one of cd_quatIntegrate to roundoff: one turn at angles theta^2 = (h |w| / 2)^2 from 1e-14
 * to the series' limit 1e-3 and beyond it (the exact rotation), and 1e5 turns of a varying
 * spin, normalised every 200 as a step of substeps does (within 1e-12: 30 times the random
 * walk of an ulp a turn, sqrt(1e5) 1.1e-16); w = 0 leaves q as it is */
CD_TEST(quatSeriesRotationIsTheExactOneToRoundoff) {
  double q0[4] = {0.8, -0.3, 0.4, 0.33};
  cd_quatNormalize(q0);
  const double axis[3] = {0.36, -0.48, 0.8}, h = 1e-4;
  double worst = 0;
  for (double t = 1e-14; t < 1e-2; t *= 3) {
    double wn = 2 * sqrt(t) / h, w[3], a[4], b[4];
    cd_v3scale(w, axis, wn);
    memcpy(a, q0, sizeof a);
    memcpy(b, q0, sizeof b);
    cd_quatIntegrateSmall(a, w, h);
    CHECK_NEAR(a[0] * a[0] + a[1] * a[1] + a[2] * a[2] + a[3] * a[3], 1.0, 4.5e-16);
    cd_quatNormalize(a);
    cd_quatIntegrate(b, w, h);
    for (int k = 0; k < 4; k++) worst = fmax(worst, fabs(a[k] - b[k]));
  }
  CHECK_MSG(worst <= 4.5e-16, "one turn: %.3g from the exact rotation", worst);
  double a[4], b[4];
  memcpy(a, q0, sizeof a);
  memcpy(b, q0, sizeof b);
  for (int n = 0; n < 100000; n++) {
    const double w[3] = {30 * sin(1e-3 * n), 20 * cos(3e-4 * n), -25 + 1e-4 * n};
    cd_quatIntegrateSmall(a, w, h);
    if (n % 200 == 199) cd_quatNormalize(a);
    cd_quatIntegrate(b, w, h);
  }
  double drift = 0;
  for (int k = 0; k < 4; k++) drift = fmax(drift, fabs(a[k] - b[k]));
  CHECK_MSG(drift <= 1e-12, "1e5 turns: %.3g from the exact rotations", drift);
  printf("    one turn: %.2g from cd_quatIntegrate at most; after 1e5 turns: %.2g\n", worst, drift);
  memcpy(a, q0, sizeof a);
  const double zero[3] = {0, 0, 0};
  cd_quatIntegrateSmall(a, zero, h);
  CHECK(memcmp(a, q0, sizeof a) == 0);
}

CD_TEST(worldMakeFailsCleanlyOnEveryAllocation) {
  cdScene s;
  cdBodyDef b;
  cdMaterial m;
  oneBody(&s, &b, &m, CD_BOX);
  long live0 = cd_allocLive();
  int failures = 0;
  for (long k = 1; k < 200; k++) {
    cd_allocFailAt(k);
    cdWorld *w = cd_worldMake(&s);
    cd_allocFailAt(0);
    if (w) {
      cd_worldFree(w);
      break;
    }
    failures++;
    CHECK_MSG(cd_allocLive() == live0, "allocation %ld failed: %ld blocks leaked", k, cd_allocLive() - live0);
  }
  CHECK(failures > 5);
  CHECK(cd_allocLive() == live0);
}
