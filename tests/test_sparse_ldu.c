/* test_sparse_ldu.c: the sparse LDU with diagonal pivots (solvers/sparse_ldu.c) against dense
 * elimination: its solves against a dense LU with partial pivoting on random unsymmetric
 * matrices of structurally symmetric patterns (several sizes, orders that fill), its fill
 * and flops against a dense symbolic elimination, its threshold test refusing small pivots
 * (and a factorization after a refusal), and patterns it must reject. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sparse_ldu.h"
#include "test.h"

static uint64_t g_rng;
static double rnd(void) { return cd_testRandom(&g_rng); }

/* a dense n x n matrix (column-major) in compressed columns, rows ascending: the entries
 * that the pattern pat (n x n, column-major, 0/1) marks */
typedef struct {
  int n, *Ap, *Ai;
  double *Ax;
} sparse;

static void toSparse(int n, const unsigned char *pat, const double *A, sparse *S) {
  int nnz = 0;
  for (int k = 0; k < n * n; k++) nnz += pat[k];
  S->n = n;
  S->Ap = malloc((size_t)(n + 1) * sizeof(int));
  S->Ai = malloc((size_t)(nnz + 1) * sizeof(int));
  S->Ax = malloc((size_t)(nnz + 1) * sizeof(double));
  int e = 0;
  for (int j = 0; j < n; j++) {
    S->Ap[j] = e;
    for (int i = 0; i < n; i++)
      if (pat[i + n * j]) S->Ai[e] = i, S->Ax[e] = A[i + n * j], e++;
  }
  S->Ap[n] = e;
}

static void freeSparse(sparse *S) { free(S->Ap), free(S->Ai), free(S->Ax); }

/* x = A^-1 b by a dense LU with partial pivoting (A column-major, n x n, overwritten) */
static void denseSolve(int n, double *A, double *b) {
  for (int k = 0; k < n; k++) {
    int pr = k;
    for (int i = k + 1; i < n; i++)
      if (fabs(A[i + n * k]) > fabs(A[pr + n * k])) pr = i;
    if (pr != k) {
      for (int j = 0; j < n; j++) {
        double t = A[k + n * j];
        A[k + n * j] = A[pr + n * j], A[pr + n * j] = t;
      }
      double t = b[k];
      b[k] = b[pr], b[pr] = t;
    }
    for (int i = k + 1; i < n; i++) {
      double l = A[i + n * k] / A[k + n * k];
      for (int j = k + 1; j < n; j++) A[i + n * j] -= l * A[k + n * j];
      b[i] -= l * b[k];
    }
  }
  for (int k = n - 1; k >= 0; k--) {
    double s = b[k];
    for (int j = k + 1; j < n; j++) s -= A[k + n * j] * b[j];
    b[k] = s / A[k + n * k];
  }
}

/* the flops of an LU without pivoting of P A P^T's pattern (dense symbolic elimination: the
 * fill of the Cholesky factor), as KLU estimates: sum over columns of c + 2 c^2 */
static double denseSymbolicFlops(int n, const unsigned char *pat, const int *perm) {
  unsigned char *M = malloc((size_t)n * n);
  for (int j = 0; j < n; j++)
    for (int i = 0; i < n; i++) M[i + n * j] = pat[perm[i] + n * perm[j]];
  double flops = 0.0;
  for (int k = 0; k < n; k++) {
    int c = 0;
    for (int i = k + 1; i < n; i++) c += M[i + n * k] != 0;
    flops += c + 2.0 * c * c;
    for (int i = k + 1; i < n; i++)
      if (M[i + n * k])
        for (int j = k + 1; j < n; j++)
          if (M[k + n * j]) M[i + n * j] = M[j + n * i] = 1;
  }
  free(M);
  return flops;
}

/* the diagonal of the dense n x n A (and its pattern pat) set to dom times each row's and
 * column's off-diagonal sums plus 0.1, of a random sign where signs (else positive) */
static void dominantDiagonal(int n, double dom, int signs, unsigned char *pat, double *A) {
  for (int k = 0; k < n; k++) {
    double s = 0.0;
    for (int i = 0; i < n; i++)
      if (i != k) s += fabs(A[i + n * k]) + fabs(A[k + n * i]);
    pat[k + n * k] = 1;
    A[k + n * k] = (signs && rnd() < 0.5 ? -1.0 : 1.0) * (dom * s + 0.1);
  }
}

/* a random structurally symmetric pattern of n with about deg off-diagonal entries a row
 * (the diagonal always) and unsymmetric values, each diagonal entry dom times its row's and
 * column's off-diagonal sums (dom > 1: every diagonal pivot passes any threshold) */
