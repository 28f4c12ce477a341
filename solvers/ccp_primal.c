/* ccp_primal.c: the CCP through seed 001's primal, by Newton's method on its augmented
 * Lagrangian (the method of multipliers), each Newton system solved by a sparse Cholesky factor
 * or, where that fills in, by preconditioned conjugate gradients.
 *
 * Problem (seed 001, "Optimization on the primal"): with v the body velocities (6 nbody),
 * v_f the free velocity, J the contact Jacobian and y(v) = J v + (phi/dt) e_n the stabilised
 * contact velocities (= G lambda + g at v = v_f + M^-1 J^T lambda),
 *     min_v 1/2 ||v - v_f||^2_M   s.t.  y_i(v) ∈ K*_mu_i  for every contact i,
 * whose multipliers are the impulses lambda ∈ K: the KKT conditions are the CCP
 * K ∋ lambda ⟂ c̄ = y ∈ K* with M (v - v_f) = J^T lambda.
 *
 * Method (NUMERICS.md "The CCP primal by the augmented Lagrangian"). For multipliers lambda and
 * penalties rho_i > 0 the augmented Lagrangian of the primal is, up to a constant,
 *     L(v) = 1/2 ||v - v_f||^2_M + sum_i 1/(2 rho_i) ||Proj_K(lambda_i - rho_i y_i(v))||^2,
 * convex, C^1 and strongly convex (M > 0), with
 *     grad L = M (v - v_f) - J^T gamma,   gamma_i = Proj_K(z_i),  z_i = lambda_i - rho_i y_i,
 *     H = M + J^T D J,   D_i = rho_i dProj_K(z_i)  (cone.c: 3x3, symmetric PSD),
 * H an element of the generalized Hessian (grad L is semismooth). Each inner problem min L is
 * solved by Newton steps H dv = -grad L with an exact line search along dv: with
 * w = J dv (one product a step), phi(t) = L(v + t dv) has
 *     phi'(t) = t dv^T M dv + dv^T M (v - v_f) - w^T Proj_K(z - t rho w),
 *     phi''(t) = dv^T M dv + sum_i rho_i w_i^T dProj_K(z_i - t rho_i w_i) w_i,
 * so each trial costs one projection a contact; phi is convex, and a safeguarded Newton on
 * phi'(t) = 0 from t = 1, bracketed, finds the minimiser. The multiplier update is
 * lambda <- gamma (the proximal-point step on the dual: gamma minimises
 * 1/2 l^T G l + g^T l + sum_i ||l_i - lambda_i||^2 / (2 rho_i) over K when v minimises L);
 * its fixed points are the CCP's solutions, so the method converges to the hard CCP, not to a
 * regularised one (with lambda held at 0 and rho_i = 1/R_i this would be Drake's SAP, a soft
 * contact model; Castro et al. 2022).
 *
 * Inexact inner solves. After every Newton step gamma (in K by construction) is a candidate
 * answer: its velocity v_gamma = v_f + M^-1 J^T gamma and contact velocity y_gamma = J v_gamma +
 * (phi/dt) e_n (a product with J^T and J, counted in stats->products) give its shared residual
 * (cone.h). The solve stops when that is <= tolerance. Otherwise the multipliers are updated once
 * the inner problem is solved well enough for the present outer error: when v's own contact
 * velocities are within PRIMAL_INNER times that residual of gamma's,
 * ||y(v) - y_gamma||_inf / ||g||_inf <= PRIMAL_INNER r(gamma) (at the inner minimiser v =
 * v_gamma, so this always comes), or when the line search can no longer decrease L. While the
 * residual falls the update is extrapolated, lambda <- gamma + (k-1)/(k+2) (gamma - gamma_prev)
 * (Guler's accelerated proximal point), and plain after a rise; on the peer collection this
 * took the two slowest problems from 149 and 120 Newton steps to 106 and 110 (and the third,
 * the granular column, from 77 to 95).
 *
 * Penalties: rho_i = kappa / (tr G_ii / 3) (kg, the impulse per m/s of contact i's own Delassus
 * block; G_ii from J and M^-1, never G): dimensionless in kappa, so scaling every mass leaves
 * every iterate's residual unchanged. A larger kappa means fewer multiplier updates (the outer
 * rate of the proximal point) and stiffer inner problems: with a large rho_i a small slip puts a
 * sticking contact's z outside the cone, and the Newton steps then find the sticking contacts a
 * few at a time (each line search stops where the next contact sticks). The schedule: a warm
 * start (residual <= PRIMAL_WARM) starts at PRIMAL_KAPPA, a cold one at PRIMAL_KAPPA_COLD;
 * after each multiplier update kappa grows tenfold while below PRIMAL_KAPPA, and beyond it (up
 * to PRIMAL_KAPPA_MAX) while the update did not halve the residual: problems with redundant
 * contacts (stacks, the peer collection's piles) converge slowly in the proximal point, and need
 * it. Measured (Newton steps a step, 100 steps; the peer collection from cold): kappa fixed at
 * 1e3: cube pyramid 1.07, 20-cube stack 0.65, collection 38 of 65 within 100 steps; with the
 * schedule 0.76, 0.69 and 65 of 65 (1481 steps in all, at most 110). Beyond 1e5 the Newton steps
 * of the 2020-contact granular column fail (t ~ 1e-7): the cap.
 *
 * Warm start: lambda from p->lambda (the previous step's impulses by contact key) projected on K,
 * v = v_f + M^-1 J^T lambda; its residual is checked first, so a step whose warm start already
 * solves the problem (a resting stack) costs no Newton step.
 *
 * Contact space (problems without the velocity-space form: nbody = 0, G given, e.g. read from a
 * file). The same method with v replaced by x through v = v_f + M^-1 J^T x: y = G x + g,
 * L(x) = 1/2 x^T G x + sum_i ||Proj_K(lambda_i - rho_i y_i)||^2 / (2 rho_i), and the Newton
 * step H dv = -grad L with dv = M^-1 J^T dx becomes (I + D G) dx = -(x - gamma). With S_i the
 * square root of D_i (cone.c), dx = r - S xi, r = gamma - x, and
 *     (I + S G S) xi = S G r,
 * symmetric positive definite with G's block pattern, factored by CHOLMOD (analysed once a
 * solve). The line search is the same with w = G dx (dx^T G dx = dx.w, x^T G dx = x.w).
 * Problems read from files are only nearly symmetric (the peer collections: |G - G^T| up to
 * 2.5e-3 max|G|), and a nonsymmetric G has no primal: for those the CCP is solved as the
 * variational inequality it is, by the same multiplier iteration with semismooth Newton steps on
 * the inner problem's natural map F(x) = x - Proj_K(lambda - R (G x + g)). The step solves the
 * true I + S G S by GMRES, preconditioned by the factor of I + S sym(G) S, and the step length
 * is found by backtracking on ||F||^2 (Armijo). A G symmetric to 1e-12 max|G| takes the
 * symmetric path.
 *
 * The Newton system in velocity space, H dv = -grad L, is solved one of two ways. By CHOLMOD's
 * sparse Cholesky factor of H (ccp_hessian.c) while CHOLMOD's analysis predicts at most
 * PRIMAL_CG_FLOPS (or the caller's cg_factor_flops) floating-point operations a contact for a
 * factorization: stacks and pyramids of boxes (130-500), small sphere piles (the 64-sphere pile
 * 800 on average, 2500 at most; 216 spheres 3100, 9100). Beyond it the factor fills in (the
 * collapsed 1000-sphere pile: 20k-70k a contact) and the step is solved by preconditioned
 * conjugate gradients with H applied matrix-free (ccp_hessian_cg.c), an inexact Newton step whose
 * forcing term is eta = min(PRIMAL_CG_ETA, sqrt(r)), r the last candidate's residual: loose while
 * the multipliers are far off, tight (1e-4 at the 1e-8 tolerance) near the answer. Any CG iterate
 * is a descent direction of L, so the line search and the multiplier updates are unchanged, and so
 * is the answer's tolerance; only the path differs. Measured (CPU s, one run each, --solver
 * primal, CG forced against factored): the 64-sphere pile, 200 steps, 1.29 against 0.71 (its
 * factorization 800 flops a contact on average, 2500 at most); 216 spheres, 200 steps, 10.5
 * against 11.3 (3100, 9100); the first 40 steps of the 1000-sphere pile 15.7 against 42.3 (68
 * Newton steps and 3144 products with H a step, against 49 Newton steps factored). The forcing
 * term: with eta up to 0.5 and at most 100 products a Newton step, 8 of that pile's first 60
 * steps stopped at the 200 Newton-step limit; with 0.1 and 400 none did; eta <= 0.01 took 53
 * Newton steps a step instead of 68 but 25.1 s instead of 15.7. On the piles apgd is still far
 * cheaper (the 40 steps: 0.84 s at its 1e-6, primal by CG 9.9 s at 1e-6): the primal takes
 * 50-100 Newton steps a pile step, as contacts switch between sticking and sliding a few at a
 * time along each line search, whatever solves the Newton systems; so the default (ccp.c) keeps
 * apgd where the factorization would fill in.
 *
 * The factorization kept. H depends on the iterate only through D, and D_i only while z_i is on
 * its cone's boundary (rho_i I inside, 0 in the polar cone): a Newton step whose contacts are
 * all inside or in the polar cone, each where it was at the last factorization, at the same
 * kappa, solves with that factorization (factorHeld). A cold start of a stack, whose contacts all
 * stick once found, makes its multiplier updates at one kappa this way: the 20-cube stack's
 * first step (S3 20 of ../shared/peer-bench) took 12 Newton steps and 12 factorizations, now 12
 * and 6 (5.93M -> 4.12M instructions, callgrind), the answer bit for bit the same.
 *
 * Stats: iterations = Newton steps (each one solve of H, one product w = J dv or G dx, and the
 * line search); factorizations = CHOLMOD's numeric factorizations (none on the CG path, none
 * for a Newton step that solves with the factorization kept);
 * products = the residual checks (one J^T, J pair, or one G product, each) plus, on the CG path,
 * every product with H (one J, J^T pair each, with D between).
 */
