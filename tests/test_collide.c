/* test_collide.c: the narrow phase pair by pair against analytic geometry, and cd_collide
 * end to end (margin, ground, dispatch, order, robustness). Box-box: test_box_box.c; the
 * broad phase: test_broadphase.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "backend.h"
#include "broadphase.h"
#include "collide.h"
#include "narrowphase.h"
#include "geom_util.h"
#include "test.h"
#include "vec3.h"

static cdBodyDef sphereDef(double r, int hollow) {
  cdBodyDef b;
  memset(&b, 0, sizeof b);
  b.shape = CD_SPHERE;
  b.radius = r;
  b.hollow = hollow;
  b.orientation[0] = 1;
  return b;
}

static void checkVec(const double a[3], const double b[3], double tol) {
  for (int k = 0; k < 3; k++) CHECK_NEAR(a[k], b[k], tol);
}

CD_TEST(sphereGroundGapNormalPointAreAnalytic) {
  cdContactSet s;
  cd_contactSetInit(&s);
  cdBodyDef b = sphereDef(0.5, 0);
  double x[3] = {1, 2, 0.7};
  CHECK(cd_collideSphereGround(3, &b, x, 0.1, 0.2, &s) == CD_OK);
  CHECK(s.ncon == 1);
  if (s.ncon == 1) {
    const cdContact *c = &s.con[0];
    double n[3] = {0, 0, 1}, p[3] = {1, 2, 0.15};
    CHECK(c->body[0] == -1 && c->body[1] == 3 && c->feature[0] == 0 && c->feature[1] == 0);
    CHECK_NEAR(c->gap, 0.1, 1e-12);
    checkVec(c->normal, n, 0);
    checkVec(c->point, p, 1e-12);
    CHECK(frameOk(c));
  }
  /* beyond the margin: nothing; penetrating: negative gap */
  cd_contactSetClear(&s);
  CHECK(cd_collideSphereGround(3, &b, x, 0.1, 0.05, &s) == CD_OK && s.ncon == 0);
  x[2] = 0.5;
  CHECK(cd_collideSphereGround(3, &b, x, 0.1, 0.0, &s) == CD_OK && s.ncon == 1);
  if (s.ncon == 1) CHECK_NEAR(s.con[0].gap, -0.1, 1e-12);
  cd_contactSetFree(&s);
}

CD_TEST(sphereSphereAlongArbitraryDirection) {
  cdContactSet s;
  cd_contactSetInit(&s);
  cdBodyDef A = sphereDef(0.4, 0), B = sphereDef(0.7, 0);
  double u[3] = {1, -2, 3}, xa[3] = {0.3, 0.1, -0.2}, xb[3];
  cd_v3normalize(u);
  cd_v3addScaled(xb, xa, u, 1.15);
  CHECK(cd_collideSphereSphere(2, &A, xa, 5, &B, xb, 0.06, &s) == CD_OK);
  CHECK(s.ncon == 1);
  if (s.ncon == 1) {
    const cdContact *c = &s.con[0];
    double p[3];
    cd_v3addScaled(p, xa, u, 0.4 + 0.025); /* midway in the 0.05 gap */
    CHECK(c->body[0] == 2 && c->body[1] == 5);
    CHECK_NEAR(c->gap, 0.05, 1e-12);
    checkVec(c->normal, u, 1e-15);
    checkVec(c->point, p, 1e-12);
    CHECK(frameOk(c));
  }
  cd_contactSetClear(&s);
  CHECK(cd_collideSphereSphere(2, &A, xa, 5, &B, xb, 0.04, &s) == CD_OK && s.ncon == 0);
  cd_contactSetFree(&s);
}

CD_TEST(coincidentSphereCentresTakePlusZ) {
  cdContactSet s;
  cd_contactSetInit(&s);
  cdBodyDef A = sphereDef(0.4, 0), B = sphereDef(0.3, 0);
  double x[3] = {1, 1, 1};
  CHECK(cd_collideSphereSphere(0, &A, x, 1, &B, x, 0, &s) == CD_OK && s.ncon == 1);
  if (s.ncon == 1) {
    double z[3] = {0, 0, 1};
    checkVec(s.con[0].normal, z, 0);
    CHECK_NEAR(s.con[0].gap, -0.7, 1e-15);
    CHECK(frameOk(&s.con[0]));
  }
  cd_contactSetFree(&s);
}

