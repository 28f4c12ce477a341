/* problem_block.c: the 3x3 block-sparse matrix and the contact-space problem storage. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "alloc.h"
#include "problem.h"

int cd_blockMatrixAlloc(cdBlockMatrix *m, int nblock, int nnzb) {
  memset(m, 0, sizeof *m);
  m->nblock = nblock;
  m->nnzb = nnzb;
  m->rowptr = cd_calloc((size_t)nblock + 1, sizeof(int));
  m->col = cd_calloc((size_t)nnzb, sizeof(int));
  m->val = cd_calloc((size_t)nnzb * 9, sizeof(double));
  m->diag = cd_calloc((size_t)nblock, sizeof(int));
  if (!m->rowptr || !m->col || !m->val || !m->diag) {
    cd_blockMatrixFree(m);
    return -1;
  }
  m->rcap = nblock;
  m->bcap = nnzb;
  return 0;
}

int cd_blockMatrixReserve(cdBlockMatrix *m, int nblock, int nnzb) {
  m->transposed = 0; /* the caller refills the blocks */
  /* by half again at least, so that a slowly growing contact set does not realloc each step */
  if (!m->rowptr || nblock > m->rcap) {
    size_t n = (size_t)(nblock > 0 ? nblock : 1), g = (size_t)m->rcap + (size_t)m->rcap / 2;
    if (g > n) n = g;
    int *rp = cd_realloc(m->rowptr, (n + 1) * sizeof(int));
    if (!rp) return -1;
    m->rowptr = rp;
    int *dg = cd_realloc(m->diag, n * sizeof(int));
    if (!dg) return -1;
    m->diag = dg;
    m->rcap = (int)n;
  }
  if (!m->col || nnzb > m->bcap) {
    size_t n = (size_t)(nnzb > 0 ? nnzb : 1), g = (size_t)m->bcap + (size_t)m->bcap / 2;
    if (g > n) n = g;
    int *c = cd_realloc(m->col, n * sizeof(int));
    if (!c) return -1;
    m->col = c;
    double *v = cd_realloc(m->val, 9 * n * sizeof(double));
    if (!v) return -1;
    m->val = v;
    m->bcap = (int)n;
  }
  return 0;
}

void cd_blockMatrixFree(cdBlockMatrix *m) {
  cd_free(m->rowptr);
  cd_free(m->col);
  cd_free(m->val);
  cd_free(m->diag);
  memset(m, 0, sizeof *m);
}

/* y_i += B^T x_j for the stored block B = (j, i), i != j: rows 0 and 1 of the transpose as
 * pairs of lanes, row 2 alone */
static inline void offDiagonalAdd(const double *B, cdV2 p0, cdV2 p1, cdV2 p2, double x0, double x1, double x2,
                                  double *yi) {
  cdV2 b0, b1, b2, y01;
  memcpy(&b0, B, sizeof b0), memcpy(&b1, B + 3, sizeof b1), memcpy(&b2, B + 6, sizeof b2);
  memcpy(&y01, yi, sizeof y01);
  y01 += b0 * p0 + b1 * p1 + b2 * p2;
  memcpy(yi, &y01, sizeof y01);
  yi[2] += B[2] * x0 + B[5] * x1 + B[8] * x2;
}

/* y = m x by block columns, for m->transposed: column j is row j read transposed (its
 * diagonal block as it is), skipped where x_j is zero (on S2 10's first 60 steps, 53 % of
 * the blocks the LCP's products meet multiply a contact without an impulse). The same bits
 * as by rows: y_i receives the products of its blocks in the order of ascending j, as the row
 * sums add them; the products are the same ones (the stored transpose holds the same
 * numbers); a skipped block would add a zero (G finite) to y_i, which is never -0 (it starts
 * at +0 and a sum is -0 only of two -0), so it adds nothing. Each row of a transposed block
 * is two pairs of lanes and a third lane, loaded whole: 38 -> ~25 instructions a block. */
static void mulByColumns(const cdBlockMatrix *m, const double *x, double *y) {
  /* the arrays in locals: y's stores (memcpy, of char type) could otherwise change m's fields */
  const int *rowptr = m->rowptr, *col = m->col, *diag = m->diag, n = m->nblock;
  const double *val = m->val;
  memset(y, 0, 3 * (size_t)n * sizeof *y);
  for (int j = 0; j < n; j++) {
    /* x_j zero (each entry +0 or -0): its bits, the sign's left out, all zero; one test for
     * the three compares' six branches */
    uint64_t b[3];
    memcpy(b, &x[3 * (size_t)j], sizeof b);
    if (((b[0] | b[1] | b[2]) << 1) == 0) continue;
    double x0 = x[3 * (size_t)j], x1 = x[3 * (size_t)j + 1], x2 = x[3 * (size_t)j + 2];
    cdV2 p0 = {x0, x0}, p1 = {x1, x1}, p2 = {x2, x2};
    int kd = diag[j], k = rowptr[j], k1 = rowptr[j + 1];
    /* the blocks left of the diagonal, the diagonal, the blocks right of it: no test of k
     * against kd a block (every row of a transposed G holds its diagonal block: each contact
     * shares its bodies with itself, cd_contactProblemDelassus) */
    for (; k < kd; k++) offDiagonalAdd(&val[9 * (size_t)k], p0, p1, p2, x0, x1, x2, &y[3 * (size_t)col[k]]);
    const double *B = &val[9 * (size_t)kd]; /* (j, j) */
    double *yj = &y[3 * (size_t)j];
    yj[0] += B[0] * x0 + B[1] * x1 + B[2] * x2;
    yj[1] += B[3] * x0 + B[4] * x1 + B[5] * x2;
    yj[2] += B[6] * x0 + B[7] * x1 + B[8] * x2;
    for (k++; k < k1; k++) offDiagonalAdd(&val[9 * (size_t)k], p0, p1, p2, x0, x1, x2, &y[3 * (size_t)col[k]]);
  }
}

