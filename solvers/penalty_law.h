/* penalty_law.h: the compliant contact law of seed 002 (ObjectContactSphereSphere) as pure
 * functions of one contact; the caps that make its dissipative forces stable in a substep of
 * any length (cd_penaltyLimitForce); and the spring stiffness that sizes the substep.
 *
 * Conventions (those of contact.h): the gap g is the signed distance (g < 0: overlap
 * delta = -g > 0); v_n = (relative velocity of b w.r.t. a) . n is the gap velocity
 * (v_n < 0: approaching); v_t is the tangential part of that relative velocity at the
 * contact point. Every force returned acts on body b (a takes the opposite): the normal
 * force f_n = f_c + f_d along n (positive pushes b away from a), the friction force f_t
 * against v_t. Units: N, m, s; the stiffness k_c is in N/m^n_exp.
 *
 * The evaluation of one contact (cd_penaltyContactForce, cd_penaltyEdinburgh,
 * cd_penaltyFriction, cd_penaltyLimitForce) is defined here, inline: the backend runs it for
 * every contact of every substep, and the calls, returning the force through memory, cost
 * about a tenth of the run on the 1000-sphere pile (S2 10) (the Edinburgh model's call
 * alone 2%). The rest, with the law's references and choices, is in penalty_law.c; the
 * equations quoted below are the seed's as well.
 */
#ifndef CD_PENALTY_LAW_H
#define CD_PENALTY_LAW_H

#include <math.h>

#include "scene.h"

/* the per-contact state, cdContact.state[4]: the seed's data coordinates */
enum {
  CD_PENALTY_GAP = 0,     /* gap at the last evaluation, m (< 0: was in contact) */
  CD_PENALTY_SLIP = 1,    /* |v_t| at the last evaluation, m/s */
  CD_PENALTY_IMPACT = 2,  /* impact velocity delta_dot_- of the current contact, m/s (>= 0) */
  CD_PENALTY_PLASTIC = 3  /* plastic overlap delta_p (Edinburgh model), m; 0 after separation */
};

/* substeps per contact duration pi/omega that the automatic step aims at (see
 * cd_penaltyStepLimit): enough for the achieved restitution to stay within 1% of the
 * model's at every e tested (tests/test_penalty_law.c) */
#define CD_PENALTY_SUBSTEPS_PER_CONTACT 30

typedef struct cdPenaltyForce {
  double fc;      /* elastic part f_c (with the hysteresis of impact models 1, 2), N */
  double fd;      /* linear damping f_d = -d_c v_n, N */
  double fn;      /* f_c + f_d, N, on b along n */
  double cn;      /* the normal damping coefficient d_c + |lambda| delta^n_exp, N s/m: the
                     dissipative part of fn is -cn v_n (the rest is elastic) */
  double ft[3];   /* friction force on b, N, in the frame v_t was given in */
  double ct;      /* the friction's coefficient c, f_t = -c v_t, N s/m */
  double slip;    /* |v_t|, m/s */
  int touching;   /* 1 when delta > 0 (the forces above are then active) */
  int branch;     /* impact model 0: Edinburgh branch 1 (virgin loading), 2 (un/reloading),
                     3 (adhesive); 0 for models 1, 2 and when not touching */
} cdPenaltyForce;

/* x^n for x >= 0: the linear spring (n = 1, the default) without a pow() */
static inline double cd_penaltyPow(double x, double n) { return n == 1 ? x : pow(x, n); }

/* the hysteresis factor lambda of impact models 1 and 2 for the impact velocity
 * delta_dot_- (m/s): N s/m^(n_exp+1), <= 0. 0 for model 0, for e_res >= 1 and when
 * delta_dot_- <= 0 (a contact that began without approach speed: the seed's lambda
 * is unbounded there; see cd_penaltyContactForce). */
double cd_penaltyHysteresis(const cdMaterial *m, double impact_velocity);

/* the elastic force f_c of the Edinburgh adhesive elasto-plastic model (impact model 0)
 * at overlap delta > 0. *plastic_overlap is delta_p in and out (it grows on virgin
 * loading, stays otherwise); *branch gets 1, 2 or 3. With plasticity_ratio = 0 the model
 * is off, as seed 002 says: the plain spring k_c delta^n_exp (branch 1), without f_adh or
 * k_adh. */
