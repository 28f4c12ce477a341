/* bench_ccp.c: the CCP's speed against MuJoCo on the peer bench's scenes (issue 14's targets),
 * and the time of every step.
 *
 * ccpDefaultAgainstPeers: `side-by-side SCENE PARAM --model ccp` (../shared/peer-bench, found
 * through $CDSIM_PEER_BENCH) on S2 10, S3 20 and S4 10, CDSIM_CCP_REPS times (default 3) each,
 * with MuJoCo's variants; each run's ratio is cdsim's ms/step over the fastest MuJoCo variant's
 * of the same run (the machine is shared: only ratios within one run compare). ccp-peers.txt
 * keeps the tables, ccp-peers.csv one row a run, and the summary line the median ratios.
 * Without the peer bench (or its Python) it says so and writes nothing.
 *
 * ccpStepTimes: the same scenes (made by the peer bench's make-scene) and S2 16 (4096 spheres),
 * run in-process under the CCP's default and under apgd, each step timed; ccp-steps.csv has,
 * per scene and solver, the median, 90th percentile and largest step (and largest / median),
 * the mean iterations and factorizations, and the solver name; ccp-scaling.txt the ratio of
 * S2 16's time to S2 10's over the same simulated time (the first CDSIM_CCP_SECONDS, default
 * 0.5 s, of both). It needs make-scene too, and says when it skipped. Benchmarks assert
 * nothing. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc.h"
#include "backends.h"
#include "bench.h"
#include "scene_json.h"
#include "world.h"

static const char *peerBench(void) {
  const char *d = getenv("CDSIM_PEER_BENCH");
  return d && *d ? d : "../shared/peer-bench";
}

static int have(const char *pb, const char *tool) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", pb, tool);
  return access(path, X_OK) == 0 && system("python3 -c 1 >/dev/null 2>&1") == 0;
}

CD_BENCH(ccpDefaultAgainstPeers) {
  const char *pb = peerBench(), *bin = getenv("CDSIM_BIN");
  const char *re = getenv("CDSIM_CCP_REPS");
  int reps = re && atoi(re) > 0 ? atoi(re) : 3;
  if (!bin || !have(pb, "side-by-side")) {
    printf("  skipped: no peer bench at %s (set CDSIM_PEER_BENCH), or no python3, or no CDSIM_BIN: the CCP's "
           "ratios to MuJoCo were not measured\n", pb);
    return;
  }
  static const struct {
    const char *scene, *param, *peers;
  } sc[] = {{"S2", "10", "mujoco:ell-cg mujoco:pyr-cg"},
            {"S3", "20", "mujoco:ell-cg mujoco:pyr-cg mujoco:ell-newton mujoco:pyr-newton"},
            {"S4", "10", "mujoco:ell-cg mujoco:pyr-cg mujoco:ell-newton mujoco:pyr-newton"}};
  FILE *txt = cd_benchOpen(outdir, "ccp-peers.txt"), *csv = cd_benchOpen(outdir, "ccp-peers.csv");
  if (!txt || !csv) {
    if (txt) fclose(txt);
    if (csv) fclose(csv);
    return;
  }
  fprintf(csv, "scene,rep,cdsim_ms,cdsim_solver,iterations,residual_max,nonconverged,fastest_mujoco,mujoco_ms,ratio\n");
  for (size_t s = 0; s < sizeof sc / sizeof sc[0]; s++) {
    double ratio[16];
    int nr = 0;
    for (int r = 0; r < reps && r < 16; r++) {
      char cmd[8192], line[4096], solver[64] = "?", best[64] = "?";
      snprintf(cmd, sizeof cmd, "PEERS='%s' CDSIM='%s' '%s/side-by-side' %s %s --model ccp 2>&1", sc[s].peers, bin, pb,
               sc[s].scene, sc[s].param);
      FILE *p = popen(cmd, "r");
      if (!p) continue;
      fprintf(txt, "== side-by-side %s %s --model ccp (run %d)\n", sc[s].scene, sc[s].param, r + 1);
      double mj = 1e300, ms = -1, it = 0, res = 0, nc = 0;
      while (fgets(line, sizeof line, p)) {
        fputs(line, txt);
        char name[256];
        double v;
        if (strncmp(line, "mujoco:", 7) == 0 && sscanf(line, "%255s %lf", name, &v) == 2 && v < mj) {
          mj = v;
          snprintf(best, sizeof best, "%.60s", name + 7);
        }
        if (strncmp(line, "cdsim", 5) == 0) {
          const char *b = strchr(line, '['), *e = b ? strchr(b, ']') : NULL;
          if (b && e && e - b - 1 < (long)sizeof solver) {
            memcpy(solver, b + 1, (size_t)(e - b - 1));
            solver[e - b - 1] = 0;
          }
          double con;
          if (e && sscanf(e + 1, "%lf %lf %lf", &ms, &con, &it) == 3) {
            const char *q = strstr(line, "residual_max ");
            res = q ? atof(q + 13) : 0.0 / 0.0;
            q = strstr(line, "not converged ");
            nc = q ? atof(q + 14) : 0.0 / 0.0;
          }
        }
      }
      pclose(p);
      fflush(txt);
      if (ms < 0 || mj >= 1e300) continue;
      ratio[nr++] = ms / mj;
      fprintf(csv, "%s %s,%d,%.4g,%s,%.4g,%.3g,%.0f,%s,%.4g,%.3g\n", sc[s].scene, sc[s].param, r + 1, ms, solver, it, res,
              nc, best, mj, ms / mj);
      fflush(csv);
    }
    if (nr > 0)
      printf("  %s %s: cdsim ccp / fastest MuJoCo, median of %d runs: %.3g\n", sc[s].scene, sc[s].param, nr,
             cd_benchMedian(ratio, nr));
  }
  fclose(txt);
  fclose(csv);
}

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
  const char *pb = peerBench();
  if (!have(pb, "make-scene")) {
    printf("  skipped: no peer bench at %s (set CDSIM_PEER_BENCH) or no python3: its scenes could not be made\n",
           pb);
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