#include <math.h>
#include <string.h>

#include "alloc.h"
#include "ccp.h"
#include "ccp_hessian.h"
#include "ccp_velocity.h"
#include "cone.h"

/* the penalty schedule (rho_i = kappa / (tr G_ii / 3)) and the inner-solve criterion: see the
 * opening comment */
#define PRIMAL_KAPPA 1e3      /* a warm start's kappa, and where the cold schedule goes first */
#define PRIMAL_KAPPA_COLD 10  /* a cold start's first kappa */
#define PRIMAL_KAPPA_MAX 1e5  /* the stiffest */
#define PRIMAL_WARM 1e-3      /* a start whose residual is at most this is warm */
#define PRIMAL_COLD 0.5       /* ... and above this cold (new contacts carry no impulse: 1) */
#define PRIMAL_INNER 0.25     /* the multipliers move once v's velocities are this close (opening comment) */
#define PRIMAL_LS_MAXIT 40    /* line-search trials */
#define PRIMAL_CG_FLOPS 1e4  /* CHOLMOD's flops a contact above which the Newton steps use CG */
#define PRIMAL_CG_ETA 0.1    /* the largest forcing term of a conjugate-gradient Newton step */
#define PRIMAL_CG_MAXIT 400  /* its products with H */
#define PRIMAL_GMRES_M 30  /* GMRES restart length (contact space, G not symmetric) */

