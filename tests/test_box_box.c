/* test_box_box.c: box-box contacts (separating axes, face clipping, edge-edge) against
 * analytic configurations, and the stability of their feature keys. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "narrowphase.h"
#include "geom_util.h"
#include "test.h"
#include "vec3.h"

/* keys of one pair's contacts unique */
static int keysUnique(const cdContactSet *s) {
  for (int i = 0; i < s->ncon; i++)
    for (int j = i + 1; j < s->ncon; j++)
      if (cd_contactKeyCompare(&s->con[i], &s->con[j]) == 0) return 0;
  return 1;
}

static int collide(const cdBodyDef *A, const double xa[3], const double Ra[9], const cdBodyDef *B,
                   const double xb[3], const double Rb[9], double margin, cdContactSet *s) {
  cd_contactSetClear(s);
  return cd_collideBoxBox(0, A, xa, Ra, 1, B, xb, Rb, margin, s);
}

CD_TEST(faceFaceStackGivesFourPointsNormalUpGapZero) {
  cdContactSet s;
  cd_contactSetInit(&s);
  for (int equal = 0; equal < 2; equal++) {
    cdBodyDef A = equal ? boxDef(0.5, 0.5, 0.5) : boxDef(1, 1.2, 0.5), B = boxDef(0.5, 0.5, 0.5);
    double xa[3] = {0, 0, 0.5}, xb[3] = {0, 0, 1.5};
    CHECK(collide(&A, xa, kI, &B, xb, kI, 0.01, &s) == CD_OK);
    CHECK_MSG(s.ncon == 4, "equal %d: %d contacts", equal, s.ncon);
    CHECK(keysUnique(&s));
    for (int i = 0; i < s.ncon; i++) {
      const cdContact *c = &s.con[i];
      CHECK(c->normal[0] == 0 && c->normal[1] == 0 && c->normal[2] == 1);
      CHECK_NEAR(c->gap, 0, 1e-12);
      CHECK_NEAR(fabs(c->point[0]), 0.5, 1e-12);
      CHECK_NEAR(fabs(c->point[1]), 0.5, 1e-12);
      CHECK_NEAR(c->point[2], 1.0, 1e-12);
      /* A's top face against B's bottom corners */
      CHECK(c->feature[0] == 20 + 2 * 2 + 1 && c->feature[1] < 4);
      CHECK(frameOk(c));
    }
    /* the same with the upper box as a: the normal points down */
    cd_contactSetClear(&s);
    CHECK(cd_collideBoxBox(0, &B, xb, kI, 1, &A, xa, kI, 0.01, &s) == CD_OK);
    CHECK(s.ncon == 4);
    CHECK(keysUnique(&s));
    for (int i = 0; i < s.ncon; i++) {
      CHECK(s.con[i].normal[2] == -1);
      CHECK_NEAR(s.con[i].gap, 0, 1e-12);
      CHECK_NEAR(fabs(s.con[i].point[0]), 0.5, 1e-12);
      CHECK_NEAR(fabs(s.con[i].point[1]), 0.5, 1e-12);
      CHECK_NEAR(s.con[i].point[2], 1.0, 1e-12);
    }
  }
  cd_contactSetFree(&s);
}

/* a cube of half 0.5 turned 45 degrees about z on a cube of half 0.6: the small square's
 * corners reach 0.707 > 0.6, so the contact region is an octagon */
