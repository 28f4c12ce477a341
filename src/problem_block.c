/* problem_block.c: the 3x3 block-sparse matrix and the contact-space problem storage. */
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
  return 0;
}

void cd_blockMatrixFree(cdBlockMatrix *m) {
  cd_free(m->rowptr);
  cd_free(m->col);
  cd_free(m->val);
  cd_free(m->diag);
  memset(m, 0, sizeof *m);
}

void cd_blockMatrixMul(const cdBlockMatrix *m, const double *x, double *y) {
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

void cd_contactProblemFree(cdContactProblem *p) {
  cd_blockMatrixFree(&p->G);
  cd_free(p->g);
  cd_free(p->mu);
  cd_free(p->lambda);
  memset(p, 0, sizeof *p);
}
