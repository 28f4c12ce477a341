/* test_lemke.c: the dense Lemke solver (solvers/lcp_lemke.c) on problems with known answers:
 * the seed 004 worked example, brute-force enumeration of every active set, Murty's
 * exponential example, degenerate and infeasible problems, bad scaling. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "lcp_lemke.h"
#include "test.h"

#define NMAX 8

/* deterministic generator (xorshift64*) so every run sees the same problems */
static uint64_t g_rng;
static double rnd(void) { return cd_testRandom(&g_rng); }
static double rndIn(double lo, double hi) { return lo + (hi - lo) * rnd(); }

/* solves the k x k column-major system F x = y in place (Gaussian elimination with partial
 * pivoting); returns -1 when singular */
static int denseSolve(int k, double *F, double *y) {
  for (int j = 0; j < k; j++) {
    int p = j;
    for (int i = j + 1; i < k; i++)
      if (fabs(F[i + j * k]) > fabs(F[p + j * k])) p = i;
    if (fabs(F[p + j * k]) < 1e-13) return -1;
    for (int c = 0; c < k; c++) {
      double t = F[j + c * k];
      F[j + c * k] = F[p + c * k];
      F[p + c * k] = t;
    }
    double t = y[j];
    y[j] = y[p];
    y[p] = t;
    for (int i = j + 1; i < k; i++) {
      double f = F[i + j * k] / F[j + j * k];
      for (int c = j; c < k; c++) F[i + c * k] -= f * F[j + c * k];
      y[i] -= f * y[j];
    }
  }
  for (int j = k - 1; j >= 0; j--) {
    for (int c = j + 1; c < k; c++) y[j] -= F[j + c * k] * y[c];
    y[j] /= F[j + j * k];
  }
  return 0;
}

static double det(int k, const int *idx, int n, const double *A) {
  double F[NMAX * NMAX];
  for (int q = 0; q < k; q++)
    for (int p = 0; p < k; p++) F[p + q * k] = A[idx[p] + idx[q] * n];
  double d = 1.0;
  for (int j = 0; j < k; j++) {
    int p = j;
    for (int i = j + 1; i < k; i++)
      if (fabs(F[i + j * k]) > fabs(F[p + j * k])) p = i;
    if (F[p + j * k] == 0.0) return 0.0;
    if (p != j) {
      d = -d;
      for (int c = 0; c < k; c++) {
        double t = F[j + c * k];
        F[j + c * k] = F[p + c * k];
        F[p + c * k] = t;
      }
    }
    d *= F[j + j * k];
    for (int i = j + 1; i < k; i++) {
      double f = F[i + j * k] / F[j + j * k];
      for (int c = j; c < k; c++) F[i + c * k] -= f * F[j + c * k];
    }
  }
  return d;
}

/* every principal minor positive: A is a P-matrix (unique LCP solution for every b) */
static int isPMatrix(int n, const double *A) {
  for (int mask = 1; mask < (1 << n); mask++) {
    int idx[NMAX], k = 0;
    for (int i = 0; i < n; i++)
      if (mask >> i & 1) idx[k++] = i;
    if (!(det(k, idx, n, A) > 1e-9)) return 0;
  }
  return 1;
}

/* brute force: tries all 2^n active sets S (z_S solves A_SS z_S = -b_S, z = 0 elsewhere)
 * and returns the number of distinct solutions found (at most 16); the first goes to zsol */
