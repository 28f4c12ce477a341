/* bench_ccp.c: the time of every CCP step (issue 14: no step over 20x the run's median, and
 * the cost linear in the contacts). The ratios to MuJoCo and ODE are bench_peers.c's.
 *
 * ccpStepTimes: the peer bench's scenes S2 10, S3 20 and S4 10 (made by its make-scene) and
 * S2 16 (4096 spheres), run in-process under the CCP's default and under apgd, each step timed;
 * ccp-steps.csv has, per scene and solver, the median, 90th percentile and largest step (and
 * largest / median), the mean iterations and factorizations, and the solver name;
 * ccp-scaling.txt the ratio of S2 16's time to S2 10's over the same simulated time (the first
 * CDSIM_CCP_SECONDS, default 0.5 s, of both). Without the peer bench it says so and writes
 * nothing. Benchmarks assert nothing. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc.h"
#include "backends.h"
#include "bench.h"
#include "scene_json.h"
#include "world.h"

/* the peer bench's scene as a cdsim scene; 0 ok */
static int makeScene(const char *pb, const char *scene, const char *param, cdScene *s) {
  char path[] = "/tmp/cdsim-bench-ccp-XXXXXX.json", cmd[8192], err[4096];
  int fd = mkstemps(path, 5);
  if (fd < 0) return -1;
  close(fd);
  snprintf(cmd, sizeof cmd, "'%s/make-scene' %s %s '%s'", pb, scene, param, path);
  int st = system(cmd) == 0 ? cd_sceneLoad(path, NULL, NULL, 0, s, NULL, err, sizeof err) : -1;
  unlink(path);
  return st;
}

typedef struct {
  double total, median, p90, max, it, fact;
  long steps;
  char solver[32];
} stepFigures;

static int timeSteps(const cdScene *s, const char *solver, double seconds, stepFigures *f) {
  const cdBackend *be = cd_backendFind("ccp");
  cdBackendOptions opt = {.solver = solver};
  void *bs = NULL;
  char err[512];
  cdWorld *w = NULL;
  if (be->make(s, &opt, &bs, err, sizeof err) || !(w = cd_worldMake(s))) {
    if (bs) be->free(bs);
    return -1;
  }
  long n = (long)(seconds / s->dt + 0.5);
  if (n > s->nstep) n = s->nstep;
  double *t = calloc((size_t)(n > 0 ? n : 1), sizeof *t);
  memset(f, 0, sizeof *f);
  long k = 0;
  for (; t && k < n; k++) {
    cdSolveStats st;
    double t0 = cd_benchNow();
    if (cd_worldStep(s, w, be, bs, s->dt, &st)) break;
    t[k] = cd_benchNow() - t0;
    f->total += t[k];
    f->it += st.iterations;
    f->fact += st.factorizations;
  }
  f->steps = k;
  if (k > 0) {
    f->it /= (double)k;
    f->fact /= (double)k;
    f->median = cd_benchMedian(t, (int)k); /* sorts t */
    f->p90 = t[(k * 9) / 10];
    f->max = t[k - 1];
  }
  snprintf(f->solver, sizeof f->solver, "%s", be->solverName(bs));
  free(t);
  be->free(bs);
  cd_worldFree(w);
  return 0;
}

CD_BENCH(ccpStepTimes) {
  const char *pb = cd_benchPeerBench("make-scene");
  if (!pb) {
    printf("  skipped: no peer bench (../shared/peer-bench or $CDSIM_PEER_BENCH) or no python3: its scenes could "
           "not be made\n");
    return;
  }
  const char *se = getenv("CDSIM_CCP_SECONDS");
  double secs = se && atof(se) > 0 ? atof(se) : 0.5;
  static const struct {
    const char *scene, *param;
  } sc[] = {{"S3", "20"}, {"S4", "10"}, {"S2", "10"}, {"S2", "16"}};
  static const char *const solvers[] = {NULL, "apgd"};
  FILE *csv = cd_benchOpen(outdir, "ccp-steps.csv"), *sca = cd_benchOpen(outdir, "ccp-scaling.txt");
  if (!csv || !sca) {
    if (csv) fclose(csv);
    if (sca) fclose(sca);
    return;
  }
  fprintf(csv, "scene,solver_option,solver,seconds_simulated,steps,total_s,median_ms,p90_ms,max_ms,max_over_median,"
               "iterations_mean,factorizations_mean\n");
  double total[2][2] = {{0, 0}, {0, 0}}; /* S2 10, S2 16 x default, apgd */
  for (size_t s = 0; s < sizeof sc / sizeof sc[0]; s++) {
    cdScene scene;
    if (makeScene(pb, sc[s].scene, sc[s].param, &scene)) continue;
    for (int v = 0; v < 2; v++) {
      stepFigures f;
      if (timeSteps(&scene, solvers[v], secs, &f) || f.steps == 0) continue;
      fprintf(csv, "%s %s,%s,%s,%.3f,%ld,%.3f,%.3f,%.3f,%.3f,%.1f,%.2f,%.2f\n", sc[s].scene, sc[s].param,
              solvers[v] ? solvers[v] : "default", f.solver, (double)f.steps * scene.dt, f.steps, f.total,
              1e3 * f.median, 1e3 * f.p90, 1e3 * f.max, f.max / f.median, f.it, f.fact);
      fflush(csv);
      printf("  %s %s %-7s [%s] %ld steps: median %.3f ms, max %.3f ms (%.1f x median), %.1f iterations, %.2f "
             "factorizations a step\n",
             sc[s].scene, sc[s].param, solvers[v] ? solvers[v] : "default", f.solver, f.steps, 1e3 * f.median,
             1e3 * f.max, f.max / f.median, f.it, f.fact);
      if (strcmp(sc[s].scene, "S2") == 0) total[strcmp(sc[s].param, "16") == 0][v] = f.total;
    }
    cd_sceneFree(&scene);
  }
  for (int v = 0; v < 2; v++)
    if (total[0][v] > 0 && total[1][v] > 0) {
      fprintf(sca, "%s: S2 16 / S2 10 over the first %.2f s: %.2f (%.2f s / %.2f s)\n", v ? "apgd" : "default",
              secs, total[1][v] / total[0][v], total[1][v], total[0][v]);
      printf("  %s: S2 16 (4096 spheres) / S2 10 (1000) over the first %.2f s: %.2f\n", v ? "apgd" : "default",
             secs, total[1][v] / total[0][v]);
    }
  fclose(csv);
  fclose(sca);
}
