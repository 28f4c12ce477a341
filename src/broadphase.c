/* broadphase.c: candidate pairs by a hierarchical uniform hash grid.
 *
 * Why a grid of levels rather than sort-and-sweep: a sweep on one axis costs O(n log n) plus
 * the pairs that overlap on that axis alone, which for a pile spread in the plane grows like
 * n^1.5 (each body meets the whole slab it sits in); a single uniform grid is O(n) for bodies
 * of one size but degrades with mixed sizes (a big body covers many cells, or small ones
 * share cells). The levels fix that: level l has cubic cells of side c_l = c0 2^l, c0 the
 * smallest box extent of the step, and each box lives in the lowest level whose cell side is
 * at least its largest extent. Cells are keyed (level, ix, iy, iz) in one open-addressing
 * hash table built each step in two passes (count, then fill in body order, so every cell
 * lists its bodies ascending), and each box is listed once, in the cell of its lowest corner.
 *
 * Query: body i looks at its own level and every non-empty coarser level l. A box j of level
 * l that overlaps box i has its lowest corner at most i's highest corner, and at least i's
 * lowest corner minus j's extent, which is at most the cell side c_l: per axis the cells
 * from that of (lo_i - c_l) to that of hi_i (2 or 3 cells) list every such j, once. Same
 * level pairs are taken from the lower index only, pairs across levels from the finer body:
 * each overlapping pair is reported exactly once, with no dedup pass. (Listing each box in
 * every cell it covers, up to 8, and reporting a pair in the cell of the corner of the two
 * boxes' intersection, which this replaced, scanned about 100 listed boxes a body on a pile
 * of spheres: each cell held the boxes of its neighbours' too; now about 30.) The cost is
 * O(n L + pairs), L the number of non-empty levels (a few for real scenes: it grows like
 * log2 of the size ratio), hence expected linear for piles; n bodies at one point give the
 * n^2/2 pairs they must.
 *
 * Cell indices are floor(coordinate * (1 / c_l)) clamped to +-2^62: monotone in the
 * coordinate, so listing and query stay consistent even for far-away bodies (the same
 * function everywhere; 1 / c_l is exact, c_l being c0 times a power of two); the query's
 * lower corner lo_i - c_l is taken lower by (|lo_i| + c_l) 2^-50, more than the rounding of
 * the subtraction and of the extent a box's level was chosen by.
 *
 * Output order: the pairs are sorted by (a, b) (a counting sort by a, then each a's few b's
 * by insertion), so that collision emits its contacts already in key order (collide.c).
 */
#include "broadphase.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "alloc.h"
#include "backend.h"
#include "vec3.h"

typedef struct {
  int64_t ix, iy, iz;
  int level; /* -1: empty slot */
  int start, count;
} Cell;

struct cdBroadphase {
  int nbody_cap;
  int *level;      /* (nbody_cap) level of each box, -1 when not in the grid */
  int64_t *cellof; /* (nbody_cap x 3) the cell of each box's lowest corner in its level */
  int *first;      /* (nbody_cap + 1) the counting sort of the pairs by their first body; before
                      it, each box's cell slot while the lists are filled */
  int *nlevel_use; /* (level_cap) bodies per level */
  int level_cap;
  Cell *cell;      /* (cell_cap) hash table, cell_cap a power of two */
  size_t cell_cap;
  int *list;       /* (list_cap) bodies of each cell, cell by cell */
  size_t list_cap;
  int *fill;       /* (cell_cap) fill cursor per cell */
  int *pair;       /* (pair_cap x 2) */
  size_t pair_cap;
};

cdBroadphase *cd_broadphaseMake(int nbody) {
  cdBroadphase *bp = cd_calloc(1, sizeof *bp);
  if (!bp) return NULL;
  bp->nbody_cap = nbody > 0 ? nbody : 1;
  bp->level = cd_malloc((size_t)bp->nbody_cap * sizeof *bp->level);
  bp->cellof = cd_malloc((size_t)bp->nbody_cap * 3 * sizeof *bp->cellof);
  bp->first = cd_malloc(((size_t)bp->nbody_cap + 1) * sizeof *bp->first);
  if (!bp->level || !bp->cellof || !bp->first) {
    cd_broadphaseFree(bp);
    return NULL;
  }
  return bp;
}

