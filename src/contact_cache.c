/* contact_cache.c: see contact_cache.h (the Verlet list, its guarantee, the record).
 *
 * Bookkeeping. The record is rec (the world's contact set): sorted by key at the start of the
 * step (the list's contacts); a key that first appears in a substep is appended, and the
 * record is sorted again at the end of the step. A hash table maps each key to its contact in
 * rec. Every contact carries the number of the substep it was last present in (a count over
 * the run): present in the substep before means its state carries (fresh = 0). A substep's
 * contacts are found pair by pair, each pair's in key order, so they come in key order
 * whatever order rec is in.
 *
 * The substep's loop. Most listed pairs of a pile are sphere-sphere and sphere-ground pairs,
 * which have one contact, key (a, b, 0, 0): their geometry is computed in place (the
 * narrow phase's own cd_sphereSphereGeometry / cd_sphereGroundGeometry, so the numbers are
 * those of cd_collidePair) and written into the pair's contact of rec, whose index the pair
 * keeps (slot) from its first look-up in the hash table until the list or rec's order
 * changes (a new step, a re-collision). Other pairs (boxes, hollow spheres) go through
 * cd_collidePair and the table.
 */
#include "contact_cache.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "backend.h"
#include "broadphase.h"
#include "narrowphase.h"
#include "vec3.h"
#include "world.h"

/* the most bodies that outrun the list at one substep that get their pairs anew one by one
 * (each against every body: O(nbody) each); more get a full collision */
#define CACHE_LOCAL_MAX 32
/* a full re-collision covers this many substeps at most (it is a crowd of bodies sped up at
 * once, as in an explosion of bodies started inside each other) */
#define CACHE_FULL_HORIZON 16

struct cdContactCache {
  int nbody;
  /* the Verlet list */
  cdPairList pairs;     /* listed pairs, sorted by (a, b) */
  cdPairList more;      /* a re-collision's pairs */
  unsigned char *kind;  /* (pair_cap) each listed pair's narrow phase: PAIR_SPHERES, ... */
  int *slot;            /* (pair_cap) a one-contact pair's contact in rec; -1: not looked up yet */
  int pair_cap;
  unsigned char *ball;  /* (nbody) 1 for a sphere, 2 for a solid one (not hollow) */
  double *size;         /* (nbody) cd_bodySizeScale, m */
  double *radius;       /* (nbody) cd_bodyBoundingRadius, m */
  double *speed;        /* (nbody) present speed bound u_i, m/s */
  double *cover;        /* (nbody) T U_i: how far body i may move while the list holds, m */
  double *moved;        /* (nbody) D_i: how far it has moved since its cover started, m */
  double *vlist;        /* (nbody x 6) the velocities of the list's margin, m/s, rad/s */
  int *outran;          /* (nbody) the bodies beyond their cover at this substep */
  unsigned char *is_out; /* (nbody) 1 for those, while their pairs are made anew */
  double h;             /* the substep of the last cd_contactCacheSubstep, s */
  int listed;           /* 1 while no substep has moved the bodies since the list was made */
  long recollisions;
  /* the record's bookkeeping, parallel to rec->con */
  long stamp;           /* the number of the present (or last) substep, counted over the run */
  long first_stamp;     /* that of the step's first substep */
  int slot_cap;
  double *gap0;         /* (slot_cap) the gap at the start of the step (contact_cache.h), m */
  long *last;           /* (slot_cap) the substep the contact was last present in; -1: never */
  long *last_old;       /* (slot_cap) the same for the record before, at cd_contactCacheBegin */
  unsigned char *turned; /* (slot_cap) 1 once the normal changed in this step: its frame is made
                            anew at the end */
  int *live;            /* (slot_cap) this substep's contacts; the order of a sort at the end */
  int *order_tmp;       /* (slot_cap) merge sort workspace */
  int sorted;           /* 0 once a key was appended to rec in this step */
  int *table;           /* (table_cap) hash table of rec's keys: index into rec, -1 empty */
  int table_cap;        /* a power of two, at least twice rec->ncon */
  cdContactSet scratch; /* one pair's narrow phase; a full collision */
  cdContactSet spare;   /* the record sorted at the end of the step */
};

