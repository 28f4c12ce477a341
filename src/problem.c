/* problem.c: building the contact problem of a step (see problem.h) and applying its
 * solution.
 *
 * J^T (ndof x 3 ncon) is assembled directly in compressed-column form: column 3i + r is
 * row r of contact i (r = 0 normal, 1 t1, 2 t2), with at most 6 entries per moving body:
 *   d . v_b + (r_b x d) . w_b  -  d . v_a - (r_a x d) . w_a,    r = point - centre,
 * the relative velocity of b with respect to a at the contact point along d. Then
 *   W = M^-1 J^T   (cholmod_ssmult with the block-diagonal M^-1 read off the factor),
 *   G = J W        (cholmod_ssmult),
 * both sparse with O(ncon) entries when each body has a bounded number of contacts, and
 * G is copied into the 3x3 block form the solvers use. No dense ncon x ncon matrix and no
 * dense M^-1 is ever formed.
 */
#include "problem_build.h"

#include <math.h>
#include <string.h>

#include "alloc.h"
#include "linalg.h"
#include "vec3.h"

double cd_contactFriction(const cdScene *scene, const cdContact *c) {
  cdMaterial m;
  cd_sceneContactMaterial(scene, c->body[0], c->body[1], &m);
  return m.friction;
}

/* J^T for the current contact set */
static cholmod_sparse *jacobianT(const cdWorld *w, cholmod_common *cm) {
  const cdContactSet *cs = &w->contacts;
  int nc = cs->ncon;
  cholmod_sparse *Jt =
      cholmod_allocate_sparse((size_t)w->ndof, (size_t)nc * 3, (size_t)nc * 36, 1, 1, 0, CHOLMOD_REAL, cm);
  if (!Jt) return NULL;
  int *Jp = Jt->p, *Ji = Jt->i;
  double *Jx = Jt->x;
  int nz = 0;
  for (int i = 0; i < nc; i++) {
    const cdContact *c = &cs->con[i];
    const double *dir[3] = {c->normal, c->t1, c->t2};
    /* bodies in dof order so that row indices ascend within each column */
    int side[2] = {0, 1};
    int da = c->body[0] >= 0 ? w->dof[c->body[0]] : -1, db = w->dof[c->body[1]];
    if (da > db) {
      side[0] = 1;
      side[1] = 0;
    }
    for (int r = 0; r < 3; r++) {
      Jp[3 * i + r] = nz;
      for (int s = 0; s < 2; s++) {
        int k = side[s], body = c->body[k];
        if (body < 0 || w->dof[body] < 0) continue;
        double sign = k == 1 ? 1.0 : -1.0, arm[3], rxd[3];
        cd_v3sub(arm, c->point, &w->x[3 * body]);
        cd_v3cross(rxd, arm, dir[r]);
        int o = w->dof[body];
        for (int e = 0; e < 3; e++) {
          Ji[nz] = o + e;
          Jx[nz++] = sign * dir[r][e];
        }
        for (int e = 0; e < 3; e++) {
          Ji[nz] = o + 3 + e;
          Jx[nz++] = sign * rxd[e];
        }
      }
    }
  }
  Jp[3 * nc] = nz;
  return Jt;
}

