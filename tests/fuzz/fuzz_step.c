/* fuzz_step.c: libFuzzer harness of the step pipeline: collide, build, solve, integrate.
 *
 * Input: a scene text (up to the first NUL, if any). It is loaded with cd_sceneLoad; a
 * scene the loader rejects is uninteresting here (fuzz_scene covers the loader). To keep
 * one execution short the harness skips scenes of more than FUZZ_MAX_BODIES bodies and runs
 * at most FUZZ_MAX_STEPS steps. It then runs those steps in-process under every model
 * (solvers/backends.h) through cd_worldMake / cd_worldStep, as src/run.c does:
 *   lcp with its default solver choice and with "bgs"; ccp with apgd, pgs or primal, and ncp
 *   with one of its five solvers (picked from the input length, so every solver sees inputs);
 *   penalty with its automatic substep
 *   count while cd_penaltyStableStep asks for at most FUZZ_MAX_SUBSTEPS substeps a step, and
 *   with that many forced substeps otherwise (so a stiff scene cannot stall the fuzzer).
 * Iterative solvers get FUZZ_MAX_ITERATIONS iterations; ncp's fixed points, whose iteration
 * is a whole CCP solve (up to 2000 pgs sweeps), FUZZ_MAX_CCP_SOLVES (a 10-cube pyramid pushed
 * sideways stalls pgs in every CCP: with 100 CCPs a step, 56-290 s a unit in this build
 * against the 60 s timeout, with 10 still 30-77 s; bounded work, not a hang). A step may
 * legitimately return CD_ERR_NUMERIC or CD_ERR_LIMIT, and the state may become non-finite (the
 * run loop reports both): the run stops there. What is a bug: a crash, UB, a leak (cd_allocLive
 * must come back to its value before the run), a step that returns anything but the codes
 * of world.h, or negative solver statistics.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "backends.h"
#include "scene_json.h"
#include "world.h"

#define FUZZ_MAX_BODIES 20
#define FUZZ_MAX_STEPS 5
#define FUZZ_MAX_SUBSTEPS 200
#define FUZZ_MAX_ITERATIONS 100
#define FUZZ_MAX_CCP_SOLVES 3

static void fail(const char *what, const char *model) {
  fprintf(stderr, "fuzz_step: contract violated (%s): %s\n", model, what);
  abort();
}

/* runs the scene's steps under one backend; the second state (may be NULL) is the one the
 * penalty model steps with when the first asks for too many substeps */
static void runModel(const cdScene *scene, const cdBackend *be, const cdBackendOptions *opt,
                     const cdBackendOptions *opt_capped, const char *label) {
  void *bs = NULL, *capped = NULL;
  char err[512];
  int st = be->make(scene, opt, &bs, err, sizeof err);
  if (st) fail("the backend refuses a valid scene and default options", label);
  if (opt_capped && be->make(scene, opt_capped, &capped, err, sizeof err)) fail("make (capped)", label);
  cdWorld *w = cd_worldMake(scene);
  if (!w) fail("cd_worldMake failed without an injected allocation failure", label);
  for (long k = 0; k < scene->nstep; k++) {
    void *use = bs;
    if (capped && cd_worldForceSubsteps(scene, w, be, bs, scene->dt) > FUZZ_MAX_SUBSTEPS) use = capped;
    cdSolveStats stats;
    st = cd_worldStep(scene, w, be, use, scene->dt, &stats);
    if (st == CD_ERR_NUMERIC || st == CD_ERR_LIMIT) break;
    if (st != CD_OK) fail("cd_worldStep returned an undocumented code", label);
    int bad = cd_worldCheckFinite(w);
    if (bad >= 0) break;
    if (stats.iterations < 0 || stats.substeps < 0) fail("negative solver statistics", label);
    (void)cd_worldKineticEnergy(scene, w);
    (void)cd_worldPotentialEnergy(scene, w);
  }
  cd_worldFree(w);
  be->free(bs);
  if (capped) be->free(capped);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = 0;
  long live = cd_allocLive();
  cdScene scene;
  char err[4096];
  int st = cd_sceneLoad("fuzz.json", text, NULL, 0, &scene, NULL, err, sizeof err);
  free(text);
  if (st != 0) return 0;
  if (scene.nbody <= FUZZ_MAX_BODIES) {
    if (scene.nstep > FUZZ_MAX_STEPS) scene.nstep = FUZZ_MAX_STEPS;
    static const char *const ccp_solvers[] = {"apgd", "pgs", "primal", "ipm"};
    static const char *const ncp_solvers[] = {"nsgs+fp-apgd", "nsgs", "fp-apgd", "fp-pgs", "fp-ipm"};
    cdBackendOptions def = {.friction_dirs = 4, .max_iterations = FUZZ_MAX_ITERATIONS};
    cdBackendOptions bgs = def, ccp = def, ncp = def, pen = def, pen_capped = def;
    bgs.solver = "bgs";
    ccp.solver = ccp_solvers[size % 4];
    ncp.solver = ncp_solvers[size % 5];
    if (!strncmp(ncp.solver, "fp-", 3)) ncp.max_iterations = FUZZ_MAX_CCP_SOLVES;
    pen_capped.substeps = FUZZ_MAX_SUBSTEPS;
    runModel(&scene, &cd_backendLcp, &def, NULL, "lcp");
    runModel(&scene, &cd_backendLcp, &bgs, NULL, "lcp bgs");
    runModel(&scene, &cd_backendCcp, &ccp, NULL, ccp.solver);
    runModel(&scene, &cd_backendNcp, &ncp, NULL, ncp.solver);
    runModel(&scene, &cd_backendPenalty, &pen, &pen_capped, "penalty");
  }
  cd_sceneFree(&scene);
  if (cd_allocLive() != live) fail("cd_malloc blocks leaked", "all");
  return 0;
}
