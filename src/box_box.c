/* box_box.c: contact points of two boxes by the separating-axis test and face clipping.
 *
 * Separating axes (Gregorius, "The Separating Axis Test between convex polyhedra", GDC 2013;
 * ODE's dBoxBox): the 3 face normals of A, the 3 of B and the 9 cross products of an edge
 * direction of A with one of B (skipped when the edges are nearly parallel, |cross| < 1e-6:
 * the face axes cover that case). On a unit axis n oriented from A to B (n.d >= 0, d = x_b -
 * x_a) the signed separation is
 *     s(n) = |d.n| - sum_k hA_k |uA_k.n| - sum_k hB_k |uB_k.n|,
 * a lower bound of the distance when positive and minus the overlap along n when negative.
 * If max s > margin the boxes are farther apart than the margin: no contact. Otherwise the
 * axis of least penetration is chosen with a preference, for stable stacks and stable keys:
 * B's best face axis replaces A's only when s_B > s_A + 0.05 |s_A| + tol, and the best edge
 * axis replaces the face one only when s_E > s_F + 0.05 |s_F| + tol, tol = 1e-3 min(half
 * extents of both). So nearly equal candidates (a resting stack, where A's and B's face
 * normals give the same s) always resolve to the same choice.
 *
 * Face contact: the reference face is the chosen box's face whose outward normal nr points
 * to the other box; the incident face is the other box's face most anti-parallel to nr.
 * The incident quad, in the reference box frame, is clipped (Sutherland-Hodgman) against
 * the reference face's four side planes. Before that, an incident vertex at most tol outside
 * a side plane is moved onto it (along the reference face, so its gap is unchanged): a
 * vertex lying on a side plane (equal boxes stacked) then stays one kept vertex under tiny
 * motion, instead of turning into two clip points with other keys. Every
 * clipped point with height g = nr.(p - face) <= margin above the reference face is a
 * contact with gap g, normal nr (or -nr when the reference box is B, so that the normal
 * goes from a to b), point p - g/2 nr: up to 8 points.
 *
 * Feature keys of a face contact: each polygon vertex lies on two polygon edges, each either
 * an incident edge or a reference side plane (a reference edge), so
 *   an incident vertex kept as it is:  (reference face,  incident vertex)
 *   an incident edge cut by a side:    (reference edge,  incident edge)
 *   a reference corner (two sides):    (reference vertex, incident face)
 * ordered as (feature of a, feature of b). A resting box keeps its 4 incident-vertex keys
 * from step to step; an octagon (a cube turned on a face) keeps its 8 edge-edge keys.
 * Edge contact: one point midway between the closest points of the two edges (segments),
 * gap = (pB - pA).n, keys (edge of A, edge of B).
 */
#include <math.h>

#include "backend.h"
#include "narrowphase.h"
#include "vec3.h"

enum { NO_AXIS = -1 };
static const double k_rel = 0.05;

/* column i of a row-major rotation: body axis i in world */
static void axisOf(double u[3], const double R[9], int i) { cd_v3set(u, R[i], R[3 + i], R[6 + i]); }

static double supportRadius(const double R[9], const double h[3], const double n[3]) {
  double r = 0, u[3];
  for (int k = 0; k < 3; k++) {
    axisOf(u, R, k);
    r += h[k] * fabs(cd_v3dot(u, n));
  }
  return r;
}

/* a polygon vertex in the reference frame, its key features (see the opening comment), and
 * the label of the polygon edge leaving it: 0..11 an incident edge index, SIDE_LABEL + plane
 * a reference side plane (plane = 2 k + (sigma > 0) for the plane sigma p_k = lim) */
typedef struct {
  double p[3];
  uint32_t f_ref; /* feature code on the reference box */
  uint32_t f_inc; /* feature code on the incident box */
  int edge_out;
} PolyVertex;

enum { SIDE_LABEL = 100 };

typedef struct {
  int axis, sign;         /* reference face: body axis and sign of its outward normal */
  int inc_axis, inc_sign; /* incident face */
} FaceInfo;