void cd_contactCacheFree(cdContactCache *k) {
  if (!k) return;
  cd_free(k->pairs.ab);
  cd_free(k->more.ab);
  cd_free(k->kind);
  cd_free(k->slot);
  cd_free(k->ball);
  cd_free(k->size);
  cd_free(k->radius);
  cd_free(k->speed);
  cd_free(k->cover);
  cd_free(k->moved);
  cd_free(k->vlist);
  cd_free(k->outran);
  cd_free(k->is_out);
  cd_free(k->gap0);
  cd_free(k->last);
  cd_free(k->last_old);
  cd_free(k->turned);
  cd_free(k->live);
  cd_free(k->order_tmp);
  cd_free(k->table);
  cd_contactSetFree(&k->scratch);
  cd_contactSetFree(&k->spare);
  cd_free(k);
}

cdContactCache *cd_contactCacheMake(const cdScene *scene) {
  cdContactCache *k = cd_calloc(1, sizeof *k);
  if (!k) return NULL;
  size_t nb = (size_t)(scene->nbody > 0 ? scene->nbody : 1);
  k->nbody = scene->nbody;
  k->size = cd_calloc(nb, sizeof *k->size);
  k->radius = cd_calloc(nb, sizeof *k->radius);
  k->speed = cd_calloc(nb, sizeof *k->speed);
  k->cover = cd_calloc(nb, sizeof *k->cover);
  k->moved = cd_calloc(nb, sizeof *k->moved);
  k->vlist = cd_calloc(6 * nb, sizeof *k->vlist);
  k->outran = cd_calloc(nb, sizeof *k->outran);
  k->is_out = cd_calloc(nb, sizeof *k->is_out);
  k->ball = cd_calloc(nb, sizeof *k->ball);
  if (!k->size || !k->radius || !k->speed || !k->cover || !k->moved || !k->vlist || !k->outran || !k->is_out ||
      !k->ball) {
    cd_contactCacheFree(k);
    return NULL;
  }
  for (int i = 0; i < scene->nbody; i++) {
    k->size[i] = cd_bodySizeScale(&scene->body[i]);
    k->radius[i] = cd_bodyBoundingRadius(&scene->body[i]);
    if (scene->body[i].shape == CD_SPHERE) k->ball[i] = scene->body[i].hollow ? 1 : 2;
  }
  return k;
}

long cd_contactCacheRecollisions(const cdContactCache *k) { return k->recollisions; }

/* the record's parallel arrays hold at least n contacts */
static int reserveSlots(cdContactCache *k, int n) {
  if (n <= k->slot_cap) return CD_OK;
  int cap = k->slot_cap ? k->slot_cap : 256;
  while (cap < n) cap = cap > CD_CONTACT_MAX / 2 ? CD_CONTACT_MAX : 2 * cap;
  size_t m = (size_t)cap;
  double *g = cd_realloc(k->gap0, m * sizeof *g);
  if (g) k->gap0 = g;
  long *l = cd_realloc(k->last, m * sizeof *l);
  if (l) k->last = l;
  long *lo = cd_realloc(k->last_old, m * sizeof *lo);
  if (lo) k->last_old = lo;
  unsigned char *tu = cd_realloc(k->turned, m * sizeof *tu);
  if (tu) k->turned = tu;
  int *v = cd_realloc(k->live, m * sizeof *v);
  if (v) k->live = v;
  int *o = cd_realloc(k->order_tmp, m * sizeof *o);
  if (o) k->order_tmp = o;
  if (!g || !l || !lo || !tu || !v || !o) return CD_ERR_NOMEM;
  k->slot_cap = cap;
  return CD_OK;
}

/* ---- the key table ---- */

static size_t keySlot(const cdContactCache *k, const cdContact *c) {
  uint64_t x = (uint64_t)(uint32_t)(c->body[0] + 1) << 32 | (uint32_t)c->body[1];
  uint64_t y = (uint64_t)c->feature[0] << 32 | c->feature[1];
  x = (x ^ (x >> 31)) * 0x9E3779B97F4A7C15ull ^ y;
  x = (x ^ (x >> 29)) * 0xD6E8FEB86659FD93ull;
  x ^= x >> 32;
  return (size_t)(x & (uint64_t)(k->table_cap - 1));
}

static void tableInsert(cdContactCache *k, const cdContactSet *rec, int i) {
  size_t s = keySlot(k, &rec->con[i]);
  while (k->table[s] >= 0) s = (s + 1) & (size_t)(k->table_cap - 1);
  k->table[s] = i;
}