struct cdCcpPrimalWork {
  cholmod_common cc;
  int cc_started;
  cdCcpHessian hess; /* velocity space */
  /* contact space: the upper blocks (i <= j) of G's pattern, their symmetric part, and where
   * each sits in the CHOLMOD matrix */
  int nub, *ubi, *ubj, *ubpos; /* (nub), (nub), (nub x 3): position of entry (0, c) */
  double *ubS;                 /* (nub x 9) sym(G)_ij */
  int sym;                     /* 1 when G is symmetric to 1e-12 max|G| */
  cholmod_sparse *Ac;
  cholmod_factor *Lc;
  cholmod_dense *B, *X, *Y, *E;
  double *gm; /* GMRES workspace */
  size_t gm_cap;
  /* vectors */
  double *buf;
  size_t buf_cap;
  unsigned char *skip;
  size_t skip_cap;
};

typedef struct {
  cdCcpPrimalWork *W;
  cdContactProblem *p;
  int vel;                     /* 1: velocity space */
  int cg;                      /* 1: Newton steps by conjugate gradients (velocity space) */
  double rlast;                /* the last candidate's residual, for cg's forcing term */
  double kappa;                /* the penalties' scale now (rho_i = kappa / (tr G_ii / 3)) ... */
  double fkappa;               /* ... and at the factorization held (0: none yet this solve) */
  unsigned char *reg, *freg;   /* (nc) each contact's region (cd_coneProjectJacobian) now, and at
                                  the factorization held */
  int cgprod;                  /* cg: products with H so far */
  int nc, n3, nu;              /* contacts, 3 nc, unknowns (6 nbody or 3 nc) */
  /* per contact (3 nc): multipliers, gamma = Proj(lambda - rho y), y(u), gamma's own y, J du (or
   * G du), the best iterate, the last multiplier update's gamma, scratch; D and S (9 nc), rho */
  double *lam, *gam, *y, *yg, *w, *best, *lprev, *t3, *D, *Sr, *rho;
  /* per unknown (6 nbody, or 3 nc in contact space): u = v - v_f (or x), du, M u, -grad, scratch */
  double *u, *du, *Mu, *gr, *t1;
} primal;

void cd_ccpPrimalWorkFree(cdCcpPrimalWork *w) {
  if (!w) return;
  if (w->cc_started) {
    cd_ccpHessianFree(&w->hess);
    cholmod_free_sparse(&w->Ac, &w->cc);
    cholmod_free_factor(&w->Lc, &w->cc);
    cholmod_free_dense(&w->B, &w->cc);
    cholmod_free_dense(&w->X, &w->cc);
    cholmod_free_dense(&w->Y, &w->cc);
    cholmod_free_dense(&w->E, &w->cc);
    cholmod_finish(&w->cc);
  }
  cd_free(w->ubi);
  cd_free(w->ubS);
  cd_free(w->gm);
  cd_free(w->buf);
  cd_free(w->skip);
  cd_free(w);
}

cdCcpPrimalWork *cd_ccpPrimalWorkMake(void) {
  cdCcpPrimalWork *w = cd_calloc(1, sizeof *w);
  if (!w) return NULL;
  if (!cholmod_start(&w->cc)) {
    cd_free(w);
    return NULL;
  }
  w->cc_started = 1;
  w->cc.print = 0; /* no I/O from the solvers: failures come back through status codes */
  w->hess.cc = &w->cc;
  return w;
}

/* ---- the two spaces behind one interface ---------------------------------------------- */

/* u of the impulses l: M^-1 J^T l (velocity space) or l itself (contact space) */
static void uOfImpulse(primal *P, const double *l, double *u) {
  if (P->vel) {
    cd_ccpJtMul(P->p, l, u);
    cd_ccpMinvMul(P->p, u);
  } else {
    memcpy(u, l, (size_t)P->n3 * sizeof(double));
  }
}

/* y = B u + g, B = J or G */
static void contactVel(primal *P, const double *u, double *y, int add) {
  if (P->vel) {
    cd_ccpJMul(P->p, u, y, add);
  } else {
    cd_blockMatrixMul(&P->p->G, u, y);
    if (add)
      for (int k = 0; k < P->n3; k++) y[k] += P->p->g[k];
  }
}

/* tr G_ii / 3 per contact: from J and M^-1, or G's diagonal */
static double diagScale(const cdContactProblem *p, int vel, int i) {
  if (!vel) {
    const double *B = &p->G.val[9 * (size_t)p->G.diag[i]];
    return (B[0] + B[4] + B[8]) / 3.0;
  }
  double t = 0.0;
  for (int s = 0; s < 2; s++) {
    int k = p->cbody[2 * i + s];
    if (k < 0) continue;
    const double *J = &p->J[36 * (size_t)i + 18 * (size_t)s], *I = &p->Iinv[9 * (size_t)k];
    for (int r = 0; r < 3; r++) {
      const double *a = &J[6 * r + 3];
      t += p->minv[k] * (J[6 * r] * J[6 * r] + J[6 * r + 1] * J[6 * r + 1] + J[6 * r + 2] * J[6 * r + 2]);
      t += a[0] * (I[0] * a[0] + I[1] * a[1] + I[2] * a[2]) + a[1] * (I[3] * a[0] + I[4] * a[1] + I[5] * a[2]) +
           a[2] * (I[6] * a[0] + I[7] * a[1] + I[8] * a[2]);
    }
  }
  return t / 3.0;
}

/* ---- contact space: the matrix I + S sym(G) S ------------------------------------------ */

static int cholmodErr(const cholmod_common *cc) {
  return cc->status == CHOLMOD_OUT_OF_MEMORY ? CD_ERR_NOMEM : CD_ERR_NUMERIC;
}

/* the block (i, j) of G, or NULL */
static const double *gBlock(const cdBlockMatrix *G, int i, int j) {
  int a = G->rowptr[i], b = G->rowptr[i + 1] - 1;
  while (a <= b) {
    int m = (a + b) / 2;
    if (G->col[m] == j) return &G->val[9 * (size_t)m];
    if (G->col[m] < j) a = m + 1;
    else b = m - 1;
  }
  return NULL;
}

/* the pattern (the union of G's and G^T's blocks, upper triangle), sym(G) on it, and the
 * analysis */
