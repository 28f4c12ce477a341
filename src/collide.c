/* collide.c: one step's contact set: broad phase, dispatch to the narrow phase, sort.
 *
 * Margin (cd_collideMargin): a candidate contact is kept while its gap is at most m. The
 * scene's contact_margin, when it gives a distance, is m for every pair (0: touching
 * contacts only; each body's broad-phase share is then m as well, which covers it twice).
 * Otherwise ("auto", the default) m is velocity-adaptive,
 *     m = 1e-3 s + dt u,
 * s the size scale of the pair (the smaller of the two bodies' cd_bodySizeScale: sphere
 * radius, box smallest half extent; a body alone against the ground) and u the bound of the
 * closing speed |v_a| + |v_b| + |w_a| R_a + |w_b| R_b (R the bounding radius), i.e. the
 * distance the pair can close within the step plus a fixed sliver for the gravity-driven
 * part of the motion and for rounding. The broad phase enlarges each body's box by the
 * margin of the body alone, cd_collideMargin(scene, |v| + |w| R, dt, s_body); since m is additive in
 * u and s_pair <= s_body for each body, the two enlargements together cover the pair's m,
 * and every pair with gap <= m has overlapping enlarged boxes.
 * What the margin does to the models: a separated contact in the step's problem is one the
 * impulse models may act on through phi/dt (under the CCP a body sliding within the margin
 * is pushed off without touching, README.md), and one the penalty model watches.
 *
 * Dispatch (a < b): sphere-sphere (solid, or inside a hollow sphere, see narrowphase.c),
 * sphere-box either order, box-box; the ground against every body that is not fixed, with
 * no pair search. Fixed-fixed pairs are skipped. A body whose pose or velocity is not finite
 * gets no contact (its enlarged box is not finite: the broad phase leaves it out, and so does
 * the ground loop); the step's own finiteness check reports such a state.
 *
 * Output order: by key (a, b, feature a, feature b), deterministic, without a sort of the
 * whole set: the ground contacts first (a = -1) body by body, then the broad phase's pairs,
 * which come sorted by (a, b); only the few contacts of one pair (a box's corners) are put in
 * feature order.
 * v may be NULL (bodies at rest: the margin is then the fixed part only).
 *
 * Candidates across steps: the broad phase runs on each body's box grown by a skin (a fifth
 * of its size scale plus two steps of motion at its speed bound), and its pairs are kept
 * while every later step's box lies inside the grown one it was listed with. Any two of a
 * later step's boxes that overlap then have overlapping grown boxes, so the kept list holds
 * every pair the broad phase would give that step; those that pass its own test on that
 * step's boxes (cd_boxesOverlap) are exactly those pairs, in the same order, and the contacts
 * are the same to the last bit. A body that leaves its grown box (or a box not finite) makes
 * the broad phase run again, for all. On a settling pile it runs a few times a second
 * instead of every step.
 *
 * Verlet list (cd_collideList, for the force models' substeps, contact_cache.h): the pairs
 * that gave a contact and the candidate pairs with a hollow sphere, in the same (key) order;
 * cd_collidePair runs one listed pair's narrow phase.
 */
#include "collide.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "backend.h"
#include "broadphase.h"
#include "contact_cache.h"
#include "narrowphase.h"

/* a body's skin, m: this part of its size scale, and this many steps of its motion at the
 * step's speed bound (see "Candidates across steps") */
#define SKIN_SIZE 0.2
#define SKIN_STEPS 2.0

struct cdCollider {
  int nbody;
  double *aabb;  /* (nbody x 6) enlarged world boxes of the step */
  double *speed; /* (nbody) cd_bodySpeedBound of the step, m/s */
  double *size;  /* (nbody) cd_bodySizeScale, m */
  int *fixed;    /* (nbody) */
  cdBroadphase *bp;
  /* the candidate list kept across steps (see "Candidates across steps" above): the boxes
   * the broad phase last ran on, each a step's box grown by its skin, and its pairs */
  double *skin_box;     /* (nbody x 6) */
  const int *skin_pair; /* (nskin x 2) the broad phase's output, valid until its next run */
  int nskin, skin_valid;
  long broadphase_runs; /* how many times the broad phase ran (tests, bench) */
  cdContactCache *cache; /* force models only (cd_colliderCache), else NULL */
};

