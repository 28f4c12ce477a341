/* test_scene_json.c: the scene file loader (io/scene_json.c), JSON Pointers and --set
 * (io/json_pointer.c), the golden invalid inputs, the bundled scenes, scripts/make-pile.
 *
 * Golden files: tests/golden/invalid/NAME.json must fail to load (status 2) with exactly the
 * lines of NAME.err. Messages name the file as the caller gave it, so the test changes into
 * that directory and loads "NAME.json": the expected text then holds no machine-specific
 * path. The working directory is restored before the test returns.
 */
#include <cJSON.h>
#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "alloc.h"
#include "json_pointer.h"
#include "scene_json.h"
#include "test.h"

/* ------------------------------------------------------------------------------------------
 * helpers (plain malloc: the tests' own memory stays out of cd_allocLive) */

static const char *root(void) {
  const char *r = getenv("CDSIM_ROOT");
  return r && *r ? r : ".";
}

static char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  for (;;) {
    if (n + 1 >= cap) buf = realloc(buf, cap *= 2);
    size_t got = fread(buf + n, 1, cap - 1 - n, f);
    if (got == 0) break;
    n += got;
  }
  fclose(f);
  buf[n] = '\0';
  if (len) *len = n;
  return buf;
}

/* runs a shell command and returns its stdout (malloc), NULL when it fails */
static char *run(const char *cmd) {
  FILE *p = popen(cmd, "r");
  if (!p) return NULL;
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  for (;;) {
    if (n + 1 >= cap) buf = realloc(buf, cap *= 2);
    size_t got = fread(buf + n, 1, cap - 1 - n, p);
    if (got == 0) break;
    n += got;
  }
  buf[n] = '\0';
  if (pclose(p) != 0) {
    free(buf);
    return NULL;
  }
  return buf;
}

static int loadText(const char *text, const cdSceneSet *sets, int nset, cdScene *s, char **eff, char *err,
                    size_t errlen) {
  return cd_sceneLoad("scene.json", text, sets, nset, s, eff, err, errlen);
}

/* the scene of DESIGN §2, verbatim */
static const char kDesignScene[] =
    "{\n"
    "  \"model\": \"lcp\",\n"
    "  \"gravity\": [0, 0, -9.81],\n"
    "  \"dt\": 0.01,\n"
    "  \"duration\": 1.0,\n"
    "  \"ground\": {\"height\": 0.0, \"material\": \"steel\"},\n"
    "  \"materials\": {\n"
    "    \"steel\": {\"friction\": 0.5, \"restitution\": 1.0,\n"
    "              \"stiffness\": 1e6, \"damping\": 2e3, \"stiffness_exponent\": 1.0,\n"
    "              \"impact_model\": 0, \"min_impact_velocity\": 0.0,\n"
    "              \"friction_regularization\": 0.001,\n"
    "              \"pull_off_force\": 0.0, \"plasticity_ratio\": 0.0,\n"
    "              \"adhesion_coefficient\": 0.0, \"adhesion_exponent\": 1.0}\n"
    "  },\n"
    "  \"bodies\": [\n"
    "    {\"name\": \"cube\", \"shape\": \"cube\", \"size\": 0.2, \"mass\": 1.0,\n"
    "     \"position\": [0, 0, 0.1], \"orientation\": [1, 0, 0, 0],\n"
    "     \"velocity\": [2, 0, 0], \"angular_velocity\": [0, 0, 0], \"material\": \"steel\"},\n"
    "    {\"name\": \"ball\", \"shape\": \"sphere\", \"radius\": 0.1, \"density\": 7800,\n"
    "     \"position\": [0.5, 0, 0.1]},\n"
    "    {\"name\": \"anchor\", \"shape\": \"sphere\", \"radius\": 1.0, \"fixed\": true, \"position\": [0, 0, -1]}\n"
    "  ]\n"
    "}\n";

static const char kOneBall[] = "{\"bodies\": [{\"shape\": \"sphere\", \"radius\": 0.1, \"mass\": 1, \"position\": [0, 0, 1]}]}";

static int sameMaterialValues(const cdMaterial *a, const cdMaterial *b) {
  return a->friction == b->friction && a->restitution == b->restitution && a->stiffness == b->stiffness &&
         a->damping == b->damping && a->stiffness_exponent == b->stiffness_exponent &&
         a->impact_model == b->impact_model && a->min_impact_velocity == b->min_impact_velocity &&
         a->friction_regularization == b->friction_regularization && a->pull_off_force == b->pull_off_force &&
         a->plasticity_ratio == b->plasticity_ratio && a->adhesion_coefficient == b->adhesion_coefficient &&
         a->adhesion_exponent == b->adhesion_exponent;
}

/* ------------------------------------------------------------------------------------------
 * golden invalid inputs */

