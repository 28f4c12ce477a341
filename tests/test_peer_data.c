/* test_peer_data.c: the peer-data readers (tests/peer_data.h) against the facts of
 * peer-data/README.md: storage layouts, the per-file inventories, the block contract of
 * problem.h and the global -> local condensation. */
#include <stdlib.h>
#include <string.h>

#include <hdf5.h>
#include <unistd.h>

#include "alloc.h"
#include "backend.h"
#include "peer_data.h"
#include "test.h"

#define PEER_OR_SKIP(dir)                                                              \
  const char *dir = cd_peerDir();                                                      \
  if (!dir) CD_SKIP("peer data folder absent (CDSIM_PEER_DATA unset or not a directory)")

static void peerPath(char *buf, size_t n, const char *dir, const char *sub, const char *name) {
  snprintf(buf, n, "%s/%s/%s", dir, sub, name);
}

/* ---- LCP ---- */

CD_TEST(lcpOrtizDenseAndBlockStoragesGiveTheSameMatrix) {
  PEER_OR_SKIP(dir);
  char p1[1024], p2[1024], err[512];
  cdLcpFile a, b;
  peerPath(p1, sizeof p1, dir, "lcp", "lcp_ortiz.dat");
  peerPath(p2, sizeof p2, dir, "lcp", "lcp_ortiz_block.dat");
  int ra = cd_lcpFileRead(p1, &a, err, sizeof err);
  CHECK_MSG(ra == 0, "%s", err);
  int rb = cd_lcpFileRead(p2, &b, err, sizeof err);
  CHECK_MSG(rb == 0, "%s", err);
  if (ra == 0 && rb == 0) {
    CHECK(a.n == 4 && b.n == 4);
    int nonzero = 0;
    for (int k = 0; k < 16; k++) {
      CHECK_NEAR(a.M[k], b.M[k], 1e-15 * (1 + fabs(a.M[k])));
      nonzero += a.M[k] != 0;
    }
    for (int i = 0; i < 4; i++) CHECK_NEAR(a.q[i], b.q[i], 1e-15 * (1 + fabs(a.q[i])));
    CHECK(nonzero > 4); /* the matrix is not diagonal: the comparison covers off-diagonal blocks */
    /* nonsymmetric (README): the two storages must agree on orientation too */
    int nonsym = 0;
    for (int i = 0; i < 4; i++)
      for (int j = 0; j < 4; j++) nonsym |= a.M[i + 4 * j] != a.M[j + 4 * i];
    CHECK(nonsym);
  }
  cd_lcpFileFree(&a);
  cd_lcpFileFree(&b);
}

CD_TEST(lcpCps2DenseStorageIsColumnMajor) {
  PEER_OR_SKIP(dir);
  char p[1024], err[512];
  cdLcpFile a;
  peerPath(p, sizeof p, dir, "lcp", "lcp_CPS_2.dat");
  int rc = cd_lcpFileRead(p, &a, err, sizeof err);
  CHECK_MSG(rc == 0, "%s", err);
  if (rc) return;
  /* first printed line "0 2 -1" is column 0; the second "-1 0 1" is column 1 */
  CHECK(a.n == 3);
  CHECK(a.M[0 + 3 * 0] == 0 && a.M[1 + 3 * 0] == 2 && a.M[2 + 3 * 0] == -1);
  CHECK(a.M[0 + 3 * 1] == -1 && a.M[1 + 3 * 1] == 0 && a.M[2 + 3 * 1] == 1);
  CHECK(a.q[0] == -3 && a.q[1] == 6 && a.q[2] == -1);
  /* README solution z = (0, 1, 3), w = (2, 0, 0): w = M z + q holds only column-major */
  const double z[3] = {0, 1, 3}, wref[3] = {2, 0, 0};
  for (int i = 0; i < 3; i++) {
    double w = a.q[i];
    for (int j = 0; j < 3; j++) w += a.M[i + 3 * j] * z[j];
    CHECK_NEAR(w, wref[i], 1e-14);
  }
  cd_lcpFileFree(&a);
}

CD_TEST(lcpTrivialIsDiagonalOneToNineWithMinusOne) {
  PEER_OR_SKIP(dir);
  const char *names[2] = {"lcp_trivial.dat", "lcp_trivial_block.dat"};
  for (int f = 0; f < 2; f++) {
    char p[1024], err[512];
    cdLcpFile a;
    peerPath(p, sizeof p, dir, "lcp", names[f]);
    int rc = cd_lcpFileRead(p, &a, err, sizeof err);
    CHECK_MSG(rc == 0, "%s", err);
    if (rc) continue;
    CHECK(a.n == 9);
    for (int i = 0; i < 9; i++) {
      CHECK(a.q[i] == -1);
      for (int j = 0; j < 9; j++) CHECK_MSG(a.M[i + 9 * j] == (i == j ? i + 1 : 0), "%s M(%d,%d)", names[f], i, j);
    }
    cd_lcpFileFree(&a);
  }
}

