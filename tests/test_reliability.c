/* test_reliability.c: what a batch run over thousands of generated scenes relies on: no
 * crash, no hang, no leak, no lost result (tests/fuzz/README.md, "Limits and failure
 * behaviour").
 *   - every allocation of a whole small run failed in turn (cd_allocFailAt), in-process;
 *   - hostile scenes through the real binary under a time limit: a clear error (exit 2
 *     with a message) or a sane run (exit 0, or 3 with a message), never a signal;
 *   - output trouble: a read-only file, a directory, a disk that fills;
 *   - numerical trouble said once on stderr and counted in the file;
 *   - every input in tests/fuzz/regressions/ loads and steps without a crash.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "alloc.h"
#include "backends.h"
#include "run.h"
#include "scene_json.h"
#include "cli_util.h"
#include "test.h"
#include "world.h"

static int countLines(const char *s, const char *needle) {
  int n = 0;
  for (const char *p = s; (p = strstr(p, needle)); p += strlen(needle)) n++;
  return n;
}

typedef cdCliLimits Limits;

#define RUN(lim, err, secs, ...) \
  cd_cliRun((const char *const[]){__VA_ARGS__, NULL}, lim, NULL, 0, err, sizeof(err), secs)

/* the status attribute of a file ("" when missing); -1 when the file does not open */
static int readStatus(const char *file, char *buf, size_t n) { return cd_cliReadAttr(file, "status", buf, n); }

static const char *const MODELS[] = {"lcp", "ccp", "penalty", "ncp"};
#define NMODELS ((int)(sizeof MODELS / sizeof MODELS[0]))

/* ---- allocation failure through a whole run ------------------------------------------ */

CD_TEST(everyAllocationFailureOfAWholeRunEndsCleanlyWithoutLeakForEveryModel) {
  char scene[512], out[512], errpath[512];
  snprintf(scene, sizeof scene, "%s/tiny.json", cd_cliTmpdir());
  snprintf(out, sizeof out, "%s/tiny.h5", cd_cliTmpdir());
  snprintf(errpath, sizeof errpath, "%s/tiny.err", cd_cliTmpdir());
  CHECK(cd_cliWriteFile(scene, "{\"dt\": 0.01, \"steps\": 3, \"ground\": {},\n"
                         " \"bodies\": [{\"name\": \"cube\", \"shape\": \"cube\", \"size\": 0.2, \"mass\": 1,\n"
                         "   \"position\": [0, 0, 0.1], \"velocity\": [2, 0, 0]}]}\n") == 0);
  cdSceneSet set = {"/bodies/0/angular_velocity", "[0, 0, 1]"};
  /* stderr to a file for the whole test: each failed run must say one line ("out of
   * memory", or "I/O error" when the allocation was the recorder's: its calls report -1) */
  fflush(stderr);
  int saved = dup(2), fd = open(errpath, O_RDWR | O_CREAT | O_TRUNC, 0644);
  CHECK(saved >= 0 && fd >= 0);
  if (saved < 0 || fd < 0) return;
  long failures = 0;
  for (int m = 0; m < NMODELS; m++) {
    cdRunConfig cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.scene_path = scene;
    cfg.model = MODELS[m];
    cfg.out = out;
    cfg.sets = &set;
    cfg.nset = 1;
    cfg.duration = -1;
    cfg.steps = -1;
    cfg.output_every = 1;
    cfg.quiet = 1;
    cfg.command_line = "cdsim tiny.json"; /* options not given stay 0, as main.c leaves them */
    int done = 0;
    for (long k = 1; k < 100000 && !done; k++) {
      unlink(out);
      if (ftruncate(fd, 0) || lseek(fd, 0, SEEK_SET) || dup2(fd, 2) < 0) break;
      long live = cd_allocLive();
      cd_allocFailAt(k);
      int code = cd_run(&cfg);
      cd_allocFailAt(0);
      fflush(stderr);
      dup2(saved, 2);
      char msg[8192];
      cd_cliReadFile(errpath, msg, sizeof msg);
      CHECK_MSG(cd_allocLive() == live, "%s, allocation %ld failed: %ld blocks leaked", MODELS[m], k,
                cd_allocLive() - live);
      char status[4096];
      int exists = access(out, F_OK) == 0, opened = exists ? readStatus(out, status, sizeof status) : -1;
      CHECK_MSG(!exists || opened == 0, "%s, allocation %ld failed: the output exists but is no HDF5 file",
                MODELS[m], k);
      if (code == 0) {
        CHECK_MSG(opened == 0 && strcmp(status, "ok") == 0, "%s: a run returned 0 with status '%s'", MODELS[m],
                  status);
        done = 1;
        continue;
      }
      failures++;
      CHECK_MSG(code == CD_EXIT_ERROR, "%s, allocation %ld failed: exit %d (%s)", MODELS[m], k, code, msg);
      CHECK_MSG(countLines(msg, "\n") == 1 && (strstr(msg, "out of memory") || strstr(msg, "I/O error")),
                "%s, allocation %ld failed: stderr is not one line saying so: '%s'", MODELS[m], k, msg);
      if (opened == 0)
        CHECK_MSG(strcmp(status, "ok") != 0, "%s, allocation %ld failed but the file says ok", MODELS[m], k);
    }
    CHECK_MSG(done, "%s: no run succeeded", MODELS[m]);
  }
  close(fd);
  close(saved);
  printf("    %ld failed runs, each cleanly\n", failures);
  CHECK(failures > 300);
}

