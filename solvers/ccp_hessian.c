/* ccp_hessian.c: the velocity-space Newton matrix H = M + J^T D J (ccp_hessian.h).
 *
 * Layout. Unknowns 6 k .. 6 k + 5 are moving body k's (v, omega). CHOLMOD gets the upper
 * triangle in compressed columns: column 6 l + c holds, for each pair (k, l) with k < l in
 * ascending k, the six rows 6 k .. 6 k + 5, then the diagonal block's rows 6 l .. 6 l + c. So
 * entry (6 k + r, 6 l + c) of pair q (the q-th of column body l) sits at A->p[6 l + c] + 6 q + r,
 * and the diagonal block's (6 l + r, 6 l + c), r <= c, at A->p[6 l + c] + 6 npair_l + r.
 *
 * Contribution of contact i (sides a, b on bodies k_a, k_b, Jacobian blocks J_a, J_b, 3x6):
 * with T_s = D_i J_s, the diagonal blocks get J_s^T T_s and the pair block (rows of the lower
 * body index) J_lo^T T_hi. About 350 multiply-adds a contact; M's blocks are m I3 and the
 * world inertia, the inverse of the problem's R I^-1 R^T (one 3x3 inverse a body a solve).
 *
 * Pattern reuse. The pairs of the current contacts are sorted by column (a counting sort over
 * the column body, then each column's short list by insertion). When every pair is already in
 * the analysed pattern, and the pattern holds at most a quarter more pairs than needed (plus
 * 16), the analysis is kept: unused pairs are explicit zeros. Otherwise the pattern is replaced
 * and analysed again (CHOLMOD's AMD ordering on the scalar matrix; its 6x6 blocks are found as
 * supervariables).
 */
#include "ccp_hessian.h"

#include <string.h>

#include "alloc.h"
#include "backend.h"
#include "vec3.h"

static int growInt(int **a, int *cap, int n) {
  if (n <= *cap && *a) return 0;
  int c = n > 16 ? n : 16;
  int *q = cd_realloc(*a, (size_t)c * sizeof(int));
  if (!q) return -1;
  *a = q;
  *cap = c;
  return 0;
}

/* the pairs (k < l) of the contacts of p in the active bodies' numbering, column l's rows
 * ascending and unique, into h->tptr / h->trow; returns the count, or -1 on no memory */
static int contactPairs(cdCcpHessian *h, const cdContactProblem *p, int nb) {
  int nc = p->ncon;
  if (growInt(&h->tptr, &h->tptr_cap, nb + 2) || growInt(&h->trow, &h->trow_cap, nc > 0 ? nc : 1)) return -1;
  int *ptr = h->tptr, *row = h->trow;
  memset(ptr, 0, ((size_t)nb + 2) * sizeof(int));
  for (int i = 0; i < nc; i++) {
    int ka = p->cbody[2 * i], kb = p->cbody[2 * i + 1];
    if (ka >= 0 && kb >= 0 && ka != kb) ptr[(h->act[ka] > h->act[kb] ? h->act[ka] : h->act[kb]) + 2]++;
  }
  for (int l = 0; l < nb; l++) ptr[l + 2] += ptr[l + 1];
  for (int i = 0; i < nc; i++) {
    int ka = p->cbody[2 * i], kb = p->cbody[2 * i + 1];
    if (ka >= 0 && kb >= 0 && ka != kb) {
      int a = h->act[ka], b = h->act[kb], lo = a < b ? a : b, hi = a < b ? b : a;
      row[ptr[hi + 1]++] = lo;
    }
  }
  /* ptr[l] .. ptr[l+1]-1 now hold column l; sort and unique each, compacting */
  int out = 0;
  for (int l = 0; l < nb; l++) {
    int b = ptr[l], e = ptr[l + 1], start = out;
    for (int q = b; q < e; q++) {
      int v = row[q], s = out;
      while (s > start && row[s - 1] > v) s--;
      if (s > start && row[s - 1] == v) continue;
      memmove(&row[s + 1], &row[s], (size_t)(out - s) * sizeof(int));
      row[s] = v;
      out++;
    }
    ptr[l] = start;
  }
  ptr[nb] = out;
  return out;
}

