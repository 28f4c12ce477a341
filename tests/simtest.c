/* simtest.c: see simtest.h. */
#include "simtest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "backends.h"
#include "scene_json.h"
#include "test.h"
#include "vec3.h"

int cd_simMakeSet(cdSim *sim, const char *scene_json, const char *model, const cdBackendOptions *opt,
                  const char *const *sets) {
  memset(sim, 0, sizeof *sim);
  cdSceneSet set[32];
  char ptr[32][256];
  int nset = 0;
  for (; sets && sets[nset] && nset < 32; nset++) {
    const char *eq = strchr(sets[nset], '=');
    size_t n = eq ? (size_t)(eq - sets[nset]) : strlen(sets[nset]);
    if (n >= sizeof ptr[0]) n = sizeof ptr[0] - 1;
    memcpy(ptr[nset], sets[nset], n);
    ptr[nset][n] = 0;
    set[nset].pointer = ptr[nset];
    set[nset].json = eq ? eq + 1 : "null";
  }
  char err[4096] = "";
  int st = cd_sceneLoad("test-scene.json", scene_json, set, nset, &sim->scene, NULL, err, sizeof err);
  if (st) {
    cd_testFail(__FILE__, __LINE__, "scene does not load: %s", err);
    return -1;
  }
  sim->backend = cd_backendFind(model);
  if (!sim->backend) {
    cd_testFail(__FILE__, __LINE__, "no backend '%s'", model);
    cd_sceneFree(&sim->scene);
    return -1;
  }
  cdBackendOptions def = {.friction_dirs = 4};
  if (sim->backend->make(&sim->scene, opt ? opt : &def, &sim->bstate, err, sizeof err)) {
    cd_testFail(__FILE__, __LINE__, "backend '%s' refuses the options: %s", model, err);
    cd_sceneFree(&sim->scene);
    return -1;
  }
  sim->world = cd_worldMake(&sim->scene);
  if (!sim->world) {
    cd_testFail(__FILE__, __LINE__, "cd_worldMake failed");
    cd_simFree(sim);
    return -1;
  }
  return 0;
}

int cd_simMake(cdSim *sim, const char *scene_json, const char *model, const cdBackendOptions *opt) {
  return cd_simMakeSet(sim, scene_json, model, opt, NULL);
}

int cd_simMakeFile(cdSim *sim, const char *name, const char *model, const cdBackendOptions *opt,
                   const char *const *sets) {
  const char *root = getenv("CDSIM_ROOT");
  char path[4096];
  snprintf(path, sizeof path, "%s/scenes/%s", root ? root : ".", name);
  FILE *f = fopen(path, "rb");
  if (!f) {
    cd_testFail(__FILE__, __LINE__, "cannot open %s", path);
    memset(sim, 0, sizeof *sim);
    return -1;
  }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *text = malloc((size_t)n + 1);
  size_t got = text ? fread(text, 1, (size_t)n, f) : 0;
  fclose(f);
  if (!text) return -1;
  text[got] = 0;
  int st = cd_simMakeSet(sim, text, model, opt, sets);
  free(text);
  return st;
}

int cd_simStep(cdSim *sim) {
  int st = cd_worldStep(&sim->scene, sim->world, sim->backend, sim->bstate, sim->scene.dt, &sim->stats);
  if (st) {
    cd_testFail(__FILE__, __LINE__, "step %ld failed with %d", sim->world->step + 1, st);
    return st;
  }
  if (!sim->stats.converged) sim->nonconverged++;
  if (sim->stats.residual > sim->max_residual) sim->max_residual = sim->stats.residual;
  return 0;
}

int cd_simRun(cdSim *sim, long n) {
  for (long k = 0; k < n; k++) {
    int st = cd_simStep(sim);
    if (st) return st;
  }
  return 0;
}

void cd_simFree(cdSim *sim) {
  if (sim->backend && sim->bstate) sim->backend->free(sim->bstate);
  cd_worldFree(sim->world);
  cd_sceneFree(&sim->scene);
  memset(sim, 0, sizeof *sim);
}

int cd_simBody(const cdSim *sim, const char *name) {
  for (int i = 0; i < sim->scene.nbody; i++)
    if (strcmp(sim->scene.body[i].name, name) == 0) return i;
  return -1;
}

double cd_simLowestZ(const cdSim *sim, int i) {
  const cdBodyDef *b = &sim->scene.body[i];
  const double *x = &sim->world->x[3 * i], *R = &sim->world->R[9 * i];
  if (b->shape == CD_SPHERE) return x[2] - b->radius;
  /* the lowest corner: z-row of R times the half extents with the signs that lower it */
  return x[2] - fabs(R[6]) * b->half[0] - fabs(R[7]) * b->half[1] - fabs(R[8]) * b->half[2];
}
