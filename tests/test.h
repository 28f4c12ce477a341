/* test.h: the plain-C test runner (tests/main.c).
 *
 * A test is a function registered with CD_TEST(name); the name states the property it
 * checks (slidingCubeStopsAtAnalyticDistance). Checks record a failure with file and line
 * and let the test go on; CD_SKIP says plainly why a test could not run (missing data).
 * tests/main.c runs every registered test (or those whose name contains argv[1]) and ends
 * with "N passed, N failed, N skipped".
 */
#ifndef CD_TEST_H
#define CD_TEST_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>

/* a uniform number in [0, 1) from the xorshift64* generator state *x (nonzero): the random
 * problems of the solver tests, each seeding its own state for a reproducible sequence */
static inline double cd_testRandom(uint64_t *x) {
  *x ^= *x >> 12;
  *x ^= *x << 25;
  *x ^= *x >> 27;
  return (double)((*x * 2685821657736338717ULL) >> 11) * (1.0 / 9007199254740992.0);
}

typedef void (*cdTestFn)(void);
void cd_testRegister(const char *name, const char *file, cdTestFn fn);
void cd_testFail(const char *file, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void cd_testSkip(const char *why);
int cd_testFailed(void); /* failures so far in the running test */

#define CD_TEST(name)                                                        \
  static void name(void);                                                    \
  __attribute__((constructor)) static void name##_register(void) {           \
    cd_testRegister(#name, __FILE__, name);                                  \
  }                                                                          \
  static void name(void)

#define CHECK(cond)                                                          \
  do {                                                                       \
    if (!(cond)) cd_testFail(__FILE__, __LINE__, "CHECK(%s)", #cond);        \
  } while (0)

#define CHECK_MSG(cond, ...)                                                 \
  do {                                                                       \
    if (!(cond)) cd_testFail(__FILE__, __LINE__, __VA_ARGS__);               \
  } while (0)

/* |a - b| <= tol, NaN fails */
#define CHECK_NEAR(a, b, tol)                                                \
  do {                                                                       \
    double a_ = (a), b_ = (b), t_ = (tol);                                   \
    if (!(fabs(a_ - b_) <= t_))                                              \
      cd_testFail(__FILE__, __LINE__, "CHECK_NEAR(%s, %s, %s): %.17g vs %.17g (diff %.3g)", #a, #b, #tol, a_, b_, \
                  fabs(a_ - b_));                                            \
  } while (0)

#define CD_SKIP(why)                                                         \
  do {                                                                       \
    cd_testSkip(why);                                                        \
    return;                                                                  \
  } while (0)

#endif
