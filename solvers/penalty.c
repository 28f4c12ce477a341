/* penalty.c: the penalty backend: compliant spring-damper contact, integrated explicitly.
 *
 * Problem. There is no system to solve: every contact point i of the substep (each
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
 * and updates the contacts (contact_cache.h: the narrow phase of the step's Verlet list), so
 * the law sees the gap and velocity at the start of each substep. lambda of a contact
 * accumulates F_i h in world coordinates within the step (contact_cache.h: the cache puts
 * the sum, the impulse over the step, into the contact's last frame (n, t1, t2) at its end).
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
 * Substep. The count comes from the contacts the step starts from: the core's collision
 * with the margin of the whole step (its Verlet list, contact_cache.h), the bodies' speeds
 * raised by |g| dt so that a body at rest which falls into contact within the step is seen
 * too. cd_penaltyStableStep takes every one's tangent stiffness (penalty_law.h) and
 * the smallest of pi / (30 omega_i) (resolution of each contact) and 1/sqrt(Omega2) with
 * Omega2 a Gershgorin bound on the squared frequencies of the coupled springs. Only the
 * springs enter; the dissipation is capped (above). Cost O(contacts + bodies) per step.
 */
#include "penalty.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "ncp.h"
#include "penalty_law.h"
#include "vec3.h"
#include "world.h"

/* the mixed materials of every pair of the scene's materials are kept up to this many
 * materials (160 kB); beyond, a contact mixes its pair's each time */
#define PENALTY_MIX_TABLE_MAX 32

typedef struct cdPenalty {
  int forced_substeps; /* the --substeps option, 0: automatic */
  int nbody;
  double *scratch;     /* (scratch_cap) the stable-step bound's sums: nbody + 2 ncon */
  size_t scratch_cap;
  int *ntouch;         /* (nbody) touching contacts on each body this substep (mass splitting) */
  double *invmass;     /* (nbody) 1 / mass, kg^-1; 0 for fixed bodies */
  double *isoinv;      /* (nbody) 1 / I for a moving body of equal principal moments I (a sphere,
                          a cube), kg^-1 m^-2; -1 for the others */
  cdMaterial *mix;     /* (nmaterial x nmaterial) cd_materialMix of materials a, b; NULL beyond
                          PENALTY_MIX_TABLE_MAX materials */
  int nmaterial;
  int *material;       /* (nbody + 1) body i's material at [i + 1], the ground's at [0] */
  double vscale;       /* the step's ||g||_inf, m/s: the residual's scale (penaltyFinish) */
  double *res;         /* (res_cap x 8) the residual's per-contact mu, meff, lambda, c-bar */
  size_t res_cap;
  struct cdPenaltyEval *eval; /* (eval_cap) a substep's live contacts (penaltyForces) */
  size_t eval_cap;
} cdPenalty;

/* the material acting at a contact of bodies a and b (-1: the ground): the table's, or
 * mixed into *tmp */
static const cdMaterial *contactMaterial(const cdPenalty *p, const cdScene *scene, int a, int b, cdMaterial *tmp) {
  if (!p->mix) {
    cd_sceneContactMaterial(scene, a, b, tmp);
    return tmp;
  }
  return &p->mix[p->material[a + 1] * p->nmaterial + p->material[b + 1]];
}


/* body i's inverse effective mass at the lever arm r along the unit d, im = 1/m_i (> 0):
 * im + (r x d)^T I^-1 (r x d) */
static double inverseMassAt(const cdWorld *w, int i, double im, const double r[3], const double d[3]) {
  double rd[3], Ird[3];
  cd_v3cross(rd, r, d);
  cd_m3mulv(Ird, &w->Iinv[9 * i], rd);
  return im + cd_v3dot(rd, Ird);
}

double cd_penaltyInverseMass(const cdScene *scene, const cdWorld *w, int i, const double p[3],
                             const double d[3]) {
  if (i < 0 || scene->body[i].fixed || scene->body[i].mass <= 0) return 0;
  double r[3];
  cd_v3sub(r, p, &w->x[3 * i]);
  return inverseMassAt(w, i, 1.0 / scene->body[i].mass, r, d);
}

/* adds f at lever arm r of body i (force and torque rows of world->force) */
static inline void applyForce(cdWorld *w, int i, const double r[3], const double f[3]) {
  double tau[3];
  double *F = &w->force[6 * i];
  cd_v3cross(tau, r, f);
  cd_v3add(F, F, f);
  cd_v3add(&F[3], &F[3], tau);
}

/* the largest eigenvalue of body i's inverse mass in the plane of the orthonormal t1, t2
 * at the lever arm r: of the 2x2 block [t_j . M^-1 t_k] (the 1/m part, im, is diagonal
 * there) */
