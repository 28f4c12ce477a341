/* notices.c: input that will not do what it seems to, said once before the run (notices.h). */
#include "notices.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "collide.h"

int cd_noticeOptions(FILE *f, const char *model, const cdBackendOptions *opt) {
  int n = 0;
  int lcp = strcmp(model, "lcp") == 0, penalty = strcmp(model, "penalty") == 0;
  if (opt->friction_dirs > 0 && !lcp)
    n += fprintf(f, "cdsim: warning: --friction-dirs %d does nothing under --model %s (it sets the lcp "
                    "model's polyhedral cone; the %s model's friction is %s)\n",
                 opt->friction_dirs, model, model, penalty ? "regularised Coulomb" : "an exact circular cone") > 0;
  if (opt->substeps > 0 && !penalty)
    n += fprintf(f, "cdsim: warning: --substeps %d does nothing under --model %s (it sets the penalty "
                    "model's substeps; %s solves one contact problem a step)\n",
                 opt->substeps, model, model) > 0;
  if (opt->tolerance > 0 && penalty)
    n += fprintf(f, "cdsim: warning: --tolerance %g does nothing under --model penalty (its explicit "
                    "integrator has no iterative solve)\n",
                 opt->tolerance) > 0;
  if (opt->max_iterations > 0 && penalty)
    n += fprintf(f, "cdsim: warning: --max-iterations %d does nothing under --model penalty (its explicit "
                    "integrator has no iterative solve)\n",
                 opt->max_iterations) > 0;
  return n;
}

int cd_noticeMaterials(FILE *f, const char *model, const cdScene *scene) {
  if (strcmp(model, "penalty") != 0) return 0;
  char *used = cd_calloc((size_t)scene->nmaterial, 1);
  if (!used) return 0;
  if (scene->has_ground) used[scene->ground_material] = 1;
  for (int i = 0; i < scene->nbody; i++) used[scene->body[i].material] = 1;
  /* a contact's impact model is the higher of its two, its plasticity ratio the mean
   * (scene.c): a parameter acts as soon as some material in use switches its law on */
  int any_impact = 0, any_plastic = 0;
  for (int m = 0; m < scene->nmaterial; m++)
    if (used[m]) {
      any_impact |= scene->material[m].impact_model > 0;
      any_plastic |= scene->material[m].plasticity_ratio > 0;
    }
  int n = 0;
  for (int m = 0; m < scene->nmaterial; m++) {
    const cdMaterial *mat = &scene->material[m];
    if (!used[m]) continue;
    if (mat->restitution < 1 && !any_impact)
      n += fprintf(f, "cdsim: warning: material \"%s\": restitution %g has no effect with impact_model 0 "
                      "(the linear law dissipates through damping alone; impact_model 1 or 2 use it)\n",
                   mat->name, mat->restitution) > 0;
    if (any_plastic) continue;
    if (mat->pull_off_force > 0)
      n += fprintf(f, "cdsim: warning: material \"%s\": pull_off_force %g has no effect with plasticity_ratio "
                      "0 (it turns the Edinburgh model off, seed 002)\n",
                   mat->name, mat->pull_off_force) > 0;
    if (mat->adhesion_coefficient > 0)
      n += fprintf(f, "cdsim: warning: material \"%s\": adhesion_coefficient %g has no effect with "
                      "plasticity_ratio 0 (it turns the Edinburgh model off, seed 002)\n",
                   mat->name, mat->adhesion_coefficient) > 0;
  }
  cd_free(used);
  return n;
}

typedef struct {
  int a, b;     /* bodies; a = -1 the ground */
  double depth; /* the deepest overlap of the pair's contacts, m */
} cdOverlap;

static int deeperFirst(const void *x, const void *y) {
  const cdOverlap *p = x, *q = y;
  if (p->depth != q->depth) return p->depth < q->depth ? 1 : -1;
  if (p->a != q->a) return p->a < q->a ? -1 : 1; /* ties in key order: deterministic */
  return (p->b > q->b) - (p->b < q->b);
}

static void bodyName(char *buf, size_t n, const cdScene *scene, int i) {
  if (i < 0)
    snprintf(buf, n, "the ground");
  else
    snprintf(buf, n, "\"%s\"", scene->body[i].name);
}

int cd_noticeOverlaps(FILE *f, const char *model, const cdScene *scene, cdWorld *w) {
  cdContactSet cs;
  cd_contactSetInit(&cs);
  int rc = cd_collide(w->collider, scene, w->x, w->R, NULL, scene->dt, &cs);
  cdOverlap *pairs = rc == CD_OK && cs.ncon > 0 ? cd_malloc((size_t)cs.ncon * sizeof *pairs) : NULL;
  if (rc != CD_OK || (cs.ncon > 0 && !pairs)) {
    cd_contactSetFree(&cs);
    return CD_ERR_NOMEM;
  }
  /* one entry a pair: the set is sorted by key, so a pair's contacts are neighbours */
  int npair = 0;
  for (int i = 0; i < cs.ncon; i++) {
    const cdContact *c = &cs.con[i];
    if (!(-c->gap > CD_NOTICE_OVERLAP)) continue;
    if (npair > 0 && pairs[npair - 1].a == c->body[0] && pairs[npair - 1].b == c->body[1]) {
      if (-c->gap > pairs[npair - 1].depth) pairs[npair - 1].depth = -c->gap;
    } else {
      pairs[npair++] = (cdOverlap){c->body[0], c->body[1], -c->gap};
    }
  }
  if (npair > 0) qsort(pairs, (size_t)npair, sizeof *pairs, deeperFirst);
  int penalty = strcmp(model, "penalty") == 0;
  for (int k = 0; k < npair && k < CD_NOTICE_OVERLAP_LINES; k++) {
    char na[80], nb[80];
    bodyName(na, sizeof na, scene, pairs[k].a);
    bodyName(nb, sizeof nb, scene, pairs[k].b);
    if (penalty) {
      cdMaterial m;
      cd_sceneContactMaterial(scene, pairs[k].a, pairs[k].b, &m);
      fprintf(f, "cdsim: warning: %s and %s overlap by %.3g m at the start: the penalty contact starts "
                 "compressed (k delta^n = %.3g N at its deepest point)\n",
              na, nb, pairs[k].depth, m.stiffness * pow(pairs[k].depth, m.stiffness_exponent));
    } else {
      fprintf(f, "cdsim: warning: %s and %s overlap by %.3g m at the start: %s removes it within the first "
                 "step (phi/dt), which sets them apart at %.3g m/s (overlap / dt)\n",
              na, nb, pairs[k].depth, model, pairs[k].depth / scene->dt);
    }
  }
  if (npair > CD_NOTICE_OVERLAP_LINES)
    fprintf(f, "cdsim: warning: and %d more overlapping pairs at the start (the deepest are above)\n",
            npair - CD_NOTICE_OVERLAP_LINES);
  cd_free(pairs);
  cd_contactSetFree(&cs);
  return CD_OK;
}
