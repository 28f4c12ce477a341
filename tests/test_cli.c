/* test_cli.c: the command line and the output file, through the real binary ($CDSIM_BIN):
 * exit statuses, messages, nothing written on bad input, interruption, determinism, and what a
 * run says on a terminal. */
#define _XOPEN_SOURCE 700 /* posix_openpt */
#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli_util.h"
#include "test.h"

#define RUN(out, err, ...) \
  cd_cliRun((const char *const[]){__VA_ARGS__, NULL}, NULL, out, sizeof(out), err, sizeof(err), NULL)

/* runs cdsim with stderr on a pseudo-terminal (stdout to /dev/null) and what it wrote there
 * in buf; the exit status, or -1 when the test cannot make a terminal */
static int runOnTerminal(const char *const *args, char *buf, size_t n) {
  buf[0] = 0;
  int m = posix_openpt(O_RDWR | O_NOCTTY);
  if (m < 0 || grantpt(m) || unlockpt(m) || !ptsname(m)) {
    if (m >= 0) close(m);
    return -1;
  }
  const char *argv[32] = {cd_cliBin()};
  int a = 1;
  for (; args[a - 1] && a < 31; a++) argv[a] = args[a - 1];
  argv[a] = NULL;
  char slave[256];
  snprintf(slave, sizeof slave, "%s", ptsname(m));
  pid_t pid = fork();
  if (pid == 0) {
    setsid();
    int s = open(slave, O_RDWR);
    int nul = open("/dev/null", O_WRONLY);
    if (s < 0 || nul < 0 || dup2(s, 2) < 0 || dup2(nul, 1) < 0) _exit(126);
    close(m);
    alarm(60); /* a hang ends the child, and with it the terminal the test reads */
    execv(argv[0], (char *const *)(void *)argv);
    _exit(127);
  }
  size_t got = 0;
  for (;;) { /* until the child's end closes the terminal (EIO) */
    ssize_t r = read(m, buf + got, n - 1 - got);
    if (r > 0 && got + (size_t)r < n - 1)
      got += (size_t)r;
    else if (r < 0 && errno == EINTR)
      continue;
    else if (r <= 0 || got + (size_t)r >= n - 1)
      break;
  }
  buf[got] = 0;
  close(m);
  int st = 0;
  if (pid < 0 || waitpid(pid, &st, 0) < 0) return -1;
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* on a terminal a run ends with one line: steps, simulated and wall time, model and solver,
 * the file and its sidecar (README's first command); under --quiet, and off a terminal,
 * nothing */
CD_TEST(aRunOnATerminalSaysWhatItWroteAndWhere) {
  if (!cd_cliHaveBin()) CD_SKIP("CDSIM_BIN not built");
  char scene[1024], out[512], side[512], tty[8192], so[4096], se[4096];
  cd_cliScenePath(scene, sizeof scene, "sliding-cube.json");
  snprintf(out, sizeof out, "%s/tty.h5", cd_cliTmpdir());
  snprintf(side, sizeof side, "%s/tty.xdmf", cd_cliTmpdir());
  int code = runOnTerminal((const char *const[]){scene, "--model", "ccp", "--out", out, NULL}, tty, sizeof tty);
  if (code == -1) CD_SKIP("no pseudo-terminal here");
  CHECK_MSG(code == 0 && strstr(tty, "cdsim: 150 steps, 1.5 s simulated in ") && strstr(tty, "under ccp (primal+apgd)") &&
                strstr(tty, out) && strstr(tty, side) && !strstr(tty, "warning"),
            "exit %d, terminal: '%s'", code, tty);
  code = runOnTerminal((const char *const[]){scene, "--out", out, "--quiet", NULL}, tty, sizeof tty);
  CHECK_MSG(code == 0 && tty[0] == 0, "--quiet: exit %d, terminal: '%s'", code, tty);
  code = RUN(so, se, scene, "--out", out);
  CHECK_MSG(code == 0 && se[0] == 0, "off a terminal: exit %d, stderr '%s'", code, se);
}

CD_TEST(freeFlightRunWritesEveryFrameOfTheDiscreteParabola) {
  if (!cd_cliHaveBin()) CD_SKIP("CDSIM_BIN not built");
  char scene[1024], out[512], so[4096], se[4096];
  cd_cliScenePath(scene, sizeof scene, "free-flight.json");
  snprintf(out, sizeof out, "%s/ff.h5", cd_cliTmpdir());
  int code = RUN(so, se, scene, "--model", "lcp", "--steps", "50", "--dt", "0.01", "--out", out, "--quiet");
  CHECK_MSG(code == 0, "exit %d: %s", code, se);
  double *t = NULL, *pos = NULL, *vel = NULL;
  CHECK(cd_cliReadDataset(out, "/time", &t, NULL, NULL) == 51);
  long np = cd_cliReadDataset(out, "/trajectory/position", &pos, NULL, NULL);
  CHECK(np == 51 * 3);
  CHECK(cd_cliReadDataset(out, "/trajectory/velocity", &vel, NULL, NULL) == 51 * 3);
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
  cd_cliReadAttr(out, "status", attr, sizeof attr);
  CHECK(strcmp(attr, "ok") == 0);
  cd_cliReadAttr(out, "format", attr, sizeof attr);
  CHECK(strcmp(attr, "cdsim") == 0);
  cd_cliReadAttr(out, "model", attr, sizeof attr);
  CHECK(strcmp(attr, "lcp") == 0);
  cd_cliReadAttr(out, "command_line", attr, sizeof attr);
  CHECK(strstr(attr, "--steps 50") != NULL);
  CHECK(cd_cliReadDataset(out, "/contacts/offset", NULL, NULL, NULL) == 52);
  CHECK(cd_cliReadDataset(out, "/contacts/normal_impulse", NULL, NULL, NULL) == 0);
}

CD_TEST(invalidSceneExitsTwoNamesThePlaceAndLeavesTheOutputUntouched) {
  if (!cd_cliHaveBin()) CD_SKIP("CDSIM_BIN not built");
  char bad[512], out[512], so[4096], se[4096];
  snprintf(bad, sizeof bad, "%s/bad.json", cd_cliTmpdir());
  FILE *f = fopen(bad, "w");
  fputs("{\"bodies\": [{\"shape\": \"sphere\", \"radius\": -0.5, \"mass\": 1, \"position\": [0, 0, 1]}]}\n", f);
  fclose(f);
  snprintf(out, sizeof out, "%s/keep.h5", cd_cliTmpdir());
  f = fopen(out, "w");
  fputs("precious", f);
  fclose(f);
  int code = RUN(so, se, bad, "--out", out);
  CHECK(code == 2);
  CHECK_MSG(strstr(se, "bad.json: /bodies/0/radius: must be > 0 (got -0.5)") != NULL, "stderr: %s", se);
  char keep[64];
  cd_cliReadFile(out, keep, sizeof keep);
  CHECK(strcmp(keep, "precious") == 0);
  /* a syntax error names line and column */
  f = fopen(bad, "w");
  fputs("{\n  \"dt\": 0.01,\n  \"bodies\": [}\n", f);
  fclose(f);
  code = RUN(so, se, bad, "--out", out);
  CHECK(code == 2);
  CHECK_MSG(strstr(se, "bad.json:3:") != NULL, "stderr: %s", se);
  cd_cliReadFile(out, keep, sizeof keep);
  CHECK(strcmp(keep, "precious") == 0);
}

CD_TEST(badUsageExitsTwoWithAMessage) {
  if (!cd_cliHaveBin()) CD_SKIP("CDSIM_BIN not built");
  char scene[1024], so[4096], se[4096];
  cd_cliScenePath(scene, sizeof scene, "sliding-cube.json");
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
  if (!cd_cliHaveBin()) CD_SKIP("CDSIM_BIN not built");
  char scene[1024], so[4096], se[4096];
  cd_cliScenePath(scene, sizeof scene, "sliding-cube.json");
  int code = RUN(so, se, scene, "--out", "/nonexistent-dir/run.h5", "--quiet");
  CHECK(code == 1);
  CHECK_MSG(strstr(se, "/nonexistent-dir/run.h5") != NULL, "stderr: %s", se);
}

CD_TEST(setOverrideReachesTheRunAndTheSceneAttribute) {
  if (!cd_cliHaveBin()) CD_SKIP("CDSIM_BIN not built");
  char scene[1024], out[512], so[8192], se[4096];
  cd_cliScenePath(scene, sizeof scene, "sliding-cube.json");
  snprintf(out, sizeof out, "%s/set.h5", cd_cliTmpdir());
  int code = RUN(so, se, scene, "--set", "/bodies/0/velocity=[3,0,0]", "--steps", "2", "--out", out, "--quiet",
                 "--summary");
  CHECK_MSG(code == 0, "exit %d: %s", code, se);
  double *vel = NULL;
  CHECK(cd_cliReadDataset(out, "/trajectory/velocity", &vel, NULL, NULL) == 3 * 3);
  if (vel) CHECK_NEAR(vel[0], 3.0, 0);
  free(vel);
  char attr[8192];
  cd_cliReadAttr(out, "scene", attr, sizeof attr);
  CHECK(strstr(attr, "\"velocity\":[3,0,0]") != NULL);
  /* --summary: one JSON line */
  CHECK(strstr(so, "\"exit\": 0") && strstr(so, "\"steps\": 2") && strchr(so, '\n') == strrchr(so, '\n'));
}

CD_TEST(nonFiniteStateExitsThreeAndKeepsEveryGoodFrame) {
  if (!cd_cliHaveBin()) CD_SKIP("CDSIM_BIN not built");
  char scene[1024], out[512], so[4096], se[4096];
  cd_cliScenePath(scene, sizeof scene, "sliding-cube.json");
  snprintf(out, sizeof out, "%s/nan.h5", cd_cliTmpdir());
  /* a stiffness of 1e300 on one substep, the cube tilted onto one edge: the spin the
   * contact force gives it overflows (a flat cube would only be thrown off, finitely,
   * since the penalty friction is capped per substep) */
  int code = RUN(so, se, scene, "--model", "penalty", "--set", "/materials/steel/stiffness=1e300", "--set",
                 "/bodies/0/orientation=[0.995,0.0998,0,0]", "--substeps", "1", "--out", out, "--quiet");
  CHECK(code == 3);
  CHECK_MSG(strstr(se, "non-finite state at step") && strstr(se, "'cube'"), "stderr: %s", se);
  char attr[4096];
  cd_cliReadAttr(out, "status", attr, sizeof attr);
  CHECK(strstr(attr, "non-finite state") == attr);
  double *pos = NULL;
  long n = cd_cliReadDataset(out, "/trajectory/position", &pos, NULL, NULL);
  CHECK(n >= 3);
  for (long i = 0; i < n; i++) CHECK(isfinite(pos[i]));
  free(pos);
}

static void interruptWith(int sig, const char *name) {
  char scene[1024], out[512];
  cd_cliScenePath(scene, sizeof scene, "pile-1000.json");
  snprintf(out, sizeof out, "%s/int-%d.h5", cd_cliTmpdir(), sig);
  pid_t pid = fork();
  if (pid == 0) {
    int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, 2);
    execl(cd_cliBin(), cd_cliBin(), scene, "--model", "lcp", "--steps", "100000", "--out", out, "--quiet", (char *)NULL);
    _exit(127);
  }
  /* the run takes the signal once its file exists (the handler is set right after its
   * creation): wait for that (a loaded machine, or a sanitizer build, starts slowly), then
   * a while for some frames; close writes every frame the run made */
  struct timespec tick = {0, 50000000}, ts = {1, 500000000};
  struct stat st;
  for (int i = 0; i < 600 && stat(out, &st) != 0; i++) nanosleep(&tick, NULL);
  nanosleep(&ts, NULL);
  kill(pid, sig);
  int status = 0;
  waitpid(pid, &status, 0);
  CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 1, "status %d", status);
  char attr[4096];
  cd_cliReadAttr(out, "status", attr, sizeof attr);
  CHECK_MSG(strstr(attr, name) != NULL, "status attribute '%s'", attr);
  double *t = NULL, *off = NULL;
  long nf = cd_cliReadDataset(out, "/time", &t, NULL, NULL);
  long no = cd_cliReadDataset(out, "/contacts/offset", &off, NULL, NULL);
  CHECK(nf >= 2);
  CHECK(no == nf + 1);
  long nc = cd_cliReadDataset(out, "/contacts/gap", NULL, NULL, NULL);
  if (off && no > 0) CHECK((long)off[no - 1] == nc);
  free(t);
  free(off);
}

