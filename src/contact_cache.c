/* contact_cache.c: see contact_cache.h (the Verlet list, its guarantee, the record). */
#include "contact_cache.h"

#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "backend.h"
#include "broadphase.h"
#include "vec3.h"
#include "world.h"

/* the most bodies that outrun the list at one substep that get their pairs anew one by one
 * (each against every body: O(nbody) each); more get a full collision */
#define CACHE_LOCAL_MAX 32

/* bits of a record contact's flag */
enum {
  CACHE_NOW = 1,  /* present in the latest substep (after cd_contactCacheEnd: the last one) */
  CACHE_PREV = 2, /* present in the substep before (while a substep updates its pair) */
  CACHE_SEEN = 4  /* present in some substep of this step */
};

struct cdContactCache {
  int nbody;
  /* the Verlet list */
  cdPairList pairs;     /* listed pairs, sorted by (a, b) */
  cdPairList more;      /* a re-collision's pairs */
  int *first;           /* (first_cap) rec->con[first[p] .. first[p + 1] - 1] are pair p's contacts */
  int first_cap;
  double *size;         /* (nbody) cd_bodySizeScale, m */
  double *speed;        /* (nbody) present speed bound u_i, m/s */
  double *cover;        /* (nbody) T U_i: how far body i may move while the list holds, m */
  double *moved;        /* (nbody) D_i: how far it has moved since the list was made, m */
  double *vlist;        /* (nbody x 6) the velocities of the list's margin, m/s, rad/s */
  double *radius;       /* (nbody) cd_bodyBoundingRadius, m */
  int *outran;          /* (nbody) the bodies beyond their cover at this substep */
  unsigned char *is_out; /* (nbody) 1 for those */
  double h;             /* the substep of the last cd_contactCacheSubstep, s */
  int listed;           /* 1 while no substep has moved the bodies since the list was made */
  long recollisions;
  /* the record's bookkeeping, parallel to rec->con */
  int slot_cap;
  double *gap0;         /* (slot_cap) the gap at the start of the step (contact_cache.h), m */
  unsigned char *flag;  /* (slot_cap) CACHE_ bits */
  unsigned char *flag_old; /* (slot_cap) the flags of the record before, at cd_contactCacheBegin */
  int *live;            /* (slot_cap) this substep's contacts */
  double *spare_gap0;   /* (slot_cap) merge buffers */
  unsigned char *spare_flag;
  cdContactSet spare;
  cdContactSet scratch; /* one pair's narrow phase; a full collision */
  cdContactSet extra;   /* contacts of keys rec does not have */
};

void cd_contactCacheFree(cdContactCache *k) {
  if (!k) return;
  cd_free(k->pairs.ab);
  cd_free(k->more.ab);
  cd_free(k->first);
  cd_free(k->size);
  cd_free(k->speed);
  cd_free(k->cover);
  cd_free(k->moved);
  cd_free(k->vlist);
  cd_free(k->radius);
  cd_free(k->outran);
  cd_free(k->is_out);
  cd_free(k->gap0);
  cd_free(k->flag);
  cd_free(k->flag_old);
  cd_free(k->live);
  cd_free(k->spare_gap0);
  cd_free(k->spare_flag);
  cd_contactSetFree(&k->spare);
  cd_contactSetFree(&k->scratch);
  cd_contactSetFree(&k->extra);
  cd_free(k);
}

