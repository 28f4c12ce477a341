/* test_problem.c: the contact Jacobian, the closed-form M^-1, v_f and the Delassus operator,
 * against dense references and finite differences. */
#include <stdlib.h>
#include <string.h>

#include "problem_build.h"
#include "test.h"
#include "vec3.h"
#include "world.h"

typedef struct {
  cdScene s;
  cdBodyDef b[3];
  cdMaterial m;
} Fixture;

/* a turned box (anisotropic inertia), a spinning sphere, a fixed sphere, and hand-made
 * contacts between them and with the ground */
static cdWorld *makeFixture(Fixture *f) {
  memset(f, 0, sizeof *f);
  f->m = cd_materialDefault();
  cdScene *s = &f->s;
  s->nmaterial = 1;
  s->material = &f->m;
  s->nbody = 3;
  s->body = f->b;
  s->has_ground = 1;
  cd_v3set(s->gravity, 0, 0, -9.81);
  s->dt = 0.01;
  cdBodyDef *box = &f->b[0], *sph = &f->b[1], *fix = &f->b[2];
  box->shape = CD_BOX;
  cd_v3set(box->half, 0.1, 0.2, 0.3);
  box->mass = 3;
  cd_v3set(box->position, 0, 0, 0.3);
  double q[4] = {cos(0.3), sin(0.3) * 0.6, 0, sin(0.3) * 0.8};
  memcpy(box->orientation, q, sizeof q);
  cd_v3set(box->velocity, 0.3, -0.2, 0.1);
  cd_v3set(box->angular_velocity, 1, 2, -0.5);
  sph->shape = CD_SPHERE;
  sph->radius = 0.15;
  sph->mass = 0.7;
  cd_v3set(sph->position, 0.4, 0.1, 0.5);
  sph->orientation[0] = 1;
  cd_v3set(sph->velocity, -0.5, 0, 0.2);
  cd_v3set(sph->angular_velocity, 0, 3, 1);
  fix->shape = CD_SPHERE;
  fix->radius = 0.2;
  fix->fixed = 1;
  cd_v3set(fix->position, 0.8, 0.1, 0.6);
  fix->orientation[0] = 1;
  cd_sceneFinish(s);
  cdWorld *w = cd_worldMake(s);
  if (!w) return NULL;
  struct {
    int a, b;
    double p[3], n[3];
  } spec[] = {{-1, 0, {0.05, 0.1, 0.0}, {0, 0, 1}},
              {0, 1, {0.25, 0.05, 0.45}, {0.8, 0.2, 0.3}},
              {1, 2, {0.6, 0.1, 0.55}, {0.9, 0, 0.2}},
              {-1, 1, {0.4, 0.1, 0.0}, {0, 0, 1}}};
  for (int k = 0; k < 4; k++) {
    cdContact *c = cd_contactSetPush(&w->contacts);
    c->body[0] = spec[k].a;
    c->body[1] = spec[k].b;
    c->feature[1] = (uint32_t)k;
    memcpy(c->point, spec[k].p, sizeof c->point);
    memcpy(c->normal, spec[k].n, sizeof c->normal);
    cd_v3normalize(c->normal);
    cd_tangentFrame(c->normal, c->t1, c->t2);
    c->gap = 0.001 * k;
  }
  return w;
}

/* J (3 ncon x 6 nbody) dense, row-major, from the problem's per-contact blocks */
static double *denseJ(const cdContactProblem *p) {
  int nd = 6 * p->nbody;
  double *D = calloc((size_t)3 * p->ncon * nd, sizeof(double));
  for (int i = 0; i < p->ncon; i++)
    for (int s = 0; s < 2; s++) {
      int k = p->cbody[2 * i + s];
      if (k < 0) continue;
      for (int r = 0; r < 3; r++)
        for (int e = 0; e < 6; e++) D[(size_t)(3 * i + r) * nd + 6 * k + e] += p->J[36 * i + 18 * s + 6 * r + e];
    }
  return D;
}

/* M^-1 (6 nbody square) dense, row-major, inverted here from M = diag(m I, R I R^T) by
 * Gauss-Jordan: an independent check of the closed-form per-body inverse */
