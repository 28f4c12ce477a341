/* test_sparse_ldlt.c: the LDL' of solvers/sparse_ldlt.c against CHOLMOD's simplicial LDL'
 * (cholmod_analyze in the natural order, no postorder; cholmod_factorize; cholmod_solve), whose
 * operations it repeats in the same order: L, D and the solves must be the same bit for bit.
 * Two block patterns of random symmetric positive definite matrices, laid out by hand as the
 * analysis (lcp_newton.c's cholAnalyse) lays them out: a chain of blocks (each block's row
 * meets the block before it) and a star (the last block's row meets every other block, the
 * paths taken last first), with blocks of 1, 2 and 3 unknowns. */
#include <cholmod.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sparse_ldlt.h"
#include "test.h"

static uint64_t g_rng;
static double rnd(void) { return cd_testRandom(&g_rng); }

/* the blocks' pattern: coupled(a, b) for blocks a < b */
typedef int (*coupledFn)(int a, int b, int nb);
static int chain(int a, int b, int nb) {
  (void)nb;
  return b == a + 1;
}
static int star(int a, int b, int nb) { return b == nb - 1 && a < b; }

/* a random SPD matrix on the blocks' pattern (dense blocks, diagonally dominant), its upper
 * triangle in f's layout and as a CHOLMOD matrix; L's columns, the rows' order of blocks from
 * the pattern (the elimination tree of a chain or a star has no fill); then f's factors and
 * solve against CHOLMOD's, entry by entry */
