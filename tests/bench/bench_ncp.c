/* bench_ncp.c: the exact Coulomb solvers (--model ncp) on the peer collections and, side by
 * side, Siconos's fc3d NSGS on the same problems.
 *
 * ncpPeer: every ncp solver on every readable problem with contacts of ../shared/peer-data
 * (fc-dat, fclib; found through $CDSIM_PEER_DATA: 64 problems) from zero impulses, with the backend's limits: ncp-peer.csv
 * (one row a problem and solver: contacts, iterations, residual, converged, seconds) and
 * ncp-peer.txt (per solver how many problems reach the residual 1e-8 of ncp.h, the FCLIB
 * paper's figure of merit, and which it missed).
 *
 * ncpSiconos: the problems of the bundled scenes (each run with `cdsim --model ncp
 * --dump-problems`, the FCLIB files read back) and the peer collections, each solved from zero
 * by cdsim's default (nsgs+fp-apgd), cdsim's nsgs, and Siconos 4.4's fc3d NSGS (Debian
 * libsiconos-numerics-dev: W as a sparse-block matrix of 3x3 blocks, its default local solver,
 * at most 2000 sweeps like cdsim's nsgs). Every answer is measured by the same residual,
 * ncp.h's, computed here from the impulses each returned. Siconos stops on its own error (the
 * natural map relative to the sizes of q, r and u), which can meet 1e-8 where ncp.h's residual
 * is 1.2e-8: when it converged by its measure and not by ours, it runs again with its
 * tolerance ten times smaller (down to 1e-12), and the time reported is that of the run whose
 * answer is measured.
 * siconos.csv has a row a problem and solver; siconos.txt a table a problem set (problems,
 * solved to 1e-8, median and total time, worst residual). Siconos is a peer, not a
 * dependency: it is compiled in when its headers are installed (the Makefile tests for
 * /usr/include/siconos/numerics/fc3d_Solvers.h); without it the benchmark says so and writes
 * nothing. To install it: apt-get install libsiconos-numerics-dev, then make bench.
 * ncpBundledScenes: every ncp solver over whole runs of the bundled scenes: ncp-scenes.csv and
 * ncp-scenes.txt (README's table of the ncp solvers on the bundled scenes).
 * Benchmarks assert nothing.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "backends.h"
#include "bench.h"
#include "ncp.h"
#include "peer_data.h"

#ifdef CD_HAVE_SICONOS
#include <FrictionContactProblem.h>
#include <Friction_cst.h>
#include <NonSmoothDrivers.h>
#include <NumericsMatrix.h>
#include <SolverOptions.h>
#include <SparseBlockMatrix.h>
#endif

static const char *peerDir(void) {
  const char *d = getenv("CDSIM_PEER_DATA");
  return d && *d ? d : "../shared/peer-data";
}

/* one ncp solver (a backend state) on p from zero: fills residual (ncp.h's, recomputed from
 * the impulses), iterations, seconds; 0 ok */
static int solveCdsim(void *state, cdContactProblem *p, double *res, int *iters, double *secs) {
  memset(p->lambda, 0, 3 * (size_t)p->ncon * sizeof(double));
  cdSolveStats st;
  memset(&st, 0, sizeof st);
  double t0 = cd_benchNow();
  int rc = p->ncon > 0 ? cd_backendNcp.solve(state, p, NULL, &st) : CD_OK;
  *secs = cd_benchNow() - t0;
  double *w = cd_malloc(3 * (size_t)(p->ncon > 0 ? p->ncon : 1) * sizeof(double));
  *res = w ? cd_ncpResidualOf(p, p->lambda, w, NULL) : INFINITY;
  cd_free(w);
  *iters = st.iterations;
  return rc;
}

static const char *const g_solvers[] = {"nsgs+fp-apgd", "nsgs", "fp-apgd", "fp-pgs", "fp-ipm"};
#define NSOLVER 5