static double *denseMinvByElimination(const cdScene *s, const cdWorld *w) {
  int nd = w->ndof;
  double *M = calloc((size_t)nd * nd, sizeof(double)), *X = calloc((size_t)nd * nd, sizeof(double));
  for (int i = 0; i < w->nbody; i++) {
    int o = w->dof[i];
    if (o < 0) continue;
    const cdBodyDef *b = &s->body[i];
    double Iw[9];
    cd_m3rotateDiag(Iw, &w->R[9 * i], b->inertia);
    for (int e = 0; e < 3; e++) M[(size_t)(o + e) * nd + o + e] = b->mass;
    for (int r = 0; r < 3; r++)
      for (int c = 0; c < 3; c++) M[(size_t)(o + 3 + r) * nd + o + 3 + c] = Iw[3 * r + c];
  }
  for (int r = 0; r < nd; r++) X[(size_t)r * nd + r] = 1;
  for (int c = 0; c < nd; c++) {
    int piv = c;
    for (int r = c + 1; r < nd; r++)
      if (fabs(M[(size_t)r * nd + c]) > fabs(M[(size_t)piv * nd + c])) piv = r;
    for (int k = 0; k < nd; k++) {
      double t = M[(size_t)c * nd + k];
      M[(size_t)c * nd + k] = M[(size_t)piv * nd + k];
      M[(size_t)piv * nd + k] = t;
      t = X[(size_t)c * nd + k];
      X[(size_t)c * nd + k] = X[(size_t)piv * nd + k];
      X[(size_t)piv * nd + k] = t;
    }
    double d = M[(size_t)c * nd + c];
    for (int k = 0; k < nd; k++) {
      M[(size_t)c * nd + k] /= d;
      X[(size_t)c * nd + k] /= d;
    }
    for (int r = 0; r < nd; r++) {
      if (r == c) continue;
      double f = M[(size_t)r * nd + c];
      for (int k = 0; k < nd; k++) {
        M[(size_t)r * nd + k] -= f * M[(size_t)c * nd + k];
        X[(size_t)r * nd + k] -= f * X[(size_t)c * nd + k];
      }
    }
  }
  free(M);
  return X;
}

/* the world position at time h of the material point of body b that is at p now */
static void pointAt(const cdWorld *w, int b, const double p[3], double h, double out[3]) {
  if (b < 0) {
    cd_v3copy(out, p);
    return;
  }
  double r[3], rb[3], q[4], R[9];
  cd_v3sub(r, p, &w->x[3 * b]);
  cd_m3mulvT(rb, &w->R[9 * b], r);
  memcpy(q, &w->q[4 * b], sizeof q);
  cd_quatIntegrate(q, &w->v[6 * b + 3], h);
  cd_quatToMat(R, q);
  cd_m3mulv(r, R, rb);
  for (int e = 0; e < 3; e++) out[e] = w->x[3 * b + e] + h * w->v[6 * b + e] + r[e];
}

CD_TEST(jacobianTimesVelocityIsTheFiniteDifferencedContactVelocity) {
  Fixture f;
  cdWorld *w = makeFixture(&f);
  CHECK(w != NULL);
  if (!w) return;
  CHECK(cd_problemBuild(&f.s, w, f.s.dt) == CD_OK);
  double *J = denseJ(&w->cp);
  int nd = w->ndof;
  double v[12];
  for (int i = 0; i < 2; i++) memcpy(&v[w->dof[i]], &w->v[6 * i], 6 * sizeof(double));
  const double h = 1e-6;
  for (int k = 0; k < w->contacts.ncon; k++) {
    const cdContact *c = &w->contacts.con[k];
    const double *dir[3] = {c->normal, c->t1, c->t2};
    double pa1[3], pb1[3], pa0[3], pb0[3], d1[3], d0[3];
    pointAt(w, c->body[0], c->point, h, pa1);
    pointAt(w, c->body[1], c->point, h, pb1);
    pointAt(w, c->body[0], c->point, -h, pa0);
    pointAt(w, c->body[1], c->point, -h, pb0);
    cd_v3sub(d1, pb1, pa1);
    cd_v3sub(d0, pb0, pa0);
    for (int r = 0; r < 3; r++) {
      double jv = 0;
      for (int j = 0; j < nd; j++) jv += J[(size_t)(3 * k + r) * nd + j] * v[j];
      double fd = (cd_v3dot(d1, dir[r]) - cd_v3dot(d0, dir[r])) / (2 * h);
      CHECK_NEAR(jv, fd, 1e-7);
    }
  }
  free(J);
  cd_worldFree(w);
}

CD_TEST(closedFormInverseMassOfTheProblemMatchesTheEliminatedInverseOfM) {
  Fixture f;
  cdWorld *w = makeFixture(&f);
  CHECK(w != NULL);
  if (!w) return;
  CHECK(cd_problemBuild(&f.s, w, f.s.dt) == CD_OK);
  const cdContactProblem *p = &w->cp;
  double *Mi = denseMinvByElimination(&f.s, w);
  int nd = w->ndof;
  CHECK(nd == 12 && p->nbody == 2);
  for (int k = 0; k < 2; k++)
    for (int r = 0; r < 6; r++)
      for (int c = 0; c < 6; c++) {
        double got = r < 3 ? (r == c ? p->minv[k] : 0) : (c >= 3 ? p->Iinv[9 * k + 3 * (r - 3) + (c - 3)] : 0);
        double ref = Mi[(size_t)(6 * k + r) * nd + 6 * k + c];
        CHECK_NEAR(got, ref, 1e-12 * (1 + fabs(ref)));
      }
  /* nothing couples different bodies */
  CHECK(fabs(Mi[(size_t)0 * nd + 6]) < 1e-15 && fabs(Mi[(size_t)7 * nd + 1]) < 1e-15);
  free(Mi);
  cd_worldFree(w);
}