static void compareWithCholmod(const int *nr, int nb, coupledFn coupled) {
  int no[16], rr[16], n = 0;
  for (int a = 0; a < nb; a++) no[a] = n, rr[a] = nr[a], n += nr[a];
  int *blk = malloc((size_t)n * sizeof(int));
  for (int a = 0; a < nb; a++)
    for (int u = 0; u < nr[a]; u++) blk[no[a] + u] = a;
  double *A = calloc((size_t)n * (size_t)n, sizeof(double)); /* column-major, symmetric */
  for (int j = 0; j < n; j++)
    for (int i = 0; i < j; i++)
      if (blk[i] == blk[j] || coupled(blk[i], blk[j], nb)) A[i + n * j] = A[j + n * i] = rnd() - 0.5;
  for (int j = 0; j < n; j++) {
    double s = 1.0;
    for (int i = 0; i < n; i++) s += i != j ? (A[i + n * j] < 0 ? -A[i + n * j] : A[i + n * j]) : 0.0;
    A[j + n * j] = s + rnd();
  }
  /* the upper triangle, rows ascending: K's values in Ap's order (kfrom the identity) */
  cdSparseLdlt f;
  memset(&f, 0, sizeof f);
  f.n = n;
  f.Ap = malloc((size_t)(n + 1) * sizeof(int));
  f.Ai = malloc((size_t)n * (size_t)n * sizeof(int));
  double *Kx = malloc((size_t)n * (size_t)n * sizeof(double));
  int e = 0;
  for (int j = 0; j < n; j++) {
    f.Ap[j] = e;
    for (int i = 0; i <= j; i++)
      if (A[i + n * j] != 0.0) f.Ai[e] = i, Kx[e] = A[i + n * j], e++;
  }
  f.Ap[n] = e;
  f.kfrom = malloc((size_t)e * sizeof(int));
  for (int k = 0; k < e; k++) f.kfrom[k] = k;
  /* L's columns: a block's own later unknowns, then its parent's (the chain's next block, the
   * star's last); each row block meets its children, the star's last first */
  f.Lp = malloc((size_t)(n + 1) * sizeof(int));
  f.Lnz = malloc((size_t)n * sizeof(int));
  int lnz = 0;
  for (int a = 0; a < nb; a++) {
    int parent = -1;
    for (int b = a + 1; b < nb && parent < 0; b++)
      if (coupled(a, b, nb)) parent = b;
    for (int u = 0; u < nr[a]; u++) f.Lp[no[a] + u] = lnz, lnz += nr[a] - u + (parent >= 0 ? nr[parent] : 0);
  }
  f.Lp[n] = lnz;
  f.Li = malloc((size_t)lnz * sizeof(int));
  f.Lx = malloc((size_t)lnz * sizeof(double));
  f.na = nb;
  f.no = no, f.nr = rr;
  f.sp = malloc((size_t)(nb + 1) * sizeof(int));
  f.st = malloc((size_t)nb * (size_t)nb * sizeof(int));
  int q = 0;
  for (int a = 0; a < nb; a++) {
    f.sp[a] = q;
    for (int b = a - 1; b >= 0; b--)
      if (coupled(b, a, nb)) f.st[q++] = b;
  }
  f.sp[nb] = q;
  f.W = calloc((size_t)n, sizeof(double));
  CHECK(cd_sparseLdltFactor(&f, Kx) == 0);

  cholmod_common cc;
  cholmod_start(&cc);
  cc.print = 0;
  cc.nmethods = 1, cc.method[0].ordering = CHOLMOD_NATURAL, cc.postorder = 0;
  cc.supernodal = CHOLMOD_SIMPLICIAL, cc.final_ll = 0;
  cholmod_sparse *S = cholmod_allocate_sparse((size_t)n, (size_t)n, (size_t)e, 1, 1, 1, CHOLMOD_REAL, &cc);
  memcpy(S->p, f.Ap, (size_t)(n + 1) * sizeof(int));
  memcpy(S->i, f.Ai, (size_t)e * sizeof(int));
  memcpy(S->x, Kx, (size_t)e * sizeof(double));
  cholmod_factor *L = cholmod_analyze(S, &cc);
  CHECK(L != NULL && cholmod_factorize(S, L, &cc) && cc.status == CHOLMOD_OK);
  CHECK(!L->is_ll && !L->is_super);
  const int *Lp = L->p, *Li = L->i, *Lnz = L->nz;
  const double *Lx = L->x;
  int same = 1;
  for (int j = 0; j < n; j++) {
    same &= Lnz[j] == f.Lnz[j];
    if (Lnz[j] != f.Lnz[j]) continue;
    same &= !memcmp(&Li[Lp[j]], &f.Li[f.Lp[j]], (size_t)Lnz[j] * sizeof(int));
    same &= !memcmp(&Lx[Lp[j]], &f.Lx[f.Lp[j]], (size_t)Lnz[j] * sizeof(double)); /* D(j) first */
  }
  CHECK_MSG(same, "L's columns differ from CHOLMOD's (%d unknowns)", n);

  cholmod_dense *B = cholmod_allocate_dense((size_t)n, 1, (size_t)n, CHOLMOD_REAL, &cc);
  double *b = B->x, *x = malloc((size_t)n * sizeof(double));
  for (int k = 0; k < n; k++) x[k] = b[k] = rnd() - 0.5;
  cholmod_dense *X = cholmod_solve(CHOLMOD_A, L, B, &cc);
  cd_sparseLdltSolve(&f, x);
  CHECK(X != NULL && !memcmp(X->x, x, (size_t)n * sizeof(double)));
  /* and it solves: |A x - b| small against b's entries of order 1 */
  double r = 0.0;
  for (int i = 0; i < n; i++) {
    double s = -b[i];
    for (int j = 0; j < n; j++) s += A[i + n * j] * x[j];
    r = fmax(r, fabs(s));
  }
  CHECK(r < 1e-12);

  cholmod_free_dense(&X, &cc), cholmod_free_dense(&B, &cc), cholmod_free_factor(&L, &cc), cholmod_free_sparse(&S, &cc);
  cholmod_finish(&cc);
  f.no = NULL, f.nr = NULL; /* (the caller's) */
  cd_sparseLdltFree(&f);
  free(x), free(Kx), free(A), free(blk);
}

CD_TEST(sparseLdltFactorsAndSolvesAsCholmodBitForBitOnAChainOfBlocks) {
  g_rng = 11;
  static const int nr[] = {3, 1, 3, 2, 3, 3, 2, 3};
  for (int trial = 0; trial < 20; trial++) compareWithCholmod(nr, 8, chain);
}

CD_TEST(sparseLdltFactorsAndSolvesAsCholmodBitForBitOnAStarOfBlocks) {
  g_rng = 12;
  static const int nr[] = {3, 2, 3, 1, 3, 3, 3};
  for (int trial = 0; trial < 20; trial++) compareWithCholmod(nr, 7, star);
}
