/* world.c: making and freeing the world; the mass matrix and its CHOLMOD factor.
 *
 * M (ndof x ndof) is block diagonal: per moving body m I3 on the linear dofs and the world
 * inertia R diag(I) R^T on the angular ones. Its pattern is fixed, so it is analysed once
 * (natural ordering: a block-diagonal matrix has no fill) and factorized whenever its values
 * change, which is every step only when some body has an anisotropic inertia (a box with
 * unequal sides) that turns with it. M^-1, needed as a sparse matrix for W = M^-1 J^T, is
 * read off the factor with six solves: the right-hand side e_c summed over all bodies
 * yields column c of every diagonal block at once, since the blocks do not couple.
 */
#include "world.h"

#include <math.h>
#include <string.h>

#include "alloc.h"
#include "linalg.h"
#include "vec3.h"

static int isotropic(const cdBodyDef *b) {
  return b->inertia[0] == b->inertia[1] && b->inertia[1] == b->inertia[2];
}

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

/* the pattern of M, upper triangle, values filled by cd_worldFactorMass */
static cholmod_sparse *massPattern(cdWorld *w) {
  int nmov = w->ndof / 6;
  cholmod_sparse *M = cholmod_allocate_sparse((size_t)w->ndof, (size_t)w->ndof, (size_t)nmov * 9, 1, 1, 1,
                                              CHOLMOD_REAL, &w->cm);
  if (!M) return NULL;
  int *Mp = M->p, *Mi = M->i;
  int nz = 0;
  for (int k = 0; k < nmov; k++) {
    int o = 6 * k;
    for (int c = 0; c < 3; c++) {
      Mp[o + c] = nz;
      Mi[nz++] = o + c;
    }
    for (int c = 3; c < 6; c++) {
      Mp[o + c] = nz;
      for (int r = 3; r <= c; r++) Mi[nz++] = o + r;
    }
  }
  Mp[w->ndof] = nz;
  return M;
}

int cd_worldFactorMass(const cdScene *scene, cdWorld *w) {
  if (w->ndof == 0) return CD_OK;
  double *Mx = w->M->x;
  int nz = 0;
  for (int i = 0; i < w->nbody; i++) {
    if (w->dof[i] < 0) continue;
    const cdBodyDef *b = &scene->body[i];
    double Iw[9];
    cd_m3rotateDiag(Iw, &w->R[9 * (size_t)i], b->inertia);
    for (int c = 0; c < 3; c++) Mx[nz++] = b->mass;
    for (int c = 0; c < 3; c++)
      for (int r = 0; r <= c; r++) Mx[nz++] = Iw[3 * r + c];
  }
  if (!cholmod_factorize(w->M, w->L, &w->cm) || w->cm.status < CHOLMOD_OK) return CD_ERR_NUMERIC;
  if (w->cm.status > CHOLMOD_OK) w->warn_cholmod++;
  if (w->L->minor < (size_t)w->ndof) return CD_ERR_NUMERIC; /* not positive definite */
  /* M^-1 blocks: six solves */
  int nmov = w->ndof / 6;
  cholmod_sparse *Mi = w->Minv;
  int *Ip = Mi->p, *Ii = Mi->i;
  double *Ix = Mi->x;
  cholmod_dense *B = cholmod_zeros((size_t)w->ndof, 1, CHOLMOD_REAL, &w->cm);
  if (!B) return CD_ERR_NOMEM;
  int status = CD_OK;
  for (int c = 0; c < 6 && status == CD_OK; c++) {
    double *bx = B->x;
    memset(bx, 0, (size_t)w->ndof * sizeof(double));
    for (int k = 0; k < nmov; k++) bx[6 * k + c] = 1.0;
    cholmod_dense *X = cholmod_solve(CHOLMOD_A, w->L, B, &w->cm);
    if (!X) {
      status = CD_ERR_NOMEM;
      break;
    }
    const double *x = X->x;
    for (int k = 0; k < nmov; k++) {
      int col = 6 * k + c, p = Ip[col];
      if (c < 3) {
        Ii[p] = col;
        Ix[p] = x[col];
      } else {
        for (int r = 3; r < 6; r++, p++) {
          Ii[p] = 6 * k + r;
          Ix[p] = x[6 * k + r];
        }
      }
    }
    cholmod_free_dense(&X, &w->cm);
  }
  cholmod_free_dense(&B, &w->cm);
  return status;
}

/* the pattern of M^-1 (unsymmetric storage: full angular blocks) */
static cholmod_sparse *inversePattern(cdWorld *w) {
  int nmov = w->ndof / 6;
  cholmod_sparse *S = cholmod_allocate_sparse((size_t)w->ndof, (size_t)w->ndof, (size_t)nmov * 12, 1, 1, 0,
                                              CHOLMOD_REAL, &w->cm);
  if (!S) return NULL;
  int *p = S->p, nz = 0;
  for (int k = 0; k < nmov; k++)
    for (int c = 0; c < 6; c++) {
      p[6 * k + c] = nz;
      nz += c < 3 ? 1 : 3;
    }
  p[w->ndof] = nz;
  return S;
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
  cd_contactSetInit(&w->contacts);
  cd_contactSetInit(&w->previous);
  if (!w->dof || !w->x || !w->q || !w->v || !w->R || !w->Iinv || !w->force) goto fail;
  w->m_constant = 1;
  for (int i = 0; i < n; i++) {
    const cdBodyDef *b = &scene->body[i];
    w->dof[i] = b->fixed ? -1 : w->ndof;
    if (!b->fixed) {
      w->ndof += 6;
      if (!isotropic(b)) w->m_constant = 0;
    }
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
  w->vf = cd_calloc((size_t)(w->ndof > 0 ? w->ndof : 1), sizeof(double));
  w->fext = cd_calloc((size_t)(w->ndof > 0 ? w->ndof : 1), sizeof(double));
  if (!w->vf || !w->fext) goto fail;
  cd_linalgInit();
  if (!cholmod_start(&w->cm)) goto fail;
  w->cm_started = 1;
  w->cm.print = 0;
  w->cm.nmethods = 1;
  w->cm.method[0].ordering = CHOLMOD_NATURAL;
  w->cm.postorder = 0;
  w->cm.supernodal = CHOLMOD_SIMPLICIAL;
  w->cm.final_ll = 1;
  if (w->ndof > 0) {
    w->M = massPattern(w);
    w->Minv = inversePattern(w);
    if (!w->M || !w->Minv) goto fail;
    w->L = cholmod_analyze(w->M, &w->cm);
    if (!w->L) goto fail;
    if (cd_worldFactorMass(scene, w) != CD_OK) goto fail;
  }
  return w;
fail:
  cd_worldFree(w);
  return NULL;
}

void cd_worldFree(cdWorld *w) {
  if (!w) return;
  if (w->cm_started) {
    cholmod_free_sparse(&w->M, &w->cm);
    cholmod_free_sparse(&w->Minv, &w->cm);
    cholmod_free_factor(&w->L, &w->cm);
    cholmod_finish(&w->cm);
  }
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
  cd_free(w->vf);
  cd_free(w->fext);
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
