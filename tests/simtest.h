/* simtest.h: run a scene through the real pipeline inside a test.
 *
 *   cdSim sim;
 *   if (cd_simMake(&sim, SCENE_JSON_TEXT, "lcp", NULL)) return;   // reports the failure
 *   for (long k = 0; k < sim.scene.nstep; k++) cd_simStep(&sim);
 *   ... sim.world->x, ->v, ->contacts ...
 *   cd_simFree(&sim);
 *
 * The scene text goes through the same loader as the command line (io/scene_json.c).
 */
#ifndef CD_SIMTEST_H
#define CD_SIMTEST_H

#include "backend.h"
#include "scene.h"
#include "world.h"

typedef struct cdSim {
  cdScene scene;
  cdWorld *world;
  const cdBackend *backend;
  void *bstate;
  cdSolveStats stats; /* of the last step */
  long nonconverged;  /* steps whose solver did not converge */
  double max_residual;
} cdSim;

/* loads the JSON text (with optional --set style overrides "POINTER=JSON", NULL-terminated),
 * makes the backend (opt may be NULL for the defaults) and the world. Returns 0, or records
 * a test failure with the loader's message and returns -1. */
int cd_simMake(cdSim *sim, const char *scene_json, const char *model, const cdBackendOptions *opt);
int cd_simMakeSet(cdSim *sim, const char *scene_json, const char *model, const cdBackendOptions *opt,
                  const char *const *sets);
/* loads a bundled scene, scenes/NAME (found through $CDSIM_ROOT) */
int cd_simMakeFile(cdSim *sim, const char *name, const char *model, const cdBackendOptions *opt,
                   const char *const *sets);
/* one step at the scene's dt; records a test failure and returns the code on error */
int cd_simStep(cdSim *sim);
/* n steps; stops at the first error */
int cd_simRun(cdSim *sim, long n);
void cd_simFree(cdSim *sim);

/* the body called name, or -1 */
int cd_simBody(const cdSim *sim, const char *name);
/* the lowest point of body i over its shape (z), m */
double cd_simLowestZ(const cdSim *sim, int i);

#endif
