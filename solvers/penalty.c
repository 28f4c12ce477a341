/* penalty.c: the penalty backend: compliant spring-damper contact, integrated explicitly.
 *
 * Problem. There is no system to solve: every contact point i of world->contacts (each
 * point of a box face or edge contact separately) exerts the force of seed 002's law
 * (penalty_law.c) on b and its opposite on a,
 *     F_i = (f_c + f_d) n_i + f_t,    applied at the contact point p_i,
 * from the contact's gap, the relative velocity of b w.r.t. a at p_i,
 *     v_rel = v_b + w_b x (p_i - x_b) - (v_a + w_a x (p_i - x_a)),
 *     v_n = v_rel . n_i,   v_t = v_rel - v_n n_i,
 * and the state carried by contact key, its dissipative parts capped for the substep
 * (Dissipation, below; the law itself when the caps do not act). Body b gets F_i and the torque (p_i - x_b) x F_i,
 * body a gets -F_i and (p_i - x_a) x (-F_i) (the ground takes nothing). The core then
 * integrates every substep of length h with semi-implicit Euler,
 *     v += h M^-1 (f_ext + force),  x += h v,  q <- exp(h w / 2) q,
 * and collides again, so the law sees the gap and velocity at the start of each substep.
 * lambda of a contact accumulates F_i h in (n, t1, t2): the impulse over the step.
 *
 * Lever arms. The seed's lever arms are n (r_0 - delta/2) for sphere 0 and
 * -h_1 n (r_1 - h_1 delta/2) for sphere 1 (h_1 = -1 for a hollow sphere). The collision
 * code puts p midway between the two surfaces, so p - x equals them exactly for
 * sphere-sphere and sphere-in-hollow-sphere contacts (for a hollow a: p - x_a =
 * -n (r_a + delta/2), for the inner b: p - x_b = -n (r_b - delta/2), the seed's formulas
 * with its markers 0 = b, 1 = a and its normal -n). For box features and the ground the
 * lever arm is likewise p - centre, the point midway between the surfaces.
 * Hollow spheres: the collision gives n so that a push of b along n separates
 * the pair, and gap = r_hollow - r_inner - |x_b - x_a| < 0 on overlap, which is the seed's
 * g with h_1 = -1; v_n = v_rel . n is the seed's v_delta,n in either labelling.
 *
 * Dissipation, integrated so that it is stable at any substep. The explicit step resolves
 * the springs; the dissipative forces (regularised friction, normal damping) are applied
 * with a cap instead of being resolved. Seed 002's friction f_t = -c v_t, c = mu f_n /
 * max(v_reg, |v_t|), is a damper of rate c w_t (w_t: inverse effective tangential mass at
 * the contact). In a sliding impact f_n reaches 1e3-1e4 N, and with v_reg = 1e-3 and the
 * rotational inertia in w_t (1/m + r^2/I = 3.5/m for a solid sphere) that rate is 1e7 1/s
 * and more: resolving it took h ~ 2e-7 s on scenes/sphere-pile.json, against 7e-5 s for
 * the springs. The normal damping c_n = d_c + |lambda| delta^n_exp is a damper of rate
 * c_n w_n: with box corners (w_n = 4/m at a cube's corner) and several contacts a body it
 * was what set the step of scenes/cube-pyramid.json (5e-6 s against 1.3e-5 s), and the
 * hysteresis of a contact that closed at a tiny impact velocity (lambda ~ k_c /
 * delta_dot_-) is unbounded. So every substep and contact (cd_penaltyLimitForce):
 *     c_n h <= 1 / w_n,eff,     then   |f_t| h <= |v_t| / w_t,eff,
 *     w_s,eff = n_a w_s,a + n_b w_s,b,
 * with w_s,b the largest eigenvalue of body b's inverse mass (M_b^-1 with the rotation at
 * the lever arm) along n, resp. in the contact's tangent plane (t1, t2), and n_b the number
 * of touching contacts on b (mass splitting; the ground counts nothing). For a lone contact
 * w_t,eff = 1 / m_eff,t: the friction impulse of a substep is at most the one that stops the
 * slip within it. For several contacts at once (frozen coefficients, C = diag(c_i), W = J
 * M^-1 J^T over the tangent rows): x^T C^1/2 W C^1/2 x = sum_b |M_b^-1/2 sum_{i on b} J_ib^T
 * c_i^1/2 x_i|^2 <= sum_b n_b sum_{i on b} c_i x_i^T J_ib M_b^-1 J_ib^T x_i <= sum_i c_i
 * w_t,eff,i |x_i|^2 <= |x|^2 / h (Cauchy-Schwarz, then the cap). So the eigenvalues of h W C
 * lie in [0, 1]: the friction update v_t <- (I - h W C) v_t contracts the slip without
 * reversing it, and the kinetic energy it changes, -h v^T C v + h^2/2 v^T C W C v <= -h/2
 * v^T C v, is never positive. The same holds for the normal damping along the normal rows,
 * and with h c_n w_n <= 1 and h omega <= 1 (the step bound below) the damped spring of
 * semi-implicit Euler is stable (for one contact: h^2 omega^2 <= 4 - 2 h c_n w_n). The
 * argument takes friction and normal damping each on its own; a box point's lever arm
 * couples n and t (for spheres r is parallel to n and they are uncoupled), which the caps
 * do not bound.
 *
 * When the caps act. When h c w_eff <= 1 the force is seed 002's law exactly (the cap
 * leaves it untouched); a cap acts only where h > 1 / (c w_eff), where the explicit step
 * would overshoot the very relaxation it should follow (reverse the velocity, and beyond
 * h c w = 2 diverge). Friction: in the proportional zone (|v_t| < v_reg) the substep is
 * longer than the regularised law's relaxation time v_reg / (mu f_n w_t,eff), so the step
 * could not have resolved v_reg anyway: a capped sticking contact creeps at |F_t| h w_t,eff
 * under a tangential load F_t (the law: |F_t| v_reg / (mu f_n)), both far below any sliding
 * speed; in sliding, full Coulomb friction would stop the slip within the substep, and the
 * cap stops it there instead of reversing it. Normal damping: for a lone contact at the
 * resolution h = pi / (30 omega) only when c_n w_n > 30 omega / pi, a damping ratio above
 * ~5 (overdamped far beyond critical), or with the unbounded hysteresis above; there the
 * cap is the substep's version of "v_n stops at once". A genuine impact's hysteresis has
 * a rate of order omega (1.5 (1 - e) omega for Hunt-Crossley, linear spring), which the
 * resolution follows: the restitution tests (e 0.1 to 0.9) give what they gave with the
 * damping resolved by the step.
 *
 * Substep. The core asks for the substep count before it collides, so the backend collides
 * once itself at the start of the step (a probe set, with the state of the last substep
 * carried by key) with the margin of the whole step, the bodies' speeds raised by |g| dt so
 * that a body at rest which falls into contact within the step is seen too. Then
 * cd_penaltyStableStep takes every probe contact's tangent stiffness (penalty_law.h) and
 * the smallest of pi / (30 omega_i) (resolution of each contact) and 1/sqrt(Omega2) with
 * Omega2 a Gershgorin bound on the squared frequencies of the coupled springs. Only the
 * springs enter; the dissipation is capped (above). Cost O(contacts + bodies) per step.
 */
