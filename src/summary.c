/* summary.c: see summary.h. */
#include "summary.h"

#include <math.h>
#include <string.h>

#include "vec3.h"

#define SLIDING_SPEED 1e-3 /* m/s: a contact slides above this tangential speed */
/* a contact is loaded when its normal impulse is above this share of the largest so far: an
 * interior-point answer leaves 1e-19 N s on a cube's separating corners, and counting those
 * made the lift of its free flight a step later (twice the hover) the "hover" */
#define LOADED_SHARE 1e-6
#define TIME_MIN 1e-8       /* s: the lower edge of the step-time histogram's first bin */
#define TIME_RATIO 1.01     /* each bin's upper edge over its lower one */

void cd_summaryInit(cdSummary *s) { memset(s, 0, sizeof *s); }

void cd_summaryStep(cdSummary *s, const cdWorld *w, const cdSolveStats *st) {
  const cdContactSet *cur = &w->contacts, *prev = &w->previous;
  s->steps++;
  s->substeps += st->substeps > 0 ? st->substeps : 1;
  s->sum_contacts += cur->ncon;
  if (cur->ncon > s->contacts_max) s->contacts_max = cur->ncon;
  s->sum_iterations += st->iterations;
  if (st->iterations > s->iterations_max) s->iterations_max = st->iterations;
  if (st->residual > s->residual_max) s->residual_max = st->residual;
  if (!st->converged) s->nonconverged_steps++;
  s->fallbacks += st->fallbacks;
  /* both sets are sorted by key: one merge pass (which also updates the largest impulse: the
   * threshold is the previous steps') */
  double loaded = LOADED_SHARE * s->ln_max;
  int j = 0;
  for (int i = 0; i < cur->ncon; i++) {
    const cdContact *c = &cur->con[i];
    s->ln_max = fmax(s->ln_max, c->lambda[0]);
    if (-c->gap > s->penetration_max) s->penetration_max = -c->gap;
    while (j < prev->ncon && cd_contactKeyCompare(&prev->con[j], c) < 0) j++;
    if (j < prev->ncon && cd_contactKeyCompare(&prev->con[j], c) == 0) {
      const cdContact *p = &prev->con[j];
      if (p->lambda[0] > loaded && cd_v3norm(p->post_vt) > SLIDING_SPEED && c->gap > s->lift_max) s->lift_max = c->gap;
    }
  }
}

void cd_summaryStepTime(cdSummary *s, double seconds) {
  if (seconds > s->step_time_max || s->step_time_max_at == 0) {
    s->step_time_max = seconds;
    s->step_time_max_at = s->steps;
  }
  double b = seconds > TIME_MIN ? floor(log(seconds / TIME_MIN) / log(TIME_RATIO)) : 0;
  s->step_hist[b < CD_SUMMARY_TIME_BINS - 1 ? (int)b : CD_SUMMARY_TIME_BINS - 1]++;
}

double cd_summaryStepTimeMedian(const cdSummary *s) {
  unsigned long n = 0, half = 0;
  for (int b = 0; b < CD_SUMMARY_TIME_BINS; b++) n += s->step_hist[b];
  if (n == 0) return 0;
  for (int b = 0; b < CD_SUMMARY_TIME_BINS; b++) {
    half += s->step_hist[b];
    if (2 * half >= n + 1) return TIME_MIN * pow(TIME_RATIO, b + 0.5);
  }
  return 0;
}

void cd_summaryFinish(cdSummary *s, const cdScene *scene, const cdWorld *w, double wall_time, double time_record) {
  s->wall_time = wall_time;
  s->time_collide = w->time_collide;
  s->time_build = w->time_build;
  s->time_solve = w->time_solve;
  s->time_record = time_record;
  s->step_time_median = cd_summaryStepTimeMedian(s);
  s->contacts_mean = s->steps ? s->sum_contacts / (double)s->steps : 0;
  s->iterations_mean = s->steps ? s->sum_iterations / (double)s->steps : 0;
  s->kinetic_energy_final = cd_worldKineticEnergy(scene, w);
}