CD_TEST(cubeTurned45OnBiggerCubeGivesOctagon) {
  cdContactSet s;
  cd_contactSetInit(&s);
  cdBodyDef big = boxDef(0.6, 0.6, 0.6), small = boxDef(0.5, 0.5, 0.5);
  double R[9], xbig[3] = {0.2, -0.1, 0.6}, xsmall[3] = {0.2, -0.1, 1.7};
  rotAxisAngle(R, 0, 0, 1, M_PI / 4);
  for (int small_first = 0; small_first < 2; small_first++) {
    cd_contactSetClear(&s);
    int rc = small_first ? cd_collideBoxBox(0, &small, xsmall, R, 1, &big, xbig, kI, 0.01, &s)
                         : cd_collideBoxBox(0, &big, xbig, kI, 1, &small, xsmall, R, 0.01, &s);
    CHECK(rc == CD_OK);
    CHECK_MSG(s.ncon == 8, "%d contacts", s.ncon);
    CHECK(keysUnique(&s));
    for (int i = 0; i < s.ncon; i++) {
      const cdContact *c = &s.con[i];
      CHECK_NEAR(c->gap, 0, 1e-12);
      CHECK_NEAR(c->normal[2], small_first ? -1 : 1, 1e-15);
      /* within the small cube's bottom face, on its boundary (the octagon's vertices lie on
       * the small square's edges) */
      double d[3], l[3];
      cd_v3sub(d, c->point, xsmall);
      cd_m3mulvT(l, R, d);
      CHECK_NEAR(l[2], -0.5, 1e-12);
      CHECK(fabs(l[0]) <= 0.5 + 1e-12 && fabs(l[1]) <= 0.5 + 1e-12);
      CHECK_NEAR(fmax(fabs(l[0]), fabs(l[1])), 0.5, 1e-12);
      /* and at most the clip tolerance (1e-3 of the smaller half extent) outside the big face */
      CHECK(fabs(c->point[0] - xbig[0]) <= 0.6 + 5e-4 + 1e-12 && fabs(c->point[1] - xbig[1]) <= 0.6 + 5e-4 + 1e-12);
      CHECK(frameOk(c));
    }
  }
  cd_contactSetFree(&s);
}

/* A turned 45 degrees about x: its top edge runs along x at y = 0, z = sqrt(2)/2; B turned 45
 * degrees about y at x = 0.1: its bottom edge runs along y at z = zb - sqrt(2)/2. They cross at
 * (0.1, 0) with normal x cross y = +z */
CD_TEST(edgeEdgeCrossingGivesOnePointAlongTheCrossProduct) {
  cdContactSet s;
  cd_contactSetInit(&s);
  cdBodyDef A = boxDef(0.5, 0.5, 0.5), B = boxDef(0.5, 0.5, 0.5);
  double Ra[9], Rb[9], xa[3] = {0, 0, 0}, h = 0.5 * sqrt(2.0);
  rotAxisAngle(Ra, 1, 0, 0, M_PI / 4);
  rotAxisAngle(Rb, 0, 1, 0, M_PI / 4);
  double gaps[3] = {-0.01, 0.004, 0.02};
  for (int k = 0; k < 3; k++) {
    double xb[3] = {0.1, 0, 2 * h + gaps[k]};
    CHECK(collide(&A, xa, Ra, &B, xb, Rb, 0.01, &s) == CD_OK);
    if (k == 2) {
      CHECK_MSG(s.ncon == 0, "farther than the margin: %d contacts", s.ncon);
      continue;
    }
    CHECK_MSG(s.ncon == 1, "gap %g: %d contacts", gaps[k], s.ncon);
    if (s.ncon != 1) continue;
    const cdContact *c = &s.con[0];
    double p[3] = {0.1, 0, h + 0.5 * gaps[k]}, z[3] = {0, 0, 1};
    CHECK_NEAR(c->gap, gaps[k], 1e-12);
    for (int j = 0; j < 3; j++) {
      CHECK_NEAR(c->normal[j], z[j], 1e-12);
      CHECK_NEAR(c->point[j], p[j], 1e-12);
    }
    CHECK(c->feature[0] >= 8 && c->feature[0] < 20 && c->feature[1] >= 8 && c->feature[1] < 20);
    /* A's edge along its x axis (index 0..3), B's along its y axis (4..7) */
    CHECK(c->feature[0] - 8 < 4 && c->feature[1] - 8 >= 4 && c->feature[1] - 8 < 8);
    CHECK(frameOk(c));
  }
  cd_contactSetFree(&s);
}

