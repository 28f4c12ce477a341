/* test_lcp_peer.c: the Lemke solver on the Siconos LCP collection (the .dat files of peer-data/lcp).
 *
 * Every file must be solved to ||min(z, Mz + q)||_inf <= 1e-10 max(1, ||q||_inf), except
 * where peer-data/README.md (section 3.1) says why not; those outcomes are asserted too.
 * Where the README gives the unique solution, z is compared with it. One line a problem is
 * printed: size, status, pivots, residual.
 */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "lcp_lemke.h"
#include "peer_data.h"
#include "test.h"

typedef enum { EXPECT_SOLVE = 0, EXPECT_RAY, EXPECT_SOLVE_OR_RAY } cdExpect;

typedef struct {
  const char *file;
  cdExpect expect;
  const char *why;  /* why a failure is acceptable or expected */
  int nsol;         /* known unique solution, from the README: first nsol entries of sol */
  double sol[9];
  int pivots;       /* known pivot count (README, measured with Siconos Lemke), or 0 */
} cdPeerExpect;

static const cdPeerExpect g_expect[] = {
    {"lcp_trivial.dat", EXPECT_SOLVE, NULL, 9, {1, 1. / 2, 1. / 3, 1. / 4, 1. / 5, 1. / 6, 1. / 7, 1. / 8, 1. / 9}, 0},
    {"lcp_trivial_block.dat", EXPECT_SOLVE, NULL, 9, {1, 1. / 2, 1. / 3, 1. / 4, 1. / 5, 1. / 6, 1. / 7, 1. / 8, 1. / 9}, 0},
    {"lcp_deudeu.dat", EXPECT_SOLVE, NULL, 2, {4. / 3, 7. / 3}, 0},
    {"lcp_deudeu_block.dat", EXPECT_SOLVE, NULL, 2, {4. / 3, 7. / 3}, 0},
    {"lcp_ortiz.dat", EXPECT_SOLVE, NULL, 4, {2. / 3, 0, 1. / 3, 0}, 0},
    {"lcp_ortiz_block.dat", EXPECT_SOLVE, NULL, 4, {2. / 3, 0, 1. / 3, 0}, 0},
    {"lcp_exp_murty.dat", EXPECT_SOLVE, NULL, 6, {0, 0, 0, 0, 0, 1}, 0},
    {"lcp_exp_murty2.dat", EXPECT_SOLVE, NULL, 6, {0, 0, 0, 0, 0, 64}, 63},
    {"lcp_CPS_4.dat", EXPECT_SOLVE, NULL, 4, {2, 2, 2, 92}, 0},
    {"lcp_CPS_4bis.dat", EXPECT_SOLVE, NULL, 4, {3, 3, 0, 83}, 0},
    {"lcp_mmc.dat", EXPECT_SOLVE, NULL, 0, {0}, 22},
    {"lcp_tobenna.dat", EXPECT_SOLVE, NULL, 0, {0}, 126},
    {"lcp_Pang_isolated_sol.dat", EXPECT_SOLVE, NULL, 3, {1, 0, 0}, 0},
    {"lcp_Pang_isolated_sol_perturbed.dat", EXPECT_RAY,
     "no solution exists (README: enumerating all 2^3 bases finds none), so Lemke must end on a ray", 0, {0}, 0},
    {"lcp_CPS_3.dat", EXPECT_SOLVE_OR_RAY,
     "bimatrix game (CPS Example 4.4.23): M is not copositive-plus, so ray termination does not prove "
     "infeasibility and Lemke with e = 1 may end on a ray although solutions exist (Siconos' Lemke does)",
     0, {0}, 0},
};

static const cdPeerExpect *expectationOf(const char *file) {
  for (size_t k = 0; k < sizeof g_expect / sizeof g_expect[0]; k++)
    if (!strcmp(g_expect[k].file, file)) return &g_expect[k];
  return NULL;
}