static int enumerateLcp(int n, const double *A, const double *b, double *zsol) {
  int found = 0;
  double scale = 1.0, sols[16 * NMAX];
  for (int i = 0; i < n; i++) scale = fmax(scale, fabs(b[i]));
  for (int mask = 0; mask < (1 << n); mask++) {
    int idx[NMAX], k = 0;
    for (int i = 0; i < n; i++)
      if (mask >> i & 1) idx[k++] = i;
    double F[NMAX * NMAX], y[NMAX], z[NMAX] = {0};
    for (int q = 0; q < k; q++) {
      y[q] = -b[idx[q]];
      for (int p = 0; p < k; p++) F[p + q * k] = A[idx[p] + idx[q] * n];
    }
    if (k && denseSolve(k, F, y)) continue;
    int ok = 1;
    for (int q = 0; q < k; q++) {
      if (y[q] < -1e-10 * scale) ok = 0;
      z[idx[q]] = fmax(0.0, y[q]);
    }
    for (int i = 0; i < n && ok; i++) {
      double w = b[i];
      for (int j = 0; j < n; j++) w += A[i + j * n] * z[j];
      if (w < -1e-10 * scale) ok = 0;
    }
    /* a degenerate solution (z_i = w_i = 0) shows up under several active sets: count it once */
    int dup = 0;
    for (int s = 0; s < found && ok; s++) {
      double dmax = 0.0;
      for (int i = 0; i < n; i++) dmax = fmax(dmax, fabs(z[i] - sols[s * NMAX + i]));
      if (dmax <= 1e-9 * scale) dup = 1;
    }
    if (ok && !dup && found < 16) memcpy(&sols[found++ * NMAX], z, (size_t)n * sizeof *z);
  }
  if (found) memcpy(zsol, sols, (size_t)n * sizeof *zsol);
  return found;
}

CD_TEST(lemkeSolvesSeed004WorkedExampleExactly) {
  /* seed 004: A = [[2,-1],[-1,2]], b = (-1, 3): lambda = (1/2, 0), w = (0, 5/2) */
  const double A[4] = {2, -1, -1, 2}, b[2] = {-1, 3};
  double z[2];
  cdLemkeStats st;
  int s = cd_lemkeSolve(2, A, b, z, NULL, &st);
  CHECK(s == CD_LEMKE_SOLVED);
  CHECK_NEAR(z[0], 0.5, 1e-14);
  CHECK_NEAR(z[1], 0.0, 1e-14);
  CHECK_NEAR(A[0] * z[0] + A[2] * z[1] + b[0], 0.0, 1e-14);
  CHECK_NEAR(A[1] * z[0] + A[3] * z[1] + b[1], 2.5, 1e-14);
  CHECK(st.residual <= 1e-14);
}

CD_TEST(lemkeReturnsZeroWhenBIsNonnegative) {
  const double A[4] = {1, 0, 0, 1}, b[2] = {0, 2};
  double z[2] = {7, 7};
  cdLemkeStats st;
  CHECK(cd_lemkeSolve(2, A, b, z, NULL, &st) == CD_LEMKE_SOLVED);
  CHECK(z[0] == 0.0 && z[1] == 0.0 && st.pivots == 0);
}

/* runs Lemke on (A, b) and compares with the unique enumerated solution */
static void checkAgainstEnumeration(int n, const double *A, const double *b, const char *what, int trial) {
  double zl[NMAX], ze[NMAX];
  cdLemkeStats st;
  int s = cd_lemkeSolve(n, A, b, zl, NULL, &st);
  int nsol = enumerateLcp(n, A, b, ze);
  CHECK_MSG(nsol == 1, "%s trial %d: enumeration found %d solutions of a P-matrix LCP", what, trial, nsol);
  CHECK_MSG(s == CD_LEMKE_SOLVED, "%s trial %d (n = %d): status %d", what, trial, n, s);
  double bn = 1.0;
  for (int i = 0; i < n; i++) bn = fmax(bn, fabs(b[i]));
  CHECK_MSG(st.residual <= 1e-10 * bn, "%s trial %d: residual %.3g", what, trial, st.residual);
  for (int i = 0; i < n; i++)
    CHECK_MSG(fabs(zl[i] - ze[i]) <= 1e-9 * bn, "%s trial %d: z[%d] = %.17g vs enumerated %.17g", what, trial,
              i, zl[i], ze[i]);
}

