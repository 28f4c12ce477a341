/* test_contact_cache.c: the force models' Verlet list and step record (contact_cache.h)
 * against a full collision at every substep, on bodies moved by hand. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "collide.h"
#include "contact_cache.h"
#include "simtest.h"
#include "test.h"
#include "vec3.h"

/* spheres that graze each other across a step boundary; a pile; a tumbling box over the ground; a
 * box against a box; a sphere in a fixed hollow shell; and a sphere at rest that is kicked
 * into another mid-step */
static const char *cacheScene =
    "{\"gravity\": [0, 0, -9.81], \"dt\": 0.01, \"steps\": 3,"
    " \"ground\": {\"height\": 0},"
    " \"bodies\": ["
    "  {\"name\": \"s0\", \"shape\": \"sphere\", \"radius\": 0.05, \"mass\": 1, \"position\": [0, 0, 0.2],"
    "   \"velocity\": [1, 0, 0]},"
    "  {\"name\": \"s1\", \"shape\": \"sphere\", \"radius\": 0.05, \"mass\": 1, \"position\": [0.016, 0.0995, 0.2],"
    "   \"velocity\": [-1, 0, 0]},"
    "  {\"name\": \"p0\", \"shape\": \"sphere\", \"radius\": 0.05, \"mass\": 1, \"position\": [1, 0, 0.0499]},"
    "  {\"name\": \"p1\", \"shape\": \"sphere\", \"radius\": 0.05, \"mass\": 1, \"position\": [1.0999, 0, 0.0499]},"
    "  {\"name\": \"p2\", \"shape\": \"sphere\", \"radius\": 0.05, \"mass\": 1, \"position\": [1.05, 0, 0.136],"
    "   \"velocity\": [0, 0, -0.3], \"angular_velocity\": [0, 4, 0]},"
    "  {\"name\": \"box\", \"shape\": \"cube\", \"size\": 0.2, \"mass\": 1, \"position\": [2, 0, 0.15],"
    "   \"orientation\": [0.9238795, 0.3826834, 0, 0], \"velocity\": [0.5, 0, -1], \"angular_velocity\": [20, 5, 0]},"
    "  {\"name\": \"b0\", \"shape\": \"box\", \"size\": [0.2, 0.2, 0.1], \"mass\": 1, \"position\": [3, 0, 0.3]},"
    "  {\"name\": \"b1\", \"shape\": \"box\", \"size\": [0.2, 0.2, 0.1], \"mass\": 1, \"position\": [3.05, 0.02, 0.4003],"
    "   \"orientation\": [0.9961947, 0, 0, 0.0871557], \"velocity\": [0, 0, -0.2], \"angular_velocity\": [1, -2, 0]},"
    "  {\"name\": \"shell\", \"shape\": \"sphere\", \"radius\": 0.3, \"hollow\": true, \"fixed\": true,"
    "   \"position\": [5, 0, 1]},"
    "  {\"name\": \"in\", \"shape\": \"sphere\", \"radius\": 0.1, \"mass\": 1, \"position\": [5, 0, 0.802],"
    "   \"velocity\": [0.3, 0, -0.5]},"
    "  {\"name\": \"k0\", \"shape\": \"sphere\", \"radius\": 0.05, \"mass\": 1, \"position\": [7, 0, 0.5]},"
    "  {\"name\": \"k1\", \"shape\": \"sphere\", \"radius\": 0.05, \"mass\": 1, \"position\": [7.108, 0, 0.5]}]}";

/* the same key, gap, point and normal, bit for bit (a substep's contacts: their frames wait
 * for the end of the step, contact_cache.h) */
static int sameGeometry(const cdContact *a, const cdContact *b) {
  if (cd_contactKeyCompare(a, b) != 0 || a->gap != b->gap) return 0;
  for (int e = 0; e < 3; e++)
    if (a->point[e] != b->point[e] || a->normal[e] != b->normal[e]) return 0;
  return 1;
}

/* sameGeometry and the same frame (t1, t2) */
static int sameContact(const cdContact *a, const cdContact *b) {
  if (!sameGeometry(a, b)) return 0;
  for (int e = 0; e < 3; e++)
    if (a->t1[e] != b->t1[e] || a->t2[e] != b->t2[e]) return 0;
  return 1;
}

/* 1 when the full collision's contact c may be missing from the list: a positive-gap
 * box-box contact (contact_cache.h) */