static int byString(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

CD_TEST(goldenInvalidScenesGiveTheirExactMessages) {
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/tests/golden/invalid", root());
  DIR *d = opendir(dir);
  if (!d) CD_SKIP("tests/golden/invalid not found (is CDSIM_ROOT set?)");
  char *names[512];
  int n = 0;
  for (struct dirent *e; (e = readdir(d)) && n < 512;) {
    size_t len = strlen(e->d_name);
    if (len > 5 && strcmp(e->d_name + len - 5, ".json") == 0) names[n++] = strdup(e->d_name);
  }
  closedir(d);
  qsort(names, (size_t)n, sizeof *names, byString);
  CHECK_MSG(n >= 25, "only %d golden cases", n);

  int here = open(".", O_RDONLY);
  CHECK(here >= 0 && chdir(dir) == 0);
  for (int i = 0; i < n; i++) {
    char errpath[600];
    snprintf(errpath, sizeof errpath, "%.*s.err", (int)(strlen(names[i]) - 5), names[i]);
    char *want = slurp(errpath, NULL);
    CHECK_MSG(want != NULL, "%s has no .err file", names[i]);
    long live = cd_allocLive();
    cdScene s;
    char *eff = (char *)1;
    char err[8192];
    int rc = cd_sceneLoad(names[i], NULL, NULL, 0, &s, &eff, err, sizeof err);
    CHECK_MSG(rc == 2, "%s: status %d, want 2", names[i], rc);
    CHECK_MSG(eff == NULL, "%s: effective text set on failure", names[i]);
    CHECK_MSG(s.nbody == 0 && s.body == NULL && s.material == NULL, "%s: scene not left empty", names[i]);
    CHECK_MSG(cd_allocLive() == live, "%s: %ld blocks leaked", names[i], cd_allocLive() - live);
    if (want) CHECK_MSG(strcmp(err, want) == 0, "%s:\n got: %s want: %s", names[i], err, want);
    free(want);
    free(names[i]);
  }
  if (here >= 0) {
    CHECK(fchdir(here) == 0);
    close(here);
  }
  printf("    %d golden invalid scenes\n", n);
}

/* ------------------------------------------------------------------------------------------
 * valid scenes */

CD_TEST(designSceneLoadsWithExactValues) {
  cdScene s;
  char err[2048];
  char *eff = NULL;
  long live = cd_allocLive();
  int rc = loadText(kDesignScene, NULL, 0, &s, &eff, err, sizeof err);
  CHECK_MSG(rc == 0, "status %d: %s", rc, err);
  if (rc != 0) return;
  CHECK(strcmp(s.model, "lcp") == 0);
  CHECK(s.gravity[0] == 0 && s.gravity[1] == 0 && s.gravity[2] == -9.81);
  CHECK(s.dt == 0.01);
  CHECK(s.nstep == 100);
  CHECK(s.has_ground == 1 && s.ground_height == 0.0 && s.ground_material == 1);
  CHECK(s.nmaterial == 2);
  CHECK(strcmp(s.material[0].name, "default") == 0);
  cdMaterial def = cd_materialDefault();
  CHECK(sameMaterialValues(&s.material[0], &def));
  const cdMaterial *m = &s.material[1];
  CHECK(strcmp(m->name, "steel") == 0);
  CHECK(m->friction == 0.5 && m->restitution == 1.0 && m->stiffness == 1e6 && m->damping == 2e3);
  CHECK(m->stiffness_exponent == 1.0 && m->impact_model == 0 && m->min_impact_velocity == 0.0);
  CHECK(m->friction_regularization == 0.001 && m->pull_off_force == 0 && m->plasticity_ratio == 0);
  CHECK(m->adhesion_coefficient == 0 && m->adhesion_exponent == 1.0);
  CHECK(s.nbody == 3);
  const cdBodyDef *cube = &s.body[0], *ball = &s.body[1], *anchor = &s.body[2];
  CHECK(strcmp(cube->name, "cube") == 0 && cube->shape == CD_BOX);
  CHECK(cube->half[0] == 0.1 && cube->half[1] == 0.1 && cube->half[2] == 0.1);
  CHECK(cube->mass == 1.0 && cube->density == 0 && !cube->fixed && !cube->hollow);
  /* solid box: m (b^2 + c^2) / 12 with edges 0.2 */
  CHECK_NEAR(cube->inertia[0], (0.04 + 0.04) / 12, 1e-15);
  CHECK(cube->position[2] == 0.1 && cube->velocity[0] == 2 && cube->material == 1);
  CHECK(cube->orientation[0] == 1 && cube->orientation[1] == 0 && cube->orientation[3] == 0);
  CHECK(strcmp(ball->name, "ball") == 0 && ball->shape == CD_SPHERE && ball->radius == 0.1);
  CHECK(ball->density == 7800 && ball->material == 0 && ball->position[0] == 0.5);
  CHECK(strcmp(anchor->name, "anchor") == 0 && anchor->fixed && anchor->mass == 0 && anchor->radius == 1.0);
  CHECK(anchor->position[2] == -1);
  CHECK(eff != NULL && strchr(eff, '\n') == NULL);
  cd_free(eff);
  cd_sceneFree(&s);
  CHECK(cd_allocLive() == live);
}

CD_TEST(defaultsApplyToAMinimalScene) {
  cdScene s;
  char err[2048];
  int rc = loadText(kOneBall, NULL, 0, &s, NULL, err, sizeof err);
  CHECK_MSG(rc == 0, "%s", err);
  if (rc) return;
  CHECK(strcmp(s.model, "lcp") == 0);
  CHECK(s.gravity[0] == 0 && s.gravity[1] == 0 && s.gravity[2] == -9.81);
  CHECK(s.dt == 0.01 && s.nstep == 100); /* duration 1 s */
  CHECK(!s.has_ground && s.nmaterial == 1);
  const cdBodyDef *b = &s.body[0];
  CHECK(strcmp(b->name, "body0") == 0 && b->material == 0 && !b->fixed && !b->hollow);
  CHECK(b->orientation[0] == 1 && b->orientation[1] == 0 && b->orientation[2] == 0 && b->orientation[3] == 0);
  CHECK(b->velocity[0] == 0 && b->velocity[1] == 0 && b->velocity[2] == 0);
  CHECK(b->angular_velocity[0] == 0 && b->angular_velocity[2] == 0);
  cd_sceneFree(&s);

  /* a material that gives no parameter has every default, and the ground its height 0 */
  const char *t = "{\"ground\": {}, \"materials\": {\"m\": {}}, \"bodies\": [{\"shape\": \"cube\", \"size\": 1, "
                  "\"mass\": 2, \"position\": [0, 0, 0.5], \"material\": \"m\"}]}";
  rc = loadText(t, NULL, 0, &s, NULL, err, sizeof err);
  CHECK_MSG(rc == 0, "%s", err);
  if (rc) return;
  cdMaterial def = cd_materialDefault();
  CHECK(s.nmaterial == 2 && strcmp(s.material[1].name, "m") == 0 && sameMaterialValues(&s.material[1], &def));
  CHECK(s.has_ground && s.ground_height == 0 && s.ground_material == 0 && s.body[0].material == 1);
  cd_sceneFree(&s);
}

CD_TEST(densityGivesMassOfTheShape) {
  const char *t = "{\"bodies\": [{\"shape\": \"sphere\", \"radius\": 0.1, \"density\": 7800, \"position\": [0, 0, 1]},"
                  " {\"shape\": \"box\", \"size\": [0.1, 0.2, 0.3], \"density\": 1000, \"position\": [1, 0, 1]}]}";
  cdScene s;
  char err[2048];
  int rc = loadText(t, NULL, 0, &s, NULL, err, sizeof err);
  CHECK_MSG(rc == 0, "%s", err);
  if (rc) return;
  double m = 4.0 / 3.0 * M_PI * 0.1 * 0.1 * 0.1 * 7800;
  CHECK_NEAR(s.body[0].mass, m, 1e-12 * m);
  CHECK_NEAR(s.body[0].inertia[0], 0.4 * m * 0.01, 1e-12 * m);
  CHECK_NEAR(s.body[1].mass, 0.1 * 0.2 * 0.3 * 1000, 1e-12);
  CHECK(s.body[1].half[0] == 0.05 && s.body[1].half[1] == 0.1 && s.body[1].half[2] == 0.15);
  cd_sceneFree(&s);
}

CD_TEST(timeAndOrientationRules) {
  cdScene s;
  char err[2048];
  struct {
    const char *time;
    long nstep;
  } cases[] = {{"\"dt\": 0.01, \"duration\": 1.5", 150}, /* 1.5/0.01 = 150.00000000000003 */
               {"\"dt\": 0.01, \"duration\": 1.005", 101}, /* not a whole number of steps: rounded up */
               {"\"dt\": 0.002, \"duration\": 2", 1000},
               {"\"dt\": 0.1, \"steps\": 7", 7},
               {"\"duration\": 0", 0}};
  for (int i = 0; i < 5; i++) {
    char t[512];
    snprintf(t, sizeof t, "{%s, \"bodies\": [{\"shape\": \"sphere\", \"radius\": 0.1, \"mass\": 1, \"position\": [0, 0, 1]}]}",
             cases[i].time);
    int rc = loadText(t, NULL, 0, &s, NULL, err, sizeof err);
    CHECK_MSG(rc == 0 && s.nstep == cases[i].nstep, "%s: rc %d nstep %ld, want %ld", cases[i].time, rc, s.nstep,
              cases[i].nstep);
    cd_sceneFree(&s);
  }
  /* a quaternion off unit length by less than 1e-3 is normalized */
  const char *q = "{\"bodies\": [{\"shape\": \"cube\", \"size\": 0.2, \"mass\": 1, \"position\": [0, 0, 1],"
                  " \"orientation\": [0.7075, 0, 0, 0.7075]}]}";
  int rc = loadText(q, NULL, 0, &s, NULL, err, sizeof err);
  CHECK_MSG(rc == 0, "%s", err);
  if (rc == 0) {
    const double *o = s.body[0].orientation;
    CHECK_NEAR(o[0] * o[0] + o[3] * o[3], 1.0, 1e-15);
    CHECK_NEAR(o[0], sqrt(0.5), 1e-15);
    cd_sceneFree(&s);
  }
}

/* ------------------------------------------------------------------------------------------
 * JSON Pointers and --set */

CD_TEST(pointerResolvesEscapedTokensAndIndices) {
  cJSON *doc = cJSON_Parse("{\"a/b\": 1, \"m~n\": 2, \"arr\": [10, 20, 30], \"\": 4, \"o\": {\"p\": {\"q\": 5}}}");
  CHECK(doc != NULL);
  if (!doc) return;
  cdJsonPointerStatus st;
  size_t fail;
  CHECK(cd_jsonPointerGet(doc, "", &st, &fail) == doc && st == CD_JP_OK);
  cJSON *v = cd_jsonPointerGet(doc, "/a~1b", &st, &fail);
  CHECK(v && v->valuedouble == 1);
  v = cd_jsonPointerGet(doc, "/m~0n", &st, &fail);
  CHECK(v && v->valuedouble == 2);
  v = cd_jsonPointerGet(doc, "/arr/2", &st, &fail);
  CHECK(v && v->valuedouble == 30);
  v = cd_jsonPointerGet(doc, "/", &st, &fail);
  CHECK(v && v->valuedouble == 4);
  v = cd_jsonPointerGet(doc, "/o/p/q", &st, &fail);
  CHECK(v && v->valuedouble == 5);
  /* leading zeros, "-" and out-of-range indices name nothing */
  CHECK(!cd_jsonPointerGet(doc, "/arr/01", &st, &fail) && st == CD_JP_MISSING && fail == 7);
  CHECK(!cd_jsonPointerGet(doc, "/arr/-", &st, &fail) && st == CD_JP_MISSING);
  CHECK(!cd_jsonPointerGet(doc, "/arr/3", &st, &fail) && st == CD_JP_MISSING);
  /* the failing prefix is the shortest one that is missing */
  CHECK(!cd_jsonPointerGet(doc, "/o/x/q", &st, &fail) && st == CD_JP_MISSING && fail == 4);
  CHECK(!cd_jsonPointerGet(doc, "/arr/0/x", &st, &fail) && st == CD_JP_NOT_CONTAINER && fail == 6);
  CHECK(!cd_jsonPointerGet(doc, "/m~2n", &st, &fail) && st == CD_JP_SYNTAX);
  CHECK(!cd_jsonPointerGet(doc, "a", &st, &fail) && st == CD_JP_SYNTAX);
  CHECK(!cd_jsonPointerGet(doc, "/x~", &st, &fail) && st == CD_JP_SYNTAX);
  char esc[16];
  CHECK(cd_jsonPointerEscape("a/b~c", esc, sizeof esc) == 7 && strcmp(esc, "a~1b~0c") == 0);
  CHECK(cd_jsonPointerEscape("a/b~c", esc, 4) == 7 && strcmp(esc, "a~1") == 0);
  cJSON_Delete(doc);
}

CD_TEST(setReplacesAddsAndAppends) {
  cJSON *doc = cJSON_Parse("{\"arr\": [1, 2], \"o\": {\"k\": 1}}");
  CHECK(doc != NULL);
  if (!doc) return;
  size_t fail;
  CHECK(cd_jsonPointerSet(&doc, "/arr/0", cJSON_CreateNumber(7), &fail) == CD_JP_OK);
  CHECK(cd_jsonPointerSet(&doc, "/arr/-", cJSON_CreateNumber(8), &fail) == CD_JP_OK);
  CHECK(cd_jsonPointerSet(&doc, "/arr/3", cJSON_CreateNumber(9), &fail) == CD_JP_OK);
  CHECK(cd_jsonPointerSet(&doc, "/o/new~1key", cJSON_CreateString("v"), &fail) == CD_JP_OK);
  CHECK(cd_jsonPointerSet(&doc, "/o/k", cJSON_CreateNumber(2), &fail) == CD_JP_OK);
  cJSON *five = cJSON_CreateNumber(5);
  CHECK(cd_jsonPointerSet(&doc, "/arr/9", five, &fail) == CD_JP_MISSING && fail == 6);
  CHECK(cd_jsonPointerSet(&doc, "/nope/x", five, &fail) == CD_JP_MISSING && fail == 5);
  cJSON_Delete(five);
  char *text = cJSON_PrintUnformatted(doc);
  CHECK_MSG(strcmp(text, "{\"arr\":[7,2,8,9],\"o\":{\"k\":2,\"new/key\":\"v\"}}") == 0, "%s", text);
  cJSON_free(text);
  cJSON *other = cJSON_CreateArray();
  CHECK(cd_jsonPointerSet(&doc, "", other, &fail) == CD_JP_OK && doc == other);
  cJSON_Delete(doc);
}

static double pointerNumber(const char *json, const char *pointer) {
  cJSON *doc = cJSON_Parse(json);
  const cJSON *v = doc ? cd_jsonPointerGet(doc, pointer, NULL, NULL) : NULL;
  double x = cJSON_IsNumber(v) ? v->valuedouble : NAN;
  cJSON_Delete(doc);
  return x;
}

CD_TEST(setOverridesReachTheSceneAndTheEffectiveJson) {
  cdSceneSet sets[] = {{"/bodies/0/velocity/0", "3"},
                       {"/materials/steel/friction", "0.3"},
                       {"/bodies/1/velocity", "[0, 1, 0]"},
                       {"/dt", "0.005"}};
  cdScene s;
  char err[2048];
  char *eff = NULL;
  int rc = loadText(kDesignScene, sets, 4, &s, &eff, err, sizeof err);
  CHECK_MSG(rc == 0, "%s", err);
  if (rc) return;
  CHECK(s.body[0].velocity[0] == 3 && s.material[1].friction == 0.3);
  CHECK(s.body[1].velocity[1] == 1 && s.dt == 0.005 && s.nstep == 200);
  CHECK(pointerNumber(eff, "/bodies/0/velocity/0") == 3);
  CHECK(pointerNumber(eff, "/materials/steel/friction") == 0.3);
  CHECK(pointerNumber(eff, "/bodies/1/velocity/1") == 1);

  /* the effective text is itself a scene that loads to the same values */
  cdScene again;
  rc = loadText(eff, NULL, 0, &again, NULL, err, sizeof err);
  CHECK_MSG(rc == 0, "%s", err);
  if (rc == 0) {
    CHECK(again.nbody == s.nbody && again.nstep == s.nstep && again.dt == s.dt);
    for (int i = 0; i < s.nbody; i++)
      CHECK(memcmp(&again.body[i], &s.body[i], sizeof s.body[i]) == 0);
    for (int i = 0; i < s.nmaterial; i++)
      CHECK(sameMaterialValues(&again.material[i], &s.material[i]));
    cd_sceneFree(&again);
  }
  cd_free(eff);
  cd_sceneFree(&s);

  /* escaped tokens name materials whose names hold '/' and '~' */
  const char *t = "{\"materials\": {\"a/b\": {}, \"c~d\": {}}, \"bodies\": [{\"shape\": \"sphere\", \"radius\": 0.1,"
                  " \"mass\": 1, \"position\": [0, 0, 1], \"material\": \"c~d\"}]}";
  cdSceneSet esc[] = {{"/materials/a~1b/friction", "0.2"}, {"/materials/c~0d/friction", "0.4"}};
  rc = loadText(t, esc, 2, &s, NULL, err, sizeof err);
  CHECK_MSG(rc == 0, "%s", err);
  if (rc == 0) {
    CHECK(strcmp(s.material[1].name, "a/b") == 0 && s.material[1].friction == 0.2);
    CHECK(strcmp(s.material[2].name, "c~d") == 0 && s.material[2].friction == 0.4 && s.body[0].material == 2);
    cd_sceneFree(&s);
  }
}

CD_TEST(badOverridesGiveExactMessages) {
  struct {
    cdSceneSet set;
    const char *want;
  } cases[] = {
      {{"/bodies/9/radius", "0.1"}, "--set /bodies/9/radius=0.1: /bodies/9 does not exist in scene.json\n"},
      {{"/x", "abc"}, "--set /x=abc: invalid JSON value\n"},
      {{"/dt", "0.1 0.2"}, "--set /dt=0.1 0.2: invalid JSON value\n"},
      {{"/dt/x", "1"}, "--set /dt/x=1: /dt is not an object or array in scene.json\n"},
      {{"dt", "1"}, "--set dt=1: invalid pointer: it must be empty or start with '/'\n"},
      {{"/materials/st~eel/friction", "1"}, "--set /materials/st~eel/friction=1: invalid pointer: '~' must be followed by 0 or 1\n"},
      /* a new key is added, then validation rejects it */
      {{"/bodies/0/colour", "\"red\""}, "scene.json: /bodies/0/colour: unknown key\n"},
      {{"/bodies/1/radius", "-0.5"}, "scene.json: /bodies/1/radius: must be > 0 (got -0.5)\n"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    cdScene s;
    char err[2048];
    char *eff = NULL;
    long live = cd_allocLive();
    int rc = loadText(kDesignScene, &cases[i].set, 1, &s, &eff, err, sizeof err);
    CHECK_MSG(rc == 2, "%s: status %d", cases[i].set.pointer, rc);
    CHECK_MSG(strcmp(err, cases[i].want) == 0, "got: %s want: %s", err, cases[i].want);
    CHECK(eff == NULL && cd_allocLive() == live);
  }
  /* every bad override is reported, not only the first */
  cdSceneSet two[] = {{"/a/b", "1"}, {"/dt", "x"}};
  cdScene s;
  char err[2048];
  int rc = loadText(kDesignScene, two, 2, &s, NULL, err, sizeof err);
  CHECK(rc == 2);
  CHECK_MSG(strcmp(err, "--set /a/b=1: /a does not exist in scene.json\n--set /dt=x: invalid JSON value\n") == 0, "%s", err);
}

/* ------------------------------------------------------------------------------------------
 * robustness */

CD_TEST(everyFailedAllocationGivesOutOfMemoryWithoutLeaks) {
  cdSceneSet sets[] = {{"/bodies/0/velocity", "[1, 2, 3]"}, {"/bodies/1/velocity", "[0, 0, 1]"}};
  char path[4096];
  snprintf(path, sizeof path, "%s/scenes/sliding-cube.json", root());
  struct {
    const char *path, *text;
    int nset;
  } runs[] = {{"scene.json", kDesignScene, 2}, {path, NULL, 1}};
  for (int r = 0; r < 2; r++) {
    cdScene s;
    char err[2048];
    char *eff = NULL;
    long live = cd_allocLive(), count = cd_allocCount();
    int rc = cd_sceneLoad(runs[r].path, runs[r].text, sets, runs[r].nset, &s, &eff, err, sizeof err);
    long nalloc = cd_allocCount() - count;
    CHECK_MSG(rc == 0, "%s", err);
    if (rc) continue;
    cd_free(eff);
    cd_sceneFree(&s);
    CHECK(cd_allocLive() == live);
    int bad = 0;
    for (long k = 1; k <= nalloc; k++) {
      cd_allocFailAt(k);
      eff = NULL;
      rc = cd_sceneLoad(runs[r].path, runs[r].text, sets, runs[r].nset, &s, &eff, err, sizeof err);
      cd_allocFailAt(0);
      if (rc != -1 || eff != NULL || cd_allocLive() != live || strstr(err, "out of memory") == NULL) {
        if (bad++ < 5)
          cd_testFail(__FILE__, __LINE__, "allocation %ld of %ld failed: status %d, %ld leaked, err %s", k, nalloc, rc,
                      cd_allocLive() - live, err);
      }
      if (rc == 0) {
        cd_free(eff);
        cd_sceneFree(&s);
      }
    }
    printf("    %s: %ld allocations, each failed once\n", r ? "sliding-cube.json + 1 --set" : "DESIGN scene + 2 --set",
           nalloc);
  }
}

CD_TEST(errorBufferIsNeverOverrunAndMissingFilesAreReported) {
  const char *bad = "{\"dt\": -1, \"bodies\": []}";
  cdScene s;
  int rc = loadText(bad, NULL, 0, &s, NULL, NULL, 0);
  CHECK(rc == 2);
  char small[16];
  memset(small, 'x', sizeof small);
  rc = loadText(bad, NULL, 0, &s, NULL, small, 8);
  /* no whole line fits in 8 bytes: nothing is written but the terminator */
  CHECK(rc == 2 && small[0] == '\0' && small[8] == 'x');
  char err[512];
  rc = cd_sceneLoad("no-such-dir/no-such-scene.json", NULL, NULL, 0, &s, NULL, err, sizeof err);
  CHECK(rc == 2);
  CHECK_MSG(strcmp(err, "no-such-dir/no-such-scene.json: cannot open: No such file or directory\n") == 0, "%s", err);
  rc = cd_sceneLoad(root(), NULL, NULL, 0, &s, NULL, err, sizeof err);
  CHECK_MSG(rc == 2 && strstr(err, "cannot read: Is a directory") != NULL, "%s", err);
}

/* a tiny deterministic generator for the mutation test */
static unsigned long lcg(unsigned long *x) {
  *x = *x * 6364136223846793005UL + 1442695040888963407UL;
  return *x >> 33;
}

CD_TEST(mutatedScenesNeverCrashAndSyntaxAgreesWithCJSON) {
  size_t n0 = strlen(kDesignScene);
  char *buf = malloc(n0 + 64);
  static const char interesting[] = "{}[]\",:0123456789.-+eE\\ \n\tu/*'truefalsenull\x01\x7f\xc3\xa9\xff";
  unsigned long seed = 12345;
  int nsyntax = 0, nvalue = 0, nok = 0, failures = 0;
  long live = cd_allocLive();
  for (int it = 0; it < 4000; it++) {
    memcpy(buf, kDesignScene, n0 + 1);
    size_t n = n0;
    int nmut = 1 + (int)(lcg(&seed) % 3);
    for (int m = 0; m < nmut; m++) {
      size_t at = lcg(&seed) % n;
      unsigned long kind = lcg(&seed) % 3;
      char c = interesting[lcg(&seed) % (sizeof interesting - 1)];
      if (kind == 0 && n > 1) {
        memmove(buf + at, buf + at + 1, n - at);
        n--;
      } else if (kind == 1) {
        memmove(buf + at + 1, buf + at, n - at + 1);
        buf[at] = c;
        n++;
      } else {
        buf[at] = c;
      }
    }
    cdScene s;
    char err[4096];
    char *eff = NULL;
    int rc = loadText(buf, NULL, 0, &s, &eff, err, sizeof err);
    cJSON *j = cJSON_ParseWithLength(buf, n);
    int syntax = rc == 2 && strncmp(err, "scene.json:", 11) == 0 && err[11] >= '1' && err[11] <= '9';
    /* when cJSON rejects the text, so must our scanner (else the loader would say "out of memory") */
    if ((rc != 0 && rc != 2) || (!j && !syntax) || (rc == 2 && err[0] == '\0')) {
      if (failures++ < 5) cd_testFail(__FILE__, __LINE__, "mutation %d: status %d, cJSON %s, err %s", it, rc, j ? "ok" : "fails", err);
    }
    cJSON_Delete(j);
    if (rc == 0) {
      nok++;
      cd_free(eff);
      cd_sceneFree(&s);
    } else if (syntax) {
      nsyntax++;
    } else {
      nvalue++;
    }
  }
  free(buf);
  CHECK(cd_allocLive() == live);
  printf("    4000 mutations: %d syntax errors, %d value errors, %d still valid\n", nsyntax, nvalue, nok);
}

CD_TEST(manyBodiesLoadInNearLinearTime) {
  const int n = 50000;
  size_t cap = (size_t)n * 120 + 64;
  char *t = malloc(cap);
  size_t len = (size_t)snprintf(t, cap, "{\"bodies\": [");
  for (int i = 0; i < n; i++)
    len += (size_t)snprintf(t + len, cap - len,
                            "%s{\"name\": \"s%d\", \"shape\": \"sphere\", \"radius\": 0.1, \"mass\": 1, \"position\": [%d, 0, 0.1]}",
                            i ? "," : "", i, i);
  /* the last body repeats the name of the first */
  snprintf(t + len, cap - len, ",{\"name\": \"s0\", \"shape\": \"sphere\", \"radius\": 0.1, \"mass\": 1, \"position\": [-1, 0, 0.1]}]}");
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  cdScene s;
  char err[2048];
  int rc = loadText(t, NULL, 0, &s, NULL, err, sizeof err);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double sec = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
  CHECK(rc == 2);
  CHECK_MSG(strcmp(err, "scene.json: /bodies/50000/name: duplicate body name, first at /bodies/0 (got \"s0\")\n") == 0, "%s", err);
  /* an O(n^2) name check would need ~1e9 comparisons here */
  CHECK_MSG(sec < 3.0, "%.2f s for %d bodies", sec, n + 1);
  printf("    %d bodies: %.0f ms\n", n + 1, 1e3 * sec);
  free(t);
}

/* ------------------------------------------------------------------------------------------
 * bundled scenes */

static const char *const kScenes[] = {"sliding-cube", "cube-stack",     "cube-pyramid",   "sphere-pile",
                                      "pile-1000",    "pile-4096",      "newtons-cradle", "mini-example",
                                      "incline-sphere", "incline-cube", "cube-on-cube",   "sphere-on-cube",
                                      "free-flight"};
#define NSCENE ((int)(sizeof kScenes / sizeof kScenes[0]))

static int loadScene(const char *name, cdScene *s) {
  char path[4096], err[4096];
  snprintf(path, sizeof path, "%s/scenes/%s.json", root(), name);
  int rc = cd_sceneLoad(path, NULL, NULL, 0, s, NULL, err, sizeof err);
  if (rc) cd_testFail(__FILE__, __LINE__, "%s: status %d: %s", name, rc, err);
  return rc == 0;
}

/* lowest point of a body along world z (boxes: the half extents along the rotated axes) */
static double bottom(const cdBodyDef *b) {
  if (b->shape == CD_SPHERE) return b->position[2] - b->radius;
  const double *q = b->orientation;
  double w = q[0], x = q[1], y = q[2], z = q[3];
  /* third row of the rotation matrix: world z of each body axis */
  double r[3] = {2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)};
  return b->position[2] - (fabs(r[0]) * b->half[0] + fabs(r[1]) * b->half[1] + fabs(r[2]) * b->half[2]);
}

CD_TEST(bundledScenesLoadAndStartWithoutPenetration) {
  for (int i = 0; i < NSCENE; i++) {
    cdScene s;
    if (!loadScene(kScenes[i], &s)) continue;
    for (int b = 0; b < s.nbody; b++) {
      if (s.has_ground)
        CHECK_MSG(bottom(&s.body[b]) - s.ground_height >= -1e-12, "%s: body %d below the ground by %g", kScenes[i], b,
                  s.ground_height - bottom(&s.body[b]));
    }
    /* penalty contact needs stiffness and damping that suit ~1 kg bodies */
    for (int m = 0; m < s.nmaterial; m++) {
      const cdMaterial *mat = &s.material[m];
      CHECK_MSG(mat->stiffness >= 1e5 && mat->stiffness <= 1e7 && mat->damping >= 100 && mat->damping <= 2e3,
                "%s: material %s k %g d %g", kScenes[i], mat->name, mat->stiffness, mat->damping);
    }
    cd_sceneFree(&s);
  }
}

CD_TEST(slidingCubeIsTheReferenceScene) {
  cdScene s;
  if (!loadScene("sliding-cube", &s)) return;
  CHECK(s.nbody == 1 && s.has_ground && s.ground_height == 0);
  const cdBodyDef *b = &s.body[0];
  CHECK(b->shape == CD_BOX && b->half[0] == 0.1 && b->half[1] == 0.1 && b->half[2] == 0.1 && b->mass == 1);
  CHECK(b->position[2] == 0.1 && b->velocity[0] == 2 && b->velocity[1] == 0 && b->velocity[2] == 0);
  CHECK(s.material[b->material].friction == 0.5 && s.material[s.ground_material].friction == 0.5);
  CHECK(s.dt == 0.01 && s.nstep == 150 && s.gravity[2] == -9.81);
  cd_sceneFree(&s);
}

CD_TEST(restingScenesStartExactlyTouching) {
  cdScene s;
  /* cube stack: 10 cubes of 0.2 m, each resting on the one below */
  if (loadScene("cube-stack", &s)) {
    CHECK(s.nbody == 10 && s.nstep == 300);
    for (int i = 0; i < s.nbody; i++) CHECK_NEAR(s.body[i].position[2], 0.1 + 0.2 * i, 1e-12);
    cd_sceneFree(&s);
  }
  /* pyramid: rows of 4, 3, 2, 1 cubes, 1 mm apart, each row resting on the one below */
  if (loadScene("cube-pyramid", &s)) {
    CHECK(s.nbody == 10);
    int row[4] = {0, 0, 0, 0};
    for (int i = 0; i < s.nbody; i++) {
      int k = (int)floor(s.body[i].position[2] / 0.2 + 1e-9);
      CHECK_NEAR(s.body[i].position[2], 0.1 + 0.2 * k, 1e-12);
      if (k >= 0 && k < 4) row[k]++;
    }
    CHECK(row[0] == 4 && row[1] == 3 && row[2] == 2 && row[3] == 1);
    cd_sceneFree(&s);
  }
  /* cradle: 5 balls r = 0.05 touching along x, no gravity, the first moving at 1 m/s */
  if (loadScene("newtons-cradle", &s)) {
    CHECK(s.nbody == 5 && !s.has_ground && s.gravity[0] == 0 && s.gravity[1] == 0 && s.gravity[2] == 0);
    for (int i = 1; i < s.nbody; i++) CHECK_NEAR(s.body[i].position[0] - s.body[i - 1].position[0], 0.1, 1e-12);
    CHECK(s.body[0].velocity[0] == 1 && s.material[s.body[0].material].friction == 0);
    cd_sceneFree(&s);
  }
  /* seed 002 mini example: ball r 0.1, 1 kg at z 1.2 above a fixed sphere r 1 at the origin */
  if (loadScene("mini-example", &s)) {
    CHECK(strcmp(s.model, "penalty") == 0 && s.nbody == 2 && !s.has_ground);
    const cdBodyDef *big = &s.body[0], *ball = &s.body[1];
    CHECK(big->fixed && big->radius == 1 && big->position[2] == 0);
    CHECK(ball->radius == 0.1 && ball->mass == 1 && ball->position[2] == 1.2);
    CHECK(s.material[ball->material].stiffness == 1e5 && s.material[ball->material].damping == 1e3);
    CHECK(s.dt == 0.002 && s.nstep == 1000);
    cd_sceneFree(&s);
  }
  /* inclines: gravity tilted by 30 degrees, friction 0.8 > tan 30 */
  const char *inclines[] = {"incline-sphere", "incline-cube"};
  for (int k = 0; k < 2; k++)
    if (loadScene(inclines[k], &s)) {
      CHECK_NEAR(s.gravity[0], 9.81 * 0.5, 1e-12);
      CHECK_NEAR(s.gravity[2], -9.81 * sqrt(3) / 2, 1e-12);
      CHECK(s.gravity[1] == 0 && s.nbody == 1);
      CHECK_NEAR(bottom(&s.body[0]), s.ground_height, 1e-12);
      CHECK(s.material[s.body[0].material].friction == 0.8);
      cd_sceneFree(&s);
    }
  /* a 0.2 m cube turned 45 degrees about z on a 27 times heavier 0.6 m cube on the ground */
  if (loadScene("cube-on-cube", &s)) {
    CHECK(s.nbody == 2);
    const cdBodyDef *big = &s.body[0], *small = &s.body[1];
    CHECK(big->half[0] == 0.3 && big->mass == 27 && !big->fixed && small->half[0] == 0.1 && small->mass == 1);
    CHECK_NEAR(bottom(big), s.ground_height, 1e-12);
    CHECK_NEAR(bottom(small), big->position[2] + big->half[2], 1e-12);
    CHECK_NEAR(small->orientation[0], cos(M_PI / 8), 1e-12);
    CHECK_NEAR(small->orientation[3], sin(M_PI / 8), 1e-12);
    cd_sceneFree(&s);
  }
  if (loadScene("sphere-on-cube", &s)) {
    CHECK(s.nbody == 2);
    CHECK_NEAR(bottom(&s.body[1]), s.body[0].position[2] + s.body[0].half[2], 1e-12);
    CHECK_NEAR(bottom(&s.body[0]), s.ground_height, 1e-12);
    cd_sceneFree(&s);
  }
  if (loadScene("free-flight", &s)) {
    CHECK(s.nbody == 1 && !s.has_ground);
    CHECK(s.body[0].velocity[0] == 1 && s.body[0].velocity[2] == 5 && s.body[0].angular_velocity[2] == 10);
    cd_sceneFree(&s);
  }
}

static int byX(const void *a, const void *b) {
  double x = ((const cdBodyDef *)a)->position[0], y = ((const cdBodyDef *)b)->position[0];
  return (x > y) - (x < y);
}

/* no two spheres overlap: sort by x, then compare only neighbours closer than 2 r_max in x */
static int spheresOverlap(cdScene *s) {
  double rmax = 0;
  for (int i = 0; i < s->nbody; i++) rmax = fmax(rmax, s->body[i].radius);
  cdBodyDef *b = malloc((size_t)s->nbody * sizeof *b);
  memcpy(b, s->body, (size_t)s->nbody * sizeof *b);
  qsort(b, (size_t)s->nbody, sizeof *b, byX);
  int overlap = 0;
  for (int i = 0; i < s->nbody && !overlap; i++)
    for (int j = i + 1; j < s->nbody && b[j].position[0] - b[i].position[0] < 2 * rmax; j++) {
      double dx = b[j].position[0] - b[i].position[0], dy = b[j].position[1] - b[i].position[1],
             dz = b[j].position[2] - b[i].position[2];
      if (sqrt(dx * dx + dy * dy + dz * dz) < b[i].radius + b[j].radius - 1e-12) overlap = 1;
    }
  free(b);
  return overlap;
}

CD_TEST(pilesComeFromMakePileAndHoldNoOverlaps) {
  struct {
    const char *name, *args;
    int n;
  } piles[] = {{"sphere-pile", "4 4 4", 64}, {"pile-1000", "10 10 10", 1000}, {"pile-4096", "16 16 16", 4096}};
  for (int i = 0; i < 3; i++) {
    char cmd[4096], path[4096];
    snprintf(cmd, sizeof cmd, "sh '%s/scripts/make-pile' %s", root(), piles[i].args);
    snprintf(path, sizeof path, "%s/scenes/%s.json", root(), piles[i].name);
    char *made = run(cmd), *file = slurp(path, NULL);
    CHECK_MSG(made != NULL, "%s failed", cmd);
    CHECK_MSG(file != NULL, "%s missing", path);
    /* the bundled file is exactly what the script writes (scenes/README.md gives the command) */
    if (made && file) CHECK_MSG(strcmp(made, file) == 0, "%s differs from 'make-pile %s'", piles[i].name, piles[i].args);
    free(made);
    free(file);
    cdScene s;
    if (!loadScene(piles[i].name, &s)) continue;
    CHECK(s.nbody == piles[i].n && s.has_ground);
    CHECK_MSG(!spheresOverlap(&s), "%s: spheres overlap", piles[i].name);
    cd_sceneFree(&s);
  }
}

CD_TEST(makePileOptionsAndDeterminism) {
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "sh '%s/scripts/make-pile' -r 0.05 -s 0.12 -j 0.005 -S 7 3 2 2", root());
  char *a = run(cmd), *b = run(cmd);
  CHECK(a && b && strcmp(a, b) == 0);
  snprintf(cmd, sizeof cmd, "sh '%s/scripts/make-pile' -r 0.05 -s 0.12 -j 0.005 -S 8 3 2 2", root());
  char *c = run(cmd);
  CHECK(c && a && strcmp(a, c) != 0); /* another seed, another jitter */
  if (a) {
    cdScene s;
    char err[2048];
    int rc = loadText(a, NULL, 0, &s, NULL, err, sizeof err);
    CHECK_MSG(rc == 0, "%s", err);
    if (rc == 0) {
      CHECK(s.nbody == 12 && !spheresOverlap(&s));
      for (int i = 0; i < s.nbody; i++) {
        CHECK(s.body[i].radius == 0.05);
        /* jitter moves a sphere at most 0.005 off its lattice site in x and y */
        double gx = s.body[i].position[0] / 0.12 + 1.0, gy = s.body[i].position[1] / 0.12 + 0.5;
        CHECK(fabs(gx - floor(gx + 0.5)) * 0.12 <= 0.005 + 1e-9 && fabs(gy - floor(gy + 0.5)) * 0.12 <= 0.005 + 1e-9);
        CHECK(bottom(&s.body[i]) >= s.ground_height);
      }
      cd_sceneFree(&s);
    }
  }
  free(a);
  free(b);
  free(c);
  /* spacing too small for the radius and jitter: the script refuses */
  snprintf(cmd, sizeof cmd, "sh '%s/scripts/make-pile' -r 0.1 -s 0.2 -j 0.01 2 2 2 2>/dev/null", root());
  char *d = run(cmd);
  CHECK(d == NULL);
  free(d);
}

CD_TEST(scenesReadmeDescribesEveryScene) {
  char path[4096];
  snprintf(path, sizeof path, "%s/scenes/README.md", root());
  char *readme = slurp(path, NULL);
  CHECK_MSG(readme != NULL, "scenes/README.md missing");
  if (!readme) return;
  for (int i = 0; i < NSCENE; i++) {
    char name[128];
    snprintf(name, sizeof name, "%s.json", kScenes[i]);
    CHECK_MSG(strstr(readme, name) != NULL, "scenes/README.md does not describe %s", name);
  }
  free(readme);
}