void cd_colliderFree(cdCollider *c) {
  if (!c) return;
  cd_free(c->aabb);
  cd_free(c->speed);
  cd_free(c->size);
  cd_free(c->fixed);
  cd_free(c->skin_box);
  cd_broadphaseFree(c->bp);
  cd_contactCacheFree(c->cache);
  cd_free(c);
}

cdContactCache *cd_colliderCache(cdCollider *c, const cdScene *scene) {
  if (!c->cache) c->cache = cd_contactCacheMake(scene);
  return c->cache;
}

cdCollider *cd_colliderMake(const cdScene *scene) {
  cdCollider *c = cd_calloc(1, sizeof *c);
  if (!c) return NULL;
  int n = scene->nbody;
  size_t m = n > 0 ? (size_t)n : 1;
  c->nbody = n;
  c->aabb = cd_malloc(6 * m * sizeof *c->aabb);
  c->speed = cd_malloc(m * sizeof *c->speed);
  c->size = cd_malloc(m * sizeof *c->size);
  c->fixed = cd_malloc(m * sizeof *c->fixed);
  c->skin_box = cd_malloc(6 * m * sizeof *c->skin_box);
  c->bp = cd_broadphaseMake(n);
  if (!c->aabb || !c->speed || !c->size || !c->fixed || !c->skin_box || !c->bp) {
    cd_colliderFree(c);
    return NULL;
  }
  for (int i = 0; i < n; i++) {
    c->size[i] = cd_bodySizeScale(&scene->body[i]);
    c->fixed[i] = scene->body[i].fixed != 0;
  }
  return c;
}

static int boxFinite(const double b[6]) {
  for (int k = 0; k < 6; k++)
    if (!isfinite(b[k])) return 0;
  return 1;
}

/* the contacts of one pair, out->con[start ..], into key (feature) order: a few at most (the
 * clipped points of a box face), so by insertion */
static void sortFeatures(cdContactSet *out, int start) {
  for (int k = start + 1; k < out->ncon; k++) {
    if (cd_contactKeyCompare(&out->con[k - 1], &out->con[k]) <= 0) continue;
    cdContact t = out->con[k];
    int m = k - 1;
    while (m >= start && cd_contactKeyCompare(&out->con[m], &t) > 0) {
      out->con[m + 1] = out->con[m];
      m--;
    }
    out->con[m + 1] = t;
  }
}

/* the pair (ia < ib; ia = -1: the ground) to its narrow-phase function */
static int dispatchPair(const cdScene *scene, int ia, int ib, const double *x, const double *R, double margin,
                        cdContactSet *out) {
  const cdBodyDef *B = &scene->body[ib];
  const double *xb = &x[3 * ib], *Rb = &R[9 * ib];
  if (ia < 0) {
    if (B->shape == CD_SPHERE) return cd_collideSphereGround(ib, B, xb, scene->ground_height, margin, out);
    return cd_collideBoxGround(ib, B, xb, Rb, scene->ground_height, margin, out);
  }
  const cdBodyDef *A = &scene->body[ia];
  const double *xa = &x[3 * ia], *Ra = &R[9 * ia];
  if (A->shape == CD_SPHERE && B->shape == CD_SPHERE) {
    if (!A->hollow && !B->hollow) return cd_collideSphereSphere(ia, A, xa, ib, B, xb, margin, out);
    /* one hollow: it is the shell; both hollow: the larger (a on equal radii) */
    int shell_is_a = A->hollow && (!B->hollow || A->radius >= B->radius);
    return cd_collideSphereInHollow(ia, A, xa, ib, B, xb, shell_is_a, margin, out);
  }
  if (A->shape == CD_SPHERE) return cd_collideSphereBox(ia, A, xa, Ra, ib, B, xb, Rb, 1, margin, out);
  if (B->shape == CD_SPHERE) return cd_collideSphereBox(ia, A, xa, Ra, ib, B, xb, Rb, 0, margin, out);
  return cd_collideBoxBox(ia, A, xa, Ra, ib, B, xb, Rb, margin, out);
}