/* ---- hostile scenes ------------------------------------------------------------------ */

static const char *const GROUND = "\"ground\": {}";

/* runs text under every model for at most `seconds`; each must exit 2
 * with a message naming the file (when reject) or end 0 / 3 (when !reject; 3 with a
 * message); never a signal. Returns the largest wall time. */
static double hostile(const char *label, const char *text, int reject, int auto_substeps, int seconds) {
  char path[512], out[512], err[8192];
  snprintf(path, sizeof path, "%s/hostile.json", cd_cliTmpdir());
  snprintf(out, sizeof out, "%s/hostile.h5", cd_cliTmpdir());
  if (cd_cliWriteFile(path, text)) {
    cd_testFail(__FILE__, __LINE__, "%s: cannot write the scene", label);
    return 0;
  }
  /* 4 GiB of address space: a scene that would take the machine's memory (500 bodies at
   * one point once asked for 24 GB) fails here instead */
  Limits lim = {seconds, 0, 0, 4L << 30};
  double worst = 0;
  for (int m = 0; m < NMODELS; m++) {
    double secs = 0;
    /* the penalty model takes up to 1e6 substeps a step on stiff or deep contacts (a few
     * seconds a step): forced substeps keep the suite fast, except where the automatic
     * count is the point (auto_substeps) */
    int code = m == 2 && !auto_substeps
                   ? RUN(&lim, err, &secs, path, "--model", MODELS[m], "--substeps", "1000", "--out", out, "--quiet")
                   : RUN(&lim, err, &secs, path, "--model", MODELS[m], "--out", out, "--quiet");
    if (secs > worst) worst = secs;
    if (code >= 128) {
      cd_testFail(__FILE__, __LINE__, "%s (%s): killed by signal %d%s", label, MODELS[m], code - 128,
                  code - 128 == SIGALRM ? " (a hang)" : "");
    } else if (reject) {
      CHECK_MSG(code == 2 && strstr(err, "hostile.json"), "%s (%s): exit %d, expected 2 naming the file: %.300s",
                label, MODELS[m], code, err);
    } else {
      CHECK_MSG(code == 0 || (code == 3 && strstr(err, "cdsim: ")), "%s (%s): exit %d: %.300s", label, MODELS[m],
                code, err);
    }
    if (reject) break; /* the loader rejects before the model matters */
  }
  return worst;
}

/* one body in a scene with the ground */
static void oneBody(char *buf, size_t n, const char *settings, const char *body, const char *materials) {
  snprintf(buf, n, "{\"dt\": 0.01, \"steps\": 3, %s%s%s, %s \"bodies\": [%s]}", GROUND, settings[0] ? ", " : "",
           settings, materials, body);
}