CD_BENCH(ncpPeer) {
  static cdPeerFile files[256];
  int nf = cd_peerFrictionFiles(peerDir(), files, 256);
  if (nf == 0) {
    printf("  peer data absent (%s): skipped\n", peerDir());
    return;
  }
  FILE *csv = cd_benchOpen(outdir, "ncp-peer.csv"), *txt = cd_benchOpen(outdir, "ncp-peer.txt");
  if (!csv || !txt) {
    if (csv) fclose(csv);
    if (txt) fclose(txt);
    return;
  }
  fprintf(csv, "problem,contacts,solver,iterations,residual,solved,seconds\n");
  void *state[NSOLVER] = {NULL};
  for (int s = 0; s < NSOLVER; s++) {
    cdBackendOptions opt = {.solver = g_solvers[s]};
    char err[256];
    cd_backendNcp.make(NULL, &opt, &state[s], err, sizeof err);
  }
  int solved[NSOLVER] = {0}, tried = 0;
  double secs[NSOLVER] = {0};
  static char missed[NSOLVER][4096];
  for (int f = 0; f < nf; f++) {
    cdContactProblem p;
    char err[512];
    if (cd_frictionFileRead(files[f].path, &p, err, sizeof err)) continue;
    if (p.ncon == 0) { /* gfc2d_granularflowonwall_00000: no contact, nothing to solve */
      cd_contactProblemFree(&p);
      continue;
    }
    tried++;
    for (int s = 0; s < NSOLVER; s++) {
      double res, t;
      int it;
      solveCdsim(state[s], &p, &res, &it, &t);
      int ok = res <= CD_NCP_TOL;
      solved[s] += ok;
      secs[s] += t;
      if (!ok) {
        size_t l = strlen(missed[s]);
        snprintf(missed[s] + l, sizeof missed[s] - l, " %s (%.1e)", files[f].name, res);
      }
      fprintf(csv, "%s,%d,%s,%d,%.6e,%d,%.6f\n", files[f].name, p.ncon, g_solvers[s], it, res, ok, t);
    }
    fflush(csv);
    cd_contactProblemFree(&p);
  }
  for (int s = 0; s < NSOLVER; s++) {
    fprintf(txt, "%-13s %2d of %d problems to %.0e in %.2f s; missed:%s\n", g_solvers[s], solved[s], tried, CD_NCP_TOL,
            secs[s], missed[s]);
    printf("  %-13s %2d of %d problems to %.0e in %.2f s\n", g_solvers[s], solved[s], tried, CD_NCP_TOL, secs[s]);
    cd_backendNcp.free(state[s]);
  }
  fclose(csv);
  fclose(txt);
}

/* ncpBundledScenes: every ncp solver over whole runs of the bundled scenes (the 1000-sphere pile's
 * first 100 steps, with the three solvers that finish it in minutes), each a run of the program
 * with --summary: steps not converged to 1e-8, the worst step's residual, the solve time of the
 * run. One run a cell, in one batch: the times are of one machine state. */
