/* sparse_ldu.h: sparse A = P^T L D U P with the diagonal as pivots, for square matrices whose
 * pattern is structurally symmetric (the active-set method's K = C G B, lcp_newton.c).
 *
 * The symbolic analysis (elimination tree, the pattern of L = the pattern of U^T, each row's
 * reach) is made once per pattern and order; each numeric factorization then runs without
 * searches or allocation. The pivots are the diagonal's, taken only while every multiplier of
 * L and U is at most 1 / tol in magnitude (the threshold test of partial pivoting, on the
 * pivot's column and row): otherwise the factorization stops and says so, and the caller
 * factors that matrix with pivoting (KLU). */
#ifndef CD_SPARSE_LDU_H
#define CD_SPARSE_LDU_H

#include <stddef.h>

typedef struct cdSparseLdu cdSparseLdu; /* the analysis, the factors and their workspace */

cdSparseLdu *cd_sparseLduMake(void); /* NULL: no memory */
void cd_sparseLduFree(cdSparseLdu *f);

/* the symbolic analysis of the n x n pattern Ap, Ai (compressed columns, rows ascending in
 * each column; the diagonal may be absent) in the order perm (n: new index k is old perm[k];
 * NULL: the identity). 0 ok, 1 the pattern is not structurally symmetric or a column's rows
 * are not ascending, -1 no memory (the analysis held before is gone in all three cases) */
int cd_sparseLduAnalyse(cdSparseLdu *f, int n, const int *Ap, const int *Ai, const int *perm);

/* the same analysis while its flops (cd_sparseLduFlops) are at most maxflops: 2 when they are
 * not (found from L's column counts, before L's columns are placed; no analysis held), else as
 * cd_sparseLduAnalyse. check 0: the pattern is not checked, for a caller whose pattern is
 * structurally symmetric with rows ascending by construction (the same analysis in fewer
 * instructions; another pattern then gives an unusable analysis, not 1) */
int cd_sparseLduAnalyseWithin(cdSparseLdu *f, int n, const int *Ap, const int *Ai, const int *perm, double maxflops,
                              int check);

/* the flops of a factorization of the analysed pattern as KLU and AMD estimate an LU's: the
 * sum over L's columns of c + 2 c^2, c the column's entries below the diagonal */
double cd_sparseLduFlops(const cdSparseLdu *f);

/* the numeric factorization of the analysed pattern's values Ax (in Ai's order). 0 ok; 1 a
 * pivot is zero or not finite, or a multiplier of L or U exceeds 1 / tol in magnitude (tol in
 * (0, 1]; the factors are then unusable); -1 no analysis held */
int cd_sparseLduFactor(cdSparseLdu *f, const double *Ax, double tol);

/* the pivot (in the analysed order) at which the last factorization stopped, -1 when it
 * succeeded; and the largest multiplier magnitude of L and U it met */
int cd_sparseLduFailedPivot(const cdSparseLdu *f);
double cd_sparseLduGrowth(const cdSparseLdu *f);

/* b = A^-1 b (n) with the factors held (cd_sparseLduFactor returned 0) */
void cd_sparseLduSolve(cdSparseLdu *f, double *b);

#endif
