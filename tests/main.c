/* main.c: runs the registered tests; see test.h.
 *
 * The environment: `make test` gives the runner CDSIM_BIN (the cdsim program, for the tests
 * of the command line), CDSIM_ROOT (the repository, for the bundled scenes and scripts) and
 * CDSIM_PEER_DATA (the problem collections). Without them a score of tests would skip and the
 * run would still end "0 failed", so the runner refuses to start: exit 2 and one line saying
 * what to set. (A collection that is absent where CDSIM_PEER_DATA points is a plain skip.) */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "test.h"

typedef struct {
  const char *name, *file;
  cdTestFn fn;
} cdTestEntry;

static cdTestEntry *g_tests;
static int g_ntest, g_cap;
static int g_fail_now, g_skip_now;

void cd_testRegister(const char *name, const char *file, cdTestFn fn) {
  if (g_ntest == g_cap) {
    g_cap = g_cap ? 2 * g_cap : 64;
    g_tests = realloc(g_tests, (size_t)g_cap * sizeof *g_tests);
    if (!g_tests) abort();
  }
  g_tests[g_ntest++] = (cdTestEntry){name, file, fn};
}

void cd_testFail(const char *file, int line, const char *fmt, ...) {
  va_list ap;
  if (g_fail_now < 20) {
    fprintf(stdout, "    %s:%d: ", file, line);
    va_start(ap, fmt);
    vfprintf(stdout, fmt, ap);
    va_end(ap);
    fputc('\n', stdout);
  }
  g_fail_now++;
}

void cd_testSkip(const char *why) {
  printf("    skipped: %s\n", why);
  g_skip_now = 1;
}

int cd_testFailed(void) { return g_fail_now; }

static int by_file_then_name(const void *a, const void *b) {
  const cdTestEntry *x = a, *y = b;
  int c = strcmp(x->file, y->file);
  return c ? c : strcmp(x->name, y->name);
}

/* a line on stderr naming what is missing, 0 when the environment is complete */
static int environmentMissing(void) {
  const char *bin = getenv("CDSIM_BIN"), *root = getenv("CDSIM_ROOT"), *peer = getenv("CDSIM_PEER_DATA");
  char scenes[4096];
  struct stat st;
  snprintf(scenes, sizeof scenes, "%s/scenes", root ? root : "");
  const char *what = NULL;
  if (!bin || !*bin)
    what = "CDSIM_BIN is not set";
  else if (access(bin, X_OK) != 0)
    what = "CDSIM_BIN is not an executable file";
  else if (!root || !*root)
    what = "CDSIM_ROOT is not set";
  else if (stat(scenes, &st) != 0 || !S_ISDIR(st.st_mode))
    what = "CDSIM_ROOT has no scenes/ directory";
  else if (!peer || !*peer)
    what = "CDSIM_PEER_DATA is not set";
  if (!what) return 0;
  fprintf(stderr,
          "cdsim-tests: %s: run the suite with `make test` (or set CDSIM_BIN=build/cdsim, CDSIM_ROOT=the "
          "repository, CDSIM_PEER_DATA=../shared/peer-data as the Makefile does)\n",
          what);
  return 1;
}

int main(int argc, char **argv) {
  int passed = 0, failed = 0, skipped = 0;
  if (environmentMissing()) {
    free(g_tests);
    return 2;
  }
  qsort(g_tests, (size_t)g_ntest, sizeof *g_tests, by_file_then_name);
  setvbuf(stdout, NULL, _IOLBF, 0);
  for (int i = 0; i < g_ntest; i++) {
    if (argc > 1 && !strstr(g_tests[i].name, argv[1]) && !strstr(g_tests[i].file, argv[1])) continue;
    g_fail_now = 0;
    g_skip_now = 0;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    g_tests[i].fn();
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double ms = 1e3 * (double)(t1.tv_sec - t0.tv_sec) + 1e-6 * (double)(t1.tv_nsec - t0.tv_nsec);
    const char *verdict = g_fail_now ? "FAIL" : g_skip_now ? "skip" : "ok";
    printf("%-4s %s (%s, %.0f ms)\n", verdict, g_tests[i].name, g_tests[i].file, ms);
    if (g_fail_now)
      failed++;
    else if (g_skip_now)
      skipped++;
    else
      passed++;
  }
  printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
  free(g_tests);
  return failed ? 1 : 0;
}
