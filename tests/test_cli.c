/* test_cli.c: the command line and the output file, through the real binary ($CDSIM_BIN):
 * exit statuses, messages, nothing written on bad input, interruption, determinism. */
#include <fcntl.h>
#include <hdf5.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test.h"

static char g_dir[256];

static const char *tmpdir(void) {
  if (!g_dir[0]) {
    strcpy(g_dir, "/tmp/cdsim-cli-XXXXXX");
    if (!mkdtemp(g_dir)) g_dir[0] = 0;
  }
  return g_dir;
}

/* the temporary folder goes when the runner exits */
__attribute__((destructor)) static void removeTmpdir(void) {
  if (!g_dir[0]) return;
  char cmd[512];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
  if (system(cmd) != 0) fprintf(stderr, "test_cli: could not remove %s\n", g_dir);
}

static const char *bin(void) { return getenv("CDSIM_BIN"); }

static void scenePath(char *buf, size_t n, const char *name) {
  const char *root = getenv("CDSIM_ROOT");
  snprintf(buf, n, "%s/scenes/%s", root ? root : ".", name);
}

static void readFile(const char *path, char *buf, size_t n) {
  buf[0] = 0;
  FILE *f = fopen(path, "rb");
  if (!f) return;
  size_t k = fread(buf, 1, n - 1, f);
  buf[k] = 0;
  fclose(f);
}

/* runs cdsim with the arguments (NULL-terminated, without argv[0]); its stdout and stderr
 * go to out / err (may be NULL). Returns the exit status, or 128 + signal. */
