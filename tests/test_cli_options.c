/* test_cli_options.c: what the command line does with options and input that do not do what
 * they seem to (src/notices.h): --steps with --duration is refused, an option the model does
 * not use and a parameter without effect are said, initial overlaps are said with the speed
 * they imply; --duration counts steps by the scene file's rule; and a solver's fallbacks are
 * said under a solver the user named, counted (not said) under the default. */
#include <stdlib.h>
#include <string.h>

#include "cli_util.h"
#include "test.h"

#define RUN(out, err, ...) \
  cd_cliRun((const char *const[]){__VA_ARGS__, NULL}, NULL, out, sizeof(out), err, sizeof(err), NULL)

/* writes text to TMPDIR/name, the path in path */
static int writeScene(char *path, size_t n, const char *name, const char *text) {
  snprintf(path, n, "%s/%s", cd_cliTmpdir(), name);
  int rc = cd_cliWriteFile(path, text);
  CHECK_MSG(rc == 0, "cannot write %s", path);
  return rc;
}

/* a whole-number field of --summary's line, or -1 */
static long summaryLong(const char *so, const char *key) {
  char pat[64];
  snprintf(pat, sizeof pat, "\"%s\": ", key);
  const char *p = strstr(so, pat);
  return p ? strtol(p + strlen(pat), NULL, 10) : -1;
}

static long summarySteps(const char *so) { return summaryLong(so, "steps"); }

/* 1.0000000005 / 0.01 = 100.00000005: within 1e-9 relative of 100, so the scene's rule gives
 * 100 steps; --duration used ceil(d/dt - 1e-9) = 101 */
CD_TEST(durationOnTheCommandLineCountsStepsAsTheSceneFileDoes) {
  if (!cd_cliHaveBin()) CD_SKIP("CDSIM_BIN not built");
  char scene[512], out[512], so[4096], se[4096];
  if (writeScene(scene, sizeof scene, "dur.json",
                 "{\"dt\": 0.01, \"duration\": 1.0000000005, \"gravity\": [0, 0, 0],"
                 " \"bodies\": [{\"shape\": \"sphere\", \"radius\": 0.1, \"mass\": 1, \"position\": [0, 0, 1]}]}"))
    return;
  snprintf(out, sizeof out, "%s/dur.h5", cd_cliTmpdir());
  int code = RUN(so, se, scene, "--out", out, "--quiet", "--summary");
  CHECK_MSG(code == 0, "exit %d: %s", code, se);
  CHECK_MSG(summarySteps(so) == 100, "scene duration: %s", so);
  code = RUN(so, se, scene, "--duration", "1.0000000005", "--out", out, "--quiet", "--summary");
  CHECK_MSG(code == 0, "exit %d: %s", code, se);
  CHECK_MSG(summarySteps(so) == 100, "--duration: %s", so);
  /* beyond 1e9 steps: refused like the scene's duration (the limit: a failure, not a hang) */
  cdCliLimits lim = {.seconds = 20};
  code = cd_cliRun((const char *const[]){scene, "--duration", "1e8", "--out", out, "--quiet", NULL}, &lim, so,
                   sizeof so, se, sizeof se, NULL);
  CHECK_MSG(code == 2 && strstr(se, "--duration") && strstr(se, "1e9"), "exit %d: %s", code, se);
}

CD_TEST(stepsTogetherWithDurationIsAUsageError) {
  if (!cd_cliHaveBin()) CD_SKIP("CDSIM_BIN not built");
  char scene[1024], out[512], so[4096], se[4096];
  cd_cliScenePath(scene, sizeof scene, "free-flight.json");
  snprintf(out, sizeof out, "%s/both.h5", cd_cliTmpdir());
  int code = RUN(so, se, scene, "--steps", "3", "--duration", "1", "--out", out);
  CHECK_MSG(code == 2 && strstr(se, "--duration") && strstr(se, "--steps"), "exit %d: %s", code, se);
  char got[16];
  cd_cliReadFile(out, got, sizeof got);
  CHECK(got[0] == 0); /* nothing written */
}

/* the sliding cube (README's first command): the default CCP hands its first step from primal
 * to apgd (its budget of Newton steps), which is its design: counted in the summary and in
 * /solver/warn_fallback, not said; ipm, named, falls back to apgd's sweeps on some steps and
 * says so once, naming itself */