/* 1 when every pair of (tptr, trow) is in (ptr, row); both sorted per column */
static int pairsContained(const cdCcpHessian *h, int nb) {
  for (int l = 0; l < nb; l++) {
    int q = h->ptr[l], qe = h->ptr[l + 1];
    for (int t = h->tptr[l]; t < h->tptr[l + 1]; t++) {
      while (q < qe && h->row[q] < h->trow[t]) q++;
      if (q == qe || h->row[q] != h->trow[t]) return 0;
    }
  }
  return 1;
}

static int cholmodStatus(const cholmod_common *cc) {
  return cc->status == CHOLMOD_OUT_OF_MEMORY ? CD_ERR_NOMEM : CD_ERR_NUMERIC;
}

/* the Hessian handed to CHOLMOD already ordered: *Ap (re)allocated as the upper triangle of
 * P A P^T (stype 1, rows ascending in each column) for A an upper triangle in compressed columns
 * (its p, i and ncol read) and the permutation perm (new index k holds old index perm[k]); pinv
 * (n) gets each old index's new one, pos (nnz A) where each entry of A lands in *Ap, scr is
 * scratch of 3 nnz + n + 1 ints. CD_OK, CD_ERR_NOMEM, CD_ERR_NUMERIC. (lcp_newton.c's
 * cholAnalyse makes the same for its K at the contacts' level.) */
static int cholmodPermuteUpper(const cholmod_sparse *A, const int *perm, int *pinv, int *pos, int *scr,
                               cholmod_sparse **Ap, cholmod_common *cc) {
  int n = (int)A->ncol, nnz = ((const int *)A->p)[n];
  const int *Aq = A->p, *Ai = A->i;
  for (int k = 0; k < n; k++) pinv[perm[k]] = k;
  cholmod_free_sparse(Ap, cc);
  *Ap = cholmod_allocate_sparse((size_t)n, (size_t)n, (size_t)nnz, 1, 1, 1, CHOLMOD_REAL, cc);
  if (!*Ap) return cholmodStatus(cc);
  int *Bp = (*Ap)->p, *Bi = (*Ap)->i;
  /* each entry's new (row <= column), then a counting sort by row and a stable one by column */
  int *er = scr, *ec = er + nnz, *order = ec + nnz, *cnt = order + nnz;
  for (int j = 0; j < n; j++)
    for (int k = Aq[j]; k < Aq[j + 1]; k++) {
      int a = pinv[Ai[k]], b = pinv[j];
      er[k] = a < b ? a : b;
      ec[k] = a < b ? b : a;
    }
  memset(cnt, 0, ((size_t)n + 1) * sizeof(int));
  for (int k = 0; k < nnz; k++) cnt[er[k] + 1]++;
  for (int r = 0; r < n; r++) cnt[r + 1] += cnt[r];
  for (int k = 0; k < nnz; k++) order[cnt[er[k]]++] = k; /* entries by row */
  memset(Bp, 0, ((size_t)n + 1) * sizeof(int));
  for (int k = 0; k < nnz; k++) Bp[ec[k] + 1]++;
  for (int j = 0; j < n; j++) Bp[j + 1] += Bp[j];
  memcpy(cnt, Bp, ((size_t)n + 1) * sizeof(int));
  for (int q = 0; q < nnz; q++) { /* stable by column: rows ascend within each */
    int k = order[q], at = cnt[ec[k]]++;
    Bi[at] = er[k];
    pos[k] = at;
  }
  return CD_OK;
}

/* the simplicial analysis of such a matrix in its own order (no ordering, no postorder), which
 * cholmod_factorize then factors without transposing it; NULL when CHOLMOD failed (cc->status) */