CD_BENCH(ncpBundledScenes) {
  const char *bin = getenv("CDSIM_BIN"), *root = getenv("CDSIM_ROOT");
  if (!bin || !root) {
    printf("  skipped: CDSIM_BIN and CDSIM_ROOT are needed (make bench sets them)\n");
    return;
  }
  static const struct {
    const char *scene, *steps;
    int solvers; /* the first this many of g_solvers */
  } runs[] = {{"sliding-cube", "150", NSOLVER}, {"cube-stack", "300", NSOLVER}, {"cube-pyramid", "300", NSOLVER},
              {"sphere-pile", "200", NSOLVER}, {"pile-1000", "100", 3}};
  FILE *csv = cd_benchOpen(outdir, "ncp-scenes.csv"), *txt = cd_benchOpen(outdir, "ncp-scenes.txt");
  if (!csv || !txt) {
    if (csv) fclose(csv);
    if (txt) fclose(txt);
    return;
  }
  fprintf(csv, "scene,steps,solver,contacts_mean,nonconverged_steps,residual_max,solve_seconds\n");
  fprintf(txt, "steps not converged to 1e-8 (the worst residual when any), solve time of the run\n\n| scene (steps, contacts) |");
  for (int s = 0; s < NSOLVER; s++) fprintf(txt, " %s |", g_solvers[s]);
  fprintf(txt, "\n| --- |");
  for (int s = 0; s < NSOLVER; s++) fprintf(txt, " --- |");
  fprintf(txt, "\n");
  for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++) {
    char cells[NSOLVER][64];
    double contacts = 0.0;
    for (int s = 0; s < NSOLVER; s++) {
      snprintf(cells[s], sizeof cells[s], "—");
      if (s >= runs[r].solvers) continue;
      char cmd[12288], line[8192];
      snprintf(cmd, sizeof cmd,
               "'%s' '%s/scenes/%s.json' --model ncp --solver %s --steps %s --out '%s/ncp-scene.h5' --no-xdmf --quiet "
               "--summary",
               bin, root, runs[r].scene, g_solvers[s], runs[r].steps, outdir);
      FILE *p = popen(cmd, "r");
      int got = 0;
      while (p && fgets(line, sizeof line, p))
        if (line[0] == '{') {
          double nonconv = cd_benchJsonNumber(line, "nonconverged_steps"), res = cd_benchJsonNumber(line, "residual_max");
          double secs = cd_benchJsonNumber(line, "time_solve");
          contacts = cd_benchJsonNumber(line, "contacts_mean");
          fprintf(csv, "%s,%s,%s,%.1f,%.0f,%.3e,%.3f\n", runs[r].scene, runs[r].steps, g_solvers[s], contacts, nonconv,
                  res, secs);
          if (nonconv > 0)
            snprintf(cells[s], sizeof cells[s], "**%.0f** (%.0e), %.3g s", nonconv, res, secs);
          else
            snprintf(cells[s], sizeof cells[s], "0, %.3g s", secs);
          printf("  %-13s %-13s %s\n", runs[r].scene, g_solvers[s], cells[s]);
          got = 1;
        }
      if (!p || pclose(p) != 0 || !got) {
        snprintf(cells[s], sizeof cells[s], "failed");
        fprintf(csv, "%s,%s,%s,,,,\n", runs[r].scene, runs[r].steps, g_solvers[s]);
        printf("  %-13s %-13s failed\n", runs[r].scene, g_solvers[s]);
      }
      fflush(csv);
    }
    fprintf(txt, "| %s (%s, %.0f) |", runs[r].scene, runs[r].steps, contacts);
    for (int s = 0; s < NSOLVER; s++) fprintf(txt, " %s |", cells[s]);
    fprintf(txt, "\n");
  }
  fclose(csv);
  fclose(txt);
}

#ifdef CD_HAVE_SICONOS

/* Siconos's fc3d NSGS on p from zero to its own tolerance tol: the impulses into p->lambda;
 * its own error, sweeps and time; returns its info (0: converged by its own measure) */
