/* sparse_ldlt.h: the numeric factorization K = P^T L D L^T P of a symmetric positive definite
 * K and its solves (sparse_ldlt.c), CHOLMOD's simplicial LDL' bit for bit. The symbolic
 * analysis is the caller's (lcp_newton.c's cholAnalyse, made at the level of the contacts'
 * dense blocks), which fills the layout below. */
#ifndef CD_SPARSE_LDLT_H
#define CD_SPARSE_LDLT_H

typedef struct cdSparseLdlt {
  int n;           /* unknowns */
  int *Lp, *Lnz;   /* (n + 1, n) column j of L from Lp[j] in Li, Lx: its diagonal entry D(j) first, then */
  int *Li;         /* its rows below the diagonal ascending, Lnz[j] entries in all (set by the factorization) */
  double *Lx;
  int *Ap, *Ai;    /* (n + 1, nnz) the pattern of the upper triangle of P K P^T, rows ascending */
  int *kfrom;      /* (nnz) where each entry of Ap sits in the caller's K values (Kx) */
  int na;          /* blocks of unknowns in the new order (a contact's unknowns, a dense block of K) */
  int *no, *nr;    /* (na) each block's first unknown (new index) and its unknowns */
  int *sp, *st;    /* (na + 1, sp[na]) the blocks whose columns row block a meets, in the order met */
  double *W;       /* (n) zeros between factorizations: the row being factored */
} cdSparseLdlt;

/* L and D of the analysed layout for K's values Kx. 0 ok; 1 a zero pivot (not positive
 * definite: the factors are then unusable) */
int cd_sparseLdltFactor(cdSparseLdlt *f, const double *Kx);

/* x = (L D L^T)^-1 x (n: the permuted unknowns) with the factors held */
void cd_sparseLdltSolve(const cdSparseLdlt *f, double *x);

/* frees the layout's and factors' arrays and zeroes f */
void cd_sparseLdltFree(cdSparseLdlt *f);

#endif