CD_TEST(everyLcpFileParsesWithItsInventorySize) {
  PEER_OR_SKIP(dir);
  static const struct {
    const char *name;
    int n;
  } inv[] = {{"lcp_trivial.dat", 9}, {"lcp_trivial_block.dat", 9}, {"lcp_deudeu.dat", 2},
             {"lcp_deudeu_block.dat", 2}, {"lcp_ortiz.dat", 4}, {"lcp_ortiz_block.dat", 4},
             {"lcp_exp_murty.dat", 6}, {"lcp_exp_murty2.dat", 6}, {"lcp_mmc.dat", 26},
             {"lcp_enum_fails.dat", 9}, {"lcp_CPS_1.dat", 2}, {"lcp_CPS_2.dat", 3}, {"lcp_CPS_3.dat", 4},
             {"lcp_CPS_4.dat", 4}, {"lcp_CPS_4bis.dat", 4}, {"lcp_CPS_5.dat", 2},
             {"lcp_Pang_isolated_sol.dat", 3}, {"lcp_Pang_isolated_sol_perturbed.dat", 3},
             {"lcp_inf_sol_perturbed.dat", 3}, {"lcp_tobenna.dat", 40}};
  int parsed = 0;
  for (size_t f = 0; f < sizeof inv / sizeof inv[0]; f++) {
    char p[1024], err[512];
    cdLcpFile a;
    peerPath(p, sizeof p, dir, "lcp", inv[f].name);
    int rc = cd_lcpFileRead(p, &a, err, sizeof err);
    CHECK_MSG(rc == 0, "%s", err);
    if (rc) continue;
    CHECK_MSG(a.n == inv[f].n, "%s: n = %d, README says %d", inv[f].name, a.n, inv[f].n);
    int finite = 1;
    for (int k = 0; k < a.n * a.n; k++) finite &= isfinite(a.M[k]);
    for (int k = 0; k < a.n; k++) finite &= isfinite(a.q[k]);
    CHECK_MSG(finite, "%s: non-finite entries", inv[f].name);
    parsed++;
    cd_lcpFileFree(&a);
  }
  printf("    lcp: %d of %zu files parsed\n", parsed, sizeof inv / sizeof inv[0]);
  /* murty: upper triangular with 1 on the diagonal and 2 above it, as read column-major */
  char p[1024], err[512];
  cdLcpFile a;
  peerPath(p, sizeof p, dir, "lcp", "lcp_exp_murty.dat");
  if (cd_lcpFileRead(p, &a, err, sizeof err) == 0) {
    for (int i = 0; i < 6; i++)
      for (int j = 0; j < 6; j++) CHECK(a.M[i + 6 * j] == (i == j ? 1 : i < j ? 2 : 0));
    cd_lcpFileFree(&a);
  }
}

/* ---- friction contact ---- */

/* the block (i, j) of G, or NULL when not stored */
static const double *blockAt(const cdBlockMatrix *G, int i, int j) {
  int lo = G->rowptr[i], hi = G->rowptr[i + 1] - 1;
  while (lo <= hi) {
    int mid = (lo + hi) / 2;
    if (G->col[mid] == j) return &G->val[9 * (size_t)mid];
    if (G->col[mid] < j) lo = mid + 1;
    else hi = mid - 1;
  }
  return NULL;
}

/* the problem.h contract; 0 when it holds (failures recorded) */
static int checkContract(const char *name, const cdContactProblem *p) {
  const cdBlockMatrix *G = &p->G;
  int before = cd_testFailed();
  CHECK_MSG(G->nblock == p->ncon, "%s: nblock %d, ncon %d", name, G->nblock, p->ncon);
  if (G->nblock != p->ncon) return -1;
  CHECK_MSG(G->rowptr[0] == 0 && G->rowptr[G->nblock] == G->nnzb, "%s: rowptr ends", name);
  for (int i = 0; i < G->nblock; i++) {
    CHECK_MSG(G->rowptr[i] <= G->rowptr[i + 1], "%s: rowptr decreases at %d", name, i);
    for (int k = G->rowptr[i]; k < G->rowptr[i + 1]; k++) {
      CHECK_MSG(G->col[k] >= 0 && G->col[k] < G->nblock, "%s: column out of range", name);
      if (k > G->rowptr[i]) CHECK_MSG(G->col[k] > G->col[k - 1], "%s: row %d not ascending", name, i);
      for (int e = 0; e < 9; e++) CHECK_MSG(isfinite(G->val[9 * (size_t)k + e]), "%s: non-finite G", name);
    }
    int dk = G->diag[i];
    CHECK_MSG(dk >= G->rowptr[i] && dk < G->rowptr[i + 1] && G->col[dk] == i, "%s: diag[%d] wrong", name, i);
    CHECK_MSG(p->mu[i] >= 0 && isfinite(p->mu[i]), "%s: mu[%d] = %g", name, i, p->mu[i]);
    for (int c = 0; c < 3; c++) CHECK_MSG(isfinite(p->g[3 * i + c]), "%s: non-finite g", name);
    for (int c = 0; c < 3; c++) CHECK_MSG(p->lambda[3 * i + c] == 0, "%s: lambda not zeroed", name);
  }
  return cd_testFailed() > before ? -1 : 0;
}

/* max |G - G^T| / max |G| */
static double asymmetry(const cdBlockMatrix *G) {
  double amax = 0, dmax = 0;
  for (int i = 0; i < G->nblock; i++)
    for (int k = G->rowptr[i]; k < G->rowptr[i + 1]; k++) {
      const double *B = &G->val[9 * (size_t)k], *T = blockAt(G, G->col[k], i);
      for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) {
          double t = T ? T[3 * c + r] : 0;
          amax = fmax(amax, fabs(B[3 * r + c]));
          dmax = fmax(dmax, fabs(B[3 * r + c] - t));
        }
    }
  return amax > 0 ? dmax / amax : 0;
}