static int runArgs(const char *const *args, char *out, size_t outn, char *err, size_t errn) {
  char fo[512], fe[512];
  snprintf(fo, sizeof fo, "%s/stdout", tmpdir());
  snprintf(fe, sizeof fe, "%s/stderr", tmpdir());
  const char *argv[64];
  int n = 0;
  argv[n++] = bin();
  for (; args[n - 1] && n < 63; n++) argv[n] = args[n - 1];
  argv[n] = NULL;
  pid_t pid = fork();
  if (pid == 0) {
    int o = open(fo, O_WRONLY | O_CREAT | O_TRUNC, 0644), e = open(fe, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(o, 1);
    dup2(e, 2);
    execv(argv[0], (char *const *)(void *)argv);
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (out) readFile(fo, out, outn);
  if (err) readFile(fe, err, errn);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

#define RUN(out, err, ...) runArgs((const char *const[]){__VA_ARGS__, NULL}, out, sizeof(out), err, sizeof(err))

static int haveBin(void) {
  struct stat st;
  return bin() && stat(bin(), &st) == 0;
}

/* reads a whole dataset as doubles (or its raw bytes when raw); returns the element count */
static long readDataset(const char *file, const char *path, double **data, void **raw, size_t *rawlen) {
  hid_t f = H5Fopen(file, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f < 0) return -1;
  hid_t d = H5Dopen2(f, path, H5P_DEFAULT);
  if (d < 0) {
    H5Fclose(f);
    return -1;
  }
  hid_t sp = H5Dget_space(d);
  long n = (long)H5Sget_simple_extent_npoints(sp);
  if (data) {
    *data = calloc((size_t)(n > 0 ? n : 1), sizeof(double));
    H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, *data);
  }
  if (raw) {
    hid_t t = H5Dget_type(d);
    size_t es = H5Tget_size(t);
    *rawlen = es * (size_t)n;
    *raw = calloc(*rawlen + 1, 1);
    if (H5Tget_class(t) != H5T_STRING) H5Dread(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, *raw);
    H5Tclose(t);
  }
  H5Sclose(sp);
  H5Dclose(d);
  H5Fclose(f);
  return n;
}

/* a string attribute of the root group */
static void readAttr(const char *file, const char *name, char *buf, size_t n) {
  buf[0] = 0;
  hid_t f = H5Fopen(file, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f < 0) return;
  hid_t a = H5Aopen(f, name, H5P_DEFAULT);
  if (a >= 0) {
    hid_t t = H5Aget_type(a);
    if (H5Tis_variable_str(t) > 0) {
      char *s = NULL;
      hid_t mt = H5Tcopy(H5T_C_S1);
      H5Tset_size(mt, H5T_VARIABLE);
      H5Tset_cset(mt, H5T_CSET_UTF8);
      if (H5Aread(a, mt, &s) >= 0 && s) {
        snprintf(buf, n, "%s", s);
        H5free_memory(s);
      }
      H5Tclose(mt);
    }
    H5Tclose(t);
    H5Aclose(a);
  }
  H5Fclose(f);
}

CD_TEST(freeFlightRunWritesEveryFrameOfTheDiscreteParabola) {
  if (!haveBin()) CD_SKIP("CDSIM_BIN not built");
  char scene[1024], out[512], so[4096], se[4096];
  scenePath(scene, sizeof scene, "free-flight.json");
  snprintf(out, sizeof out, "%s/ff.h5", tmpdir());
  int code = RUN(so, se, scene, "--model", "lcp", "--steps", "50", "--dt", "0.01", "--out", out, "--quiet");
  CHECK_MSG(code == 0, "exit %d: %s", code, se);
  double *t = NULL, *pos = NULL, *vel = NULL;
  CHECK(readDataset(out, "/time", &t, NULL, NULL) == 51);
  long np = readDataset(out, "/trajectory/position", &pos, NULL, NULL);
  CHECK(np == 51 * 3);
  CHECK(readDataset(out, "/trajectory/velocity", &vel, NULL, NULL) == 51 * 3);
  if (np == 51 * 3 && t && vel) {
    double z0 = pos[2], vz0 = vel[2];
    for (int k = 0; k <= 50; k++) {
      CHECK_NEAR(t[k], 0.01 * k, 1e-12);
      CHECK_NEAR(pos[3 * k + 2], z0 + k * 0.01 * vz0 - 9.81 * 1e-4 * k * (k + 1) / 2.0, 1e-10);
    }
  }
  free(t);
  free(pos);
  free(vel);
  char attr[4096];
  readAttr(out, "status", attr, sizeof attr);
  CHECK(strcmp(attr, "ok") == 0);
  readAttr(out, "format", attr, sizeof attr);
  CHECK(strcmp(attr, "cdsim") == 0);
  readAttr(out, "model", attr, sizeof attr);
  CHECK(strcmp(attr, "lcp") == 0);
  readAttr(out, "command_line", attr, sizeof attr);
  CHECK(strstr(attr, "--steps 50") != NULL);
  CHECK(readDataset(out, "/contacts/offset", NULL, NULL, NULL) == 52);
  CHECK(readDataset(out, "/contacts/normal_impulse", NULL, NULL, NULL) == 0);
}

CD_TEST(invalidSceneExitsTwoNamesThePlaceAndLeavesTheOutputUntouched) {
  if (!haveBin()) CD_SKIP("CDSIM_BIN not built");
  char bad[512], out[512], so[4096], se[4096];
  snprintf(bad, sizeof bad, "%s/bad.json", tmpdir());
  FILE *f = fopen(bad, "w");
  fputs("{\"bodies\": [{\"shape\": \"sphere\", \"radius\": -0.5, \"mass\": 1, \"position\": [0, 0, 1]}]}\n", f);
  fclose(f);
  snprintf(out, sizeof out, "%s/keep.h5", tmpdir());
  f = fopen(out, "w");
  fputs("precious", f);
  fclose(f);
  int code = RUN(so, se, bad, "--out", out);
  CHECK(code == 2);
  CHECK_MSG(strstr(se, "bad.json: /bodies/0/radius: must be > 0 (got -0.5)") != NULL, "stderr: %s", se);
  char keep[64];
  readFile(out, keep, sizeof keep);
  CHECK(strcmp(keep, "precious") == 0);
  /* a syntax error names line and column */
  f = fopen(bad, "w");
  fputs("{\n  \"dt\": 0.01,\n  \"bodies\": [}\n", f);
  fclose(f);
  code = RUN(so, se, bad, "--out", out);
  CHECK(code == 2);
  CHECK_MSG(strstr(se, "bad.json:3:") != NULL, "stderr: %s", se);
  readFile(out, keep, sizeof keep);
  CHECK(strcmp(keep, "precious") == 0);
}

CD_TEST(badUsageExitsTwoWithAMessage) {
  if (!haveBin()) CD_SKIP("CDSIM_BIN not built");
  char scene[1024], so[4096], se[4096];
  scenePath(scene, sizeof scene, "sliding-cube.json");
  CHECK(RUN(so, se, scene, "--model", "soft") == 2 && strstr(se, "unknown model 'soft'"));
  CHECK(RUN(so, se, scene, "--frobnicate") == 2 && strstr(se, "unknown option '--frobnicate'"));
  CHECK(RUN(so, se, scene, "--model", "lcp", "--solver", "magic", "--quiet") == 2 && strstr(se, "magic"));
  CHECK(RUN(so, se, scene, "--dt", "-1") == 2);
  CHECK(RUN(so, se, scene, "--friction-dirs", "5") == 2 && strstr(se, "even"));
  CHECK(RUN(so, se, scene, "--set", "/bodies/9/radius=0.1") == 2 && strstr(se, "/bodies/9"));
  CHECK(RUN(so, se, "--quiet") == 2 && strstr(se, "no scene file"));
  CHECK(RUN(so, se, "--help") == 0 && strstr(so, "usage: cdsim"));
  CHECK(RUN(so, se, "--version") == 0 && strstr(so, "cdsim "));
}

CD_TEST(unwritableOutputExitsOneAndNamesThePath) {
  if (!haveBin()) CD_SKIP("CDSIM_BIN not built");
  char scene[1024], so[4096], se[4096];
  scenePath(scene, sizeof scene, "sliding-cube.json");
  int code = RUN(so, se, scene, "--out", "/nonexistent-dir/run.h5", "--quiet");
  CHECK(code == 1);
  CHECK_MSG(strstr(se, "/nonexistent-dir/run.h5") != NULL, "stderr: %s", se);
}

CD_TEST(setOverrideReachesTheRunAndTheSceneAttribute) {
  if (!haveBin()) CD_SKIP("CDSIM_BIN not built");
  char scene[1024], out[512], so[8192], se[4096];
  scenePath(scene, sizeof scene, "sliding-cube.json");
  snprintf(out, sizeof out, "%s/set.h5", tmpdir());
  int code = RUN(so, se, scene, "--set", "/bodies/0/velocity=[3,0,0]", "--steps", "2", "--out", out, "--quiet",
                 "--summary");
  CHECK_MSG(code == 0, "exit %d: %s", code, se);
  double *vel = NULL;
  CHECK(readDataset(out, "/trajectory/velocity", &vel, NULL, NULL) == 3 * 3);
  if (vel) CHECK_NEAR(vel[0], 3.0, 0);
  free(vel);
  char attr[8192];
  readAttr(out, "scene", attr, sizeof attr);
  CHECK(strstr(attr, "\"velocity\":[3,0,0]") != NULL);
  /* --summary: one JSON line */
  CHECK(strstr(so, "\"exit\": 0") && strstr(so, "\"steps\": 2") && strchr(so, '\n') == strrchr(so, '\n'));
}

CD_TEST(nonFiniteStateExitsThreeAndKeepsEveryGoodFrame) {
  if (!haveBin()) CD_SKIP("CDSIM_BIN not built");
  char scene[1024], out[512], so[4096], se[4096];
  scenePath(scene, sizeof scene, "sliding-cube.json");
  snprintf(out, sizeof out, "%s/nan.h5", tmpdir());
  /* a stiffness of 1e300 on one substep, the cube tilted onto one edge: the spin the
   * contact force gives it overflows (a flat cube would only be thrown off, finitely,
   * since the penalty friction is capped per substep) */
  int code = RUN(so, se, scene, "--model", "penalty", "--set", "/materials/steel/stiffness=1e300", "--set",
                 "/bodies/0/orientation=[0.995,0.0998,0,0]", "--substeps", "1", "--out", out, "--quiet");
  CHECK(code == 3);
  CHECK_MSG(strstr(se, "non-finite state at step") && strstr(se, "'cube'"), "stderr: %s", se);
  char attr[4096];
  readAttr(out, "status", attr, sizeof attr);
  CHECK(strstr(attr, "non-finite state") == attr);
  double *pos = NULL;
  long n = readDataset(out, "/trajectory/position", &pos, NULL, NULL);
  CHECK(n >= 3);
  for (long i = 0; i < n; i++) CHECK(isfinite(pos[i]));
  free(pos);
}

static void interruptWith(int sig, const char *name) {
  char scene[1024], out[512];
  scenePath(scene, sizeof scene, "pile-1000.json");
  snprintf(out, sizeof out, "%s/int-%d.h5", tmpdir(), sig);
  pid_t pid = fork();
  if (pid == 0) {
    int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, 2);
    execl(bin(), bin(), scene, "--model", "lcp", "--steps", "100000", "--out", out, "--quiet", (char *)NULL);
    _exit(127);
  }
  /* wait until a few frames are on disk (the recorder flushes at least once a second) */
  struct timespec ts = {1, 500000000};
  nanosleep(&ts, NULL);
  kill(pid, sig);
  int status = 0;
  waitpid(pid, &status, 0);
  CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 1, "status %d", status);
  char attr[4096];
  readAttr(out, "status", attr, sizeof attr);
  CHECK_MSG(strstr(attr, name) != NULL, "status attribute '%s'", attr);
  double *t = NULL, *off = NULL;
  long nf = readDataset(out, "/time", &t, NULL, NULL);
  long no = readDataset(out, "/contacts/offset", &off, NULL, NULL);
  CHECK(nf >= 2);
  CHECK(no == nf + 1);
  long nc = readDataset(out, "/contacts/gap", NULL, NULL, NULL);
  if (off && no > 0) CHECK((long)off[no - 1] == nc);
  free(t);
  free(off);
}

