/* test_materials.c: the mixing rule (scene.c cd_materialMix): by value, never by name; a
 * material mixed with an identical one keeps its values; a contact of two stiffness
 * exponents is refused by the penalty model. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "backends.h"
#include "scene_json.h"
#include "simtest.h"
#include "test.h"

static int sameValues(const cdMaterial *a, const cdMaterial *b) {
  return a->friction == b->friction && a->restitution == b->restitution && a->stiffness == b->stiffness &&
         a->damping == b->damping && a->stiffness_exponent == b->stiffness_exponent &&
         a->impact_model == b->impact_model && a->min_impact_velocity == b->min_impact_velocity &&
         a->friction_regularization == b->friction_regularization && a->pull_off_force == b->pull_off_force &&
         a->plasticity_ratio == b->plasticity_ratio && a->adhesion_coefficient == b->adhesion_coefficient &&
         a->adhesion_exponent == b->adhesion_exponent;
}

/* values that do not round-trip through the harmonic mean exactly (2 k k / (k + k)) */
static cdMaterial oddMaterial(const char *name) {
  cdMaterial m = cd_materialDefault();
  snprintf(m.name, sizeof m.name, "%s", name);
  m.friction = 0.37;
  m.restitution = 0.61;
  m.stiffness = 3.3e7;
  m.damping = 123.4;
  m.stiffness_exponent = 1.5;
  m.impact_model = 2;
  m.min_impact_velocity = 0.01;
  m.friction_regularization = 3e-4;
  m.pull_off_force = 0.7;
  m.plasticity_ratio = 0.3;
  m.adhesion_coefficient = 11;
  m.adhesion_exponent = 1.3;
  return m;
}

CD_TEST(materialMixedWithAnIdenticalOneUnderAnotherNameKeepsItsValues) {
  cdMaterial a = oddMaterial("a"), b = oddMaterial("b"), out;
  cd_materialMix(&a, &b, &out);
  CHECK(sameValues(&out, &a));
  cdMaterial d = cd_materialDefault(), e = cd_materialDefault();
  snprintf(e.name, sizeof e.name, "steel");
  cd_materialMix(&d, &e, &out);
  CHECK(sameValues(&out, &d));
}

CD_TEST(materialMixOfDifferentValuesFollowsTheDocumentedRule) {
  cdMaterial a = oddMaterial("a"), b = oddMaterial("a"), out; /* the same name: it must not matter */
  b.friction = 0.8;
  b.restitution = 0.4;
  b.stiffness = 1.1e7;
  b.damping = 0;
  b.impact_model = 1;
  b.pull_off_force = 0.1;
  cd_materialMix(&a, &b, &out);
  CHECK_NEAR(out.friction, sqrt(0.37 * 0.8), 1e-15);
  CHECK(out.restitution == 0.4);
  CHECK_NEAR(out.stiffness, 2 * 3.3e7 * 1.1e7 / (3.3e7 + 1.1e7), 1e-8); /* 1.65e7 */
  CHECK(out.damping == 0);                                             /* harmonic mean with 0 */
  CHECK(out.impact_model == 2);
  CHECK_NEAR(out.pull_off_force, 0.4, 1e-15);
  CHECK(out.stiffness_exponent == 1.5);
  /* symmetric */
  cdMaterial out2;
  cd_materialMix(&b, &a, &out2);
  CHECK(sameValues(&out, &out2));
}

/* seed 002's mini example with the ball and the fixed sphere in two materials of identical
 * values: it rests at 1.1 - m g / k as with one material (the review measured twice the
 * sink, 1.962e-4 m, when the mix went by name) */
CD_TEST(identicalMaterialsUnderTwoNamesSinkAsOne) {
  static const char *const sets[] = {"/materials/other={\"friction\": 0, \"stiffness\": 1e5, \"damping\": 1e3}",
                                     "/bodies/0/material=\"other\"", NULL};
  cdSim s;
  if (cd_simMakeFile(&s, "mini-example.json", "penalty", NULL, sets)) return;
  if (cd_simRun(&s, s.scene.nstep)) {
    cd_simFree(&s);
    return;
  }
  int ball = cd_simBody(&s, "ball");
  double sink = 1.1 - s.world->x[3 * ball + 2];
  printf("    two names, one value: sink %.6g m (m g / k = %.6g m)\n", sink, 9.81 / 1e5);
  CHECK_NEAR(sink, 9.81 / 1e5, 1e-6); /* the same tolerance as the one-material test */
  cd_simFree(&s);
}

static const char *kTwoExponents =
    "{\"dt\": 0.001, \"steps\": 2, \"ground\": {\"material\": \"soft\"},"
    " \"materials\": {\"soft\": {\"stiffness_exponent\": 1.5}, \"hard\": {\"stiffness\": 1e7}},"
    " \"bodies\": [{\"shape\": \"sphere\", \"radius\": 0.1, \"mass\": 1, \"position\": [0, 0, 0.1],"
    "   \"material\": \"hard\"}]}";

/* k_c is in N/m^n: the stiffnesses of two exponents have different units and no mean */
CD_TEST(penaltyRefusesAContactOfTwoStiffnessExponents) {
  cdScene scene;
  char err[1024] = "";
  CHECK(cd_sceneLoad("two.json", kTwoExponents, NULL, 0, &scene, NULL, err, sizeof err) == 0);
  const cdBackend *pen = cd_backendFind("penalty"), *lcp = cd_backendFind("lcp");
  void *st = NULL;
  cdBackendOptions opt = {0};
  int rc = pen->make(&scene, &opt, &st, err, sizeof err);
  CHECK(rc == CD_ERR_USAGE && st == NULL);
  CHECK_MSG(strstr(err, "\"soft\"") && strstr(err, "\"hard\"") && strstr(err, "1.5") &&
                strstr(err, "stiffness_exponent"),
            "message: %s", err);
  if (st) pen->free(st);
  /* the impulse models do not use the stiffness: no objection */
  st = NULL;
  CHECK(lcp->make(&scene, &opt, &st, err, sizeof err) == CD_OK);
  if (st) lcp->free(st);
  cd_sceneFree(&scene);
  /* exponents that never meet are fine: a material no body uses; two fixed bodies */
  const char *apart[] = {
      "{\"materials\": {\"soft\": {\"stiffness_exponent\": 1.5}, \"hard\": {}}, \"ground\": {\"material\": \"hard\"},"
      " \"bodies\": [{\"shape\": \"sphere\", \"radius\": 0.1, \"mass\": 1, \"position\": [0, 0, 1],"
      "   \"material\": \"hard\"}]}",
      "{\"materials\": {\"soft\": {\"stiffness_exponent\": 1.5}, \"hard\": {}}, \"ground\": {\"material\": \"hard\"},"
      " \"bodies\": [{\"shape\": \"sphere\", \"radius\": 0.1, \"fixed\": true, \"position\": [0, 0, 0.1],"
      "   \"material\": \"soft\"}]}"};
  for (int k = 0; k < 2; k++) {
    CHECK(cd_sceneLoad("apart.json", apart[k], NULL, 0, &scene, NULL, err, sizeof err) == 0);
    st = NULL;
    CHECK_MSG(pen->make(&scene, &opt, &st, err, sizeof err) == CD_OK, "%s", err);
    if (st) pen->free(st);
    cd_sceneFree(&scene);
  }
}