static int contactAnalyse(cdCcpPrimalWork *W, const cdContactProblem *p) {
  const cdBlockMatrix *G = &p->G;
  int nc = p->ncon;
  cd_free(W->ubi);
  cd_free(W->ubS);
  W->ubi = NULL;
  W->ubS = NULL;
  cholmod_free_sparse(&W->Ac, &W->cc);
  cholmod_free_factor(&W->Lc, &W->cc);
  /* upper blocks by column: column j takes (min, max) of every stored block; counted with
   * duplicates, then each column sorted and made unique */
  int *cnt = cd_calloc((size_t)nc + 1, sizeof(int));
  if (!cnt) return CD_ERR_NOMEM;
  for (int i = 0; i < nc; i++)
    for (int k = G->rowptr[i]; k < G->rowptr[i + 1]; k++) cnt[(G->col[k] > i ? G->col[k] : i) + 1]++;
  for (int j = 0; j < nc; j++) cnt[j + 1] += cnt[j];
  int tot = cnt[nc];
  W->ubi = cd_malloc((size_t)(tot > 0 ? tot : 1) * 5 * sizeof(int));
  W->ubS = cd_malloc((size_t)(tot > 0 ? tot : 1) * 9 * sizeof(double));
  int *fill = cd_malloc(((size_t)nc + 1) * sizeof(int));
  if (!W->ubi || !W->ubS || !fill) {
    cd_free(cnt);
    cd_free(fill);
    return CD_ERR_NOMEM;
  }
  W->ubj = W->ubi + tot;
  W->ubpos = W->ubi + 2 * tot;
  memcpy(fill, cnt, ((size_t)nc + 1) * sizeof(int));
  for (int i = 0; i < nc; i++)
    for (int k = G->rowptr[i]; k < G->rowptr[i + 1]; k++) {
      int j = G->col[k], lo = j < i ? j : i, hi = j < i ? i : j;
      W->ubi[fill[hi]++] = lo;
    }
  int nub = 0;
  for (int j = 0; j < nc; j++) {
    int start = nub;
    for (int q = cnt[j]; q < cnt[j + 1]; q++) {
      int v = W->ubi[q], s = nub;
      while (s > start && W->ubi[s - 1] > v) s--;
      if (s > start && W->ubi[s - 1] == v) continue;
      memmove(&W->ubi[s + 1], &W->ubi[s], (size_t)(nub - s) * sizeof(int));
      W->ubi[s] = v;
      nub++;
    }
    for (int q = start; q < nub; q++) W->ubj[q] = j;
    cnt[j] = start;
  }
  cnt[nc] = nub;
  W->nub = nub;
  /* symmetric to round-off (|G - G^T| <= 1e-12 max|G|): the symmetric path, whose answer is
   * then the same to far below any tolerance */
  double gmax = 0.0, amax = 0.0;
  for (int q = 0; q < nub; q++) {
    const double *Bij = gBlock(G, W->ubi[q], W->ubj[q]), *Bji = gBlock(G, W->ubj[q], W->ubi[q]);
    for (int r = 0; r < 3; r++)
      for (int c = 0; c < 3; c++) {
        double a = Bij ? Bij[3 * r + c] : 0.0, b = Bji ? Bji[3 * c + r] : 0.0;
        W->ubS[9 * q + 3 * r + c] = 0.5 * (a + b);
        gmax = fmax(gmax, fmax(fabs(a), fabs(b)));
        amax = fmax(amax, fabs(a - b));
      }
  }
  W->sym = amax <= 1e-12 * gmax;
  /* column 3 j + c: blocks (i, j) of column j in ascending i, 3 rows each (c + 1 for i = j) */
  size_t n = 3 * (size_t)nc, nnz = 9 * (size_t)nub;
  W->Ac = cholmod_allocate_sparse(n, n, nnz, 1, 1, 1, CHOLMOD_REAL, &W->cc);
  if (!W->Ac) {
    cd_free(cnt);
    cd_free(fill);
    return cholmodErr(&W->cc);
  }
  int *Ap = W->Ac->p, *Ai = W->Ac->i, pos = 0;
  for (int j = 0; j < nc; j++)
    for (int c = 0; c < 3; c++) {
      Ap[3 * j + c] = pos;
      for (int q = cnt[j]; q < cnt[j + 1]; q++) {
        int i = W->ubi[q], rmax = i == j ? c + 1 : 3;
        W->ubpos[3 * q + c] = pos;
        for (int r = 0; r < rmax; r++) Ai[pos++] = 3 * i + r;
      }
    }
  Ap[n] = pos;
  cd_free(cnt);
  cd_free(fill);
  W->Lc = cholmod_analyze(W->Ac, &W->cc);
  return W->Lc ? CD_OK : cholmodErr(&W->cc);
}

/* factors I + S sym(G) S, S = P->Sr blocks */
static int contactFactor(primal *P) {
  cdCcpPrimalWork *W = P->W;
  double *Ax = W->Ac->x;
  for (int q = 0; q < W->nub; q++) {
    int i = W->ubi[q], j = W->ubj[q];
    const double *Gs = &W->ubS[9 * q], *Si = &P->Sr[9 * (size_t)i], *Sj = &P->Sr[9 * (size_t)j];
    double T[9], B[9];
    for (int r = 0; r < 3; r++)
      for (int c = 0; c < 3; c++) T[3 * r + c] = Gs[3 * r] * Sj[c] + Gs[3 * r + 1] * Sj[3 + c] + Gs[3 * r + 2] * Sj[6 + c];
    for (int r = 0; r < 3; r++)
      for (int c = 0; c < 3; c++) B[3 * r + c] = Si[3 * r] * T[c] + Si[3 * r + 1] * T[3 + c] + Si[3 * r + 2] * T[6 + c];
    for (int c = 0; c < 3; c++) {
      int rmax = i == j ? c + 1 : 3;
      for (int r = 0; r < rmax; r++) Ax[W->ubpos[3 * q + c] + r] = B[3 * r + c] + (i == j && r == c ? 1.0 : 0.0);
    }
  }
  W->cc.status = CHOLMOD_OK;
  if (!cholmod_factorize(W->Ac, W->Lc, &W->cc) || W->cc.status < CHOLMOD_OK) return cholmodErr(&W->cc);
  return W->cc.status == CHOLMOD_NOT_POSDEF ? CD_ERR_NUMERIC : CD_OK;
}