CD_TEST(sigintLeavesAValidFileWithEveryFrameSoFar) {
  if (!haveBin()) CD_SKIP("CDSIM_BIN not built");
  interruptWith(SIGINT, "interrupted by SIGINT");
}

CD_TEST(sigtermLeavesAValidFileWithEveryFrameSoFar) {
  if (!haveBin()) CD_SKIP("CDSIM_BIN not built");
  interruptWith(SIGTERM, "interrupted by SIGTERM");
}

CD_TEST(sameCommandGivesBitIdenticalDatasetsForEveryModel) {
  if (!haveBin()) CD_SKIP("CDSIM_BIN not built");
  static const char *const paths[] = {"/time",
                                      "/trajectory/position",
                                      "/trajectory/orientation",
                                      "/trajectory/velocity",
                                      "/trajectory/angular_velocity",
                                      "/contacts/offset",
                                      "/contacts/point",
                                      "/contacts/gap",
                                      "/contacts/normal_impulse",
                                      "/contacts/tangent_impulse",
                                      "/solver/iterations",
                                      "/solver/residual",
                                      "/energy/kinetic"};
  const char *models[] = {"lcp", "ccp", "penalty"};
  /* the pyramid has many contacts (and Lemke's pivoting); the penalty model's thousands of
   * substeps a step on the pyramid are kept to the lighter sliding cube */
  const char *scenes[] = {"cube-pyramid.json", "cube-pyramid.json", "sliding-cube.json"};
  char scene[1024], so[4096], se[4096];
  for (int m = 0; m < 3; m++) {
    scenePath(scene, sizeof scene, scenes[m]);
    char out[2][512];
    for (int r = 0; r < 2; r++) {
      snprintf(out[r], sizeof out[r], "%s/det-%s-%d.h5", tmpdir(), models[m], r);
      int code = RUN(so, se, scene, "--model", models[m], "--steps", "15", "--out", out[r], "--quiet");
      CHECK_MSG(code == 0, "%s exit %d: %s", models[m], code, se);
    }
    for (size_t p = 0; p < sizeof paths / sizeof paths[0]; p++) {
      void *a = NULL, *b = NULL;
      size_t na = 0, nb = 0;
      readDataset(out[0], paths[p], NULL, &a, &na);
      readDataset(out[1], paths[p], NULL, &b, &nb);
      CHECK_MSG(a && b && na == nb && memcmp(a, b, na) == 0, "%s %s differs between two runs", models[m], paths[p]);
      free(a);
      free(b);
    }
  }
}
