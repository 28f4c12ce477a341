/* summary.c: see summary.h. */
#include "summary.h"

#include <math.h>
#include <string.h>

#include "vec3.h"

#define SLIDING_SPEED 1e-3 /* m/s: a contact slides above this tangential speed */

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
  /* both sets are sorted by key: one merge pass */
  int j = 0;
  for (int i = 0; i < cur->ncon; i++) {
    const cdContact *c = &cur->con[i];
    if (-c->gap > s->penetration_max) s->penetration_max = -c->gap;
    while (j < prev->ncon && cd_contactKeyCompare(&prev->con[j], c) < 0) j++;
    if (j < prev->ncon && cd_contactKeyCompare(&prev->con[j], c) == 0) {
      const cdContact *p = &prev->con[j];
      if (p->lambda[0] > 0 && cd_v3norm(p->post_vt) > SLIDING_SPEED && c->gap > s->lift_max) s->lift_max = c->gap;
    }
  }
}

void cd_summaryFinish(cdSummary *s, const cdScene *scene, const cdWorld *w, double wall_time, double time_record) {
  s->wall_time = wall_time;
  s->time_collide = w->time_collide;
  s->time_build = w->time_build;
  s->time_solve = w->time_solve;
  s->time_record = time_record;
  s->contacts_mean = s->steps ? s->sum_contacts / (double)s->steps : 0;
  s->iterations_mean = s->steps ? s->sum_iterations / (double)s->steps : 0;
  s->kinetic_energy_final = cd_worldKineticEnergy(scene, w);
}
