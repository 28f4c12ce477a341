/* contact.h: contact points and the per-step contact set (DESIGN §3-4 conventions).
 *
 * A contact joins body a and body b (a = -1 is the ground; a < b otherwise). Its normal
 * points from a towards b; the impulse stored is the one that acts on b (a gets the
 * opposite). The frame (normal, t1, t2) is right-handed and chosen deterministically
 * from the normal (cd_tangentFrame), so it is stable from step to step.
 */
#ifndef CD_CONTACT_H
#define CD_CONTACT_H

#include <stdint.h>

/* feature codes: which part of a shape touches (for the feature key). A sphere is always
 * feature 0; a box vertex is 0..7 (bit i set = +half along axis i), an edge is 8 + 0..11,
 * a face is 20 + 0..5 (20 + 2 axis + (sign > 0)); the ground is feature 0. */
enum { CD_FEAT_VERTEX = 0, CD_FEAT_EDGE = 8, CD_FEAT_FACE = 20 };

typedef struct cdContact {
  int body[2];         /* a, b; a = -1 for the ground */
  uint32_t feature[2]; /* feature of a, of b; with body[] the key that follows a contact in time */
  double point[3];     /* world, m: midway between the two surfaces */
  double normal[3];    /* unit, world, from a towards b */
  double t1[3], t2[3]; /* unit tangents, world; (normal, t1, t2) right-handed */
  double gap;          /* signed distance at the start of the step, m; < 0 is penetration */
  /* filled by the backend and the step */
  double lambda[3];    /* impulse on b over the step in (n, t1, t2), N s; in: warm start */
  double beta;         /* LCP: the friction-bound multiplier beta (m/s), else 0 */
  double state[4];     /* penalty (seed 002 data coordinates): gap, |v_t|, impact velocity,
                          plastic overlap */
  double post_vn;      /* normal relative velocity of b w.r.t. a after the step, m/s */
  double post_vt[3];   /* tangential relative velocity after the step, world, m/s */
  int fresh;           /* 1 when no contact of the previous step had this key */
} cdContact;

typedef struct cdContactSet {
  int ncon;        /* contacts in use */
  int cap;         /* allocated */
  cdContact *con;  /* (cap) */
  int nalpha;      /* LCP friction directions m per contact, else 0 */
  double *alpha;   /* (cap x nalpha) LCP multipliers alpha, N s */
} cdContactSet;

void cd_contactSetInit(cdContactSet *s);
void cd_contactSetFree(cdContactSet *s);
void cd_contactSetClear(cdContactSet *s);
/* the most contacts a set holds (256 MiB of cdContact): beyond it a push fails as if
 * memory ran out, so a degenerate scene (thousands of bodies at one point) cannot
 * exhaust the memory or overflow the int counts */
#define CD_CONTACT_MAX (1 << 20)
/* a new zeroed contact at the end, or NULL when memory runs out or at CD_CONTACT_MAX */
cdContact *cd_contactSetPush(cdContactSet *s);
int cd_contactSetSetAlpha(cdContactSet *s, int nalpha); /* 0 ok, -1 no memory */

/* compares two contacts by key (body a, body b, feature a, feature b) */
int cd_contactKeyCompare(const cdContact *x, const cdContact *y);
/* sorts by key: the order in which contacts are solved and written (determinism) */
void cd_contactSetSort(cdContactSet *s);
/* copies lambda, beta, state and alpha from the contact of prev with the same key,
 * and sets fresh; both sets sorted. O(n + m). */
void cd_contactSetCarry(cdContactSet *cur, const cdContactSet *prev);

#endif