static double tangentInverseMass(const cdWorld *w, int i, double im, const double r[3], const double t1[3],
                                 const double t2[3]) {
  double a1[3], a2[3], Ia2[3];
  cd_v3cross(a1, r, t1);
  cd_v3cross(a2, r, t2);
  cd_m3mulv(Ia2, &w->Iinv[9 * i], a2);
  double Ia1[3];
  cd_m3mulv(Ia1, &w->Iinv[9 * i], a1);
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
  cd_worldContactVelocity(w, c, vrel);
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
  double *Sk = scratch, *root = scratch + w->nbody; /* root[2 i + s] = sqrt(k_i w_is) */
  memset(Sk, 0, (size_t)w->nbody * sizeof *Sk);
  double omega_max = 0;
  for (int i = 0; i < cs->ncon; i++) {
    const cdContact *c = &cs->con[i];
    cdPenaltyLin L;
    linearizeContact(scene, w, c, dt, &L);
    double omega = sqrt(L.k * (L.wn[0] + L.wn[1]));
    if (omega > omega_max) omega_max = omega;
    for (int s = 0; s < 2; s++) {
      root[2 * i + s] = c->body[s] >= 0 ? sqrt(L.k * L.wn[s]) : 0;
      if (c->body[s] >= 0) Sk[c->body[s]] += root[2 * i + s];
    }
  }
  double omega2 = 0;
  for (int i = 0; i < cs->ncon; i++) {
    const cdContact *c = &cs->con[i];
    double rk = 0;
    for (int s = 0; s < 2; s++)
      if (c->body[s] >= 0) rk += root[2 * i + s] * Sk[c->body[s]];
    if (rk > omega2) omega2 = rk;
  }
  return cd_penaltyStepLimit(omega_max, omega2);
}

static void penaltyFree(void *state) {
  cdPenalty *p = state;
  if (!p) return;
  cd_free(p->scratch);
  cd_free(p->ntouch);
  cd_free(p->material);
  cd_free(p->invmass);
  cd_free(p->isoinv);
  cd_free(p->mix);
  cd_free(p->res);
  cd_free(p->eval);
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
  p->ntouch = cd_calloc(nb, sizeof *p->ntouch);
  p->invmass = cd_calloc(nb, sizeof *p->invmass);
  p->isoinv = cd_calloc(nb, sizeof *p->isoinv);
  p->material = cd_calloc(nb + 1, sizeof *p->material);
  int nm = scene->nmaterial;
  if (nm <= PENALTY_MIX_TABLE_MAX) p->mix = cd_calloc((size_t)(nm > 0 ? nm * nm : 1), sizeof *p->mix);
  if (!p->ntouch || !p->invmass || !p->isoinv || !p->material || (nm <= PENALTY_MIX_TABLE_MAX && !p->mix)) {
    penaltyFree(p);
    return CD_ERR_NOMEM;
  }
  p->nmaterial = nm;
  p->material[0] = scene->ground_material;
  for (int i = 0; i < scene->nbody; i++) {
    const cdBodyDef *b = &scene->body[i];
    p->material[i + 1] = b->material;
    int moving = !b->fixed && b->mass > 0;
    p->invmass[i] = moving ? 1.0 / b->mass : 0;
    int iso = b->inertia[0] == b->inertia[1] && b->inertia[1] == b->inertia[2] && b->inertia[0] > 0;
    p->isoinv[i] = moving && iso ? 1.0 / b->inertia[0] : -1;
  }
  for (int a = 0; a < nm && p->mix; a++)
    for (int b = 0; b < nm; b++) cd_materialMix(&scene->material[a], &scene->material[b], &p->mix[a * nm + b]);
  *state = p;
  return CD_OK;
}

static const char *penaltySolverName(const void *state) {
  (void)state;
  return "explicit";
}

/* the step's velocity scale, as the impulse models have it: ||g||_inf over the step's
 * contacts, g = J v_f + (phi/dt) e_n with v_f = v + dt gravity (the free velocity without the
 * gyroscopic term, which moves no contact point here by more than roundoff over a step) */
static double stepVelocityScale(const cdScene *scene, const cdWorld *w, const cdContactSet *cs, double dt) {
  double m = 0;
  for (int i = 0; i < cs->ncon; i++) {
    const cdContact *c = &cs->con[i];
    double v[3] = {0, 0, 0};
    for (int s = 0; s < 2; s++) {
      int b = c->body[s];
      if (b < 0 || scene->body[b].fixed) continue;
      double r[3], vp[3];
      cd_v3sub(r, c->point, &w->x[3 * b]);
      cd_worldPointVelocity(w, b, r, vp);
      cd_v3addScaled(vp, vp, scene->gravity, dt);
      cd_v3addScaled(v, v, vp, s == 1 ? 1.0 : -1.0);
    }
    double g[3] = {cd_v3dot(v, c->normal) + c->gap / dt, cd_v3dot(v, c->t1), cd_v3dot(v, c->t2)};
    for (int k = 0; k < 3; k++) m = fabs(g[k]) > m ? fabs(g[k]) : m;
  }
  return m > 0 ? m : 1.0;
}

