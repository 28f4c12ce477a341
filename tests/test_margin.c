/* test_margin.c: the contact margin as a setting (scene key contact_margin, --contact-margin):
 * validated like every key; "auto" is collide.c's velocity-adaptive rule, a distance keeps
 * only the contacts with gap at most that; and what it does to the models on a body skimming
 * the ground. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "cli_util.h"
#include "collide.h"
#include "scene_json.h"
#include "simtest.h"
#include "test.h"

#define RUN(out, err, ...) \
  cd_cliRun((const char *const[]){__VA_ARGS__, NULL}, NULL, out, sizeof(out), err, sizeof(err), NULL)

/* a solid sphere (r 0.1, 1 kg) 2 mm above the ground, moving along x at 10 m/s, no gravity */
static const char *kSkim =
    "{\"gravity\": [0, 0, 0], \"dt\": 0.01, \"steps\": 10, \"ground\": {},"
    " \"bodies\": [{\"name\": \"ball\", \"shape\": \"sphere\", \"radius\": 0.1, \"mass\": 1,"
    "   \"position\": [0, 0, 0.102], \"velocity\": [10, 0, 0]}]}";

CD_TEST(contactMarginIsAutoOrADistanceAndValidatedLikeEveryKey) {
  cdScene s;
  char err[2048];
  CHECK(cd_sceneLoad("m.json", kSkim, NULL, 0, &s, NULL, err, sizeof err) == 0);
  CHECK(s.contact_margin_given == 0); /* default: auto */
  cd_sceneFree(&s);
  const cdSceneSet autos = {"/contact_margin", "\"auto\""}, two_mm = {"/contact_margin", "0.002"};
  CHECK(cd_sceneLoad("m.json", kSkim, &autos, 1, &s, NULL, err, sizeof err) == 0 && s.contact_margin_given == 0);
  cd_sceneFree(&s);
  CHECK(cd_sceneLoad("m.json", kSkim, &two_mm, 1, &s, NULL, err, sizeof err) == 0);
  CHECK(s.contact_margin_given == 1 && s.contact_margin == 0.002);
  cd_sceneFree(&s);
  static const struct {
    const char *json, *message;
  } bad[] = {{"-1", "m.json: /contact_margin: must be >= 0 (got -1)"},
             {"2e6", "m.json: /contact_margin: must be <= 1000000 (got 2000000)"},
             {"\"near\"", "m.json: /contact_margin: must be \"auto\" or a distance in metres >= 0 (got \"near\")"},
             {"true", "m.json: /contact_margin: must be \"auto\" or a distance in metres >= 0 (got true)"},
             {"[0.1]", "m.json: /contact_margin: must be \"auto\" or a distance in metres >= 0 (got an array of 1)"}};
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
    cdSceneSet set = {"/contact_margin", bad[k].json};
    err[0] = 0;
    int st = cd_sceneLoad("m.json", kSkim, &set, 1, &s, NULL, err, sizeof err);
    CHECK_MSG(st == 2 && strstr(err, bad[k].message), "%s: %d '%s'", bad[k].json, st, err);
    if (st == 0) cd_sceneFree(&s);
  }
}

/* the collider keeps a contact of gap 2 mm under "auto" (margin 1e-3 r + dt |v| = 0.1 m at
 * 10 m/s), and under a fixed margin exactly when the margin is at least the gap */
CD_TEST(fixedContactMarginKeepsOnlyContactsWithinIt) {
  cdScene s;
  char err[2048];
  if (cd_sceneLoad("m.json", kSkim, NULL, 0, &s, NULL, err, sizeof err)) {
    CHECK_MSG(0, "%s", err);
    return;
  }
  cdCollider *c = cd_colliderMake(&s);
  CHECK(c != NULL);
  double x[3] = {0, 0, 0.102}, R[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, v[6] = {10, 0, 0, 0, 0, 0};
  cdContactSet cs;
  cd_contactSetInit(&cs);
  CHECK(cd_collideMargin(&s, 10, 0.01, 0.1) == 1e-4 + 0.1);
  CHECK(cd_collide(c, &s, x, R, v, 0.01, &cs) == CD_OK && cs.ncon == 1);
  static const struct {
    double margin;
    int ncon;
  } cases[] = {{0, 0}, {0.0015, 0}, {0.0025, 1}, {1.0, 1}};
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    s.contact_margin_given = 1;
    s.contact_margin = cases[k].margin;
    CHECK(cd_collideMargin(&s, 10, 0.01, 0.1) == cases[k].margin);
    CHECK_MSG(cd_collide(c, &s, x, R, v, 0.01, &cs) == CD_OK && cs.ncon == cases[k].ncon, "margin %g: %d contacts",
              cases[k].margin, cs.ncon);
  }
  /* touching or overlapping contacts stay at margin 0 */
  x[2] = 0.1;
  CHECK(cd_collide(c, &s, x, R, v, 0.01, &cs) == CD_OK && cs.ncon == 1);
  x[2] = 0.099;
  s.contact_margin = 0;
  CHECK(cd_collide(c, &s, x, R, v, 0.01, &cs) == CD_OK && cs.ncon == 1);
  cd_contactSetFree(&cs);
  cd_colliderFree(c);
  cd_sceneFree(&s);
}