static cholmod_factor *cholmodAnalyseAsIs(cholmod_sparse *Ap, cholmod_common *cc) {
  /* the simplicial factorization (cholmod_rowfac) reads the upper triangle's columns as L's
   * rows, so cholmod_factorize factors a matrix analysed in its own order as it is, without
   * the permuted transposes it makes of a lower or unordered matrix on every call (measured,
   * 20-cube stack: 31k of a factorization's 184k instructions under ccp; 260k of 1050k under
   * lcp; on a 64-sphere pile 230k) */
  int nm = cc->nmethods, ord = cc->method[0].ordering, post = cc->postorder, sup = cc->supernodal;
  cc->nmethods = 1;
  cc->method[0].ordering = CHOLMOD_NATURAL;
  cc->postorder = 0;
  cc->supernodal = CHOLMOD_SIMPLICIAL;
  cholmod_factor *L = cholmod_analyze(Ap, cc);
  cc->nmethods = nm;
  cc->method[0].ordering = ord;
  cc->postorder = post;
  cc->supernodal = sup;
  return L;
}

/* h->Ap = the upper triangle of P A P^T for the permutation perm, and h->pos: where each entry
 * of the staging matrix h->A lands in it */
static int permuteUpper(cdCcpHessian *h, const int *perm) {
  int n = (int)h->A->ncol, nnz = ((const int *)h->A->p)[n];
  if (growInt(&h->pinv, &h->pinv_cap, n) || growInt(&h->pos, &h->pos_cap, nnz > 0 ? nnz : 1) ||
      growInt(&h->scr, &h->scr_cap, 3 * nnz + n + 1 > 0 ? 3 * nnz + n + 1 : 1))
    return CD_ERR_NOMEM;
  return cholmodPermuteUpper(h->A, perm, h->pinv, h->pos, h->scr, &h->Ap, h->cc);
}

/* replaces the pattern by (tptr, trow) and analyses it */
static int analyse(cdCcpHessian *h, int nb, int npair) {
  if (growInt(&h->row, &h->row_cap, npair > 0 ? npair : 1) || growInt(&h->ptr, &h->ptr_cap, nb + 1))
    return CD_ERR_NOMEM;
  memcpy(h->ptr, h->tptr, ((size_t)nb + 1) * sizeof(int));
  memcpy(h->row, h->trow, (size_t)npair * sizeof(int));
  h->nb = nb;
  h->npair = npair;
  cholmod_free_sparse(&h->A, h->cc);
  cholmod_free_factor(&h->L, h->cc);
  size_t n = 6 * (size_t)nb, nnz = 36 * (size_t)npair + 21 * (size_t)nb;
  h->A = cholmod_allocate_sparse(n, n, nnz, 1, 1, 1, CHOLMOD_REAL, h->cc);
  if (!h->A) return cholmodStatus(h->cc);
  int *Ap = h->A->p, *Ai = h->A->i, pos = 0;
  for (int l = 0; l < nb; l++)
    for (int c = 0; c < 6; c++) {
      Ap[6 * l + c] = pos;
      for (int q = h->ptr[l]; q < h->ptr[l + 1]; q++)
        for (int r = 0; r < 6; r++) Ai[pos++] = 6 * h->row[q] + r;
      for (int r = 0; r <= c; r++) Ai[pos++] = 6 * l + r;
    }
  Ap[n] = pos;
  /* the fill-reducing order: AMD (cholmod_amd) on the body graph, nb nodes instead of the
   * 6 nb unknowns, each body's six unknowns then kept together (their columns of L share one
   * pattern anyway) */
  cholmod_sparse *B = cholmod_allocate_sparse((size_t)nb, (size_t)nb, (size_t)(npair > 0 ? npair : 1), 1, 1, 1,
                                              CHOLMOD_PATTERN, h->cc);
  if (!B) return cholmodStatus(h->cc);
  memcpy(B->p, h->ptr, ((size_t)nb + 1) * sizeof(int));
  memcpy(B->i, h->row, (size_t)npair * sizeof(int));
  int st = growInt(&h->perm, &h->perm_cap, 7 * nb + 1) ? CD_ERR_NOMEM : CD_OK;
  int *bperm = h->perm;
  if (st == CD_OK && !cholmod_amd(B, NULL, 0, bperm, h->cc)) st = cholmodStatus(h->cc);
  cholmod_free_sparse(&B, h->cc);
  if (st) return st;
  int *perm = bperm + nb;
  for (int k = 0; k < nb; k++)
    for (int e = 0; e < 6; e++) perm[6 * k + e] = 6 * bperm[k] + e;
  st = permuteUpper(h, perm);
  if (st) return st;
  /* simplicial. The supernodal factorization takes 15-20% fewer instructions on these
   * matrices of 6x6 blocks, but Debian's CHOLMOD 3.0.14 runs its supernodes in OpenMP
   * parallel regions of a fixed 4 threads (OMP_NUM_THREADS does not change it) and its BLAS
   * calls through OpenBLAS's thread pool: every factorization then pays the teams' wake-ups
   * and barriers (24 futex calls a step on the 20-cube stack), and on 2 shared cores the
   * threads wait for each other. Measured in one run (3000 steps, wall s, ccp default):
   * 20-cube stack 0.48 / 0.41 -> 0.12 / 0.15, 55-cube pyramid 5.3 / 4.4 -> 0.79 / 0.80; primal
   * alone on the 1000-sphere pile (60 steps) 295 -> 194 s */
  h->cc->supernodal = CHOLMOD_SIMPLICIAL;
  /* the permuted upper triangle analysed in its own (natural) order */
  h->L = cholmodAnalyseAsIs(h->Ap, h->cc);
  if (!h->L) return cholmodStatus(h->cc);
  h->flops = h->cc->fl;
  h->analyses++;
  return CD_OK;
}