static uint32_t refEdgeOfPlane(const FaceInfo *f, int plane) {
  int k = plane / 2, sigma = (plane & 1) ? 1 : -1;
  int sv[3] = {1, 1, 1};
  sv[f->axis] = f->sign;
  sv[k] = sigma;
  int m = 3 - f->axis - k;
  return cd_boxEdgeCode(m, sv);
}

static uint32_t refCornerOfPlanes(const FaceInfo *f, int plane1, int plane2) {
  int sv[3];
  sv[f->axis] = f->sign;
  sv[plane1 / 2] = (plane1 & 1) ? 1 : -1;
  sv[plane2 / 2] = (plane2 & 1) ? 1 : -1;
  return cd_boxVertexCode(sv);
}

/* Sutherland-Hodgman against sigma p_k <= lim; returns the new count */
static int clipPlane(const FaceInfo *f, const PolyVertex *in, int n, PolyVertex *out, int k, int sigma,
                     double lim) {
  int plane = 2 * k + (sigma > 0), m = 0;
  for (int a = 0; a < n; a++) {
    const PolyVertex *cur = &in[a], *nxt = &in[(a + 1) % n];
    double d0 = sigma * cur->p[k] - lim, d1 = sigma * nxt->p[k] - lim;
    if (d0 <= 0) out[m++] = *cur;
    if (d0 <= 0 && d1 > 0 && d0 == 0) {
      /* cur lies on the plane: the polygon leaves along the plane from cur itself */
      out[m - 1].edge_out = SIDE_LABEL + plane;
    } else if ((d0 < 0 && d1 > 0) || (d0 > 0 && d1 < 0)) {
      PolyVertex *x = &out[m++];
      double t = d0 / (d0 - d1);
      for (int c = 0; c < 3; c++) x->p[c] = cur->p[c] + t * (nxt->p[c] - cur->p[c]);
      x->p[k] = sigma * lim;
      if (cur->edge_out < SIDE_LABEL) {
        x->f_ref = refEdgeOfPlane(f, plane);
        x->f_inc = (uint32_t)(CD_FEAT_EDGE + cur->edge_out);
      } else {
        x->f_ref = refCornerOfPlanes(f, cur->edge_out - SIDE_LABEL, plane);
        x->f_inc = cd_boxFaceCode(f->inc_axis, f->inc_sign);
      }
      /* leaving the half-space: the polygon runs along the plane; entering: along cur's edge */
      x->edge_out = d0 < 0 ? SIDE_LABEL + plane : cur->edge_out;
    }
  }
  return m;
}

/* face contact with reference box (cf, Rf, hf) face (axis, sign) and incident box (ci, Ri, hi);
 * ref_is_a says which body is a */