/* the table of rec's keys, for at least n contacts */
static int tableBuild(cdContactCache *k, const cdContactSet *rec, int n) {
  int cap = k->table_cap ? k->table_cap : 1024;
  while (cap < 2 * n) cap *= 2;
  if (cap != k->table_cap) {
    int *t = cd_realloc(k->table, (size_t)cap * sizeof *t);
    if (!t) return CD_ERR_NOMEM;
    k->table = t;
    k->table_cap = cap;
  }
  memset(k->table, 0xff, (size_t)k->table_cap * sizeof *k->table);
  for (int i = 0; i < rec->ncon; i++) tableInsert(k, rec, i);
  return CD_OK;
}

/* the contact of rec with c's key not yet present in this substep (keys are unique but for
 * degenerate clipping), or -1 */
static int tableFind(const cdContactCache *k, const cdContactSet *rec, const cdContact *c) {
  for (size_t s = keySlot(k, c);; s = (s + 1) & (size_t)(k->table_cap - 1)) {
    int i = k->table[s];
    if (i < 0) return -1;
    if (cd_contactKeyCompare(&rec->con[i], c) == 0 && k->last[i] != k->stamp) return i;
  }
}

/* ---- the Verlet list ---- */

/* a listed pair's narrow phase in the substeps */
enum {
  PAIR_OTHER = 0,        /* cd_collidePair: boxes, hollow spheres */
  PAIR_SPHERES = 1,      /* two solid spheres: cd_sphereSphereGeometry */
  PAIR_SPHERE_GROUND = 2 /* a sphere against the ground: cd_sphereGroundGeometry */
};

/* the list's pairs changed (a new list, a re-collision; or rec's order, at a new step):
 * their kinds, and their contacts in rec to be looked up anew */
static int listChanged(cdContactCache *k) {
  int n = k->pairs.n;
  if (n > k->pair_cap) {
    int cap = k->pairs.cap > n ? k->pairs.cap : n;
    unsigned char *kd = cd_realloc(k->kind, (size_t)cap * sizeof *kd);
    if (kd) k->kind = kd;
    int *sl = cd_realloc(k->slot, (size_t)cap * sizeof *sl);
    if (sl) k->slot = sl;
    if (!kd || !sl) return CD_ERR_NOMEM;
    k->pair_cap = cap;
  }
  for (int p = 0; p < n; p++) {
    int a = k->pairs.ab[2 * p], b = k->pairs.ab[2 * p + 1];
    if (a < 0)
      k->kind[p] = k->ball[b] ? PAIR_SPHERE_GROUND : PAIR_OTHER;
    else
      k->kind[p] = k->ball[a] == 2 && k->ball[b] == 2 ? PAIR_SPHERES : PAIR_OTHER;
    k->slot[p] = -1;
  }
  return CD_OK;
}

/* the velocity of body i for a list over T: its speed raised by |g| T (a body at rest: |g| T
 * along x) */
static void listVelocity(cdContactCache *k, const cdWorld *w, int i, double gT) {
  double *v = &k->vlist[6 * i];
  memcpy(v, &w->v[6 * i], 6 * sizeof *v);
  double s = cd_v3norm(v);
  if (s > 0)
    cd_v3scale(v, v, (s + gT) / s);
  else
    v[0] = gT;
}

/* a full collision at the state of w over the time T into out, its pairs into pairs */
static int listCollide(cdContactCache *k, cdCollider *c, const cdScene *scene, const cdWorld *w, double T,
                       cdContactSet *out, cdPairList *pairs) {
  double gT = cd_v3norm(scene->gravity) * T;
  for (int i = 0; i < w->nbody; i++) listVelocity(k, w, i, gT);
  return cd_collideList(c, scene, w->x, w->R, k->vlist, T, out, pairs);
}

/* the time a list made now covers: T, at most the time in which the fastest body (at the
 * speeds k->speed) crosses its own size, so that at the speeds of an explosion the list holds
 * neighbours, not every body within reach; at least hmin */
static double horizon(const cdContactCache *k, double T, double hmin) {
  for (int i = 0; i < k->nbody; i++)
    if (k->speed[i] * T > k->size[i]) T = k->size[i] / k->speed[i];
  return T > hmin ? T : hmin;
}

