/* broadphase.h: candidate pairs of bodies from their fattened bounding boxes.
 *
 * A pair (a, b), a < b, is a candidate when the two axis-aligned boxes overlap (closed
 * intervals on all three axes) and not both bodies are fixed: exactly the set a brute-force
 * double loop gives, found in expected O(n) time by a hierarchical hash grid (broadphase.c).
 */
#ifndef CD_BROADPHASE_H
#define CD_BROADPHASE_H

#include "scene.h"
#include "vec3.h"

typedef struct cdBroadphase cdBroadphase; /* grid and pair workspace; grows as needed */

cdBroadphase *cd_broadphaseMake(int nbody); /* NULL when memory runs out */
void cd_broadphaseFree(cdBroadphase *bp);

/* the size scale of a body for its margin: sphere radius, box smallest half extent, m */
double cd_bodySizeScale(const cdBodyDef *b);
/* a bound of the speed of any point of the body: |v| + |w| R, v6 = (linear, angular) world,
 * R the bounding radius, m/s; v6 NULL means at rest */
double cd_bodySpeedBound(const cdBodyDef *b, const double v6[6]);
/* the same for a body of bounding radius R (cd_bodyBoundingRadius) moving at v6 */
static inline double cd_speedBound(const double v6[6], double R) { return cd_v3norm(v6) + cd_v3norm(v6 + 3) * R; }

/* the world bounding box of body i (centre x, rotation R row-major body to world) enlarged
 * on every side by share (m), its share of the margin (collide.c: the two shares of a pair
 * together cover the pair's margin): aabb = (lo x, lo y, lo z, hi x, hi y, hi z) */
void cd_broadphaseBounds(const cdBodyDef *b, const double x[3], const double R[9], double share, double aabb[6]);

/* boxes a, b (lo x, y, z, hi x, y, z) overlap: closed intervals on all three axes, the test
 * that makes a pair a candidate (finite boxes) */
static inline int cd_boxesOverlap(const double a[6], const double b[6]) {
  return !(a[0] > b[3] || b[0] > a[3] || a[1] > b[4] || b[1] > a[4] || a[2] > b[5] || b[2] > a[5]);
}

/* the candidate pairs of n boxes aabb (n x 6); fixed (n) marks fixed bodies (NULL: none).
 * A box with a non-finite coordinate takes part in no pair. On return *pairs points to
 * *npair pairs (npair x 2, a < b; valid until the next call or cd_broadphaseFree), sorted
 * by (a, b). Returns CD_OK or CD_ERR_NOMEM. */
int cd_broadphasePairs(cdBroadphase *bp, int n, const double *aabb, const int *fixed, int *npair,
                       const int **pairs);

#endif