/* x = (I + S sym(G) S)^-1 b */
static int contactFactorSolve(cdCcpPrimalWork *W, const double *b, double *x, size_t n) {
  if (!W->B || W->B->nrow != n) {
    cholmod_free_dense(&W->B, &W->cc);
    W->B = cholmod_allocate_dense(n, 1, n, CHOLMOD_REAL, &W->cc);
    if (!W->B) return cholmodErr(&W->cc);
  }
  memcpy(W->B->x, b, n * sizeof(double));
  int st = cd_ccpCholmodSolve(W->Lc, W->B, &W->X, &W->Y, &W->E, &W->cc);
  if (st) return st;
  memcpy(x, W->X->x, n * sizeof(double));
  return CD_OK;
}

/* out = S v per contact block */
static void sMul(const double *Sr, int nc, const double *v, double *out) {
  for (int i = 0; i < nc; i++) {
    const double *S = &Sr[9 * (size_t)i], *a = &v[3 * i];
    double *o = &out[3 * i];
    o[0] = S[0] * a[0] + S[1] * a[1] + S[2] * a[2];
    o[1] = S[3] * a[0] + S[4] * a[1] + S[5] * a[2];
    o[2] = S[6] * a[0] + S[7] * a[1] + S[8] * a[2];
  }
}

/* out = (I + S G S) v; uses P->t3 and P->yg as scratch */
static void applyContact(primal *P, const double *v, double *out) {
  sMul(P->Sr, P->nc, v, P->yg);
  cd_blockMatrixMul(&P->p->G, P->yg, P->t3);
  sMul(P->Sr, P->nc, P->t3, out);
  for (int k = 0; k < P->n3; k++) out[k] += v[k];
}

static double norm2(const double *a, int n) {
  double s = 0.0;
  for (int k = 0; k < n; k++) s += a[k] * a[k];
  return sqrt(s);
}

/* x = (I + S G S)^-1 b for a G that is not exactly symmetric: restarted GMRES(PRIMAL_GMRES_M),
 * right-preconditioned by the factor of I + S sym(G) S (whose symmetric part it is, so the
 * preconditioned operator is I plus a small skew-like part: a few iterations), to 1e-13
 * relative. Workspace in W->gm. */
static int gmres(primal *P, const double *b, double *x) {
  cdCcpPrimalWork *W = P->W;
  int n = P->n3, m = PRIMAL_GMRES_M;
  size_t need = (size_t)(m + 3) * (size_t)n + (size_t)(m + 1) * (size_t)(m + 4);
  if (need > W->gm_cap || !W->gm) {
    double *g = cd_realloc(W->gm, need * sizeof(double));
    if (!g) return CD_ERR_NOMEM;
    W->gm = g;
    W->gm_cap = need;
  }
  double *V = W->gm, *z = V + (size_t)(m + 1) * n, *w = z + n, *H = w + n, *cs = H + (size_t)(m + 1) * m,
         *sn = cs + m + 1, *gv = sn + m + 1, *y = gv + m + 1;
  double bn = norm2(b, n);
  memset(x, 0, (size_t)n * sizeof(double));
  if (bn == 0.0) return CD_OK;
  double tol = 1e-13 * bn;
  memcpy(w, b, (size_t)n * sizeof(double));
  for (int restart = 0; restart < 10; restart++) {
    double beta = norm2(w, n);
    if (beta <= tol) break;
    for (int k = 0; k < n; k++) V[k] = w[k] / beta;
    memset(gv, 0, (size_t)(m + 1) * sizeof(double));
    gv[0] = beta;
    int j = 0;
    for (; j < m; j++) {
      int st = contactFactorSolve(W, &V[(size_t)j * n], z, (size_t)n);
      if (st) return st;
      applyContact(P, z, w);
      for (int i = 0; i <= j; i++) { /* modified Gram-Schmidt */
        double h = 0.0;
        const double *vi = &V[(size_t)i * n];
        for (int k = 0; k < n; k++) h += w[k] * vi[k];
        for (int k = 0; k < n; k++) w[k] -= h * vi[k];
        H[(size_t)i * m + j] = h;
      }
      double hn = norm2(w, n);
      for (int i = 0; i < j; i++) { /* the earlier rotations on the new column */
        double a = H[(size_t)i * m + j], bb = H[(size_t)(i + 1) * m + j];
        H[(size_t)i * m + j] = cs[i] * a + sn[i] * bb;
        H[(size_t)(i + 1) * m + j] = -sn[i] * a + cs[i] * bb;
      }
      double a = H[(size_t)j * m + j], d = hypot(a, hn);
      cs[j] = d > 0.0 ? a / d : 1.0;
      sn[j] = d > 0.0 ? hn / d : 0.0;
      H[(size_t)j * m + j] = d;
      gv[j + 1] = -sn[j] * gv[j];
      gv[j] = cs[j] * gv[j];
      if (hn > 0.0)
        for (int k = 0; k < n; k++) V[(size_t)(j + 1) * n + k] = w[k] / hn;
      if (fabs(gv[j + 1]) <= tol || hn == 0.0) {
        j++;
        break;
      }
    }
    /* y = H^-1 g (j x j upper triangular); x += P^-1 (V y) */
    for (int i = j - 1; i >= 0; i--) {
      double s = gv[i];
      for (int q = i + 1; q < j; q++) s -= H[(size_t)i * m + q] * y[q];
      y[i] = s / H[(size_t)i * m + i];
    }
    memset(w, 0, (size_t)n * sizeof(double));
    for (int i = 0; i < j; i++)
      for (int k = 0; k < n; k++) w[k] += y[i] * V[(size_t)i * n + k];
    int st = contactFactorSolve(W, w, z, (size_t)n);
    if (st) return st;
    for (int k = 0; k < n; k++) x[k] += z[k];
    /* the true residual for the next cycle */
    applyContact(P, x, w);
    for (int k = 0; k < n; k++) w[k] = b[k] - w[k];
  }
  return CD_OK;
}