CD_TEST(lemkeMatchesEnumerationOnRandomSymmetricPositiveDefinite) {
  g_rng = 0x9e3779b97f4a7c15ULL;
  for (int trial = 0; trial < 200; trial++) {
    int n = 1 + trial % NMAX;
    double B[NMAX * NMAX], A[NMAX * NMAX], b[NMAX];
    for (int t = 0; t < n * n; t++) B[t] = rndIn(-1, 1);
    /* A = B B^T + 0.1 I */
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++) {
        double s = i == j ? 0.1 : 0.0;
        for (int k = 0; k < n; k++) s += B[i + k * n] * B[j + k * n];
        A[i + j * n] = s;
      }
    for (int i = 0; i < n; i++) b[i] = rndIn(-1, 1);
    checkAgainstEnumeration(n, A, b, "spd", trial);
  }
}

CD_TEST(lemkeMatchesEnumerationOnRandomPMatrices) {
  g_rng = 0x1234567887654321ULL;
  int tested = 0, nonpd = 0;
  for (int trial = 0; trial < 2000 && tested < 200; trial++) {
    int n = 1 + tested % NMAX;
    double A[NMAX * NMAX], b[NMAX];
    /* a strongly non-symmetric candidate: triangular-dominant with a small lower part;
     * kept only when every principal minor is positive */
    for (int j = 0; j < n; j++)
      for (int i = 0; i < n; i++)
        A[i + j * n] = i == j ? rndIn(0.5, 2.0) : i < j ? rndIn(-3.0, 3.0) : rndIn(-0.4, 0.4);
    if (!isPMatrix(n, A)) continue;
    /* count those whose symmetric part is indefinite: P but not positive definite */
    double S[NMAX * NMAX];
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++) S[i + j * n] = 0.5 * (A[i + j * n] + A[j + i * n]);
    if (!isPMatrix(n, S)) nonpd++;
    for (int i = 0; i < n; i++) b[i] = rndIn(-2, 2);
    checkAgainstEnumeration(n, A, b, "P-matrix", tested);
    tested++;
  }
  CHECK(tested == 200);
  CHECK_MSG(nonpd >= 50, "only %d of the P-matrices are not positive definite", nonpd);
}

CD_TEST(lemkeMatchesEnumerationOnDegenerateIntegerProblems) {
  /* small integers make ties in the ratio test and zero basic variables common: the
   * lexicographic rule has to resolve them */
  g_rng = 0xdeadbeefcafef00dULL;
  int tested = 0;
  for (int trial = 0; trial < 5000 && tested < 200; trial++) {
    int n = 2 + tested % (NMAX - 1);
    double A[NMAX * NMAX], b[NMAX];
    for (int j = 0; j < n; j++)
      for (int i = 0; i < n; i++) A[i + j * n] = i == j ? 1.0 + floor(rndIn(0, 2)) : floor(rndIn(-1, 2));
    if (!isPMatrix(n, A)) continue;
    for (int i = 0; i < n; i++) b[i] = floor(rndIn(-2, 1)); /* -2, -1 or 0: many ties */
    checkAgainstEnumeration(n, A, b, "degenerate", tested);
    tested++;
  }
  CHECK(tested == 200);
}

/* Murty's example (Murty 1988, ch. 6; peer lcp_exp_murty2.dat): M upper triangular, 1 on the
 * diagonal and 2 above it, q_i = 2^i - 2^(n+1) (i = 1..n). Solution z = 2^n e_n. */
static void murty(int n, double *A, double *b) {
  for (int j = 0; j < n; j++)
    for (int i = 0; i < n; i++) A[i + j * n] = i == j ? 1.0 : i < j ? 2.0 : 0.0;
  for (int i = 0; i < n; i++) b[i] = ldexp(1.0, i + 1) - ldexp(1.0, n + 1);
}