static inline double cd_penaltyEdinburgh(const cdMaterial *m, double delta, double *plastic_overlap, int *branch) {
  double n = m->stiffness_exponent, kc = m->stiffness, lp = m->plasticity_ratio;
  double fadh = m->pull_off_force, kadh = m->adhesion_coefficient, nadh = m->adhesion_exponent;
  /* k2 = k_c / (1 - lambda_P): the un/reloading stiffness */
  double dn = cd_penaltyPow(delta, n);
  if (lp == 0) {
    /* seed 002: lambda_P is "set to 0 in order to fully deactivate" the model (Exudyn adds
     * f_adh and k_adh only when it is not 0): the plain spring, neither adhesion acts */
    *branch = 1;
    *plastic_overlap = 0.0;
    return kc * dn;
  }
  double k2 = kc / (1 - lp);
  double dpn = pow(*plastic_overlap, n);
  double elastic = kc * dn;             /* k_c delta^n_exp */
  double unload = k2 * (dn - dpn);      /* k2 (delta^n_exp - delta_p^n_exp) */
  double adhesive = -kadh * pow(delta, nadh); /* -k_adh delta^n_adh */
  if (unload >= elastic) {
    /* branch 1, k2 (delta^n - delta_p^n) >= k_c delta^n, virgin loading:
     * f_c = -f_adh + k_c delta^n_exp. Here delta_p <= lambda_P^(1/n_exp) delta, and the
     * plastic overlap follows the loading: delta_p = lambda_P^(1/n_exp) delta */
    *branch = 1;
    *plastic_overlap = pow(lp, 1.0 / n) * delta;
    return -fadh + elastic;
  }
  if (unload > adhesive) {
    /* branch 2, k_c delta^n > k2 (delta^n - delta_p^n) > -k_adh delta^n_adh, un/reloading:
     * f_c = -f_adh + k2 (delta^n_exp - delta_p^n_exp); delta_p stays */
    *branch = 2;
    return -fadh + unload;
  }
  /* branch 3, -k_adh delta^n_adh >= k2 (delta^n - delta_p^n), adhesive:
   * f_c = -f_adh - k_adh delta^n_adh; delta_p stays (the boundary with branch 2, where
   * both give the same force, is put here) */
  *branch = 3;
  return -fadh + adhesive;
}

/* regularised Coulomb friction: ft = -c vt, c = mu max(fn, 0) / max(v_reg, |vt|), with slip
 * = |vt|; returns c. Only the compressive part of fn gives friction (a tensile fn would
 * otherwise drive the slip). */
static inline double cd_penaltyFriction(double mu, double v_reg, double fn, const double vt[3], double slip, double ft[3]) {
  double load = fn > 0 ? fn : 0;
  /* f_t = -v_t mu_d f_n / v_reg if v_rel < v_reg, -v_t mu_d f_n / v_rel else (v_rel = slip) */
  double scale = v_reg > slip ? v_reg : slip;
  double c = scale > 0 ? mu * load / scale : 0;
  for (int i = 0; i < 3; i++) ft[i] = -c * vt[i];
  return c;
}

/* the normal part of cd_penaltyContactForce (below), given slip = |v_t|: every field but the
 * friction's (ft and ct 0), and the updated state */
static inline void cd_penaltyNormalForce(const cdMaterial *m, double gap, double vn, double slip, int fresh,
                                         double state[4], cdPenaltyForce *out) {
  double delta = -gap;
  int was_touching = !fresh && state[CD_PENALTY_GAP] < 0;
  if (fresh) state[CD_PENALTY_IMPACT] = state[CD_PENALTY_PLASTIC] = 0;
  out->fc = out->fd = out->fn = out->cn = out->ct = 0;
  out->ft[0] = out->ft[1] = out->ft[2] = 0;
  out->branch = 0;
  out->touching = delta > 0;
  out->slip = slip;
  state[CD_PENALTY_GAP] = gap;
  state[CD_PENALTY_SLIP] = out->slip;
  if (delta <= 0) {
    /* separated: the plastic overlap is set back to 0 (seed, data[3]) */
    state[CD_PENALTY_PLASTIC] = 0;
    return;
  }
  if (!was_touching) {
    /* first touch: delta_dot_- = max(delta_dot_-,min ; -v_delta,n), kept for the whole
     * contact (choice: never below 0, a contact that opens while it closes has no impact) */
    double vin = -vn > m->min_impact_velocity ? -vn : m->min_impact_velocity;
    state[CD_PENALTY_IMPACT] = vin > 0 ? vin : 0;
  }
  out->cn = m->damping;
  if (m->impact_model == 0) {
    out->fc = cd_penaltyEdinburgh(m, delta, &state[CD_PENALTY_PLASTIC], &out->branch);
  } else {
    /* impact models 1 and 2: f_c = k_c delta^n_exp + lambda delta^n_exp v_delta,n
     * (lambda <= 0: more force while closing, less while opening) */
    double dn = cd_penaltyPow(delta, m->stiffness_exponent);
    double lambda = cd_penaltyHysteresis(m, state[CD_PENALTY_IMPACT]);
    out->fc = m->stiffness * dn + lambda * dn * vn;
    out->cn -= lambda * dn;
  }
  /* f_d = -d_c v_delta,n, in every model */
  out->fd = -m->damping * vn;
  out->fn = out->fc + out->fd;
}

/* the whole law for one contact evaluation: from the gap, v_n, v_t and the state carried
 * from the last evaluation (fresh = 1 when there was none), the forces on b and the
 * updated state (state[4], in and out). The impact velocity is taken when the contact
 * closes (delta > 0 now, not before) as max(min_impact_velocity, -v_n, 0) and kept until
 * it opens; the plastic overlap is reset to 0 when the contact opens (gap >= 0). */