static int penaltySubsteps(void *state, const cdScene *scene, const cdWorld *world, const cdContactSet *contacts,
                           double dt) {
  cdPenalty *p = state;
  p->vscale = stepVelocityScale(scene, world, contacts, dt);
  if (p->forced_substeps > 0) return p->forced_substeps;
  size_t need = (size_t)world->nbody + 2 * (size_t)contacts->ncon;
  if (need > p->scratch_cap) {
    double *sc = cd_realloc(p->scratch, need * sizeof *sc);
    if (!sc) return CD_ERR_NOMEM;
    p->scratch = sc;
    p->scratch_cap = need;
  }
  double h = cd_penaltyStableStep(scene, world, contacts, dt, p->scratch);
  if (!(h > 0)) return CD_PENALTY_MAX_SUBSTEPS;
  double n = ceil(dt / h);
  if (n < 1) return 1;
  if (n > CD_PENALTY_MAX_SUBSTEPS) return CD_PENALTY_MAX_SUBSTEPS;
  return (int)n;
}

/* one live contact's kinematics (pass 1 of penaltyForces) and force (pass 2) */
typedef struct cdPenaltyEval {
  double r[2][3]; /* lever arms p - x of a and b, m */
  double vt[3];   /* tangential relative velocity, m/s */
  double vn;      /* normal relative velocity, m/s */
  double slip;    /* |vt|, m/s */
  double F[3];    /* the force on b, N (a takes -F) */
  int touching;   /* 1 when F acts */
} cdPenaltyEval;

/* The law's forces go through cd_penaltyLimitForce with the mass-split inverse masses
 * (opening comment), counted over the contacts that touch in this substep. Three passes over
 * the live contacts, each short enough that the long operations of several contacts (the
 * slip's square root, the law's divisions) overlap: the kinematics and the touching counts;
 * the law; the forces applied to the bodies and the impulses summed, in the contacts' order. */
static int penaltyForces(void *state, const cdScene *scene, cdWorld *world, cdContactSet *cs, const int *live,
                         int nlive, double h, cdSolveStats *stats) {
  cdPenalty *p = state;
  (void)stats; /* filled by penaltyFinish */
  if ((size_t)nlive > p->eval_cap) {
    cdPenaltyEval *e = cd_realloc(p->eval, (size_t)nlive * sizeof *e);
    if (!e) return CD_ERR_NOMEM;
    p->eval = e;
    p->eval_cap = (size_t)nlive;
  }
  memset(p->ntouch, 0, (size_t)p->nbody * sizeof *p->ntouch);
  for (int k = 0; k < nlive; k++) {
    const cdContact *c = &cs->con[live[k]];
    cdPenaltyEval *e = &p->eval[k];
    /* the lever arms p - x and the velocities of the contact point on a and b (the ground
     * is at rest) */
    double vp[2][3] = {{0, 0, 0}, {0, 0, 0}};
    for (int s = 0; s < 2; s++) {
      if (c->body[s] < 0) continue;
      if (c->gap < 0) p->ntouch[c->body[s]]++;
      cd_v3sub(e->r[s], c->point, &world->x[3 * c->body[s]]);
      cd_worldPointVelocity(world, c->body[s], e->r[s], vp[s]);
    }
    double vrel[3];
    cd_v3sub(vrel, vp[1], vp[0]);
    e->vn = cd_v3dot(vrel, c->normal);
    cd_v3addScaled(e->vt, vrel, c->normal, -e->vn);
    e->slip = cd_v3norm(e->vt);
  }
  for (int k = 0; k < nlive; k++) {
    cdContact *c = &cs->con[live[k]];
    cdPenaltyEval *e = &p->eval[k];
    cdMaterial tmp;
    const cdMaterial *m = contactMaterial(p, scene, c->body[0], c->body[1], &tmp);
    cdPenaltyForce f;
    cd_penaltyNormalForce(m, c->gap, e->vn, e->slip, c->fresh, c->state, &f);
    e->touching = f.touching;
    if (!f.touching) continue;
    double wn = 0, wt = 0, t1[3], t2[3];
    int framed = 0; /* t1, t2 made (below) */
    for (int s = 0; s < 2; s++) {
      int b = c->body[s];
      const double *r = e->r[s];
      if (b < 0 || p->invmass[b] == 0) continue;
      if (p->isoinv[b] >= 0) {
        /* I^-1 = 1/I: along n, 1/m + |r x n|^2 / I = 1/m + (|r|^2 - (r.n)^2) / I; in the
         * tangent plane the block is (|r|^2 - u u^T) / I + 1/m with u = (r.t1, r.t2), whose
         * largest eigenvalue is 1/m + |r|^2 / I */
        double r2 = cd_v3dot(r, r), rn = cd_v3dot(r, c->normal);
        wn += p->ntouch[b] * (p->invmass[b] + p->isoinv[b] * (r2 - rn * rn));
        wt += p->ntouch[b] * (p->invmass[b] + p->isoinv[b] * r2);
        continue;
      }
      /* the largest eigenvalue in the tangent plane does not depend on its basis: the
       * contact's frame (kept by the cache only at the end of the step) from the normal, made
       * once for the contact's two bodies */
      if (!framed) cd_tangentFrame(c->normal, t1, t2);
      framed = 1;
      wn += p->ntouch[b] * inverseMassAt(world, b, p->invmass[b], r, c->normal);
      wt += p->ntouch[b] * tangentInverseMass(world, b, p->invmass[b], r, t1, t2);
    }
    cd_penaltyLimitForce(m, h, wn, wt, e->vn, e->vt, &f);
    cd_v3addScaled(e->F, f.ft, c->normal, f.fn);
  }
  for (int k = 0; k < nlive; k++) {
    const cdPenaltyEval *e = &p->eval[k];
    if (!e->touching) continue;
    cdContact *c = &cs->con[live[k]];
    double Fa[3];
    cd_v3scale(Fa, e->F, -1);
    if (c->body[1] >= 0) applyForce(world, c->body[1], e->r[1], e->F);
    if (c->body[0] >= 0) applyForce(world, c->body[0], e->r[0], Fa);
    cd_v3addScaled(c->lambda, c->lambda, e->F, h); /* world impulse within the step */
  }
  return CD_OK;
}