/* seed 002, hollow sphere = marker 1 (h1 = -1): g = r_shell - r_inner - |p_inner - p_shell|; the
 * seed's normal u points from the inner sphere to its contact point on the shell */
CD_TEST(sphereInHollowSphereFollowsSeedGapAndNormal) {
  cdContactSet s;
  cd_contactSetInit(&s);
  cdBodyDef S = sphereDef(1.0, 1), I = sphereDef(0.3, 0);
  double u[3] = {2, 1, -2}, xs[3] = {0.5, -1, 2}, xi[3];
  cd_v3normalize(u);
  for (int shell_first = 0; shell_first < 2; shell_first++) {
    for (int k = 0; k < 2; k++) {
      double d = k == 0 ? 0.7 : 0.75; /* touching; 0.05 overlap */
      cd_v3addScaled(xi, xs, u, d);
      cd_contactSetClear(&s);
      int rc = shell_first ? cd_collideSphereInHollow(0, &S, xs, 1, &I, xi, 1, 0.01, &s)
                           : cd_collideSphereInHollow(0, &I, xi, 1, &S, xs, 0, 0.01, &s);
      CHECK(rc == CD_OK && s.ncon == 1);
      if (s.ncon != 1) continue;
      const cdContact *c = &s.con[0];
      double g = 1.0 - 0.3 - d, n[3], p[3], q[3];
      CHECK_NEAR(c->gap, g, 1e-12);
      /* the push on b: the shell outwards (n = u) when it is b, the inner one inwards when b */
      cd_v3scale(n, u, shell_first ? -1.0 : 1.0);
      checkVec(c->normal, n, 1e-15);
      /* midway between the inner sphere's surface and the shell, along u */
      cd_v3addScaled(p, xi, u, 0.3);
      cd_v3addScaled(q, xs, u, 1.0);
      for (int j = 0; j < 3; j++) CHECK_NEAR(c->point[j], 0.5 * (p[j] + q[j]), 1e-12);
      CHECK(frameOk(c));
    }
  }
  /* well inside: beyond the margin; centre outside the shell: no inner contact */
  cd_contactSetClear(&s);
  CHECK(cd_collideSphereInHollow(0, &S, xs, 1, &I, xs, 1, 0.01, &s) == CD_OK && s.ncon == 0);
  cd_v3addScaled(xi, xs, u, 1.2);
  CHECK(cd_collideSphereInHollow(0, &S, xs, 1, &I, xi, 1, 0.01, &s) == CD_OK && s.ncon == 0);
  cd_contactSetFree(&s);
}

CD_TEST(boxRestingFlatGivesFourBottomCornersAtGapZero) {
  cdContactSet s;
  cd_contactSetInit(&s);
  cdBodyDef b = boxDef(0.5, 0.3, 0.2);
  double x[3] = {1, -1, 0.7};
  CHECK(cd_collideBoxGround(4, &b, x, kI, 0.5, 0.01, &s) == CD_OK);
  CHECK(s.ncon == 4);
  for (int i = 0; i < s.ncon; i++) {
    const cdContact *c = &s.con[i];
    uint32_t v = c->feature[1];
    CHECK(c->body[0] == -1 && c->body[1] == 4 && c->feature[0] == 0);
    CHECK(v < 4); /* bit 2 clear: the bottom corners */
    double p[3] = {1 + ((v & 1) ? 0.5 : -0.5), -1 + ((v & 2) ? 0.3 : -0.3), 0.5};
    checkVec(c->point, p, 1e-15);
    CHECK_NEAR(c->gap, 0, 1e-15);
    CHECK(frameOk(c));
  }
  cd_contactSetFree(&s);
}

