/* summary.h: the run summary (issue "comparing the models"): what a sweep row or a model
 * comparison needs, accumulated step by step, written to /summary and by --summary. */
#ifndef CD_SUMMARY_H
#define CD_SUMMARY_H

#include "backend.h"
#include "world.h"

#define CD_SUMMARY_TIME_BINS 2800 /* 1% bins from 1e-8 s to 1e4 s */

typedef struct cdSummary {
  long steps;               /* steps taken */
  long substeps;            /* substeps over all steps (impulse models: = steps) */
  double wall_time;         /* s */
  double contacts_mean;     /* contacts per step */
  long contacts_max;
  double iterations_mean;   /* solver iterations per step */
  long iterations_max;
  double residual_max;      /* the largest per-step residual */
  long nonconverged_steps;
  long fallbacks;           /* times a solver fell back to another (cdSolveStats.fallbacks, summed) */
  double penetration_max;   /* the largest -gap seen at the start of a step, m (>= 0) */
  double lift_max;          /* the largest gap at the start of a step of a contact that was
                               loaded (l_n above 1e-6 of the largest l_n so far) and sliding
                               (|v_t| > 1e-3 m/s) in the step before, m: the CCP's hover */
  double kinetic_energy_final; /* J */
  /* where the wall time went, s (cdWorld's stage times; time_record is the run loop's time
   * in the recorder): the rest of wall_time is integration, bookkeeping and progress */
  double time_collide, time_build, time_solve, time_record;
  /* the wall time of one step (cd_worldStep, without recording), s: the median over the run
   * (to 0.5%: from a histogram of 1% bins, so that a run of any length needs no more memory)
   * and the slowest step, and which step (1-based) that was */
  double step_time_median, step_time_max;
  long step_time_max_at;
  double sum_contacts, sum_iterations; /* accumulators */
  double ln_max;                       /* the largest normal impulse so far, N s */
  unsigned step_hist[CD_SUMMARY_TIME_BINS]; /* steps a bin of step times (summary.c) */
} cdSummary;

void cd_summaryInit(cdSummary *s);
/* after each step: w->contacts are that step's contacts, w->previous the step before's */
void cd_summaryStep(cdSummary *s, const cdWorld *w, const cdSolveStats *st);
/* after each step: the step's wall time, s */
void cd_summaryStepTime(cdSummary *s, double seconds);
/* the median of the step times so far, s (the geometric middle of its 1% bin; 0 before a step) */
double cd_summaryStepTimeMedian(const cdSummary *s);
void cd_summaryFinish(cdSummary *s, const cdScene *scene, const cdWorld *w, double wall_time, double time_record);

#endif
