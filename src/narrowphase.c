/* narrowphase.c: sphere-ground, box-ground, sphere-sphere, sphere in hollow sphere,
 * sphere-box contact points (box-box is in box_box.c).
 *
 * Conventions (contact.h): a < b, a = -1 the ground; the unit normal points from a towards
 * b and is the direction of the push on b; gap = signed distance between the surfaces
 * along the normal (< 0 overlap); point = midway between the two surface points. A
 * contact is emitted when gap <= margin.
 *
 * Sphere in a hollow sphere (seed 002 with isHollowSphere1, h1 = -1). Let u be the unit
 * vector from the shell's centre to the inner sphere's centre, d their distance. The seed
 * gives g = r_shell - r_inner - d and the normal n0 = h1 (p1 - p0)/|p1 - p0| = u, which
 * points from the inner sphere (marker 0) to its contact point on the shell, the direction
 * of the seed's force on the shell (marker 1) under overlap. The touching points are
 * x_inner + r_inner u (inner surface) and x_shell + r_shell u (shell), so the point is their
 * midpoint. Our normal is the push on b:
 *   a = inner, b = shell: n = u   (the seed's n0; the shell is pushed outwards),
 *   a = shell, b = inner: n = -u  (the inner sphere is pushed back towards the centre).
 * In both cases n = (x_a - x_b)/|x_a - x_b|, and gap rate = n . (v_b - v_a) = -d'(t) as the
 * seed's g says. Coincident centres take u = +z.
 *
 * Pairs the seed does not cover, chosen here (collide.c dispatches):
 *  - a hollow sphere touches other spheres only by its inside: a sphere whose centre is
 *    outside the shell (d > r_shell) does not interact with it;
 *  - two hollow spheres: the larger one is the shell (the lower index on equal radii) and
 *    the smaller one acts by its outside;
 *  - a hollow sphere against the ground or a box acts as a solid sphere (its outside).
 */
#include "narrowphase.h"

#include <math.h>

#include "backend.h"
#include "vec3.h"

uint32_t cd_boxVertexCode(const int sign[3]) {
  return (uint32_t)((sign[0] > 0) | ((sign[1] > 0) << 1) | ((sign[2] > 0) << 2));
}

uint32_t cd_boxEdgeCode(int axis, const int sign[3]) {
  int s1 = sign[(axis + 1) % 3] > 0, s2 = sign[(axis + 2) % 3] > 0;
  return (uint32_t)(CD_FEAT_EDGE + 4 * axis + s1 + 2 * s2);
}

uint32_t cd_boxFaceCode(int axis, int sign) { return (uint32_t)(CD_FEAT_FACE + 2 * axis + (sign > 0)); }

int cd_narrowPush(cdContactSet *out, int a, int b, uint32_t fa, uint32_t fb, const double point[3],
                  const double normal[3], double gap) {
  cdContact *c = cd_contactSetPush(out);
  if (!c) return CD_ERR_NOMEM;
  c->body[0] = a;
  c->body[1] = b;
  c->feature[0] = fa;
  c->feature[1] = fb;
  cd_v3copy(c->point, point);
  cd_v3copy(c->normal, normal);
  cd_tangentFrame(c->normal, c->t1, c->t2);
  c->gap = gap;
  return CD_OK;
}

int cd_collideSphereGround(int ib, const cdBodyDef *b, const double xb[3], double height, double margin,
                           cdContactSet *out) {
  static const double up[3] = {0, 0, 1};
  double p[3], gap;
  if (!cd_sphereGroundGeometry(xb, b->radius, height, margin, p, &gap)) return CD_OK;
  return cd_narrowPush(out, -1, ib, 0, 0, p, up, gap);
}

int cd_collideBoxGround(int ib, const cdBodyDef *b, const double xb[3], const double Rb[9], double height,
                        double margin, cdContactSet *out) {
  static const double up[3] = {0, 0, 1};
  for (int v = 0; v < 8; v++) {
    int sign[3] = {(v & 1) ? 1 : -1, (v & 2) ? 1 : -1, (v & 4) ? 1 : -1};
    double local[3] = {sign[0] * b->half[0], sign[1] * b->half[1], sign[2] * b->half[2]}, w[3];
    cd_m3mulv(w, Rb, local);
    cd_v3add(w, w, xb);
    double gap = w[2] - height;
    if (!(gap <= margin)) continue;
    w[2] = height + 0.5 * gap;
    int rc = cd_narrowPush(out, -1, ib, 0, cd_boxVertexCode(sign), w, up, gap);
    if (rc) return rc;
  }
  return CD_OK;
}

int cd_collideSphereSphere(int ia, const cdBodyDef *A, const double xa[3], int ib, const cdBodyDef *B,
                           const double xb[3], double margin, cdContactSet *out) {
  double n[3], p[3], gap;
  if (!cd_sphereSphereGeometry(xa, A->radius, xb, B->radius, margin, n, p, &gap)) return CD_OK;
  return cd_narrowPush(out, ia, ib, 0, 0, p, n, gap);
}

