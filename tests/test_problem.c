/* test_problem.c: the contact Jacobian, M^-1 from CHOLMOD and the Delassus operator,
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

static double *denseOf(const cholmod_sparse *A) {
  double *D = calloc(A->nrow * A->ncol, sizeof(double));
  const int *p = A->p, *i = A->i;
  const double *x = A->x;
  for (size_t j = 0; j < A->ncol; j++)
    for (int k = p[j]; k < p[j + 1]; k++) D[(size_t)i[k] * A->ncol + j] += x[k];
  return D;
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
  cdProblemWork pw;
  CHECK(cd_problemFreeVelocity(&f.s, w, f.s.dt) == CD_OK);
  CHECK(cd_problemBuild(&f.s, w, f.s.dt, &pw) == CD_OK);
  double *J = denseOf(pw.J);
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
  cd_problemWorkFree(w, &pw);
  cd_worldFree(w);
}

CD_TEST(inverseMassFromCholmodMatchesDenseInverse) {
  Fixture f;
  cdWorld *w = makeFixture(&f);
  CHECK(w != NULL);
  if (!w) return;
  double *Mi = denseOf(w->Minv);
  int nd = w->ndof;
  CHECK(nd == 12);
  for (int i = 0; i < 2; i++) {
    int o = w->dof[i];
    const cdBodyDef *b = &f.b[i];
    double d[3] = {1 / b->inertia[0], 1 / b->inertia[1], 1 / b->inertia[2]}, Ii[9];
    cd_m3rotateDiag(Ii, &w->R[9 * i], d);
    for (int r = 0; r < 6; r++)
      for (int c = 0; c < 6; c++) {
        double ref = r < 3 ? (r == c ? 1 / b->mass : 0) : (c >= 3 ? Ii[3 * (r - 3) + (c - 3)] : 0);
        CHECK_NEAR(Mi[(size_t)(o + r) * nd + o + c], ref, 1e-12 * (1 + fabs(ref)));
      }
  }
  /* nothing couples different bodies */
  CHECK(Mi[(size_t)0 * nd + 6] == 0 && Mi[(size_t)7 * nd + 1] == 0);
  free(Mi);
  cd_worldFree(w);
}

CD_TEST(delassusBlocksEqualDenseJMinvJt) {
  Fixture f;
  cdWorld *w = makeFixture(&f);
  CHECK(w != NULL);
  if (!w) return;
  cdProblemWork pw;
  CHECK(cd_problemFreeVelocity(&f.s, w, f.s.dt) == CD_OK);
  CHECK(cd_problemBuild(&f.s, w, f.s.dt, &pw) == CD_OK);
  int nd = w->ndof, nc = w->contacts.ncon, n = 3 * nc;
  double *J = denseOf(pw.J), *Mi = denseOf(w->Minv);
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
    for (int j = 0; j < nd; j++) jv += J[(size_t)(3 * k) * nd + j] * w->vf[j];
    CHECK_NEAR(w->cp.g[3 * k], jv + w->contacts.con[k].gap / f.s.dt, 1e-12);
  }
  free(J);
  free(Mi);
  free(G);
  cd_problemWorkFree(w, &pw);
  cd_worldFree(w);
}