static int byName(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static const char *statusName(int s) {
  switch (s) {
  case CD_LEMKE_SOLVED: return "solved";
  case CD_LEMKE_RAY: return "ray";
  case CD_LEMKE_PIVOT_LIMIT: return "pivot-limit";
  case CD_LEMKE_INACCURATE: return "inaccurate";
  default: return "no-memory";
  }
}

CD_TEST(lemkeSolvesTheSiconosLcpCollection) {
  const char *dir = cd_peerDir();
  if (!dir) CD_SKIP("peer data folder absent (CDSIM_PEER_DATA unset or not a directory)");
  char sub[1024];
  snprintf(sub, sizeof sub, "%s/lcp", dir);
  DIR *d = opendir(sub);
  if (!d) CD_SKIP("peer data has no lcp/ folder");
  char *names[256];
  int nfile = 0;
  struct dirent *e;
  while ((e = readdir(d)) && nfile < 256) {
    size_t len = strlen(e->d_name);
    if (len > 4 && !strcmp(e->d_name + len - 4, ".dat")) names[nfile++] = strdup(e->d_name);
  }
  closedir(d);
  qsort(names, (size_t)nfile, sizeof *names, byName);
  CHECK_MSG(nfile >= 20, "expected the 20 files of the README inventory, found %d", nfile);

  int solved = 0;
  for (int f = 0; f < nfile; f++) {
    char path[2048], err[512];
    snprintf(path, sizeof path, "%s/%s", sub, names[f]);
    cdLcpFile lcp;
    int rc = cd_lcpFileRead(path, &lcp, err, sizeof err);
    CHECK_MSG(rc == 0, "%s", err);
    if (rc) continue;
    const cdPeerExpect *x = expectationOf(names[f]);
    double *z = malloc((size_t)lcp.n * sizeof *z);
    CHECK(z != NULL);
    if (!z) break;
    cdLemkeStats st;
    int s = cd_lemkeSolve(lcp.n, lcp.M, lcp.q, z, NULL, &st);
    double qn = 1.0;
    for (int i = 0; i < lcp.n; i++) qn = fmax(qn, fabs(lcp.q[i]));
    double scaled = st.residual / qn;
    printf("    %-38s n %3d  %-11s pivots %4d  residual %.2e (scaled %.2e)%s\n", names[f], lcp.n, statusName(s),
           st.pivots, st.residual, scaled, st.refined ? "  refined" : "");
    cdExpect want = x ? x->expect : EXPECT_SOLVE;
    if (want == EXPECT_RAY) {
      CHECK_MSG(s == CD_LEMKE_RAY, "%s: status %s, expected ray termination: %s", names[f], statusName(s), x->why);
    } else if (want == EXPECT_SOLVE_OR_RAY) {
      CHECK_MSG(s == CD_LEMKE_RAY || (s == CD_LEMKE_SOLVED && scaled <= 1e-10),
                "%s: status %s residual %.3g; accepted outcomes are a solution or a ray: %s", names[f], statusName(s),
                st.residual, x->why);
      if (s == CD_LEMKE_RAY) printf("    %-38s ray termination accepted: %s\n", "", x->why);
    } else {
      CHECK_MSG(s == CD_LEMKE_SOLVED && scaled <= 1e-10, "%s: status %s, scaled residual %.3g", names[f],
                statusName(s), scaled);
      solved += s == CD_LEMKE_SOLVED;
    }
    if (x && x->nsol) {
      CHECK(x->nsol == lcp.n);
      for (int i = 0; i < x->nsol && i < lcp.n; i++)
        CHECK_MSG(fabs(z[i] - x->sol[i]) <= 1e-9 * qn, "%s: z[%d] = %.17g, README solution %.17g", names[f], i,
                  z[i], x->sol[i]);
    }
    if (x && x->pivots) CHECK_MSG(st.pivots == x->pivots, "%s: %d pivots, README %d", names[f], st.pivots, x->pivots);
    free(z);
    cd_lcpFileFree(&lcp);
  }
  CHECK(solved >= 18);
  for (int f = 0; f < nfile; f++) free(names[f]);
}