int cd_collidePair(const cdScene *scene, int ia, int ib, const double *x, const double *R, double margin,
                   cdContactSet *out) {
  int start = out->ncon, rc = dispatchPair(scene, ia, ib, x, R, margin, out);
  if (!rc) sortFeatures(out, start);
  return rc;
}

static int pairReserve(cdPairList *p, int n) {
  if (n <= p->cap) return CD_OK;
  int cap = p->cap ? p->cap : 256;
  while (cap < n) cap *= 2;
  int *ab = cd_realloc(p->ab, (size_t)cap * 2 * sizeof *ab);
  if (!ab) return CD_ERR_NOMEM;
  p->ab = ab;
  p->cap = cap;
  return CD_OK;
}

int cd_pairListPush(cdPairList *p, int a, int b) {
  if (pairReserve(p, p->n + 1)) return CD_ERR_NOMEM;
  p->ab[2 * p->n] = a;
  p->ab[2 * p->n + 1] = b;
  p->n++;
  return CD_OK;
}

static int pairCompare(const void *x, const void *y) {
  const int *p = x, *q = y;
  if (p[0] != q[0]) return p[0] < q[0] ? -1 : 1;
  return p[1] < q[1] ? -1 : p[1] > q[1];
}

void cd_pairListSort(cdPairList *p) {
  if (p->n < 2) return;
  qsort(p->ab, (size_t)p->n, 2 * sizeof *p->ab, pairCompare);
  int n = 1;
  for (int q = 1; q < p->n; q++) {
    if (pairCompare(&p->ab[2 * q], &p->ab[2 * n - 2]) == 0) continue;
    p->ab[2 * n] = p->ab[2 * q];
    p->ab[2 * n + 1] = p->ab[2 * q + 1];
    n++;
  }
  p->n = n;
}

int cd_pairListMerge(cdPairList *into, const cdPairList *add) {
  int n1 = into->n, n2 = add->n;
  if (pairReserve(into, n1 + n2)) return CD_ERR_NOMEM;
  /* into's pairs move up by n2, then the merge writes from the front: it never overtakes
   * the pairs it has still to read */
  int *ab = into->ab;
  memmove(&ab[2 * n2], ab, (size_t)n1 * 2 * sizeof *ab);
  int i = n2, j = 0, out = 0;
  while (i < n1 + n2 || j < n2) {
    const int *next;
    if (j == n2 || (i < n1 + n2 && pairCompare(&ab[2 * i], &add->ab[2 * j]) <= 0))
      next = &ab[2 * i++];
    else
      next = &add->ab[2 * j++];
    if (out > 0 && pairCompare(&ab[2 * out - 2], next) == 0) continue;
    int a = next[0], b = next[1];
    ab[2 * out] = a;
    ab[2 * out + 1] = b;
    out++;
  }
  into->n = out;
  return CD_OK;
}

/* the margin of a pair (or a body's share of it) at speed bound u over dt: the scene's rule,
 * or for a Verlet list the rule at rest plus the distance u dt the speed can close (the
 * same under "auto": 1e-3 s + 0 + dt u) */
static double pairMargin(const cdScene *scene, int list, double u, double dt, double s) {
  return list ? cd_collideMargin(scene, 0, dt, s) + dt * u : cd_collideMargin(scene, u, dt, s);
}

/* the step's boxes each inside the box the list was made for (a non-finite one never is) */
static int skinHolds(const cdCollider *c, int n) {
  if (!c->skin_valid) return 0;
  for (int i = 0; i < n; i++) {
    const double *b = &c->aabb[6 * i], *k = &c->skin_box[6 * i];
    if (!(b[0] >= k[0] && b[1] >= k[1] && b[2] >= k[2] && b[3] <= k[3] && b[4] <= k[4] && b[5] <= k[5]))
      return 0;
  }
  return 1;
}