static void randomMatrix(int n, double deg, double dom, unsigned char *pat, double *A) {
  memset(pat, 0, (size_t)n * n);
  memset(A, 0, (size_t)n * n * sizeof *A);
  for (int j = 0; j < n; j++)
    for (int i = j + 1; i < n; i++)
      if (rnd() < deg / n) {
        pat[i + n * j] = pat[j + n * i] = 1;
        A[i + n * j] = 2.0 * rnd() - 1.0;
        A[j + n * i] = 2.0 * rnd() - 1.0;
      }
  dominantDiagonal(n, dom, 1, pat, A);
}

static void randomPerm(int n, int *perm) {
  for (int k = 0; k < n; k++) perm[k] = k;
  for (int k = n - 1; k > 0; k--) {
    int r = (int)(rnd() * (k + 1)), t = perm[k];
    perm[k] = perm[r], perm[r] = t;
  }
}

/* the largest relative difference, over three random right sides, between the solves of the
 * factored f and a dense LU with partial pivoting of the n x n A (Ad, b, x: n x n, n, n work) */
static double solvesFromDenseLu(cdSparseLdu *f, int n, const double *A, double *Ad, double *b, double *x) {
  double worst = 0.0;
  for (int rhs = 0; rhs < 3; rhs++) {
    for (int k = 0; k < n; k++) b[k] = x[k] = 2.0 * rnd() - 1.0;
    memcpy(Ad, A, (size_t)n * n * sizeof *A);
    denseSolve(n, Ad, b);
    cd_sparseLduSolve(f, x);
    double err = 0.0, size = 0.0;
    for (int k = 0; k < n; k++) err = fmax(err, fabs(x[k] - b[k])), size = fmax(size, fabs(b[k]));
    worst = fmax(worst, err / size);
  }
  return worst;
}

/* the dense buffers of a case of n unknowns: A's pattern and values (both zeroed), the dense
 * LU's copy Ad, the right sides b and x (solvesFromDenseLu) and an order; 1 when all were
 * allocated */
typedef struct {
  unsigned char *pat;
  double *A, *Ad, *b, *x;
  int *perm;
} denseCase;

static int caseMake(denseCase *d, int n) {
  d->pat = calloc((size_t)n * n, 1);
  d->A = calloc((size_t)n * n, sizeof *d->A), d->Ad = malloc((size_t)n * n * sizeof *d->Ad);
  d->b = malloc((size_t)n * sizeof *d->b), d->x = malloc((size_t)n * sizeof *d->x);
  d->perm = malloc((size_t)n * sizeof *d->perm);
  return d->pat && d->A && d->Ad && d->b && d->x && d->perm;
}

static void caseFree(denseCase *d) { free(d->pat), free(d->A), free(d->Ad), free(d->b), free(d->x), free(d->perm); }

/* the block of contacts i, j (unknowns off[i] .. off[i + 1] - 1 and off[j] ..) in d's pattern,
 * both triangles random in [-1, 1) */
static void caseBlock(denseCase *d, int n, const int *off, int i, int j) {
  for (int a = off[i]; a < off[i + 1]; a++)
    for (int e = off[j]; e < off[j + 1]; e++) {
      d->pat[a + n * e] = d->pat[e + n * a] = 1;
      d->A[a + n * e] = 2.0 * rnd() - 1.0;
      d->A[e + n * a] = 2.0 * rnd() - 1.0;
    }
}