/* with contact_margin 0 the skimming sphere is never in a problem: every model leaves its
 * free flight exactly as it is */
CD_TEST(skimmingBodyFeelsNothingWithContactMarginZero) {
  static const char *const models[] = {"lcp", "ccp", "penalty"};
  static const char *const zero[] = {"/contact_margin=0", NULL};
  for (int m = 0; m < 3; m++) {
    cdSim s;
    if (cd_simMakeSet(&s, kSkim, models[m], NULL, zero)) return;
    long touched = 0;
    for (long k = 0; k < s.scene.nstep; k++) {
      if (cd_simStep(&s)) break;
      touched += s.world->contacts.ncon;
    }
    const double *x = s.world->x, *v = s.world->v;
    CHECK_MSG(touched == 0, "%s: %ld contacts", models[m], touched);
    CHECK_MSG(v[0] == 10 && v[1] == 0 && v[2] == 0 && v[3] == 0 && v[4] == 0 && v[5] == 0,
              "%s: v = (%g %g %g), w = (%g %g %g)", models[m], v[0], v[1], v[2], v[3], v[4], v[5]);
    CHECK_MSG(x[2] == 0.102 && fabs(x[0] - 1.0) <= 1e-14, "%s: x = (%.17g, %.17g)", models[m], x[0], x[2]);
    cd_simFree(&s);
  }
}

/* under "auto" the contact (gap phi = 2 mm) is in the problem. The LCP applies nothing
 * (b_N = phi/dt > 0: lambda = 0 solves it). The CCP's cone complementarity has the sliding
 * solution lambda_T = -mu lambda_N t with c_N = phi/dt + u = mu |c_T|, u = lambda_N / m,
 * c_T = v_t - (1/m + a^2/I) mu lambda_N, a = r + phi/2 the arm to the contact point (midway
 * between the surfaces), I = 2/5 m r^2: with m = 1, W = 1 + a^2/I = 3.55025 and
 * 0.2 + u = mu (10 - W mu u), u = (mu 10 - 0.2) / (1 + mu^2 W) = 2.54296 m/s. The sphere
 * leaves upwards at 2.54 m/s and slows to 10 - mu u = 8.7285 m/s without ever touching
 * (README.md, "The contact margin"; the review measured 2.54 and 8.73). */
CD_TEST(skimmingBodyIsPushedOffByTheCcpUnderTheAutoMargin) {
  cdSim s;
  if (cd_simMake(&s, kSkim, "lcp", NULL)) return;
  cd_simStep(&s);
  CHECK(s.world->contacts.ncon == 1);
  CHECK(s.world->v[0] == 10 && s.world->v[2] == 0);
  cd_simFree(&s);
  if (cd_simMake(&s, kSkim, "ccp", NULL)) return;
  cd_simStep(&s);
  CHECK(s.world->contacts.ncon == 1);
  /* to the apgd stopping rule: natural-map residual 1e-6 ||g||_inf in velocity terms
   * (cone.h), ||g||_inf = 10 m/s */
  double W = 1 + 0.101 * 0.101 / (0.4 * 0.1 * 0.1), u = (0.5 * 10 - 0.2) / (1 + 0.25 * W);
  CHECK_NEAR(s.world->v[2], u, 1.1e-5);
  CHECK_NEAR(s.world->v[0], 10 - 0.5 * u, 1.1e-5);
  printf("    ccp, auto margin: the sphere 2 mm above the ground leaves at v = (%.5f, %.5f) m/s\n", s.world->v[0],
         s.world->v[2]);
  cd_simFree(&s);
}

CD_TEST(contactMarginOptionReachesTheSceneAndIsChecked) {
  if (!cd_cliHaveBin()) CD_SKIP("CDSIM_BIN not built");
  char scene[1024], out[512], so[4096], se[4096];
  cd_cliScenePath(scene, sizeof scene, "sliding-cube.json");
  snprintf(out, sizeof out, "%s/margin.h5", cd_cliTmpdir());
  int code = RUN(so, se, scene, "--contact-margin", "0.003", "--steps", "2", "--out", out, "--quiet");
  CHECK_MSG(code == 0, "exit %d: %s", code, se);
  char attr[8192];
  cd_cliReadAttr(out, "scene", attr, sizeof attr);
  CHECK_MSG(strstr(attr, "\"contact_margin\":0.003"), "scene attribute: %s", attr);
  code = RUN(so, se, scene, "--contact-margin", "auto", "--steps", "2", "--out", out, "--quiet");
  CHECK_MSG(code == 0, "exit %d: %s", code, se);
  cd_cliReadAttr(out, "scene", attr, sizeof attr);
  CHECK_MSG(strstr(attr, "\"contact_margin\":\"auto\""), "scene attribute: %s", attr);
  static const char *const bad[] = {"-1", "near", "1e7", ""};
  for (int k = 0; k < 4; k++) {
    code = RUN(so, se, scene, "--contact-margin", bad[k], "--out", out, "--quiet");
    CHECK_MSG(code == 2 && strstr(se, "--contact-margin"), "'%s': exit %d, %s", bad[k], code, se);
  }
}
