/* scene.c: material defaults and mixing, derived body data. */
#include "scene.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "alloc.h"

/* the built-in material: steel-like values that every bundled scene runs with under all
 * three models (README.md, "Materials") */
cdMaterial cd_materialDefault(void) {
  cdMaterial m;
  memset(&m, 0, sizeof m);
  strcpy(m.name, "default");
  m.friction = 0.5;
  m.restitution = 1.0;
  m.stiffness = 1e6;
  m.damping = 2e3;
  m.stiffness_exponent = 1.0;
  m.impact_model = 0;
  m.min_impact_velocity = 0.0;
  m.friction_regularization = 0.001;
  m.pull_off_force = 0.0;
  m.plasticity_ratio = 0.0;
  m.adhesion_coefficient = 0.0;
  m.adhesion_exponent = 1.0;
  return m;
}

static int sameValues(const cdMaterial *a, const cdMaterial *b) {
  return a->friction == b->friction && a->restitution == b->restitution && a->stiffness == b->stiffness &&
         a->damping == b->damping && a->stiffness_exponent == b->stiffness_exponent &&
         a->impact_model == b->impact_model && a->min_impact_velocity == b->min_impact_velocity &&
         a->friction_regularization == b->friction_regularization && a->pull_off_force == b->pull_off_force &&
         a->plasticity_ratio == b->plasticity_ratio && a->adhesion_coefficient == b->adhesion_coefficient &&
         a->adhesion_exponent == b->adhesion_exponent;
}

/* 2 a b / (a + b): a material's k_c (d_c) is that of a contact of two bodies made of it, each
 * body a spring (dashpot) of 2 k_c (2 d_c); a contact of two materials puts 2 k_a and 2 k_b
 * in series. 0 when either is 0. */
static double harmonicMean(double a, double b) { return a + b > 0 ? 2 * a * b / (a + b) : 0; }

void cd_materialMix(const cdMaterial *a, const cdMaterial *b, cdMaterial *out) {
  /* identical values: exactly those values (the formulas below give them up to rounding) */
  if (a == b || sameValues(a, b)) {
    *out = *a;
    return;
  }
  memset(out, 0, sizeof *out);
  snprintf(out->name, sizeof out->name, "%.31s+%.30s", a->name, b->name);
  out->friction = sqrt(a->friction * b->friction);
  out->restitution = fmin(a->restitution, b->restitution);
  out->stiffness = harmonicMean(a->stiffness, b->stiffness);
  out->damping = harmonicMean(a->damping, b->damping);
  /* two exponents have no mixed law (k_c is in N/m^n_exp): the penalty model refuses such a
   * contact (cd_sceneExponentConflict); the impulse models use neither value */
  out->stiffness_exponent = 0.5 * (a->stiffness_exponent + b->stiffness_exponent);
  out->impact_model = a->impact_model > b->impact_model ? a->impact_model : b->impact_model;
  out->min_impact_velocity = 0.5 * (a->min_impact_velocity + b->min_impact_velocity);
  out->friction_regularization = 0.5 * (a->friction_regularization + b->friction_regularization);
  out->pull_off_force = 0.5 * (a->pull_off_force + b->pull_off_force);
  out->plasticity_ratio = 0.5 * (a->plasticity_ratio + b->plasticity_ratio);
  out->adhesion_coefficient = 0.5 * (a->adhesion_coefficient + b->adhesion_coefficient);
  out->adhesion_exponent = 0.5 * (a->adhesion_exponent + b->adhesion_exponent);
}

double cd_sceneStepCount(double duration, double dt) {
  double n = duration / dt, r = floor(n + 0.5);
  return fabs(n - r) <= 1e-9 * fmax(1.0, n) ? r : ceil(n);
}

/* the material of a body or of the ground (-1) */
static int materialOf(const cdScene *scene, int i) {
  return i < 0 ? scene->ground_material : scene->body[i].material;
}

void cd_sceneContactMaterial(const cdScene *scene, int a, int b, cdMaterial *out) {
  cd_materialMix(&scene->material[materialOf(scene, a)], &scene->material[materialOf(scene, b)], out);
}

int cd_sceneExponentConflict(const cdScene *scene, int *ma, int *mb) {
  /* the first moving body's exponent e0: any moving body, and any fixed one or the ground,
   * of another exponent can touch a body of e0 (a moving one) */
  int first = -1;
  for (int i = 0; i < scene->nbody && first < 0; i++)
    if (!scene->body[i].fixed) first = i;
  if (first < 0) return 0; /* nothing moves: nothing touches */
  int m0 = materialOf(scene, first);
  double e0 = scene->material[m0].stiffness_exponent;
  for (int i = scene->has_ground ? -1 : 0; i < scene->nbody; i++) {
    int m = materialOf(scene, i);
    if (scene->material[m].stiffness_exponent != e0) {
      *ma = m0;
      *mb = m;
      return 1;
    }
  }
  return 0;
}

static double volume(const cdBodyDef *b) {
  if (b->shape == CD_SPHERE) return 4.0 / 3.0 * M_PI * b->radius * b->radius * b->radius;
  return 8.0 * b->half[0] * b->half[1] * b->half[2];
}

void cd_sceneFinish(cdScene *scene) {
  for (int i = 0; i < scene->nbody; i++) {
    cdBodyDef *b = &scene->body[i];
    if (b->fixed) {
      b->mass = 0;
      b->inertia[0] = b->inertia[1] = b->inertia[2] = 0;
      continue;
    }
    if (b->mass <= 0 && b->density > 0) b->mass = b->density * volume(b);
    if (b->shape == CD_SPHERE) {
      /* a hollow sphere is a thin shell: 2/3 m r^2; a solid one 2/5 m r^2 */
      double k = b->hollow ? 2.0 / 3.0 : 2.0 / 5.0;
      b->inertia[0] = b->inertia[1] = b->inertia[2] = k * b->mass * b->radius * b->radius;
    } else {
      double a2 = 4 * b->half[0] * b->half[0], b2 = 4 * b->half[1] * b->half[1], c2 = 4 * b->half[2] * b->half[2];
      b->inertia[0] = b->mass * (b2 + c2) / 12.0;
      b->inertia[1] = b->mass * (a2 + c2) / 12.0;
      b->inertia[2] = b->mass * (a2 + b2) / 12.0;
    }
  }
}

void cd_sceneFree(cdScene *scene) {
  cd_free(scene->material);
  cd_free(scene->body);
  memset(scene, 0, sizeof *scene);
}

double cd_bodyBoundingRadius(const cdBodyDef *b) {
  if (b->shape == CD_SPHERE) return b->radius;
  return sqrt(b->half[0] * b->half[0] + b->half[1] * b->half[1] + b->half[2] * b->half[2]);
}