CD_TEST(boxOnEdgeGivesTwoOnCornerGivesOne) {
  cdContactSet s;
  cd_contactSetInit(&s);
  cdBodyDef b = boxDef(0.5, 0.5, 0.5);
  double R[9], x[3] = {0, 0, 0.5 * sqrt(2.0)};
  rotAxisAngle(R, 1, 0, 0, M_PI / 4);
  CHECK(cd_collideBoxGround(0, &b, x, R, 0, 0.01, &s) == CD_OK);
  CHECK(s.ncon == 2);
  for (int i = 0; i < s.ncon; i++) {
    CHECK_NEAR(s.con[i].gap, 0, 1e-12);
    CHECK_NEAR(fabs(s.con[i].point[0]), 0.5, 1e-12);
    CHECK_NEAR(s.con[i].point[1], 0, 1e-12);
  }
  if (s.ncon == 2) CHECK(s.con[0].feature[1] != s.con[1].feature[1]);

  /* the body diagonal (1,1,1) turned to +z: corner 7 on top, corner 0 the lowest */
  double c[3] = {1, 1, 1}, z[3] = {0, 0, 1}, ax[3];
  cd_v3cross(ax, c, z);
  rotAxisAngle(R, ax[0], ax[1], ax[2], acos(1 / sqrt(3.0)));
  x[2] = 0.5 * sqrt(3.0);
  cd_contactSetClear(&s);
  CHECK(cd_collideBoxGround(0, &b, x, R, 0, 0.01, &s) == CD_OK);
  CHECK(s.ncon == 1);
  if (s.ncon == 1) {
    CHECK(s.con[0].feature[1] == 0);
    CHECK_NEAR(s.con[0].gap, 0, 1e-12);
    CHECK_NEAR(s.con[0].point[0], 0, 1e-12);
    CHECK_NEAR(s.con[0].point[1], 0, 1e-12);
  }
  cd_contactSetFree(&s);
}

CD_TEST(rotatedBoxGroundGapIsLowestCornerHeight) {
  cdContactSet s;
  cd_contactSetInit(&s);
  cdBodyDef b = boxDef(0.4, 0.25, 0.1);
  double R[9], x[3] = {0.3, 0.2, 0.33}, h = 0.05, margin = 0.12;
  srand(7);
  for (int trial = 0; trial < 50; trial++) {
    rotAxisAngle(R, rand() / (double)RAND_MAX - 0.5, rand() / (double)RAND_MAX - 0.5,
                 rand() / (double)RAND_MAX - 0.5 + 1e-3, 6.3 * rand() / (double)RAND_MAX);
    double zmin = INFINITY;
    int within = 0;
    for (int v = 0; v < 8; v++) {
      double l[3] = {(v & 1) ? 0.4 : -0.4, (v & 2) ? 0.25 : -0.25, (v & 4) ? 0.1 : -0.1}, w[3];
      cd_m3mulv(w, R, l);
      double z = x[2] + w[2];
      if (z < zmin) zmin = z;
      if (z - h <= margin) within++;
    }
    cd_contactSetClear(&s);
    CHECK(cd_collideBoxGround(1, &b, x, R, h, margin, &s) == CD_OK);
    CHECK(s.ncon == within);
    double gmin = INFINITY;
    for (int i = 0; i < s.ncon; i++)
      if (s.con[i].gap < gmin) gmin = s.con[i].gap;
    if (within) CHECK_NEAR(gmin, zmin - h, 1e-12);
  }
  cd_contactSetFree(&s);
}

/* a sphere of radius 0.2 against a box (0.5, 0.4, 0.3) turned arbitrarily; the sphere centre
 * given in the box frame, the expected box point, normal (box frame, box to sphere), gap and
 * box feature */
typedef struct {
  double q[3], c[3], n[3], gap;
  uint32_t feat;
} SphereBoxCase;