/* ---- the Newton step ------------------------------------------------------------------- */

/* at the current y: gamma, D (and S in contact space), skip; returns nothing */
static void linearise(primal *P) {
  const cdContactProblem *p = P->p;
  unsigned char *skip = P->W->skip;
  for (int i = 0; i < P->nc; i++) {
    double z[3], *Di = &P->D[9 * (size_t)i], r = P->rho[i];
    for (int c = 0; c < 3; c++) z[c] = P->lam[3 * i + c] - r * P->y[3 * i + c];
    int region = cd_coneProjectJacobian(p->mu[i], z, &P->gam[3 * i], Di, P->vel ? NULL : &P->Sr[9 * (size_t)i]);
    for (int c = 0; c < 9; c++) Di[c] *= r;
    if (!P->vel) {
      double sr = sqrt(r);
      for (int c = 0; c < 9; c++) P->Sr[9 * (size_t)i + c] *= sr;
    }
    skip[i] = region == 0;
    P->reg[i] = (unsigned char)region;
  }
}

/* 1 when the Newton matrix is the one factored last: the same penalties and the same regions,
 * none on a cone's boundary. A contact's D_i = rho_i dProj_K(z_i) depends on z_i only on the
 * boundary (1); it is rho_i I inside (2; rho_i e_n e_n^T when mu_i = 0) and 0 in the polar cone
 * (0), and so is its square root S_i / sqrt(rho_i). The matrix (and its factor) is then the
 * same bit for bit: a stack whose contacts all stick is one factorization for every multiplier
 * update at one kappa. */
static int factorHeld(const primal *P) {
  if (P->fkappa != P->kappa) return 0;
  for (int i = 0; i < P->nc; i++)
    if (P->reg[i] == 1 || P->reg[i] != P->freg[i]) return 0;
  return 1;
}

/* the Newton direction du at u (gamma, D from linearise), and gr: -grad L (velocity space) or
 * gamma - x (contact space); *factored: 1 when the Newton matrix was factored (not when the
 * factorization held is its own, factorHeld, nor on the CG path). CD_OK, CD_ERR_NOMEM,
 * CD_ERR_NUMERIC */
static int newtonDirection(primal *P, int *factored) {
  cdCcpPrimalWork *W = P->W;
  int nu = P->nu, held = !P->cg && factorHeld(P);
  *factored = !P->cg && !held;
  if (*factored) { /* (the factor held is replaced: until it succeeds, none) */
    P->fkappa = 0.0;
    memcpy(P->freg, P->reg, (size_t)P->nc);
  }
  if (P->vel) {
    cd_ccpHessianMassMul(&W->hess, P->u, P->Mu);
    cd_ccpJtMul(P->p, P->gam, P->gr);
    for (int k = 0; k < nu; k++) P->gr[k] -= P->Mu[k]; /* -grad L = J^T gamma - M u */
    if (P->cg) { /* the forcing term: sqrt of the residual, at most PRIMAL_CG_ETA */
      double eta = sqrt(P->rlast);
      if (!(eta < PRIMAL_CG_ETA)) eta = PRIMAL_CG_ETA;
      int np = 0, st = cd_ccpHessianCg(&W->hess, P->p, P->D, W->skip, P->gr, P->du, eta, PRIMAL_CG_MAXIT, &np);
      P->cgprod += np;
      return st;
    }
    int st = held ? CD_OK : cd_ccpHessianFactor(&W->hess, P->p, P->D, W->skip);
    if (st) return st;
    P->fkappa = P->kappa;
    return cd_ccpHessianSolve(&W->hess, P->gr, P->du);
  }
  /* contact space: r = gamma - x; (I + S G S) xi = S G r; dx = r - S xi */
  int n3 = P->n3, st = held ? CD_OK : contactFactor(P);
  if (st) return st;
  P->fkappa = P->kappa;
  double *r = P->gr, *rhs = P->t1, *xi = P->du;
  for (int k = 0; k < n3; k++) r[k] = P->gam[k] - P->u[k];
  cd_blockMatrixMul(&P->p->G, r, P->t3);
  sMul(P->Sr, P->nc, P->t3, rhs);
  st = W->sym ? contactFactorSolve(W, rhs, xi, (size_t)n3) : gmres(P, rhs, xi);
  if (st) return st;
  sMul(P->Sr, P->nc, xi, P->t3);
  for (int k = 0; k < n3; k++) P->du[k] = r[k] - P->t3[k];
  return CD_OK;
}

/* phi'(t) and phi''(t) of the line search, from phi'(0) = d0: phi'(t) = d0 + a t -
 * w^T (gamma(t) - gamma(0)), with gamma(0) in P->gam (the differences carry no cancellation of
 * the large terms t dv^T M dv and w^T gamma, which near the inner minimiser would swamp phi') */
static void lsEval(primal *P, double a, double d0, double t, double *d1, double *d2) {
  const cdContactProblem *p = P->p;
  double s1 = d0 + a * t, s2 = a;
  for (int i = 0; i < P->nc; i++) {
    const double *wi = &P->w[3 * i], *g0 = &P->gam[3 * i];
    double r = P->rho[i], z[3], g[3], Dm[9];
    for (int c = 0; c < 3; c++) z[c] = P->lam[3 * i + c] - r * (P->y[3 * i + c] + t * wi[c]);
    int region = cd_coneProjectJacobian(p->mu[i], z, g, Dm, NULL);
    s1 -= wi[0] * (g[0] - g0[0]) + wi[1] * (g[1] - g0[1]) + wi[2] * (g[2] - g0[2]);
    if (region == 0) continue;
    double Dw0 = Dm[0] * wi[0] + Dm[1] * wi[1] + Dm[2] * wi[2], Dw1 = Dm[3] * wi[0] + Dm[4] * wi[1] + Dm[5] * wi[2],
           Dw2 = Dm[6] * wi[0] + Dm[7] * wi[1] + Dm[8] * wi[2];
    s2 += r * (wi[0] * Dw0 + wi[1] * Dw1 + wi[2] * Dw2);
  }
  *d1 = s1;
  *d2 = s2;
}

