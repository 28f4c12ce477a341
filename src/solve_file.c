/* solve_file.c: cdsim's solvers on friction-contact problems from files (solve_file.h).
 *
 * The files are read by io/problem_file.c (FCLIB by plain HDF5 calls, which fail with a
 * message where libfclib's reader exits the process, and the Siconos .dat formats, which no
 * library reads); each problem is solved from lambda = 0 by the backend's solve, exactly as a
 * step's problem is, and judged twice: by the model's own residual and by the exact Coulomb
 * residual (ncp.h), which is what an FCLIB problem asks for.
 */
#include "solve_file.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "alloc.h"
#include "backends.h"
#include "ncp.h"
#include "problem_file.h"
#include "run.h"

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int cd_solveFiles(const char *const *files, int nfile, const char *model, const cdBackendOptions *opt) {
  if (strcmp(model, "ncp") && strcmp(model, "ccp")) {
    fprintf(stderr, "cdsim: --solve-fclib: --model ncp or ccp (got '%s')\n", model);
    return CD_EXIT_USAGE;
  }
  const cdBackend *be = cd_backendFind(model);
  void *st = NULL;
  char err[1024];
  int rc = be->make(NULL, opt, &st, err, sizeof err);
  if (rc == CD_ERR_USAGE) {
    fprintf(stderr, "cdsim: %s\n", err);
    return CD_EXIT_USAGE;
  }
  if (rc) {
    fprintf(stderr, "cdsim: out of memory making the %s backend\n", model);
    return CD_EXIT_ERROR;
  }
  int code = CD_EXIT_OK;
  printf("%-44s %8s %5s %-14s %10s %10s %10s %9s %9s\n", "file", "contacts", "model", "solver", "iterations",
         "residual", "coulomb", "converged", "seconds");
  for (int f = 0; f < nfile; f++) {
    const char *a = files[f];
    cdContactProblem p;
    rc = cd_frictionFileRead(a, &p, err, sizeof err);
    if (rc) {
      fprintf(stderr, "cdsim: %s\n", err);
      code = CD_EXIT_ERROR;
      continue;
    }
    memset(p.lambda, 0, 3 * (size_t)p.ncon * sizeof(double));
    cdSolveStats stats;
    memset(&stats, 0, sizeof stats);
    stats.converged = 1;
    double t0 = now();
    rc = p.ncon > 0 ? be->solve(st, &p, NULL, &stats) : CD_OK;
    double secs = now() - t0;
    double *work = cd_malloc(3 * (size_t)(p.ncon > 0 ? p.ncon : 1) * sizeof(double));
    double coulomb = work ? cd_ncpResidualOf(&p, p.lambda, work, NULL) : -1.0;
    cd_free(work);
    const char *base = strrchr(a, '/');
    if (rc == CD_ERR_NOMEM || !work) {
      fprintf(stderr, "cdsim: %s: out of memory\n", a);
      code = CD_EXIT_ERROR;
    } else {
      printf("%-44s %8d %5s %-14s %10d %10.3e %10.3e %9s %9.4f\n", base ? base + 1 : a, p.ncon, model,
             be->solverName(st), stats.iterations, stats.residual, coulomb,
             rc == CD_OK && stats.converged ? "yes" : "no", secs);
    }
    fflush(stdout);
    cd_contactProblemFree(&p);
  }
  be->free(st);
  return code;
}