CD_TEST(sphereBoxFaceEdgeCornerAndInsideRegions) {
  const double r = 0.2, hb[3] = {0.5, 0.4, 0.3};
  const double e = 0.03, f = 0.04; /* edge offsets: a 3-4-5 triangle, distance 0.05 */
  const double k = 0.15 / 3;                              /* corner offset (2, -1, 2) k: dist 0.15 */
  SphereBoxCase cases[] = {
      /* face +z */
      {{0.1, 0.05, 0.55}, {0.1, 0.05, 0.3}, {0, 0, 1}, 0.05, 20 + 2 * 2 + 1},
      /* edge along y at x = +0.5, z = +0.3: code 8 + 4 + (z > 0) + 2 (x > 0) */
      {{0.5 + e, 0.1, 0.3 + f}, {0.5, 0.1, 0.3}, {0.6, 0, 0.8}, 0.05 - r, 8 + 4 + 1 + 2},
      /* corner (+, -, +) = vertex 1 + 4 */
      {{0.5 + 2 * k, -0.4 - k, 0.3 + 2 * k}, {0.5, -0.4, 0.3}, {2.0 / 3, -1.0 / 3, 2.0 / 3}, 0.15 - r, 5},
      /* centre inside, nearest face +y (0.05 away) */
      {{0.1, 0.35, 0.0}, {0.1, 0.4, 0.0}, {0, 1, 0}, -0.05 - r, 20 + 2 + 1},
      /* centre inside, nearest face -x */
      {{-0.42, 0.1, -0.1}, {-0.5, 0.1, -0.1}, {-1, 0, 0}, -0.08 - r, 20},
  };
  cdBodyDef S = sphereDef(r, 0), B = boxDef(hb[0], hb[1], hb[2]);
  double R[9], xb[3] = {1, 2, 3};
  rotAxisAngle(R, 0.3, -0.5, 0.8, 1.1);
  cdContactSet s;
  cd_contactSetInit(&s);
  for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++) {
    const SphereBoxCase *cs = &cases[t];
    double xs[3], c[3], n[3], p[3];
    cd_m3mulv(xs, R, cs->q);
    cd_v3add(xs, xs, xb);
    cd_m3mulv(c, R, cs->c);
    cd_v3add(c, c, xb);
    cd_m3mulv(n, R, cs->n);
    /* midway between the box point c and the sphere point xs - r n */
    for (int j = 0; j < 3; j++) p[j] = 0.5 * (c[j] + xs[j] - r * n[j]);
    for (int sphere_first = 0; sphere_first < 2; sphere_first++) {
      cd_contactSetClear(&s);
      int rc = sphere_first ? cd_collideSphereBox(0, &S, xs, kI, 1, &B, xb, R, 1, 0.1, &s)
                            : cd_collideSphereBox(0, &B, xb, R, 1, &S, xs, kI, 0, 0.1, &s);
      CHECK(rc == CD_OK);
      CHECK_MSG(s.ncon == 1, "case %zu: %d contacts", t, s.ncon);
      if (s.ncon != 1) continue;
      const cdContact *con = &s.con[0];
      CHECK_NEAR(con->gap, cs->gap, 1e-12);
      for (int j = 0; j < 3; j++) CHECK_NEAR(con->normal[j], sphere_first ? -n[j] : n[j], 1e-12);
      checkVec(con->point, p, 1e-12);
      CHECK_MSG(con->feature[sphere_first ? 1 : 0] == cs->feat && con->feature[sphere_first ? 0 : 1] == 0,
                "case %zu: features %u %u", t, con->feature[0], con->feature[1]);
      CHECK(frameOk(con));
    }
  }
  /* a sphere 0.15 beyond the face with margin 0.1: nothing */
  double far_local[3] = {0, 0, 0.3 + r + 0.15}, xs[3];
  cd_m3mulv(xs, R, far_local);
  cd_v3add(xs, xs, xb);
  cd_contactSetClear(&s);
  CHECK(cd_collideSphereBox(0, &B, xb, R, 1, &S, xs, kI, 0, 0.1, &s) == CD_OK && s.ncon == 0);
  cd_contactSetFree(&s);
}

/* a scene owned by the test (freed by freeScene) */
static cdScene makeScene(int nbody) {
  cdScene sc;
  memset(&sc, 0, sizeof sc);
  sc.nbody = nbody;
  sc.body = cd_calloc((size_t)nbody, sizeof *sc.body);
  sc.dt = 0.01;
  return sc;
}

static void freeScene(cdScene *sc) { cd_free(sc->body); }

static void poseArrays(const cdScene *sc, double **x, double **R) {
  *x = cd_malloc((size_t)sc->nbody * 3 * sizeof(double));
  *R = cd_malloc((size_t)sc->nbody * 9 * sizeof(double));
  for (int i = 0; i < sc->nbody; i++) {
    cd_v3copy(&(*x)[3 * i], sc->body[i].position);
    cd_quatToMat(&(*R)[9 * i], sc->body[i].orientation);
  }
}