/* the world inertia of each body: the inverse of the symmetric 3x3 Iinv */
static void massBlocks(cdCcpHessian *h, const cdContactProblem *p) {
  for (int k = 0; k < p->nbody; k++) {
    cd_m3inverse(&h->Ib[9 * (size_t)k], &p->Iinv[9 * (size_t)k]);
    h->Mb[k] = 1.0 / p->minv[k];
  }
}

int cd_ccpHessianPrepare(cdCcpHessian *h, const cdContactProblem *p) {
  int nbody = p->nbody, nc = p->ncon;
  if (growInt(&h->slot, &h->slot_cap, nc > 0 ? nc : 1) || growInt(&h->act, &h->act_cap, nbody > 0 ? nbody : 1) ||
      growInt(&h->bod, &h->bod_cap, nbody > 0 ? nbody : 1))
    return CD_ERR_NOMEM;
  if (nbody > h->mass_cap || !h->Mb) {
    double *m = cd_realloc(h->Mb, (size_t)(nbody > 0 ? nbody : 1) * sizeof(double));
    if (!m) return CD_ERR_NOMEM;
    h->Mb = m;
    double *I = cd_realloc(h->Ib, (size_t)(nbody > 0 ? nbody : 1) * 9 * sizeof(double));
    if (!I) return CD_ERR_NOMEM;
    h->Ib = I;
    h->mass_cap = nbody;
  }
  h->p = p;
  h->nbody = nbody;
  massBlocks(h, p);
  /* the active bodies, those some contact acts on, ascending: the others' rows of H are their
   * own mass blocks alone */
  for (int k = 0; k < nbody; k++) h->act[k] = -1;
  for (int i = 0; i < 2 * nc; i++)
    if (p->cbody[i] >= 0) h->act[p->cbody[i]] = 0;
  int nb = 0, same = 1;
  for (int k = 0; k < nbody; k++)
    if (h->act[k] == 0) {
      same = same && nb < h->nb && h->bod[nb] == k;
      h->bod[nb] = k;
      h->act[k] = nb++;
    }
  same = same && nb == h->nb;
  int need = contactPairs(h, p, nb);
  if (need < 0) return CD_ERR_NOMEM;
  int keep = h->L && same && h->npair <= need + need / 4 + 16 && pairsContained(h, nb);
  if (!keep) {
    h->nb = 0; /* the bodies of the pattern, once analysed */
    int st = analyse(h, nb, need);
    if (st) return st;
  }
  for (int i = 0; i < nc; i++) {
    int ka = p->cbody[2 * i], kb = p->cbody[2 * i + 1];
    h->slot[i] = -1;
    if (ka < 0 || kb < 0 || ka == kb) continue;
    int a0 = h->act[ka], b0 = h->act[kb];
    int lo = a0 < b0 ? a0 : b0, hi = a0 < b0 ? b0 : a0, a = h->ptr[hi], b = h->ptr[hi + 1] - 1;
    while (a <= b) {
      int m = (a + b) / 2;
      if (h->row[m] == lo) {
        h->slot[i] = m;
        break;
      }
      if (h->row[m] < lo) a = m + 1;
      else b = m - 1;
    }
  }
  return CD_OK;
}