static int mayBeMissing(const cdScene *scene, const cdContact *c) {
  return c->gap > 0 && c->body[0] >= 0 && scene->body[c->body[0]].shape == CD_BOX &&
         scene->body[c->body[1]].shape == CD_BOX;
}

static int findKey(const cdContactSet *s, const cdContact *c) {
  for (int i = 0; i < s->ncon; i++)
    if (cd_contactKeyCompare(&s->con[i], c) == 0) return i;
  return -1;
}

/* steps the scene's bodies by hand (3 steps of 50 substeps, as semi-implicit Euler moves
 * them) through the cache and compares every substep with a full collision; kick(sim,
 * step, substep) may change velocities. Counts what was compared. */
typedef struct {
  long substeps, contacts, touching, recollisions, opened_and_kept;
} cdCacheRun;

static void runAgainstFullCollision(const char *text, void (*kick)(cdSim *, int, int), cdCacheRun *out) {
  memset(out, 0, sizeof *out);
  cdSim sim;
  if (cd_simMake(&sim, text, "penalty", NULL)) return;
  const cdScene *scene = &sim.scene;
  cdWorld *w = sim.world;
  cdContactCache *k = cd_colliderCache(w->collider, scene);
  cdCollider *full_collider = cd_colliderMake(scene);
  CHECK(k && full_collider);
  if (!k || !full_collider) {
    cd_colliderFree(full_collider);
    cd_simFree(&sim);
    return;
  }
  cdContactSet full, before, seen, start;
  cd_contactSetInit(&full);
  cd_contactSetInit(&before);
  cd_contactSetInit(&seen);
  cd_contactSetInit(&start);
  const int nsub = 50;
  const double dt = scene->dt, h = dt / nsub;
  long substeps = 0, contacts = 0, touching = 0, opened_and_kept = 0;
  for (int step = 0; step < 3; step++) {
    /* the set the step starts from: the probe, then the record begins from it */
    const cdContactSet *probe = cd_contactCacheProbe(k, w->collider, scene, w, dt);
    CHECK(probe != NULL);
    if (!probe) break;
    cd_contactSetClear(&start);
    for (int i = 0; i < probe->ncon; i++) *cd_contactSetPush(&start) = probe->con[i];
    cdContactSet t = w->previous;
    w->previous = w->contacts;
    w->contacts = t;
    CHECK(cd_contactCacheBegin(k, w->collider, scene, w, dt, &w->contacts, &w->previous) == CD_OK);
    CHECK(w->contacts.ncon == start.ncon);
    for (int i = 0; i < start.ncon && i < w->contacts.ncon; i++) CHECK(sameContact(&w->contacts.con[i], &start.con[i]));
    cd_contactSetClear(&seen);
    for (int s = 0; s < nsub; s++) {
      const int *live;
      int nlive;
      CHECK(cd_contactCacheSubstep(k, w->collider, scene, w, h, dt - s * h, &w->contacts, &live, &nlive) == CD_OK);
      /* the full collision at this state, and its fresh flags by a key carry from the
       * substep before */
      CHECK(cd_collide(full_collider, scene, w->x, w->R, w->v, h, &full) == CD_OK);
      cd_contactSetCarry(&full, &before);
      int j = 0;
      for (int i = 0; i < full.ncon; i++) {
        const cdContact *f = &full.con[i];
        if (j < nlive && cd_contactKeyCompare(&w->contacts.con[live[j]], f) == 0) {
          const cdContact *c = &w->contacts.con[live[j]];
          CHECK_MSG(sameGeometry(c, f), "step %d substep %d: contact %d-%d differs from the full collision", step, s,
                    f->body[0], f->body[1]);
          CHECK_MSG(c->fresh == f->fresh, "step %d substep %d: contact %d-%d fresh %d, carry says %d", step, s,
                    f->body[0], f->body[1], c->fresh, f->fresh);
          j++;
          contacts++;
          if (f->gap <= 0) touching++;
        } else {
          CHECK_MSG(mayBeMissing(scene, f), "step %d substep %d: the list misses contact %d-%d (gap %g)", step, s,
                    f->body[0], f->body[1], f->gap);
        }
        if (findKey(&seen, f) < 0) {
          cdContact *e = cd_contactSetPush(&seen);
          *e = *f;
          cd_v3set(e->lambda, 0, 0, 0);
        }
      }
      CHECK_MSG(j == nlive, "step %d substep %d: the list has contacts the full collision does not", step, s);
      /* a force model's impulse of the substep on each live contact, in world coordinates
       * (contact_cache.h); seen keeps their sums and the last normal */
      for (int q = 0; q < nlive && j == nlive; q++) {
        cdContact *c = &w->contacts.con[live[q]];
        const double imp[3] = {0.3 + 0.01 * s, -0.2 + 0.001 * c->body[1], 0.5 - 0.02 * step};
        cdContact *e = &seen.con[findKey(&seen, c)];
        cd_v3add(c->lambda, c->lambda, imp);
        cd_v3add(e->lambda, e->lambda, imp);
        cd_v3copy(e->normal, c->normal);
      }
      cdContactSet tb = before;
      before = full;
      full = tb;
      /* the bodies move as semi-implicit Euler moves them: by the velocity the next substep
       * starts with */
      kick(&sim, step, s);
      for (int i = 0; i < scene->nbody; i++) {
        if (scene->body[i].fixed) continue;
        cd_v3addScaled(&w->x[3 * i], &w->x[3 * i], &w->v[6 * i], h);
        cd_quatIntegrate(&w->q[4 * i], &w->v[6 * i + 3], h);
        cd_quatToMat(&w->R[9 * i], &w->q[4 * i]);
      }
      substeps++;
    }
    CHECK(cd_contactCacheEnd(k, &w->contacts) == CD_OK);
    /* the record: every key of some substep, once, sorted, with its start-of-step gap (that
     * of the step's first collision when it had the key) */
    CHECK(w->contacts.ncon == seen.ncon);
    for (int i = 0; i < w->contacts.ncon; i++) {
      const cdContact *c = &w->contacts.con[i];
      if (i > 0) CHECK(cd_contactKeyCompare(&w->contacts.con[i - 1], c) < 0);
      int a = findKey(&seen, c), b = findKey(&start, c);
      CHECK(a >= 0);
      if (b >= 0) CHECK(c->gap == start.con[b].gap);
      if (a < 0) continue;
      /* the frame of its last normal, as the narrow phase makes it, and in it the world
       * impulse summed over the substeps */
      const cdContact *e = &seen.con[a];
      double t1[3], t2[3], J[3];
      cd_tangentFrame(c->normal, t1, t2);
      for (int d = 0; d < 3; d++) CHECK(c->normal[d] == e->normal[d] && c->t1[d] == t1[d] && c->t2[d] == t2[d]);
      cd_v3scale(J, c->normal, c->lambda[0]);
      cd_v3addScaled(J, J, c->t1, c->lambda[1]);
      cd_v3addScaled(J, J, c->t2, c->lambda[2]);
      for (int d = 0; d < 3; d++) CHECK_NEAR(J[d], e->lambda[d], 1e-14 * cd_v3norm(e->lambda));
      if (findKey(&before, c) < 0) opened_and_kept++;
    }
  }
  *out = (cdCacheRun){substeps, contacts, touching, cd_contactCacheRecollisions(k), opened_and_kept};
  cd_contactSetFree(&full);
  cd_contactSetFree(&before);
  cd_contactSetFree(&seen);
  cd_contactSetFree(&start);
  cd_colliderFree(full_collider);
  cd_simFree(&sim);
}

