/* test_peer_data.c: the peer-data readers (tests/peer_data.h) against the facts of
 * peer-data/README.md: storage layouts, the per-file inventories, the block contract of
 * problem.h and the global -> local condensation. */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
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
  cdPeerLcp a, b;
  peerPath(p1, sizeof p1, dir, "lcp", "lcp_ortiz.dat");
  peerPath(p2, sizeof p2, dir, "lcp", "lcp_ortiz_block.dat");
  int ra = cd_peerLcpRead(p1, &a, err, sizeof err);
  CHECK_MSG(ra == 0, "%s", err);
  int rb = cd_peerLcpRead(p2, &b, err, sizeof err);
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
  cd_peerLcpFree(&a);
  cd_peerLcpFree(&b);
}

CD_TEST(lcpCps2DenseStorageIsColumnMajor) {
  PEER_OR_SKIP(dir);
  char p[1024], err[512];
  cdPeerLcp a;
  peerPath(p, sizeof p, dir, "lcp", "lcp_CPS_2.dat");
  int rc = cd_peerLcpRead(p, &a, err, sizeof err);
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
  cd_peerLcpFree(&a);
}

CD_TEST(lcpTrivialIsDiagonalOneToNineWithMinusOne) {
  PEER_OR_SKIP(dir);
  const char *names[2] = {"lcp_trivial.dat", "lcp_trivial_block.dat"};
  for (int f = 0; f < 2; f++) {
    char p[1024], err[512];
    cdPeerLcp a;
    peerPath(p, sizeof p, dir, "lcp", names[f]);
    int rc = cd_peerLcpRead(p, &a, err, sizeof err);
    CHECK_MSG(rc == 0, "%s", err);
    if (rc) continue;
    CHECK(a.n == 9);
    for (int i = 0; i < 9; i++) {
      CHECK(a.q[i] == -1);
      for (int j = 0; j < 9; j++) CHECK_MSG(a.M[i + 9 * j] == (i == j ? i + 1 : 0), "%s M(%d,%d)", names[f], i, j);
    }
    cd_peerLcpFree(&a);
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
    cdPeerLcp a;
    peerPath(p, sizeof p, dir, "lcp", inv[f].name);
    int rc = cd_peerLcpRead(p, &a, err, sizeof err);
    CHECK_MSG(rc == 0, "%s", err);
    if (rc) continue;
    CHECK_MSG(a.n == inv[f].n, "%s: n = %d, README says %d", inv[f].name, a.n, inv[f].n);
    int finite = 1;
    for (int k = 0; k < a.n * a.n; k++) finite &= isfinite(a.M[k]);
    for (int k = 0; k < a.n; k++) finite &= isfinite(a.q[k]);
    CHECK_MSG(finite, "%s: non-finite entries", inv[f].name);
    parsed++;
    cd_peerLcpFree(&a);
  }
  printf("    lcp: %d of %zu files parsed\n", parsed, sizeof inv / sizeof inv[0]);
  /* murty: upper triangular with 1 on the diagonal and 2 above it, as read column-major */
  char p[1024], err[512];
  cdPeerLcp a;
  peerPath(p, sizeof p, dir, "lcp", "lcp_exp_murty.dat");
  if (cd_peerLcpRead(p, &a, err, sizeof err) == 0) {
    for (int i = 0; i < 6; i++)
      for (int j = 0; j < 6; j++) CHECK(a.M[i + 6 * j] == (i == j ? 1 : i < j ? 2 : 0));
    cd_peerLcpFree(&a);
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
    parsed += checkFcFile(p, &inv[f], cd_peerFcRead) == 0;
  }
  printf("    fc-dat: %d of %d files parsed\n", parsed, n);
}