CD_TEST(extremeNumbersGiveACleanErrorOrASaneRun) {
  if (!cd_cliHaveBin()) CD_SKIP("CDSIM_BIN not built");
  static const struct {
    const char *label, *body, *settings;
  } cases[] = {
      {"radius 1e-9", "{\"shape\": \"sphere\", \"radius\": 1e-9, \"mass\": 1, \"position\": [0, 0, 1e-9]}", ""},
      {"radius 1e5", "{\"shape\": \"sphere\", \"radius\": 1e5, \"mass\": 1, \"position\": [0, 0, 1e5]}", ""},
      {"mass 1e-12", "{\"shape\": \"sphere\", \"radius\": 0.1, \"mass\": 1e-12, \"position\": [0, 0, 0.1]}", ""},
      {"mass 1e12", "{\"shape\": \"cube\", \"size\": 0.2, \"mass\": 1e12, \"position\": [0, 0, 0.1]}", ""},
      {"position 1e8", "{\"shape\": \"cube\", \"size\": 0.2, \"mass\": 1, \"position\": [1e8, -1e8, 1e8]}", ""},
      {"position 1e8 on the ground",
       "{\"shape\": \"sphere\", \"radius\": 0.1, \"mass\": 1, \"position\": [1e8, 1e8, 0.1]}", ""},
      {"dt 1e-9", "{\"shape\": \"cube\", \"size\": 0.2, \"mass\": 1, \"position\": [0, 0, 0.1]}", "\"gravity\": [0, 0, -9.81]"},
      {"velocity 1e6",
       "{\"shape\": \"cube\", \"size\": 0.2, \"mass\": 1, \"position\": [0, 0, 0.1], \"velocity\": [1e6, 0, -1e6],"
       " \"angular_velocity\": [1e6, 1e6, 0]}",
       ""},
      {"enormous cube 1e6", "{\"shape\": \"cube\", \"size\": 1e6, \"mass\": 1, \"position\": [0, 0, 5e5]}", ""},
  };
  char text[4096];
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    oneBody(text, sizeof text, cases[i].settings, cases[i].body, "");
    if (!strcmp(cases[i].label, "dt 1e-9")) {
      /* the scene's dt, with 3 steps */
      snprintf(text, sizeof text, "{\"dt\": 1e-9, \"steps\": 3, %s, \"bodies\": [%s]}", GROUND, cases[i].body);
    }
    hostile(cases[i].label, text, 0, 0, 20);
  }
}

CD_TEST(malformedAndOversizedFilesAreRejectedWithAMessage) {
  if (!cd_cliHaveBin()) CD_SKIP("CDSIM_BIN not built");
  /* 2000 levels of nesting */
  size_t n = 4000 + 64;
  char *deep = malloc(n);
  if (!deep) return;
  size_t k = (size_t)snprintf(deep, n, "{\"bodies\": ");
  for (int i = 0; i < 2000; i++) deep[k++] = '[';
  for (int i = 0; i < 2000; i++) deep[k++] = ']';
  deep[k++] = '}';
  deep[k] = 0;
  hostile("2000 levels of nesting", deep, 1, 0, 20);
  free(deep);
  /* a 1 MB name */
  size_t nl = 1 << 20;
  char *big = malloc(nl + 256);
  if (!big) return;
  k = (size_t)snprintf(big, 64, "{\"bodies\": [{\"name\": \"");
  memset(big + k, 'n', nl);
  k += nl;
  snprintf(big + k, 200, "\", \"shape\": \"sphere\", \"radius\": 0.1, \"mass\": 1, \"position\": [0, 0, 1]}]}");
  hostile("a 1 MB name", big, 1, 0, 20);
  free(big);
  /* 10 MB of whitespace */
  size_t nw = 10u << 20;
  char *ws = malloc(nw + 1);
  if (!ws) return;
  for (size_t i = 0; i < nw; i++) ws[i] = " \n\t\r"[i % 4];
  ws[nw] = 0;
  hostile("10 MB of whitespace", ws, 1, 0, 20);
  free(ws);
  /* zero-size shapes */
  char text[1024];
  oneBody(text, sizeof text, "", "{\"shape\": \"sphere\", \"radius\": 0, \"mass\": 1, \"position\": [0, 0, 1]}", "");
  hostile("radius 0", text, 1, 0, 20);
  oneBody(text, sizeof text, "", "{\"shape\": \"box\", \"size\": [1, 0, 1], \"mass\": 1, \"position\": [0, 0, 1]}", "");
  hostile("box with a zero side", text, 1, 0, 20);
  oneBody(text, sizeof text, "", "{\"shape\": \"cube\", \"size\": 0, \"density\": 1, \"position\": [0, 0, 1]}", "");
  hostile("cube of size 0", text, 1, 0, 20);
}