/* stats of the step: iterations 0 (nothing is iterated), converged 1, and the residual every
 * model reports (problem.h), here against the exact Coulomb contact (ncp.h: K ∋ lambda ⟂
 * c̄ + mu |c̄_T| e_n ∈ K*) with the step's summed impulses and post-step velocities,
 * c̄ = J v+ + (phi_start / dt) e_n: how far the compliant answer is from hard contact with
 * Coulomb friction (a resting contact sinks by phi, a contact that opened within the step
 * carries impulse with a separating velocity), in the same dimensionless units as the
 * impulse models' residuals. It measures the model, not a solve: nothing stops on it. */
static int penaltyFinish(void *state, const cdScene *scene, const cdWorld *world, const cdContactSet *cs,
                         double dt, cdSolveStats *stats) {
  cdPenalty *p = state;
  stats->converged = 1;
  stats->residual = 0;
  if (cs->ncon == 0) return CD_OK;
  if ((size_t)cs->ncon > p->res_cap) {
    double *r = cd_realloc(p->res, 8 * (size_t)cs->ncon * sizeof *r);
    if (!r) return CD_ERR_NOMEM;
    p->res = r;
    p->res_cap = (size_t)cs->ncon;
  }
  size_t n = (size_t)cs->ncon;
  double *mu = p->res, *meff = mu + n, *lambda = meff + n, *cbar = lambda + 3 * n;
  for (int i = 0; i < cs->ncon; i++) {
    const cdContact *c = &cs->con[i];
    double wn = 0;
    for (int s = 0; s < 2; s++)
      if (c->body[s] >= 0) wn += cd_penaltyInverseMass(scene, world, c->body[s], c->point, c->normal);
    mu[i] = cd_worldFriction(scene, world, c->body[0], c->body[1]);
    meff[i] = wn > 0 ? 1.0 / wn : 1.0;
    memcpy(&lambda[3 * i], c->lambda, 3 * sizeof(double));
    cbar[3 * i] = c->post_vn + c->gap / dt;
    cbar[3 * i + 1] = cd_v3dot(c->post_vt, c->t1);
    cbar[3 * i + 2] = cd_v3dot(c->post_vt, c->t2);
  }
  cdContactProblem view;
  memset(&view, 0, sizeof view);
  view.ncon = cs->ncon;
  view.mu = mu;
  view.meff = meff;
  view.vscale = p->vscale;
  stats->residual = cd_ncpResidual(&view, lambda, cbar, NULL);
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
    .finish = penaltyFinish,
    .free = penaltyFree,
};