#include "penalty.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "penalty_law.h"
#include "vec3.h"
#include "world.h"

typedef struct cdPenalty {
  int forced_substeps; /* the --substeps option, 0: automatic */
  int nbody;
  double *scratch;     /* (nbody) per-body sums of the stable-step bound */
  int *ntouch;         /* (nbody) touching contacts on each body this substep (mass splitting) */
  double *vprobe;      /* (nbody x 6) velocities for the probe's margin, m/s, rad/s */
  cdContactSet probe;  /* the contacts at the start of the step, for the substep count */
} cdPenalty;

/* velocity of the material point p of body i, world; 0 for the ground */
static void pointVelocity(const cdWorld *w, int i, const double p[3], double out[3]) {
  if (i < 0) {
    cd_v3set(out, 0, 0, 0);
    return;
  }
  const double *v = &w->v[6 * i];
  double r[3], wr[3];
  cd_v3sub(r, p, &w->x[3 * i]);
  cd_v3cross(wr, &v[3], r);
  cd_v3add(out, v, wr);
}

void cd_penaltyRelativeVelocity(const cdWorld *w, const cdContact *c, double vrel[3]) {
  double va[3], vb[3];
  pointVelocity(w, c->body[0], c->point, va);
  pointVelocity(w, c->body[1], c->point, vb);
  cd_v3sub(vrel, vb, va);
}