CD_TEST(collideSceneDispatchesSortsAndSkipsFixedPairs) {
  cdScene sc = makeScene(5);
  CHECK(sc.body != NULL);
  if (!sc.body) return;
  sc.has_ground = 1;
  sc.ground_height = 0;
  sc.body[0] = boxDef(1, 1, 0.25); /* fixed table */
  cd_v3set(sc.body[0].position, 0, 0, 0.25);
  sc.body[0].fixed = 1;
  sc.body[1] = sphereDef(0.1, 0); /* fixed, touching the table: fixed-fixed, skipped */
  cd_v3set(sc.body[1].position, 0.5, 0.5, 0.6);
  sc.body[1].fixed = 1;
  sc.body[2] = boxDef(0.2, 0.2, 0.2); /* resting on the table */
  cd_v3set(sc.body[2].position, -0.3, 0, 0.7);
  sc.body[3] = sphereDef(0.15, 0); /* resting on the box */
  cd_v3set(sc.body[3].position, -0.3, 0, 1.05);
  sc.body[4] = sphereDef(0.2, 0); /* on the ground */
  cd_v3set(sc.body[4].position, 3, 0, 0.2);
  double *x, *R;
  poseArrays(&sc, &x, &R);
  cdCollider *c = cd_colliderMake(&sc);
  CHECK(c != NULL);
  cdContactSet s;
  cd_contactSetInit(&s);
  CHECK(cd_collide(c, &sc, x, R, NULL, sc.dt, &s) == CD_OK);
  /* ground-sphere 4 (1), table-box 2 (4), box 2-sphere 3 (1); nothing with body 1, nothing
   * between the fixed table and the ground */
  CHECK_MSG(s.ncon == 6, "%d contacts", s.ncon);
  int n_ground = 0, n_table = 0, n_ball = 0;
  for (int i = 0; i < s.ncon; i++) {
    const cdContact *k = &s.con[i];
    if (i > 0) CHECK(cd_contactKeyCompare(&s.con[i - 1], k) < 0);
    CHECK(k->body[0] < k->body[1]);
    CHECK(k->body[0] != 1 && k->body[1] != 1);
    CHECK(frameOk(k));
    CHECK_NEAR(k->gap, 0, 1e-12);
    if (k->body[0] == -1) n_ground += k->body[1] == 4;
    if (k->body[0] == 0 && k->body[1] == 2) n_table++;
    if (k->body[0] == 2 && k->body[1] == 3) {
      n_ball++;
      CHECK(k->feature[0] == 20 + 2 * 2 + 1 && k->normal[2] == 1);
    }
  }
  CHECK(n_ground == 1 && n_table == 4 && n_ball == 1);
  cd_contactSetFree(&s);
  cd_colliderFree(c);
  cd_free(x);
  cd_free(R);
  freeScene(&sc);
}

CD_TEST(marginGrowsWithClosingSpeed) {
  cdScene sc = makeScene(1);
  if (!sc.body) return;
  sc.has_ground = 1;
  sc.body[0] = sphereDef(0.1, 0);
  cd_v3set(sc.body[0].position, 0, 0, 0.15); /* gap 0.05 */
  double *x, *R, v[6] = {0, 0, -3, 0, 0, 0};
  poseArrays(&sc, &x, &R);
  cdCollider *c = cd_colliderMake(&sc);
  cdContactSet s;
  cd_contactSetInit(&s);
  /* at rest the margin is 1e-3 r: no contact; at 3 m/s over dt = 0.02 it is 0.06 + 1e-4 */
  CHECK(cd_collide(c, &sc, x, R, NULL, 0.02, &s) == CD_OK && s.ncon == 0);
  CHECK(cd_collide(c, &sc, x, R, v, 0.02, &s) == CD_OK && s.ncon == 1);
  CHECK(cd_collide(c, &sc, x, R, v, 0.01, &s) == CD_OK && s.ncon == 0);
  CHECK_NEAR(cd_collideMargin(&sc, 3, 0.02, 0.1), 0.06 + 1e-4, 1e-15);
  cd_contactSetFree(&s);
  cd_colliderFree(c);
  cd_free(x);
  cd_free(R);
  freeScene(&sc);
}

