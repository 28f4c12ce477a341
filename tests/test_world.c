/* test_world.c: the world state and time stepping without contact (free flight). */
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