double cd_penaltyInverseMass(const cdScene *scene, const cdWorld *w, int i, const double p[3],
                             const double d[3]) {
  if (i < 0 || scene->body[i].fixed || scene->body[i].mass <= 0) return 0;
  double r[3], rd[3], Ird[3];
  cd_v3sub(r, p, &w->x[3 * i]);
  cd_v3cross(rd, r, d);
  cd_m3mulv(Ird, &w->Iinv[9 * i], rd);
  return 1.0 / scene->body[i].mass + cd_v3dot(rd, Ird);
}

/* adds f at p to body i (force and torque rows of world->force) */
static void applyForce(cdWorld *w, int i, const double p[3], const double f[3]) {
  if (i < 0) return;
  double r[3], tau[3];
  double *F = &w->force[6 * i];
  cd_v3sub(r, p, &w->x[3 * i]);
  cd_v3cross(tau, r, f);
  cd_v3add(F, F, f);
  cd_v3add(&F[3], &F[3], tau);
}

/* the largest eigenvalue of body i's inverse mass in the plane of the orthonormal t1, t2
 * at p: of the 2x2 block [t_j . M^-1 t_k] with the rotation at the lever arm r = p - x_i
 * (the 1/m part is diagonal there); 0 for the ground and fixed bodies */
static double tangentInverseMass(const cdScene *scene, const cdWorld *w, int i, const double p[3],
                                 const double t1[3], const double t2[3]) {
  if (i < 0 || scene->body[i].fixed || scene->body[i].mass <= 0) return 0;
  double r[3], a1[3], a2[3], Ia2[3];
  cd_v3sub(r, p, &w->x[3 * i]);
  cd_v3cross(a1, r, t1);
  cd_v3cross(a2, r, t2);
  cd_m3mulv(Ia2, &w->Iinv[9 * i], a2);
  double Ia1[3];
  cd_m3mulv(Ia1, &w->Iinv[9 * i], a1);
  double im = 1.0 / scene->body[i].mass;
  double w11 = im + cd_v3dot(a1, Ia1), w22 = im + cd_v3dot(a2, Ia2), w12 = cd_v3dot(a1, Ia2);
  double half = 0.5 * (w11 - w22);
  return 0.5 * (w11 + w22) + sqrt(half * half + w12 * w12);
}

/* the per-contact quantities of the stable-step bound: the inverse masses of a and b
 * along n and the contact's tangent stiffness */
typedef struct {
  double wn[2];
  double k;
} cdPenaltyLin;

static void linearizeContact(const cdScene *scene, const cdWorld *w, const cdContact *c, double dt,
                             cdPenaltyLin *L) {
  cdMaterial m;
  cd_sceneContactMaterial(scene, c->body[0], c->body[1], &m);
  for (int s = 0; s < 2; s++) L->wn[s] = cd_penaltyInverseMass(scene, w, c->body[s], c->point, c->normal);
  double vrel[3];
  cd_penaltyRelativeVelocity(w, c, vrel);
  double g = cd_v3norm(scene->gravity);
  /* the pair may close at its present speed plus what gravity adds over the step */
  double vn = cd_v3dot(vrel, c->normal);
  double speed = (vn < 0 ? -vn : 0) + g * dt;
  double overlap = c->gap < 0 ? -c->gap : 0;
  L->k = cd_penaltyStiffness(&m, L->wn[0] + L->wn[1], g, overlap, speed);
}

/* The bound. For the normal springs K = diag(k_i) the squared frequencies are the
 * eigenvalues of A = K^1/2 J M^-1 J^T K^1/2 (J: the normal rows). Its row sums bound them
 * (Gershgorin), and Cauchy-Schwarz in the M_b^-1 inner product gives, per body b,
 * |J_ib M_b^-1 J_jb^T| <= sqrt(w_ib w_jb), so
 *     omega^2 <= max_i sum_{b of i} sqrt(k_i w_ib) S_b,   S_b = sum_{j on b} sqrt(k_j w_jb),
 * which is k_i (w_ia + w_ib) for a lone contact. */
