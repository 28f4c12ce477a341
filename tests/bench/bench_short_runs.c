/* bench_short_runs.c: what a short run costs a sweep. A parameter sweep is hundreds of runs
 * of small scenes, each a process of its own, so the program's start-up and its file's
 * creation and close weigh as much as the steps. The program (CDSIM_BIN) runs every bundled
 * scene of at most 10 bodies under lcp, ccp and penalty, as a user's sweep does (its own
 * process, default options, a file written), REPS times, interleaved; and `cdsim --version`
 * alone, for the start-up. Writes short-runs.csv: one row a scene and model, the median wall
 * and CPU time (user + system, from wait4) of a run, and of the start-up; then the median
 * over the rows (the typical run of a sweep).
 * The machine is shared, so the CPU time is the steadier figure. */
#include <dirent.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "scene_json.h"

extern char **environ;

enum { REPS = 5, MAX_SCENES = 32, MAX_BODIES = 10 };

/* runs argv quietly; its wall and CPU seconds; 0, or -1 when it failed */
static int runOnce(char *const argv[], double *wall, double *cpu) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  double t0 = cd_benchNow();
  pid_t pid;
  int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return -1;
  int status = 0;
  struct rusage ru;
  if (wait4(pid, &status, 0, &ru) != pid) return -1;
  *wall = cd_benchNow() - t0;
  *cpu = (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_sec +
         1e-6 * (double)ru.ru_stime.tv_usec;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/* bodies in a scene file (the scene loader's count), or -1 when it does not load */
static int bodiesIn(const char *path) {
  cdScene sc;
  char err[1024];
  if (cd_sceneLoad(path, NULL, NULL, 0, &sc, NULL, err, sizeof err)) return -1;
  int n = sc.nbody;
  cd_sceneFree(&sc);
  return n;
}

static int cmpstr(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

CD_BENCH(shortRunsOfTheBundledScenes) {
  const char *bin = getenv("CDSIM_BIN"), *root = getenv("CDSIM_ROOT");
  if (!bin || !root) {
    printf("  skipped: CDSIM_BIN and CDSIM_ROOT are needed (make bench sets them)\n");
    return;
  }
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/scenes", root);
  DIR *d = opendir(dir);
  if (!d) {
    printf("  skipped: no %s\n", dir);
    return;
  }
  char *scene[MAX_SCENES];
  int ns = 0;
  for (struct dirent *e; (e = readdir(d)) && ns < MAX_SCENES;) {
    size_t l = strlen(e->d_name);
    if (l < 6 || strcmp(e->d_name + l - 5, ".json")) continue;
    char p[8192];
    snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
    int nb = bodiesIn(p);
    if (nb >= 1 && nb <= MAX_BODIES) scene[ns++] = strdup(p);
  }
  closedir(d);
  qsort(scene, (size_t)ns, sizeof *scene, cmpstr);
  FILE *f = cd_benchOpen(outdir, "short-runs.csv");
  if (!f) goto done;
  /* argv wants writable strings */
  static char model[3][8] = {"lcp", "ccp", "penalty"};
  static char o_version[] = "--version", o_model[] = "--model", o_out[] = "--out", o_quiet[] = "--quiet",
              o_noxdmf[] = "--no-xdmf";
  char prog[4096], out[4200];
  snprintf(prog, sizeof prog, "%s", bin);
  snprintf(out, sizeof out, "%s/short-run.h5", outdir);
  double wall[MAX_SCENES][3][REPS], cpu[MAX_SCENES][3][REPS], vwall[REPS], vcpu[REPS];
  for (int r = 0; r < REPS; r++) {
    char *ver[] = {prog, o_version, NULL};
    if (runOnce(ver, &vwall[r], &vcpu[r])) {
      printf("  failed: %s --version\n", bin);
      goto close;
    }
    for (int s = 0; s < ns; s++)
      for (int m = 0; m < 3; m++) {
        char *argv[] = {prog, scene[s], o_model, model[m], o_out, out, o_quiet, o_noxdmf, NULL};
        if (runOnce(argv, &wall[s][m][r], &cpu[s][m][r])) {
          printf("  failed: %s under %s\n", scene[s], model[m]);
          goto close;
        }
      }
  }
  fprintf(f, "scene,model,wall_ms_median,cpu_ms_median\n");
  double vw = cd_benchMedian(vwall, REPS), vc = cd_benchMedian(vcpu, REPS);
  double rw[MAX_SCENES * 3], rc[MAX_SCENES * 3];
  fprintf(f, "(cdsim --version),,%.2f,%.2f\n", 1e3 * vw, 1e3 * vc);
  for (int s = 0; s < ns; s++)
    for (int m = 0; m < 3; m++) {
      double w = rw[3 * s + m] = cd_benchMedian(wall[s][m], REPS), c = rc[3 * s + m] = cd_benchMedian(cpu[s][m], REPS);
      const char *base = strrchr(scene[s], '/');
      fprintf(f, "%s,%s,%.2f,%.2f\n", base ? base + 1 : scene[s], model[m], 1e3 * w, 1e3 * c);
    }
  /* the typical run: the median over the scenes and models (a few long penalty runs would
   * make a mean the figure of those) */
  double mw = cd_benchMedian(rw, 3 * ns), mc = cd_benchMedian(rc, 3 * ns);
  fprintf(f, "# %d runs (%d scenes x 3 models), medians of %d: the median run %.1f ms wall, %.1f ms CPU; "
             "start-up (--version) %.1f ms wall, %.1f ms CPU\n",
          3 * ns, ns, REPS, 1e3 * mw, 1e3 * mc, 1e3 * vw, 1e3 * vc);
  printf("  %d scenes x 3 models: the median run %.1f ms wall, %.1f ms CPU; start-up %.1f ms wall, %.1f ms CPU\n", ns,
         1e3 * mw, 1e3 * mc, 1e3 * vw, 1e3 * vc);
close:
  unlink(out);
  fclose(f);
done:
  for (int s = 0; s < ns; s++) free(scene[s]);
}