CD_TEST(sparseLduSolvesAsADenseLuOnRandomSymmetricPatterns) {
  /* random unsymmetric values on structurally symmetric patterns (sizes 1 to 240, 2 to 6
   * off-diagonal entries a row) in random orders (which fill): A^-1 b by the LDU against a
   * dense LU with partial pivoting for several right sides, to 1e-12 relative (the matrices
   * are diagonally dominant: condition numbers below ~10); its flops estimate is a dense
   * symbolic elimination's, to the flop (the pattern of L is the Cholesky factor's); a second
   * factorization of new values on the same analysis solves as well */
  static const int sizes[] = {1, 2, 7, 30, 90, 240};
  g_rng = 1517;
  for (size_t c = 0; c < sizeof sizes / sizeof *sizes; c++) {
    int n = sizes[c];
    denseCase d;
    int made = caseMake(&d, n);
    cdSparseLdu *f = cd_sparseLduMake();
    CHECK(made && f);
    if (!made || !f) return;
    double deg = 2.0 + 4.0 * rnd();
    randomMatrix(n, deg, 1.05, d.pat, d.A);
    randomPerm(n, d.perm);
    sparse S;
    toSparse(n, d.pat, d.A, &S);
    CHECK(cd_sparseLduAnalyse(f, n, S.Ap, S.Ai, d.perm) == 0);
    double want = denseSymbolicFlops(n, d.pat, d.perm);
    CHECK_MSG(cd_sparseLduFlops(f) == want, "n %d: flops %.17g, dense symbolic %.17g", n, cd_sparseLduFlops(f), want);
    double worst = 0.0;
    for (int round = 0; round < 2; round++) {
      if (round) { /* new values, the same pattern and analysis */
        memset(d.A, 0, (size_t)n * n * sizeof *d.A);
        for (int j = 0; j < n; j++)
          for (int t = S.Ap[j]; t < S.Ap[j + 1]; t++)
            if (S.Ai[t] != j) d.A[S.Ai[t] + n * j] = 3.0 * rnd() - 1.5;
        dominantDiagonal(n, 1.05, 0, d.pat, d.A);
        for (int j = 0; j < n; j++)
          for (int t = S.Ap[j]; t < S.Ap[j + 1]; t++) S.Ax[t] = d.A[S.Ai[t] + n * j];
      }
      CHECK(cd_sparseLduFactor(f, S.Ax, 1e-3) == 0 && cd_sparseLduFailedPivot(f) == -1);
      worst = fmax(worst, solvesFromDenseLu(f, n, d.A, d.Ad, d.b, d.x));
    }
    printf("    n %3d: %.0f flops, solves within %.1e of the dense LU's\n", n, want, worst);
    CHECK_MSG(worst <= 1e-12, "n %d: solves %.3g from the dense LU's", n, worst);
    freeSparse(&S);
    cd_sparseLduFree(f);
    caseFree(&d);
  }
}

CD_TEST(sparseLduSolvesBlockPatternsAsADenseLu) {
  /* the active-set method's pattern: contacts of 1 to 3 unknowns, each contact's block and
   * each block between two coupled contacts dense, the contacts in a random order with each
   * one's unknowns together (columns of a supernode, fused in the factorization); solves
   * against a dense LU with partial pivoting to 1e-12 relative, flops against a dense
   * symbolic elimination */
  static const int ncs[] = {3, 25, 120};
  g_rng = 4711;
  for (size_t c = 0; c < sizeof ncs / sizeof *ncs; c++) {
    int nc = ncs[c], *r = malloc((size_t)nc * sizeof(int)), *off = malloc((size_t)(nc + 1) * sizeof(int));
    int *cperm = malloc((size_t)nc * sizeof(int));
    off[0] = 0;
    for (int i = 0; i < nc; i++) r[i] = 1 + (int)(rnd() * 3), off[i + 1] = off[i] + r[i];
    int n = off[nc];
    denseCase d;
    int made = caseMake(&d, n);
    cdSparseLdu *f = cd_sparseLduMake();
    CHECK(r && off && cperm && made && f);
    if (!r || !off || !cperm || !made || !f) return;
    for (int i = 0; i < nc; i++)
      for (int j = 0; j <= i; j++) {
        if (i == j || rnd() < 4.0 / nc) caseBlock(&d, n, off, i, j);
      }
    dominantDiagonal(n, 1.05, 0, d.pat, d.A);
    randomPerm(nc, cperm);
    for (int i = 0, k = 0; i < nc; i++)
      for (int a = off[cperm[i]]; a < off[cperm[i] + 1]; a++) d.perm[k++] = a;
    sparse S;
    toSparse(n, d.pat, d.A, &S);
    CHECK(cd_sparseLduAnalyse(f, n, S.Ap, S.Ai, d.perm) == 0);
    double want = denseSymbolicFlops(n, d.pat, d.perm), worst = 0.0;
    CHECK_MSG(cd_sparseLduFlops(f) == want, "%d contacts: flops %.17g, dense symbolic %.17g", nc, cd_sparseLduFlops(f),
              want);
    CHECK(cd_sparseLduFactor(f, S.Ax, 1e-3) == 0);
    worst = solvesFromDenseLu(f, n, d.A, d.Ad, d.b, d.x);
    printf("    %3d contacts, %3d unknowns: %.0f flops, solves within %.1e of the dense LU's\n", nc, n, want, worst);
    CHECK_MSG(worst <= 1e-12, "%d contacts: solves %.3g from the dense LU's", nc, worst);
    freeSparse(&S);
    cd_sparseLduFree(f);
    free(r), free(off), free(cperm);
    caseFree(&d);
  }
}