static void randomScene(cdScene *sc, double L, unsigned seed) {
  srand(seed);
  for (int i = 0; i < sc->nbody; i++) {
    cdBodyDef *b = &sc->body[i];
    int kind = rand() % 5;
    if (kind < 2)
      *b = sphereDef(urand(0.05, 0.3), kind == 0 && rand() % 8 == 0);
    else
      *b = boxDef(urand(0.05, 0.3), urand(0.05, 0.3), urand(0.05, 0.3));
    b->fixed = rand() % 10 == 0;
    cd_v3set(b->position, urand(0, L), urand(0, L), urand(0, L));
    double q[4] = {urand(-1, 1), urand(-1, 1), urand(-1, 1), urand(-1, 1)};
    cd_quatNormalize(q);
    memcpy(b->orientation, q, sizeof q);
  }
}

static int contactCmp(const void *x, const void *y) {
  return cd_contactKeyCompare((const cdContact *)x, (const cdContact *)y);
}

/* the collider's contacts equal those of the narrow phase run on every pair */
CD_TEST(colliderFindsExactlyTheBruteForceContacts) {
  cdScene sc = makeScene(800);
  if (!sc.body) return;
  sc.has_ground = 1;
  randomScene(&sc, 4.0, 11);
  double *x, *R, *v = cd_malloc((size_t)sc.nbody * 6 * sizeof(double));
  poseArrays(&sc, &x, &R);
  for (int i = 0; i < 6 * sc.nbody; i++) v[i] = urand(-2, 2);
  cdCollider *c = cd_colliderMake(&sc);
  cdContactSet s, ref;
  cd_contactSetInit(&s);
  cd_contactSetInit(&ref);
  double dt = 0.01;
  CHECK(cd_collide(c, &sc, x, R, v, dt, &s) == CD_OK);
  for (int a = 0; a < sc.nbody; a++) {
    const cdBodyDef *A = &sc.body[a];
    double ua = cd_bodySpeedBound(A, &v[6 * a]), sa = cd_bodySizeScale(A);
    if (!A->fixed) {
      double m = cd_collideMargin(&sc, ua, dt, sa);
      if (A->shape == CD_SPHERE)
        cd_collideSphereGround(a, A, &x[3 * a], 0, m, &ref);
      else
        cd_collideBoxGround(a, A, &x[3 * a], &R[9 * a], 0, m, &ref);
    }
    for (int b = a + 1; b < sc.nbody; b++) {
      const cdBodyDef *B = &sc.body[b];
      if (A->fixed && B->fixed) continue;
      double sb = cd_bodySizeScale(B);
      double m = cd_collideMargin(&sc, ua + cd_bodySpeedBound(B, &v[6 * b]), dt, sa < sb ? sa : sb);
      const double *xa = &x[3 * a], *xb = &x[3 * b], *Ra = &R[9 * a], *Rb = &R[9 * b];
      if (A->shape == CD_SPHERE && B->shape == CD_SPHERE) {
        if (!A->hollow && !B->hollow)
          cd_collideSphereSphere(a, A, xa, b, B, xb, m, &ref);
        else
          cd_collideSphereInHollow(a, A, xa, b, B, xb, A->hollow && (!B->hollow || A->radius >= B->radius), m,
                                   &ref);
      } else if (A->shape == CD_SPHERE) {
        cd_collideSphereBox(a, A, xa, Ra, b, B, xb, Rb, 1, m, &ref);
      } else if (B->shape == CD_SPHERE) {
        cd_collideSphereBox(a, A, xa, Ra, b, B, xb, Rb, 0, m, &ref);
      } else {
        cd_collideBoxBox(a, A, xa, Ra, b, B, xb, Rb, m, &ref);
      }
    }
  }
  qsort(ref.con, (size_t)ref.ncon, sizeof *ref.con, contactCmp);
  CHECK_MSG(s.ncon == ref.ncon, "collider %d, brute force %d", s.ncon, ref.ncon);
  CHECK(ref.ncon > 300); /* the scene is dense enough to test something */
  int n = s.ncon < ref.ncon ? s.ncon : ref.ncon, bad = 0;
  for (int i = 0; i < n; i++) {
    if (cd_contactKeyCompare(&s.con[i], &ref.con[i]) != 0 || s.con[i].gap != ref.con[i].gap) bad++;
    if (i > 0 && cd_contactKeyCompare(&s.con[i - 1], &s.con[i]) >= 0) bad++; /* keys unique */
    if (!frameOk(&s.con[i])) bad++;
  }
  CHECK_MSG(bad == 0, "%d mismatches", bad);
  cd_contactSetFree(&s);
  cd_contactSetFree(&ref);
  cd_colliderFree(c);
  cd_free(x);
  cd_free(R);
  cd_free(v);
  freeScene(&sc);
}