int cd_ccpCholmodSolve(cholmod_factor *L, cholmod_dense *B, cholmod_dense **X, cholmod_dense **Y, cholmod_dense **E,
                       cholmod_common *cc) {
  size_t n = L->n;
  int ok = cholmod_ensure_dense(X, n, 1, n, CHOLMOD_REAL, cc) != NULL;
  if (L->is_super)
    ok = ok && cholmod_ensure_dense(Y, n, 1, n, CHOLMOD_REAL, cc) &&
         cholmod_ensure_dense(E, 1, L->maxesize > 0 ? L->maxesize : 1, 1, CHOLMOD_REAL, cc);
  else
    ok = ok && cholmod_ensure_dense(Y, 4, n, 4, CHOLMOD_REAL, cc);
  if (!ok) return CD_ERR_NOMEM;
  return cholmod_solve2(CHOLMOD_A, L, B, NULL, X, NULL, Y, E, cc) ? CD_OK : cholmodStatus(cc);
}

/* T = D J (3x6), D 3x3 row-major, J 3x6 row-major */
static inline void mulDJ(const double *D, const double *J, double *T) {
  for (int r = 0; r < 3; r++)
    for (int c = 0; c < 6; c++) T[6 * r + c] = D[3 * r] * J[c] + D[3 * r + 1] * J[6 + c] + D[3 * r + 2] * J[12 + c];
}

int cd_ccpHessianFactor(cdCcpHessian *h, const cdContactProblem *p, const double *D, const unsigned char *skip) {
  double *Ax = h->A->x;
  const int *Ap = h->A->p;
  memset(Ax, 0, (size_t)Ap[6 * h->nb] * sizeof(double));
  for (int l = 0; l < h->nb; l++) {
    int dg = 6 * (h->ptr[l + 1] - h->ptr[l]), k = h->bod[l];
    const double *I = &h->Ib[9 * (size_t)k];
    for (int c = 0; c < 3; c++) Ax[Ap[6 * l + c] + dg + c] = h->Mb[k];
    for (int c = 0; c < 3; c++)
      for (int r = 0; r <= c; r++) Ax[Ap[6 * l + 3 + c] + dg + 3 + r] = I[3 * r + c];
  }
  for (int i = 0; i < p->ncon; i++) {
    if (skip[i]) continue;
    const double *Di = &D[9 * (size_t)i];
    double T[2][18];
    for (int s = 0; s < 2; s++) {
      int k = p->cbody[2 * i + s] < 0 ? -1 : h->act[p->cbody[2 * i + s]];
      if (k < 0) continue;
      const double *J = &p->J[36 * (size_t)i + 18 * (size_t)s];
      mulDJ(Di, J, T[s]);
      int dg = 6 * (h->ptr[k + 1] - h->ptr[k]);
      for (int c = 0; c < 6; c++) {
        double *col = &Ax[Ap[6 * k + c] + dg];
        for (int r = 0; r <= c; r++) col[r] += J[r] * T[s][c] + J[6 + r] * T[s][6 + c] + J[12 + r] * T[s][12 + c];
      }
    }
    int q = h->slot[i];
    if (q < 0) continue;
    int ka = h->act[p->cbody[2 * i]], kb = h->act[p->cbody[2 * i + 1]];
    int lo = ka < kb ? 0 : 1, hi = 1 - lo, khi = lo ? ka : kb;
    const double *Jlo = &p->J[36 * (size_t)i + 18 * (size_t)lo];
    const double *Thi = T[hi];
    int off = 6 * (q - h->ptr[khi]);
    for (int c = 0; c < 6; c++) {
      double *col = &Ax[Ap[6 * khi + c] + off];
      for (int r = 0; r < 6; r++) col[r] += Jlo[r] * Thi[c] + Jlo[6 + r] * Thi[6 + c] + Jlo[12 + r] * Thi[12 + c];
    }
  }
  double *Bx = h->Ap->x;
  for (int k = 0, nnz = Ap[6 * h->nb]; k < nnz; k++) Bx[h->pos[k]] = Ax[k];
  h->cc->status = CHOLMOD_OK;
  if (!cholmod_factorize(h->Ap, h->L, h->cc) || h->cc->status < CHOLMOD_OK) return cholmodStatus(h->cc);
  /* M is positive definite and J^T D J semidefinite: a loss of definiteness is round-off of
   * a badly scaled problem, which the solver cannot use */
  if (h->cc->status == CHOLMOD_NOT_POSDEF) return CD_ERR_NUMERIC;
  return CD_OK;
}

