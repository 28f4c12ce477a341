/* test_broadphase.c: the hash-grid broad phase gives exactly the pairs of a brute-force
 * double loop over the same enlarged boxes. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "backend.h"
#include "broadphase.h"
#include "collide.h"
#include "test.h"
#include "vec3.h"

static double urand(double lo, double hi) { return lo + (hi - lo) * (rand() / (double)RAND_MAX); }

static int pairCmp(const void *x, const void *y) {
  const int *a = x, *b = y;
  if (a[0] != b[0]) return a[0] < b[0] ? -1 : 1;
  if (a[1] != b[1]) return a[1] < b[1] ? -1 : 1;
  return 0;
}

static int overlap(const double *a, const double *b) {
  for (int k = 0; k < 3; k++)
    if (a[k] > b[3 + k] || b[k] > a[3 + k]) return 0;
  return 1;
}

/* the O(n^2) reference: pairs (n x 2) sorted, returns the count or -1 */
static long bruteForce(int n, const double *aabb, const int *fixed, int **out) {
  long cap = 1024, np = 0;
  int *p = cd_malloc((size_t)cap * 2 * sizeof *p);
  if (!p) return -1;
  for (int i = 0; i < n; i++) {
    if (!isfinite(aabb[6 * i]) || !isfinite(aabb[6 * i + 3])) continue;
    for (int j = i + 1; j < n; j++) {
      if (fixed && fixed[i] && fixed[j]) continue;
      if (!overlap(&aabb[6 * i], &aabb[6 * j])) continue;
      if (np == cap) {
        cap *= 2;
        int *q = cd_realloc(p, (size_t)cap * 2 * sizeof *q);
        if (!q) {
          cd_free(p);
          return -1;
        }
        p = q;
      }
      p[2 * np] = i;
      p[2 * np + 1] = j;
      np++;
    }
  }
  *out = p;
  return np;
}

/* the broad phase's pairs equal the reference set exactly (no duplicate, none missing), and
 * come sorted by (a, b) (collision relies on it to emit contacts in key order) */
static void checkAgainstBruteForce(int n, const double *aabb, const int *fixed, long min_pairs) {
  cdBroadphase *bp = cd_broadphaseMake(n);
  CHECK(bp != NULL);
  if (!bp) return;
  int np;
  const int *pairs;
  CHECK(cd_broadphasePairs(bp, n, aabb, fixed, &np, &pairs) == CD_OK);
  int *mine = cd_malloc((size_t)(np > 0 ? np : 1) * 2 * sizeof *mine);
  int *ref = NULL;
  long nref = bruteForce(n, aabb, fixed, &ref);
  CHECK(mine != NULL && nref >= 0);
  if (mine && nref >= 0) {
    int unsorted = 0;
    for (int i = 1; i < np; i++) unsorted += pairCmp(&pairs[2 * (i - 1)], &pairs[2 * i]) >= 0;
    CHECK_MSG(unsorted == 0, "%d pairs out of order", unsorted);
    memcpy(mine, pairs, (size_t)np * 2 * sizeof *mine);
    qsort(mine, (size_t)np, 2 * sizeof *mine, pairCmp);
    CHECK_MSG(np == nref, "broad phase %d pairs, brute force %ld", np, nref);
    int bad = 0;
    for (long i = 0; i < np && i < nref; i++)
      if (mine[2 * i] != ref[2 * i] || mine[2 * i + 1] != ref[2 * i + 1]) bad++;
    CHECK_MSG(bad == 0, "%d pairs differ", bad);
    CHECK_MSG(nref >= min_pairs, "only %ld pairs: the scene tests too little", nref);
  }
  cd_free(mine);
  cd_free(ref);
  cd_broadphaseFree(bp);
}

/* ~3000 spheres and boxes, sizes spread over two decades, a few big fixed slabs, random
 * poses and velocities, boxes from cd_broadphaseBounds */
CD_TEST(broadphaseMatchesBruteForceOn3000RandomBodies) {
  int n = 3000;
  double *aabb = cd_malloc((size_t)n * 6 * sizeof *aabb);
  int *fixed = cd_malloc((size_t)n * sizeof *fixed);
  CHECK(aabb && fixed);
  if (!aabb || !fixed) return;
  srand(17);
  for (int i = 0; i < n; i++) {
    cdBodyDef b;
    memset(&b, 0, sizeof b);
    double size = 0.02 * pow(10.0, urand(0, 2)); /* 0.02 .. 2 */
    if (i % 500 == 0) size = 8;                  /* a few large bodies */
    if (rand() % 2) {
      b.shape = CD_SPHERE;
      b.radius = size;
    } else {
      b.shape = CD_BOX;
      cd_v3set(b.half, size * urand(0.2, 1), size * urand(0.2, 1), size * urand(0.2, 1));
    }
    fixed[i] = i % 500 == 0 || rand() % 20 == 0;
    double q[4] = {urand(-1, 1), urand(-1, 1), urand(-1, 1), urand(-1, 1)}, R[9];
    cd_quatNormalize(q);
    cd_quatToMat(R, q);
    double x[3] = {urand(-15, 15), urand(-15, 15), urand(-3, 3)};
    double v[6] = {urand(-5, 5), urand(-5, 5), urand(-5, 5), urand(-5, 5), urand(-5, 5), urand(-5, 5)};
    cdScene autos;
    memset(&autos, 0, sizeof autos); /* contact_margin "auto" */
    cd_broadphaseBounds(&b, x, R, cd_collideMargin(&autos, cd_bodySpeedBound(&b, v), 0.01, cd_bodySizeScale(&b)),
                        &aabb[6 * i]);
  }
  checkAgainstBruteForce(n, aabb, fixed, 5000);
  checkAgainstBruteForce(n, aabb, NULL, 5000);
  cd_free(aabb);
  cd_free(fixed);
}