void cd_blockMatrixMul(const cdBlockMatrix *m, const double *x, double *y) {
  if (m->transposed) {
    mulByColumns(m, x, y);
    return;
  }
  for (int i = 0; i < m->nblock; i++) {
    double s0 = 0, s1 = 0, s2 = 0;
    for (int k = m->rowptr[i]; k < m->rowptr[i + 1]; k++) {
      const double *B = &m->val[9 * (size_t)k], *xj = &x[3 * (size_t)m->col[k]];
      s0 += B[0] * xj[0] + B[1] * xj[1] + B[2] * xj[2];
      s1 += B[3] * xj[0] + B[4] * xj[1] + B[5] * xj[2];
      s2 += B[6] * xj[0] + B[7] * xj[1] + B[8] * xj[2];
    }
    y[3 * i] = s0;
    y[3 * i + 1] = s1;
    y[3 * i + 2] = s2;
  }
}

void cd_blockMatrixMulSymmetric(const cdBlockMatrix *m, const double *x, double *y) {
  memset(y, 0, 3 * (size_t)m->nblock * sizeof *y);
  for (int j = 0; j < m->nblock; j++) {
    double x0 = x[3 * (size_t)j], x1 = x[3 * (size_t)j + 1], x2 = x[3 * (size_t)j + 2];
    if (x0 == 0.0 && x1 == 0.0 && x2 == 0.0) continue;
    for (int k = m->rowptr[j]; k < m->rowptr[j + 1]; k++) {
      const double *B = &m->val[9 * (size_t)k]; /* block (j, col): its transpose is block (col, j) */
      double *yi = &y[3 * (size_t)m->col[k]];
      yi[0] += B[0] * x0 + B[3] * x1 + B[6] * x2;
      yi[1] += B[1] * x0 + B[4] * x1 + B[7] * x2;
      yi[2] += B[2] * x0 + B[5] * x1 + B[8] * x2;
    }
  }
}

int cd_blockColumnsMake(const cdBlockMatrix *m, cdBlockColumns *c) {
  int nb = m->nblock, nnzb = m->nnzb;
  c->ptr = cd_calloc((size_t)nb + 1, sizeof(int));
  c->row = cd_malloc((size_t)(nnzb > 0 ? nnzb : 1) * sizeof(int));
  c->blk = cd_malloc((size_t)(nnzb > 0 ? nnzb : 1) * sizeof(int));
  int *fill = cd_calloc((size_t)(nb > 0 ? nb : 1), sizeof(int));
  if (!c->ptr || !c->row || !c->blk || !fill) {
    cd_free(fill);
    cd_blockColumnsFree(c);
    return -1;
  }
  for (int k = 0; k < nnzb; k++) c->ptr[m->col[k] + 1]++;
  for (int i = 0; i < nb; i++) c->ptr[i + 1] += c->ptr[i];
  for (int j = 0; j < nb; j++)
    for (int k = m->rowptr[j]; k < m->rowptr[j + 1]; k++) {
      int i = m->col[k], pos = c->ptr[i] + fill[i]++;
      c->row[pos] = j;
      c->blk[pos] = k;
    }
  cd_free(fill);
  return 0;
}

void cd_blockColumnsFree(cdBlockColumns *c) {
  cd_free(c->ptr);
  cd_free(c->row);
  cd_free(c->blk);
  c->ptr = c->row = c->blk = NULL;
}

double cd_contactProblemVelocityScale(const cdContactProblem *p) {
  if (p->vscale > 0) return p->vscale;
  double m = 0.0;
  for (int k = 0; k < 3 * p->ncon; k++) {
    double a = fabs(p->g[k]);
    m = a > m ? a : m;
  }
  return m > 0 ? m : 1.0;
}

double cd_contactProblemMeff(const cdContactProblem *p, int i) {
  double gnn = p->meff ? 0.0 : p->G.val[9 * (size_t)p->G.diag[i]];
  if (p->meff) return p->meff[i];
  return gnn > 0 ? 1.0 / gnn : 1.0;
}

void cd_contactProblemVelocity(const cdContactProblem *p, const double *lambda, double *u) {
  cd_blockMatrixMul(&p->G, lambda, u);
  for (int k = 0; k < 3 * p->ncon; k++) u[k] += p->g[k];
}

void cd_contactProblemFree(cdContactProblem *p) {
  cd_blockMatrixFree(&p->G);
  cd_free(p->g);
  cd_free(p->mu);
  cd_free(p->lambda);
  cd_free(p->meff);
  cd_free(p->cbody);
  cd_free(p->J);
  cd_free(p->minv);
  cd_free(p->Iinv);
  cd_free(p->vf);
  cd_free(p->adj_ptr);
  cd_free(p->adj);
  cd_free(p->JM);
  cd_free(p->Jp);
  cd_free(p->JMp);
  memset(p, 0, sizeof *p);
}