CD_TEST(sigintLeavesAValidFileWithEveryFrameSoFar) {
  if (!cd_cliHaveBin()) CD_SKIP("CDSIM_BIN not built");
  interruptWith(SIGINT, "interrupted by SIGINT");
}

CD_TEST(sigtermLeavesAValidFileWithEveryFrameSoFar) {
  if (!cd_cliHaveBin()) CD_SKIP("CDSIM_BIN not built");
  interruptWith(SIGTERM, "interrupted by SIGTERM");
}

CD_TEST(sameCommandGivesBitIdenticalDatasetsForEveryModel) {
  if (!cd_cliHaveBin()) CD_SKIP("CDSIM_BIN not built");
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
  const char *models[] = {"lcp", "ccp", "penalty", "ncp"};
  /* the pyramid has many contacts (and Lemke's pivoting); the penalty model's thousands of
   * substeps a step on the pyramid are kept to the lighter sliding cube */
  const char *scenes[] = {"cube-pyramid.json", "cube-pyramid.json", "sliding-cube.json", "cube-pyramid.json"};
  char scene[1024], so[4096], se[4096];
  for (int m = 0; m < 4; m++) {
    cd_cliScenePath(scene, sizeof scene, scenes[m]);
    char out[2][512];
    for (int r = 0; r < 2; r++) {
      snprintf(out[r], sizeof out[r], "%s/det-%s-%d.h5", cd_cliTmpdir(), models[m], r);
      int code = RUN(so, se, scene, "--model", models[m], "--steps", "15", "--out", out[r], "--quiet");
      CHECK_MSG(code == 0, "%s exit %d: %s", models[m], code, se);
    }
    for (size_t p = 0; p < sizeof paths / sizeof paths[0]; p++) {
      void *a = NULL, *b = NULL;
      size_t na = 0, nb = 0;
      cd_cliReadDataset(out[0], paths[p], NULL, &a, &na);
      cd_cliReadDataset(out[1], paths[p], NULL, &b, &nb);
      CHECK_MSG(a && b && na == nb && memcmp(a, b, na) == 0, "%s %s differs between two runs", models[m], paths[p]);
      free(a);
      free(b);
    }
  }
}

