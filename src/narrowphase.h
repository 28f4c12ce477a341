/* narrowphase.h: the contact points of one pair of shapes (or one shape and the ground).
 *
 * Every function appends to out the contacts of its pair whose gap is at most margin, in
 * the conventions of contact.h: body[0] = a < body[1] = b (a = -1 is the ground), unit
 * normal from a towards b (the direction of the force on b when they press), signed gap,
 * point midway between the two surfaces along the normal, (normal, t1, t2) from
 * cd_tangentFrame, surface radii and feature codes. The pair functions take the bodies in
 * the order (a, b) with ia < ib and the shapes their names say; the caller (collide.c)
 * dispatches. Each returns CD_OK, or CD_ERR_NOMEM when out cannot grow.
 *
 * A body's pose: centre x (3), rotation R (9, row-major, body to world: column i is body
 * axis i in world).
 *
 * Box feature codes (contact.h): vertex 0..7 with bit i set = +half along body axis i; edge
 * 8 + e with e = 4 m + s1 + 2 s2 for the edge along axis m whose coordinates on the axes
 * (m + 1) % 3 and (m + 2) % 3 are + half (s1, s2 = 1) or - half (0); face 20 + 2 axis +
 * (sign > 0).
 */
#ifndef CD_NARROWPHASE_H
#define CD_NARROWPHASE_H

#include <stdint.h>

#include "contact.h"
#include "scene.h"
#include "vec3.h"

/* the box feature codes above */
uint32_t cd_boxVertexCode(const int sign[3]);     /* sign[i] = +-1 */
uint32_t cd_boxEdgeCode(int axis, const int sign[3]); /* sign[axis] ignored */
uint32_t cd_boxFaceCode(int axis, int sign);

/* pushes one contact (frame from cd_tangentFrame(normal)); CD_OK or CD_ERR_NOMEM */
int cd_narrowPush(cdContactSet *out, int a, int b, uint32_t fa, uint32_t fb, const double point[3],
                  const double normal[3], double gap);

/* sphere (any, hollow treated as solid) b against the ground plane z = height (a = -1) */
int cd_collideSphereGround(int ib, const cdBodyDef *b, const double xb[3], double height, double margin,
                           cdContactSet *out);

/* box b against the ground: one contact for each corner within the margin (4 for a face
 * resting flat, 2 for an edge, 1 for a corner), keyed by the corner's vertex code */
int cd_collideBoxGround(int ib, const cdBodyDef *b, const double xb[3], const double Rb[9], double height,
                        double margin, cdContactSet *out);

/* the geometry of the sphere-ground and sphere-sphere contacts, shared by their pair
 * functions below and the force models' per-substep update of a listed pair
 * (contact_cache.c), so that both give the same numbers. Each returns 1 with the contact's
 * point (and normal) when its gap (always written) is at most margin, else 0. */

/* a sphere of radius r at xb against the plane z = height: normal +z, the point midway
 * between the plane and the sphere's lowest point */
static inline int cd_sphereGroundGeometry(const double xb[3], double r, double height, double margin,
                                          double point[3], double *gap) {
  *gap = xb[2] - r - height;
  if (!(*gap <= margin)) return 0;
  point[0] = xb[0];
  point[1] = xb[1];
  point[2] = height + 0.5 * *gap;
  return 1;
}

/* |d| between two centres, or 0 when d is (numerically) zero: below 1e-150 the squared norm
 * could underflow and spoil the unit */
static inline double cd_centreDistance(const double d[3]) {
  double n = cd_v3norm(d);
  return n > 1e-150 ? n : 0;
}

/* the unit of d, given n = cd_centreDistance(d), or +z when n = 0: the deterministic choice
 * for coincident centres */
static inline void cd_centreDirection(double u[3], const double d[3], double n) {
  if (n > 0)
    cd_v3scale(u, d, 1.0 / n);
  else
    cd_v3set(u, 0, 0, 1);
}

/* solid spheres ra at xa and rb at xb: g = |xb - xa| - (ra + rb), the normal the unit of
 * xb - xa (cd_centreDirection), the point midway between the surfaces xa + ra n and
 * xb - rb n */
static inline int cd_sphereSphereGeometry(const double xa[3], double ra, const double xb[3], double rb,
                                          double margin, double normal[3], double point[3], double *gap) {
  double d[3];
  cd_v3sub(d, xb, xa);
  double dist = cd_centreDistance(d);
  *gap = dist - (ra + rb);
  if (!(*gap <= margin)) return 0;
  cd_centreDirection(normal, d, dist);
  cd_v3add(point, xa, xb);
  cd_v3scale(point, point, 0.5);
  cd_v3addScaled(point, point, normal, 0.5 * (ra - rb));
  return 1;
}

/* two solid spheres (outside against outside): g = |xb - xa| - (ra + rb) (seed 002, h1 = 1) */
int cd_collideSphereSphere(int ia, const cdBodyDef *A, const double xa[3], int ib, const cdBodyDef *B,
                           const double xb[3], double margin, cdContactSet *out);

/* the sphere `inner` inside the hollow sphere `shell` (seed 002, h1 = -1):
 * g = r_shell - r_inner - |x_inner - x_shell|. Either may be a (the lower index): shell_is_a
 * says which. See narrowphase.c for the normal mapping. */
int cd_collideSphereInHollow(int ia, const cdBodyDef *A, const double xa[3], int ib, const cdBodyDef *B,
                             const double xb[3], int shell_is_a, double margin, cdContactSet *out);

/* a sphere and a box, in either order (sphere_is_a says which is a); the closest point of
 * the box to the sphere's centre, or the nearest face when the centre is inside */
int cd_collideSphereBox(int ia, const cdBodyDef *A, const double xa[3], const double Ra[9], int ib,
                        const cdBodyDef *B, const double xb[3], const double Rb[9], int sphere_is_a,
                        double margin, cdContactSet *out);

/* two boxes (box_box.c): separating-axis test on 15 axes, face clipping (up to 8 points) or
 * one edge-edge point */
int cd_collideBoxBox(int ia, const cdBodyDef *A, const double xa[3], const double Ra[9], int ib,
                     const cdBodyDef *B, const double xb[3], const double Rb[9], double margin,
                     cdContactSet *out);

#endif
