/* main.c: runs every registered benchmark (or those whose name contains argv[2]). */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

static struct {
  const char *name;
  cdBenchFn fn;
} g_bench[64];
static int g_n;

void cd_benchRegister(const char *name, cdBenchFn fn) {
  if (g_n < 64) {
    g_bench[g_n].name = name;
    g_bench[g_n].fn = fn;
    g_n++;
  }
}

double cd_benchNow(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmpd(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double cd_benchMedian(double *x, int n) {
  qsort(x, (size_t)n, sizeof *x, cmpd);
  return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

/* one value after key in a JSON line ("key": value), or NAN */
double cd_benchJsonNumber(const char *line, const char *key) {
  char pat[64];
  snprintf(pat, sizeof pat, "\"%s\": ", key);
  const char *p = strstr(line, pat);
  return p ? atof(p + strlen(pat)) : 0.0 / 0.0;
}

FILE *cd_benchOpen(const char *outdir, const char *file) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", outdir, file);
  FILE *f = fopen(path, "w");
  if (!f) fprintf(stderr, "bench: cannot write %s\n", path);
  else printf("  writing %s\n", path);
  return f;
}

int main(int argc, char **argv) {
  const char *outdir = argc > 1 ? argv[1] : ".";
  for (int i = 0; i < g_n; i++) {
    if (argc > 2 && !strstr(g_bench[i].name, argv[2])) continue;
    printf("bench %s\n", g_bench[i].name);
    fflush(stdout);
    double t0 = cd_benchNow();
    g_bench[i].fn(outdir);
    printf("  done in %.1f s\n", cd_benchNow() - t0);
  }
  return 0;
}

const char *cd_benchPeerBench(const char *tool) {
  const char *d = getenv("CDSIM_PEER_BENCH");
  if (!d || !*d) d = "../shared/peer-bench";
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", d, tool);
  return access(path, X_OK) == 0 && system("python3 -c 1 >/dev/null 2>&1") == 0 ? d : NULL;
}
