/* bench_models.c: per-step cost of every model and solver on sphere piles dropped on the
 * ground and run until they rest. Writes models.csv (one row a run: scene, model, solver,
 * spheres, steps, contacts at the end, median and 90th percentile step time, mean and max
 * iterations, non-converged steps, final kinetic energy) and, per run,
 * steps-MODEL-SOLVER-SCENE.csv with every step's time, contacts and iterations. */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "backends.h"
#include "bench.h"
#include "scene_json.h"
#include "world.h"

static int loadScene(const char *name, cdScene *s) {
  const char *root = getenv("CDSIM_ROOT");
  char path[4096], err[4096];
  snprintf(path, sizeof path, "%s/scenes/%s", root ? root : ".", name);
  if (cd_sceneLoad(path, NULL, NULL, 0, s, NULL, err, sizeof err)) {
    fprintf(stderr, "bench: %s", err);
    return -1;
  }
  return 0;
}

static void runOne(FILE *sum, const char *outdir, const char *scene_name, const char *model, const char *solver,
                   long steps) {
  cdScene s;
  if (loadScene(scene_name, &s)) return;
  const cdBackend *be = cd_backendFind(model);
  cdBackendOptions opt = {.solver = strcmp(solver, "default") ? solver : NULL, .friction_dirs = 4};
  void *bs = NULL;
  char err[512];
  cdWorld *w = NULL;
  if (!be || be->make(&s, &opt, &bs, err, sizeof err) || !(w = cd_worldMake(&s))) {
    fprintf(stderr, "bench: cannot set up %s/%s on %s\n", model, solver, scene_name);
    if (bs) be->free(bs);
    cd_sceneFree(&s);
    return;
  }
  if (steps <= 0 || steps > s.nstep) steps = s.nstep;
  double *t = calloc((size_t)steps, sizeof *t);
  char name[512];
  snprintf(name, sizeof name, "steps-%s-%s-%.*s.csv", model, solver, (int)(strlen(scene_name) - 5), scene_name);
  FILE *f = cd_benchOpen(outdir, name);
  if (f) {
    setvbuf(f, NULL, _IOLBF, 0); /* a long run can be followed as it goes */
    fprintf(f, "step,seconds,contacts,iterations,residual,converged,substeps\n");
  }
  long itsum = 0, itmax = 0, nonconv = 0;
  long k;
  for (k = 0; k < steps; k++) {
    cdSolveStats st;
    double t0 = cd_benchNow();
    if (cd_worldStep(&s, w, be, bs, s.dt, &st)) break;
    t[k] = cd_benchNow() - t0;
    itsum += st.iterations;
    if (st.iterations > itmax) itmax = st.iterations;
    nonconv += !st.converged;
    if (f)
      fprintf(f, "%ld,%.6f,%d,%d,%.3g,%d,%d\n", k + 1, t[k], w->contacts.ncon, st.iterations, st.residual,
              st.converged, st.substeps);
  }
  if (f) fclose(f);
  int ncon = w->contacts.ncon;
  double ke = cd_worldKineticEnergy(&s, w);
  double *sorted = calloc((size_t)(k > 0 ? k : 1), sizeof *sorted);
  memcpy(sorted, t, (size_t)k * sizeof *t);
  double med = k ? cd_benchMedian(sorted, (int)k) : 0, p90 = k ? sorted[(k * 9) / 10] : 0;
  fprintf(sum, "%s,%s,%s,%d,%ld,%d,%.3f,%.3f,%.1f,%ld,%ld,%.3g\n", scene_name, model, be->solverName(bs), s.nbody, k,
          ncon, 1e3 * med, 1e3 * p90, k ? (double)itsum / (double)k : 0, itmax, nonconv, ke);
  fflush(sum);
  printf("  %-16s %-7s %-9s %5d bodies %4ld steps: median %.2f ms/step, %d contacts at the end, KE %.3g J\n",
         scene_name, model, be->solverName(bs), s.nbody, k, 1e3 * med, ncon, ke);
  free(t);
  free(sorted);
  be->free(bs);
  cd_worldFree(w);
  cd_sceneFree(&s);
}

CD_BENCH(pilesDroppedOnTheGroundCollapse) {
  FILE *sum = cd_benchOpen(outdir, "models.csv");
  if (!sum) return;
  fprintf(sum, "scene,model,solver,bodies,steps,contacts_end,median_ms,p90_ms,iterations_mean,iterations_max,"
               "nonconverged,kinetic_energy_end\n");
  /* Lemke is dense: only the small pile fits it */
  runOne(sum, outdir, "sphere-pile.json", "lcp", "lemke", 0);
  runOne(sum, outdir, "sphere-pile.json", "lcp", "bgs", 0);
  runOne(sum, outdir, "sphere-pile.json", "ccp", "default", 0);
  runOne(sum, outdir, "sphere-pile.json", "ccp", "apgd", 0);
  runOne(sum, outdir, "sphere-pile.json", "ccp", "pgs", 0);
  runOne(sum, outdir, "sphere-pile.json", "ccp", "primal", 0);
  runOne(sum, outdir, "sphere-pile.json", "ccp", "ipm", 0);
  runOne(sum, outdir, "sphere-pile.json", "penalty", "explicit", 0);
  /* the large piles: the first 100 steps (1 s: the spheres land and the pile spreads); the
   * second-order solvers factor sparse matrices whose fill grows faster than the contacts on
   * a 3-D contact graph, so they run the first 30 steps of pile-1000 only */
  runOne(sum, outdir, "pile-1000.json", "lcp", "bgs", 100);
  runOne(sum, outdir, "pile-1000.json", "ccp", "default", 100);
  runOne(sum, outdir, "pile-1000.json", "ccp", "apgd", 100);
  runOne(sum, outdir, "pile-1000.json", "ccp", "pgs", 100);
  runOne(sum, outdir, "pile-1000.json", "ccp", "primal", 30);
  runOne(sum, outdir, "pile-1000.json", "ccp", "ipm", 30);
  runOne(sum, outdir, "pile-1000.json", "penalty", "explicit", 100);
  runOne(sum, outdir, "pile-4096.json", "lcp", "bgs", 50);
  runOne(sum, outdir, "pile-4096.json", "ccp", "default", 50);
  runOne(sum, outdir, "pile-4096.json", "ccp", "apgd", 50);
  runOne(sum, outdir, "pile-4096.json", "ccp", "pgs", 50);
  runOne(sum, outdir, "pile-4096.json", "penalty", "explicit", 50);
  fclose(sum);
}