/* c->skin_pair: kept while it holds, else the broad phase on the step's boxes grown by
 * their skins */
static int skinPairs(cdCollider *c, int n, double dt) {
  if (skinHolds(c, n)) return CD_OK;
  c->skin_valid = 0;
  for (int i = 0; i < n; i++) {
    double d = SKIN_SIZE * c->size[i] + SKIN_STEPS * dt * c->speed[i];
    for (int k = 0; k < 3; k++) {
      c->skin_box[6 * i + k] = c->aabb[6 * i + k] - d;
      c->skin_box[6 * i + 3 + k] = c->aabb[6 * i + 3 + k] + d;
    }
  }
  int rc = cd_broadphasePairs(c->bp, n, c->skin_box, c->fixed, &c->nskin, &c->skin_pair);
  if (rc) return rc;
  c->broadphase_runs++;
  c->skin_valid = 1;
  return CD_OK;
}

long cd_colliderBroadphaseRuns(const cdCollider *c) { return c->broadphase_runs; }

/* cd_collide; with pairs, the Verlet list (cd_collideList) */
static int collideAll(cdCollider *c, const cdScene *scene, const double *x, const double *R, const double *v,
                      double dt, cdContactSet *out, cdPairList *pairs) {
  cd_contactSetClear(out);
  if (pairs) pairs->n = 0;
  int n = scene->nbody < c->nbody ? scene->nbody : c->nbody;
  for (int i = 0; i < n; i++) {
    const cdBodyDef *b = &scene->body[i];
    const double *vi = v ? &v[6 * i] : NULL;
    c->speed[i] = cd_bodySpeedBound(b, vi);
    double share = pairMargin(scene, pairs != NULL, c->speed[i], dt, c->size[i]);
    cd_broadphaseBounds(b, &x[3 * i], &R[9 * i], share, &c->aabb[6 * i]);
  }

  int rc = skinPairs(c, n, dt);
  if (rc) return rc;

  if (scene->has_ground) {
    for (int i = 0; i < n; i++) {
      if (c->fixed[i] || !boxFinite(&c->aabb[6 * i])) continue;
      int start = out->ncon;
      rc = cd_collidePair(scene, -1, i, x, R, pairMargin(scene, pairs != NULL, c->speed[i], dt, c->size[i]), out);
      if (rc) return rc;
      if (pairs && out->ncon > start && (rc = cd_pairListPush(pairs, -1, i))) return rc;
    }
  }
  for (int p = 0; p < c->nskin; p++) {
    int ia = c->skin_pair[2 * p], ib = c->skin_pair[2 * p + 1];
    /* the broad phase's own test on this step's boxes (broadphase.h): the list's pairs
     * that pass it are exactly the pairs it would give, in the same order */
    if (!cd_boxesOverlap(&c->aabb[6 * ia], &c->aabb[6 * ib])) continue;
    double s = c->size[ia] < c->size[ib] ? c->size[ia] : c->size[ib];
    int start = out->ncon;
    rc = cd_collidePair(scene, ia, ib, x, R, pairMargin(scene, pairs != NULL, c->speed[ia] + c->speed[ib], dt, s), out);
    if (rc) return rc;
    if (pairs && (out->ncon > start || scene->body[ia].hollow || scene->body[ib].hollow) &&
        (rc = cd_pairListPush(pairs, ia, ib)))
      return rc;
  }
  return CD_OK;
}

int cd_collide(cdCollider *c, const cdScene *scene, const double *x, const double *R, const double *v,
               double dt, cdContactSet *out) {
  return collideAll(c, scene, x, R, v, dt, out, NULL);
}

int cd_collideList(cdCollider *c, const cdScene *scene, const double *x, const double *R, const double *v,
                   double dt, cdContactSet *out, cdPairList *pairs) {
  return collideAll(c, scene, x, R, v, dt, out, pairs);
}