int cd_collideSphereInHollow(int ia, const cdBodyDef *A, const double xa[3], int ib, const cdBodyDef *B,
                             const double xb[3], int shell_is_a, double margin, cdContactSet *out) {
  const cdBodyDef *S = shell_is_a ? A : B, *I = shell_is_a ? B : A;
  const double *xs = shell_is_a ? xa : xb, *xi = shell_is_a ? xb : xa;
  double d[3], u[3];
  cd_v3sub(d, xi, xs);
  double dist = cd_centreDistance(d);
  cd_centreDirection(u, d, dist);
  if (dist > S->radius) return CD_OK; /* outside the shell: no inner contact */
  double gap = S->radius - I->radius - dist;
  if (!(gap <= margin)) return CD_OK;
  double p[3], q[3], n[3];
  cd_v3addScaled(p, xi, u, I->radius);
  cd_v3addScaled(q, xs, u, S->radius);
  cd_v3add(p, p, q);
  cd_v3scale(p, p, 0.5);
  cd_v3scale(n, u, shell_is_a ? -1.0 : 1.0);
  return cd_narrowPush(out, ia, ib, 0, 0, p, n, gap);
}

int cd_collideSphereBox(int ia, const cdBodyDef *A, const double xa[3], const double Ra[9], int ib,
                        const cdBodyDef *B, const double xb[3], const double Rb[9], int sphere_is_a,
                        double margin, cdContactSet *out) {
  const cdBodyDef *S = sphere_is_a ? A : B, *X = sphere_is_a ? B : A;
  const double *xs = sphere_is_a ? xa : xb, *xx = sphere_is_a ? xb : xa;
  const double *R = sphere_is_a ? Rb : Ra;
  const double *h = X->half;
  double r = S->radius;

  /* the centre in the box frame, clamped to the box */
  double d[3], q[3], c[3];
  cd_v3sub(d, xs, xx);
  cd_m3mulvT(q, R, d);
  int sign[3], nclamp = 0, clamped_axis[3] = {0, 0, 0};
  for (int i = 0; i < 3; i++) {
    sign[i] = q[i] >= 0 ? 1 : -1;
    c[i] = q[i];
    if (q[i] > h[i]) c[i] = h[i];
    if (q[i] < -h[i]) c[i] = -h[i];
    if (c[i] != q[i]) {
      clamped_axis[i] = 1;
      nclamp++;
    }
  }

  double nl[3], gap; /* normal in box frame, from the box to the sphere */
  uint32_t feat;
  if (nclamp > 0) {
    /* outside: the closest point c is on a face (1 clamped coordinate), an edge (2) or
     * a vertex (3) */
    double diff[3];
    cd_v3sub(diff, q, c);
    double dist = cd_v3norm(diff);
    if (!(dist - r <= margin)) return CD_OK;
    cd_v3scale(nl, diff, 1.0 / dist); /* dist > 0: some coordinate differs */
    gap = dist - r;
    if (nclamp == 3) {
      feat = cd_boxVertexCode(sign);
    } else if (nclamp == 2) {
      int m = !clamped_axis[0] ? 0 : !clamped_axis[1] ? 1 : 2;
      feat = cd_boxEdgeCode(m, sign);
    } else {
      int m = clamped_axis[0] ? 0 : clamped_axis[1] ? 1 : 2;
      feat = cd_boxFaceCode(m, sign[m]);
    }
  } else {
    /* inside (or on the surface): leave through the nearest face, the lowest axis on ties */
    int m = 0;
    double depth = h[0] - fabs(q[0]);
    for (int i = 1; i < 3; i++) {
      double di = h[i] - fabs(q[i]);
      if (di < depth) {
        depth = di;
        m = i;
      }
    }
    gap = -depth - r;
    if (!(gap <= margin)) return CD_OK;
    cd_v3set(nl, 0, 0, 0);
    nl[m] = sign[m];
    c[m] = sign[m] * h[m];
    feat = cd_boxFaceCode(m, sign[m]);
  }

  /* world: box surface point, sphere surface point, their midpoint */
  double n[3], pb[3], ps[3], p[3];
  cd_m3mulv(n, R, nl);
  cd_v3normalize(n);
  cd_m3mulv(pb, R, c);
  cd_v3add(pb, pb, xx);
  cd_v3addScaled(ps, xs, n, -r);
  cd_v3add(p, pb, ps);
  cd_v3scale(p, p, 0.5);
  if (sphere_is_a) {
    cd_v3scale(n, n, -1.0);
    return cd_narrowPush(out, ia, ib, 0, feat, p, n, gap);
  }
  return cd_narrowPush(out, ia, ib, feat, 0, p, n, gap);
}