/* 2-D embedding of peer_data.h: t2 decoupled with W_t2t2 = 1, q_t2 = 0 */
static void checkDecoupledT2(const char *name, const cdContactProblem *p) {
  const cdBlockMatrix *G = &p->G;
  for (int i = 0; i < G->nblock; i++) {
    CHECK_MSG(p->g[3 * i + 2] == 0, "%s: q_t2 of %d nonzero", name, i);
    for (int k = G->rowptr[i]; k < G->rowptr[i + 1]; k++) {
      const double *B = &G->val[9 * (size_t)k];
      int dg = G->col[k] == i;
      CHECK_MSG(B[2] == 0 && B[5] == 0 && B[6] == 0 && B[7] == 0 && B[8] == (dg ? 1 : 0), "%s: t2 coupled in (%d,%d)",
                name, i, G->col[k]);
    }
  }
}

typedef struct {
  const char *name;
  int ncon;    /* README inventory; -1: Rover files, 1..5 */
  int d;       /* 2 or 3 */
  int global;  /* condensed from M, H: symmetric by construction, positive diagonal */
  int sym;     /* README says W symmetric (SPD) */
} cdFcInv;

static int checkFcFile(const char *path, const cdFcInv *inv, int (*reader)(const char *, cdContactProblem *, char *,
                                                                              size_t)) {
  char err[512];
  cdContactProblem p;
  int rc = reader(path, &p, err, sizeof err);
  CHECK_MSG(rc == 0, "%s", err);
  if (rc) return -1;
  if (inv->ncon >= 0) CHECK_MSG(p.ncon == inv->ncon, "%s: ncon %d, README says %d", inv->name, p.ncon, inv->ncon);
  else CHECK_MSG(p.ncon >= 1 && p.ncon <= 5, "%s: ncon %d, README says 1-5", inv->name, p.ncon);
  if (checkContract(inv->name, &p) == 0) {
    double asym = asymmetry(&p.G);
    if (inv->global || inv->sym) CHECK_MSG(asym <= 1e-6, "%s: asymmetry %.3g", inv->name, asym);
    if (inv->d == 2) checkDecoupledT2(inv->name, &p);
    if (inv->global)
      for (int i = 0; i < p.ncon; i++) {
        const double *B = &p.G.val[9 * (size_t)p.G.diag[i]];
        CHECK_MSG(B[0] > 0 && B[4] > 0 && B[8] > 0, "%s: diagonal of block %d not positive", inv->name, i);
      }
    printf("    %-48s ncon %4d  nnzb %6d  d %d  %s  asym %.2g\n", inv->name, p.ncon, p.G.nnzb, inv->d,
           inv->global ? "global" : "local ", asym);
  }
  cd_contactProblemFree(&p);
  return 0;
}