CD_TEST(fiveHundredBodiesAtOnePointFinishInBoundedTimeUnderEveryModel) {
  if (!cd_cliHaveBin()) CD_SKIP("CDSIM_BIN not built");
  static const char *const shapes[] = {"\"shape\": \"sphere\", \"radius\": 0.1", "\"shape\": \"cube\", \"size\": 0.2"};
  size_t n = 500 * 128 + 256;
  char *text = malloc(n);
  if (!text) return;
  for (int s = 0; s < 2; s++) {
    size_t k = (size_t)snprintf(text, n, "{\"dt\": 0.01, \"steps\": 2, %s, \"bodies\": [", GROUND);
    for (int i = 0; i < 500; i++)
      k += (size_t)snprintf(text + k, n - k, "%s{%s, \"mass\": 1, \"position\": [0, 0, 1]}", i ? ", " : "", shapes[s]);
    snprintf(text + k, n - k, "]}");
    double secs = hostile(s ? "500 cubes at one point" : "500 spheres at one point", text, 0, 1, 60);
    printf("    500 %s at one point: slowest model %.2f s\n", s ? "cubes" : "spheres", secs);
  }
  free(text);
}

CD_TEST(bodiesInsideEachOtherRunOrFailCleanly) {
  if (!cd_cliHaveBin()) CD_SKIP("CDSIM_BIN not built");
  char text[2048];
  snprintf(text, sizeof text,
           "{\"dt\": 0.01, \"steps\": 5, %s, \"bodies\": ["
           "{\"shape\": \"cube\", \"size\": 1, \"mass\": 1, \"position\": [0, 0, 0.5]},"
           "{\"shape\": \"sphere\", \"radius\": 0.1, \"mass\": 1, \"position\": [0, 0, 0.5]}]}",
           GROUND);
  hostile("a sphere inside a cube", text, 0, 0, 20);
  snprintf(text, sizeof text,
           "{\"dt\": 0.01, \"steps\": 5, %s, \"bodies\": ["
           "{\"shape\": \"cube\", \"size\": 1, \"mass\": 1, \"position\": [0, 0, 0.5]},"
           "{\"shape\": \"cube\", \"size\": 0.3, \"mass\": 1, \"position\": [0.1, 0, 0.5],"
           " \"orientation\": [0.9238795325112867, 0, 0.3826834323650898, 0]}]}",
           GROUND);
  hostile("a cube inside a cube", text, 0, 0, 20);
  snprintf(text, sizeof text,
           "{\"dt\": 0.01, \"steps\": 5, \"bodies\": ["
           "{\"shape\": \"cube\", \"size\": 0.2, \"mass\": 1, \"position\": [0, 0, 0]},"
           "{\"shape\": \"cube\", \"size\": 0.2, \"mass\": 1, \"position\": [0, 0, 0]}]}");
  hostile("two cubes in the same place", text, 0, 0, 20);
}

CD_TEST(extremeMaterialsRunOrFailCleanly) {
  if (!cd_cliHaveBin()) CD_SKIP("CDSIM_BIN not built");
  static const struct {
    const char *label, *material;
  } cases[] = {
      {"friction 10", "\"friction\": 10"},
      {"restitution 1e-9, impact model 2", "\"restitution\": 1e-9, \"impact_model\": 2"},
      {"restitution 1e-9, impact model 1", "\"restitution\": 1e-9, \"impact_model\": 1"},
      {"stiffness exponent 10", "\"stiffness_exponent\": 10"},
      {"adhesion 1e12", "\"adhesion_coefficient\": 1e12, \"adhesion_exponent\": 3, \"pull_off_force\": 1e6"},
      {"plasticity 0.999", "\"plasticity_ratio\": 0.999"},
  };
  char text[2048];
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    snprintf(text, sizeof text,
             "{\"dt\": 0.01, \"steps\": 3, \"ground\": {\"material\": \"m\"}, \"materials\": {\"m\": {%s}},"
             " \"bodies\": [{\"shape\": \"cube\", \"size\": 0.2, \"mass\": 1, \"position\": [0, 0, 0.099],"
             " \"velocity\": [1, 0, -1], \"material\": \"m\"},"
             " {\"shape\": \"sphere\", \"radius\": 0.1, \"mass\": 1, \"position\": [0.5, 0, 0.099],"
             " \"velocity\": [0, 0, -2], \"material\": \"m\"}]}",
             cases[i].material);
    hostile(cases[i].label, text, 0, 0, 20);
  }
}