CD_TEST(sparseLduTakesAZeroFreePivotWhereTheDiagonalIsAbsent) {
  /* A = [2 1; 1 .] without the (1, 1) entry: d = (2, -1/2), x = A^-1 b exactly */
  int Ap[3] = {0, 2, 3}, Ai[3] = {0, 1, 0};
  double Ax[3] = {2.0, 1.0, 1.0}, b[2] = {3.0, 1.0};
  cdSparseLdu *f = cd_sparseLduMake();
  CHECK(f && cd_sparseLduAnalyse(f, 2, Ap, Ai, NULL) == 0 && cd_sparseLduFactor(f, Ax, 1e-3) == 0);
  if (!f) return;
  cd_sparseLduSolve(f, b); /* 2 x0 + x1 = 3, x0 = 1 */
  CHECK_NEAR(b[0], 1.0, 1e-15);
  CHECK_NEAR(b[1], 1.0, 1e-15);
  cd_sparseLduFree(f);
}

CD_TEST(sparseLduRefusesPivotsThatFailTheThreshold) {
  /* [e 1; 1 1]: L(1, 0) = 1 / e. With e = 1e-6 the multiplier 1e6 fails the threshold 1e-3
   * (KLU would pivot there), and passes 1e-7 with the exact solve; a zero pivot fails any
   * threshold; and after a refusal the same analysis factors and solves a good matrix (the
   * workspace was left clean) */
  int Ap[3] = {0, 2, 4}, Ai[4] = {0, 1, 0, 1};
  double Ax[4] = {1e-6, 1.0, 1.0, 1.0};
  cdSparseLdu *f = cd_sparseLduMake();
  CHECK(f && cd_sparseLduAnalyse(f, 2, Ap, Ai, NULL) == 0);
  if (!f) return;
  CHECK(cd_sparseLduFactor(f, Ax, 1e-3) == 1);
  CHECK(cd_sparseLduFailedPivot(f) == 1 && cd_sparseLduGrowth(f) >= 1e6 * (1 - 1e-12));
  CHECK(cd_sparseLduFactor(f, Ax, 1e-7) == 0 && cd_sparseLduFailedPivot(f) == -1);
  double b[2] = {1.0, 2.0}; /* x = (1, 1 - 1e-6) / (1 - 1e-6) */
  cd_sparseLduSolve(f, b);
  CHECK_NEAR(b[0], 1.0 / (1.0 - 1e-6), 1e-9);
  CHECK_NEAR(b[1], (1.0 - 2e-6) / (1.0 - 1e-6), 1e-9);
  double Z[4] = {0.0, 1.0, 1.0, 0.0};
  CHECK(cd_sparseLduFactor(f, Z, 1e-3) == 1 && cd_sparseLduFailedPivot(f) == 0);
  /* a random matrix of 60 with one small diagonal entry: refused at or after that pivot */
  g_rng = 77;
  int n = 60;
  unsigned char *pat = malloc((size_t)n * n);
  double *A = malloc((size_t)n * n * sizeof *A), *Ad = malloc((size_t)n * n * sizeof *Ad);
  double *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y);
  int *perm = malloc((size_t)n * sizeof *perm), bad = -1;
  CHECK(pat && A && Ad && x && y && perm);
  if (!pat || !A || !Ad || !x || !y || !perm) return;
  randomMatrix(n, 6.0, 1.05, pat, A);
  randomPerm(n, perm);
  for (int k = 0; k < n && bad < 0; k++) /* the first pivot with neighbours after it in the order */
    for (int i = k + 1; i < n; i++)
      if (pat[perm[i] + n * perm[k]]) bad = k;
  double keep = A[perm[bad] + n * perm[bad]];
  A[perm[bad] + n * perm[bad]] = 1e-9;
  sparse S;
  toSparse(n, pat, A, &S);
  CHECK(cd_sparseLduAnalyse(f, n, S.Ap, S.Ai, perm) == 0);
  CHECK(cd_sparseLduFactor(f, S.Ax, 1e-3) == 1);
  CHECK_MSG(cd_sparseLduFailedPivot(f) > bad, "refused at %d, the small pivot is %d", cd_sparseLduFailedPivot(f), bad);
  A[perm[bad] + n * perm[bad]] = keep;
  freeSparse(&S);
  toSparse(n, pat, A, &S);
  CHECK(cd_sparseLduFactor(f, S.Ax, 1e-3) == 0);
  for (int k = 0; k < n; k++) x[k] = y[k] = rnd() - 0.5;
  memcpy(Ad, A, (size_t)n * n * sizeof *A);
  denseSolve(n, Ad, y);
  cd_sparseLduSolve(f, x);
  double err = 0.0;
  for (int k = 0; k < n; k++) err = fmax(err, fabs(x[k] - y[k]));
  CHECK_MSG(err <= 1e-12, "after a refusal: solve %.3g from the dense LU's", err);
  freeSparse(&S);
  free(pat), free(A), free(Ad), free(x), free(y), free(perm);
  cd_sparseLduFree(f);
}