CD_TEST(everyFcDatFileParsesWithConsistentSizes) {
  PEER_OR_SKIP(dir);
  static const cdFcInv inv[] = {
      {"FrictionContact3D_1c.dat", 1, 3, 0, 1},
      {"FrictionContact3D_RR_1c.dat", 1, 3, 0, 0},
      {"FC3D_Example1.dat", 3, 3, 0, 1},
      {"FC3D_Example1_SBM.dat", 3, 3, 0, 1},
      {"Rover1039.dat", -1, 3, 0, 0},
      {"Rover1040.dat", -1, 3, 0, 0},
      {"Rover1041.dat", -1, 3, 0, 0},
      {"Rover3865.dat", -1, 3, 0, 0},
      {"Rover4144.dat", -1, 3, 0, 0},
      {"Rover4396.dat", -1, 3, 0, 0},
      {"Rover4493.dat", -1, 3, 0, 0},
      {"Rover4516.dat", -1, 3, 0, 0},
      {"Rover4609.dat", -1, 3, 0, 0},
      {"Rover4613.dat", -1, 3, 0, 0},
      {"Rover4622.dat", -1, 3, 0, 0},
      {"Rover9770.dat", -1, 3, 0, 0},
      {"Rover11035.dat", -1, 3, 0, 0},
      {"Rover11211.dat", -1, 3, 0, 0},
      {"Confeti-ex13-4contact-Fc3D-SBM.dat", 4, 3, 0, 0},
      {"Confeti-ex03-Fc3D-SBM.dat", 54, 3, 0, 0},
      {"Confeti-ex13-Fc3D-SBM.dat", 107, 3, 0, 0},
      {"NESpheres_10_1.dat", 9, 3, 0, 0},
      {"NESpheres_30_1.dat", 44, 3, 0, 0},
      {"GFC3D_TwoRods1-condensed.dat", 3, 3, 0, 0},
      {"Capsules-i100-1090.dat", 276, 3, 0, 0},
      {"Capsules-i100-889.dat", 276, 3, 0, 0},
      {"Capsules-i101-404.dat", 225, 3, 0, 0},
      {"Capsules-i103-990.dat", 275, 3, 0, 0},
      {"Capsules-i122-1617.dat", 296, 3, 0, 0},
      {"BoxesStack1-i100000-32.hdf5.dat", 52, 3, 0, 0},
      {"KaplasTower-i1061-4.hdf5.dat", 570, 3, 0, 0},
      {"OneObject-i1028-138.hdf5.dat", 23, 3, 0, 0},
      {"OneObject-i100000-316.hdf5.dat", 25, 3, 0, 0},
      {"OneObject-i100000-499.hdf5.dat", 24, 3, 0, 0},
      {"RockPile_tob1.dat", 463, 3, 0, 0},
      {"FC2D_SliderCrankLagrangian00000.dat", 2, 2, 0, 0},
      {"FC2D_SliderCrankLagrangian00001.dat", 2, 2, 0, 0},
      {"FrictionContactProblem00031.dat", 11, 2, 0, 0},
      {"FrictionContactProblem00071.dat", 89, 2, 0, 0},
      {"FrictionContactProblem00237.dat", 376, 2, 0, 0},
      {"FrictionContactProblem00727.dat", 367, 2, 0, 0},
      {"FrictionContactProblem00374.dat", 28, 2, 0, 0},
      {"FrictionContactProblem00394.dat", 6, 2, 0, 0},
      {"fc2d_granularflowonwall_00667_00000.dat", 667, 2, 0, 0},
      {"fc2d_granularflowonwall_02020_00213.dat", 2020, 2, 0, 0},
      {"GFC3D_Example00.dat", 1, 3, 1, 1},
      {"GFC3D_Example00_badly_scaled.dat", 1, 3, 1, 1},
      {"GFC3D_Example0.dat", 1, 3, 1, 1},
      {"GFC3D_Example0_SBM.dat", 1, 3, 1, 1},
      {"GFC3D_Example1.dat", 1, 3, 1, 1},
      {"GFC3D_OneContact.dat", 1, 3, 1, 1},
      {"GFC3D_TwoRods1.dat", 3, 3, 1, 1},
      {"gfc2d_granularflowonwall_00000_00117.dat", 0, 2, 1, 1},
      {"gfc2d_granularflowonwall_00069_00350.dat", 69, 2, 1, 1},
      {"gfc2d_granularflowonwall_00230_00206.dat", 230, 2, 1, 1},
  };
  int parsed = 0, n = (int)(sizeof inv / sizeof inv[0]);
  for (int f = 0; f < n; f++) {
    char p[1024];
    peerPath(p, sizeof p, dir, "fc-dat", inv[f].name);
    parsed += checkFcFile(p, &inv[f], cd_fcFileRead) == 0;
  }
  printf("    fc-dat: %d of %d files parsed\n", parsed, n);
}

CD_TEST(everyFclibFileParsesWithConsistentSizes) {
  PEER_OR_SKIP(dir);
  static const cdFcInv inv[] = {
      {"Capsules-i125-1213.hdf5", 286, 3, 0, 0},
      {"LMGC_100_PR_PerioBox-i00361-60-03000.hdf5", 60, 3, 0, 0},
      {"local_problem_test.hdf5", 48, 3, 0, 0},
      {"Box_Stacks-i0122-82-5.hdf5", 82, 3, 1, 1},
      {"Spheres-i099-356-679.hdf5", 356, 3, 1, 1},
      {"spheres-in-a-box-98-i10000-256-10.hdf5", 256, 3, 1, 1},
      {"CubeH8.hdf5", 1, 3, 1, 1},
      {"LMGC_GlobalFrictionContactProblem00046.hdf5", 9, 3, 1, 1},
      {"LMGC_GFC3D-i00001-1-00000.hdf5", 1, 3, 1, 1},
      {"LMGC_GFC3D-i00501-4-00000.hdf5", 4, 3, 1, 1},
  };
  int parsed = 0, n = (int)(sizeof inv / sizeof inv[0]);
  for (int f = 0; f < n; f++) {
    char p[1024];
    peerPath(p, sizeof p, dir, "fclib", inv[f].name);
    parsed += checkFcFile(p, &inv[f], cd_fclibFileRead) == 0;
  }
  printf("    fclib: %d of %d local/global files parsed; Chute-ndof-768-nc-4-3.hdf5 (rolling) is out of scope\n",
         parsed, n);
}

CD_TEST(rollingFclibFileIsRejectedWithReason) {
  PEER_OR_SKIP(dir);
  char p[1024], err[512] = "";
  cdContactProblem prob;
  peerPath(p, sizeof p, dir, "fclib", "Chute-ndof-768-nc-4-3.hdf5");
  int rc = cd_fclibFileRead(p, &prob, err, sizeof err);
  CHECK(rc == CD_FILE_ERR_INPUT);
  CHECK_MSG(strstr(err, "rolling friction problem: not supported") != NULL, "message: %s", err);
  CHECK(prob.ncon == 0 && prob.G.val == NULL && prob.g == NULL);
  printf("    Chute-ndof-768-nc-4-3.hdf5 skipped: %s\n", err);
}

/* G as a dense (3 ncon x 3 ncon) row-major matrix */
static double *denseOf(const cdBlockMatrix *G) {
  size_t n = 3 * (size_t)G->nblock;
  double *A = calloc(n * n + 1, sizeof(double));
  if (!A) return NULL;
  for (int i = 0; i < G->nblock; i++)
    for (int k = G->rowptr[i]; k < G->rowptr[i + 1]; k++)
      for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) A[(3 * (size_t)i + r) * n + 3 * (size_t)G->col[k] + c] = G->val[9 * (size_t)k + 3 * r + c];
  return A;
}

