/* test_scripts.c: the user-facing scripts (scripts/compare-models, sweep, render and their
 * module cdsim_h5.py), run as a user runs them, through the shell.
 *
 * The reader module is checked against a fake output file whose contents are known in closed
 * form (tests/make_fake_h5.py documents them); the scripts end to end against real cdsim runs
 * once $CDSIM_BIN exists. A test skips, saying why, when /usr/bin/python3 cannot import h5py
 * and matplotlib, when GNU parallel is missing (sweep), or when cdsim is not built yet.
 * Every test works in its own directory under /tmp and removes it.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"

#define PY "/usr/bin/python3"

static const char *rootDir(void) {
  const char *r = getenv("CDSIM_ROOT");
  return r && *r ? r : ".";
}

/* asked once: every test needs the answer and each python start costs a quarter second */
static int havePythonStack(void) {
  static int known = -1;
  if (known < 0) known = system(PY " -c 'import h5py, matplotlib, numpy' >/dev/null 2>&1") == 0;
  return known;
}

static int haveGnuParallel(void) {
  return system("parallel --version 2>/dev/null | grep -q 'GNU parallel'") == 0;
}

static const char *cdsimBin(void) {
  const char *b = getenv("CDSIM_BIN");
  return b && *b && access(b, X_OK) == 0 ? b : NULL;
}

/* a fresh directory under /tmp (dir: at least 64 bytes), 0 on failure */
static int tmpMake(char *dir, size_t n) {
  snprintf(dir, n, "/tmp/cdsim-scripts-XXXXXX");
  return mkdtemp(dir) != NULL;
}

static void tmpRemove(const char *dir) {
  char cmd[1200];
  if (strncmp(dir, "/tmp/cdsim-scripts-", 19) != 0) return; /* never anything else */
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
}

/* runs cmd through the shell; its stdout (cut to n - 1 bytes) into out; returns the exit
 * status (-1 when it did not exit normally) */