static int faceContact(int ia, int ib, int ref_is_a, const double cf[3], const double Rf[9], const double hf[3],
                       int axis, int sign, const double ci[3], const double Ri[9], const double hi[3], double tol,
                       double margin, cdContactSet *out) {
  double nr[3];
  axisOf(nr, Rf, axis);
  cd_v3scale(nr, nr, sign);

  /* incident face: most anti-parallel to nr */
  int j = 0;
  double best = -1, u[3];
  for (int k = 0; k < 3; k++) {
    axisOf(u, Ri, k);
    double c = fabs(cd_v3dot(u, nr));
    if (c > best) {
      best = c;
      j = k;
    }
  }
  axisOf(u, Ri, j);
  int t = cd_v3dot(u, nr) > 0 ? -1 : 1;
  FaceInfo f = {axis, sign, j, t};

  /* the incident quad in the reference frame, in cyclic order */
  int k1 = (j + 1) % 3, k2 = (j + 2) % 3;
  static const int cyc[4][2] = {{1, 1}, {-1, 1}, {-1, -1}, {1, -1}};
  PolyVertex bufA[16], bufB[16];
  int sv[4][3];
  for (int v = 0; v < 4; v++) {
    sv[v][j] = t;
    sv[v][k1] = cyc[v][0];
    sv[v][k2] = cyc[v][1];
  }
  for (int v = 0; v < 4; v++) {
    double local[3] = {sv[v][0] * hi[0], sv[v][1] * hi[1], sv[v][2] * hi[2]}, w[3], dw[3];
    cd_m3mulv(w, Ri, local);
    cd_v3add(w, w, ci);
    cd_v3sub(dw, w, cf);
    PolyVertex *pv = &bufA[v];
    cd_m3mulvT(pv->p, Rf, dw);
    pv->f_ref = cd_boxFaceCode(axis, sign);
    pv->f_inc = cd_boxVertexCode(sv[v]);
    /* the edge to the next vertex runs along the axis where their signs differ */
    const int *nx = sv[(v + 1) % 4];
    int m = nx[k1] != sv[v][k1] ? k1 : k2;
    pv->edge_out = (int)(cd_boxEdgeCode(m, sv[v]) - CD_FEAT_EDGE);
  }

  /* snap incident vertices at most tol outside a side plane onto it, then clip against the
   * four side planes of the reference face */
  for (int v = 0; v < 4; v++)
    for (int e = 1; e <= 2; e++) {
      int k = (axis + e) % 3;
      double a = fabs(bufA[v].p[k]);
      if (a > hf[k] && a <= hf[k] + tol) bufA[v].p[k] = bufA[v].p[k] > 0 ? hf[k] : -hf[k];
    }
  int n = 4;
  PolyVertex *in = bufA, *tmp = bufB;
  for (int e = 1; e <= 2 && n > 0; e++) {
    int k = (axis + e) % 3;
    for (int sigma = 1; sigma >= -1 && n > 0; sigma -= 2) {
      n = clipPlane(&f, in, n, tmp, k, sigma, hf[k]);
      PolyVertex *sw = in;
      in = tmp;
      tmp = sw;
    }
  }

  /* keep the points within the margin above the reference face */
  for (int v = 0; v < n; v++) {
    double g = sign * in[v].p[axis] - hf[axis];
    if (!(g <= margin)) continue;
    double w[3], p[3], nn[3];
    cd_m3mulv(w, Rf, in[v].p);
    cd_v3add(w, w, cf);
    cd_v3addScaled(p, w, nr, -0.5 * g);
    int rc;
    if (ref_is_a) {
      rc = cd_narrowPush(out, ia, ib, in[v].f_ref, in[v].f_inc, p, nr, g);
    } else {
      cd_v3scale(nn, nr, -1.0);
      rc = cd_narrowPush(out, ia, ib, in[v].f_inc, in[v].f_ref, p, nn, g);
    }
    if (rc) return rc;
  }
  return CD_OK;
}

/* one edge of a box along axis i, the one furthest along dir: its centre, and its sign
 * vector (sign[i] unused) */
static void supportEdge(double e[3], int sv[3], const double c[3], const double R[9], const double h[3], int i,
                        const double dir[3]) {
  cd_v3copy(e, c);
  sv[i] = 1;
  for (int k = 0; k < 3; k++) {
    if (k == i) continue;
    double u[3];
    axisOf(u, R, k);
    sv[k] = cd_v3dot(u, dir) >= 0 ? 1 : -1;
    cd_v3addScaled(e, e, u, sv[k] * h[k]);
  }
}

static double clampd(double x, double lo, double hi) { return x < lo ? lo : x > hi ? hi : x; }

static int edgeContact(int ia, const double xa[3], const double Ra[9], const double ha[3], int i, int ib,
                       const double xb[3], const double Rb[9], const double hb[3], int j, const double n[3],
                       cdContactSet *out) {
  double eA[3], eB[3], uA[3], uB[3], mn[3];
  int sA[3], sB[3];
  supportEdge(eA, sA, xa, Ra, ha, i, n);
  cd_v3scale(mn, n, -1.0);
  supportEdge(eB, sB, xb, Rb, hb, j, mn);
  axisOf(uA, Ra, i);
  axisOf(uB, Rb, j);

  /* closest points of the segments eA + s uA (|s| <= ha_i), eB + t uB (|t| <= hb_j);
   * the edges are not parallel (the axis was kept), so 1 - c^2 > 0 */
  double w[3];
  cd_v3sub(w, eA, eB);
  double c = cd_v3dot(uA, uB), uw = cd_v3dot(uA, w), vw = cd_v3dot(uB, w);
  double s = clampd((c * vw - uw) / (1 - c * c), -ha[i], ha[i]);
  double t = vw + s * c;
  if (t < -hb[j] || t > hb[j]) {
    t = clampd(t, -hb[j], hb[j]);
    s = clampd(t * c - uw, -ha[i], ha[i]);
  }
  double pA[3], pB[3], p[3], dp[3];
  cd_v3addScaled(pA, eA, uA, s);
  cd_v3addScaled(pB, eB, uB, t);
  cd_v3sub(dp, pB, pA);
  double gap = cd_v3dot(dp, n);
  cd_v3add(p, pA, pB);
  cd_v3scale(p, p, 0.5);
  return cd_narrowPush(out, ia, ib, cd_boxEdgeCode(i, sA), cd_boxEdgeCode(j, sB), p, n, gap);
}