/* gamma = Proj_K(lambda - rho y) at the current y */
/* gamma = Proj_K(lambda - rho y) at the current y */
static void projectAt(primal *P) {
  for (int i = 0; i < P->nc; i++) {
    double z[3];
    for (int c = 0; c < 3; c++) z[c] = P->lam[3 * i + c] - P->rho[i] * P->y[3 * i + c];
    cd_coneProject(P->p->mu[i], z, &P->gam[3 * i]);
  }
}

/* the exact line search: the minimiser of the convex phi(t) along du, by Newton on phi' with
 * a bracket; returns t (0 when du is no descent direction: d0 >= 0) */
static double lineSearch(primal *P, double a, double d0) {
  if (!(d0 < 0.0)) return 0.0;
  double d1, d2, gtol = 1e-8 * -d0, lo = 0.0, hi = INFINITY, t = 1.0;
  for (int k = 0; k < PRIMAL_LS_MAXIT; k++) {
    lsEval(P, a, d0, t, &d1, &d2);
    if (fabs(d1) <= gtol) break;
    if (d1 < 0.0) lo = t;
    else hi = t;
    double tn = d2 > 0.0 ? t - d1 / d2 : INFINITY;
    if (!(tn > lo && tn < hi)) tn = isfinite(hi) ? 0.5 * (lo + hi) : 2.0 * t;
    if (isfinite(hi) && hi - lo <= 1e-15 * hi) {
      t = lo > 0.0 ? lo : t;
      break;
    }
    t = tn;
  }
  return t;
}

/* ||F(t)||^2, F(t) = x + t dx - Proj_K(lambda - rho (y + t w)): the inner problem's natural map
 * along the step (contact space, G not symmetric) */
static double naturalAlong(primal *P, double t) {
  double s = 0.0;
  for (int i = 0; i < P->nc; i++) {
    double z[3], g[3], r = P->rho[i];
    for (int c = 0; c < 3; c++) z[c] = P->lam[3 * i + c] - r * (P->y[3 * i + c] + t * P->w[3 * i + c]);
    cd_coneProject(P->p->mu[i], z, g);
    for (int c = 0; c < 3; c++) {
      double f = P->u[3 * i + c] + t * P->du[3 * i + c] - g[c];
      s += f * f;
    }
  }
  return s;
}

/* the line search where L has no meaning (G not symmetric): backtracking on ||F||^2 with the
 * Armijo rule, the best trial when none passes, 0 when none decreases it */
static double lineBacktrack(primal *P) {
  double f0 = naturalAlong(P, 0.0), t = 1.0, tb = 0.0, fb = f0;
  for (int k = 0; k < PRIMAL_LS_MAXIT; k++, t *= 0.5) {
    double f = naturalAlong(P, t);
    if (f <= (1.0 - 1e-4 * t) * f0) return t;
    if (f < fb) {
      fb = f;
      tb = t;
    }
  }
  return tb;
}

/* ---- the solve -------------------------------------------------------------------------- */

static int reserve(cdCcpPrimalWork *W, size_t ndouble, size_t nbyte) {
  if (ndouble > W->buf_cap || !W->buf) {
    double *b = cd_realloc(W->buf, ndouble * sizeof(double));
    if (!b) return CD_ERR_NOMEM;
    W->buf = b;
    W->buf_cap = ndouble;
  }
  if (nbyte > W->skip_cap || !W->skip) {
    unsigned char *s = cd_realloc(W->skip, nbyte);
    if (!s) return CD_ERR_NOMEM;
    W->skip = s;
    W->skip_cap = nbyte;
  }
  return CD_OK;
}