CD_TEST(lemkeTakesExponentiallyManyPivotsOnMurtyExample) {
  for (int n = 2; n <= 8; n++) {
    double A[NMAX * NMAX], b[NMAX], z[NMAX];
    murty(n, A, b);
    cdLemkeStats st;
    int s = cd_lemkeSolve(n, A, b, z, NULL, &st);
    CHECK(s == CD_LEMKE_SOLVED);
    CHECK_MSG(st.pivots == (1 << n) - 1, "n = %d: %d pivots, expected 2^n - 1 = %d", n, st.pivots, (1 << n) - 1);
    for (int i = 0; i < n; i++) CHECK_NEAR(z[i], i == n - 1 ? ldexp(1.0, n) : 0.0, 1e-12);
  }
}

CD_TEST(lemkeReportsThePivotLimit) {
  double A[36], b[6], z[6];
  murty(6, A, b);
  cdLemkeOptions opt = {.max_pivots = 10};
  cdLemkeStats st;
  CHECK(cd_lemkeSolve(6, A, b, z, &opt, &st) == CD_LEMKE_PIVOT_LIMIT);
  CHECK(st.pivots == 10);
  CHECK(st.residual > 1.0);
}

CD_TEST(lemkeSolvesDegenerateConvexQpKkt) {
  /* CPS_4bis (peer-data README): KKT system of a strictly convex QP, M = [[Q, -a^T], [a, 0]],
   * Q = [[11,0,10],[0,11,10],[10,10,21]], a = (1,1,1); q = (50, 50, 23, -6) makes the
   * solution (3, 3, 0, 83) degenerate (z_3 = w_3 = 0): check it from the KKT rows */
  const double A[16] = {11, 0, 10, 1, 0, 11, 10, 1, 10, 10, 21, 1, -1, -1, -1, 0};
  const double b[4] = {50, 50, 23, -6};
  double z[4];
  cdLemkeStats st;
  CHECK(cd_lemkeSolve(4, A, b, z, NULL, &st) == CD_LEMKE_SOLVED);
  const double want[4] = {3, 3, 0, 83};
  for (int i = 0; i < 4; i++) CHECK_NEAR(z[i], want[i], 1e-10 * 83);
  CHECK(st.residual <= 1e-10 * 50);
}

CD_TEST(lemkeReportsRayOnInfeasibleProblems) {
  /* w = -z - 1 < 0 for every z >= 0 */
  const double A1[1] = {-1}, b1[1] = {-1};
  double z[2];
  CHECK(cd_lemkeSolve(1, A1, b1, z, NULL, NULL) == CD_LEMKE_RAY);
  /* PSD and infeasible: w1 + w2 = -2 for every z */
  const double A2[4] = {1, -1, -1, 1}, b2[2] = {-1, -1};
  double ze[2];
  CHECK(enumerateLcp(2, A2, b2, ze) == 0);
  cdLemkeStats st;
  CHECK(cd_lemkeSolve(2, A2, b2, z, NULL, &st) == CD_LEMKE_RAY);
  CHECK(st.residual > 0.5);
}

CD_TEST(lemkeEquilibratesBadlyScaledProblems) {
  /* A = S P S with S = diag(1e-4 .. 1e4) and P SPD: the mass-ratio situation. The scaled
   * run must be flagged and agree with enumeration on the same problem. */
  g_rng = 42;
  for (int trial = 0; trial < 40; trial++) {
    int n = 2 + trial % (NMAX - 1);
    double B[NMAX * NMAX], A[NMAX * NMAX], b[NMAX], s[NMAX], zl[NMAX], ze[NMAX];
    for (int i = 0; i < n; i++) s[i] = pow(10.0, -4.0 + 8.0 * i / (n - 1));
    for (int t = 0; t < n * n; t++) B[t] = rndIn(-1, 1);
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++) {
        double v = i == j ? 0.5 : 0.0;
        for (int k = 0; k < n; k++) v += B[i + k * n] * B[j + k * n];
        A[i + j * n] = s[i] * v * s[j];
      }
    for (int i = 0; i < n; i++) b[i] = s[i] * rndIn(-1, 1);
    cdLemkeStats st;
    int stt = cd_lemkeSolve(n, A, b, zl, NULL, &st);
    CHECK(stt == CD_LEMKE_SOLVED);
    CHECK(st.scaled == 1);
    CHECK(enumerateLcp(n, A, b, ze) >= 1);
    /* compare in the well-scaled variables s_i z_i */
    for (int i = 0; i < n; i++) CHECK_NEAR(s[i] * zl[i], s[i] * ze[i], 1e-8);
  }
}

