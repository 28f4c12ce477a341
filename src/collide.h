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

cdCollider *cd_colliderMake(const cdScene *scene); /* NULL when memory runs out */
void cd_colliderFree(cdCollider *c);

/* appends to out (cleared first) every contact of the poses x (nbody x 3), R (nbody x 9,
 * row-major body-to-world rotations), given velocities v (nbody x 6: linear, angular,
 * world) used for the velocity-adaptive margin over a step dt; sorts out by key.
 * Returns CD_OK or CD_ERR_NOMEM. */
int cd_collide(cdCollider *c, const cdScene *scene, const double *x, const double *R, const double *v,
               double dt, cdContactSet *out);

/* the margin used for a pair, m: the scene's contact_margin when it gives a distance, else
 * ("auto") a small fixed part plus the distance the pair can close within dt at the given
 * speeds. The one place the margin is decided (collide.c explains both). */
double cd_collideMargin(const cdScene *scene, double closing_speed_bound, double dt, double size_scale);

#endif