static int solveSiconos(cdContactProblem *p, double tol, double *ownError, int *iters, double *secs) {
  int nc = p->ncon, n = 3 * nc;
  memset(p->lambda, 0, (size_t)n * sizeof(double));
  if (nc == 0) {
    *ownError = 0.0;
    *iters = 0;
    *secs = 0.0;
    return 0;
  }
  /* W: triplets -> CSC -> sparse-block of 3x3 blocks (Siconos's NSGS works block by block) */
  NumericsMatrix *T = NM_create(NM_SPARSE, n, n);
  NM_triplet_alloc(T, 9 * (CS_INT)p->G.nnzb);
  for (int i = 0; i < nc; i++)
    for (int k = p->G.rowptr[i]; k < p->G.rowptr[i + 1]; k++)
      for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) NM_entry(T, 3 * i + r, 3 * p->G.col[k] + c, p->G.val[9 * (size_t)k + 3 * r + c]);
  SparseBlockStructuredMatrix *sbm = SBM_new();
  if (SBM_from_csparse(3, NM_csc(T), sbm) != 0) {
    NM_free(T);
    return -1;
  }
  NM_free(T);
  NumericsMatrix *W = NM_new_SBM(n, n, sbm);
  double *q = malloc((size_t)n * sizeof(double)), *mu = malloc((size_t)nc * sizeof(double));
  double *u = calloc((size_t)n, sizeof(double));
  memcpy(q, p->g, (size_t)n * sizeof(double));
  memcpy(mu, p->mu, (size_t)nc * sizeof(double));
  FrictionContactProblem *fc = frictionContactProblem_new_with_data(3, nc, W, q, mu);
  SolverOptions *opt = solver_options_create(SICONOS_FRICTION_3D_NSGS);
  opt->iparam[SICONOS_IPARAM_MAX_ITER] = CD_NCP_NSGS_MAXIT;
  opt->dparam[SICONOS_DPARAM_TOL] = tol;
  double t0 = cd_benchNow();
  int info = fc3d_driver(fc, p->lambda, u, opt);
  *secs = cd_benchNow() - t0;
  *ownError = opt->dparam[SICONOS_DPARAM_RESIDU];
  *iters = opt->iparam[SICONOS_IPARAM_ITER_DONE];
  solver_options_delete(opt);
  frictionContactProblem_free(fc);
  free(u);
  return info;
}

typedef struct {
  int problems, solved[3];
  double worst[3], total[3];
  double *times[3];
} setStats;

static int dcmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* runs cdsim on scene with --dump-problems into dir (the steps given) */
static int dumpScene(const char *scene, const char *steps, const char *dir) {
  const char *bin = getenv("CDSIM_BIN"), *root = getenv("CDSIM_ROOT");
  char cmd[12288];
  snprintf(cmd, sizeof cmd, "rm -rf '%s' && '%s' '%s/scenes/%s' --model ncp --steps %s --dump-problems '%s' --out '%s.h5' --quiet",
           dir, bin ? bin : "build/cdsim", root ? root : ".", scene, steps, dir, dir);
  return system(cmd);
}