CD_TEST(lemkeUsesTheCallersWorkspaceWithoutAllocating) {
  double A[36], b[6], z[6];
  murty(6, A, b);
  void *work = cd_malloc(cd_lemkeWorkSize(6));
  CHECK(work != NULL);
  long before = cd_allocCount();
  cdLemkeOptions opt = {.work = work};
  CHECK(cd_lemkeSolve(6, A, b, z, &opt, NULL) == CD_LEMKE_SOLVED);
  CHECK(cd_allocCount() == before);
  CHECK_NEAR(z[5], 64.0, 1e-12);
  cd_free(work);
  /* without one, an allocation failure is reported */
  cd_allocFailAt(1);
  CHECK(cd_lemkeSolve(6, A, b, z, NULL, NULL) == CD_LEMKE_NOMEM);
  cd_allocFailAt(0);
}

/* the two opt-in parts the contact backend uses: the largest-pivot tie rule and the warm
 * start. On random P-matrix problems (unique solution) both must reach the enumerated
 * solution; a warm start from the solution's support is a solution with no pivot, and a
 * wrong guess (every z basic, or a random support) still ends on the solution. */
CD_TEST(lemkeLargestPivotRuleAndWarmStartReachTheUniqueSolution) {
  g_rng = 0x5851f42d4c957f2dULL;
  int tested = 0, nopivot = 0;
  for (int trial = 0; trial < 200; trial++) {
    int n = 1 + trial % NMAX;
    double B[NMAX * NMAX], A[NMAX * NMAX], b[NMAX], ze[NMAX], z[NMAX], guess[NMAX];
    for (int t = 0; t < n * n; t++) B[t] = rndIn(-1, 1);
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++) {
        double sum = i == j ? 0.1 : 0.0;
        for (int k = 0; k < n; k++) sum += B[i + k * n] * B[j + k * n];
        A[i + j * n] = sum;
      }
    for (int i = 0; i < n; i++) b[i] = rndIn(-1, 1);
    if (enumerateLcp(n, A, b, ze) != 1) continue;
    tested++;
    for (int variant = 0; variant < 4; variant++) {
      for (int i = 0; i < n; i++)
        guess[i] = variant == 1 ? ze[i] : variant == 2 ? 1.0 : rndIn(-1, 1);
      cdLemkeOptions opt = {.ties = CD_LEMKE_TIES_LARGEST_PIVOT, .start = variant ? guess : NULL};
      cdLemkeStats st;
      int s = cd_lemkeSolve(n, A, b, z, &opt, &st);
      CHECK_MSG(s == CD_LEMKE_SOLVED, "trial %d variant %d: status %d", trial, variant, s);
      for (int i = 0; i < n; i++)
        CHECK_MSG(fabs(z[i] - ze[i]) <= 1e-9, "trial %d variant %d: z[%d] = %.17g vs %.17g", trial, variant, i,
                  z[i], ze[i]);
      if (variant == 1) {
        int support = 0;
        for (int i = 0; i < n; i++) support += ze[i] > 0.0;
        if (support) {
          CHECK_MSG(st.warm && st.pivots == 0, "trial %d: start at the solution took %d pivots (warm %d)", trial,
                    st.pivots, st.warm);
          nopivot += st.warm && st.pivots == 0;
        }
      }
    }
  }
  CHECK(tested >= 150);
  CHECK(nopivot > 0);
}
