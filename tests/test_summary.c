/* test_summary.c: the run summary's step times (summary.h): the median from a histogram of
 * 1% bins is the true median to 0.5%, the slowest step and its number are exact (test_cli.c
 * checks a run's figures against its wall time). */
#include <stdlib.h>

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