/* both files read, the same problem to tol relative to the largest entry */
static void checkSameProblem(const char *dir, const char *n1, const char *n2, double tol) {
  char p1[1024], p2[1024], err[512];
  cdContactProblem a, b;
  peerPath(p1, sizeof p1, dir, "fc-dat", n1);
  peerPath(p2, sizeof p2, dir, "fc-dat", n2);
  int ra = cd_fcFileRead(p1, &a, err, sizeof err);
  CHECK_MSG(ra == 0, "%s", err);
  int rb = cd_fcFileRead(p2, &b, err, sizeof err);
  CHECK_MSG(rb == 0, "%s", err);
  if (ra == 0 && rb == 0 && a.ncon == b.ncon) {
    size_t n = 3 * (size_t)a.ncon;
    double *A = denseOf(&a.G), *B = denseOf(&b.G), amax = 0, diff = 0;
    CHECK(A && B);
    if (A && B)
      for (size_t k = 0; k < n * n; k++) {
        amax = fmax(amax, fabs(A[k]));
        diff = fmax(diff, fabs(A[k] - B[k]));
      }
    CHECK(amax > 0);
    CHECK_MSG(diff <= tol * amax, "%s vs %s: G differs by %.3g (max %.3g)", n1, n2, diff, amax);
    for (size_t k = 0; k < n; k++) CHECK_NEAR(a.g[k], b.g[k], tol * (1 + fabs(a.g[k])));
    for (int i = 0; i < a.ncon; i++) CHECK(a.mu[i] == b.mu[i]);
    free(A);
    free(B);
  } else {
    CHECK(ra != 0 || rb != 0 || a.ncon == b.ncon);
  }
  cd_contactProblemFree(&a);
  cd_contactProblemFree(&b);
}

CD_TEST(fc3dExample1DenseAndSbmGiveTheSameProblem) {
  PEER_OR_SKIP(dir);
  /* both storages print %32.24e, full double precision */
  checkSameProblem(dir, "FC3D_Example1.dat", "FC3D_Example1_SBM.dat", 1e-15);
}

CD_TEST(gfc3dExample0DenseAndSbmCondenseToTheSameProblem) {
  PEER_OR_SKIP(dir);
  checkSameProblem(dir, "GFC3D_Example0.dat", "GFC3D_Example0_SBM.dat", 1e-14);
}

CD_TEST(globalDatFilesCondenseToTheirHandComputedLocalForm) {
  PEER_OR_SKIP(dir);
  /* Example00: M = I, H = I, f = -1, w = 0, so W = I and q = -1. Read as a local file it
   * would give q = (0, 3, 3) (the H header), so this also checks the content rule.
   * badly_scaled: M = diag(1e-4, 1, 1e4): W = M^-1, q = M^-1 f.
   * Example0: M = I (9), H = [I; 0; -I], f = (-3,-3,-3, -1,1,3, -1,1,3), w = 0:
   * W = 2 I, q = f[0..2] - f[6..8] = (-2, -4, -6). */
  static const struct {
    const char *name;
    double Wd[3], q[3];
  } cases[] = {{"GFC3D_Example00.dat", {1, 1, 1}, {-1, -1, -1}},
               {"GFC3D_Example00_badly_scaled.dat", {1e4, 1, 1e-4}, {-1e4, -1, -1e-4}},
               {"GFC3D_Example0.dat", {2, 2, 2}, {-2, -4, -6}}};
  for (int c = 0; c < 3; c++) {
    char p[1024], err[512];
    cdContactProblem prob;
    peerPath(p, sizeof p, dir, "fc-dat", cases[c].name);
    int rc = cd_fcFileRead(p, &prob, err, sizeof err);
    CHECK_MSG(rc == 0, "%s", err);
    if (rc) continue;
    CHECK(prob.ncon == 1 && prob.G.nnzb == 1);
    if (prob.ncon == 1 && prob.G.nnzb == 1) {
      const double *B = prob.G.val;
      for (int r = 0; r < 3; r++)
        for (int k = 0; k < 3; k++)
          CHECK_NEAR(B[3 * r + k], r == k ? cases[c].Wd[r] : 0.0, 1e-15 * cases[c].Wd[r] + 1e-300);
      for (int r = 0; r < 3; r++) CHECK_NEAR(prob.g[r], cases[c].q[r], 1e-15 * fabs(cases[c].q[r]));
      CHECK_NEAR(prob.mu[0], 0.1, 1e-16);
    }
    cd_contactProblemFree(&prob);
  }
}

/* ---- the condensation against a dense computation done here ---- */

/* n values of dataset name (ints or doubles) in group g, or NULL */
static void *h5All(hid_t g, const char *name, hid_t type, size_t elsize, size_t *n) {
  hid_t ds = H5Dopen2(g, name, H5P_DEFAULT);
  if (ds < 0) return NULL;
  hid_t sp = H5Dget_space(ds);
  hssize_t np = H5Sget_simple_extent_npoints(sp);
  void *a = np >= 0 ? calloc((size_t)np + 1, elsize) : NULL;
  if (a && H5Dread(ds, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, a) < 0) {
    free(a);
    a = NULL;
  }
  H5Sclose(sp);
  H5Dclose(ds);
  *n = a ? (size_t)np : 0;
  return a;
}

