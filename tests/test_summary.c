/* test_summary.c: the run summary's step times (summary.h): the median from a histogram of
 * 1% bins is the true median to 0.5%, the slowest step and its number are exact (test_cli.c
 * checks a run's figures against its wall time); lift_max counts loaded contacts only. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli_util.h"
#include "summary.h"
#include "test.h"

/* cd_summaryStepTime after a counted step, as the run loop calls it */
static void step(cdSummary *s, double seconds) {
  s->steps++;
  cd_summaryStepTime(s, seconds);
}

CD_TEST(stepTimeMedianWithinHalfAPercentAndTheSlowestStepExact) {
  cdSummary *s = calloc(1, sizeof *s);
  if (!s) CD_SKIP("out of memory");
  cd_summaryInit(s);
  /* 1001 steps: times 1e-4 * (1 + k/1000) in a scrambled order (median 1.5e-4 s, the k = 500
   * one), one slow step of 0.37 s as step 17, one below the histogram's range */
  for (int i = 0; i < 1001; i++) {
    int k = (i * 389) % 1001;
    step(s, i == 16 ? 0.37 : i == 40 ? 1e-12 : 1e-4 * (1.0 + k / 1000.0));
  }
  /* the two replaced samples move the true median by at most one sample: between the
   * k = 499 and k = 501 values */
  double median = cd_summaryStepTimeMedian(s);
  CHECK_MSG(median > 1e-4 * 1.499 / 1.005 && median < 1e-4 * 1.501 * 1.005, "median %.6g s", median);
  CHECK(s->step_time_max == 0.37);
  CHECK(s->step_time_max_at == 17);
  free(s);
}

/* the sliding cube's hover, mu |v_t| dt after the first step's kick (README: 7.80 mm at dt
 * 0.01), is the same under every CCP solver: the interior point's 1e-19 N s on the corners
 * that separate are no load (it reported the next step's 14.6 mm of free flight) */
CD_TEST(liftMaxIsTheHoverUnderEveryCcpSolver) {
  if (!cd_cliHaveBin()) CD_SKIP("CDSIM_BIN not built");
  char scene[1024], out[512], so[4096], se[4096];
  cd_cliScenePath(scene, sizeof scene, "sliding-cube.json");
  snprintf(out, sizeof out, "%s/lift.h5", cd_cliTmpdir());
  static const char *const solvers[] = {"primal", "apgd", "ipm"};
  for (int k = 0; k < 3; k++) {
    int code = cd_cliRun((const char *const[]){scene, "--model", "ccp", "--solver", solvers[k], "--out", out,
                                               "--no-xdmf", "--quiet", "--summary", NULL},
                         NULL, so, sizeof so, se, sizeof se, NULL);
    const char *p = strstr(so, "\"lift_max\": ");
    double lift = p ? strtod(p + 12, NULL) : -1;
    /* mu (v0 - mu g dt) / (1 + mu^2) dt, the model's closed form (README) */
    double mu = 0.5, v0 = 2.0, g = 9.81, dt = 0.01, hover = mu * (v0 - mu * g * dt) / (1 + mu * mu) * dt;
    CHECK_MSG(code == 0 && fabs(lift - hover) <= 1e-3 * hover, "%s: exit %d, lift_max %.6g m (hover %.6g): %s",
              solvers[k], code, lift, hover, se);
  }
}
