/* problem.h: the contact problem of one time step, shared by the impulse backends.
 *
 * Unknowns: the contact impulses lambda_i = (l_n, l_t1, l_t2) on body b of contact i, in
 * its frame (n, t1, t2), N s. With v_f = v + dt M^-1 (f_ext - omega x I omega) the free
 * velocity and J (3 ncon x ndof) the contact Jacobian (rows: the normal and tangential
 * relative velocity of b w.r.t. a at the contact point), the post-step velocity is
 *     v+ = v_f + M^-1 J^T lambda,       c = J v+ = G lambda + J v_f,
 * with the Delassus operator G = J M^-1 J^T (3x3 blocks, symmetric PSD). The vector
 *     g = J v_f + (phi_i / dt, 0, 0)_i
 * is the seeds' b (LCP, 000/004) and g (CCP, 001): the stabilised contact velocity.
 * Component order (normal, t1, t2) per contact matches the Siconos / FCLIB local problems
 * (u = W r + q with W = G, q = g), so the peer collections feed the same solvers.
 */
#ifndef CD_PROBLEM_H
#define CD_PROBLEM_H

#include <cholmod.h>

/* a square block-sparse matrix of 3x3 blocks (block CSR): block row i holds blocks
 * (i, col[k]) for k in rowptr[i] .. rowptr[i+1]-1, columns ascending, the diagonal block
 * always present. Symmetric matrices store both triangles. */
typedef struct cdBlockMatrix {
  int nblock;   /* block rows = block columns */
  int nnzb;     /* stored blocks */
  int *rowptr;  /* (nblock + 1) */
  int *col;     /* (nnzb) */
  double *val;  /* (nnzb x 9) each block row-major */
  int *diag;    /* (nblock) index k of the diagonal block of each row */
} cdBlockMatrix;

int cd_blockMatrixAlloc(cdBlockMatrix *m, int nblock, int nnzb); /* 0 ok, -1 no memory */
void cd_blockMatrixFree(cdBlockMatrix *m);
/* y = G x (x, y: 3 nblock); y must not alias x */
void cd_blockMatrixMul(const cdBlockMatrix *m, const double *x, double *y);

/* a contact-space problem: what every impulse solver sees (and what a peer file holds) */
typedef struct cdContactProblem {
  int ncon;          /* contacts */
  cdBlockMatrix G;   /* (ncon x ncon blocks) Delassus operator J M^-1 J^T */
  double *g;         /* (3 ncon) stabilised free contact velocity, m/s */
  double *mu;        /* (ncon) friction coefficient of each contact */
  double *lambda;    /* (3 ncon) impulses: warm start in, solution out, N s */
  int cap;           /* contacts the arrays g, mu, lambda hold (>= ncon), for reuse */
} cdContactProblem;

void cd_contactProblemFree(cdContactProblem *p);

#endif