CD_TEST(sparseLduRejectsPatternsThatAreNotSymmetricOrNotSorted) {
  cdSparseLdu *f = cd_sparseLduMake();
  CHECK(f != NULL);
  if (!f) return;
  int Ap1[3] = {0, 2, 3}, Ai1[3] = {0, 1, 1}; /* (1, 0) without (0, 1) */
  CHECK(cd_sparseLduAnalyse(f, 2, Ap1, Ai1, NULL) == 1);
  int Ap2[3] = {0, 1, 3}, Ai2[3] = {0, 0, 1}; /* (0, 1) without (1, 0) */
  CHECK(cd_sparseLduAnalyse(f, 2, Ap2, Ai2, NULL) == 1);
  int Ap3[3] = {0, 2, 4}, Ai3[4] = {1, 0, 0, 1}; /* column 0's rows descending */
  CHECK(cd_sparseLduAnalyse(f, 2, Ap3, Ai3, NULL) == 1);
  double Ax[4] = {1.0, 1.0, 1.0, 1.0};
  CHECK(cd_sparseLduFactor(f, Ax, 1e-3) == -1); /* no analysis held */
  cd_sparseLduFree(f);
}

CD_TEST(sparseLduAnalysesOfOtherSizesOnOneObjectSolveAsADenseLu) {
  /* one cdSparseLdu through patterns of sizes 240, 7, 90, 1, 240, 30 (its arrays grown only,
   * its workspace zeroed only when grown: every factorization leaves it zero), with a refused
   * factorization (a tiny pivot) before each new analysis: each solves as a dense LU with
   * partial pivoting to 1e-12 relative, as a fresh object's does */
  static const int sizes[] = {240, 7, 90, 1, 240, 30};
  g_rng = 2029;
  cdSparseLdu *f = cd_sparseLduMake();
  CHECK(f);
  if (!f) return;
  for (size_t c = 0; c < sizeof sizes / sizeof *sizes; c++) {
    int n = sizes[c];
    denseCase d;
    int made = caseMake(&d, n);
    CHECK(made);
    if (!made) return;
    randomMatrix(n, 2.0 + 4.0 * rnd(), 1.05, d.pat, d.A);
    randomPerm(n, d.perm);
    sparse S;
    toSparse(n, d.pat, d.A, &S);
    CHECK(cd_sparseLduAnalyse(f, n, S.Ap, S.Ai, d.perm) == 0);
    CHECK(cd_sparseLduFlops(f) == denseSymbolicFlops(n, d.pat, d.perm));
    CHECK(cd_sparseLduFactor(f, S.Ax, 1e-3) == 0);
    double err = solvesFromDenseLu(f, n, d.A, d.Ad, d.b, d.x);
    printf("    n %3d: solves within %.1e of the dense LU's\n", n, err);
    CHECK_MSG(err <= 1e-12, "n %d: solves %.3g from the dense LU's", n, err);
    /* refused: the first pivot scaled down to 1e-9 of its column's entries */
    int k0 = d.perm[0], d0 = -1;
    for (int t = S.Ap[k0]; t < S.Ap[k0 + 1]; t++)
      if (S.Ai[t] == k0) d0 = t;
    if (n > 1 && d0 >= 0 && S.Ap[k0 + 1] - S.Ap[k0] > 1) {
      double keep = S.Ax[d0];
      S.Ax[d0] = 1e-9;
      CHECK(cd_sparseLduFactor(f, S.Ax, 1e-3) == 1);
      S.Ax[d0] = keep;
    }
    freeSparse(&S);
    caseFree(&d);
  }
  cd_sparseLduFree(f);
}

