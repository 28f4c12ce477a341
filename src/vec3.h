/* vec3.h: small fixed-size linear algebra (3-vectors, 3x3 matrices, unit quaternions).
 *
 * Conventions: vectors are double[3]; matrices double[9], row-major; quaternions
 * double[4] = (w, x, y, z), unit, rotating body coordinates into world coordinates.
 * Output arguments may alias inputs unless a function says otherwise.
 */
#ifndef CD_VEC3_H
#define CD_VEC3_H

#include <math.h>

static inline void cd_v3set(double r[3], double x, double y, double z) {
  r[0] = x;
  r[1] = y;
  r[2] = z;
}
static inline void cd_v3copy(double r[3], const double a[3]) {
  r[0] = a[0];
  r[1] = a[1];
  r[2] = a[2];
}
static inline void cd_v3add(double r[3], const double a[3], const double b[3]) {
  r[0] = a[0] + b[0];
  r[1] = a[1] + b[1];
  r[2] = a[2] + b[2];
}
static inline void cd_v3sub(double r[3], const double a[3], const double b[3]) {
  r[0] = a[0] - b[0];
  r[1] = a[1] - b[1];
  r[2] = a[2] - b[2];
}
static inline void cd_v3scale(double r[3], const double a[3], double s) {
  r[0] = a[0] * s;
  r[1] = a[1] * s;
  r[2] = a[2] * s;
}
/* r = a + s b */
static inline void cd_v3addScaled(double r[3], const double a[3], const double b[3], double s) {
  r[0] = a[0] + s * b[0];
  r[1] = a[1] + s * b[1];
  r[2] = a[2] + s * b[2];
}
static inline double cd_v3dot(const double a[3], const double b[3]) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}
/* r = a x b; r must not alias a or b */
static inline void cd_v3cross(double r[3], const double a[3], const double b[3]) {
  r[0] = a[1] * b[2] - a[2] * b[1];
  r[1] = a[2] * b[0] - a[0] * b[2];
  r[2] = a[0] * b[1] - a[1] * b[0];
}
static inline double cd_v3norm(const double a[3]) { return sqrt(cd_v3dot(a, a)); }
/* normalizes in place; returns the old norm (a is left alone when it is 0) */
static inline double cd_v3normalize(double a[3]) {
  double n = cd_v3norm(a);
  if (n > 0) cd_v3scale(a, a, 1.0 / n);
  return n;
}

/* X = A^-1 (3x3, row-major) by cofactors; A must be invertible (a body's inverse inertia) */
static inline void cd_m3inverse(double X[9], const double A[9]) {
  double c00 = A[4] * A[8] - A[5] * A[7], c01 = A[5] * A[6] - A[3] * A[8], c02 = A[3] * A[7] - A[4] * A[6];
  double id = 1.0 / (A[0] * c00 + A[1] * c01 + A[2] * c02);
  X[0] = c00 * id;
  X[1] = (A[2] * A[7] - A[1] * A[8]) * id;
  X[2] = (A[1] * A[5] - A[2] * A[4]) * id;
  X[3] = c01 * id;
  X[4] = (A[0] * A[8] - A[2] * A[6]) * id;
  X[5] = (A[2] * A[3] - A[0] * A[5]) * id;
  X[6] = c02 * id;
  X[7] = (A[1] * A[6] - A[0] * A[7]) * id;
  X[8] = (A[0] * A[4] - A[1] * A[3]) * id;
}

/* r = A a; r must not alias a */
static inline void cd_m3mulv(double r[3], const double A[9], const double a[3]) {
  r[0] = A[0] * a[0] + A[1] * a[1] + A[2] * a[2];
  r[1] = A[3] * a[0] + A[4] * a[1] + A[5] * a[2];
  r[2] = A[6] * a[0] + A[7] * a[1] + A[8] * a[2];
}
/* r = A^T a; r must not alias a */
static inline void cd_m3mulvT(double r[3], const double A[9], const double a[3]) {
  r[0] = A[0] * a[0] + A[3] * a[1] + A[6] * a[2];
  r[1] = A[1] * a[0] + A[4] * a[1] + A[7] * a[2];
  r[2] = A[2] * a[0] + A[5] * a[1] + A[8] * a[2];
}
/* R = A B; R must not alias A or B */
static inline void cd_m3mul(double R[9], const double A[9], const double B[9]) {
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      R[3 * i + j] = A[3 * i] * B[j] + A[3 * i + 1] * B[3 + j] + A[3 * i + 2] * B[6 + j];
}
/* C = the adjugate of A (so A^-1 = C / det A where det A != 0); returns det A. C must not
 * alias A */