CD_BENCH(ncpSiconos) {
  /* the bundled scenes' problems: every step of the small scenes, and three steps of the
   * 1000-sphere pile as it lands (steps 20, 40, 60) */
  static const struct {
    const char *scene, *steps;
    int every; /* keep every k-th step's file */
  } scenes[] = {{"sliding-cube.json", "150", 1}, {"cube-on-cube.json", "200", 1}, {"cube-stack.json", "300", 1},
                {"cube-pyramid.json", "300", 1}, {"sphere-pile.json", "200", 1}, {"pile-1000.json", "60", 20}};
  const int nscene = (int)(sizeof scenes / sizeof scenes[0]);
  static cdPeerFile files[4096];
  int nf = 0;
  char dir[2048];
  for (int s = 0; s < nscene; s++) {
    snprintf(dir, sizeof dir, "%s/ncp-dumps/%.*s", outdir, (int)(strlen(scenes[s].scene) - 5), scenes[s].scene);
    char mk[2200];
    snprintf(mk, sizeof mk, "mkdir -p '%s/ncp-dumps'", outdir);
    if (system(mk) != 0 || dumpScene(scenes[s].scene, scenes[s].steps, dir) != 0) {
      printf("  cannot dump %s: skipped\n", scenes[s].scene);
      continue;
    }
    int first = nf;
    nf = cd_peerListDir(dir, ".hdf5", scenes[s].scene, files, nf, 4096);
    /* keep every k-th step */
    int kept = first;
    for (int k = first; k < nf; k++) {
      long step = atol(files[k].name + 5);
      if (step % scenes[s].every == 0) files[kept++] = files[k];
    }
    nf = kept;
  }
  nf += cd_peerFrictionFiles(peerDir(), files + nf, 4096 - nf);
  FILE *csv = cd_benchOpen(outdir, "siconos.csv"), *txt = cd_benchOpen(outdir, "siconos.txt");
  if (!csv || !txt) {
    if (csv) fclose(csv);
    if (txt) fclose(txt);
    return;
  }
  fprintf(csv, "set,problem,contacts,solver,iterations,residual,solved,seconds,own_error\n");
  const char *names[3] = {"cdsim nsgs+fp-apgd", "cdsim nsgs", "Siconos fc3d NSGS"};
  void *state[2] = {NULL, NULL};
  for (int s = 0; s < 2; s++) {
    cdBackendOptions opt = {.solver = g_solvers[s]};
    char err[256];
    cd_backendNcp.make(NULL, &opt, &state[s], err, sizeof err);
  }
  /* sets in order of first appearance */
  char sets[16][64];
  int nset = 0;
  static setStats st[16];
  for (int f = 0; f < nf; f++) {
    int s;
    for (s = 0; s < nset && strcmp(sets[s], files[f].set); s++) {
    }
    if (s == nset && nset < 16) {
      snprintf(sets[nset++], 64, "%s", files[f].set);
      memset(&st[s], 0, sizeof st[s]);
      for (int k = 0; k < 3; k++) st[s].times[k] = calloc((size_t)nf, sizeof(double));
    }
    if (s >= 16) continue;
    cdContactProblem p;
    char err[512];
    if (cd_frictionFileRead(files[f].path, &p, err, sizeof err)) continue;
    if (p.ncon == 0) {
      cd_contactProblemFree(&p);
      continue;
    }
    setStats *S = &st[s];
    for (int k = 0; k < 3; k++) {
      double res = INFINITY, t = 0.0, own = NAN;
      int it = 0;
      if (k < 2) {
        solveCdsim(state[k], &p, &res, &it, &t);
      } else {
        double *w = cd_malloc(3 * (size_t)p.ncon * sizeof(double));
        for (double tol = CD_NCP_TOL; w && tol >= 0.99e-12; tol *= 0.1) {
          int info = solveSiconos(&p, tol, &own, &it, &t);
          res = cd_ncpResidualOf(&p, p.lambda, w, NULL);
          if (info != 0 || res <= CD_NCP_TOL) break;
        }
        cd_free(w);
      }
      int ok = res <= CD_NCP_TOL;
      S->solved[k] += ok;
      S->worst[k] = fmax(S->worst[k], isfinite(res) ? res : 1e300);
      S->total[k] += t;
      S->times[k][S->problems] = t;
      fprintf(csv, "%s,%s,%d,%s,%d,%.6e,%d,%.6f,%.3e\n", files[f].set, files[f].name, p.ncon, names[k], it, res, ok, t,
              own);
    }
    S->problems++;
    fflush(csv);
    cd_contactProblemFree(&p);
  }
  fprintf(txt, "%-18s %8s | %-26s | %-26s | %-26s\n", "problems", "count", names[0], names[1], names[2]);
  fprintf(txt, "%-18s %8s | %-26s | %-26s | %-26s\n", "", "", "solved, median ms, worst", "solved, median ms, worst",
          "solved, median ms, worst");
  for (int s = 0; s < nset; s++) {
    setStats *S = &st[s];
    fprintf(txt, "%-18s %8d", sets[s], S->problems);
    for (int k = 0; k < 3; k++) {
      qsort(S->times[k], (size_t)S->problems, sizeof(double), dcmp);
      double med = S->problems ? S->times[k][S->problems / 2] : 0.0;
      fprintf(txt, " | %5d %9.3f %9.1e", S->solved[k], 1e3 * med, S->worst[k]);
      free(S->times[k]);
    }
    fprintf(txt, "\n");
  }
  for (int s = 0; s < 2; s++) cd_backendNcp.free(state[s]);
  fclose(csv);
  fclose(txt);
  printf("  (table in siconos.txt)\n");
}

#else

CD_BENCH(ncpSiconos) {
  (void)outdir;
  printf("  Siconos numerics absent (no /usr/include/siconos/numerics/fc3d_Solvers.h when built): skipped; "
         "apt-get install libsiconos-numerics-dev and rebuild to run it\n");
}

#endif