/* copies the symmetric sparse G (3nc x 3nc, both triangles, sorted) into block form */
static int toBlocks(const cholmod_sparse *G, int nc, cdBlockMatrix *B) {
  const int *Gp = G->p, *Gi = G->i;
  const double *Gx = G->x;
  int *mark = cd_malloc((size_t)(nc > 0 ? nc : 1) * sizeof(int));
  if (!mark) return CD_ERR_NOMEM;
  for (int j = 0; j < nc; j++) mark[j] = -1;
  /* count blocks per block row (row 3I+r of G is column 3I+r by symmetry) */
  int nnzb = 0;
  for (int I = 0; I < nc; I++) {
    int cnt = 0;
    for (int r = 0; r < 3; r++)
      for (int p = Gp[3 * I + r]; p < Gp[3 * I + r + 1]; p++) {
        int K = Gi[p] / 3;
        if (mark[K] != I) {
          mark[K] = I;
          cnt++;
        }
      }
    if (mark[I] != I) cnt++; /* the diagonal block is always stored */
    nnzb += cnt;
  }
  cd_blockMatrixFree(B);
  if (cd_blockMatrixAlloc(B, nc, nnzb)) {
    cd_free(mark);
    return CD_ERR_NOMEM;
  }
  for (int j = 0; j < nc; j++) mark[j] = -1;
  int k = 0;
  for (int I = 0; I < nc; I++) {
    B->rowptr[I] = k;
    /* columns ascend in G's sorted columns, merged over the three rows: collect, then sort */
    int start = k;
    for (int r = 0; r < 3; r++)
      for (int p = Gp[3 * I + r]; p < Gp[3 * I + r + 1]; p++) {
        int K = Gi[p] / 3;
        if (mark[K] < start) {
          mark[K] = k;
          B->col[k++] = K;
        }
      }
    if (mark[I] < start) {
      mark[I] = k;
      B->col[k++] = I;
    }
    /* insertion sort of this row's (few) block columns, then refresh positions */
    for (int a = start + 1; a < k; a++) {
      int v = B->col[a], b = a - 1;
      while (b >= start && B->col[b] > v) {
        B->col[b + 1] = B->col[b];
        b--;
      }
      B->col[b + 1] = v;
    }
    for (int a = start; a < k; a++) {
      mark[B->col[a]] = a;
      if (B->col[a] == I) B->diag[I] = a;
    }
    for (int r = 0; r < 3; r++)
      for (int p = Gp[3 * I + r]; p < Gp[3 * I + r + 1]; p++) {
        int K = Gi[p] / 3, cidx = Gi[p] % 3;
        B->val[9 * (size_t)mark[K] + 3 * (size_t)r + (size_t)cidx] = Gx[p];
      }
  }
  B->rowptr[nc] = k;
  cd_free(mark);
  return CD_OK;
}

/* grows the per-contact arrays of the problem to hold nc contacts (never shrinks them: the
 * contact count of a run changes little from step to step). Every entry up to nc is written
 * by cd_problemBuild, so nothing is cleared here. */
static int problemReserve(cdContactProblem *p, int nc) {
  if (nc <= p->cap && p->g) return CD_OK;
  size_t n = (size_t)(nc > 0 ? nc : 1);
  double *g = cd_realloc(p->g, 3 * n * sizeof(double));
  if (g) p->g = g;
  double *mu = g ? cd_realloc(p->mu, n * sizeof(double)) : NULL;
  if (mu) p->mu = mu;
  double *lambda = mu ? cd_realloc(p->lambda, 3 * n * sizeof(double)) : NULL;
  if (!lambda) return CD_ERR_NOMEM;
  p->lambda = lambda;
  p->cap = (int)n;
  return CD_OK;
}

int cd_problemFreeVelocity(const cdScene *scene, cdWorld *w, double dt) {
  if (w->ndof == 0) return CD_OK;
  /* f = (m g, -w x I w) per moving body; v_f = v + dt M^-1 f (sdmult may not work in
   * place: f has a buffer of its own) */
  double *f = w->fext, *v = w->vf;
  for (int i = 0; i < w->nbody; i++) {
    int o = w->dof[i];
    if (o < 0) continue;
    const cdBodyDef *b = &scene->body[i];
    const double *om = &w->v[6 * i + 3];
    double Iw[9], Io[3], gyro[3];
    cd_m3rotateDiag(Iw, &w->R[9 * (size_t)i], b->inertia);
    cd_m3mulv(Io, Iw, om);
    cd_v3cross(gyro, om, Io);
    for (int e = 0; e < 3; e++) {
      f[o + e] = b->mass * scene->gravity[e];
      f[o + 3 + e] = -gyro[e];
    }
    memcpy(&v[o], &w->v[6 * i], 6 * sizeof(double));
  }
  cholmod_dense F = cd_denseView(f, w->ndof), V = cd_denseView(v, w->ndof);
  double one[2] = {1, 0}, h[2] = {dt, 0};
  return cholmod_sdmult(w->Minv, 0, h, one, &F, &V, &w->cm) ? CD_OK : CD_ERR_NOMEM;
}