/* a triplet (nz >= 0) FCLIB matrix group as a dense column-major (m x n) array */
static double *h5DenseTriplet(hid_t g, const char *name, int *m, int *n) {
  char b[64];
  size_t k1, k2, k3;
  snprintf(b, sizeof b, "%s/m", name);
  int *pm = h5All(g, b, H5T_NATIVE_INT, sizeof(int), &k1);
  snprintf(b, sizeof b, "%s/n", name);
  int *pn = h5All(g, b, H5T_NATIVE_INT, sizeof(int), &k2);
  snprintf(b, sizeof b, "%s/nz", name);
  int *pz = h5All(g, b, H5T_NATIVE_INT, sizeof(int), &k3);
  double *A = NULL;
  if (pm && pn && pz && *pz >= 0) {
    *m = *pm;
    *n = *pn;
    snprintf(b, sizeof b, "%s/i", name);
    int *ii = h5All(g, b, H5T_NATIVE_INT, sizeof(int), &k1);
    snprintf(b, sizeof b, "%s/p", name);
    int *pp = h5All(g, b, H5T_NATIVE_INT, sizeof(int), &k2);
    snprintf(b, sizeof b, "%s/x", name);
    double *xx = h5All(g, b, H5T_NATIVE_DOUBLE, sizeof(double), &k3);
    A = calloc((size_t)*m * (size_t)*n + 1, sizeof(double));
    if (ii && pp && xx && A)
      for (int k = 0; k < *pz; k++) A[(size_t)ii[k] + (size_t)*m * (size_t)pp[k]] += xx[k]; /* i row, p column */
    free(ii);
    free(pp);
    free(xx);
  }
  free(pm);
  free(pn);
  free(pz);
  return A;
}

/* solves A X = B (A n x n, B n x k, column-major; both overwritten, X in B) by Gaussian
 * elimination with partial pivoting: a method independent of the reader's Cholesky */
static void denseSolve(double *A, double *B, int n, int k) {
  for (int c = 0; c < n; c++) {
    int piv = c;
    for (int r = c + 1; r < n; r++)
      if (fabs(A[r + n * c]) > fabs(A[piv + n * c])) piv = r;
    for (int j = 0; j < n; j++) {
      double t = A[c + n * j];
      A[c + n * j] = A[piv + n * j];
      A[piv + n * j] = t;
    }
    for (int j = 0; j < k; j++) {
      double t = B[c + n * j];
      B[c + n * j] = B[piv + n * j];
      B[piv + n * j] = t;
    }
    for (int r = c + 1; r < n; r++) {
      double l = A[r + n * c] / A[c + n * c];
      for (int j = c; j < n; j++) A[r + n * j] -= l * A[c + n * j];
      for (int j = 0; j < k; j++) B[r + n * j] -= l * B[c + n * j];
    }
  }
  for (int j = 0; j < k; j++)
    for (int r = n - 1; r >= 0; r--) {
      double s = B[r + n * j];
      for (int c = r + 1; c < n; c++) s -= A[r + n * c] * B[c + n * j];
      B[r + n * j] = s / A[r + n * r];
    }
}

CD_TEST(globalFemProblemCondensesToDenseHtMinvH) {
  PEER_OR_SKIP(dir);
  /* LMGC_GFC3D-i00001-1-00000: 48 dof, 1 contact, a full FEM block M in triplet form */
  char p[1024], err[512];
  peerPath(p, sizeof p, dir, "fclib", "LMGC_GFC3D-i00001-1-00000.hdf5");
  cdContactProblem prob;
  int rc = cd_fclibFileRead(p, &prob, err, sizeof err);
  CHECK_MSG(rc == 0, "%s", err);
  if (rc) return;
  hid_t f = H5Fopen(p, H5F_ACC_RDONLY, H5P_DEFAULT);
  CHECK(f >= 0);
  if (f < 0) {
    cd_contactProblemFree(&prob);
    return;
  }
  hid_t g = H5Gopen2(f, "fclib_global", H5P_DEFAULT);
  int nd = 0, nd2 = 0, hr = 0, m = 0;
  double *M = h5DenseTriplet(g, "M", &nd, &nd2), *H = h5DenseTriplet(g, "H", &hr, &m);
  size_t nf = 0, nw = 0;
  double *fv = h5All(g, "vectors/f", H5T_NATIVE_DOUBLE, sizeof(double), &nf);
  double *wv = h5All(g, "vectors/w", H5T_NATIVE_DOUBLE, sizeof(double), &nw);
  H5Gclose(g);
  H5Fclose(f);
  CHECK(M && H && fv && wv && nd == 48 && nd2 == 48 && hr == 48 && m == 3 && nf == 48 && nw == 3);
  if (M && H && fv && wv && nd == 48 && hr == 48 && m == 3 && nf == 48 && nw == 3 && prob.ncon == 1) {
    /* X = M^-1 [H f] */
    double *X = calloc((size_t)nd * 4, sizeof(double));
    if (X) {
      memcpy(X, H, sizeof(double) * (size_t)nd * 3);
      memcpy(X + 3 * nd, fv, sizeof(double) * (size_t)nd);
      denseSolve(M, X, nd, 4);
      double W[9], q[3], wmax = 0, wdiff = 0, qmax = 0, qdiff = 0;
      for (int r = 0; r < 3; r++) {
        q[r] = wv[r];
        for (int k = 0; k < nd; k++) q[r] += H[k + nd * r] * X[k + nd * 3];
        for (int c = 0; c < 3; c++) {
          W[3 * r + c] = 0;
          for (int k = 0; k < nd; k++) W[3 * r + c] += H[k + nd * r] * X[k + nd * c];
        }
      }
      const double *B = &prob.G.val[9 * (size_t)prob.G.diag[0]];
      for (int e = 0; e < 9; e++) {
        wmax = fmax(wmax, fabs(W[e]));
        wdiff = fmax(wdiff, fabs(W[e] - B[e]));
      }
      for (int r = 0; r < 3; r++) {
        qmax = fmax(qmax, fabs(q[r]));
        qdiff = fmax(qdiff, fabs(q[r] - prob.g[r]));
      }
      printf("    LMGC_GFC3D-i00001: |W - W_dense| / |W| = %.2g, |q - q_dense| / |q| = %.2g\n", wdiff / wmax,
             qdiff / qmax);
      CHECK(wmax > 0 && qmax > 0);
      /* two backward-stable solves of the same system: they agree to cond(M) eps; M here
       * is a well-scaled FEM block, 1e-9 leaves cond(M) up to 1e6 */
      CHECK_MSG(wdiff <= 1e-9 * wmax, "W differs by %.3g (max %.3g)", wdiff, wmax);
      CHECK_MSG(qdiff <= 1e-9 * qmax, "q differs by %.3g (max %.3g)", qdiff, qmax);
      free(X);
    }
  }
  free(M);
  free(H);
  free(fv);
  free(wv);
  cd_contactProblemFree(&prob);
}