cdContactCache *cd_contactCacheMake(const cdScene *scene) {
  cdContactCache *k = cd_calloc(1, sizeof *k);
  if (!k) return NULL;
  size_t nb = (size_t)(scene->nbody > 0 ? scene->nbody : 1);
  k->nbody = scene->nbody;
  k->size = cd_calloc(nb, sizeof *k->size);
  k->speed = cd_calloc(nb, sizeof *k->speed);
  k->cover = cd_calloc(nb, sizeof *k->cover);
  k->moved = cd_calloc(nb, sizeof *k->moved);
  k->vlist = cd_calloc(6 * nb, sizeof *k->vlist);
  k->radius = cd_calloc(nb, sizeof *k->radius);
  k->outran = cd_calloc(nb, sizeof *k->outran);
  k->is_out = cd_calloc(nb, sizeof *k->is_out);
  if (!k->size || !k->speed || !k->cover || !k->moved || !k->vlist || !k->radius || !k->outran || !k->is_out) {
    cd_contactCacheFree(k);
    return NULL;
  }
  for (int i = 0; i < scene->nbody; i++) {
    k->size[i] = cd_bodySizeScale(&scene->body[i]);
    k->radius[i] = cd_bodyBoundingRadius(&scene->body[i]);
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
  double *sg = cd_realloc(k->spare_gap0, m * sizeof *sg);
  if (sg) k->spare_gap0 = sg;
  unsigned char *f = cd_realloc(k->flag, m), *fo = f ? cd_realloc(k->flag_old, m) : NULL;
  if (f) k->flag = f;
  if (fo) k->flag_old = fo;
  unsigned char *sf = cd_realloc(k->spare_flag, m);
  if (sf) k->spare_flag = sf;
  int *l = cd_realloc(k->live, m * sizeof *l);
  if (l) k->live = l;
  if (!g || !sg || !f || !fo || !sf || !l) return CD_ERR_NOMEM;
  k->slot_cap = cap;
  return CD_OK;
}

/* first[] from the listed pairs and rec (both sorted by (a, b)): every contact of rec
 * belongs to a listed pair */
static int findRanges(cdContactCache *k, const cdContactSet *rec) {
  if (k->pairs.n + 1 > k->first_cap) {
    int cap = k->pairs.n + 1 > 2 * k->first_cap ? k->pairs.n + 1 : 2 * k->first_cap;
    int *f = cd_realloc(k->first, (size_t)cap * sizeof *f);
    if (!f) return CD_ERR_NOMEM;
    k->first = f;
    k->first_cap = cap;
  }
  int j = 0;
  for (int p = 0; p < k->pairs.n; p++) {
    int a = k->pairs.ab[2 * p], b = k->pairs.ab[2 * p + 1];
    while (j < rec->ncon && (rec->con[j].body[0] < a || (rec->con[j].body[0] == a && rec->con[j].body[1] < b)))
      j++;
    k->first[p] = j;
  }
  k->first[k->pairs.n] = rec->ncon;
  return CD_OK;
}

/* a full collision at the state of w over the time T into out, its pairs into pairs: the
 * margin of the whole of T at speeds |v| + |g| T (a body at rest: |g| T along x) */
static void listVelocity(cdContactCache *k, const cdWorld *w, int i, double gT) {
  double *v = &k->vlist[6 * i];
  memcpy(v, &w->v[6 * i], 6 * sizeof *v);
  double s = cd_v3norm(v);
  if (s > 0)
    cd_v3scale(v, v, (s + gT) / s);
  else
    v[0] = gT;
}

static int listCollide(cdContactCache *k, cdCollider *c, const cdScene *scene, const cdWorld *w, double T,
                       cdContactSet *out, cdPairList *pairs) {
  double gT = cd_v3norm(scene->gravity) * T;
  for (int i = 0; i < w->nbody; i++) listVelocity(k, w, i, gT);
  return cd_collideList(c, scene, w->x, w->R, k->vlist, T, out, pairs);
}

/* the list just made over T holds until body i has moved T U_i */
static void startCover(cdContactCache *k, const cdScene *scene, double T) {
  for (int i = 0; i < k->nbody; i++) {
    k->cover[i] = T * cd_bodySpeedBound(&scene->body[i], &k->vlist[6 * i]);
    k->moved[i] = 0;
  }
  k->listed = 1;
}

int cd_contactCacheBegin(cdContactCache *k, cdCollider *c, const cdScene *scene, const cdWorld *w, double dt,
                         cdContactSet *rec, const cdContactSet *prev) {
  unsigned char *t = k->flag;
  k->flag = k->flag_old;
  k->flag_old = t;
  int st = listCollide(k, c, scene, w, dt, rec, &k->pairs);
  if (!st) st = reserveSlots(k, rec->ncon);
  if (!st) st = findRanges(k, rec);
  if (st) {
    cd_contactSetClear(rec); /* prev's flags are gone: nothing to carry from it next time */
    return st;
  }
  startCover(k, scene, dt);
  /* both sorted by key: one merge pass */
  int j = 0;
  for (int i = 0; i < rec->ncon; i++) {
    cdContact *r = &rec->con[i];
    while (j < prev->ncon && cd_contactKeyCompare(&prev->con[j], r) < 0) j++;
    int carried = j < prev->ncon && cd_contactKeyCompare(&prev->con[j], r) == 0 && (k->flag_old[j] & CACHE_NOW);
    if (carried) memcpy(r->state, prev->con[j].state, sizeof r->state);
    r->fresh = !carried;
    k->flag[i] = carried ? CACHE_NOW : 0;
    k->gap0[i] = r->gap;
  }
  return CD_OK;
}

const cdContactSet *cd_contactCacheProbe(cdContactCache *k, cdCollider *c, const cdScene *scene, const cdWorld *w,
                                         double dt) {
  return listCollide(k, c, scene, w, dt, &k->scratch, &k->more) ? NULL : &k->scratch;
}

/* rec <- rec and add merged by key (add sorted, none of its keys in rec), add's contacts
 * with the flag given and their own gap as gap0 */
static int mergeIntoRecord(cdContactCache *k, cdContactSet *rec, const cdContactSet *add, unsigned char flag) {
  int n = rec->ncon + add->ncon, st = reserveSlots(k, n);
  if (st) return st;
  cd_contactSetClear(&k->spare);
  int i = 0, j = 0;
  while (i < rec->ncon || j < add->ncon) {
    int from_rec = j == add->ncon || (i < rec->ncon && cd_contactKeyCompare(&rec->con[i], &add->con[j]) < 0);
    cdContact *d = cd_contactSetPush(&k->spare);
    if (!d) return CD_ERR_NOMEM;
    int m = k->spare.ncon - 1;
    if (from_rec) {
      *d = rec->con[i];
      k->spare_gap0[m] = k->gap0[i];
      k->spare_flag[m] = k->flag[i];
      i++;
    } else {
      *d = add->con[j];
      k->spare_gap0[m] = add->con[j].gap;
      k->spare_flag[m] = flag;
      j++;
    }
  }
  cdContactSet ts = *rec;
  *rec = k->spare;
  k->spare = ts;
  double *tg = k->gap0;
  k->gap0 = k->spare_gap0;
  k->spare_gap0 = tg;
  unsigned char *tf = k->flag;
  k->flag = k->spare_flag;
  k->spare_flag = tf;
  return CD_OK;
}

/* the keys of the collision in k->scratch (sorted) that rec lacks join it, present in no
 * substep yet; then the pair ranges */
static int addKeys(cdContactCache *k, cdContactSet *rec) {
  cd_contactSetClear(&k->extra);
  int j = 0, st;
  for (int i = 0; i < k->scratch.ncon; i++) {
    const cdContact *s = &k->scratch.con[i];
    while (j < rec->ncon && cd_contactKeyCompare(&rec->con[j], s) < 0) j++;
    if (j < rec->ncon && cd_contactKeyCompare(&rec->con[j], s) == 0) continue;
    cdContact *e = cd_contactSetPush(&k->extra);
    if (!e) return CD_ERR_NOMEM;
    *e = *s;
    e->fresh = 1;
  }
  if (k->extra.ncon > 0 && (st = mergeIntoRecord(k, rec, &k->extra, 0))) return st;
  return findRanges(k, rec);
}

/* a full collision over the rest of the step T: its pairs join the list, its keys the
 * record, and every body's cover starts again */
static int recollide(cdContactCache *k, cdCollider *c, const cdScene *scene, const cdWorld *w, double T,
                     cdContactSet *rec) {
  int st = listCollide(k, c, scene, w, T, &k->scratch, &k->more);
  if (st) return st;
  startCover(k, scene, T);
  if ((st = cd_pairListMerge(&k->pairs, &k->more))) return st;
  return addKeys(k, rec);
}

/* The bodies k->outran[0 .. nout - 1] outran the list: their pairs anew over the rest of the
 * step T, against every other body and the ground. An outrunner's cover starts again (T U_i,
 * U_i at speed |v_i| + |g| T); every other body j keeps its own, and may still move
 * cover_j - moved_j. A pair (i, j) is listed when the narrow phase at the margin
 * 1e-3 s + T U_i + (cover_j - moved_j) gives a contact (or it has a hollow sphere); the
 * bounding spheres rule out the others first (they are at least as far apart). An unlisted
 * pair is then farther apart than that margin, which the per-body check keeps above the
 * substep's: the guarantee of contact_cache.h, pair by pair. */
static int recollideBodies(cdContactCache *k, const cdScene *scene, const cdWorld *w, double T, int nout,
                           cdContactSet *rec) {
  double gT = cd_v3norm(scene->gravity) * T;
  for (int q = 0; q < nout; q++) {
    int i = k->outran[q];
    listVelocity(k, w, i, gT);
    k->cover[i] = T * cd_bodySpeedBound(&scene->body[i], &k->vlist[6 * i]);
    k->moved[i] = 0;
    k->is_out[i] = 1;
  }
  cd_contactSetClear(&k->scratch);
  k->more.n = 0;
  int st = CD_OK;
  for (int q = 0; q < nout && !st; q++) {
    int i = k->outran[q];
    const cdBodyDef *B = &scene->body[i];
    for (int j = 0; j < k->nbody && !st; j++) {
      if (j == i || (k->is_out[j] && j < i)) continue; /* an outrunner pair once */
      const cdBodyDef *J = &scene->body[j];
      double s = k->size[i] < k->size[j] ? k->size[i] : k->size[j];
      double margin = cd_collideMargin((k->cover[i] + k->cover[j] - k->moved[j]) / T, T, s);
      double d[3];
      cd_v3sub(d, &w->x[3 * j], &w->x[3 * i]);
      if (!(cd_v3norm(d) - k->radius[i] - k->radius[j] <= margin)) continue;
      int a = i < j ? i : j, b = i < j ? j : i, before = k->scratch.ncon;
      if ((st = cd_collidePair(scene, a, b, w->x, w->R, margin, &k->scratch))) break;
      if (k->scratch.ncon > before || B->hollow || J->hollow) st = cd_pairListPush(&k->more, a, b);
    }
    if (!st && scene->has_ground && !B->fixed) {
      int before = k->scratch.ncon;
      st = cd_collidePair(scene, -1, i, w->x, w->R, cd_collideMargin(k->cover[i] / T, T, k->size[i]), &k->scratch);
      if (!st && k->scratch.ncon > before) st = cd_pairListPush(&k->more, -1, i);
    }
  }
  for (int q = 0; q < nout; q++) k->is_out[k->outran[q]] = 0;
  if (st) return st;
  cd_pairListSort(&k->more);
  cd_contactSetSort(&k->scratch);
  if ((st = cd_pairListMerge(&k->pairs, &k->more))) return st;
  return addKeys(k, rec);
}

/* r takes the geometry of s (the same key, now); the impulse summed so far is carried into
 * the new frame when the frame turned */
static void updateContact(cdContact *r, const cdContact *s) {
  if (r->normal[0] != s->normal[0] || r->normal[1] != s->normal[1] || r->normal[2] != s->normal[2] ||
      r->t1[0] != s->t1[0] || r->t1[1] != s->t1[1] || r->t1[2] != s->t1[2]) {
    double J[3];
    cd_v3scale(J, r->normal, r->lambda[0]);
    cd_v3addScaled(J, J, r->t1, r->lambda[1]);
    cd_v3addScaled(J, J, r->t2, r->lambda[2]);
    r->lambda[0] = cd_v3dot(J, s->normal);
    r->lambda[1] = cd_v3dot(J, s->t1);
    r->lambda[2] = cd_v3dot(J, s->t2);
    cd_v3copy(r->normal, s->normal);
    cd_v3copy(r->t1, s->t1);
    cd_v3copy(r->t2, s->t2);
  }
  cd_v3copy(r->point, s->point);
  r->gap = s->gap;
}

int cd_contactCacheSubstep(cdContactCache *k, cdCollider *c, const cdScene *scene, const cdWorld *w, double h,
                           double remaining, cdContactSet *rec, const int **live, int *nlive) {
  /* the guarantee (contact_cache.h): every body within what the list covers; a few bodies
   * beyond it get their own pairs anew, many a full collision */
  int nout = 0;
  for (int i = 0; i < k->nbody; i++) {
    double u = cd_bodySpeedBound(&scene->body[i], &w->v[6 * i]);
    k->speed[i] = u;
    if (!k->listed) k->moved[i] += k->h * u;
    if (k->moved[i] + h * u > k->cover[i]) k->outran[nout++] = i;
  }
  int st;
  if (nout > 0) {
    k->recollisions++;
    st = nout > CACHE_LOCAL_MAX ? recollide(k, c, scene, w, remaining, rec)
                                : recollideBodies(k, scene, w, remaining, nout, rec);
    if (st) return st;
  }
  k->h = h;
  k->listed = 0; /* this substep's motion counts at the next */

  /* the narrow phase of each listed pair at the margin of the substep */
  cd_contactSetClear(&k->extra);
  for (int p = 0; p < k->pairs.n; p++) {
    int a = k->pairs.ab[2 * p], b = k->pairs.ab[2 * p + 1];
    double margin;
    if (a < 0) {
      margin = cd_collideMargin(k->speed[b], h, k->size[b]);
    } else {
      double s = k->size[a] < k->size[b] ? k->size[a] : k->size[b];
      margin = cd_collideMargin(k->speed[a] + k->speed[b], h, s);
    }
    cd_contactSetClear(&k->scratch);
    if ((st = cd_collidePair(scene, a, b, w->x, w->R, margin, &k->scratch))) return st;
    int f = k->first[p], l = k->first[p + 1];
    for (int j = f; j < l; j++)
      k->flag[j] = (unsigned char)((k->flag[j] & CACHE_SEEN) | (k->flag[j] & CACHE_NOW ? CACHE_PREV : 0));
    for (int q = 0; q < k->scratch.ncon; q++) {
      const cdContact *s = &k->scratch.con[q];
      int j = f;
      while (j < l && (rec->con[j].feature[0] != s->feature[0] || rec->con[j].feature[1] != s->feature[1] ||
                       (k->flag[j] & CACHE_NOW)))
        j++;
      if (j < l) {
        updateContact(&rec->con[j], s);
        rec->con[j].fresh = !(k->flag[j] & CACHE_PREV);
        k->flag[j] |= CACHE_NOW | CACHE_SEEN;
        continue;
      }
      cdContact *e = cd_contactSetPush(&k->extra);
      if (!e) return CD_ERR_NOMEM;
      *e = *s;
      e->fresh = 1;
    }
  }
  if (k->extra.ncon > 0) {
    cd_contactSetSort(&k->extra);
    if ((st = mergeIntoRecord(k, rec, &k->extra, CACHE_NOW | CACHE_SEEN)) || (st = findRanges(k, rec))) return st;
  }

  int n = 0;
  for (int j = 0; j < rec->ncon; j++)
    if (k->flag[j] & CACHE_NOW) k->live[n++] = j;
  *live = k->live;
  *nlive = n;
  return CD_OK;
}

void cd_contactCacheEnd(cdContactCache *k, cdContactSet *rec) {
  int m = 0;
  for (int j = 0; j < rec->ncon; j++) {
    if (!(k->flag[j] & CACHE_SEEN)) continue;
    if (m != j) rec->con[m] = rec->con[j];
    rec->con[m].gap = k->gap0[j];
    k->flag[m] = k->flag[j];
    m++;
  }
  rec->ncon = m;
}