void cd_broadphaseFree(cdBroadphase *bp) {
  if (!bp) return;
  cd_free(bp->level);
  cd_free(bp->cellof);
  cd_free(bp->first);
  cd_free(bp->nlevel_use);
  cd_free(bp->cell);
  cd_free(bp->list);
  cd_free(bp->fill);
  cd_free(bp->pair);
  cd_free(bp);
}

double cd_bodySizeScale(const cdBodyDef *b) {
  if (b->shape == CD_SPHERE) return b->radius;
  double s = b->half[0];
  if (b->half[1] < s) s = b->half[1];
  if (b->half[2] < s) s = b->half[2];
  return s;
}

double cd_bodySpeedBound(const cdBodyDef *b, const double v6[6]) {
  if (!v6) return 0;
  return cd_speedBound(v6, cd_bodyBoundingRadius(b));
}

void cd_broadphaseBounds(const cdBodyDef *b, const double x[3], const double R[9], double share, double aabb[6]) {
  double e[3];
  if (b->shape == CD_SPHERE) {
    cd_v3set(e, b->radius, b->radius, b->radius);
  } else {
    for (int i = 0; i < 3; i++)
      e[i] = fabs(R[3 * i]) * b->half[0] + fabs(R[3 * i + 1]) * b->half[1] + fabs(R[3 * i + 2]) * b->half[2];
  }
  for (int i = 0; i < 3; i++) {
    aabb[i] = x[i] - e[i] - share;
    aabb[3 + i] = x[i] + e[i] + share;
  }
}

/* floor(x inv), clamped: inline (no call to floor) and a multiplication, not a division */
static inline int64_t cellIndex(double x, double inv) {
  double t = x * inv;
  const double lim = 4611686018427387904.0; /* 2^62 */
  if (t > lim) t = lim;
  if (t < -lim) t = -lim;
  int64_t i = (int64_t)t;
  return i - (t < (double)i);
}

static size_t cellHash(int level, int64_t ix, int64_t iy, int64_t iz) {
  uint64_t h = (uint64_t)level * 0x9E3779B97F4A7C15ull;
  h ^= (uint64_t)ix * 0xC2B2AE3D27D4EB4Full;
  h = (h << 31) | (h >> 33);
  h ^= (uint64_t)iy * 0x165667B19E3779F9ull;
  h = (h << 29) | (h >> 35);
  h ^= (uint64_t)iz * 0x27D4EB2F165667C5ull;
  h ^= h >> 32;
  return (size_t)h;
}

/* the slot of cell (level, ix, iy, iz): its own, or the empty slot where it would go */
static size_t cellFind(const cdBroadphase *bp, int level, int64_t ix, int64_t iy, int64_t iz) {
  size_t mask = bp->cell_cap - 1, s = cellHash(level, ix, iy, iz) & mask;
  for (;;) {
    const Cell *c = &bp->cell[s];
    if (c->level < 0 || (c->level == level && c->ix == ix && c->iy == iy && c->iz == iz)) return s;
    s = (s + 1) & mask;
  }
}

static int boxFinite(const double *b) {
  for (int k = 0; k < 6; k++)
    if (!isfinite(b[k])) return 0;
  return 1;
}

/* the lowest level whose cell side c0 2^l is at least ext */
static int levelOf(double ext, double c0) {
  int e;
  frexp(ext / c0, &e);
  int l = e > 0 ? e : 0;
  while (l > 0 && ldexp(c0, l - 1) >= ext) l--;
  while (ldexp(c0, l) < ext) l++;
  return l;
}