int cd_ccpHessianSolve(cdCcpHessian *h, const double *b, double *x) {
  size_t n = 6 * (size_t)h->nb;
  if (!h->B || h->B->nrow != n) {
    cholmod_free_dense(&h->B, h->cc);
    h->B = cholmod_allocate_dense(n, 1, n, CHOLMOD_REAL, h->cc);
    if (!h->B) return CD_ERR_NOMEM;
  }
  double *bp = h->B->x;
  for (int l = 0; l < h->nb; l++)
    for (int e = 0; e < 6; e++) bp[h->pinv[6 * l + e]] = b[6 * (size_t)h->bod[l] + e];
  int st = cd_ccpCholmodSolve(h->L, h->B, &h->X, &h->Y, &h->E, h->cc);
  if (st) return st;
  /* the inactive bodies: x = M^-1 b (their b is zero in a Newton step) */
  const cdContactProblem *p = h->p;
  for (int k = 0; k < h->nbody; k++) {
    if (h->act[k] >= 0) continue;
    const double *bk = &b[6 * (size_t)k], *I = &p->Iinv[9 * (size_t)k];
    double *xk = &x[6 * (size_t)k], a[3] = {bk[3], bk[4], bk[5]};
    for (int e = 0; e < 3; e++) xk[e] = p->minv[k] * bk[e];
    for (int e = 0; e < 3; e++) xk[3 + e] = I[3 * e] * a[0] + I[3 * e + 1] * a[1] + I[3 * e + 2] * a[2];
  }
  const double *xs = h->X->x;
  for (int l = 0; l < h->nb; l++)
    for (int e = 0; e < 6; e++) x[6 * (size_t)h->bod[l] + e] = xs[h->pinv[6 * l + e]];
  return CD_OK;
}

void cd_ccpHessianMassMul(const cdCcpHessian *h, const double *x, double *out) {
  for (int k = 0; k < h->nbody; k++) {
    const double *xk = &x[6 * (size_t)k], *I = &h->Ib[9 * (size_t)k];
    double *o = &out[6 * (size_t)k], m = h->Mb[k];
    o[0] = m * xk[0];
    o[1] = m * xk[1];
    o[2] = m * xk[2];
    o[3] = I[0] * xk[3] + I[1] * xk[4] + I[2] * xk[5];
    o[4] = I[3] * xk[3] + I[4] * xk[4] + I[5] * xk[5];
    o[5] = I[6] * xk[3] + I[7] * xk[4] + I[8] * xk[5];
  }
}

void cd_ccpHessianFree(cdCcpHessian *h) {
  if (h->cc) {
    cholmod_free_sparse(&h->A, h->cc);
    cholmod_free_sparse(&h->Ap, h->cc);
    cholmod_free_factor(&h->L, h->cc);
    cholmod_free_dense(&h->B, h->cc);
    cholmod_free_dense(&h->X, h->cc);
    cholmod_free_dense(&h->Y, h->cc);
    cholmod_free_dense(&h->E, h->cc);
  }
  cd_free(h->ptr);
  cd_free(h->row);
  cd_free(h->slot);
  cd_free(h->tptr);
  cd_free(h->trow);
  cd_free(h->Mb);
  cd_free(h->Ib);
  cd_free(h->pinv);
  cd_free(h->pos);
  cd_free(h->scr);
  cd_free(h->perm);
  cd_free(h->act);
  cd_free(h->bod);
  cd_free(h->cgP);
  memset(h, 0, sizeof *h);
}
