/* contact_cache.h: the contacts of a force model's step: a Verlet list collided once a step,
 * the narrow phase of its pairs every substep, and the record of the step.
 *
 * Verlet list. At the start of a step of dt (cd_contactCacheBegin) one full collision
 * (cd_collideList) at the margin of a pair at rest plus the distance it can close within the
 * step, cd_collideMargin(scene, 0, dt, s) + dt (U_a + U_b), with each body's speed bound
 * U_i = |v_i| + |g| dt + |w_i| R_i (so that a body at rest that falls into contact within the
 * step is seen too), gives the contacts the step starts from and lists the pairs that gave
 * one. (Under the "auto" margin this is the margin 1e-3 s + dt u of the whole step.) Each
 * substep of h (cd_contactCacheSubstep) runs only the narrow phase of the listed pairs, at
 * the margin a full collision would use then, cd_collideMargin(scene, u_a + u_b, h, s) with
 * the present bounds u_i = |v_i| + |w_i| R_i. (The list covers a time T: the step, T = dt,
 * unless a body would cross more than its own size s_i within it, u_i T > s_i, as bodies
 * started inside each other do when they fly apart: then T = s_i / u_i, and only the pairs
 * within the margin of T are listed, its neighbours.)
 *
 * Guarantee. Every margin rule is at most its value at rest plus the distance the speeds
 * close: m(u, h) <= m(0, h) + h u ("auto": 1e-3 s + h u; a contact_margin: the same m at any
 * speed). Let D_i bound the distance any point
 * of body i has moved since its cover started: the sum of h u_i over the substeps since
 * (semi-implicit Euler moves the centre by h v and turns the body by |w| h, so no point moves
 * farther than h u). Every narrow phase gives no contact while the two bodies are farther
 * apart than the margin, so a pair that was not listed was farther apart than
 * m(0) + T U_a + T U_b when the list was made, hence is now farther apart than
 * m(0) + (T U_a - D_a) + (T U_b - D_b), which is at least the substep's margin, at most
 * m(0) + h (u_a + u_b), as long as every body keeps
 *     D_i + h u_i <= T U_i      (its cover).
 * Before each substep the cache checks this for every body; a body beyond its cover (a
 * collision sped it up) gets its pairs anew at the poses of the moment, with a new cover
 * (contact_cache.c: recollideBodies, which keeps the bound pair by pair); a crowd of such
 * bodies (more than 32 at once) gets a full collision instead. So every substep's contacts
 * that touch (gap <= 0: every force) are exactly those a full collision would give, with the
 * same values, and in key order. (Positive-gap contacts too, except that the box-box
 * separating-axis test can report two boxes within the margin that are farther apart than it;
 * such a contact has a positive gap and exerts no force.) A hollow sphere's inside is reached
 * by a centre crossing the shell, not by a gap closing, so every candidate pair with a hollow
 * sphere is listed.
 *
 * Record. rec (the world's contact set) is the step's record. At the start it holds the
 * step's first collision's contacts at the start-of-step poses (the set the substep count is
 * taken from); a substep updates its contacts in place (point, normal, tangents, gap) and
 * appends a key the record did not have. After the step (cd_contactCacheEnd) rec holds every
 * contact the step had, keyed (a, b, feature a, feature b): each key present in some substep,
 *  - lambda: the impulse on b summed over all its substeps, in its last frame (n, t1, t2),
 *    so that lambda_n n + lambda_t1 t1 + lambda_t2 t2 is the world impulse over the step.
 *    Within the step (between cd_contactCacheBegin and cd_contactCacheEnd) a contact's
 *    lambda is that sum so far in world coordinates (x, y, z), which the force model adds
 *    to, and its t1, t2 are not kept: the end of the step makes them from the last normal
 *    and puts the sum into that frame;
 *  - point, normal, t1, t2 and the penalty state of its last substep;
 *  - gap: the signed gap at the start of the step (DESIGN §3). A contact that first comes
 *    within the margin during the step has the gap the step's first collision found for its
 *    key (its margin covers the step's motion); a key that collision did not have (a box
 *    contact whose clipped points changed, or one of a body that outran its cover) has its
 *    gap when it first appeared.
 * A contact present in the substep before carries its penalty state (fresh = 0); one that
 * was not (it had opened, or is new) starts fresh: what a full collision with a key carry
 * every substep gives.
 */
#ifndef CD_CONTACT_CACHE_H
#define CD_CONTACT_CACHE_H

#include "collide.h"
#include "contact.h"
#include "scene.h"

struct cdWorld;

typedef struct cdContactCache cdContactCache;

cdContactCache *cd_contactCacheMake(const cdScene *scene); /* NULL when memory runs out */
void cd_contactCacheFree(cdContactCache *k);

/* the start of a step of dt at the state of w: makes the Verlet list, fills rec (cleared
 * first) with its contacts at the present poses, sorted by key, and carries by key the
 * penalty state of the contacts of prev (the record of the step before, as the last
 * cd_contactCacheEnd left it) that were present in its last substep. CD_OK or CD_ERR_NOMEM. */
int cd_contactCacheBegin(cdContactCache *k, cdCollider *c, const cdScene *scene, const struct cdWorld *w,
                         double dt, cdContactSet *rec, const cdContactSet *prev);

/* one substep of h at the state of w, with `remaining` (>= h) the time to the end of the step:
 * re-collides first when the guarantee above would fail, then updates rec's contacts of the
 * listed pairs. *live (valid until the next call) gets the indices into rec of this
 * substep's contacts, in key order, *nlive of them. CD_OK or CD_ERR_NOMEM. */
int cd_contactCacheSubstep(cdContactCache *k, cdCollider *c, const cdScene *scene, const struct cdWorld *w,
                           double h, double remaining, cdContactSet *rec, const int **live, int *nlive);

/* the end of the step: rec keeps the contacts present in some substep, each with the gap of
 * the start of the step (above), sorted by key. CD_OK or CD_ERR_NOMEM. */
int cd_contactCacheEnd(cdContactCache *k, cdContactSet *rec);

/* the contacts the next cd_contactCacheBegin would start from (valid until the next call),
 * without touching the list or the record; NULL when memory runs out */
const cdContactSet *cd_contactCacheProbe(cdContactCache *k, cdCollider *c, const cdScene *scene,
                                         const struct cdWorld *w, double dt);

/* full collisions since the cache was made beyond the one a step (a body outran the list) */
long cd_contactCacheRecollisions(const cdContactCache *k);

#endif