/* room for need pairs, and as many again for the sort (pair holds 2 pair_cap x 2 ints) */
static int growPairs(cdBroadphase *bp, size_t need) {
  if (need <= bp->pair_cap) return CD_OK;
  size_t cap = bp->pair_cap ? bp->pair_cap : 1024;
  while (cap < need) cap *= 2;
  int *p = cd_realloc(bp->pair, cap * 4 * sizeof *p);
  if (!p) return CD_ERR_NOMEM;
  bp->pair = p;
  bp->pair_cap = cap;
  return CD_OK;
}

/* the np pairs of bp->pair sorted by (a, b) into the second half of the buffer; returns it */
static const int *sortPairs(cdBroadphase *bp, int n, size_t np) {
  if (np == 0) return bp->pair; /* possibly NULL: no arithmetic on it */
  int *in = bp->pair, *out = bp->pair + 2 * bp->pair_cap, *first = bp->first;
  memset(first, 0, ((size_t)n + 1) * sizeof *first);
  for (size_t k = 0; k < np; k++) first[in[2 * k] + 1]++;
  for (int i = 0; i < n; i++) first[i + 1] += first[i];
  for (size_t k = 0; k < np; k++) {
    int a = in[2 * k], at = first[a]++;
    out[2 * at] = a;
    out[2 * at + 1] = in[2 * k + 1];
  }
  /* first[i] is now the end of a = i's run; each run by b, by insertion (runs are short) */
  int start = 0;
  for (int i = 0; i < n; i++) {
    int end = first[i];
    for (int k = start + 1; k < end; k++) {
      int b = out[2 * k + 1], m = k - 1;
      while (m >= start && out[2 * m + 1] > b) {
        out[2 * (m + 1) + 1] = out[2 * m + 1];
        m--;
      }
      out[2 * (m + 1) + 1] = b;
    }
    start = end;
  }
  return out;
}