CD_TEST(sparseLduReanalysesOfChangedContactsFactorAsAFreshAnalysis) {
  /* the active-set method's sequence: contacts of 0 to 3 unknowns (0: not active) in a kept
   * contact order, each pattern the last with one to three contacts' unknowns changed. One
   * object through the sequence (the reaches before the first changed column of C kept from
   * the last analysis, which a bound refused every third time; the pattern not checked, as
   * the active-set method analyses its K) against a fresh object's checked analysis of each:
   * the same flops, and the same factors bit for bit (the solves compared with memcmp); the
   * bound refuses exactly above the flops */
  g_rng = 9091;
  int nc = 80, *r = malloc((size_t)nc * sizeof(int)), *off = malloc((size_t)(nc + 1) * sizeof(int));
  int *cperm = malloc((size_t)nc * sizeof(int));
  unsigned char *cpl = calloc((size_t)nc * nc, 1);
  cdSparseLdu *f = cd_sparseLduMake();
  CHECK(r && off && cperm && cpl && f);
  if (!r || !off || !cperm || !cpl || !f) return;
  for (int i = 0; i < nc; i++) {
    r[i] = (int)(rnd() * 4);
    for (int j = 0; j < i; j++) cpl[i + nc * j] = cpl[j + nc * i] = rnd() < 4.0 / nc;
  }
  randomPerm(nc, cperm);
  int kept = 0, refused = 0;
  for (int round = 0; round < 40; round++) {
    if (round)
      for (int c = 1 + (int)(rnd() * 3); c > 0; c--) r[(int)(rnd() * nc)] = (int)(rnd() * 4);
    off[0] = 0;
    for (int i = 0; i < nc; i++) off[i + 1] = off[i] + r[i];
    int n = off[nc];
    if (!n) continue;
    denseCase d;
    int made = caseMake(&d, n);
    cdSparseLdu *g = cd_sparseLduMake();
    CHECK(made && g);
    if (!made || !g) return;
    for (int i = 0; i < nc; i++)
      for (int j = 0; j <= i; j++) {
        if (i == j || cpl[i + nc * j]) caseBlock(&d, n, off, i, j);
      }
    dominantDiagonal(n, 1.05, 0, d.pat, d.A);
    for (int i = 0, k = 0; i < nc; i++)
      for (int a = off[cperm[i]]; a < off[cperm[i] + 1]; a++) d.perm[k++] = a;
    sparse S;
    toSparse(n, d.pat, d.A, &S);
    CHECK(cd_sparseLduAnalyse(g, n, S.Ap, S.Ai, d.perm) == 0);
    double want = cd_sparseLduFlops(g);
    if (round % 3 == 2) { /* refused by the bound, then analysed */
      CHECK(cd_sparseLduAnalyseWithin(f, n, S.Ap, S.Ai, d.perm, want - 1.0, 0) == 2);
      CHECK(cd_sparseLduFactor(f, S.Ax, 1e-3) == -1);
      refused++;
    }
    CHECK(cd_sparseLduAnalyseWithin(f, n, S.Ap, S.Ai, d.perm, want, 0) == 0);
    CHECK(cd_sparseLduFlops(f) == want);
    CHECK(cd_sparseLduFactor(f, S.Ax, 1e-3) == 0 && cd_sparseLduFactor(g, S.Ax, 1e-3) == 0);
    for (int k = 0; k < n; k++) d.b[k] = d.x[k] = 2.0 * rnd() - 1.0;
    cd_sparseLduSolve(f, d.b);
    cd_sparseLduSolve(g, d.x);
    CHECK_MSG(!memcmp(d.b, d.x, (size_t)n * sizeof *d.b), "round %d: solves differ", round);
    kept++;
    freeSparse(&S);
    cd_sparseLduFree(g);
    caseFree(&d);
  }
  printf("    %d patterns (%d refused first), each as a fresh analysis's\n", kept, refused);
  cd_sparseLduFree(f);
  free(r), free(off), free(cperm), free(cpl);
}

/* the factorization and solve of S (n x n, order perm) as the header of sparse_ldu.c writes
 * them, on dense storage, each value's operations in that order: the elimination tree grown
 * with the rows' reaches, each reach in its topological order (C's column k above the
 * diagonal in A's row order; each path up the tree to a marked node, the later paths first),
 * row k's updates over that reach, then the solves by columns of L and rows of U in
 * ascending order. Returns cd_sparseLduFactor's code with the failed pivot and the growth;
 * on 0, b = A^-1 b */
