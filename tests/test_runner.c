/* test_runner.c: the runner itself (tests/main.c) refuses to run without the environment
 * `make test` gives it, instead of skipping a score of tests and ending "0 failed". */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli_util.h"
#include "test.h"

/* runs this very runner (/proc/self/exe) with CDSIM_<unset> removed from the environment
 * and a test name that matches nothing; its exit status, stderr in err */
static int runWithout(const char *unset, char *err, size_t n) {
  char path[512];
  snprintf(path, sizeof path, "%s/runner-stderr", cd_cliTmpdir());
  pid_t pid = fork();
  if (pid == 0) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600), null = open("/dev/null", O_WRONLY);
    dup2(fd, 2);
    dup2(null, 1);
    unsetenv(unset);
    execl("/proc/self/exe", "cdsim-tests", "no-test-has-this-name", (char *)NULL);
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  cd_cliReadFile(path, err, n);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

CD_TEST(runnerWithoutItsEnvironmentFailsLoudly) {
  static const char *const vars[] = {"CDSIM_BIN", "CDSIM_ROOT", "CDSIM_PEER_DATA"};
  char err[1024];
  for (int k = 0; k < 3; k++) {
    int code = runWithout(vars[k], err, sizeof err);
    CHECK_MSG(code == 2 && strstr(err, vars[k]) && strstr(err, "make test"), "without %s: exit %d, stderr '%s'",
              vars[k], code, err);
  }
}