/* ---- bad input ---- */

static int writeFile(const char *path, const void *data, size_t n) {
  FILE *fp = fopen(path, "wb");
  if (!fp) return -1;
  size_t w = fwrite(data, 1, n, fp);
  return fclose(fp) == 0 && w == n ? 0 : -1;
}

/* the first frac of file src written to dst */
static int writeTruncated(const char *src, const char *dst, double frac) {
  FILE *fp = fopen(src, "rb");
  if (!fp) return -1;
  fseek(fp, 0, SEEK_END);
  long n = ftell(fp);
  fseek(fp, 0, SEEK_SET);
  size_t keep = (size_t)((double)n * frac);
  char *buf = malloc(keep + 1);
  int rc = buf && fread(buf, 1, keep, fp) == keep ? writeFile(dst, buf, keep) : -1;
  fclose(fp);
  free(buf);
  return rc;
}

CD_TEST(missingAndTruncatedFilesGiveAnErrorMessage) {
  const char *missing = "/tmp/cdsim-peer-no-such-file.dat";
  char err[512];
  cdLcpFile lcp;
  cdContactProblem prob;
  err[0] = 0;
  CHECK(cd_lcpFileRead(missing, &lcp, err, sizeof err) != 0 && strstr(err, missing));
  err[0] = 0;
  CHECK(cd_fcFileRead(missing, &prob, err, sizeof err) != 0 && strstr(err, missing));
  err[0] = 0;
  CHECK(cd_fclibFileRead(missing, &prob, err, sizeof err) != 0 && strstr(err, missing));
  PEER_OR_SKIP(dir);
  static const struct {
    const char *sub, *name;
    int kind; /* 0 lcp, 1 fc-dat, 2 fclib */
  } cases[] = {{"lcp", "lcp_ortiz_block.dat", 0},         {"fc-dat", "FC3D_Example1_SBM.dat", 1},
               {"fc-dat", "GFC3D_OneContact.dat", 1},     {"fc-dat", "fc2d_granularflowonwall_00667_00000.dat", 1},
               {"fc-dat", "gfc2d_granularflowonwall_00069_00350.dat", 1},
               {"fclib", "LMGC_GFC3D-i00001-1-00000.hdf5", 2}, {"fclib", "Capsules-i125-1213.hdf5", 2}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    char src[1024], dst[256];
    peerPath(src, sizeof src, dir, cases[c].sub, cases[c].name);
    snprintf(dst, sizeof dst, "/tmp/cdsim-peer-truncated-%d-%s", (int)getpid(), cases[c].name);
    /* 0.9 still removes whole trailing values in these files (a cut inside the last number
     * leaves a shorter valid number, which no reader can tell from the real one) */
    const double fracs[2] = {0.5, 0.9};
    for (int k = 0; k < 2; k++) {
      CHECK(writeTruncated(src, dst, fracs[k]) == 0);
      err[0] = 0;
      long live = cd_allocLive();
      int rc = cases[c].kind == 0   ? cd_lcpFileRead(dst, &lcp, err, sizeof err)
               : cases[c].kind == 1 ? cd_fcFileRead(dst, &prob, err, sizeof err)
                                    : cd_fclibFileRead(dst, &prob, err, sizeof err);
      CHECK_MSG(rc != 0, "%s cut to %.0f%% was accepted", cases[c].name, 100 * fracs[k]);
      if (rc == 0) {
        if (cases[c].kind == 0) cd_lcpFileFree(&lcp);
        else cd_contactProblemFree(&prob);
      }
      CHECK_MSG(strstr(err, dst) != NULL, "message names the file: '%s'", err);
      CHECK_MSG(cd_allocLive() == live, "%s: %ld blocks leaked", cases[c].name, cd_allocLive() - live);
      if (k == 0) printf("    %s\n", err);
    }
    remove(dst);
  }
}

