/* cdsim_fclib.c: cdsim-fclib, the solvers of cdsim on friction-contact problems from files:
 * FCLIB .hdf5 (local, or global condensed to local: W = H^T M^-1 H, q = H^T M^-1 f + w) as
 * written by `cdsim --dump-problems` or found in the FCLIB collection, and Siconos's .dat text
 * problems. Each problem is solved from zero impulses by the model and solver named, and one
 * line says how far the answer is from the file's problem and how long it took.
 *
 * A program of its own rather than a mode of cdsim: the readers of these formats are the
 * project's peer-collection readers (tests/peer_data.c: FCLIB by plain HDF5 calls, which fail
 * with a message where libfclib's reader exits the process, and the .dat formats, which no
 * library reads), and the simulator has no use for them.
 *
 *     cdsim-fclib FILE... [--model ncp|ccp] [--solver NAME] [--tolerance X] [--max-iterations N]
 *
 * Output, one line a file: name, contacts, model, solver, iterations, the model's residual
 * (ncp: the exact Coulomb residual of ncp.h; ccp: the CCP's of cone.h), the exact Coulomb
 * residual (the FCLIB problem's own measure, the same for every model), converged (yes/no),
 * and the solve's wall time in seconds. Exit status: 0 when every file was read (converged or
 * not: the line says), 1 when a file could not be read (one line on stderr naming it), 2 on
 * bad usage.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alloc.h"
#include "backends.h"
#include "cone.h"
#include "ncp.h"
#include "peer_data.h"

static const char USAGE[] =
    "usage: cdsim-fclib FILE... [--model ncp|ccp] [--solver NAME] [--tolerance X] [--max-iterations N]\n"
    "  FILE: an FCLIB problem (.hdf5, local or global) or a Siconos friction-contact problem (.dat)\n"
    "  prints per file: name, contacts, model, solver, iterations, the model's residual, the exact\n"
    "  Coulomb residual, converged, seconds\n";

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int usage(const char *msg, const char *arg) {
  fprintf(stderr, "cdsim-fclib: %s%s%s\n%s", msg, arg ? " " : "", arg ? arg : "", USAGE);
  return 2;
}

int main(int argc, char **argv) {
  const char *model = "ncp";
  cdBackendOptions opt = {.friction_dirs = 4};
  int nfile = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    char *end;
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      fputs(USAGE, stdout);
      return 0;
    } else if (!strcmp(a, "--model") || !strcmp(a, "--solver") || !strcmp(a, "--tolerance") ||
               !strcmp(a, "--max-iterations")) {
      if (!v) return usage("needs a value:", a);
      i++;
      if (!strcmp(a, "--model")) {
        if (strcmp(v, "ncp") && strcmp(v, "ccp")) return usage("--model: ncp or ccp, got", v);
        model = v;
      } else if (!strcmp(a, "--solver")) {
        opt.solver = v;
      } else if (!strcmp(a, "--tolerance")) {
        errno = 0;
        opt.tolerance = strtod(v, &end);
        if (errno || *end || !(opt.tolerance > 0)) return usage("--tolerance: a number > 0, got", v);
      } else {
        errno = 0;
        long n = strtol(v, &end, 10);
        if (errno || *end || n < 1 || n > INT_MAX) return usage("--max-iterations: a whole number >= 1, got", v);
        opt.max_iterations = (int)n;
      }
    } else if (a[0] == '-' && a[1]) {
      return usage("unknown option", a);
    } else {
      nfile++;
    }
  }
  if (!nfile) return usage("no problem file given", NULL);
  const cdBackend *be = cd_backendFind(model);
  void *st = NULL;
  char err[1024];
  int rc = be->make(NULL, &opt, &st, err, sizeof err);
  if (rc == CD_ERR_USAGE) return usage(err, NULL);
  if (rc) {
    fprintf(stderr, "cdsim-fclib: out of memory\n");
    return 1;
  }
  int code = 0;
  printf("%-44s %8s %5s %-14s %10s %10s %10s %9s %9s\n", "file", "contacts", "model", "solver", "iterations",
         "residual", "coulomb", "converged", "seconds");
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (a[0] == '-' && a[1]) {
      i++;
      continue;
    }
    size_t l = strlen(a);
    cdContactProblem p;
    int hdf5 = l > 5 && !strcmp(a + l - 5, ".hdf5");
    rc = hdf5 ? cd_peerFclibRead(a, &p, err, sizeof err) : cd_peerFcRead(a, &p, err, sizeof err);
    if (rc) {
      fprintf(stderr, "cdsim-fclib: %s\n", err);
      code = 1;
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
      fprintf(stderr, "cdsim-fclib: %s: out of memory\n", a);
      code = 1;
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