static int referenceLdu(int n, const sparse *S, const int *perm, double tol, double *b, int *failed, double *growth) {
  size_t nn = (size_t)n * n;
  double *A = calloc(nn, sizeof *A), *L = calloc(nn, sizeof *L), *U = calloc(nn, sizeof *U);
  double *d = calloc((size_t)n, sizeof *d), *w0 = calloc((size_t)n, sizeof *w0), *w1 = calloc((size_t)n, sizeof *w1);
  unsigned char *in = calloc(nn, 1), *lpat = calloc(nn, 1);
  int *pinv = malloc((size_t)n * sizeof(int)), *parent = malloc((size_t)n * sizeof(int));
  int *mark = malloc((size_t)n * sizeof(int)), *stack = malloc((size_t)n * sizeof(int));
  int rc = 0;
  for (int j = 0; j < n; j++)
    for (int t = S->Ap[j]; t < S->Ap[j + 1]; t++)
      A[S->Ai[t] + (size_t)n * j] = S->Ax[t], in[S->Ai[t] + (size_t)n * j] = 1;
  for (int k = 0; k < n; k++) pinv[perm[k]] = k, parent[k] = mark[k] = -1;
  double big = 1.0 / tol;
  *growth = 0.0, *failed = -1;
  for (int k = 0; k < n && !rc; k++) {
    int pk = perm[k], top = n;
    mark[k] = k;
    for (int t = S->Ap[pk]; t < S->Ap[pk + 1]; t++) {
      int r = pinv[S->Ai[t]], len = 0;
      if (r >= k) continue;
      w0[r] = A[perm[r] + (size_t)n * pk], w1[r] = A[pk + (size_t)n * perm[r]];
      for (int i = r; mark[i] != k;) {
        stack[len++] = i, mark[i] = k;
        if (parent[i] < 0) parent[i] = k;
        i = parent[i];
      }
      while (len > 0) stack[--top] = stack[--len];
    }
    double dk = in[pk + (size_t)n * pk] ? A[pk + (size_t)n * pk] : 0.0, gk = 0.0;
    for (int q = top; q < n; q++) {
      int j = stack[q];
      double v0 = w0[j], v1 = w1[j];
      w0[j] = w1[j] = 0.0;
      for (int i = j + 1; i < k; i++)
        if (lpat[i + (size_t)n * j]) {
          w0[i] -= L[i + (size_t)n * j] * v0;
          w1[i] -= U[j + (size_t)n * i] * v1;
        }
      double l = v1 / d[j], u = v0 / d[j], a = fabs(l) > fabs(u) ? fabs(l) : fabs(u);
      L[k + (size_t)n * j] = l, U[j + (size_t)n * k] = u, lpat[k + (size_t)n * j] = 1;
      dk -= l * v0;
      gk = gk > a ? gk : a;
    }
    d[k] = dk;
    *growth = *growth > gk ? *growth : gk;
    if (!(gk <= big) || !(fabs(dk) > 0.0) || !isfinite(dk)) *failed = k, rc = 1;
  }
  if (!rc) {
    double *x = w0;
    for (int k = 0; k < n; k++) x[k] = b[perm[k]];
    for (int j = 0; j < n; j++) {
      double xj = x[j];
      if (xj == 0.0) continue;
      for (int i = j + 1; i < n; i++)
        if (lpat[i + (size_t)n * j]) x[i] -= L[i + (size_t)n * j] * xj;
    }
    for (int k = 0; k < n; k++) x[k] /= d[k];
    for (int j = n - 1; j >= 0; j--) {
      double s = x[j];
      for (int i = j + 1; i < n; i++)
        if (lpat[i + (size_t)n * j]) s -= U[j + (size_t)n * i] * x[i];
      x[j] = s;
    }
    for (int k = 0; k < n; k++) b[perm[k]] = x[k];
  }
  free(A), free(L), free(U), free(d), free(w0), free(w1), free(in), free(lpat);
  free(pinv), free(parent), free(mark), free(stack);
  return rc;
}