/* writes a global fc-dat file with a dense 3x3 M, H = I, f = -1, w = 0 and reads it */
static int readGlobalWithMass(const double M[9], char *err, size_t errlen) {
  char path[256], text[2048];
  snprintf(path, sizeof path, "/tmp/cdsim-peer-mass-%d.dat", (int)getpid());
  int n = snprintf(text, sizeof text,
                   "3\n1\n0\n3\n3\n3 3\n%g %g %g\n%g %g %g\n%g %g %g\n0\n3\n3\n3 3\n1 0 0\n0 1 0\n0 0 1\n"
                   "-1 -1 -1\n0 0 0\n0.5\n",
                   M[0], M[1], M[2], M[3], M[4], M[5], M[6], M[7], M[8]);
  if (writeFile(path, text, (size_t)n)) return -100;
  cdContactProblem prob;
  int rc = cd_fcFileRead(path, &prob, err, errlen);
  if (rc == 0) cd_contactProblemFree(&prob);
  remove(path);
  return rc;
}

CD_TEST(globalProblemWithBadMassMatrixIsReported) {
  char err[512];
  const double spd[9] = {2, 1, 0, 1, 2, 0, 0, 0, 1};
  const double indefinite[9] = {1, 0, 0, 0, -1, 0, 0, 0, 1};
  const double unsymmetric[9] = {2, 1, 0, 0, 2, 0, 0, 0, 1};
  CHECK_MSG(readGlobalWithMass(spd, err, sizeof err) == 0, "%s", err);
  err[0] = 0;
  CHECK(readGlobalWithMass(indefinite, err, sizeof err) == CD_FILE_ERR_INPUT);
  CHECK_MSG(strstr(err, "not positive definite") != NULL, "message: %s", err);
  err[0] = 0;
  CHECK(readGlobalWithMass(unsymmetric, err, sizeof err) == CD_FILE_ERR_INPUT);
  CHECK_MSG(strstr(err, "not symmetric") != NULL, "message: %s", err);
}

/* ---- memory ---- */

/* every allocation of a read failing in turn gives CD_ERR_NOMEM and leaks nothing */
CD_TEST(readersSurviveEveryAllocationFailure) {
  PEER_OR_SKIP(dir);
  static const struct {
    const char *sub, *name;
    int kind;
  } cases[] = {{"lcp", "lcp_ortiz_block.dat", 0},
               {"fc-dat", "FrictionContactProblem00031.dat", 1},
               {"fc-dat", "GFC3D_TwoRods1.dat", 1},
               {"fc-dat", "gfc2d_granularflowonwall_00069_00350.dat", 1},
               {"fclib", "local_problem_test.hdf5", 2},
               {"fclib", "LMGC_GFC3D-i00501-4-00000.hdf5", 2}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    char p[1024], err[512];
    peerPath(p, sizeof p, dir, cases[c].sub, cases[c].name);
    long before = cd_allocCount(), live = cd_allocLive();
    cdLcpFile lcp;
    cdContactProblem prob;
    int rc = cases[c].kind == 0   ? cd_lcpFileRead(p, &lcp, err, sizeof err)
             : cases[c].kind == 1 ? cd_fcFileRead(p, &prob, err, sizeof err)
                                  : cd_fclibFileRead(p, &prob, err, sizeof err);
    CHECK_MSG(rc == 0, "%s", err);
    if (rc) continue;
    if (cases[c].kind == 0) cd_lcpFileFree(&lcp);
    else cd_contactProblemFree(&prob);
    CHECK_MSG(cd_allocLive() == live, "%s leaks on success", cases[c].name);
    long nalloc = cd_allocCount() - before;
    int bad = 0;
    for (long k = 1; k <= nalloc && !bad; k++) {
      cd_allocFailAt(k);
      rc = cases[c].kind == 0   ? cd_lcpFileRead(p, &lcp, err, sizeof err)
           : cases[c].kind == 1 ? cd_fcFileRead(p, &prob, err, sizeof err)
                                : cd_fclibFileRead(p, &prob, err, sizeof err);
      cd_allocFailAt(0);
      if (rc == 0) {
        if (cases[c].kind == 0) cd_lcpFileFree(&lcp);
        else cd_contactProblemFree(&prob);
      }
      /* CHOLMOD recovers from some failed allocations (it retries with less workspace):
       * then the read succeeds; any other outcome must be CD_ERR_NOMEM */
      if ((rc != 0 && rc != CD_ERR_NOMEM) || cd_allocLive() != live) bad = 1;
      CHECK_MSG(rc == 0 || rc == CD_ERR_NOMEM, "%s: allocation %ld failing gives rc %d: %s", cases[c].name, k, rc, err);
      CHECK_MSG(cd_allocLive() == live, "%s: allocation %ld failing leaks", cases[c].name, k);
    }
    printf("    %s: each of %ld allocations failed in turn\n", cases[c].name, nalloc);
    CHECK(nalloc > 0);
  }
}
