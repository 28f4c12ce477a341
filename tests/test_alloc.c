/* test_alloc.c: the allocator's heap in huge pages (alloc.h, cd_allocHugeHeap). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "alloc.h"
#include "test.h"

/* 8 MiB of blocks of 4 to 28 KiB (a step's workspaces growing), each written once, in a child
 * process (the heap's policy is the whole process's): in 4 KiB pages that is at least 2,048
 * page faults; with the heap in huge pages a few, one a 2 MiB page. The bound, 256, leaves the
 * blocks' first 2 MiB range and each of the heap's growths in small pages room to spare. */
CD_TEST(hugeHeapTakesAFewPageFaultsForMegabytes) {
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    if (!cd_allocHugeHeap()) _exit(77);
    struct rusage a, b;
    getrusage(RUSAGE_SELF, &a);
    size_t total = 0;
    for (int k = 0; total < (8u << 20); k++) {
      size_t n = 4096 * (size_t)(1 + k % 7);
      char *q = cd_malloc(n);
      if (!q) _exit(2);
      memset(q, 1, n);
      total += n;
    }
    getrusage(RUSAGE_SELF, &b);
    long faults = b.ru_minflt - a.ru_minflt;
    printf("    %zu KiB written in %ld page faults\n", total >> 10, faults);
    fflush(stdout);
    _exit(faults <= 256 ? 0 : 1);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) {
    cd_testFail(__FILE__, __LINE__, "the child process did not run to its end");
    return;
  }
  if (WEXITSTATUS(status) == 77) {
    CD_SKIP("the kernel gives no transparent huge pages on request here (or the allocator is not glibc's, "
            "or ASan's): the heap stays in small pages");
  }
  CHECK_MSG(WEXITSTATUS(status) == 0, "8 MiB took more than 256 page faults (exit %d)", WEXITSTATUS(status));
}
