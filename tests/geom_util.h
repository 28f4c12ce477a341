/* geom_util.h: small fixtures shared by the collision tests. */
#ifndef CD_GEOM_UTIL_H
#define CD_GEOM_UTIL_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "contact.h"
#include "scene.h"
#include "vec3.h"

static const double kI[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};

static inline cdBodyDef boxDef(double hx, double hy, double hz) {
  cdBodyDef b;
  memset(&b, 0, sizeof b);
  b.shape = CD_BOX;
  cd_v3set(b.half, hx, hy, hz);
  b.orientation[0] = 1;
  return b;
}

/* rotation by angle about a (not necessarily unit) axis */
static inline void rotAxisAngle(double R[9], double ax, double ay, double az, double angle) {
  double n = sqrt(ax * ax + ay * ay + az * az), s = sin(0.5 * angle) / n;
  double q[4] = {cos(0.5 * angle), ax * s, ay * s, az * s};
  cd_quatToMat(R, q);
}

static inline double urand(double lo, double hi) { return lo + (hi - lo) * (rand() / (double)RAND_MAX); }

/* the frame of a contact: unit normal, orthonormal, right-handed, from cd_tangentFrame */
static inline int frameOk(const cdContact *c) {
  double x[3];
  cd_v3cross(x, c->normal, c->t1);
  double err = fabs(cd_v3norm(c->normal) - 1) + fabs(cd_v3norm(c->t1) - 1) + fabs(cd_v3dot(c->normal, c->t1));
  for (int k = 0; k < 3; k++) err += fabs(x[k] - c->t2[k]);
  return isfinite(err) && err < 1e-12;
}

#endif