static inline void cd_penaltyContactForce(const cdMaterial *m, double gap, double vn, const double vt[3], int fresh,
                                          double state[4], cdPenaltyForce *out) {
  cd_penaltyNormalForce(m, gap, vn, sqrt(vt[0] * vt[0] + vt[1] * vt[1] + vt[2] * vt[2]), fresh, state, out);
  if (out->touching)
    out->ct = cd_penaltyFriction(m->friction, m->friction_regularization, out->fn, vt, out->slip, out->ft);
}

/* what cd_penaltyLimitForce changed (bit flags) */
enum { CD_PENALTY_LIMIT_NORMAL = 1, CD_PENALTY_LIMIT_FRICTION = 2 };

/* the forces of one contact evaluation (f, from cd_penaltyContactForce or
 * cd_penaltyNormalForce with the same v_n, v_t) made safe for one semi-implicit Euler substep of h: each dissipative part is capped
 * at the impulse that brings its velocity to zero within the substep, so that it can only
 * reduce that velocity, never reverse it (penalty.c's opening comment derives it):
 *   normal:   cn' = min(cn, 1 / (h w_n)), fn' = fn + (cn - cn') v_n (the elastic part stays);
 *   friction: from fn' by the regularised law, then |f_t| <= |v_t| / (h w_t).
 * w_n, w_t (1/kg): the contact's inverse effective masses along n and (the largest) in the
 * tangent plane, each body's multiplied by its number of touching contacts (mass
 * splitting; 1 and 1 for a lone contact). When neither cap is active f is the regularised
 * law exactly (cd_penaltyContactForce's). The friction is computed here, after the normal
 * cap (f's own is not read): the backend takes f from cd_penaltyNormalForce and computes it
 * once. Returns the CD_PENALTY_LIMIT_ flags of the caps that acted. */
static inline int cd_penaltyLimitForce(const cdMaterial *m, double h, double w_n, double w_t, double vn,
                                       const double vt[3], cdPenaltyForce *f) {
  int acted = 0;
  if (!f->touching) return 0;
  /* normal: the dissipative part -cn v_n alone would change v_n by -h w_n cn v_n; beyond
   * h w_n cn = 1 it would reverse v_n, so cn is held there. Both its pieces (d_c and the
   * hysteresis) shrink by the same factor; the elastic part is untouched. */
  if (h > 0 && w_n > 0 && h * w_n * f->cn > 1) {
    double cn = 1 / (h * w_n), s = cn / f->cn;
    double hyst = -(f->cn - m->damping) * vn; /* lambda delta^n v_n, the hysteresis in fc */
    f->fc += (s - 1) * hyst;
    f->fd *= s;
    f->fn = f->fc + f->fd;
    f->cn = cn;
    acted |= CD_PENALTY_LIMIT_NORMAL;
  }
  f->ct = cd_penaltyFriction(m->friction, m->friction_regularization, f->fn, vt, f->slip, f->ft);
  /* friction: f_t = -c v_t, c = mu max(fn, 0) / max(v_reg, |v_t|) as cd_penaltyFriction
   * has it, changes v_t by at most -h w_t c v_t (w_t the largest tangent inverse mass);
   * beyond h w_t c = 1 it would reverse the slip, so c is held at 1 / (h w_t): the impulse
   * that stops the slip within the substep. (The coefficient is compared, not |f_t|, which
   * could overflow where c does not.) */
  if (h > 0 && w_t > 0 && h * w_t * f->ct > 1) {
    double c = 1 / (h * w_t);
    f->ct = c;
    for (int i = 0; i < 3; i++) f->ft[i] = -c * vt[i];
    acted |= CD_PENALTY_LIMIT_FRICTION;
  }
  return acted;
}

/* the tangent normal stiffness (N/m) of the contact for the step-size estimate, taken at
 * the largest of: the present overlap, the static overlap under the weight of the pair's
 * effective mass (|g| / (w_n k_c))^(1/n_exp), and the largest overlap of an impact at
 * `speed`, ((n_exp + 1) speed^2 / (2 w_n k_c))^(1/(n_exp+1)); the Edinburgh model's
 * stiffest branch. w_n: the pair's inverse effective mass along n (1/kg); gravity: |g|.
 * Only the spring sizes the substep: the dissipative forces (friction, d_c, hysteresis)
 * are capped per substep by cd_penaltyLimitForce and stable at any h. */
double cd_penaltyStiffness(const cdMaterial *m, double w_n, double gravity, double overlap, double speed);

/* the substep for contacts with the largest single-contact frequency omega_contact
 * (rad/s) and an upper bound omega2_max on the squared frequencies of the coupled system:
 *     h = min(pi / (N omega_contact), 1 / sqrt(omega2_max)),
 * N = CD_PENALTY_SUBSTEPS_PER_CONTACT: accuracy (restitution), then stability of the
 * semi-implicit Euler at half its limit 2/omega. With the capped damping (h c w <= 1)
 * h omega <= 1 keeps the damped spring stable too: h^2 omega^2 <= 4 - 2 h c w. A zero
 * input sets no bound; INFINITY when none is set. */
double cd_penaltyStepLimit(double omega_contact, double omega2_max);

#endif