/* k0 is kicked at 4 m/s into k1 (8 mm away) in the middle of step 1: it alone outruns the list */
static void kickOne(cdSim *sim, int step, int substep) {
  if (step == 1 && substep == 20) sim->world->v[6 * cd_simBody(sim, "k0")] = 4;
}

CD_TEST(verletListGivesEverySubstepTheContactsOfAFullCollision) {
  cdCacheRun r;
  runAgainstFullCollision(cacheScene, kickOne, &r);
  printf("    %ld substeps, %ld contacts (%ld touching) as the full collision gives them; %ld re-collisions;"
         " %ld recorded contacts that had left by the step's end\n",
         r.substeps, r.contacts, r.touching, r.recollisions, r.opened_and_kept);
  CHECK(r.substeps == 150);
  CHECK(r.touching > 0);
  CHECK(r.recollisions == 1);
  CHECK(r.opened_and_kept >= 1);
}

/* every sphere of the row is kicked at once (more than the cache renews one by one) */
static void kickRow(cdSim *sim, int step, int substep) {
  if (step != 1 || substep != 10) return;
  for (int i = 0; i < sim->scene.nbody; i++) sim->world->v[6 * i] = i % 2 ? -3 : 3;
}

CD_TEST(verletListHoldsWhenManyBodiesOutrunItAtOnce) {
  /* 48 spheres (r 0.05) in a row on the ground, 4 mm apart, kicked towards each other in
   * pairs at 3 m/s: they meet within 1 ms */
  char text[16384];
  int n = snprintf(text, sizeof text, "{\"gravity\": [0, 0, -9.81], \"dt\": 0.01, \"steps\": 3,"
                                      " \"ground\": {\"height\": 0}, \"bodies\": [");
  for (int i = 0; i < 48; i++)
    n += snprintf(text + n, sizeof text - (size_t)n,
                  "%s{\"name\": \"s%d\", \"shape\": \"sphere\", \"radius\": 0.05, \"mass\": 1,"
                  " \"position\": [%.3f, 0, 0.0499]}",
                  i ? ", " : "", i, 0.104 * i);
  snprintf(text + n, sizeof text - (size_t)n, "]}");
  cdCacheRun r;
  runAgainstFullCollision(text, kickRow, &r);
  printf("    row of 48 kicked at once: %ld substeps, %ld contacts (%ld touching) as the full collision gives"
         " them; %ld re-collisions\n",
         r.substeps, r.contacts, r.touching, r.recollisions);
  CHECK(r.substeps == 150);
  CHECK(r.touching > 48);
  CHECK(r.recollisions >= 1);
}