CD_TEST(overflowingStiffnessExitsThreeWithAMessage) {
  if (!cd_cliHaveBin()) CD_SKIP("CDSIM_BIN not built");
  char scene[1024], out[512], err[8192];
  cd_cliScenePath(scene, sizeof scene, "sliding-cube.json");
  snprintf(out, sizeof out, "%s/stiff.h5", cd_cliTmpdir());
  Limits lim = {20, 0, 0, 0};
  /* on an edge (a flat cube's capped friction only throws it off, finitely) */
  int code = RUN(&lim, err, NULL, scene, "--model", "penalty", "--set", "/materials/steel/stiffness=1e300", "--set",
                 "/bodies/0/orientation=[0.995,0.0998,0,0]", "--steps", "3", "--out", out, "--quiet");
  CHECK_MSG(code == 3, "exit %d: %s", code, err);
  /* one error line (and the notice of the tilted cube's initial overlap, src/notices.h) */
  CHECK_MSG(countLines(err, "cdsim: ") - countLines(err, "cdsim: warning: ") == 1 &&
                strstr(err, "non-finite state at step"),
            "stderr: %s", err);
  char status[4096];
  CHECK(readStatus(out, status, sizeof status) == 0 && strcmp(status, "ok") != 0);
}

/* ---- output trouble ------------------------------------------------------------------ */

CD_TEST(readOnlyOutputFileExitsOneNamesItAndKeepsItsContents) {
  if (!cd_cliHaveBin()) CD_SKIP("CDSIM_BIN not built");
  char scene[1024], sub[512], out[600], err[8192], keep[64];
  cd_cliScenePath(scene, sizeof scene, "sliding-cube.json");
  /* a folder everyone may enter, holding a file nobody may write (as root the run drops to
   * nobody, for whom the permissions hold) */
  snprintf(sub, sizeof sub, "%s/ro", cd_cliTmpdir());
  CHECK(mkdir(sub, 0755) == 0 || errno == EEXIST);
  chmod(cd_cliTmpdir(), 0755);
  snprintf(out, sizeof out, "%s/keep.h5", sub);
  CHECK(cd_cliWriteFile(out, "precious") == 0);
  CHECK(chmod(out, 0444) == 0);
  Limits lim = {20, 0, 1, 0};
  int code = RUN(&lim, err, NULL, scene, "--out", out, "--steps", "3", "--quiet");
  CHECK_MSG(code == 1, "exit %d: %s", code, err);
  CHECK_MSG(strstr(err, out) != NULL, "stderr: %s", err);
  cd_cliReadFile(out, keep, sizeof keep);
  CHECK(strcmp(keep, "precious") == 0);
  chmod(cd_cliTmpdir(), 0700);
}

/* a second run given the output of a file another process holds open (HDF5's lock: here a
 * writer, as a running cdsim is) exits 1 naming it, and the file keeps every frame and its
 * sidecar: HDF5's create-and-truncate used to empty the file before it found the lock */
CD_TEST(outputAnotherProcessHoldsOpenIsLeftAsItIs) {
  if (!cd_cliHaveBin()) CD_SKIP("CDSIM_BIN not built");
  char scene[1024], out[600], side[620], err[8192], status[64];
  cd_cliScenePath(scene, sizeof scene, "sliding-cube.json");
  snprintf(out, sizeof out, "%s/held.h5", cd_cliTmpdir());
  snprintf(side, sizeof side, "%s/held.xdmf", cd_cliTmpdir());
  Limits lim = {20, 0, 0, 0};
  int code = RUN(&lim, err, NULL, scene, "--out", out, "--steps", "7", "--quiet");
  CHECK_MSG(code == 0, "first run: exit %d: %s", code, err);
  struct stat st0, st1;
  CHECK(stat(out, &st0) == 0 && access(side, R_OK) == 0);
  hid_t f = H5Fopen(out, H5F_ACC_RDWR, H5P_DEFAULT);
  CHECK_MSG(f >= 0, "the test cannot open %s", out);
  if (f < 0) return;
  code = RUN(&lim, err, NULL, scene, "--out", out, "--steps", "3", "--quiet");
  H5Fclose(f);
  CHECK_MSG(code == 1 && strstr(err, out) && strstr(err, "another process has it open"), "exit %d: %s", code, err);
  CHECK(stat(out, &st1) == 0 && st1.st_size == st0.st_size && access(side, R_OK) == 0);
  CHECK(readStatus(out, status, sizeof status) == 0 && strcmp(status, "ok") == 0);
  hid_t g = H5Fopen(out, H5F_ACC_RDONLY, H5P_DEFAULT);
  hid_t d = g >= 0 ? H5Dopen2(g, "/time", H5P_DEFAULT) : -1;
  hid_t sp = d >= 0 ? H5Dget_space(d) : -1;
  hsize_t n = 0;
  if (sp >= 0) H5Sget_simple_extent_dims(sp, &n, NULL);
  CHECK_MSG(n == 8, "/time holds %llu frames, not the first run's 8", (unsigned long long)n);
  if (sp >= 0) H5Sclose(sp);
  if (d >= 0) H5Dclose(d);
  if (g >= 0) H5Fclose(g);
}

