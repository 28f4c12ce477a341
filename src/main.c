/* main.c: the command line (DESIGN §1), and nothing else: the run is run.c. */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "run.h"
#include "solve_file.h"
#include "xdmf.h"

/* One BLAS thread. Debian's libblas is OpenBLAS's threaded build (when that is the chosen
 * alternative), which CHOLMOD loads: its initializer starts a pool thread (a core less than the
 * machine has) that spins on sched_yield for OpenBLAS's timeout, about 0.1 s, whether or not any
 * BLAS routine is called. cdsim's factorizations are CHOLMOD's simplicial one and KLU, which
 * call no BLAS, so the spin is only a cost: 1,300-1,600 sched_yield calls a run; a one-step run
 * of the 55-cube pyramid took 110 ms of user time, 56 ms with OPENBLAS_NUM_THREADS=1; a sweep of
 * short runs on two cores pays it in every run. The variable is read before main, so the pool
 * is asked for one thread and stopped here; found by name, so that another BLAS needs nothing.
 * A BLAS call made later runs on the calling thread. */
static void oneBlasThread(void) {
  if (getenv("OPENBLAS_NUM_THREADS")) return; /* the user's choice */
  void *setThreads = dlsym(RTLD_DEFAULT, "openblas_set_num_threads");
  void *stopPool = dlsym(RTLD_DEFAULT, "blas_thread_shutdown_");
  if (!setThreads || !stopPool) return;
  ((void (*)(int))setThreads)(1);
  ((int (*)(void))stopPool)();
}

static const char *const USAGE =
    "usage: cdsim SCENE.json [options]\n"
    "  --model lcp|ccp|ncp|penalty  contact model (default: the scene's \"model\", else lcp)\n"
    "  --contact-margin auto|METRES  which separated contacts enter a step (overrides the\n"
    "                            scene's contact_margin; default auto: velocity-adaptive)\n"
    "  --solver NAME             lcp: lemke|newton|bgs; ccp: primal|apgd|pgs|ipm;\n"
    "                            ncp: nsgs+fp-apgd|nsgs|fp-apgd|fp-pgs|fp-ipm; penalty: explicit\n"
    "  --out FILE.h5             output file (default: SCENE-MODEL.h5 in the working directory)\n"
    "  --dt SECONDS              time step (overrides the scene)\n"
    "  --duration SECONDS        simulated time (overrides the scene)\n"
    "  --steps N                 number of steps (overrides the scene; not with --duration)\n"
    "  --set POINTER=JSON        override one scene value before validation (repeatable),\n"
    "                            e.g. --set /bodies/0/velocity=[2,0,0]\n"
    "  --friction-dirs M         lcp: polyhedral friction directions (even, >= 4; default 4)\n"
    "  --tolerance X             iterative solver tolerance\n"
    "  --max-iterations N        iterative solver iteration limit\n"
    "  --substeps N              penalty: substeps per step (default: from the stable step)\n"
    "  --output-every N          record every Nth step (default 1)\n"
    "  --dump-problems DIR       write each step's contact problem and the model's solution to\n"
    "                            DIR/step-NNNNNNNN.hdf5 (FCLIB local form; lcp, ccp, ncp)\n"
    "  --summary                 print the run summary as one JSON line on stdout\n"
    "  --no-xdmf                 no FILE.xdmf sidecar (for ParaView) beside the output\n"
    "  --xdmf FILE.h5            write the sidecar FILE.xdmf of an existing output and exit\n"
    "  --solve-fclib FILE...     solve contact problem files (FCLIB .hdf5, Siconos .dat) with\n"
    "                            --model ncp|ccp (default ncp), --solver, --tolerance,\n"
    "                            --max-iterations; one line a file: residuals, time\n"
    "  --quiet                   no progress and no warnings about the run (they are counted in\n"
    "                            the output); errors, and notices about the input, still go to stderr\n"
    "  --version, --help\n"
    "exit status: 0 ok, 1 I/O or other error, 2 bad usage or invalid scene, 3 simulation failed\n";

__attribute__((format(printf, 1, 2))) static int usageError(const char *fmt, ...);
static int usageError(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("cdsim: ", stderr);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputs("\n(cdsim --help for usage)\n", stderr);
  return CD_EXIT_USAGE;
}