CD_TEST(fallbacksAreSaidOnlyUnderANamedSolver) {
  if (!cd_cliHaveBin()) CD_SKIP("CDSIM_BIN not built");
  char scene[1024], out[512], so[4096], se[4096];
  cd_cliScenePath(scene, sizeof scene, "sliding-cube.json");
  snprintf(out, sizeof out, "%s/fallbacks.h5", cd_cliTmpdir());
  int code = RUN(so, se, scene, "--model", "ccp", "--out", out, "--no-xdmf", "--summary");
  CHECK_MSG(code == 0 && se[0] == 0, "default: exit %d, stderr '%s'", code, se);
  CHECK_MSG(summaryLong(so, "fallbacks") > 0 && strstr(so, "\"solver\": \"primal+apgd\""), "default: %s", so);
  code = RUN(so, se, scene, "--model", "ccp", "--solver", "ipm", "--out", out, "--no-xdmf", "--summary");
  CHECK_MSG(code == 0 && summaryLong(so, "fallbacks") > 0, "ipm: exit %d: %s", code, so);
  const char *w = strstr(se, "warning: ");
  CHECK_MSG(w && strstr(w, "the ipm solver fell back") && strchr(se, '\n') == strrchr(se, '\n'), "ipm: stderr '%s'",
            se);
}

/* every option that the chosen model does not use is said once, also under --quiet; an
 * option that applies says nothing, and nor does the default of one that was not given */
CD_TEST(optionsTheModelDoesNotUseAreSaid) {
  if (!cd_cliHaveBin()) CD_SKIP("CDSIM_BIN not built");
  char scene[1024], out[512], so[4096], se[4096];
  cd_cliScenePath(scene, sizeof scene, "free-flight.json");
  snprintf(out, sizeof out, "%s/opts.h5", cd_cliTmpdir());
  static const struct {
    const char *model, *opt, *val;
  } ignored[] = {{"ccp", "--friction-dirs", "8"},  {"penalty", "--friction-dirs", "8"},
                 {"lcp", "--substeps", "3"},       {"ccp", "--substeps", "3"},
                 {"penalty", "--tolerance", "1e-5"}, {"penalty", "--max-iterations", "50"}};
  for (size_t k = 0; k < sizeof ignored / sizeof ignored[0]; k++) {
    int code = RUN(so, se, scene, "--model", ignored[k].model, ignored[k].opt, ignored[k].val, "--steps", "2", "--out",
                   out, "--quiet");
    CHECK_MSG(code == 0, "exit %d: %s", code, se);
    const char *w = strstr(se, "warning: ");
    CHECK_MSG(w && strstr(w, ignored[k].opt) && strstr(w, "does nothing under --model") && strstr(w, ignored[k].model),
              "%s %s under %s: stderr '%s'", ignored[k].opt, ignored[k].val, ignored[k].model, se);
    CHECK_MSG(strchr(se, '\n') == strrchr(se, '\n'), "said once: '%s'", se);
  }
  static const struct {
    const char *model, *opt, *val;
  } used[] = {{"lcp", "--friction-dirs", "8"}, {"penalty", "--substeps", "3"}, {"ccp", "--tolerance", "1e-5"},
              {"lcp", "--max-iterations", "50"}, {"ccp", "--max-iterations", "50"}};
  for (size_t k = 0; k < sizeof used / sizeof used[0]; k++) {
    int code = RUN(so, se, scene, "--model", used[k].model, used[k].opt, used[k].val, "--steps", "2", "--out", out,
                   "--quiet");
    CHECK_MSG(code == 0 && se[0] == 0, "%s %s under %s: exit %d, stderr '%s'", used[k].opt, used[k].val,
              used[k].model, code, se);
  }
}

/* restitution acts only in impact models 1 and 2; pull-off force only with a plasticity
 * ratio > 0: given without them, the penalty model says so (the impulse models use
 * friction alone and say nothing) */
CD_TEST(penaltyParametersWithoutEffectAreSaid) {
  if (!cd_cliHaveBin()) CD_SKIP("CDSIM_BIN not built");
  char scene[512], out[512], so[4096], se[4096];
  if (writeScene(scene, sizeof scene, "noeffect.json",
                 "{\"dt\": 0.001, \"steps\": 2, \"ground\": {\"material\": \"m\"},"
                 " \"materials\": {\"m\": {\"restitution\": 0.5, \"pull_off_force\": 3}},"
                 " \"bodies\": [{\"shape\": \"sphere\", \"radius\": 0.1, \"mass\": 1, \"position\": [0, 0, 0.1],"
                 "   \"material\": \"m\"}]}"))
    return;
  snprintf(out, sizeof out, "%s/noeffect.h5", cd_cliTmpdir());
  int code = RUN(so, se, scene, "--model", "penalty", "--out", out, "--quiet");
  CHECK_MSG(code == 0, "exit %d: %s", code, se);
  CHECK_MSG(strstr(se, "\"m\": restitution 0.5 has no effect with impact_model 0"), "stderr: %s", se);
  CHECK_MSG(strstr(se, "\"m\": pull_off_force 3 has no effect with plasticity_ratio 0"), "stderr: %s", se);
  /* with impact model 2 and lambda_P 0.2 both act: nothing to say */
  code = RUN(so, se, scene, "--model", "penalty", "--set", "/materials/m/impact_model=2", "--set",
             "/materials/m/plasticity_ratio=0.2", "--out", out, "--quiet");
  CHECK_MSG(code == 0 && se[0] == 0, "exit %d: %s", code, se);
  code = RUN(so, se, scene, "--model", "lcp", "--out", out, "--quiet");
  CHECK_MSG(code == 0 && se[0] == 0, "exit %d: %s", code, se);
}

