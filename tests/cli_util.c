/* cli_util.c: see cli_util.h. */
#include "cli_util.h"

#include <fcntl.h>
#include <hdf5.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char g_dir[256];

const char *cd_cliTmpdir(void) {
  if (!g_dir[0]) {
    strcpy(g_dir, "/tmp/cdsim-test-XXXXXX");
    if (!mkdtemp(g_dir)) g_dir[0] = 0;
  }
  return g_dir;
}

__attribute__((destructor)) static void removeTmpdir(void) {
  if (!g_dir[0]) return;
  char cmd[600];
  snprintf(cmd, sizeof cmd, "chmod -R u+w '%s'; rm -rf '%s'", g_dir, g_dir);
  if (system(cmd) != 0) fprintf(stderr, "tests: could not remove %s\n", g_dir);
}

const char *cd_cliBin(void) { return getenv("CDSIM_BIN"); }

int cd_cliHaveBin(void) {
  struct stat st;
  return cd_cliBin() && stat(cd_cliBin(), &st) == 0;
}

void cd_cliScenePath(char *buf, size_t n, const char *name) {
  const char *root = getenv("CDSIM_ROOT");
  snprintf(buf, n, "%s/scenes/%s", root ? root : ".", name);
}

void cd_cliReadFile(const char *path, char *buf, size_t n) {
  buf[0] = 0;
  FILE *f = fopen(path, "rb");
  if (!f) return;
  size_t k = fread(buf, 1, n - 1, f);
  buf[k] = 0;
  fclose(f);
}

int cd_cliWriteFile(const char *path, const char *text) {
  FILE *f = fopen(path, "wb");
  if (!f) return -1;
  size_t n = strlen(text);
  int ok = fwrite(text, 1, n, f) == n;
  return fclose(f) == 0 && ok ? 0 : -1;
}

int cd_cliRun(const char *const *args, const cdCliLimits *lim, char *out, size_t outn, char *err, size_t errn,
              double *secs) {
  static const cdCliLimits none = {0, 0, 0, 0};
  if (!lim) lim = &none;
  char fo[512], fe[512];
  snprintf(fo, sizeof fo, "%s/stdout", cd_cliTmpdir());
  snprintf(fe, sizeof fe, "%s/stderr", cd_cliTmpdir());
  const char *argv[64];
  int n = 0;
  argv[n++] = cd_cliBin();
  for (; args[n - 1] && n < 63; n++) argv[n] = args[n - 1];
  argv[n] = NULL;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    int o = open(fo, O_WRONLY | O_CREAT | O_TRUNC, 0666), e = open(fe, O_WRONLY | O_CREAT | O_TRUNC, 0666);
    dup2(o, 1);
    dup2(e, 2);
    if (lim->fsize > 0) {
      signal(SIGXFSZ, SIG_IGN);
      struct rlimit rl = {(rlim_t)lim->fsize, (rlim_t)lim->fsize};
      if (setrlimit(RLIMIT_FSIZE, &rl)) _exit(126);
    }
    if (lim->address_space > 0 && !strstr(argv[0], "asan")) {
      struct rlimit rl = {(rlim_t)lim->address_space, (rlim_t)lim->address_space};
      if (setrlimit(RLIMIT_AS, &rl)) _exit(126);
    }
    if (lim->drop_privileges && geteuid() == 0 && (setgid(65534) || setuid(65534))) _exit(126);
    if (lim->seconds > 0) alarm((unsigned)lim->seconds); /* kept across exec: SIGALRM ends a hang */
    execv(argv[0], (char *const *)(void *)argv);
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  if (secs) *secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
  if (out) cd_cliReadFile(fo, out, outn);
  if (err) cd_cliReadFile(fe, err, errn);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int cd_cliReadAttr(const char *file, const char *name, char *buf, size_t n) {
  buf[0] = 0;
  hid_t f = H5Fopen(file, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f < 0) return -1;
  hid_t a = H5Aopen(f, name, H5P_DEFAULT);
  if (a >= 0) {
    char *s = NULL;
    hid_t mt = H5Tcopy(H5T_C_S1);
    H5Tset_size(mt, H5T_VARIABLE);
    H5Tset_cset(mt, H5T_CSET_UTF8);
    if (H5Aread(a, mt, &s) >= 0 && s) {
      snprintf(buf, n, "%s", s);
      H5free_memory(s);
    }
    H5Tclose(mt);
    H5Aclose(a);
  }
  H5Fclose(f);
  return 0;
}

long cd_cliReadDataset(const char *file, const char *path, double **data, void **raw, size_t *rawlen) {
  if (data) *data = NULL;
  if (raw) *raw = NULL;
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
    if (H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, *data) < 0) n = -1;
  }
  if (raw) {
    hid_t t = H5Dget_type(d);
    size_t es = H5Tget_size(t);
    *rawlen = es * (size_t)(n > 0 ? n : 0);
    *raw = calloc(*rawlen + 1, 1);
    if (H5Tget_class(t) != H5T_STRING) H5Dread(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, *raw);
    H5Tclose(t);
  }
  H5Sclose(sp);
  H5Dclose(d);
  H5Fclose(f);
  return n;
}
