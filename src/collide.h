/* collide.h: broad and narrow phase, from the bodies' poses to the contact set.
 *
 * Pairs: sphere-ground, sphere-sphere, sphere inside a hollow sphere, box-ground,
 * sphere-box, box-box. Each contact follows contact.h: normal from a to b, signed gap,
 * point midway between the surfaces, tangent frame from cd_tangentFrame, feature codes.
 * Candidates include positive gaps up to a margin (see cd_collideMargin) so that the
 * phi/dt stabilisation and the penalty model's approach see contacts before they close.
 */
#ifndef CD_COLLIDE_H
#define CD_COLLIDE_H

#include "contact.h"
#include "scene.h"

typedef struct cdCollider cdCollider; /* broad-phase workspace, sized for one scene */
struct cdContactCache;

cdCollider *cd_colliderMake(const cdScene *scene); /* NULL when memory runs out */
void cd_colliderFree(cdCollider *c);

/* the force models' contact cache (contact_cache.h), kept with the collider between steps:
 * made by the first call, freed with the collider; NULL when memory runs out */
struct cdContactCache *cd_colliderCache(cdCollider *c, const cdScene *scene);

/* how many times the broad phase has run (collide.c keeps its candidates across steps) */
long cd_colliderBroadphaseRuns(const cdCollider *c);

/* appends to out (cleared first) every contact of the poses x (nbody x 3), R (nbody x 9,
 * row-major body-to-world rotations), given velocities v (nbody x 6: linear, angular,
 * world) used for the velocity-adaptive margin over a step dt; sorts out by key.
 * Returns CD_OK or CD_ERR_NOMEM. */
int cd_collide(cdCollider *c, const cdScene *scene, const double *x, const double *R, const double *v,
               double dt, cdContactSet *out);

/* pairs of bodies (a, b): a < b, a = -1 for b against the ground */
typedef struct cdPairList {
  int n, cap;
  int *ab; /* (cap x 2) a, b */
} cdPairList;

/* appends (a, b) to p; CD_OK or CD_ERR_NOMEM */
int cd_pairListPush(cdPairList *p, int a, int b);
/* sorts p by (a, b), each pair once */
void cd_pairListSort(cdPairList *p);

/* into <- the union of into and add, both sorted by (a, b): sorted, each pair once.
 * CD_OK or CD_ERR_NOMEM (into unchanged) */
int cd_pairListMerge(cdPairList *into, const cdPairList *add);

/* the Verlet list of a force model's step: cd_collide at the margin of a pair at rest plus
 * the distance the pair can close within dt at the speeds v, cd_collideMargin(scene, 0, dt,
 * s) + dt (u_a + u_b) (the same as cd_collide's under the "auto" margin), and in pairs
 * (cleared first) the pairs whose narrow phase can give a contact as the bodies move: every
 * pair that gave one here, and every candidate pair with a hollow sphere (a sphere reaches a
 * shell's inside by its centre crossing the shell, not by a gap closing, collide.c), sorted
 * by (a, b). */
int cd_collideList(cdCollider *c, const cdScene *scene, const double *x, const double *R, const double *v,
                   double dt, cdContactSet *out, cdPairList *pairs);

/* the narrow phase of one pair (a < b; a = -1: b against the ground) at the given margin:
 * appends the pair's contacts with gap <= margin to out, in key (feature) order. CD_OK or
 * CD_ERR_NOMEM. */
int cd_collidePair(const cdScene *scene, int a, int b, const double *x, const double *R, double margin,
                   cdContactSet *out);

/* the margin used for a pair, m: the scene's contact_margin when it gives a distance, else
 * ("auto") a small fixed part plus the distance the pair can close within dt at the given
 * speeds. The one place the margin is decided (collide.c explains both; inline: the force
 * models' substeps take it for every listed pair). */
static inline double cd_collideMargin(const cdScene *scene, double closing_speed_bound, double dt,
                                      double size_scale) {
  if (scene->contact_margin_given) return scene->contact_margin;
  return 1e-3 * size_scale + dt * closing_speed_bound;
}

#endif
