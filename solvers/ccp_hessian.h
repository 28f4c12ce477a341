/* ccp_hessian.h: the Newton matrix of the velocity-space primal solver (ccp_primal.c),
 *     H = M + J^T D J    (6 nbody square, symmetric positive definite),
 * M the block-diagonal mass matrix (per moving body m I3 and the world inertia), J the contact
 * Jacobian, D block diagonal (3x3 symmetric positive semidefinite a contact). It is sparse in
 * 6x6 body blocks: block (k, l) is nonzero exactly when a contact joins bodies k and l, so its
 * pattern depends only on the contact graph, not on D. CHOLMOD factors it (simplicial:
 * ccp_hessian.c says why); the symbolic analysis is kept and reused by the next steps while
 * their contacts join only body pairs the analysed pattern holds. Where the factor would fill in,
 * ccp_hessian_cg.c solves with H by conjugate gradients instead, never assembling it.
 */
#ifndef CD_CCP_HESSIAN_H
#define CD_CCP_HESSIAN_H

#include <cholmod.h>

#include "problem.h"

typedef struct cdCcpHessian {
  cholmod_common *cc; /* the caller's, started */
  const cdContactProblem *p; /* the problem prepared for */
  int nbody;          /* its moving bodies */
  int *act;           /* (nbody) each body's index among the active ones (some contact acts on
                         it), -1 for the others: H's rows of those are their mass blocks alone */
  int *bod;           /* (nb) the active bodies, ascending */
  int act_cap, bod_cap;
  int nb;             /* active bodies of the analysed pattern (0: none yet) */
  int npair;          /* body pairs (k < l) of the pattern */
  int *ptr;           /* (nb + 1) pairs of column body l: ptr[l] .. ptr[l+1]-1 ... */
  int *row;           /* (npair) ... their row bodies k < l, ascending */
  int *slot;          /* (ncon) the pair index of each contact, -1 when it has one moving body */
  int *tptr, *trow;   /* scratch: the pairs of the current contacts, before the comparison */
  double *Mb;         /* (nbody) per body its mass and ... */
  double *Ib;         /* (nbody x 9) ... world inertia (the inverse of p->Iinv), row-major */
  int ptr_cap, row_cap, slot_cap, tptr_cap, trow_cap, mass_cap; /* what the arrays hold */
  cholmod_sparse *A;  /* staging: the upper triangle in body order, the layout above */
  cholmod_sparse *Ap; /* what is factored: the upper triangle of P A P^T, P fill-reducing */
  int *pinv;          /* (6 nb) new index of each unknown under P */
  int *pos;           /* (nnz A) where each entry of A sits in Ap */
  int *scr;           /* scratch of the permutation */
  int *perm;          /* (nb + 6 nb) the bodies' order, then the unknowns' */
  int pinv_cap, pos_cap, scr_cap, perm_cap;
  cholmod_factor *L;  /* the analysis of Ap in its own order (and its numeric factor) */
  cholmod_dense *B, *X, *Y, *E; /* solve workspace */
  double *cgP;        /* cd_ccpHessianCg's workspace: (nbody x 36) the block Jacobi factors, then
                         four vectors (6 nbody each) */
  size_t cg_cap;
  double flops;       /* CHOLMOD's flop count of one numeric factorization of the pattern */
  long analyses;      /* symbolic analyses done (over the object's life) */
} cdCcpHessian;

/* makes the pattern for the contacts of p (reusing the analysed one when it holds every body
 * pair of p and not many more), and the bodies' mass blocks. CD_OK, CD_ERR_NOMEM,
 * CD_ERR_NUMERIC (CHOLMOD failed otherwise). */
int cd_ccpHessianPrepare(cdCcpHessian *h, const cdContactProblem *p);
/* assembles M + J^T D J (D: 9 ncon, row-major blocks; skip[i] != 0 marks a zero D_i) and
 * factors it. CD_OK, CD_ERR_NOMEM, CD_ERR_NUMERIC. */
int cd_ccpHessianFactor(cdCcpHessian *h, const cdContactProblem *p, const double *D, const unsigned char *skip);
/* x = H^-1 b (6 nbody each); x may alias b. CD_OK or CD_ERR_NOMEM. */
int cd_ccpHessianSolve(cdCcpHessian *h, const double *b, double *x);
/* x = H^-1 b approximately (ccp_hessian_cg.c): preconditioned conjugate gradients from x = 0,
 * H applied matrix-free with D (9 ncon) and skip as above; stops at a preconditioned residual
 * eta times b's, or after maxit products with H, counted in *products; x may alias b. Uses
 * the mass blocks of cd_ccpHessianPrepare, not its pattern or factor. CD_OK, CD_ERR_NOMEM,
 * CD_ERR_NUMERIC. */
int cd_ccpHessianCg(cdCcpHessian *h, const cdContactProblem *p, const double *D, const unsigned char *skip,
                    const double *b, double *x, double eta, int maxit, int *products);
/* out = M x per body (6 nbody) */
void cd_ccpHessianMassMul(const cdCcpHessian *h, const double *x, double *out);
void cd_ccpHessianFree(cdCcpHessian *h);

/* X = A^-1 B with CHOLMOD's factor L of A (one right side), the workspace *X, *Y, *E grown here
 * to what cholmod_solve2 needs, their allocations checked: CHOLMOD 3.0.14's cholmod_solve2 uses
 * the workspace it allocates without checking that it got it (a segfault under the tests'
 * injected allocation failures). CD_OK, CD_ERR_NOMEM, CD_ERR_NUMERIC. */
int cd_ccpCholmodSolve(cholmod_factor *L, cholmod_dense *B, cholmod_dense **X, cholmod_dense **Y, cholmod_dense **E,
                       cholmod_common *cc);

#endif