static int parseDouble(const char *opt, const char *s, double lo, double *out) {
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (errno || end == s || *end || !(v >= lo) || v > 1e12)
    return usageError("%s: expected a number (got '%s')", opt, s);
  *out = v;
  return 0;
}

static int parseLong(const char *opt, const char *s, long lo, long hi, long *out) {
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || end == s || *end || v < lo || v > hi)
    return usageError("%s: expected a whole number in range (got '%s')", opt, s);
  *out = v;
  return 0;
}

int main(int argc, char **argv) {
  cd_allocHugeHeap(); /* (alloc.h) */
  oneBlasThread();
  cdRunConfig cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.duration = -1;
  cfg.steps = -1;
  cfg.output_every = 1;
  /* options not given stay 0 (the backend's default), so that notices.c can tell */
  cdSceneSet *sets = calloc((size_t)argc + 1, sizeof *sets);
  char **owned = calloc((size_t)argc + 1, sizeof *owned); /* the pointers of sets, to free */
  const char **files = calloc((size_t)argc + 1, sizeof *files); /* the positional arguments */
  int nowned = 0, nfile = 0, solve_files = 0;
  char dtbuf[64], marginbuf[64];
  if (!sets || !owned || !files) return CD_EXIT_ERROR;
  cfg.sets = sets;
  int rc = 0;
  for (int i = 1; i < argc && !rc; i++) {
    const char *a = argv[i];
    const char *val = i + 1 < argc ? argv[i + 1] : NULL;
    static const char *const with_value[] = {"--model", "--solver", "--out", "--dt", "--duration", "--steps",
                                             "--set", "--friction-dirs", "--tolerance", "--max-iterations",
                                             "--substeps", "--output-every", "--contact-margin", "--xdmf",
                                             "--dump-problems", NULL};
    int takes = 0;
    for (int k = 0; with_value[k]; k++) takes |= !strcmp(a, with_value[k]);
    if (takes && !val) {
      rc = usageError("%s needs a value", a);
      break;
    }
    long l;
    double d;
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      fputs(USAGE, stdout);
      free(files);
      free(owned);
      free(sets);
      return 0;
    } else if (!strcmp(a, "--version")) {
      printf("cdsim %s\n", CDSIM_VERSION);
      free(files);
      free(owned);
      free(sets);
      return 0;
    } else if (!strcmp(a, "--quiet")) {
      cfg.quiet = 1;
    } else if (!strcmp(a, "--summary")) {
      cfg.summary = 1;
    } else if (!strcmp(a, "--no-xdmf")) {
      cfg.no_xdmf = 1;
    } else if (!strcmp(a, "--solve-fclib")) {
      solve_files = 1;
    } else if (!strcmp(a, "--xdmf")) {
      char err[4400];
      int xrc = cd_xdmfWrite(val, err, sizeof err) ? CD_EXIT_ERROR : 0;
      if (xrc) fprintf(stderr, "cdsim: %s\n", err);
      free(files);
      free(owned);
      free(sets);
      return xrc;
    } else if (!strcmp(a, "--model")) {
      if (strcmp(val, "lcp") && strcmp(val, "ccp") && strcmp(val, "ncp") && strcmp(val, "penalty"))
        rc = usageError("--model: unknown model '%s' (lcp, ccp, ncp or penalty)", val);
      cfg.model = val;
      i++;
    } else if (!strcmp(a, "--solver")) {
      cfg.bopt.solver = val;
      i++;
    } else if (!strcmp(a, "--out")) {
      cfg.out = val;
      i++;
    } else if (!strcmp(a, "--dt")) {
      if (!(rc = parseDouble(a, val, 0, &d))) {
        if (!(d > 0)) rc = usageError("--dt: must be > 0 (got '%s')", val);
        snprintf(dtbuf, sizeof dtbuf, "%.17g", d);
        sets[cfg.nset++] = (cdSceneSet){"/dt", dtbuf};
      }
      i++;
    } else if (!strcmp(a, "--contact-margin")) {
      /* the scene's key, set like --set /contact_margin=... */
      char *end;
      errno = 0;
      d = strtod(val, &end);
      if (!strcmp(val, "auto"))
        snprintf(marginbuf, sizeof marginbuf, "\"auto\"");
      else if (!errno && end != val && !*end && d >= 0 && d <= 1e6)
        snprintf(marginbuf, sizeof marginbuf, "%.17g", d);
      else
        rc = usageError("--contact-margin: expected auto or a distance in metres in [0, 1e6] (got '%s')", val);
      sets[cfg.nset++] = (cdSceneSet){"/contact_margin", marginbuf};
      i++;
    } else if (!strcmp(a, "--duration")) {
      rc = parseDouble(a, val, 0, &cfg.duration);
      i++;
    } else if (!strcmp(a, "--steps")) {
      rc = parseLong(a, val, 0, 1000000000L, &cfg.steps);
      i++;
    } else if (!strcmp(a, "--set")) {
      const char *eq = strchr(val, '=');
      if (!eq || val[0] != '/') {
        rc = usageError("--set: expected POINTER=JSON, e.g. /bodies/0/radius=0.1 (got '%s')", val);
      } else {
        size_t n = (size_t)(eq - val);
        char *p = malloc(n + 1);
        if (!p) return CD_EXIT_ERROR;
        owned[nowned++] = p;
        memcpy(p, val, n);
        p[n] = 0;
        sets[cfg.nset++] = (cdSceneSet){p, eq + 1};
      }
      i++;
    } else if (!strcmp(a, "--friction-dirs")) {
      if (!(rc = parseLong(a, val, 4, 1024, &l))) cfg.bopt.friction_dirs = (int)l;
      if (!rc && l % 2) rc = usageError("--friction-dirs: must be even (got '%s')", val);
      i++;
    } else if (!strcmp(a, "--tolerance")) {
      if (!(rc = parseDouble(a, val, 0, &d)) && !(d > 0)) rc = usageError("--tolerance: must be > 0 (got '%s')", val);
      cfg.bopt.tolerance = d;
      i++;
    } else if (!strcmp(a, "--max-iterations")) {
      if (!(rc = parseLong(a, val, 1, INT_MAX, &l))) cfg.bopt.max_iterations = (int)l;
      i++;
    } else if (!strcmp(a, "--substeps")) {
      if (!(rc = parseLong(a, val, 1, 1000000, &l))) cfg.bopt.substeps = (int)l;
      i++;
    } else if (!strcmp(a, "--output-every")) {
      if (!(rc = parseLong(a, val, 1, INT_MAX, &l))) cfg.output_every = (int)l;
      i++;
    } else if (!strcmp(a, "--dump-problems")) {
      cfg.dump_dir = val;
      i++;
    } else if (a[0] == '-' && a[1]) {
      rc = usageError("unknown option '%s'", a);
    } else {
      files[nfile++] = a;
    }
  }
  if (!rc && solve_files) {
    /* cdsim --solve-fclib FILE...: only the solver's options apply */
    if (cfg.out || cfg.nset || cfg.duration >= 0 || cfg.steps >= 0 || cfg.dump_dir || cfg.summary)
      rc = usageError("--solve-fclib takes problem files and --model, --solver, --tolerance, --max-iterations only");
    else if (!nfile)
      rc = usageError("--solve-fclib: no problem file given");
    else
      rc = cd_solveFiles(files, nfile, cfg.model ? cfg.model : "ncp", &cfg.bopt);
    free(files);
    free(owned);
    free(sets);
    return rc;
  }
  if (!rc && nfile > 1) rc = usageError("one scene file only (got '%s' and '%s')", files[0], files[1]);
  if (!rc && nfile == 1) cfg.scene_path = files[0];
  if (!rc && !cfg.scene_path) rc = usageError("no scene file given");
  if (!rc && cfg.steps >= 0 && cfg.duration >= 0) rc = usageError("give --duration or --steps, not both");
  if (!rc) {
    /* the command line as typed, for the output file */
    size_t len = 1;
    for (int i = 0; i < argc; i++) len += strlen(argv[i]) + 1;
    char *cl = malloc(len);
    if (!cl) return CD_EXIT_ERROR;
    cl[0] = 0;
    for (int i = 0; i < argc; i++) {
      if (i) strcat(cl, " ");
      strcat(cl, argv[i]);
    }
    cfg.command_line = cl;
    rc = cd_run(&cfg);
    free(cl);
  }
  for (int i = 0; i < nowned; i++) free(owned[i]);
  free(files);
  free(owned);
  free(sets);
  return rc;
}