/* the list just made over T holds until body i has moved T U_i */
static void startCover(cdContactCache *k, const cdScene *scene, double T) {
  for (int i = 0; i < k->nbody; i++) {
    k->cover[i] = T * cd_bodySpeedBound(&scene->body[i], &k->vlist[6 * i]);
    k->moved[i] = 0;
  }
}

/* keeps the listed pairs with a contact of rec (sorted, at the list's margin) within the
 * margin of T: the nearest contact of a pair is its distance, except for two boxes (a clipped
 * point may lie farther than the boxes do) and a hollow sphere's inside, which are kept;
 * k->vlist then holds the velocities of T */
static void shortenList(cdContactCache *k, const cdScene *scene, const cdWorld *w, double T, const cdContactSet *rec) {
  double gT = cd_v3norm(scene->gravity) * T;
  for (int i = 0; i < k->nbody; i++) listVelocity(k, w, i, gT);
  int np = 0, j = 0;
  for (int p = 0; p < k->pairs.n; p++) {
    int a = k->pairs.ab[2 * p], b = k->pairs.ab[2 * p + 1];
    double gmin = INFINITY;
    while (j < rec->ncon && (rec->con[j].body[0] < a || (rec->con[j].body[0] == a && rec->con[j].body[1] < b))) j++;
    for (; j < rec->ncon && rec->con[j].body[0] == a && rec->con[j].body[1] == b; j++)
      if (rec->con[j].gap < gmin) gmin = rec->con[j].gap;
    double ub = cd_bodySpeedBound(&scene->body[b], &k->vlist[6 * b]), margin;
    int keep = scene->body[b].hollow;
    if (a < 0) {
      margin = cd_collideMargin(scene, 0, T, k->size[b]) + T * ub;
    } else {
      double s = k->size[a] < k->size[b] ? k->size[a] : k->size[b];
      margin = cd_collideMargin(scene, 0, T, s) + T * (cd_bodySpeedBound(&scene->body[a], &k->vlist[6 * a]) + ub);
      keep |= scene->body[a].hollow || (scene->body[a].shape == CD_BOX && scene->body[b].shape == CD_BOX);
    }
    if (!keep && !(gmin <= margin)) continue;
    k->pairs.ab[2 * np] = a;
    k->pairs.ab[2 * np + 1] = b;
    np++;
  }
  k->pairs.n = np;
}

int cd_contactCacheBegin(cdContactCache *k, cdCollider *c, const cdScene *scene, const cdWorld *w, double dt,
                         cdContactSet *rec, const cdContactSet *prev) {
  long *t = k->last;
  k->last = k->last_old;
  k->last_old = t;
  int st = listCollide(k, c, scene, w, dt, rec, &k->pairs);
  if (!st) st = reserveSlots(k, rec->ncon);
  if (!st) st = tableBuild(k, rec, rec->ncon);
  if (st) {
    cd_contactSetClear(rec); /* prev's substeps are gone: nothing to carry from it next time */
    return st;
  }
  /* the pairs the substeps see: those within the margin of the horizon, when it is shorter
   * than the step (a pair's nearest contact is at most its distance, or box-box's
   * separating-axis bound, so none is missed) */
  for (int i = 0; i < k->nbody; i++) k->speed[i] = cd_bodySpeedBound(&scene->body[i], &w->v[6 * i]);
  double T = horizon(k, dt, 0);
  if (T < dt) shortenList(k, scene, w, T, rec);
  if ((st = listChanged(k))) {
    cd_contactSetClear(rec);
    return st;
  }
  startCover(k, scene, T);
  k->listed = 1;
  k->sorted = 1;
  k->first_stamp = k->stamp + 1;
  /* both sorted by key: one merge pass; a contact present in the last substep carries */
  int j = 0;
  for (int i = 0; i < rec->ncon; i++) {
    cdContact *r = &rec->con[i];
    while (j < prev->ncon && cd_contactKeyCompare(&prev->con[j], r) < 0) j++;
    int carried = j < prev->ncon && cd_contactKeyCompare(&prev->con[j], r) == 0 && k->last_old[j] == k->stamp;
    if (carried) memcpy(r->state, prev->con[j].state, sizeof r->state);
    r->fresh = !carried;
    k->last[i] = carried ? k->stamp : -1;
    k->gap0[i] = r->gap;
    k->turned[i] = 0;
  }
  return CD_OK;
}