static int runCapture(const char *cmd, char *out, size_t n) {
  FILE *p = popen(cmd, "r");
  size_t len = 0;
  if (!p) return -1;
  if (out && n) {
    size_t got;
    while (len + 1 < n && (got = fread(out + len, 1, n - 1 - len, p)) > 0) len += got;
    out[len] = '\0';
  }
  char sink[4096];
  while (fread(sink, 1, sizeof sink, p) > 0) {
  }
  int st = pclose(p);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* the whole file as a string (caller frees), NULL when it cannot be read */
static char *readAll(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 4096, n = 0, got;
  char *buf = malloc(cap);
  while (buf && (got = fread(buf + n, 1, cap - 1 - n, f)) > 0) {
    n += got;
    if (n + 1 == cap) {
      char *nb = realloc(buf, cap *= 2);
      if (!nb) {
        free(buf);
        buf = NULL;
      } else {
        buf = nb;
      }
    }
  }
  fclose(f);
  if (buf) buf[n] = '\0';
  if (len) *len = n;
  return buf;
}

static int fileStartsWith(const char *path, const unsigned char *sig, size_t n) {
  size_t len = 0;
  char *buf = readAll(path, &len);
  int ok = buf && len >= n && memcmp(buf, sig, n) == 0;
  free(buf);
  return ok;
}

static const unsigned char PNG_SIG[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};

static int countLines(const char *text) {
  int n = 0;
  for (const char *c = text; *c; c++) n += *c == '\n';
  return n;
}

/* copies line k (0-based, without its newline) of text into out; 0 when there is none */
static int lineOf(const char *text, int k, char *out, size_t n) {
  const char *s = text;
  for (int i = 0; i < k; i++) {
    s = strchr(s, '\n');
    if (!s) return 0;
    s++;
  }
  if (!*s) return 0;
  size_t len = strcspn(s, "\n");
  if (len >= n) len = n - 1;
  memcpy(out, s, len);
  out[len] = '\0';
  return 1;
}

/* copies comma-separated field k of an unquoted CSV line into out; 0 when absent */
static int fieldOf(const char *line, int k, char *out, size_t n) {
  const char *s = line;
  for (int i = 0; i < k; i++) {
    s = strchr(s, ',');
    if (!s) return 0;
    s++;
  }
  size_t len = strcspn(s, ",");
  if (len >= n) len = n - 1;
  memcpy(out, s, len);
  out[len] = '\0';
  return 1;
}

/* the fake output file of tests/make_fake_h5.py in dir; 0 on failure */
static int makeFake(const char *dir, char *path, size_t n) {
  char cmd[2400];
  snprintf(path, n, "%s/fake.h5", dir);
  snprintf(cmd, sizeof cmd, PY " '%s/tests/make_fake_h5.py' '%s'", rootDir(), path);
  return system(cmd) == 0;
}

#define NEED_PYTHON()                                                                          \
  if (!havePythonStack()) CD_SKIP("/usr/bin/python3 cannot import h5py, matplotlib and numpy")

#define NEED_CDSIM()                                                                           \
  if (!cdsimBin()) CD_SKIP("cdsim is not built yet ($CDSIM_BIN missing)")

/* ---- the reader module against the fake file ---- */

CD_TEST(lowestPointOfSpheresAndRotatedBoxesIsTheirSupportAlongMinusZ) {
  NEED_PYTHON();
  char dir[64], fake[128], cmd[2400], out[4096];
  CHECK(tmpMake(dir, sizeof dir));
  CHECK(makeFake(dir, fake, sizeof fake));
  snprintf(cmd, sizeof cmd,
           PY " -c 'import sys; sys.path.insert(0, sys.argv[1]); import cdsim_h5\n"
              "for row in cdsim_h5.Run(sys.argv[2]).lowest_point(): print(\" \".join(\"%%.17g\" %% x for x in row))'"
              " '%s/scripts' '%s'",
           rootDir(), fake);
  CHECK(runCapture(cmd, out, sizeof out) == 0);
  CHECK_MSG(countLines(out) == 5, "expected 5 frames, got:\n%s", out);
  const char *s = out;
  for (int k = 0; k < 5; k++) {
    char *end;
    double low[4];
    for (int b = 0; b < 4; b++) {
      low[b] = strtod(s, &end);
      CHECK(end != s);
      s = end;
    }
    /* the fixture: ball r 0.1 at z 0.5; cube edge 0.2 at z 1 turned by k pi/16 about x;
     * slab [0.2, 0.4, 0.6] at z 2 turned by k pi/10 about y; fixed sphere r 1 at z -1 */
    double th = k * M_PI / 16, ph = k * M_PI / 10;
    CHECK_NEAR(low[0], 0.4, 1e-12);
    CHECK_NEAR(low[1], 1.0 - 0.1 * (fabs(sin(th)) + fabs(cos(th))), 1e-12);
    CHECK_NEAR(low[2], 2.0 - (0.1 * fabs(sin(ph)) + 0.3 * fabs(cos(ph))), 1e-12);
    CHECK_NEAR(low[3], -2.0, 1e-12);
  }
  tmpRemove(dir);
}

CD_TEST(bodyStopsAtFirstFrameFromWhichHorizontalSpeedStaysBelowThreshold) {
  NEED_PYTHON();
  char dir[64], fake[128], cmd[2400], out[1024];
  CHECK(tmpMake(dir, sizeof dir));
  CHECK(makeFake(dir, fake, sizeof fake));
  snprintf(cmd, sizeof cmd,
           PY " -c 'import sys; sys.path.insert(0, sys.argv[1]); import cdsim_h5\n"
              "r = cdsim_h5.Run(sys.argv[2]); v = r.horizontal_speed()\n"
              "print(\"%%.17g %%.17g %%.17g %%.17g %%.17g\" %% (r.stop(0) + r.stop(1) + (v[0, 0],)))'"
              " '%s/scripts' '%s'",
           rootDir(), fake);
  CHECK(runCapture(cmd, out, sizeof out) == 0);
  double t0, d0, t1, d1, v00;
  CHECK_MSG(sscanf(out, "%lf %lf %lf %lf %lf", &t0, &d0, &t1, &d1, &v00) == 5, "got: %s", out);
  /* the ball's speed is 2, 1, 0, 0, 0 over frames t = 0.01 k, its x 0, 0.01, 0.02, ... */
  CHECK_NEAR(t0, 0.02, 1e-15);
  CHECK_NEAR(d0, 0.02, 1e-15);
  /* the cube never moves: stopped from frame 0, nowhere travelled */
  CHECK_NEAR(t1, 0.0, 0.0);
  CHECK_NEAR(d1, 0.0, 0.0);
  /* the ball falls at 5 m/s as well: the horizontal speed leaves it out */
  CHECK_NEAR(v00, 2.0, 1e-15);
  tmpRemove(dir);
}

CD_TEST(slidingContactsAreTheLoadedOnesAboveTheSpeedThresholdWithMixedFriction) {
  NEED_PYTHON();
  char dir[64], fake[128], cmd[2400], out[2048];
  CHECK(tmpMake(dir, sizeof dir));
  CHECK(makeFake(dir, fake, sizeof fake));
  snprintf(cmd, sizeof cmd,
           PY " -c 'import sys; sys.path.insert(0, sys.argv[1]); import cdsim_h5\n"
              "s = cdsim_h5.Run(sys.argv[2]).sliding_contacts()\n"
              "for i in range(len(s[\"frame\"])): print(s[\"frame\"][i], \"%%.17g %%.17g %%.17g\" %% "
              "(s[\"mu\"][i], s[\"tangent_speed\"][i], s[\"normal_velocity\"][i]))'"
              " '%s/scripts' '%s'",
           rootDir(), fake);
  CHECK(runCapture(cmd, out, sizeof out) == 0);
  /* four rows: ball-ground loaded and sliding, ball-anchor unloaded, cube-ground below the
   * threshold, slab-ground loaded and sliding: two remain */
  CHECK_MSG(countLines(out) == 2, "got:\n%s", out);
  int f0, f1;
  double mu0, vt0, vn0, mu1, vt1, vn1;
  CHECK_MSG(sscanf(out, "%d %lf %lf %lf %d %lf %lf %lf", &f0, &mu0, &vt0, &vn0, &f1, &mu1, &vt1,
                   &vn1) == 8,
            "got:\n%s", out);
  CHECK(f0 == 1 && f1 == 3);
  CHECK_NEAR(mu0, sqrt(0.3 * 0.8), 1e-15); /* steel on rubber: sqrt(mu_a mu_b) */
  CHECK_NEAR(mu1, sqrt(0.5 * 0.8), 1e-15); /* built-in default on rubber */
  CHECK_NEAR(vt0, 0.5, 1e-15);
  CHECK_NEAR(vt1, 0.5, 1e-15);
  CHECK_NEAR(vn0, 0.2, 0.0);
  CHECK_NEAR(vn1, 0.1, 0.0);
  tmpRemove(dir);
}

/* ---- render on the fake file ---- */

CD_TEST(renderDrawsAFrameAsPngAndTheRunAsGif) {
  NEED_PYTHON();
  char dir[64], fake[128], cmd[2400], path[256];
  CHECK(tmpMake(dir, sizeof dir));
  CHECK(makeFake(dir, fake, sizeof fake));
  snprintf(cmd, sizeof cmd, "'%s/scripts/render' '%s' --frame 0 --out '%s/f0.png' >/dev/null",
           rootDir(), fake, dir);
  CHECK(system(cmd) == 0);
  snprintf(path, sizeof path, "%s/f0.png", dir);
  CHECK_MSG(fileStartsWith(path, PNG_SIG, 8), "%s is not a PNG", path);
  /* default: the last frame, named after the file */
  snprintf(cmd, sizeof cmd, "'%s/scripts/render' '%s' >/dev/null", rootDir(), fake);
  CHECK(system(cmd) == 0);
  snprintf(path, sizeof path, "%s/fake-frame4.png", dir);
  CHECK_MSG(fileStartsWith(path, PNG_SIG, 8), "%s is not a PNG", path);
  if (system(PY " -c 'import PIL' >/dev/null 2>&1") == 0) {
    snprintf(cmd, sizeof cmd, "'%s/scripts/render' '%s' --movie '%s/m.gif' --every 2 >/dev/null",
             rootDir(), fake, dir);
    CHECK(system(cmd) == 0);
    snprintf(path, sizeof path, "%s/m.gif", dir);
    CHECK_MSG(fileStartsWith(path, (const unsigned char *)"GIF89a", 6), "%s is not a GIF", path);
  }
  tmpRemove(dir);
}

/* ---- usage ---- */

CD_TEST(scriptsAnswerHelpAndRejectBadUsageWithExitTwoWithoutTraceback) {
  NEED_PYTHON();
  char dir[64], fake[128], cmd[2400], out[8192];
  static const char *const names[] = {"compare-models", "sweep", "render"};
  CHECK(tmpMake(dir, sizeof dir));
  CHECK(makeFake(dir, fake, sizeof fake));
  for (int i = 0; i < 3; i++) {
    snprintf(cmd, sizeof cmd, "'%s/scripts/%s' --help 2>&1", rootDir(), names[i]);
    CHECK_MSG(runCapture(cmd, out, sizeof out) == 0, "%s --help", names[i]);
    CHECK_MSG(strstr(out, "usage:") != NULL, "%s --help printed:\n%s", names[i], out);
  }
  /* one bad use of each, and a frame past the end */
  const char *bad[4][2] = {{"compare-models", "--models lcp,foo"},
                           {"sweep", "--param /x --values 1"},
                           {"render", "--frame 99"},
                           {"sweep", "SCENE --param /materials/m/friction"}};
  for (int i = 0; i < 4; i++) {
    const char *arg = bad[i][1];
    char args[600];
    if (strcmp(bad[i][0], "render") == 0)
      snprintf(args, sizeof args, "'%s' %s", fake, arg);
    else if (strncmp(arg, "SCENE", 5) == 0)
      snprintf(args, sizeof args, "'%s' %s", fake, arg + 6);
    else
      snprintf(args, sizeof args, "%s", arg);
    snprintf(cmd, sizeof cmd, "cd '%s' && '%s/scripts/%s' %s 2>&1", dir, rootDir(), bad[i][0], args);
    int rc = runCapture(cmd, out, sizeof out);
    CHECK_MSG(rc == 2, "%s %s: exit %d", bad[i][0], args, rc);
    CHECK_MSG(strstr(out, "Traceback") == NULL, "%s %s printed a traceback:\n%s", bad[i][0], args, out);
    CHECK_MSG(strstr(out, bad[i][0]) != NULL, "%s %s: the message does not name the script:\n%s",
              bad[i][0], args, out);
  }
  /* an input that is not a cdsim file: an error (exit 1), still without a traceback */
  snprintf(cmd, sizeof cmd, "'%s/scripts/render' '%s/tests/make_fake_h5.py' 2>&1", rootDir(), rootDir());
  int rc = runCapture(cmd, out, sizeof out);
  CHECK_MSG(rc == 1, "render of a non-HDF5 file: exit %d", rc);
  CHECK_MSG(strstr(out, "Traceback") == NULL, "render of a non-HDF5 file:\n%s", out);
  tmpRemove(dir);
}

/* ---- sweep job lists (no cdsim run: the list is only written) ---- */

CD_TEST(sweepJobListHasOneCommandLineForEachPointOfTheGrid) {
  NEED_PYTHON();
  char dir[64], cmd[2400], path[256], line[2048];
  CHECK(tmpMake(dir, sizeof dir));
  snprintf(path, sizeof path, "%s/scene.json", dir);
  FILE *f = fopen(path, "w");
  CHECK(f != NULL);
  if (!f) return;
  fputs("{\"dt\": 0.01, \"duration\": 0.1, \"bodies\": []}\n", f);
  fclose(f);
  /* 2 frictions x 2 velocity vectors x 2 models; /bodies/0/velocity values contain commas */
  snprintf(cmd, sizeof cmd,
           "cd '%s' && CDSIM_BIN=/bin/true '%s/scripts/sweep' scene.json --param /materials/m/friction "
           "--values 0.3,0.6 --param /bodies/0/velocity --values '[1,0,0],[2,0,0]' --models lcp,ccp "
           "--out out --joblist jobs.txt >/dev/null",
           dir, rootDir());
  CHECK(system(cmd) == 0);
  snprintf(path, sizeof path, "%s/jobs.txt", dir);
  char *jobs = readAll(path, NULL);
  CHECK(jobs != NULL);
  if (!jobs) return;
  CHECK_MSG(countLines(jobs) == 8, "expected 8 command lines, got:\n%s", jobs);
  int seen[2][2][2] = {{{0}}};
  for (int k = 0; lineOf(jobs, k, line, sizeof line); k++) {
    int fr = strstr(line, "--set /materials/m/friction=0.6 ") != NULL;
    int fr03 = strstr(line, "--set /materials/m/friction=0.3 ") != NULL;
    int v2 = strstr(line, "--set '/bodies/0/velocity=[2,0,0]'") != NULL;
    int v1 = strstr(line, "--set '/bodies/0/velocity=[1,0,0]'") != NULL;
    int ccp = strstr(line, "--model ccp") != NULL;
    int lcp = strstr(line, "--model lcp") != NULL;
    CHECK_MSG(fr + fr03 == 1 && v1 + v2 == 1 && ccp + lcp == 1, "line %d: %s", k, line);
    CHECK_MSG(strstr(line, "--summary") && strstr(line, "--quiet"), "line %d: %s", k, line);
    seen[fr][v2][ccp]++;
  }
  for (int i = 0; i < 8; i++) CHECK_MSG(seen[i >> 2][(i >> 1) & 1][i & 1] == 1, "grid point %d", i);
  /* the file names: values sanitized, pointer tokens joined */
  CHECK(strstr(jobs, "/out/friction=0.3_velocity=1-0-0_model=lcp.h5") != NULL);
  free(jobs);
  /* collected before anything ran: every row says so */
  snprintf(cmd, sizeof cmd, "cd '%s' && '%s/scripts/sweep' --collect out >/dev/null", dir, rootDir());
  CHECK(system(cmd) == 0);
  snprintf(path, sizeof path, "%s/out/summary.csv", dir);
  char *csv = readAll(path, NULL);
  CHECK(csv != NULL);
  if (csv) {
    CHECK_MSG(countLines(csv) == 9, "summary.csv:\n%s", csv);
    CHECK(lineOf(csv, 0, line, sizeof line));
    CHECK_MSG(strncmp(line, "/materials/m/friction,/bodies/0/velocity,model,exit,", 52) == 0, "header: %s", line);
    for (int k = 1; lineOf(csv, k, line, sizeof line); k++)
      CHECK_MSG(strstr(line, "not run") != NULL, "row %d: %s", k, line);
    free(csv);
  }
  tmpRemove(dir);
}

/* ---- end to end, with cdsim ---- */

static const char *COMPARE_HEADER =
    "model,dt,scene,solver,out,status,exit,steps,substeps,wall_time,contacts_mean,contacts_max,"
    "iterations_mean,iterations_max,residual_max,nonconverged_steps,penetration_max,lift_max,"
    "kinetic_energy_final";

static int slidingCube(char *path, size_t n) {
  snprintf(path, n, "%s/scenes/sliding-cube.json", rootDir());
  return access(path, R_OK) == 0;
}

CD_TEST(compareModelsOnSlidingCubeWritesPlotAndOneRowPerModel) {
  NEED_PYTHON();
  NEED_CDSIM();
  char dir[64], scene[512], cmd[2400], path[256], line[4096], field[64], out[8192];
  if (!slidingCube(scene, sizeof scene)) CD_SKIP("scenes/sliding-cube.json is absent");
  CHECK(tmpMake(dir, sizeof dir));
  snprintf(cmd, sizeof cmd, "'%s/scripts/compare-models' '%s' --duration 0.3 --out '%s/cmp' 2>&1",
           rootDir(), scene, dir);
  int rc = runCapture(cmd, out, sizeof out);
  CHECK_MSG(rc == 0, "compare-models: exit %d:\n%s", rc, out);
  CHECK_MSG(strstr(out, "stop time") != NULL, "no table printed:\n%s", out);
  snprintf(path, sizeof path, "%s/cmp/compare.png", dir);
  CHECK_MSG(fileStartsWith(path, PNG_SIG, 8), "%s is not a PNG", path);
  snprintf(path, sizeof path, "%s/cmp/summary.csv", dir);
  char *csv = readAll(path, NULL);
  CHECK(csv != NULL);
  if (csv) {
    CHECK_MSG(countLines(csv) == 5, "summary.csv:\n%s", csv);
    CHECK(lineOf(csv, 0, line, sizeof line));
    CHECK_MSG(strncmp(line, COMPARE_HEADER, strlen(COMPARE_HEADER)) == 0, "header: %s", line);
    static const char *const models[] = {"lcp", "ccp", "ncp", "penalty"};
    for (int k = 1; k <= 4; k++) {
      CHECK(lineOf(csv, k, line, sizeof line));
      CHECK(fieldOf(line, 0, field, sizeof field) && strcmp(field, models[k - 1]) == 0);
      CHECK_MSG(fieldOf(line, 6, field, sizeof field) && strcmp(field, "0") == 0, "row %d: %s", k, line);
      /* the run's own summary made it into the row (steps is column 7) */
      CHECK_MSG(fieldOf(line, 7, field, sizeof field) && atol(field) > 0,
                "row %d carries no run summary (did cdsim print its --summary line?): %s", k, line);
    }
    free(csv);
  }
  for (int k = 0; k < 4; k++) {
    static const char *const files[] = {"lcp.h5", "ccp.h5", "ncp.h5", "penalty.h5"};
    snprintf(path, sizeof path, "%s/cmp/%s", dir, files[k]);
    CHECK_MSG(access(path, R_OK) == 0, "%s missing", path);
  }
  /* render the first frame of a real run */
  snprintf(cmd, sizeof cmd, "'%s/scripts/render' '%s/cmp/lcp.h5' --frame 0 --out '%s/r0.png' >/dev/null",
           rootDir(), dir, dir);
  CHECK(system(cmd) == 0);
  snprintf(path, sizeof path, "%s/r0.png", dir);
  CHECK_MSG(fileStartsWith(path, PNG_SIG, 8), "%s is not a PNG", path);
  tmpRemove(dir);
}

/* the friction pointer of the sliding cube's material, from the scene itself */
static int frictionPointer(const char *scene, char *ptr, size_t n) {
  char cmd[1200], out[256];
  snprintf(cmd, sizeof cmd,
           PY " -c 'import json, sys; s = json.load(open(sys.argv[1])); m = s[\"bodies\"][0][\"material\"]; "
              "print(\"/materials/%%s/friction\" %% m)' '%s' 2>/dev/null",
           scene);
  if (runCapture(cmd, out, sizeof out) != 0 || out[0] != '/') return 0;
  out[strcspn(out, "\n")] = '\0';
  snprintf(ptr, n, "%s", out);
  return 1;
}

CD_TEST(sweepOverFrictionAndModelsGivesOneRowAndOneFilePerRun) {
  NEED_PYTHON();
  NEED_CDSIM();
  if (!haveGnuParallel()) CD_SKIP("GNU parallel is not installed");
  char dir[64], scene[512], ptr[256], cmd[2400], path[256], line[4096], out[4096];
  if (!slidingCube(scene, sizeof scene)) CD_SKIP("scenes/sliding-cube.json is absent");
  if (!frictionPointer(scene, ptr, sizeof ptr)) CD_SKIP("the sliding cube's body 0 names no material");
  CHECK(tmpMake(dir, sizeof dir));
  snprintf(cmd, sizeof cmd,
           "'%s/scripts/sweep' '%s' --param '%s' --values 0.3,0.6 "
           "--models lcp,ccp --jobs 2 --out '%s/sw' -- --duration 0.2 2>&1",
           rootDir(), scene, ptr, dir);
  int rc = runCapture(cmd, out, sizeof out);
  CHECK_MSG(rc == 0, "sweep: exit %d:\n%s", rc, out);
  CHECK_MSG(strstr(out, "4 runs, 0 failed") != NULL, "sweep said:\n%s", out);
  snprintf(path, sizeof path, "%s/sw/summary.csv", dir);
  char *csv = readAll(path, NULL);
  CHECK(csv != NULL);
  if (csv) {
    CHECK_MSG(countLines(csv) == 5, "summary.csv:\n%s", csv);
    for (int k = 1; lineOf(csv, k, line, sizeof line); k++) {
      char field[64];
      CHECK_MSG(fieldOf(line, 2, field, sizeof field) && strcmp(field, "0") == 0, "row %d: %s", k, line);
    }
    free(csv);
  }
  static const char *const files[] = {"friction=0.3_model=lcp.h5", "friction=0.3_model=ccp.h5",
                                      "friction=0.6_model=lcp.h5", "friction=0.6_model=ccp.h5"};
  for (int k = 0; k < 4; k++) {
    snprintf(path, sizeof path, "%s/sw/%s", dir, files[k]);
    CHECK_MSG(access(path, R_OK) == 0, "%s missing", path);
  }
  snprintf(cmd, sizeof cmd, "ls '%s/sw' | grep -c '\\.h5$'", dir);
  CHECK(runCapture(cmd, out, sizeof out) == 0 && atoi(out) == 4);
  tmpRemove(dir);
}

CD_TEST(sweepRecordsAnInvalidValueAsExitTwoAndFinishesTheRest) {
  NEED_PYTHON();
  NEED_CDSIM();
  if (!haveGnuParallel()) CD_SKIP("GNU parallel is not installed");
  char dir[64], scene[512], ptr[256], cmd[2400], path[256], line[4096], field[64], out[4096];
  if (!slidingCube(scene, sizeof scene)) CD_SKIP("scenes/sliding-cube.json is absent");
  if (!frictionPointer(scene, ptr, sizeof ptr)) CD_SKIP("the sliding cube's body 0 names no material");
  CHECK(tmpMake(dir, sizeof dir));
  snprintf(cmd, sizeof cmd,
           "'%s/scripts/sweep' '%s' --param '%s' --values -1,0.3 "
           "--models lcp --out '%s/sw' -- --duration 0.2 2>&1",
           rootDir(), scene, ptr, dir);
  int rc = runCapture(cmd, out, sizeof out);
  CHECK_MSG(rc == 0, "sweep: exit %d:\n%s", rc, out);
  CHECK_MSG(strstr(out, "2 runs, 1 failed") != NULL, "sweep said:\n%s", out);
  snprintf(path, sizeof path, "%s/sw/summary.csv", dir);
  char *csv = readAll(path, NULL);
  CHECK(csv != NULL);
  if (csv) {
    CHECK_MSG(countLines(csv) == 3, "summary.csv:\n%s", csv);
    /* columns: friction, model, exit, ... */
    CHECK(lineOf(csv, 1, line, sizeof line));
    CHECK(fieldOf(line, 0, field, sizeof field) && strcmp(field, "-1") == 0);
    CHECK_MSG(fieldOf(line, 2, field, sizeof field) && strcmp(field, "2") == 0, "row 1: %s", line);
    CHECK(lineOf(csv, 2, line, sizeof line));
    CHECK(fieldOf(line, 0, field, sizeof field) && strcmp(field, "0.3") == 0);
    CHECK_MSG(fieldOf(line, 2, field, sizeof field) && strcmp(field, "0") == 0, "row 2: %s", line);
    CHECK_MSG(strstr(line, ",ok,") != NULL,
              "row 2 carries no run summary (did cdsim print its --summary line?): %s", line);
    free(csv);
  }
  snprintf(path, sizeof path, "%s/sw/friction=0.3_model=lcp.h5", dir);
  CHECK_MSG(access(path, R_OK) == 0, "%s missing", path);
  snprintf(path, sizeof path, "%s/sw/friction=-1_model=lcp.h5", dir);
  CHECK_MSG(access(path, F_OK) != 0, "%s written by an invalid scene", path);
  tmpRemove(dir);
}