CD_TEST(outputOntoADirectoryExitsOne) {
  if (!cd_cliHaveBin()) CD_SKIP("CDSIM_BIN not built");
  char scene[1024], err[8192];
  cd_cliScenePath(scene, sizeof scene, "sliding-cube.json");
  Limits lim = {20, 0, 0, 0};
  int code = RUN(&lim, err, NULL, scene, "--out", cd_cliTmpdir(), "--steps", "3", "--quiet");
  CHECK_MSG(code == 1, "exit %d: %s", code, err);
  CHECK_MSG(strstr(err, cd_cliTmpdir()) != NULL, "stderr: %s", err);
  struct stat st;
  CHECK(stat(cd_cliTmpdir(), &st) == 0 && S_ISDIR(st.st_mode));
}

CD_TEST(fullDiskEndsWithAnErrorAndAFileThatOpens) {
  if (!cd_cliHaveBin()) CD_SKIP("CDSIM_BIN not built");
  /* RLIMIT_FSIZE makes writes past it fail with EFBIG, as on a full disk. 256 KiB is past
   * the first batches (a disk that fills in the very first batch can leave the file
   * unreadable: io/recorder.c). Before the fix of H5dont_atexit the process died of
   * SIGSEGV in HDF5's exit handler after printing the error. */
  char scene[1024], out[512], err[8192];
  cd_cliScenePath(scene, sizeof scene, "sliding-cube.json");
  snprintf(out, sizeof out, "%s/full.h5", cd_cliTmpdir());
  enum { LIMIT = 256 * 1024 };
  Limits lim = {60, LIMIT, 0, 0};
  int code = RUN(&lim, err, NULL, scene, "--model", "lcp", "--steps", "200000", "--out", out, "--quiet");
  CHECK_MSG(code == 1, "exit %d: %s", code, err);
  CHECK_MSG(strstr(err, "I/O error") && strstr(err, out) && countLines(err, "\n") == 1, "stderr: %s", err);
  struct stat st;
  CHECK(stat(out, &st) == 0 && st.st_size <= LIMIT);
  char status[4096];
  CHECK_MSG(readStatus(out, status, sizeof status) == 0, "the file does not open after the disk filled");
  CHECK_MSG(strcmp(status, "ok") != 0, "status '%s'", status);
  /* lengths only: values of a chunk lost to the failed write are not safe to read
   * (io/recorder.c, tests/test_recorder.c) */
  long F = -1;
  hid_t f = H5Fopen(out, H5F_ACC_RDONLY, H5P_DEFAULT);
  hid_t d = f >= 0 ? H5Dopen2(f, "/time", H5P_DEFAULT) : -1;
  if (d >= 0) {
    hid_t sp = H5Dget_space(d);
    F = (long)H5Sget_simple_extent_npoints(sp);
    H5Sclose(sp);
    H5Dclose(d);
  }
  if (f >= 0) H5Fclose(f);
  CHECK_MSG(F > 0 && F % 32 == 0, "%ld frames kept (whole batches of 32 expected)", F);
  printf("    the file keeps %ld frames\n", F);
}

/* ---- numerical trouble --------------------------------------------------------------- */