/* a dense lattice pile of equal cubes, touching faces: the 26-neighbour structure */
CD_TEST(broadphaseMatchesBruteForceOnTouchingLattice) {
  int m = 14, n = m * m * m;
  double *aabb = cd_malloc((size_t)n * 6 * sizeof *aabb);
  if (!aabb) return;
  for (int i = 0; i < n; i++) {
    double c[3] = {i % m, (i / m) % m, i / (m * m)};
    for (int k = 0; k < 3; k++) {
      aabb[6 * i + k] = c[k] - 0.5;
      aabb[6 * i + 3 + k] = c[k] + 0.5;
    }
  }
  /* closed boxes that touch overlap: every lattice neighbour, 26 per inner cube */
  checkAgainstBruteForce(n, aabb, NULL, (long)13 * (m - 2) * (m - 2) * (m - 2));
  cd_free(aabb);
}

CD_TEST(broadphaseBodiesAtOnePointGiveAllPairs) {
  int n = 1500;
  double *aabb = cd_malloc((size_t)n * 6 * sizeof *aabb);
  if (!aabb) return;
  for (int i = 0; i < n; i++) {
    double h = 0.1 + 0.001 * (i % 7);
    for (int k = 0; k < 3; k++) {
      aabb[6 * i + k] = 1 - h;
      aabb[6 * i + 3 + k] = 1 + h;
    }
  }
  cdBroadphase *bp = cd_broadphaseMake(n);
  int np;
  const int *pairs;
  CHECK(cd_broadphasePairs(bp, n, aabb, NULL, &np, &pairs) == CD_OK);
  CHECK(np == n * (n - 1) / 2);
  cd_broadphaseFree(bp);
  cd_free(aabb);
}

CD_TEST(broadphaseSkipsFixedPairsAndNonFiniteBoxes) {
  double aabb[4 * 6];
  for (int i = 0; i < 4; i++)
    for (int k = 0; k < 3; k++) {
      aabb[6 * i + k] = -1;
      aabb[6 * i + 3 + k] = 1;
    }
  aabb[6 * 3 + 1] = NAN;
  int fixed[4] = {1, 1, 0, 0};
  cdBroadphase *bp = cd_broadphaseMake(4);
  int np;
  const int *pairs;
  CHECK(cd_broadphasePairs(bp, 4, aabb, fixed, &np, &pairs) == CD_OK);
  /* (0, 2), (1, 2): the fixed pair (0, 1) and everything with the NaN box 3 left out */
  CHECK(np == 2);
  for (int p = 0; p < np; p++) CHECK(pairs[2 * p + 1] == 2 && pairs[2 * p] < 2);
  cd_broadphaseFree(bp);
}

/* the enlarged box contains the body and its margin share: a sphere's box is r + share */
CD_TEST(broadphaseBoundsIncludeTheMarginShare) {
  cdBodyDef b;
  memset(&b, 0, sizeof b);
  b.shape = CD_SPHERE;
  b.radius = 0.5;
  double x[3] = {1, 2, 3}, R[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, v[6] = {3, 0, 4, 0, 0, 2}, box[6];
  cdScene autos;
  memset(&autos, 0, sizeof autos); /* contact_margin "auto" */
  double share = cd_collideMargin(&autos, cd_bodySpeedBound(&b, v), 0.1, cd_bodySizeScale(&b));
  CHECK_NEAR(share, 0.6005, 1e-15); /* 1e-3 r + dt (|v| + |w| r) = 5e-4 + 0.1 (5 + 2 x 0.5) */
  cd_broadphaseBounds(&b, x, R, share, box);
  for (int k = 0; k < 3; k++) {
    CHECK_NEAR(box[k], x[k] - 0.5 - share, 1e-15);
    CHECK_NEAR(box[3 + k], x[k] + 0.5 + share, 1e-15);
  }
  /* a box turned 45 degrees about z: half width (hx + hy)/sqrt(2) along x and y */
  b.shape = CD_BOX;
  cd_v3set(b.half, 0.3, 0.1, 0.2);
  double c = sqrt(0.5), Rz[9] = {c, -c, 0, c, c, 0, 0, 0, 1};
  share = cd_collideMargin(&autos, 0, 0.1, cd_bodySizeScale(&b));
  CHECK_NEAR(share, 1e-4, 1e-18);
  cd_broadphaseBounds(&b, x, Rz, share, box);
  CHECK_NEAR(box[3] - x[0], 0.4 * c + share, 1e-15);
  CHECK_NEAR(box[4] - x[1], 0.4 * c + share, 1e-15);
  CHECK_NEAR(box[5] - x[2], 0.2 + share, 1e-15);
}