/* v_f = v + dt M^-1 (m g, -w x I w): checked against the elimination inverse and the
 * gyroscopic torque written out here */
CD_TEST(freeVelocityIsGravityAndTheExplicitGyroscopicTerm) {
  Fixture f;
  cdWorld *w = makeFixture(&f);
  CHECK(w != NULL);
  if (!w) return;
  CHECK(cd_problemBuild(&f.s, w, f.s.dt) == CD_OK);
  double *Mi = denseMinvByElimination(&f.s, w);
  int nd = w->ndof;
  double fext[12] = {0};
  for (int i = 0; i < 2; i++) {
    const cdBodyDef *b = &f.b[i];
    const double *om = &w->v[6 * i + 3];
    double Iw[9], Io[3];
    cd_m3rotateDiag(Iw, &w->R[9 * i], b->inertia);
    cd_m3mulv(Io, Iw, om);
    for (int e = 0; e < 3; e++) fext[6 * i + e] = b->mass * f.s.gravity[e];
    fext[6 * i + 3] = -(om[1] * Io[2] - om[2] * Io[1]);
    fext[6 * i + 4] = -(om[2] * Io[0] - om[0] * Io[2]);
    fext[6 * i + 5] = -(om[0] * Io[1] - om[1] * Io[0]);
  }
  for (int r = 0; r < nd; r++) {
    double ref = w->v[r]; /* bodies 0 and 1 are the moving ones, in order */
    for (int c = 0; c < nd; c++) ref += f.s.dt * Mi[(size_t)r * nd + c] * fext[c];
    CHECK_NEAR(w->cp.vf[r], ref, 1e-12 * (1 + fabs(ref)));
  }
  free(Mi);
  cd_worldFree(w);
}

CD_TEST(delassusBlocksEqualDenseJMinvJt) {
  Fixture f;
  cdWorld *w = makeFixture(&f);
  CHECK(w != NULL);
  if (!w) return;
  CHECK(cd_problemBuild(&f.s, w, f.s.dt) == CD_OK);
  CHECK(w->cp.delassus_pending == 1);
  CHECK(cd_contactProblemDelassus(&w->cp) == CD_OK);
  int nd = w->ndof, nc = w->contacts.ncon, n = 3 * nc;
  double *J = denseJ(&w->cp), *Mi = denseMinvByElimination(&f.s, w);
  double *G = calloc((size_t)n * n, sizeof(double));
  const cdBlockMatrix *B = &w->cp.G;
  CHECK(B->nblock == nc);
  for (int I = 0; I < nc; I++) {
    CHECK(B->col[B->diag[I]] == I);
    for (int k = B->rowptr[I]; k < B->rowptr[I + 1]; k++) {
      if (k > B->rowptr[I]) CHECK(B->col[k] > B->col[k - 1]);
      for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) G[(size_t)(3 * I + r) * n + 3 * B->col[k] + c] = B->val[9 * k + 3 * r + c];
    }
  }
  double maxabs = 0;
  for (int r = 0; r < n; r++)
    for (int c = 0; c < n; c++) {
      double ref = 0;
      for (int a = 0; a < nd; a++)
        for (int b = 0; b < nd; b++) ref += J[(size_t)r * nd + a] * Mi[(size_t)a * nd + b] * J[(size_t)c * nd + b];
      CHECK_NEAR(G[(size_t)r * n + c], ref, 1e-12 * (1 + fabs(ref)));
      if (fabs(ref) > maxabs) maxabs = fabs(ref);
    }
  CHECK(maxabs > 0.1);
  /* contacts 0 (ground-box) and 2 (sphere-fixed) share no moving body: no block */
  for (int k = B->rowptr[0]; k < B->rowptr[1]; k++) CHECK(B->col[k] != 2);
  /* g = J v_f + phi / dt on the normal rows */
  for (int k = 0; k < nc; k++) {
    double jv = 0;
    for (int j = 0; j < nd; j++) jv += J[(size_t)(3 * k) * nd + j] * w->cp.vf[j];
    CHECK_NEAR(w->cp.g[3 * k], jv + w->contacts.con[k].gap / f.s.dt, 1e-12);
    /* the effective normal mass is 1 / G_kk[n,n] */
    CHECK_NEAR(w->cp.meff[k] * G[(size_t)(3 * k) * n + 3 * k], 1.0, 1e-12);
  }
  free(J);
  free(Mi);
  free(G);
  cd_worldFree(w);
}