int cd_ccpPrimalSolve(cdContactProblem *p, const cdCcpParams *par, cdCcpPrimalWork *work, cdSolveStats *stats) {
  double tol = par && par->tolerance > 0 ? par->tolerance : CD_CCP_NEWTON_TOL;
  int maxit = par && par->max_iterations > 0 ? par->max_iterations : CD_CCP_PRIMAL_MAXIT;
  memset(stats, 0, sizeof *stats);
  if (p->ncon == 0) {
    stats->converged = 1;
    return CD_OK;
  }
  cdCcpPrimalWork *own = NULL;
  if (!work) {
    own = work = cd_ccpPrimalWorkMake();
    if (!work) return CD_ERR_NOMEM;
  }
  primal P;
  memset(&P, 0, sizeof P);
  P.W = work;
  P.p = p;
  P.vel = p->nbody > 0;
  P.nc = p->ncon;
  P.n3 = 3 * P.nc;
  P.nu = P.vel ? 6 * p->nbody : P.n3;
  size_t n3 = (size_t)P.n3, nu = (size_t)P.nu, nc = (size_t)P.nc;
  int st = reserve(work, 8 * n3 + 19 * nc + 5 * nu, 3 * nc);
  if (st == CD_OK && !P.vel && cd_contactProblemDelassus(p)) st = CD_ERR_NOMEM;
  if (st) {
    cd_ccpPrimalWorkFree(own);
    return st;
  }
  double *b = work->buf;
  P.lam = b;
  P.gam = b + n3;
  P.y = b + 2 * n3;
  P.yg = b + 3 * n3;
  P.w = b + 4 * n3;
  P.best = b + 5 * n3;
  P.t3 = b + 6 * n3;
  P.lprev = b + 7 * n3;
  P.D = b + 8 * n3;
  P.Sr = P.D + 9 * nc;
  P.rho = P.Sr + 9 * nc;
  P.u = P.rho + nc;
  P.du = P.u + nu;
  P.Mu = P.du + nu;
  P.gr = P.Mu + nu;
  P.t1 = P.gr + nu;
  P.reg = work->skip + nc;
  P.freg = P.reg + nc;

  for (int i = 0; i < P.nc; i++) {
    double s = diagScale(p, P.vel, i);
    P.rho[i] = s > 0.0 && isfinite(s) ? 1.0 / s : cd_contactProblemMeff(p, i); /* times kappa below */
    cd_coneProject(p->mu[i], &p->lambda[3 * i], &P.lam[3 * i]);
  }
  double vscale = cd_contactProblemVelocityScale(p);
  /* the warm start's residual */
  uOfImpulse(&P, P.lam, P.u);
  contactVel(&P, P.u, P.y, 1);
  stats->products = 1;
  double rbest = cd_coneResidual(p, P.lam, P.y, NULL);
  P.rlast = rbest;
  memcpy(P.best, P.lam, n3 * sizeof(double));
  int it = 0;
  /* the Newton matrix, analysed (or its analysis kept) only when a Newton step is needed */
  if (rbest > tol) {
    st = P.vel ? cd_ccpHessianPrepare(&work->hess, p) : contactAnalyse(work, p);
    if (st == CD_OK && P.vel && par && par->max_factor_flops > 0 && work->hess.flops > par->max_factor_flops * P.nc)
      maxit = 0; /* a caller's cap on a factorization's cost (ccp.h): no Newton step */
    /* a factorization that fills in: conjugate gradients instead (opening comment) */
    double cgf = par && par->cg_factor_flops > 0 ? par->cg_factor_flops : PRIMAL_CG_FLOPS;
    P.cg = st == CD_OK && P.vel && work->hess.flops > cgf * P.nc;
  }
  /* a caller's budget for a start that is not cold (ccp.h) */
  if (par && par->warm_max_iterations > 0 && rbest <= PRIMAL_COLD && par->warm_max_iterations < maxit)
    maxit = par->warm_max_iterations;
  /* the penalty schedule (opening comment) */
  double rOuter = rbest, kappa = rbest <= PRIMAL_WARM ? PRIMAL_KAPPA : PRIMAL_KAPPA_COLD;
  int nacc = 0;
  memcpy(P.lprev, P.lam, n3 * sizeof(double));
  for (int i = 0; i < P.nc; i++) P.rho[i] *= kappa;
  while (st == CD_OK && rbest > tol && it < maxit) {
    P.kappa = kappa;
    linearise(&P);
    int factored;
    st = newtonDirection(&P, &factored);
    if (st) break;
    it++;
    stats->factorizations += factored;
    contactVel(&P, P.du, P.w, 0);
    /* phi'(0) = du^T grad L and a = du^T M du (velocity space), or, with x for v,
     * dx^T G (x - gamma) = -w^T r and dx^T G dx = w^T dx (contact space) */
    double a = 0.0, d0 = 0.0;
    if (P.vel) {
      cd_ccpHessianMassMul(&work->hess, P.du, P.t1);
      for (size_t k = 0; k < nu; k++) {
        a += P.du[k] * P.t1[k];
        d0 -= P.du[k] * P.gr[k];
      }
    } else {
      for (size_t k = 0; k < nu; k++) {
        a += P.du[k] * P.w[k];
        d0 -= P.w[k] * P.gr[k];
      }
    }
    double t = P.vel || work->sym ? lineSearch(&P, a, d0) : lineBacktrack(&P);
    for (size_t k = 0; k < nu; k++) P.u[k] += t * P.du[k];
    for (size_t k = 0; k < n3; k++) P.y[k] += t * P.w[k];
    projectAt(&P);
    /* the candidate gamma: its own velocities and residual */
    uOfImpulse(&P, P.gam, P.t1);
    contactVel(&P, P.t1, P.yg, 1);
    stats->products++;
    double r = cd_coneResidual(p, P.gam, P.yg, NULL);
    P.rlast = r;
    if (!isfinite(r)) {
      st = CD_ERR_NUMERIC;
      break;
    }
    if (r < rbest) {
      rbest = r;
      memcpy(P.best, P.gam, n3 * sizeof(double));
    }
    if (rbest <= tol) break;
    double e = 0.0;
    for (size_t k = 0; k < n3; k++) e = fmax(e, fabs(P.y[k] - P.yg[k]));
    if (t == 0.0 || e / vscale <= PRIMAL_INNER * r) {
      /* the multiplier update, extrapolated (Guler's accelerated proximal point) while the
       * residual falls, plain after a rise */
      if (r <= rOuter) {
        nacc++;
        double beta = (nacc - 1.0) / (nacc + 2.0);
        for (size_t k = 0; k < n3; k++) {
          double gk = P.gam[k];
          P.lam[k] = gk + beta * (gk - P.lprev[k]);
          P.lprev[k] = gk;
        }
      } else {
        nacc = 0;
        memcpy(P.lam, P.gam, n3 * sizeof(double));
        memcpy(P.lprev, P.gam, n3 * sizeof(double));
      }
      /* stiffen the penalties up to PRIMAL_KAPPA, and beyond while the outer steps do not
       * halve the residual */
      if ((kappa < PRIMAL_KAPPA || r > 0.5 * rOuter) && kappa < PRIMAL_KAPPA_MAX) {
        for (int i = 0; i < P.nc; i++) P.rho[i] *= 10.0;
        kappa *= 10.0;
      }
      rOuter = r;
    }
  }
  memcpy(p->lambda, P.best, n3 * sizeof(double));
  stats->iterations = it;
  stats->products += P.cgprod;
  stats->residual = rbest;
  stats->converged = rbest <= tol;
  cd_ccpPrimalWorkFree(own);
  if (st == CD_ERR_NOMEM) return st;
  return isfinite(rbest) ? CD_OK : CD_ERR_NUMERIC;
}