int cd_collideBoxBox(int ia, const cdBodyDef *A, const double xa[3], const double Ra[9], int ib,
                     const cdBodyDef *B, const double xb[3], const double Rb[9], double margin,
                     cdContactSet *out) {
  const double *ha = A->half, *hb = B->half;
  double smin = ha[0];
  for (int k = 0; k < 3; k++) {
    if (ha[k] < smin) smin = ha[k];
    if (hb[k] < smin) smin = hb[k];
  }
  double tol = 1e-3 * smin;
  double d[3];
  cd_v3sub(d, xb, xa);

  double sA = -INFINITY, sB = -INFINITY, sE = -INFINITY;
  int iA = 0, iB = 0, eI = NO_AXIS, eJ = NO_AXIS;
  double nE[3] = {0, 0, 1};
  double u[3], v[3], n[3];
  for (int i = 0; i < 3; i++) {
    axisOf(u, Ra, i);
    double s = fabs(cd_v3dot(d, u)) - ha[i] - supportRadius(Rb, hb, u);
    if (s > sA) {
      sA = s;
      iA = i;
    }
  }
  for (int j = 0; j < 3; j++) {
    axisOf(u, Rb, j);
    double s = fabs(cd_v3dot(d, u)) - supportRadius(Ra, ha, u) - hb[j];
    if (s > sB) {
      sB = s;
      iB = j;
    }
  }
  /* any axis separating by more than the margin ends the test (here, and in the edge loop) */
  if ((sA > sB ? sA : sB) > margin) return CD_OK;
  for (int i = 0; i < 3; i++) {
    axisOf(u, Ra, i);
    for (int j = 0; j < 3; j++) {
      axisOf(v, Rb, j);
      cd_v3cross(n, u, v);
      double len = cd_v3norm(n);
      if (len < 1e-6) continue;
      cd_v3scale(n, n, 1.0 / len);
      double s = fabs(cd_v3dot(d, n)) - supportRadius(Ra, ha, n) - supportRadius(Rb, hb, n);
      if (s > margin) return CD_OK;
      if (s > sE) {
        sE = s;
        eI = i;
        eJ = j;
        cd_v3copy(nE, n);
      }
    }
  }

  /* the preferred axis: A's face, unless B's face or an edge pair is clearly better */
  int refB = sB > sA + k_rel * fabs(sA) + tol;
  double sF = refB ? sB : sA;
  if (eI != NO_AXIS && sE > sF + k_rel * fabs(sF) + tol) {
    if (cd_v3dot(nE, d) < 0) cd_v3scale(nE, nE, -1.0);
    return edgeContact(ia, xa, Ra, ha, eI, ib, xb, Rb, hb, eJ, nE, out);
  }
  if (!refB) {
    axisOf(u, Ra, iA);
    int sign = cd_v3dot(d, u) >= 0 ? 1 : -1; /* A's face towards B */
    return faceContact(ia, ib, 1, xa, Ra, ha, iA, sign, xb, Rb, hb, tol, margin, out);
  }
  axisOf(u, Rb, iB);
  int sign = cd_v3dot(d, u) >= 0 ? -1 : 1; /* B's face towards A */
  return faceContact(ia, ib, 0, xb, Rb, hb, iB, sign, xa, Ra, ha, tol, margin, out);
}