/* a ball 1 cm into the ground at dt = 0.01: the impulse models separate it within the first
 * step at phi/dt = 1 m/s, and say so before the run; the frame after the step shows that
 * speed. Touching poses (gap 0) say nothing. */
CD_TEST(initialOverlapsAreSaidWithTheSpeedTheyImply) {
  if (!cd_cliHaveBin()) CD_SKIP("CDSIM_BIN not built");
  char scene[512], out[512], so[4096], se[4096];
  if (writeScene(scene, sizeof scene, "overlap.json",
                 "{\"dt\": 0.01, \"steps\": 1, \"ground\": {},"
                 " \"bodies\": [{\"name\": \"ball\", \"shape\": \"sphere\", \"radius\": 0.1, \"mass\": 1,"
                 "   \"position\": [0, 0, 0.09]},"
                 "  {\"name\": \"rest\", \"shape\": \"cube\", \"size\": 0.2, \"mass\": 1,"
                 "   \"position\": [1, 0, 0.1]}]}"))
    return;
  snprintf(out, sizeof out, "%s/overlap.h5", cd_cliTmpdir());
  static const char *const models[] = {"lcp", "ccp"};
  for (int m = 0; m < 2; m++) {
    int code = RUN(so, se, scene, "--model", models[m], "--out", out, "--quiet");
    CHECK_MSG(code == 0, "exit %d: %s", code, se);
    CHECK_MSG(strstr(se, "the ground and \"ball\" overlap by 0.01 m") && strstr(se, "at 1 m/s (overlap / dt)"),
              "%s: stderr '%s'", models[m], se);
    CHECK_MSG(!strstr(se, "\"rest\"") && strchr(se, '\n') == strrchr(se, '\n'), "%s: stderr '%s'", models[m], se);
    double *vel = NULL;
    /* frame 1, body 0, z; to the solvers' stopping rules: Lemke's 1e-10, and the ccp's
     * natural-map residual 1e-6 ||g||_inf in velocity terms (cone.h), ||g|| = 1.1 m/s here */
    if (cd_cliReadDataset(out, "/trajectory/velocity", &vel, NULL, NULL) == 2 * 2 * 3)
      CHECK_NEAR(vel[6 + 2], 1.0, m == 0 ? 1e-9 : 2.1e-6);
    else
      CHECK_MSG(0, "%s: no velocity dataset", models[m]);
    free(vel);
  }
  int code = RUN(so, se, scene, "--model", "penalty", "--out", out, "--quiet");
  CHECK_MSG(code == 0 && strstr(se, "overlap by 0.01 m at the start: the penalty contact starts compressed"),
            "penalty: exit %d, stderr '%s'", code, se);
}

CD_TEST(penaltyRefusesTwoStiffnessExponentsOnTheCommandLine) {
  if (!cd_cliHaveBin()) CD_SKIP("CDSIM_BIN not built");
  char scene[1024], out[512], so[4096], se[4096];
  cd_cliScenePath(scene, sizeof scene, "sliding-cube.json");
  snprintf(out, sizeof out, "%s/exp.h5", cd_cliTmpdir());
  int code = RUN(so, se, scene, "--model", "penalty", "--set", "/materials/soft={\"stiffness_exponent\": 1.5}", "--set",
                 "/ground/material=\"soft\"", "--out", out, "--quiet");
  CHECK_MSG(code == 2 && strstr(se, "\"steel\" (stiffness_exponent 1)") &&
                strstr(se, "\"soft\" (stiffness_exponent 1.5)"),
            "exit %d: %s", code, se);
  code = RUN(so, se, scene, "--model", "lcp", "--set", "/materials/soft={\"stiffness_exponent\": 1.5}", "--set",
             "/ground/material=\"soft\"", "--steps", "2", "--out", out, "--quiet");
  CHECK_MSG(code == 0, "exit %d: %s", code, se);
}