CD_TEST(summaryLineStepTimesAgreeWithTheRunsWallTime) {
  if (!cd_cliHaveBin()) CD_SKIP("CDSIM_BIN not built");
  char scene[1024], out[512], so[8192], se[4096];
  cd_cliScenePath(scene, sizeof scene, "sliding-cube.json");
  snprintf(out, sizeof out, "%s/steptime.h5", cd_cliTmpdir());
  int code = RUN(so, se, scene, "--steps", "40", "--out", out, "--quiet", "--summary");
  CHECK_MSG(code == 0, "exit %d: %s", code, se);
  const char *pm = strstr(so, "\"step_time_median\": "), *px = strstr(so, "\"step_time_max\": ");
  const char *pa = strstr(so, "\"step_time_max_at\": "), *pw = strstr(so, "\"wall_time\": ");
  CHECK_MSG(pm && px && pa && pw, "summary: %s", so);
  if (!(pm && px && pa && pw)) return;
  double median = atof(pm + 20), max = atof(px + 17), wall = atof(pw + 13);
  long at = atol(pa + 20);
  /* at least half of the 40 steps took the median (to its 0.5%), the slowest one took max,
   * and they all lie inside the run's wall time */
  CHECK_MSG(median > 0 && median <= max * 1.005, "median %g, max %g", median, max);
  CHECK_MSG(20 * median / 1.005 + max <= wall + 1e-6, "median %g, max %g, wall %g", median, max, wall);
  CHECK_MSG(at >= 1 && at <= 40, "slowest step %ld", at);
  /* the same figures in the file's /summary group */
  double attr[2] = {-1, -1};
  const char *names[2] = {"step_time_median", "step_time_max"};
  hid_t f = H5Fopen(out, H5F_ACC_RDONLY, H5P_DEFAULT);
  for (int i = 0; i < 2 && f >= 0; i++) {
    hid_t a = H5Aopen_by_name(f, "/summary", names[i], H5P_DEFAULT, H5P_DEFAULT);
    if (a >= 0) {
      H5Aread(a, H5T_NATIVE_DOUBLE, &attr[i]);
      H5Aclose(a);
    }
  }
  if (f >= 0) H5Fclose(f);
  CHECK_MSG(fabs(attr[0] - median) <= 1e-5 * median && fabs(attr[1] - max) <= 1e-5 * max,
            "/summary: %g %g, --summary: %g %g", attr[0], attr[1], median, max);
}