CD_TEST(nonConvergenceIsSaidOnceAndCountedInTheFile) {
  if (!cd_cliHaveBin()) CD_SKIP("CDSIM_BIN not built");
  char scene[1024], out[512], err[16384];
  cd_cliScenePath(scene, sizeof scene, "cube-stack.json");
  snprintf(out, sizeof out, "%s/nc.h5", cd_cliTmpdir());
  Limits lim = {30, 0, 0, 0};
  int code = RUN(&lim, err, NULL, scene, "--model", "ccp", "--solver", "pgs", "--max-iterations", "1", "--steps",
                 "20", "--out", out);
  CHECK_MSG(code == 0, "exit %d: %s", code, err);
  CHECK_MSG(countLines(err, "did not converge") == 1, "stderr: %s", err);
  double *conv = NULL, *warn = NULL;
  long n = cd_cliReadDataset(out, "/solver/converged", &conv, NULL, NULL);
  long nw = cd_cliReadDataset(out, "/solver/warn_nonconverged", &warn, NULL, NULL);
  CHECK(n == 21 && nw == 21);
  if (n == 21 && nw == 21) {
    long zeros = 0;
    CHECK(conv[0] == 1);
    for (long k = 1; k < n; k++) {
      zeros += conv[k] == 0;
      CHECK_MSG((long)warn[k] == zeros, "frame %ld: warn_nonconverged %g, %ld non-converged so far", k, warn[k],
                zeros);
    }
    CHECK(zeros > 0);
  }
  free(conv);
  free(warn);
}

/* ---- the fuzzers' findings ----------------------------------------------------------- */

/* what the harnesses do with one input (tests/fuzz/fuzz_scene.c, fuzz_step.c), in short */
static void replay(const char *name, const char *data, size_t size) {
  char *buf = malloc(size + 2);
  if (!buf) return;
  memcpy(buf, data, size);
  buf[size] = buf[size + 1] = 0;
  cdSceneSet sets[16];
  int nset = 0;
  size_t tlen = strlen(buf);
  for (char *line = tlen < size ? buf + tlen + 1 : NULL; line && *line && nset < 16;) {
    char *nl = strchr(line, '\n'), *eq;
    if (nl) *nl = 0;
    if ((eq = strchr(line, '='))) *eq = 0;
    sets[nset++] = (cdSceneSet){line, eq ? eq + 1 : "null"};
    line = nl ? nl + 1 : NULL;
  }
  long live = cd_allocLive();
  cdScene scene;
  char err[4096] = "";
  int st = cd_sceneLoad(name, buf, sets, nset, &scene, NULL, err, sizeof err);
  CHECK_MSG(st == 0 || (st == 2 && err[0]), "%s: load returned %d", name, st);
  if (st == 0 && scene.nbody <= 20) {
    if (scene.nstep > 5) scene.nstep = 5;
    cdBackendOptions opt = {.friction_dirs = 4, .max_iterations = 100, .substeps = 200};
    for (int m = 0; m < NMODELS; m++) {
      const cdBackend *be = cd_backendFind(MODELS[m]);
      void *bs = NULL;
      if (be->make(&scene, &opt, &bs, err, sizeof err)) continue;
      cdWorld *w = cd_worldMake(&scene);
      for (long k = 0; w && k < scene.nstep; k++) {
        cdSolveStats stats;
        if (cd_worldStep(&scene, w, be, bs, scene.dt, &stats) || cd_worldCheckFinite(w) >= 0) break;
      }
      cd_worldFree(w);
      be->free(bs);
    }
  }
  if (st == 0) cd_sceneFree(&scene);
  CHECK_MSG(cd_allocLive() == live, "%s: leaked", name);
  free(buf);
}

CD_TEST(everyFuzzRegressionInputLoadsAndStepsWithoutCrash) {
  const char *root = getenv("CDSIM_ROOT");
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/tests/fuzz/regressions", root ? root : ".");
  DIR *d = opendir(dir);
  if (!d) CD_SKIP("tests/fuzz/regressions not found");
  struct dirent *e;
  int n = 0;
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.' || !strcmp(e->d_name, "README.md")) continue;
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    FILE *f = fopen(path, "rb");
    if (!f) continue;
    static char data[1 << 20];
    size_t size = fread(data, 1, sizeof data, f);
    fclose(f);
    replay(e->d_name, data, size);
    n++;
  }
  closedir(d);
  printf("    %d regression inputs replayed\n", n);
  CHECK(n > 0);
}