CD_TEST(verletListHoldsUnderAFixedContactMargin) {
  /* contact_margin 0 (touching contacts only) and 2 mm: the substeps' margin no longer grows
   * with the speeds, the list's still covers the step's motion */
  const char *margins[] = {"0", "0.002"};
  for (int m = 0; m < 2; m++) {
    char text[8192];
    snprintf(text, sizeof text, "{\"contact_margin\": %s, %s", margins[m], cacheScene + 1);
    cdCacheRun r;
    runAgainstFullCollision(text, kickOne, &r);
    printf("    contact_margin %s: %ld substeps, %ld contacts (%ld touching) as the full collision gives them;"
           " %ld re-collisions\n",
           margins[m], r.substeps, r.contacts, r.touching, r.recollisions);
    CHECK(r.substeps == 150);
    CHECK(r.touching > 0);
    CHECK(r.recollisions == 1);
  }
}

static void kickNone(cdSim *sim, int step, int substep) {
  (void)sim;
  (void)step;
  (void)substep;
}

CD_TEST(verletListHoldsForBodiesFasterThanTheirSizeAStep) {
  /* spheres (r 0.05) and cubes (0.1) in two rows, 4 mm apart, at +-30 m/s: each crosses its
   * size 6 times a step, so the list covers 1/6 of it and keeps the neighbours only */
  char text[16384];
  int n = snprintf(text, sizeof text, "{\"gravity\": [0, 0, -9.81], \"dt\": 0.01, \"steps\": 3, \"bodies\": [");
  for (int i = 0; i < 12; i++)
    n += snprintf(text + n, sizeof text - (size_t)n,
                  "%s{\"name\": \"s%d\", \"shape\": \"sphere\", \"radius\": 0.05, \"mass\": 1,"
                  " \"position\": [%.3f, 0, 0], \"velocity\": [%d, 0, 0]},"
                  " {\"name\": \"c%d\", \"shape\": \"cube\", \"size\": 0.1, \"mass\": 1,"
                  " \"position\": [%.3f, 1, 0], \"velocity\": [%d, 0, 0]}",
                  i ? ", " : "", i, 0.104 * i, i % 2 ? -30 : 30, i, 0.104 * i, i % 2 ? -30 : 30);
  snprintf(text + n, sizeof text - (size_t)n, "]}");
  cdCacheRun r;
  runAgainstFullCollision(text, kickNone, &r);
  printf("    rows at 30 m/s: %ld substeps, %ld contacts (%ld touching) as the full collision gives them;"
         " %ld re-collisions\n",
         r.substeps, r.contacts, r.touching, r.recollisions);
  CHECK(r.substeps == 150);
  CHECK(r.touching > 12);
  CHECK(r.recollisions >= 1);
}