/* block (i, j) of G as the scalar sums it stands for (problem.c, addBlock): each entry the
 * six products of JM_i's row and J_j's row, left to right, added to zero side by side (i's
 * side a first) */
static void blockRef(const cdContactProblem *p, int i, int j, double ref[9]) {
  memset(ref, 0, 9 * sizeof *ref);
  for (int si = 0; si < 2; si++)
    for (int sj = 0; sj < 2; sj++) {
      if (p->cbody[2 * i + si] < 0 || p->cbody[2 * i + si] != p->cbody[2 * j + sj]) continue;
      const double *a = &p->JM[36 * i + 18 * si], *b = &p->J[36 * j + 18 * sj];
      for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++)
          ref[3 * r + c] += a[6 * r] * b[6 * c] + a[6 * r + 1] * b[6 * c + 1] + a[6 * r + 2] * b[6 * c + 2] +
                            a[6 * r + 3] * b[6 * c + 3] + a[6 * r + 4] * b[6 * c + 4] + a[6 * r + 5] * b[6 * c + 5];
    }
}

/* G's blocks the scalar sums bit for bit, (i, j < i) stored as the transpose of (j, i); G x by
 * columns (cd_blockMatrixMul on a step's G) the same bits as by rows, with a contact without
 * an impulse and negative zeros in x; J M^-1 x by lanes (cd_contactProblemRowsMul with p->JM)
 * the same bits as by rows, and J^T l by lanes (cd_contactProblemRowsTMulAdd) as by entries */
CD_TEST(delassusBuildAndProductsAreTheScalarSumsBitForBit) {
  Fixture f;
  cdWorld *w = makeFixture(&f);
  CHECK(w != NULL);
  if (!w) return;
  CHECK(cd_problemBuild(&f.s, w, f.s.dt) == CD_OK);
  CHECK(cd_contactProblemDelassus(&w->cp) == CD_OK);
  const cdContactProblem *p = &w->cp;
  const cdBlockMatrix *B = &p->G;
  int nc = p->ncon;
  CHECK(B->transposed == 1);
  for (int i = 0; i < nc; i++)
    for (int k = B->rowptr[i]; k < B->rowptr[i + 1]; k++) {
      int j = B->col[k];
      double ref[9], t[9];
      if (j >= i) {
        blockRef(p, i, j, ref);
      } else {
        blockRef(p, j, i, t);
        for (int r = 0; r < 3; r++)
          for (int c = 0; c < 3; c++) ref[3 * c + r] = t[3 * r + c];
      }
      CHECK(memcmp(ref, &B->val[9 * k], sizeof ref) == 0);
    }
  double x[12] = {0.3, -1.25, 2.0, 0, 0, -0.0, -0.7, 0.1, 1e-3, 5.0, -0.0, 0.25}, y1[12], y2[12];
  cdBlockMatrix rows = *B;
  rows.transposed = 0;
  cd_blockMatrixMul(B, x, y1);
  cd_blockMatrixMul(&rows, x, y2);
  CHECK(memcmp(y1, y2, sizeof y1) == 0);
  int n6 = 6 * p->nbody;
  double *xb = malloc((size_t)n6 * sizeof *xb), *JMc = malloc(36 * (size_t)nc * sizeof *JMc);
  CHECK(xb && JMc);
  if (xb && JMc) {
    for (int k = 0; k < n6; k++) xb[k] = 0.1 * (k + 1) * (k % 2 ? -1 : 1);
    memcpy(JMc, p->JM, 36 * (size_t)nc * sizeof *JMc);
    for (int i = 0; i < nc; i++) {
      double s1[3], s2[3];
      cd_contactProblemRowsMul(p, p->JM, i, xb, s1);
      cd_contactProblemRowsMul(p, JMc, i, xb, s2);
      CHECK(memcmp(s1, s2, sizeof s1) == 0);
    }
    /* J^T l by lanes against the scalar sums */
    double *o1 = calloc((size_t)n6, sizeof *o1), *o2 = calloc((size_t)n6, sizeof *o2);
    CHECK(o1 && o2);
    for (int i = 0; o1 && o2 && i < nc; i++) {
      const double *l = &x[3 * i];
      cd_contactProblemRowsTMulAdd(p, i, l, o1);
      for (int si = 0; si < 2; si++) {
        int k = p->cbody[2 * i + si];
        if (k < 0) continue;
        const double *J = &p->J[36 * i + 18 * si];
        for (int e = 0; e < 6; e++) o2[6 * k + e] += J[e] * l[0] + J[6 + e] * l[1] + J[12 + e] * l[2];
      }
    }
    if (o1 && o2) CHECK(memcmp(o1, o2, (size_t)n6 * sizeof *o1) == 0);
    free(o1);
    free(o2);
  }
  free(xb);
  free(JMc);
  cd_worldFree(w);
}