CD_TEST(separatedBoxesWithinMarginGivePositiveGapFartherNothing) {
  cdContactSet s;
  cd_contactSetInit(&s);
  cdBodyDef A = boxDef(0.7, 0.6, 0.5), B = boxDef(0.3, 0.4, 0.2);
  double R[9];
  rotAxisAngle(R, 0, 0, 1, 0.3);
  double xa[3] = {0, 0, 0}, xb[3] = {0.1, 0.1, 0.5 + 0.2 + 0.003};
  CHECK(collide(&A, xa, kI, &B, xb, R, 0.01, &s) == CD_OK);
  CHECK(s.ncon == 4);
  for (int i = 0; i < s.ncon; i++) CHECK_NEAR(s.con[i].gap, 0.003, 1e-12);
  xb[2] += 0.02;
  CHECK(collide(&A, xa, kI, &B, xb, R, 0.01, &s) == CD_OK && s.ncon == 0);
  /* side by side along x, 0.005 apart */
  double xc[3] = {0.7 + 0.3 + 0.005, 0.2, 0.1};
  CHECK(collide(&A, xa, kI, &B, xc, kI, 0.01, &s) == CD_OK);
  CHECK(s.ncon == 4);
  for (int i = 0; i < s.ncon; i++) {
    CHECK_NEAR(s.con[i].gap, 0.005, 1e-12);
    CHECK(s.con[i].normal[0] == 1);
  }
  cd_contactSetFree(&s);
}

static int keyCmp(const void *x, const void *y) { return cd_contactKeyCompare(x, y); }

/* a small rigid motion: position by up to eps, rotation by up to eps radians */
static void perturb(double x[3], double R[9], const double x0[3], const double R0[9], double eps) {
  double D[9];
  rotAxisAngle(D, urand(-1, 1), urand(-1, 1), urand(-1, 1) + 1e-3, urand(-eps, eps));
  cd_m3mul(R, D, R0);
  for (int k = 0; k < 3; k++) x[k] = x0[k] + urand(-eps, eps);
}

/* resting stacks (equal cubes, a smaller box offset on a bigger one, a big box on a small
 * one, the 45-degree octagon): the keys stay the same under 1e-6 perturbations of the poses */
CD_TEST(restingStackKeysStableUnderSmallPerturbations) {
  typedef struct {
    double ha[3], hb[3], xb[3], angle;
  } Config;
  Config cfg[] = {
      {{0.5, 0.5, 0.5}, {0.5, 0.5, 0.5}, {0, 0, 1.0}, 0},
      {{1.0, 0.8, 0.3}, {0.3, 0.2, 0.25}, {0.4, -0.3, 0.55}, 0.4},
      {{0.2, 0.3, 0.25}, {0.9, 0.7, 0.3}, {0.05, 0.02, 0.55}, -0.2},
      {{0.6, 0.6, 0.6}, {0.5, 0.5, 0.5}, {0, 0, 1.1}, M_PI / 4},
  };
  int expect[] = {4, 4, 4, 8};
  cdContactSet s0, s1;
  cd_contactSetInit(&s0);
  cd_contactSetInit(&s1);
  srand(3);
  for (size_t t = 0; t < sizeof cfg / sizeof cfg[0]; t++) {
    cdBodyDef A = boxDef(cfg[t].ha[0], cfg[t].ha[1], cfg[t].ha[2]);
    cdBodyDef B = boxDef(cfg[t].hb[0], cfg[t].hb[1], cfg[t].hb[2]);
    double xa0[3] = {0, 0, 0}, Rb0[9];
    rotAxisAngle(Rb0, 0, 0, 1, cfg[t].angle);
    CHECK(collide(&A, xa0, kI, &B, cfg[t].xb, Rb0, 0.01, &s0) == CD_OK);
    CHECK_MSG(s0.ncon == expect[t], "config %zu: %d contacts", t, s0.ncon);
    qsort(s0.con, (size_t)s0.ncon, sizeof *s0.con, keyCmp);
    for (int trial = 0; trial < 20; trial++) {
      double xa[3], Ra[9], xb[3], Rb[9];
      perturb(xa, Ra, xa0, kI, 1e-6);
      perturb(xb, Rb, cfg[t].xb, Rb0, 1e-6);
      CHECK(collide(&A, xa, Ra, &B, xb, Rb, 0.01, &s1) == CD_OK);
      qsort(s1.con, (size_t)s1.ncon, sizeof *s1.con, keyCmp);
      int same = s1.ncon == s0.ncon;
      for (int i = 0; same && i < s0.ncon; i++) same = cd_contactKeyCompare(&s0.con[i], &s1.con[i]) == 0;
      CHECK_MSG(same, "config %zu trial %d: keys changed (%d -> %d contacts)", t, trial, s0.ncon, s1.ncon);
    }
  }
  cd_contactSetFree(&s0);
  cd_contactSetFree(&s1);
}