/* one collider kept over a run of moving poses gives, step by step, exactly the contacts of
 * a fresh collider (whose broad phase runs on that step's boxes alone), while its broad
 * phase runs on fewer steps than there are: the candidates kept across steps (collide.c)
 * hold every pair and change no bit. The bodies drift slowly, and every 10th step one of
 * them jumps, so that both the kept list and its renewal are exercised. */
CD_TEST(candidatesKeptAcrossStepsChangeNoContact) {
  cdScene sc = makeScene(400);
  if (!sc.body) return;
  sc.has_ground = 1;
  randomScene(&sc, 2.5, 5);
  double *x, *R, *v = cd_malloc((size_t)sc.nbody * 6 * sizeof(double));
  poseArrays(&sc, &x, &R);
  for (int i = 0; i < 6 * sc.nbody; i++) v[i] = urand(-0.5, 0.5);
  cdCollider *kept = cd_colliderMake(&sc);
  cdContactSet s, ref;
  cd_contactSetInit(&s);
  cd_contactSetInit(&ref);
  double dt = 0.002;
  int steps = 60, bad = 0, total = 0;
  for (int k = 0; k < steps; k++) {
    for (int i = 0; i < sc.nbody; i++)
      for (int d = 0; d < 3; d++) x[3 * i + d] += dt * v[6 * i + d];
    if (k % 10 == 9) x[3 * (k % sc.nbody)] += 0.3;
    cdCollider *fresh = cd_colliderMake(&sc);
    CHECK(cd_collide(kept, &sc, x, R, v, dt, &s) == CD_OK);
    CHECK(fresh && cd_collide(fresh, &sc, x, R, v, dt, &ref) == CD_OK);
    cd_colliderFree(fresh);
    total += ref.ncon;
    if (s.ncon != ref.ncon) {
      bad++;
      continue;
    }
    for (int i = 0; i < s.ncon; i++) {
      const cdContact *a = &s.con[i], *b = &ref.con[i];
      if (cd_contactKeyCompare(a, b) != 0 || a->gap != b->gap || memcmp(a->point, b->point, sizeof a->point) ||
          memcmp(a->normal, b->normal, sizeof a->normal) || memcmp(a->t1, b->t1, sizeof a->t1) ||
          memcmp(a->t2, b->t2, sizeof a->t2))
        bad++;
    }
  }
  long runs = cd_colliderBroadphaseRuns(kept);
  CHECK_MSG(bad == 0, "%d contacts differ from a fresh collider's", bad);
  CHECK_MSG(total > 100 * steps, "%d contacts in %d steps: the scene tests too little", total, steps);
  CHECK_MSG(runs >= steps / 10 && runs < steps / 2, "the broad phase ran %ld times in %d steps", runs, steps);
  cd_contactSetFree(&s);
  cd_contactSetFree(&ref);
  cd_colliderFree(kept);
  cd_free(x);
  cd_free(R);
  cd_free(v);
  freeScene(&sc);
}

/* hundreds of bodies at one point: every pair meets, the output is bounded by 8 a pair and
 * every normal is unit and finite */
CD_TEST(manyBodiesAtOnePointTerminateWithFiniteContacts) {
  int n = 400;
  cdScene sc = makeScene(n);
  if (!sc.body) return;
  for (int i = 0; i < n; i++) {
    sc.body[i] = i % 2 ? sphereDef(0.1 + 0.001 * i, i % 10 == 1) : boxDef(0.1, 0.2, 0.3);
    cd_v3set(sc.body[i].position, 1, 1, 1);
  }
  double *x, *R;
  poseArrays(&sc, &x, &R);
  cdCollider *c = cd_colliderMake(&sc);
  cdContactSet s;
  cd_contactSetInit(&s);
  CHECK(cd_collide(c, &sc, x, R, NULL, 0.01, &s) == CD_OK);
  CHECK(s.ncon >= (n / 2) * (n / 2 - 1) / 2 && s.ncon <= 8 * n * (n - 1) / 2); /* box pairs alone give one or more */
  int bad = 0;
  for (int i = 0; i < s.ncon; i++) {
    if (!frameOk(&s.con[i]) || !isfinite(s.con[i].gap)) bad++;
    if (i > 0 && cd_contactKeyCompare(&s.con[i - 1], &s.con[i]) >= 0) bad++;
  }
  CHECK_MSG(bad == 0, "%d bad contacts of %d", bad, s.ncon);
  cd_contactSetFree(&s);
  cd_colliderFree(c);
  cd_free(x);
  cd_free(R);
  freeScene(&sc);
}

