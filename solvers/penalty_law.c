/* penalty_law.c: the normal and friction forces of seed 002 for one contact (the evaluation
 * itself, the Edinburgh model's branches with it, is inline in penalty_law.h; here the
 * hysteresis of impact models 1 and 2 and the stiffness that sizes the substep).
 *
 * Problem. Given a contact's overlap delta = -g (m), its gap velocity v_n (m/s, < 0 when
 * closing), its tangential slip v_t (m/s) and the state carried from the last evaluation,
 * return the force on body b
 *     f_b = (f_c + f_d) n + f_t,
 * where f_c is the elastic force of the chosen impact model (positive pushes b away from
 * a), f_d = -d_c v_n the linear damping added in every model, and f_t the regularised
 * Coulomb friction. Body a takes -f_b. No force acts while delta <= 0.
 *
 * Reference: seed 002 (Exudyn's ObjectContactSphereSphere, Gerstmayr & Weyrer), which
 * follows Morrissey 2014 (Edinburgh adhesive elasto-plastic model), Hunt & Crossley 1975,
 * Carvalho & Martins 2019 and Gonthier et al. 2004. Every equation below is quoted from
 * the seed; the few points it leaves open are marked "choice".
 */
#include "penalty_law.h"

#include <math.h>

double cd_penaltyHysteresis(const cdMaterial *m, double impact_velocity) {
  double e = m->restitution, k = m->stiffness;
  /* choice: delta_dot_- = 0 (a contact that closed at rest with no minimum impact velocity)
   * has no impact to restitute, and the seed's lambda ~ 1/delta_dot_- is unbounded; it then
   * gets no hysteresis (elastic plus d_c). min_impact_velocity > 0 avoids the case. */
  if (impact_velocity <= 0 || e >= 1) return 0;
  if (m->impact_model == 1) {
    /* Hunt-Crossley: lambda = k_c / delta_dot_- * 3/2 (e_res - 1) */
    return k / impact_velocity * 1.5 * (e - 1);
  }
  if (m->impact_model == 2) {
    if (e > 1.0 / 3.0) {
      /* Carvalho-Martins, e_res > 1/3:
       * lambda = k_c / delta_dot_- * 3/2 (e_res - 1) (11 - e_res) / (1 + 9 e_res) */
      return k / impact_velocity * 1.5 * (e - 1) * (11 - e) / (1 + 9 * e);
    }
    /* Gonthier, 0 < e_res <= 1/3 (the two agree at 1/3; the seed's e_rep is e_res):
     * lambda = k_c / delta_dot_- * (e_res^2 - 1) / e_res */
    return k / impact_velocity * (e * e - 1) / e;
  }
  return 0;
}

double cd_penaltyStiffness(const cdMaterial *m, double w_n, double gravity, double overlap, double speed) {
  double n = m->stiffness_exponent, kc = m->stiffness;
  if (w_n <= 0 || kc <= 0) return 0;
  /* the stiffest spring the contact can show: the un/reloading k2 of the Edinburgh model,
   * or the adhesive branch's slope when it is steeper (both taken with exponent n_exp) */
  double ks = kc;
  if (m->impact_model == 0) {
    if (m->plasticity_ratio > 0) ks = kc / (1 - m->plasticity_ratio);
    if (m->adhesion_coefficient > ks) ks = m->adhesion_coefficient;
  }
  double d_static = pow(gravity / (w_n * kc), 1.0 / n);
  double d_impact = pow((n + 1) * speed * speed / (2 * w_n * kc), 1.0 / (n + 1));
  double d = overlap;
  if (d_static > d) d = d_static;
  if (d_impact > d) d = d_impact;
  if (!(d > 0)) return 0;
  return n == 1 ? ks : n * ks * pow(d, n - 1);
}

double cd_penaltyStepLimit(double omega_contact, double omega2_max) {
  double h = INFINITY;
  if (omega_contact > 0) h = M_PI / (CD_PENALTY_SUBSTEPS_PER_CONTACT * omega_contact);
  if (omega2_max > 0 && 1 / sqrt(omega2_max) < h) h = 1 / sqrt(omega2_max);
  return h;
}