double cd_penaltyStableStep(const cdScene *scene, const cdWorld *w, const cdContactSet *cs, double dt,
                            double *scratch) {
  double *Sk = scratch;
  memset(scratch, 0, (size_t)w->nbody * sizeof *scratch);
  double omega_max = 0;
  for (int i = 0; i < cs->ncon; i++) {
    const cdContact *c = &cs->con[i];
    cdPenaltyLin L;
    linearizeContact(scene, w, c, dt, &L);
    double omega = sqrt(L.k * (L.wn[0] + L.wn[1]));
    if (omega > omega_max) omega_max = omega;
    for (int s = 0; s < 2; s++)
      if (c->body[s] >= 0) Sk[c->body[s]] += sqrt(L.k * L.wn[s]);
  }
  double omega2 = 0;
  for (int i = 0; i < cs->ncon; i++) {
    const cdContact *c = &cs->con[i];
    cdPenaltyLin L;
    linearizeContact(scene, w, c, dt, &L);
    double rk = 0;
    for (int s = 0; s < 2; s++)
      if (c->body[s] >= 0) rk += sqrt(L.k * L.wn[s]) * Sk[c->body[s]];
    if (rk > omega2) omega2 = rk;
  }
  return cd_penaltyStepLimit(omega_max, omega2);
}

static void penaltyFree(void *state) {
  cdPenalty *p = state;
  if (!p) return;
  cd_contactSetFree(&p->probe);
  cd_free(p->scratch);
  cd_free(p->ntouch);
  cd_free(p->vprobe);
  cd_free(p);
}

static int penaltyMake(const cdScene *scene, const cdBackendOptions *opt, void **state, char *err, size_t errlen) {
  *state = NULL;
  if (opt && opt->solver && strcmp(opt->solver, "explicit") != 0) {
    snprintf(err, errlen, "penalty: unknown solver '%s' (the penalty model has one integrator: explicit)",
             opt->solver);
    return CD_ERR_USAGE;
  }
  if (opt && opt->substeps < 0) {
    snprintf(err, errlen, "penalty: substeps must be >= 0 (got %d)", opt->substeps);
    return CD_ERR_USAGE;
  }
  int ma, mb;
  if (cd_sceneExponentConflict(scene, &ma, &mb)) {
    /* refused, not mixed: k_c is in N/m^n_exp, so two exponents have no common stiffness
     * (any mean would be a guess in mixed units), and the scene is fixed by giving both
     * materials one exponent */
    const cdMaterial *a = &scene->material[ma], *b = &scene->material[mb];
    snprintf(err, errlen,
             "penalty: materials \"%s\" (stiffness_exponent %g) and \"%s\" (stiffness_exponent %g) can touch: "
             "a contact law needs one exponent (k_c is in N/m^n); give them the same",
             a->name, a->stiffness_exponent, b->name, b->stiffness_exponent);
    return CD_ERR_USAGE;
  }
  cdPenalty *p = cd_calloc(1, sizeof *p);
  if (!p) return CD_ERR_NOMEM;
  p->forced_substeps = opt ? opt->substeps : 0;
  p->nbody = scene->nbody;
  size_t nb = (size_t)(scene->nbody > 0 ? scene->nbody : 1);
  cd_contactSetInit(&p->probe);
  p->scratch = cd_calloc(nb, sizeof *p->scratch);
  p->ntouch = cd_calloc(nb, sizeof *p->ntouch);
  p->vprobe = cd_calloc(6 * nb, sizeof *p->vprobe);
  if (!p->scratch || !p->ntouch || !p->vprobe) {
    penaltyFree(p);
    return CD_ERR_NOMEM;
  }
  *state = p;
  return CD_OK;
}

static const char *penaltySolverName(const void *state) {
  (void)state;
  return "explicit";
}

/* the probe: the contacts of the present poses within the margin of the step, at speeds
 * |v| + |g| dt, with the carried state. On an allocation failure the contacts of the last
 * substep stand in (the step's own collision will report the failure). */