/* signed distance from p to the surface of the box (c, R, h) */
static double boxSdf(const double p[3], const double c[3], const double R[9], const double h[3]) {
  double d[3], q[3], out = 0, in = -INFINITY;
  cd_v3sub(d, p, c);
  cd_m3mulvT(q, R, d);
  for (int k = 0; k < 3; k++) {
    double e = fabs(q[k]) - h[k];
    if (e > 0) out += e * e;
    if (e > in) in = e;
  }
  return out > 0 ? sqrt(out) : in;
}

/* random pairs, touching or overlapping: every contact has a right-handed frame, a normal
 * from a to b, unique keys, and surface points p -+ gap/2 n on the two boxes (up to the
 * clip tolerance, 1e-3 of the smallest half extent, on the reference face) */
CD_TEST(randomBoxPairsGiveSurfacePointsAndValidFrames) {
  cdContactSet s;
  cd_contactSetInit(&s);
  srand(5);
  int total = 0, bad = 0;
  for (int trial = 0; trial < 2000; trial++) {
    cdBodyDef A = boxDef(urand(0.1, 1), urand(0.1, 1), urand(0.1, 1));
    cdBodyDef B = boxDef(urand(0.1, 1), urand(0.1, 1), urand(0.1, 1));
    double Ra[9], Rb[9], xa[3] = {0, 0, 0}, xb[3];
    rotAxisAngle(Ra, urand(-1, 1), urand(-1, 1), urand(-1, 1) + 1e-3, urand(0, 6.3));
    rotAxisAngle(Rb, urand(-1, 1), urand(-1, 1), urand(-1, 1) + 1e-3, urand(0, 6.3));
    for (int k = 0; k < 3; k++) xb[k] = urand(-1.2, 1.2);
    double tol = 1e-3 * fmin(fmin(fmin(A.half[0], A.half[1]), fmin(A.half[2], B.half[0])), fmin(B.half[1], B.half[2]));
    CHECK(collide(&A, xa, Ra, &B, xb, Rb, 0.05, &s) == CD_OK);
    total += s.ncon;
    if (s.ncon > 8 || !keysUnique(&s)) bad++;
    for (int i = 0; i < s.ncon; i++) {
      const cdContact *c = &s.con[i];
      double pa[3], pb[3];
      cd_v3addScaled(pa, c->point, c->normal, -0.5 * c->gap);
      cd_v3addScaled(pb, c->point, c->normal, 0.5 * c->gap);
      if (!frameOk(c) || cd_v3dot(c->normal, xb) < 0 || c->gap > 0.05) bad++;
      if (fabs(boxSdf(pa, xa, Ra, A.half)) > tol + 1e-12 || fabs(boxSdf(pb, xb, Rb, B.half)) > tol + 1e-12) bad++;
    }
  }
  CHECK_MSG(bad == 0, "%d bad cases", bad);
  CHECK(total > 2000);
  cd_contactSetFree(&s);
}

CD_TEST(coincidentBoxesGiveBoundedFiniteContacts) {
  cdContactSet s;
  cd_contactSetInit(&s);
  cdBodyDef A = boxDef(0.5, 0.4, 0.3);
  double x[3] = {1, 2, 3};
  CHECK(collide(&A, x, kI, &A, x, kI, 0.01, &s) == CD_OK);
  CHECK(s.ncon >= 1 && s.ncon <= 8);
  CHECK(keysUnique(&s));
  for (int i = 0; i < s.ncon; i++) {
    CHECK(frameOk(&s.con[i]));
    CHECK_NEAR(s.con[i].gap, -0.6, 1e-12); /* the least penetration: through the z faces */
  }
  cd_contactSetFree(&s);
}