const cdContactSet *cd_contactCacheProbe(cdContactCache *k, cdCollider *c, const cdScene *scene, const cdWorld *w,
                                         double dt) {
  return listCollide(k, c, scene, w, dt, &k->scratch, &k->more) ? NULL : &k->scratch;
}

/* a full collision over the time horizon (at most CACHE_FULL_HORIZON substeps): its pairs are the list, and every body's cover
 * starts again. A pair no longer listed has no contact within the margin (its contacts are
 * simply not present; the record keeps them). */
static int recollide(cdContactCache *k, cdCollider *c, const cdScene *scene, const cdWorld *w, double h,
                     double remaining) {
  double T = horizon(k, CACHE_FULL_HORIZON * h < remaining ? CACHE_FULL_HORIZON * h : remaining, h);
  int st = listCollide(k, c, scene, w, T, &k->scratch, &k->more);
  if (st) return st;
  startCover(k, scene, T);
  cdPairList t = k->pairs;
  k->pairs = k->more;
  k->more = t;
  return listChanged(k);
}

/* The bodies k->outran[0 .. nout - 1] outran the list: their pairs anew against every other
 * body and the ground. An outrunner's cover starts again: T_i U_i, over the rest of the step
 * (at most the time in which it crosses its own size, at least the substep), U_i at speed
 * |v_i| + |g| T_i; every other body j keeps its own, and may still move cover_j - moved_j.
 * A pair (i, j) is listed when the narrow phase at the margin 1e-3 s + cover_i + (cover_j -
 * moved_j) gives a contact (or it has a hollow sphere); the bounding spheres rule out the
 * others first (they are at least as far apart). An unlisted pair is then farther apart than
 * that margin, which the per-body check keeps above the substep's: the guarantee of
 * contact_cache.h, pair by pair. */
static int recollideBodies(cdContactCache *k, const cdScene *scene, const cdWorld *w, double h, double remaining,
                           int nout) {
  double g = cd_v3norm(scene->gravity);
  for (int q = 0; q < nout; q++) {
    int i = k->outran[q];
    double T = remaining;
    if (k->speed[i] * T > k->size[i]) T = k->size[i] / k->speed[i] > h ? k->size[i] / k->speed[i] : h; /* horizon */
    listVelocity(k, w, i, g * T);
    k->cover[i] = T * cd_bodySpeedBound(&scene->body[i], &k->vlist[6 * i]);
    k->moved[i] = 0;
    k->is_out[i] = 1;
  }
  k->scratch.ncon = 0;
  k->more.n = 0;
  int st = CD_OK;
  for (int q = 0; q < nout && !st; q++) {
    int i = k->outran[q];
    const cdBodyDef *B = &scene->body[i];
    for (int j = 0; j < k->nbody && !st; j++) {
      if (j == i || (k->is_out[j] && j < i)) continue; /* an outrunner pair once */
      const cdBodyDef *J = &scene->body[j];
      double s = k->size[i] < k->size[j] ? k->size[i] : k->size[j];
      double reach = k->cover[i] + k->cover[j] - k->moved[j];
      double margin = cd_collideMargin(scene, 0, remaining, s) + reach;
      double d[3];
      cd_v3sub(d, &w->x[3 * j], &w->x[3 * i]);
      if (!(cd_v3norm(d) - k->radius[i] - k->radius[j] <= margin)) continue;
      int a = i < j ? i : j, b = i < j ? j : i, before = k->scratch.ncon;
      if ((st = cd_collidePair(scene, a, b, w->x, w->R, margin, &k->scratch))) break;
      if (k->scratch.ncon > before || B->hollow || J->hollow) st = cd_pairListPush(&k->more, a, b);
    }
    if (!st && scene->has_ground && !B->fixed) {
      int before = k->scratch.ncon;
      double margin = cd_collideMargin(scene, 0, remaining, k->size[i]) + k->cover[i];
      st = cd_collidePair(scene, -1, i, w->x, w->R, margin, &k->scratch);
      if (!st && k->scratch.ncon > before) st = cd_pairListPush(&k->more, -1, i);
    }
  }
  for (int q = 0; q < nout; q++) k->is_out[k->outran[q]] = 0;
  if (st) return st;
  cd_pairListSort(&k->more);
  if ((st = cd_pairListMerge(&k->pairs, &k->more))) return st;
  return listChanged(k);
}