CD_TEST(nonFiniteBodyGetsNoContacts) {
  cdScene sc = makeScene(3);
  if (!sc.body) return;
  sc.has_ground = 1;
  for (int i = 0; i < 3; i++) {
    sc.body[i] = sphereDef(0.5, 0);
    cd_v3set(sc.body[i].position, 0, 0, 0.5);
  }
  sc.body[1].position[0] = NAN;
  double *x, *R;
  poseArrays(&sc, &x, &R);
  cdCollider *c = cd_colliderMake(&sc);
  cdContactSet s;
  cd_contactSetInit(&s);
  CHECK(cd_collide(c, &sc, x, R, NULL, 0.01, &s) == CD_OK);
  /* ground-0, ground-2, 0-2 */
  CHECK(s.ncon == 3);
  for (int i = 0; i < s.ncon; i++) CHECK(s.con[i].body[0] != 1 && s.con[i].body[1] != 1);
  cd_contactSetFree(&s);
  cd_colliderFree(c);
  cd_free(x);
  cd_free(R);
  freeScene(&sc);
}

/* a hollow sphere meets the ground and boxes by its outside, other spheres by its inside;
 * of two hollow spheres the larger is the shell */
CD_TEST(hollowSphereOutsideForGroundAndBoxesInsideForSpheres) {
  cdScene sc = makeScene(4);
  if (!sc.body) return;
  sc.has_ground = 1;
  sc.body[0] = sphereDef(0.3, 1); /* hollow, within the big hollow one, touching its bottom */
  cd_v3set(sc.body[0].position, 0, 0, 0.3);
  sc.body[1] = sphereDef(1.0, 1); /* hollow, resting on the ground */
  cd_v3set(sc.body[1].position, 0, 0, 1.0);
  sc.body[2] = boxDef(0.2, 0.2, 0.2); /* resting on top of the big hollow sphere's outside */
  cd_v3set(sc.body[2].position, 0, 0, 2.2);
  sc.body[3] = sphereDef(0.1, 0); /* outside the big shell, touching it: no contact */
  cd_v3set(sc.body[3].position, 1.1, 0, 1.0);
  double *x, *R;
  poseArrays(&sc, &x, &R);
  cdCollider *c = cd_colliderMake(&sc);
  cdContactSet s;
  cd_contactSetInit(&s);
  CHECK(cd_collide(c, &sc, x, R, NULL, 0.01, &s) == CD_OK);
  int seen[4] = {0, 0, 0, 0};
  for (int i = 0; i < s.ncon; i++) {
    const cdContact *k = &s.con[i];
    CHECK(k->body[1] != 3); /* body 3 touches nothing */
    if (k->body[0] == 0 && k->body[1] == 1) {
      /* inside the shell 1: g = 1.0 - 0.3 - 0.7 = 0, push on the shell (b) outwards: -z */
      seen[0]++;
      CHECK_NEAR(k->gap, 0, 1e-12);
      CHECK(k->normal[2] == -1);
      CHECK_NEAR(k->point[2], 0, 1e-12);
    }
    if (k->body[0] == -1 && k->body[1] == 1) {
      seen[1]++;
      CHECK_NEAR(k->gap, 0, 1e-12);
    }
    if (k->body[0] == 1 && k->body[1] == 2) {
      seen[2]++;
      CHECK_NEAR(k->gap, 0, 1e-12);
      CHECK(k->normal[2] == 1);
    }
    if (k->body[0] == -1 && k->body[1] == 0) seen[3]++; /* the small one touches the ground too */
  }
  CHECK(seen[0] == 1 && seen[1] == 1 && seen[2] == 1 && seen[3] == 1);
  CHECK_MSG(s.ncon == 4, "%d contacts", s.ncon);
  cd_contactSetFree(&s);
  cd_colliderFree(c);
  cd_free(x);
  cd_free(R);
  freeScene(&sc);
}