/* an upper bound on the 3x3 blocks of G = J M^-1 J^T: contacts i and j couple when they
 * share a moving body, so at most sum over moving bodies of (its contacts)^2 blocks */
static int delassusBlocks(const cdWorld *w, double *blocks) {
  int *count = cd_calloc((size_t)(w->nbody > 0 ? w->nbody : 1), sizeof *count);
  if (!count) return CD_ERR_NOMEM;
  for (int i = 0; i < w->contacts.ncon; i++)
    for (int s = 0; s < 2; s++) {
      int b = w->contacts.con[i].body[s];
      if (b >= 0 && w->dof[b] >= 0) count[b]++;
    }
  double sum = 0;
  for (int b = 0; b < w->nbody; b++) sum += (double)count[b] * (double)count[b];
  cd_free(count);
  *blocks = sum;
  return CD_OK;
}

int cd_problemBuild(const cdScene *scene, cdWorld *w, double dt, cdProblemWork *pw) {
  cdContactProblem *p = &w->cp;
  int nc = w->contacts.ncon;
  memset(pw, 0, sizeof *pw);
  if (problemReserve(p, nc)) return CD_ERR_NOMEM;
  p->ncon = nc;
  if (nc == 0) {
    cd_blockMatrixFree(&p->G);
    return CD_OK;
  }
  double blocks;
  if (delassusBlocks(w, &blocks)) return CD_ERR_NOMEM;
  if (blocks > CD_WORLD_MAX_DELASSUS_BLOCKS) return CD_ERR_LIMIT;
  cholmod_common *cm = &w->cm;
  pw->Jt = jacobianT(w, cm);
  if (!pw->Jt) return CD_ERR_NOMEM;
  pw->J = cholmod_transpose(pw->Jt, 1, cm);
  pw->W = pw->J ? cholmod_ssmult(w->Minv, pw->Jt, 0, 1, 1, cm) : NULL;
  cholmod_sparse *G = pw->W ? cholmod_ssmult(pw->J, pw->W, 0, 1, 1, cm) : NULL;
  if (!G) return CD_ERR_NOMEM;
  int st = toBlocks(G, nc, &p->G);
  cholmod_free_sparse(&G, cm);
  if (st) return st;
  /* g = J v_f + (phi/dt, 0, 0) */
  cholmod_dense VF = cd_denseView(w->vf, w->ndof), Gv = cd_denseView(p->g, 3 * nc);
  double one[2] = {1, 0}, zero[2] = {0, 0};
  if (!cholmod_sdmult(pw->J, 0, one, zero, &VF, &Gv, cm)) return CD_ERR_NOMEM;
  for (int i = 0; i < nc; i++) {
    const cdContact *c = &w->contacts.con[i];
    p->g[3 * i] += c->gap / dt;
    p->mu[i] = cd_contactFriction(scene, c);
    memcpy(&p->lambda[3 * i], c->lambda, 3 * sizeof(double));
  }
  return CD_OK;
}

int cd_problemApply(cdWorld *w, cdProblemWork *pw) {
  cdContactProblem *p = &w->cp;
  int nc = p->ncon;
  double *v = w->vf; /* v+ = v_f + W lambda, accumulated in place of v_f */
  if (nc > 0) {
    cholmod_dense L = cd_denseView(p->lambda, 3 * nc), V = cd_denseView(v, w->ndof);
    double one[2] = {1, 0};
    if (!cholmod_sdmult(pw->W, 0, one, one, &L, &V, &w->cm)) return CD_ERR_NOMEM;
    for (int i = 0; i < nc; i++) memcpy(w->contacts.con[i].lambda, &p->lambda[3 * i], 3 * sizeof(double));
  }
  for (int i = 0; i < w->nbody; i++)
    if (w->dof[i] >= 0) memcpy(&w->v[6 * i], &v[w->dof[i]], 6 * sizeof(double));
  return CD_OK;
}

void cd_problemWorkFree(cdWorld *w, cdProblemWork *pw) {
  cholmod_free_sparse(&pw->Jt, &w->cm);
  cholmod_free_sparse(&pw->J, &w->cm);
  cholmod_free_sparse(&pw->W, &w->cm);
}