static inline double cd_m3adjugate(double C[9], const double A[9]) {
  C[0] = A[4] * A[8] - A[5] * A[7], C[1] = A[2] * A[7] - A[1] * A[8], C[2] = A[1] * A[5] - A[2] * A[4];
  C[3] = A[5] * A[6] - A[3] * A[8], C[4] = A[0] * A[8] - A[2] * A[6], C[5] = A[2] * A[3] - A[0] * A[5];
  C[6] = A[3] * A[7] - A[4] * A[6], C[7] = A[1] * A[6] - A[0] * A[7], C[8] = A[0] * A[4] - A[1] * A[3];
  return A[0] * C[0] + A[1] * C[3] + A[2] * C[6];
}
/* R = A diag(d) A^T (a body inertia rotated to world); R must not alias A */
static inline void cd_m3rotateDiag(double R[9], const double A[9], const double d[3]) {
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      R[3 * i + j] = A[3 * i] * d[0] * A[3 * j] + A[3 * i + 1] * d[1] * A[3 * j + 1] +
                     A[3 * i + 2] * d[2] * A[3 * j + 2];
}

/* rotation matrix of a unit quaternion (w, x, y, z); columns are the body axes in world */
static inline void cd_quatToMat(double R[9], const double q[4]) {
  double w = q[0], x = q[1], y = q[2], z = q[3];
  R[0] = 1 - 2 * (y * y + z * z);
  R[1] = 2 * (x * y - w * z);
  R[2] = 2 * (x * z + w * y);
  R[3] = 2 * (x * y + w * z);
  R[4] = 1 - 2 * (x * x + z * z);
  R[5] = 2 * (y * z - w * x);
  R[6] = 2 * (x * z - w * y);
  R[7] = 2 * (y * z + w * x);
  R[8] = 1 - 2 * (x * x + y * y);
}
/* r = a * b (Hamilton product); r must not alias a or b */
static inline void cd_quatMul(double r[4], const double a[4], const double b[4]) {
  r[0] = a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3];
  r[1] = a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2];
  r[2] = a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1];
  r[3] = a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0];
}
static inline double cd_quatNormalize(double q[4]) {
  double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  if (n > 0)
    for (int i = 0; i < 4; i++) q[i] /= n;
  return n;
}
/* q <- exp(h w / 2) q: the exact rotation by the world angular velocity w held for time h */
static inline void cd_quatIntegrate(double q[4], const double w[3], double h) {
  double wn = cd_v3norm(w);
  double angle = wn * h;
  if (angle == 0) return;
  double s = sin(0.5 * angle) / wn, dq[4] = {cos(0.5 * angle), w[0] * s, w[1] * s, w[2] * s};
  double r[4];
  cd_quatMul(r, dq, q);
  for (int i = 0; i < 4; i++) q[i] = r[i];
  cd_quatNormalize(q);
}
/* q <- exp(h w / 2) q as cd_quatIntegrate, without renormalising q afterwards (the caller
 * normalises it: |q| drifts by round-off a call). For theta = h |w| / 2 with theta^2 <= 1e-3
 * the rotation's cos(theta) and sin(theta) / |w| come from their Taylor series to the theta^8
 * term (the first one left out, theta^10 / 10!, is below 3e-22: under half an ulp of 1), with
 * no sin, cos, sqrt or division (the constants 1/k fold); a larger angle goes through cd_quatIntegrate */
static inline void cd_quatIntegrateSmall(double q[4], const double w[3], double h) {
  double t = 0.25 * h * h * (w[0] * w[0] + w[1] * w[1] + w[2] * w[2]); /* theta^2 */
  if (!(t <= 1e-3)) {
    cd_quatIntegrate(q, w, h);
    return;
  }
  double c = 1 - 0.5 * t * (1 - t * (1.0 / 12) * (1 - t * (1.0 / 30) * (1 - t * (1.0 / 56))));
  double s = 0.5 * h * (1 - t * (1.0 / 6) * (1 - t * (1.0 / 20) * (1 - t * (1.0 / 42) * (1 - t * (1.0 / 72)))));
  double dq[4] = {c, w[0] * s, w[1] * s, w[2] * s}, r[4];
  cd_quatMul(r, dq, q);
  for (int i = 0; i < 4; i++) q[i] = r[i];
}

/* an orthonormal tangent pair (t1, t2) for unit n, chosen deterministically so that the
 * frame is stable in time: t1 is the projection of the world axis least aligned with n */
static inline void cd_tangentFrame(const double n[3], double t1[3], double t2[3]) {
  double ax = fabs(n[0]), ay = fabs(n[1]), az = fabs(n[2]);
  double e[3] = {0, 0, 0};
  if (ax <= ay && ax <= az)
    e[0] = 1;
  else if (ay <= az)
    e[1] = 1;
  else
    e[2] = 1;
  cd_v3addScaled(t1, e, n, -cd_v3dot(e, n));
  cd_v3normalize(t1);
  cd_v3cross(t2, n, t1);
}

#endif