/* ---- the substeps ---- */

/* rec's contact j takes the geometry of the same key now: normal n, point p, gap. Its frame
 * (t1, t2) waits for the end of the step (frameAtEnd); a normal that changed under != marks
 * it (a normal equal under != can differ at most in the signs of zeros: the frame of the one
 * stored stands). */
static inline void updateContact(cdContactCache *k, cdContact *r, int j, const double n[3], const double p[3],
                                 double gap) {
  if (r->normal[0] != n[0] || r->normal[1] != n[1] || r->normal[2] != n[2]) {
    cd_v3copy(r->normal, n);
    k->turned[j] = 1;
  }
  cd_v3copy(r->point, p);
  r->gap = gap;
}

/* s (a key rec does not have) appended to rec: no impulse, no state, its gap as gap0 */
static int appendContact(cdContactCache *k, cdContactSet *rec, const cdContact *s) {
  int st = reserveSlots(k, rec->ncon + 1);
  if (!st && 2 * (rec->ncon + 1) > k->table_cap) st = tableBuild(k, rec, rec->ncon + 1);
  if (st) return st;
  cdContact *e = cd_contactSetPush(rec);
  if (!e) return CD_ERR_NOMEM;
  *e = *s;
  int i = rec->ncon - 1;
  k->gap0[i] = s->gap;
  k->last[i] = -1;
  k->turned[i] = 0;
  tableInsert(k, rec, i);
  k->sorted = 0;
  return CD_OK;
}

/* the index in rec of the contact of key (a, b, 0, 0), found in the table, or appended from
 * its geometry now (n, p, gap), or -1 when memory runs out */
static int oneContactSlot(cdContactCache *k, cdContactSet *rec, int a, int b, const double n[3],
                          const double p[3], double gap) {
  cdContact s;
  memset(&s, 0, sizeof s);
  s.body[0] = a;
  s.body[1] = b;
  int j = tableFind(k, rec, &s);
  if (j >= 0) return j;
  cd_v3copy(s.point, p);
  cd_v3copy(s.normal, n);
  cd_tangentFrame(s.normal, s.t1, s.t2);
  s.gap = gap;
  return appendContact(k, rec, &s) ? -1 : rec->ncon - 1;
}

/* rec's contact j is present in this substep: the n-th of its contacts */
static void markLive(cdContactCache *k, cdContactSet *rec, int j, int n) {
  rec->con[j].fresh = k->last[j] != k->stamp - 1;
  k->last[j] = k->stamp;
  k->live[n] = j;
}

int cd_contactCacheSubstep(cdContactCache *k, cdCollider *c, const cdScene *scene, const cdWorld *w, double h,
                           double remaining, cdContactSet *rec, const int **live, int *nlive) {
  k->stamp++;
  /* the guarantee (contact_cache.h): every body within what the list covers; a few bodies
   * beyond it get their own pairs anew, many a full collision */
  int nout = 0;
  for (int i = 0; i < k->nbody; i++) {
    double u = cd_speedBound(&w->v[6 * i], k->radius[i]);
    k->speed[i] = u;
    if (!k->listed) k->moved[i] += k->h * u;
    if (k->moved[i] + h * u > k->cover[i]) k->outran[nout++] = i;
  }
  int st;
  if (nout > 0) {
    k->recollisions++;
    st = nout > CACHE_LOCAL_MAX ? recollide(k, c, scene, w, h, remaining)
                                : recollideBodies(k, scene, w, h, remaining, nout);
    if (st) return st;
  }
  k->h = h;
  k->listed = 0; /* this substep's motion counts at the next */

  /* the narrow phase of each listed pair at the margin of the substep: the substep's
   * contacts, pair by pair in key order */
  int n = 0;
  const double *x = w->x;
  for (int p = 0; p < k->pairs.n; p++) {
    int a = k->pairs.ab[2 * p], b = k->pairs.ab[2 * p + 1];
    double margin;
    if (a < 0) {
      margin = cd_collideMargin(scene, k->speed[b], h, k->size[b]);
    } else {
      double s = k->size[a] < k->size[b] ? k->size[a] : k->size[b];
      margin = cd_collideMargin(scene, k->speed[a] + k->speed[b], h, s);
    }
    if (k->kind[p] != PAIR_OTHER) {
      static const double up[3] = {0, 0, 1};
      double nrm[3], pt[3], gap;
      const double *nv = up;
      if (k->kind[p] == PAIR_SPHERE_GROUND) {
        if (!cd_sphereGroundGeometry(&x[3 * b], k->radius[b], scene->ground_height, margin, pt, &gap)) continue;
      } else {
        if (!cd_sphereSphereGeometry(&x[3 * a], k->radius[a], &x[3 * b], k->radius[b], margin, nrm, pt, &gap))
          continue;
        nv = nrm;
      }
      int j = k->slot[p];
      if (j < 0 && (j = k->slot[p] = oneContactSlot(k, rec, a, b, nv, pt, gap)) < 0) return CD_ERR_NOMEM;
      updateContact(k, &rec->con[j], j, nv, pt, gap);
      markLive(k, rec, j, n++);
      continue;
    }
    k->scratch.ncon = 0;
    if ((st = cd_collidePair(scene, a, b, x, w->R, margin, &k->scratch))) return st;
    for (int q = 0; q < k->scratch.ncon; q++) {
      const cdContact *s = &k->scratch.con[q];
      int j = tableFind(k, rec, s);
      if (j < 0) {
        if ((st = appendContact(k, rec, s))) return st;
        j = rec->ncon - 1;
      }
      updateContact(k, &rec->con[j], j, s->normal, s->point, s->gap);
      markLive(k, rec, j, n++);
    }
  }
  *live = k->live;
  *nlive = n;
  return CD_OK;
}