CD_TEST(sparseLduFactorsAndSolvesAsItsOperationsInOrderBitForBit) {
  /* the factors are those of the operations the header states, in their order, bit for bit
   * (a faster factorization or solve must keep them: the simulations' answers depend on
   * every rounding): one object through random patterns (sizes 1 to 120, 2 to 6 entries a
   * row, diagonals 0.02 to 1.5 times the off-diagonal sums, so that some pivots fail the
   * threshold) and contact block patterns, two value sets each, against referenceLdu: the
   * same code, failed pivot and growth (memcmp), and the same solves (memcmp; right sides
   * with zeros of both signs, which the forward solve skips); the pattern checked in even
   * rounds, not in odd ones */
  static const int sizes[] = {1, 2, 3, 7, 30, 90, 120, -25, -60};
  g_rng = 31337;
  cdSparseLdu *f = cd_sparseLduMake();
  CHECK(f);
  if (!f) return;
  int cases = 0, refused = 0;
  for (size_t c = 0; c < sizeof sizes / sizeof *sizes; c++)
    for (int round = 0; round < 4; round++) {
      int n = sizes[c], nc = -n, *off = NULL;
      if (n < 0) { /* contacts of 1 to 3 unknowns, each block dense, in a random order */
        off = malloc((size_t)(nc + 1) * sizeof(int));
        off[0] = 0;
        for (int i = 0; i < nc; i++) off[i + 1] = off[i] + 1 + (int)(rnd() * 3);
        n = off[nc];
      }
      denseCase dc;
      int made = caseMake(&dc, n);
      CHECK(made);
      if (!made) return;
      double dom = 0.02 + 1.5 * rnd() * rnd();
      if (off) {
        for (int i = 0; i < nc; i++)
          for (int j = 0; j <= i; j++)
            if (i == j || rnd() < 4.0 / nc) caseBlock(&dc, n, off, i, j);
        dominantDiagonal(n, dom, 1, dc.pat, dc.A);
        int *cperm = malloc((size_t)nc * sizeof(int));
        randomPerm(nc, cperm);
        for (int i = 0, k = 0; i < nc; i++)
          for (int a = off[cperm[i]]; a < off[cperm[i] + 1]; a++) dc.perm[k++] = a;
        free(cperm);
      } else {
        randomMatrix(n, 2.0 + 4.0 * rnd(), dom, dc.pat, dc.A);
        randomPerm(n, dc.perm);
      }
      sparse S;
      toSparse(n, dc.pat, dc.A, &S);
      CHECK(cd_sparseLduAnalyseWithin(f, n, S.Ap, S.Ai, dc.perm, INFINITY, round & 1 ? 0 : 1) == 0);
      double tol = round & 1 ? 1e-3 : 0.1, growth;
      for (int k = 0; k < n; k++) {
        double u = rnd();
        dc.b[k] = dc.x[k] = u < 0.1 ? 0.0 : u < 0.2 ? -0.0 : 2.0 * rnd() - 1.0;
      }
      int failed, rc = referenceLdu(n, &S, dc.perm, tol, dc.b, &failed, &growth);
      CHECK(cd_sparseLduFactor(f, S.Ax, tol) == rc && cd_sparseLduFailedPivot(f) == failed);
      double g = cd_sparseLduGrowth(f);
      CHECK_MSG(!memcmp(&g, &growth, sizeof g), "n %d: growth %.17g, the reference's %.17g", n, g, growth);
      if (rc == 0) {
        cd_sparseLduSolve(f, dc.x);
        CHECK_MSG(!memcmp(dc.b, dc.x, (size_t)n * sizeof *dc.b), "n %d, round %d: solves differ", n, round);
      } else
        refused++;
      freeSparse(&S);
      caseFree(&dc);
      free(off);
      cases++;
    }
  printf("    %d cases (%d refused by the threshold), each as the operations in order\n", cases, refused);
  cd_sparseLduFree(f);
}

CD_TEST(sparseLduSolvesColumnRunsWithAZeroSkippedAsTheirOperationsInOrder) {
  /* the forward solve takes column j + 1 (and j + 2) with column j where their rows are
   * column j's after its first; where the next x is zero once the earlier columns are done,
   * its column is skipped as alone would be, which here keeps the last x = -0 (an update by
   * -L(n - 1, j) x_j = +0 with L(n - 1, j) < 0 would make it +0): a pair, 3 x 3 with x_1 = 0,
   * and a run of three, 4 x 4 with x_2 = 0 (by columns; zeros in the pattern) */
  static const double A3[9] = {1.0, 0.5, 0.0, 0.25, 2.0, -0.125, 0.5, 0.25, 3.0};
  static const double A4[16] = {1.0, 0.5, 0.25, 0.0, 0.0, 2.0, 1.0, 0.0, 0.25, 0.5, 3.0, -0.5, 0.125, 0.25, 0.5, 4.0};
  static const double b3[3] = {2.0, 1.0, -0.0}, b4[4] = {2.0, 2.0, 1.0, -0.0};
  for (int n = 3; n <= 4; n++) {
    unsigned char pat[16];
    memset(pat, 1, sizeof pat);
    sparse S;
    toSparse(n, pat, n == 3 ? A3 : A4, &S);
    int perm[4] = {0, 1, 2, 3}, failed;
    double b[4], x[4], growth;
    memcpy(b, n == 3 ? b3 : b4, (size_t)n * sizeof *b);
    memcpy(x, b, sizeof x);
    cdSparseLdu *f = cd_sparseLduMake();
    CHECK(f && cd_sparseLduAnalyse(f, n, S.Ap, S.Ai, NULL) == 0 && cd_sparseLduFactor(f, S.Ax, 1e-3) == 0);
    CHECK(referenceLdu(n, &S, perm, 1e-3, b, &failed, &growth) == 0);
    if (f) cd_sparseLduSolve(f, x);
    CHECK_MSG(!memcmp(b, x, (size_t)n * sizeof *b), "n %d: x_last %g, the reference's %g", n, x[n - 1], b[n - 1]);
    CHECK(signbit(x[n - 1]) && x[n - 1] == 0.0);
    cd_sparseLduFree(f);
    freeSparse(&S);
  }
}