int cd_broadphasePairs(cdBroadphase *bp, int n, const double *aabb, const int *fixed, int *npair,
                       const int **pairs) {
  *npair = 0;
  *pairs = bp->pair;
  if (n > bp->nbody_cap) {
    int *l = cd_realloc(bp->level, (size_t)n * sizeof *l);
    if (!l) return CD_ERR_NOMEM;
    bp->level = l;
    int64_t *r = cd_realloc(bp->cellof, (size_t)n * 3 * sizeof *r);
    if (!r) return CD_ERR_NOMEM;
    bp->cellof = r;
    int *f = cd_realloc(bp->first, ((size_t)n + 1) * sizeof *f);
    if (!f) return CD_ERR_NOMEM;
    bp->first = f;
    bp->nbody_cap = n;
  }

  /* the base cell side: the smallest extent of a finite box */
  double c0 = INFINITY;
  for (int i = 0; i < n; i++) {
    const double *b = &aabb[6 * i];
    if (!boxFinite(b)) continue;
    for (int k = 0; k < 3; k++) {
      double e = b[3 + k] - b[k];
      if (e > 0 && e < c0) c0 = e;
    }
  }
  if (!(c0 < INFINITY)) c0 = 1; /* no finite box, or only points */

  /* levels, and the cell of each box's lowest corner in its level */
  int maxlevel = -1;
  size_t nentry = 0;
  for (int i = 0; i < n; i++) {
    const double *b = &aabb[6 * i];
    bp->level[i] = -1;
    if (!boxFinite(b)) continue;
    double ext = 0;
    for (int k = 0; k < 3; k++)
      if (b[3 + k] - b[k] > ext) ext = b[3 + k] - b[k];
    int l = levelOf(ext, c0);
    bp->level[i] = l;
    if (l > maxlevel) maxlevel = l;
    double inv = ldexp(1.0 / c0, -l);
    for (int k = 0; k < 3; k++) bp->cellof[3 * (size_t)i + k] = cellIndex(b[k], inv);
    nentry++;
  }
  if (maxlevel < 0) return CD_OK;
  if (maxlevel + 1 > bp->level_cap) {
    int *u = cd_realloc(bp->nlevel_use, (size_t)(maxlevel + 1) * sizeof *u);
    if (!u) return CD_ERR_NOMEM;
    bp->nlevel_use = u;
    bp->level_cap = maxlevel + 1;
  }
  memset(bp->nlevel_use, 0, (size_t)(maxlevel + 1) * sizeof *bp->nlevel_use);
  for (int i = 0; i < n; i++)
    if (bp->level[i] >= 0) bp->nlevel_use[bp->level[i]]++;

  size_t cap = 16;
  while (cap < 2 * nentry) cap *= 2;
  if (cap > bp->cell_cap) {
    Cell *c = cd_realloc(bp->cell, cap * sizeof *c);
    if (!c) return CD_ERR_NOMEM;
    bp->cell = c;
    int *f = cd_realloc(bp->fill, cap * sizeof *f);
    if (!f) return CD_ERR_NOMEM;
    bp->fill = f;
    bp->cell_cap = cap;
  }
  if (nentry > bp->list_cap) {
    int *l = cd_realloc(bp->list, nentry * sizeof *l);
    if (!l) return CD_ERR_NOMEM;
    bp->list = l;
    bp->list_cap = nentry;
  }
  for (size_t s = 0; s < bp->cell_cap; s++) {
    bp->cell[s].level = -1;
    bp->cell[s].count = 0;
  }

  /* pass 1: count the boxes of each cell (each box's slot kept in fill); pass 2: the lists,
   * in body order */
  int *slot = bp->first; /* (n) free until the sort */
  for (int i = 0; i < n; i++) {
    int l = bp->level[i];
    if (l < 0) continue;
    const int64_t *at = &bp->cellof[3 * (size_t)i];
    size_t s = cellFind(bp, l, at[0], at[1], at[2]);
    Cell *c = &bp->cell[s];
    if (c->level < 0) *c = (Cell){at[0], at[1], at[2], l, 0, 0};
    c->count++;
    slot[i] = (int)s;
  }
  int start = 0;
  for (size_t s = 0; s < bp->cell_cap; s++) {
    bp->cell[s].start = start;
    start += bp->cell[s].count;
    bp->fill[s] = 0;
  }
  for (int i = 0; i < n; i++) {
    if (bp->level[i] < 0) continue;
    int s = slot[i];
    bp->list[bp->cell[s].start + bp->fill[s]++] = i;
  }

  /* query: each box against its own level (higher indices) and every coarser level */
  size_t np = 0;
  for (int i = 0; i < n; i++) {
    int li = bp->level[i];
    if (li < 0) continue;
    const double *bi = &aabb[6 * i];
    for (int l = li; l <= maxlevel; l++) {
      if (!bp->nlevel_use[l]) continue;
      double side = ldexp(c0, l), inv = ldexp(1.0 / c0, -l);
      int64_t lo[3], hi[3];
      for (int k = 0; k < 3; k++) {
        lo[k] = cellIndex(bi[k] - side - (fabs(bi[k]) + side) * 0x1p-50, inv);
        hi[k] = cellIndex(bi[3 + k], inv);
      }
      for (int64_t ix = lo[0]; ix <= hi[0]; ix++)
        for (int64_t iy = lo[1]; iy <= hi[1]; iy++)
          for (int64_t iz = lo[2]; iz <= hi[2]; iz++) {
            const Cell *c = &bp->cell[cellFind(bp, l, ix, iy, iz)];
            if (c->level < 0) continue;
            for (int q = 0; q < c->count; q++) {
              int j = bp->list[c->start + q];
              if (l == li && j <= i) continue;
              if (fixed && fixed[i] && fixed[j]) continue;
              const double *bj = &aabb[6 * j];
              if (!cd_boxesOverlap(bi, bj)) continue;
              if (growPairs(bp, np + 1)) return CD_ERR_NOMEM;
              bp->pair[2 * np] = i < j ? i : j;
              bp->pair[2 * np + 1] = i < j ? j : i;
              np++;
            }
          }
    }
  }
  *npair = (int)np;
  *pairs = sortPairs(bp, n, np);
  return CD_OK;
}