static const cdContactSet *probeContacts(cdPenalty *p, const cdScene *scene, const cdWorld *w, double dt) {
  double gdt = cd_v3norm(scene->gravity) * dt;
  for (int i = 0; i < w->nbody; i++) {
    double *v = &p->vprobe[6 * i];
    memcpy(v, &w->v[6 * i], 6 * sizeof *v);
    double s = cd_v3norm(v);
    if (s > 0)
      cd_v3scale(v, v, (s + gdt) / s);
    else
      v[0] = gdt;
  }
  if (cd_collide(w->collider, scene, w->x, w->R, p->vprobe, dt, &p->probe) != CD_OK) return &w->contacts;
  cd_contactSetCarry(&p->probe, &w->contacts);
  return &p->probe;
}

static int penaltySubsteps(void *state, const cdScene *scene, const cdWorld *world, double dt) {
  cdPenalty *p = state;
  if (p->forced_substeps > 0) return p->forced_substeps;
  const cdContactSet *cs = world->collider ? probeContacts(p, scene, world, dt) : &world->contacts;
  double h = cd_penaltyStableStep(scene, world, cs, dt, p->scratch);
  if (!(h > 0)) return CD_PENALTY_MAX_SUBSTEPS;
  double n = ceil(dt / h);
  if (n < 1) return 1;
  if (n > CD_PENALTY_MAX_SUBSTEPS) return CD_PENALTY_MAX_SUBSTEPS;
  return (int)n;
}

/* stats: iterations 0 (nothing is iterated), converged 1, residual the largest overlap
 * seen over the step's substeps (m): the penalty model's departure from non-penetration.
 * The law's forces go through cd_penaltyLimitForce with the mass-split inverse masses
 * (opening comment), counted over the contacts that touch in this substep. */
static int penaltyForces(void *state, const cdScene *scene, cdWorld *world, double h, cdSolveStats *stats) {
  cdPenalty *p = state;
  cdContactSet *cs = &world->contacts;
  memset(p->ntouch, 0, (size_t)p->nbody * sizeof *p->ntouch);
  for (int i = 0; i < cs->ncon; i++) {
    const cdContact *c = &cs->con[i];
    if (!(c->gap < 0)) continue;
    for (int s = 0; s < 2; s++)
      if (c->body[s] >= 0) p->ntouch[c->body[s]]++;
  }
  for (int i = 0; i < cs->ncon; i++) {
    cdContact *c = &cs->con[i];
    cdMaterial m;
    cd_sceneContactMaterial(scene, c->body[0], c->body[1], &m);
    double vrel[3], vt[3];
    cd_penaltyRelativeVelocity(world, c, vrel);
    double vn = cd_v3dot(vrel, c->normal);
    cd_v3addScaled(vt, vrel, c->normal, -vn);
    cdPenaltyForce f;
    cd_penaltyContactForce(&m, c->gap, vn, vt, c->fresh, c->state, &f);
    if (!f.touching) continue;
    double wn = 0, wt = 0;
    for (int s = 0; s < 2; s++) {
      int b = c->body[s];
      if (b < 0) continue;
      wn += p->ntouch[b] * cd_penaltyInverseMass(scene, world, b, c->point, c->normal);
      wt += p->ntouch[b] * tangentInverseMass(scene, world, b, c->point, c->t1, c->t2);
    }
    cd_penaltyLimitForce(&m, h, wn, wt, vn, vt, &f);
    double F[3], Fa[3];
    cd_v3addScaled(F, f.ft, c->normal, f.fn);
    cd_v3scale(Fa, F, -1);
    applyForce(world, c->body[1], c->point, F);
    applyForce(world, c->body[0], c->point, Fa);
    c->lambda[0] += h * f.fn;
    c->lambda[1] += h * cd_v3dot(F, c->t1);
    c->lambda[2] += h * cd_v3dot(F, c->t2);
    if (stats && -c->gap > stats->residual) stats->residual = -c->gap;
  }
  if (stats) {
    stats->converged = 1;
  }
  return CD_OK;
}

const cdBackend cd_backendPenalty = {
    .name = "penalty",
    .kind = CD_BACKEND_FORCE,
    .make = penaltyMake,
    .solverName = penaltySolverName,
    .solve = NULL,
    .substeps = penaltySubsteps,
    .forces = penaltyForces,
    .free = penaltyFree,
};