/* ---- the end of the step ---- */

/* order[0 .. n - 1] sorted by the keys of rec (a merge sort; tmp holds n) */
static void sortByKey(const cdContactSet *rec, int *order, int *tmp, int n) {
  for (int width = 1; width < n; width *= 2) {
    for (int lo = 0; lo < n; lo += 2 * width) {
      int mid = lo + width < n ? lo + width : n, hi = lo + 2 * width < n ? lo + 2 * width : n;
      int i = lo, j = mid, o = lo;
      while (i < mid || j < hi) {
        if (j == hi || (i < mid && cd_contactKeyCompare(&rec->con[order[i]], &rec->con[order[j]]) <= 0))
          tmp[o++] = order[i++];
        else
          tmp[o++] = order[j++];
      }
    }
    memcpy(order, tmp, (size_t)n * sizeof *order);
  }
}

/* a contact's frame from its last normal when that turned in the step (cd_tangentFrame, as
 * the narrow phase makes it: the frame is a function of the normal), and its impulse, summed
 * in world coordinates over the substeps, in that frame */
static void frameAtEnd(cdContact *r, int turned) {
  if (turned) cd_tangentFrame(r->normal, r->t1, r->t2);
  double J[3];
  cd_v3copy(J, r->lambda);
  r->lambda[0] = cd_v3dot(J, r->normal);
  r->lambda[1] = cd_v3dot(J, r->t1);
  r->lambda[2] = cd_v3dot(J, r->t2);
}

int cd_contactCacheEnd(cdContactCache *k, cdContactSet *rec) {
  /* the contacts present in some substep, in their last frame, with the gap of the start of
   * the step */
  int m = 0;
  for (int j = 0; j < rec->ncon; j++) {
    if (k->last[j] < k->first_stamp) continue;
    frameAtEnd(&rec->con[j], k->turned[j]);
    if (m != j) rec->con[m] = rec->con[j];
    rec->con[m].gap = k->gap0[j];
    k->last[m] = k->last[j];
    m++;
  }
  rec->ncon = m;
  if (k->sorted) return CD_OK;
  /* a key was appended: the record in key order again (into spare, then swapped) */
  int *order = k->live;
  for (int j = 0; j < m; j++) order[j] = j;
  sortByKey(rec, order, k->order_tmp, m);
  cd_contactSetClear(&k->spare);
  for (int j = 0; j < m; j++) {
    cdContact *d = cd_contactSetPush(&k->spare);
    if (!d) return CD_ERR_NOMEM;
    *d = rec->con[order[j]];
    k->order_tmp[j] = k->last[order[j]] == k->stamp; /* present at the last substep */
  }
  for (int j = 0; j < m; j++) k->last[j] = k->order_tmp[j] ? k->stamp : -1;
  cdContactSet t = *rec;
  *rec = k->spare;
  k->spare = t;
  return CD_OK;
}
