/* world.c: making and freeing the world; the per-body inverse inertia; the friction table.
 *
 * M^-1 is kept per body in closed form: 1/m, and R diag(1/I) R^T updated whenever the body
 * turns (cd_worldUpdateInertia). The contact problem (problem.c) and the force integrator use
 * it; nothing else holds M^-1.
 */
#include "world.h"

#include <math.h>
#include <string.h>

#include "alloc.h"
#include "linalg.h"
#include "vec3.h"

/* world inverse inertia of body i from its rotation */
void cd_worldUpdateInertia(const cdScene *scene, cdWorld *w, int i) {
  const cdBodyDef *b = &scene->body[i];
  double *Ii = &w->Iinv[9 * (size_t)i];
  if (b->fixed) {
    memset(Ii, 0, 9 * sizeof(double));
    return;
  }
  double d[3] = {1.0 / b->inertia[0], 1.0 / b->inertia[1], 1.0 / b->inertia[2]};
  cd_m3rotateDiag(Ii, &w->R[9 * (size_t)i], d);
}

/* the friction table, when the materials are few enough (64^2 entries at most) */
#define CD_WORLD_MAX_TABLE_MATERIALS 64

double cd_worldFriction(const cdScene *scene, const cdWorld *w, int a, int b) {
  int ma = a < 0 ? scene->ground_material : scene->body[a].material;
  int mb = b < 0 ? scene->ground_material : scene->body[b].material;
  if (w->mu_table) return w->mu_table[ma * w->nmat_table + mb];
  cdMaterial m;
  cd_sceneContactMaterial(scene, a, b, &m);
  return m.friction;
}

static int frictionTable(const cdScene *scene, cdWorld *w) {
  int n = scene->nmaterial;
  if (n <= 0 || n > CD_WORLD_MAX_TABLE_MATERIALS) return 0;
  w->mu_table = cd_malloc((size_t)n * (size_t)n * sizeof(double));
  if (!w->mu_table) return -1;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      cdMaterial m;
      cd_materialMix(&scene->material[i], &scene->material[j], &m);
      w->mu_table[i * n + j] = m.friction;
    }
  w->nmat_table = n;
  return 0;
}

cdWorld *cd_worldMake(const cdScene *scene) {
  cdWorld *w = cd_calloc(1, sizeof *w);
  if (!w) return NULL;
  int n = scene->nbody;
  size_t nb = (size_t)(n > 0 ? n : 1);
  w->nbody = n;
  w->dof = cd_calloc(nb, sizeof(int));
  w->x = cd_calloc(nb * 3, sizeof(double));
  w->q = cd_calloc(nb * 4, sizeof(double));
  w->v = cd_calloc(nb * 6, sizeof(double));
  w->R = cd_calloc(nb * 9, sizeof(double));
  w->Iinv = cd_calloc(nb * 9, sizeof(double));
  w->force = cd_calloc(nb * 6, sizeof(double));
  w->round = cd_calloc(nb, sizeof *w->round);
  cd_contactSetInit(&w->contacts);
  cd_contactSetInit(&w->previous);
  if (!w->dof || !w->x || !w->q || !w->v || !w->R || !w->Iinv || !w->force || !w->round) goto fail;
  for (int i = 0; i < n; i++) {
    const cdBodyDef *b = &scene->body[i];
    w->dof[i] = b->fixed ? -1 : w->ndof;
    if (b->inertia[0] == b->inertia[1] && b->inertia[1] == b->inertia[2])
      w->round[i] = b->shape == CD_SPHERE ? CD_WORLD_ISOTROPIC | CD_WORLD_BALL : CD_WORLD_ISOTROPIC;
    if (!b->fixed) w->ndof += 6;
    memcpy(&w->x[3 * i], b->position, 3 * sizeof(double));
    memcpy(&w->q[4 * i], b->orientation, 4 * sizeof(double));
    cd_quatNormalize(&w->q[4 * i]);
    if (!b->fixed) {
      memcpy(&w->v[6 * i], b->velocity, 3 * sizeof(double));
      memcpy(&w->v[6 * i + 3], b->angular_velocity, 3 * sizeof(double));
    }
    cd_quatToMat(&w->R[9 * i], &w->q[4 * i]);
    cd_worldUpdateInertia(scene, w, i);
  }
  w->collider = cd_colliderMake(scene);
  if (!w->collider) goto fail;
  w->impulse = cd_calloc((size_t)(w->ndof > 0 ? w->ndof : 1), sizeof(double));
  if (!w->impulse || frictionTable(scene, w)) goto fail;
  cd_linalgInit(); /* the solvers' CHOLMOD allocations go through alloc.h too */
  return w;
fail:
  cd_worldFree(w);
  return NULL;
}

void cd_worldFree(cdWorld *w) {
  if (!w) return;
  cd_colliderFree(w->collider);
  cd_contactSetFree(&w->contacts);
  cd_contactSetFree(&w->previous);
  cd_contactProblemFree(&w->cp);
  cd_free(w->dof);
  cd_free(w->x);
  cd_free(w->q);
  cd_free(w->v);
  cd_free(w->R);
  cd_free(w->Iinv);
  cd_free(w->force);
  cd_free(w->round);
  cd_free(w->impulse);
  cd_free(w->mu_table);
  cd_free(w);
}

int cd_worldCheckFinite(const cdWorld *w) {
  for (int i = 0; i < w->nbody; i++) {
    for (int k = 0; k < 3; k++)
      if (!isfinite(w->x[3 * i + k])) return i;
    for (int k = 0; k < 4; k++)
      if (!isfinite(w->q[4 * i + k])) return i;
    for (int k = 0; k < 6; k++)
      if (!isfinite(w->v[6 * i + k])) return i;
  }
  return -1;
}

double cd_worldKineticEnergy(const cdScene *scene, const cdWorld *w) {
  double e = 0;
  for (int i = 0; i < w->nbody; i++) {
    const cdBodyDef *b = &scene->body[i];
    if (b->fixed) continue;
    const double *v = &w->v[6 * i], *om = &w->v[6 * i + 3];
    double Iw[9], Io[3];
    cd_m3rotateDiag(Iw, &w->R[9 * (size_t)i], b->inertia);
    cd_m3mulv(Io, Iw, om);
    e += 0.5 * b->mass * cd_v3dot(v, v) + 0.5 * cd_v3dot(om, Io);
  }
  return e;
}

double cd_worldPotentialEnergy(const cdScene *scene, const cdWorld *w) {
  double e = 0;
  for (int i = 0; i < w->nbody; i++) {
    const cdBodyDef *b = &scene->body[i];
    if (!b->fixed) e -= b->mass * cd_v3dot(scene->gravity, &w->x[3 * i]);
  }
  return e;
}
