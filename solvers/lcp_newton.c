/* lcp_newton.c: the Anitescu-Hart contact LCP by active sets and a sparse direct solve.
 *
 * Problem: 0 <= z perp A z + b >= 0 in z = (lambda_N, alpha, beta) (lcp.h, seed 000), with
 * contact velocities c = G lambda + g, lambda_i = (lambda_n, D alpha)_i.
 *
 * Modes. Every solution puts each contact i in one of four modes, and each mode turns the
 * contact's complementarity rows into r_i linear equations C_i c_i = 0 in r_i unknowns p_i
 * with lambda_i = B_i p_i (frame (n, t1, t2); d_k the friction directions):
 *   separated  r = 0  lambda = 0; beta = max(0, max_l -d_l . c_T)
 *   sticking   r = 3  C = B = I: c = 0; alpha = lambda_T split over the two directions of
 *                     its sector (cd_lcpAlphaFromTangent), beta = 0
 *   vertex k   r = 1  C = n^T, B = n + mu d_k: c_n = 0, alpha_k = mu lambda_n,
 *                     beta = -d_k . c_T (the contact slides against d_k)
 *   edge k,k+1 r = 2  C = [n^T; (d_k - d_k+1)^T], B = [n + mu (d_k + d_k+1)/2, d_k - d_k+1]:
 *                     c_n = 0, c_T opposite the edge's bisector; p = (lambda_n, t) with
 *                     alpha_k,k+1 = mu lambda_n / 2 +- t, beta = -d_k . c_T
 * (with mu = 0 an active contact is vertex 0: B = C^T = n.) The modes' equations for all
 * contacts together are the Schur complement of the saddle system NUMERICS.md writes out,
 *     K p = -C g,   K = C G B  (block sparse with the pattern of G on the active contacts),
 * solved in units where impulses are velocities: rows and columns of contact i scaled by
 * sqrt(meff_i), so that K's normal diagonal is 1 whatever the masses (the residual's units,
 * problem.h). K is symmetric positive semidefinite when every active contact sticks (or has
 * mu = 0): CHOLMOD (LL^T, AMD ordering); sliding makes it unsymmetric: KLU (sparse LU with
 * partial pivoting, AMD ordering; no BLAS and no large workspace, which made UMFPACK's page
 * faults and BLAS threads most of a step on the cube pyramid). The symbolic analysis is kept
 * while the pattern holds (a resting stack: one numeric factorization a step).
 * Which solution. Redundant contacts (four corners of a face, a stack) make K singular: the
 * impulses are not unique there, the velocities are. The factorization is of K + eps I
 * (eps = REG, dimensionless) and iterative refinement on K itself (until the mode equations
 * hold to REFINE_SHARE of the tolerance) converges on the range of K by a factor
 * eps / (sigma + eps) a solve and never moves p along K's null space. It starts from the
 * current impulses (the warm start's in the first active set, written in the new modes'
 * unknowns), so every answer is the active set's solution nearest them (sum_i ||dp_i||^2 /
 * meff_i least): a resting stack keeps its load distribution, and a mode change moves the
 * redundant impulses only as much as the new equations require (from zero, the least-norm
 * solution of each new active set redistributed the load of the whole 55-cube pyramid and
 * its modes never settled). Nearly redundant contacts (eigenvalues of K far below eps)
 * are moved by at most r / eps for a residual r there, which is left where it is below
 * the tolerance (solved to roundoff, a residual of 1e-9 m/s moved the impulses of a whole
 * row of the pyramid by their own size, and no mode of the next active set held). A system
 * whose residual stays above the tolerance (modes that admit no solution) counts as an
 * active set no better than the best.
 * Check and mode changes. From p: lambda, then c = G lambda + g (one product), each contact's
 * z_i as above and its part of cd_lcpResidual. A contact that violates its mode's
 * inequalities (lambda_n < 0, lambda_T outside the polygon, a negative slip speed, slip
 * along a better direction, c_n < 0 while separated) takes the mode that its largest
 * violation points to (nextMode). Changing every violated mode at once cycles on coupled
 * contacts (one wrong change among twenty on the pyramid sends the residual from 3e-2 to
 * 0.5). The method keeps its best iterate: after a better one, all of its violators
 * change mode; after one that is no better, it goes back to the best iterate and changes
 * half as many, largest violation first (the safeguard of block principal pivoting,
 * Judice & Pires, as a backtracking line search over the number of changes), at most
 * BACKTRACKS times in a row. The best iterate is returned.
 * Warm start: the first modes are read off the start z (the previous step's lambda, alpha
 * and beta, carried by key, or an iterate of bgs): a contact with lambda_n > 0 keeps the
 * mode its z shows, one with lambda_n = 0 is separated unless it closes or touches. A
 * resting stack then keeps its modes: one factorization and one check a step.
 * Stops at cd_lcpResidual <= TARGET_SHARE tolerance, at max_iterations, when the
 * backtracking gives up or when no violated contact changes mode; converged: the best
 * iterate's residual <= tolerance; otherwise lcp.c goes on with bgs (counted).
 * References: Judice & Pires, "A block principal pivoting algorithm for large-scale strictly
 * monotone linear complementarity problems", Comp. & OR 21 (1994); Kostreva (1978);
 * NUMERICS.md, "The Anitescu-Hart LCP by active sets".
 */
#include "lcp_newton.h"

#include <cholmod.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <klu.h>

#include "alloc.h"
#include "backend.h"
#include "lcp.h"
#include "linalg.h"

/* the regularisation of K (dimensionless: K's normal diagonal is 1). A solve moves the
 * impulses along a direction of K's eigenvalue sigma by r / (sigma + REG) for a residual r
 * of the mode equations there: directions far stiffer than REG are solved in a solve or two,
 * and the near-null ones of nearly redundant contacts (a settling pyramid's, sigma far below
 * 1e-9, where a residual of 1e-9 m/s asked the impulses of a whole row of cubes to move by
 * their own size) move by at most r / REG, and are left where they do not matter at the
 * tolerance */
#define REG 1e-6
/* refinement solves at most per active set; they stop once the mode equations hold to
 * REFINE_SHARE of the tolerance (relative to ||g||_inf), or when a solve no longer takes a
 * tenth off their residual */
#define REFINE_MAX 20
#define REFINE_SHARE 1e-3
/* the method goes on changing modes until cd_lcpResidual <= TARGET_SHARE of the tolerance
 * (an answer well inside it keeps the next step's warm start in its modes), and reports
 * convergence at the tolerance itself */
#define TARGET_SHARE 1e-2

/* an active set is better than the best iterate when its residual is below DECREASE times
 * the best one's (the pyramid's successful solves fall by 1.7 to 1e10 an active set; a
 * pile in flight whose modes the method does not find creeps down by a few percent) */
#define DECREASE 0.7
/* times the method goes back to its best iterate and changes half as many modes before
 * it gives up (the caller then falls back): a failure costs BACKTRACKS + 2 active sets past
 * the best one at most */
#define BACKTRACKS 3

enum { MODE_SEPARATED = 0, MODE_STICK = 1, MODE_VERTEX = 2, MODE_EDGE = 3 };
static const int modeRows[4] = {0, 3, 1, 2};

typedef struct cdViolator {
  double v; /* a contact's residual, m/s */
  int i;    /* the contact */
} cdViolator;

struct cdLcpNewton {
  cholmod_common cc;
  int cc_started;
  cholmod_factor *L;  /* CHOLMOD's analysis and factor (symmetric systems) */
  klu_common kc;
  klu_symbolic *ksym; /* KLU's analysis and factor (unsymmetric systems) */
  klu_numeric *knum;
  /* the pattern the current analysis is of */
  int pat_n, pat_nnz, pat_sym; /* pat_sym: 1 CHOLMOD, 0 KLU, -1 none */
  int *pat_p, *pat_i;
  /* per contact (ccap) */
  int ccap;
  unsigned char *mode;
  int *kdir;    /* the vertex, or the edge's first direction */
  int *off;     /* first unknown of the contact */
  double *B;    /* (ccap x 9) 3 x r, column-major */
  double *C;    /* (ccap x 9) r x 3, row-major */
  double *sq;   /* sqrt(meff_i) */
  double *lam;  /* (3 ccap) */
  double *u;    /* (3 ccap) c = G lambda + g */
  double *viol; /* contact residuals (m/s) */
  int *cand;    /* the best iterate's violators, largest first */
  /* the best iterate's modes, impulses, velocities and residuals (ccap) */
  unsigned char *bmode;
  int *bkdir;
  double *blam, *bu, *bviol;
  struct cdViolator *rank;
  /* per LCP variable (zcap) */
  size_t zcap;
  double *zbest;
  /* per unknown (ncap) */
  int ncap;
  double *rhs, *q, *r, *dq;
  int *Kp;
  /* per entry (nzcap) */
  size_t nzcap;
  int *Ki;
  double *Kx;
  int zb_m;
  double *zb;   /* (m + 2) one contact's z */
  /* CHOLMOD solve2 workspaces */
  cholmod_dense *X, *Y, *E;
};

cdLcpNewton *cd_lcpNewtonMake(void) {
  cdLcpNewton *s = cd_calloc(1, sizeof *s);
  if (!s) return NULL;
  cd_linalgInit();
  if (!cholmod_start(&s->cc)) {
    cd_free(s);
    return NULL;
  }
  s->cc_started = 1;
  s->cc.print = 0;
  s->cc.nmethods = 1;
  s->cc.method[0].ordering = CHOLMOD_AMD;
  s->cc.postorder = 1;
  s->cc.final_ll = 1;
  s->cc.quick_return_if_not_posdef = 1;
  klu_defaults(&s->kc);
  s->pat_sym = -1;
  return s;
}

static void dropAnalysis(cdLcpNewton *s) {
  if (s->L) cholmod_free_factor(&s->L, &s->cc);
  if (s->knum) klu_free_numeric(&s->knum, &s->kc);
  if (s->ksym) klu_free_symbolic(&s->ksym, &s->kc);
  s->pat_sym = -1;
}

void cd_lcpNewtonFree(cdLcpNewton *s) {
  if (!s) return;
  dropAnalysis(s);
  if (s->X) cholmod_free_dense(&s->X, &s->cc);
  if (s->Y) cholmod_free_dense(&s->Y, &s->cc);
  if (s->E) cholmod_free_dense(&s->E, &s->cc);
  if (s->cc_started) cholmod_finish(&s->cc);
  cd_free(s->pat_p), cd_free(s->pat_i);
  cd_free(s->mode), cd_free(s->kdir), cd_free(s->off), cd_free(s->B), cd_free(s->C), cd_free(s->sq);
  cd_free(s->lam), cd_free(s->u), cd_free(s->viol), cd_free(s->cand), cd_free(s->zbest);
  cd_free(s->bmode), cd_free(s->bkdir), cd_free(s->blam), cd_free(s->bu), cd_free(s->bviol), cd_free(s->rank);
  cd_free(s->rhs), cd_free(s->q), cd_free(s->r), cd_free(s->dq), cd_free(s->Kp);
  cd_free(s->Ki), cd_free(s->Kx), cd_free(s->zb);
  cd_free(s);
}

static int reserveContacts(cdLcpNewton *s, int nc, int m) {
  if (nc > s->ccap) {
    size_t n = (size_t)nc;
    if (cd_grow(&s->mode, n, 1) || cd_grow(&s->kdir, n, sizeof(int)) || cd_grow(&s->off, n + 1, sizeof(int)) ||
        cd_grow(&s->B, 9 * n, sizeof(double)) || cd_grow(&s->C, 9 * n, sizeof(double)) || cd_grow(&s->sq, n, sizeof(double)) ||
        cd_grow(&s->lam, 3 * n, sizeof(double)) || cd_grow(&s->u, 3 * n, sizeof(double)) ||
        cd_grow(&s->viol, n, sizeof(double)) || cd_grow(&s->cand, n, sizeof(int)) || cd_grow(&s->bmode, n, 1) ||
        cd_grow(&s->bkdir, n, sizeof(int)) || cd_grow(&s->blam, 3 * n, sizeof(double)) ||
        cd_grow(&s->bu, 3 * n, sizeof(double)) || cd_grow(&s->bviol, n, sizeof(double)) ||
        cd_grow(&s->rank, n, sizeof *s->rank))
      return -1;
    s->ccap = nc;
  }
  size_t nz = (size_t)cd_lcpSize(nc, m);
  if (nz > s->zcap) {
    if (cd_grow(&s->zbest, nz, sizeof(double))) return -1;
    s->zcap = nz;
  }
  if (s->zb_m != m) {
    cd_free(s->zb);
    s->zb = cd_malloc((size_t)(m + 2) * sizeof(double));
    if (!s->zb) {
      s->zb_m = 0;
      return -1;
    }
    s->zb_m = m;
  }
  return 0;
}

/* B (3 x r, column-major) and C (r x 3, row-major) of a mode */
static void modeMatrices(int mode, int k, double mu, int m, const double *D, double *B, double *C) {
  memset(B, 0, 9 * sizeof *B);
  memset(C, 0, 9 * sizeof *C);
  const double *dk = &D[2 * k], *dl = &D[2 * ((k + 1) % m)];
  switch (mode) {
    case MODE_STICK:
      B[0] = B[4] = B[8] = 1.0;
      C[0] = C[4] = C[8] = 1.0;
      break;
    case MODE_VERTEX:
      B[0] = 1.0, B[1] = mu * dk[0], B[2] = mu * dk[1];
      C[0] = 1.0;
      break;
    case MODE_EDGE:
      B[0] = 1.0, B[1] = 0.5 * mu * (dk[0] + dl[0]), B[2] = 0.5 * mu * (dk[1] + dl[1]);
      B[3] = 0.0, B[4] = dk[0] - dl[0], B[5] = dk[1] - dl[1];
      C[0] = 1.0;
      C[3] = 0.0, C[4] = dk[0] - dl[0], C[5] = dk[1] - dl[1];
      break;
    default:
      break;
  }
}

/* the unknowns of every contact, B and C; returns the number of unknowns, *sym = 1 when K is
 * symmetric (B_i = C_i^T for every active contact) */
static int layout(cdLcpNewton *s, const cdContactProblem *p, int m, const double *D, int *sym) {
  int nc = p->ncon, n = 0;
  *sym = 1;
  for (int i = 0; i < nc; i++) {
    s->off[i] = n;
    int md = s->mode[i];
    n += modeRows[md];
    modeMatrices(md, s->kdir[i], p->mu[i], m, D, &s->B[9 * i], &s->C[9 * i]);
    if (md != MODE_STICK && md != MODE_SEPARATED && p->mu[i] != 0.0) *sym = 0;
  }
  s->off[nc] = n;
  return n;
}

/* K = S C G B S (+ REG on the diagonal) in compressed columns (rows ascending); the upper
 * triangle only when sym. 0 ok, -1 no memory */
static int assemble(cdLcpNewton *s, const cdContactProblem *p, int n, int sym) {
  const cdBlockMatrix *G = &p->G;
  int nc = p->ncon;
  /* an upper bound on the entries */
  size_t bound = 0;
  for (int j = 0; j < nc; j++) {
    int rj = modeRows[s->mode[j]];
    if (!rj) continue;
    for (int t = G->rowptr[j]; t < G->rowptr[j + 1]; t++) bound += (size_t)(rj * modeRows[s->mode[G->col[t]]]);
  }
  if (n + 1 > s->ncap) {
    size_t nn = (size_t)n + 1;
    if (cd_grow(&s->rhs, nn, sizeof(double)) || cd_grow(&s->q, nn, sizeof(double)) || cd_grow(&s->r, nn, sizeof(double)) ||
        cd_grow(&s->dq, nn, sizeof(double)) || cd_grow(&s->Kp, nn, sizeof(int)))
      return -1;
    s->ncap = n + 1;
  }
  if (bound > s->nzcap) {
    if (cd_grow(&s->Ki, bound, sizeof(int)) || cd_grow(&s->Kx, bound, sizeof(double))) return -1;
    s->nzcap = bound;
  }
  size_t e = 0;
  for (int j = 0; j < nc; j++) {
    int rj = modeRows[s->mode[j]];
    if (!rj) continue;
    const double *Bj = &s->B[9 * j];
    for (int col = 0; col < rj; col++) {
      int cidx = s->off[j] + col;
      s->Kp[cidx] = (int)e;
      for (int t = G->rowptr[j]; t < G->rowptr[j + 1]; t++) {
        int i = G->col[t], ri = modeRows[s->mode[i]];
        if (!ri) continue;
        if (sym && s->off[i] > cidx) break; /* rows ascending: nothing of the upper triangle left */
        const double *Gt = &G->val[9 * (size_t)t]; /* G_ji; G_ij = G_ji^T */
        /* T = G_ij B_j[:, col] */
        const double *b = &Bj[3 * col];
        double T[3];
        for (int a = 0; a < 3; a++) T[a] = Gt[a] * b[0] + Gt[3 + a] * b[1] + Gt[6 + a] * b[2];
        const double *Ci = &s->C[9 * i];
        double scale = s->sq[i] * s->sq[j];
        for (int a = 0; a < ri; a++) {
          int row = s->off[i] + a;
          if (sym && row > cidx) break;
          double v = scale * (Ci[3 * a] * T[0] + Ci[3 * a + 1] * T[1] + Ci[3 * a + 2] * T[2]);
          if (row == cidx) v += REG;
          s->Ki[e] = row;
          s->Kx[e] = v;
          e++;
        }
      }
    }
  }
  s->Kp[n] = (int)e;
  return 0;
}

/* y = K x, K without its regularisation (the upper triangle mirrored when sym) */
static void productK(const cdLcpNewton *s, const cdContactProblem *p, int n, int sym, const double *x, double *y) {
  memset(y, 0, (size_t)n * sizeof *y);
  for (int j = 0; j < n; j++) {
    double xj = x[j];
    for (int t = s->Kp[j]; t < s->Kp[j + 1]; t++) {
      int i = s->Ki[t];
      double v = s->Kx[t];
      if (i == j) {
        y[j] += v * xj; /* (the regularisation is taken off below) */
      } else {
        y[i] += v * xj;
        if (sym) y[j] += v * x[i];
      }
    }
  }
  for (int i = 0; i < p->ncon; i++)
    for (int a = 0; a < modeRows[s->mode[i]]; a++) {
      int t = s->off[i] + a;
      y[t] -= REG * x[t];
    }
}

/* the analysis of the pattern in Kp, Ki, reused when it is the last one's; 0 ok, 1 the
 * library failed (out of memory or a numerical breakdown), -1 no memory here */
static int analyse(cdLcpNewton *s, int n, int sym, cdLcpNewtonStats *st) {
  int nnz = s->Kp[n];
  if (s->pat_sym == sym && s->pat_n == n && s->pat_nnz == nnz &&
      !memcmp(s->pat_p, s->Kp, (size_t)(n + 1) * sizeof(int)) && !memcmp(s->pat_i, s->Ki, (size_t)nnz * sizeof(int)))
    return 0;
  dropAnalysis(s);
  if (cd_grow(&s->pat_p, (size_t)n + 1, sizeof(int)) || cd_grow(&s->pat_i, (size_t)nnz, sizeof(int))) return -1;
  st->analyses++;
  if (sym) {
    cholmod_sparse A;
    memset(&A, 0, sizeof A);
    A.nrow = A.ncol = (size_t)n;
    A.nzmax = (size_t)nnz;
    A.p = s->Kp, A.i = s->Ki, A.x = s->Kx;
    A.stype = 1, A.itype = CHOLMOD_INT, A.xtype = CHOLMOD_REAL, A.dtype = CHOLMOD_DOUBLE;
    A.sorted = 1, A.packed = 1;
    s->L = cholmod_analyze(&A, &s->cc);
    if (!s->L) return 1;
  } else {
    if (!(s->ksym = klu_analyze(n, s->Kp, s->Ki, &s->kc))) {
      return 1;
    }
  }
  memcpy(s->pat_p, s->Kp, (size_t)(n + 1) * sizeof(int));
  memcpy(s->pat_i, s->Ki, (size_t)nnz * sizeof(int));
  s->pat_n = n, s->pat_nnz = nnz, s->pat_sym = sym;
  return 0;
}

/* the numeric factorization of K + REG I; 0 ok, 1 failed */
static int factor(cdLcpNewton *s, int n, int sym) {
  if (sym) {
    cholmod_sparse A;
    memset(&A, 0, sizeof A);
    A.nrow = A.ncol = (size_t)n;
    A.nzmax = (size_t)s->Kp[n];
    A.p = s->Kp, A.i = s->Ki, A.x = s->Kx;
    A.stype = 1, A.itype = CHOLMOD_INT, A.xtype = CHOLMOD_REAL, A.dtype = CHOLMOD_DOUBLE;
    A.sorted = 1, A.packed = 1;
    if (!cholmod_factorize(&A, s->L, &s->cc) || s->cc.status != CHOLMOD_OK) return 1;
    return 0;
  }
  if (s->knum) klu_free_numeric(&s->knum, &s->kc);
  s->knum = klu_factor(s->Kp, s->Ki, s->Kx, s->ksym, &s->kc);
  if (!s->knum || s->kc.status != KLU_OK) { /* (a singular U, KLU_SINGULAR: not taken) */
    if (s->knum) klu_free_numeric(&s->knum, &s->kc);
    return 1;
  }
  return 0;
}

/* x = (K + REG I)^-1 b; 0 ok */
static int solve(cdLcpNewton *s, int n, int sym, double *b, double *x) {
  if (sym) {
    cholmod_dense B = cd_denseView(b, n);
    if (!cholmod_solve2(CHOLMOD_A, s->L, &B, NULL, &s->X, NULL, &s->Y, &s->E, &s->cc) || !s->X) return 1;
    memcpy(x, s->X->x, (size_t)n * sizeof *x);
    return 0;
  }
  memcpy(x, b, (size_t)n * sizeof *x);
  return !klu_solve(s->ksym, s->knum, n, 1, x, &s->kc);
}

/* the least beta >= 0 with D^T u_T + e beta >= 0 */
static double slipSpeed(int m, const double *D, const double *u) {
  double beta = 0.0;
  for (int a = 0; a < m; a++) beta = fmax(beta, -(D[2 * a] * u[1] + D[2 * a + 1] * u[2]));
  return beta;
}

/* unknowns -> lambda, c = G lambda + g, z and every contact's residual (s->viol, m/s); returns
 * the largest over vscale: cd_lcpResidual of z */
static double check(cdLcpNewton *s, const cdContactProblem *p, int m, const double *D, double *z) {
  int nc = p->ncon;
  for (int i = 0; i < nc; i++) {
    double *l = &s->lam[3 * i];
    l[0] = l[1] = l[2] = 0.0;
    int r = modeRows[s->mode[i]];
    const double *B = &s->B[9 * i];
    for (int a = 0; a < r; a++) {
      double pa = s->sq[i] * s->q[s->off[i] + a];
      l[0] += B[3 * a] * pa, l[1] += B[3 * a + 1] * pa, l[2] += B[3 * a + 2] * pa;
    }
  }
  cd_blockMatrixMul(&p->G, s->lam, s->u);
  for (int t = 0; t < 3 * nc; t++) s->u[t] += p->g[t];
  double res = 0.0;
  for (int i = 0; i < nc; i++) {
    const double *u = &s->u[3 * i], *l = &s->lam[3 * i];
    double *alpha = &z[nc + m * i], *beta = &z[nc + nc * m + i], mu = p->mu[i];
    int k = s->kdir[i], k1 = (k + 1) % m;
    for (int a = 0; a < m; a++) alpha[a] = 0.0;
    z[i] = l[0];
    switch (s->mode[i]) {
      case MODE_STICK:
        cd_lcpAlphaFromTangent(m, D, &l[1], alpha);
        *beta = 0.0;
        break;
      case MODE_VERTEX:
        alpha[k] = mu * l[0];
        /* frictionless: beta as for a separated contact */
        *beta = mu != 0.0 ? -(D[2 * k] * u[1] + D[2 * k + 1] * u[2]) : slipSpeed(m, D, u);
        break;
      case MODE_SEPARATED:
        *beta = slipSpeed(m, D, u);
        break;
      case MODE_EDGE: {
        double t = s->sq[i] * s->q[s->off[i] + 1];
        alpha[k] = 0.5 * mu * l[0] + t;
        alpha[k1] = 0.5 * mu * l[0] - t;
        *beta = -0.5 * ((D[2 * k] + D[2 * k1]) * u[1] + (D[2 * k + 1] + D[2 * k1 + 1]) * u[2]);
        break;
      }
      default:
        break;
    }
    s->viol[i] = cd_lcpContactResidual(p, m, D, z, u, i);
    if (!(s->viol[i] <= res)) res = s->viol[i];
  }
  return res / cd_contactProblemVelocityScale(p);
}

/* the mode whose friction impulse lies along v (2, in (t1, t2)): the vertex v points at, else
 * the edge of the sector that holds v */
static void sectorMode(int m, const double *D, const double *v, unsigned char *mode, int *k) {
  int best = 0;
  double dmax = -INFINITY;
  for (int l = 0; l < m; l++) {
    double d = D[2 * l] * v[0] + D[2 * l + 1] * v[1];
    if (d > dmax) dmax = d, best = l;
  }
  double cr = D[2 * best] * v[1] - D[2 * best + 1] * v[0];
  if (fabs(cr) <= 1e-12 * fmax(fabs(v[0]), fabs(v[1]))) {
    *mode = MODE_VERTEX, *k = best;
  } else {
    *mode = MODE_EDGE, *k = cr > 0.0 ? best : (best + m - 1) % m;
  }
}

/* the mode a contact's (lambda_n, alpha (m), beta) in zi shows (u (3): its velocity): pressing
 * where lambda_n > 0 or, with lambda_n = 0, where it closes or touches (u_n <= vtol);
 * sliding where beta > 0, along the edge of two adjacent positive alpha, else at the vertex
 * of the largest; sticking otherwise */
static void classify(const double *zi, const double *u, double vtol, double mu, int m, unsigned char *mode, int *k) {
  *k = 0;
  if (!(zi[0] > 0.0)) {
    *mode = u[0] > vtol ? MODE_SEPARATED : mu == 0.0 ? MODE_VERTEX : MODE_STICK;
    return;
  }
  if (mu == 0.0) {
    *mode = MODE_VERTEX;
    return;
  }
  if (!(zi[m + 1] > 0.0)) {
    *mode = MODE_STICK;
    return;
  }
  int first = -1, second = -1, npos = 0, big = 0;
  for (int l = 0; l < m; l++) {
    if (zi[1 + l] > zi[1 + big]) big = l;
    if (zi[1 + l] > 0.0) {
      if (first < 0) first = l;
      else second = l;
      npos++;
    }
  }
  if (npos == 2 && second == first + 1) {
    *mode = MODE_EDGE, *k = first;
  } else if (npos == 2 && first == 0 && second == m - 1) {
    *mode = MODE_EDGE, *k = m - 1; /* the pair (m - 1, 0) wraps */
  } else {
    *mode = MODE_VERTEX, *k = big;
  }
}

/* the next mode of a contact that violates its mode's inequalities (s->u: its velocity,
 * z: its (lambda_n, alpha, beta)): the rule of its largest violation, in the residual's units
 *   lambda_n < 0                      -> separated
 *   c_n < 0 while separated           -> sticking (mu = 0: vertex 0)
 *   lambda_T outside the polygon      -> sliding with the impulse along lambda_T
 *   beta < 0 (the slip reversed)      -> sticking
 *   alpha of an edge's direction < 0  -> the other direction's vertex
 *   a direction opposes the slip more -> sliding with the impulse along -c_T */
static void nextMode(const cdLcpNewton *s, const cdContactProblem *p, int m, const double *D, const double *z, int i,
                     unsigned char *mode, int *k) {
  int nc = p->ncon, md = s->mode[i], kd = s->kdir[i];
  const double *u = &s->u[3 * i], *l = &s->lam[3 * i], *alpha = &z[nc + m * i];
  double w = 1.0 / cd_contactProblemMeff(p, i), mu = p->mu[i], beta = z[nc + nc * m + i], worst = 0.0;
  *mode = (unsigned char)md, *k = kd;
  if (md == MODE_SEPARATED) {
    if (u[0] < 0.0) *mode = mu == 0.0 ? MODE_VERTEX : MODE_STICK, *k = 0;
    return;
  }
  if (-w * l[0] > worst) worst = -w * l[0], *mode = MODE_SEPARATED, *k = 0;
  if (md == MODE_STICK) {
    double sum = 0.0;
    for (int a = 0; a < m; a++) sum += alpha[a];
    if (-w * (mu * l[0] - sum) > worst) sectorMode(m, D, &l[1], mode, k);
    return;
  }
  if (mu == 0.0) return;
  if (-beta > worst) worst = -beta, *mode = MODE_STICK, *k = 0;
  if (md == MODE_EDGE) {
    int k1 = (kd + 1) % m;
    if (-w * alpha[kd] > worst) worst = -w * alpha[kd], *mode = MODE_VERTEX, *k = k1;
    if (-w * alpha[k1] > worst) worst = -w * alpha[k1], *mode = MODE_VERTEX, *k = kd;
  }
  double dmin = 0.0;
  for (int a = 0; a < m; a++) dmin = fmin(dmin, D[2 * a] * u[1] + D[2 * a + 1] * u[2] + beta);
  if (-dmin > worst) {
    double v[2] = {-u[1], -u[2]};
    sectorMode(m, D, v, mode, k);
  }
}


static int violatorCompare(const void *x, const void *y) {
  const cdViolator *a = x, *b = y;
  if (a->v != b->v) return a->v > b->v ? -1 : 1;
  return (a->i > b->i) - (a->i < b->i);
}

/* solves the mode equations for s->q: factorization, then refinement on K from the
 * start below. 0 ok, 1 the factorization failed or the equations are inconsistent (their
 * residual stays above ctol: the modes admit no solution), 2 the LU would cost more than
 * flops_max flops an unknown (not factored), CD_ERR_NOMEM */
static int solveModes(cdLcpNewton *s, const cdContactProblem *p, int n, int sym, double rtol, double ctol,
                      double flops_max, cdLcpNewtonStats *st) {
  int nc = p->ncon;
  if (assemble(s, p, n, sym)) return CD_ERR_NOMEM;
  /* rhs = -S C g, and the velocity scale of each row (1 / sqrt(meff)) in dq for now */
  for (int i = 0; i < nc; i++) {
    const double *C = &s->C[9 * i], *g = &p->g[3 * i];
    for (int a = 0; a < modeRows[s->mode[i]]; a++)
      s->rhs[s->off[i] + a] = -s->sq[i] * (C[3 * a] * g[0] + C[3 * a + 1] * g[1] + C[3 * a + 2] * g[2]);
  }
  /* the start: the current impulses in s->lam (the warm start's in the first iteration),
   * written in the new modes' unknowns; refinement keeps their part along K's null space, so
   * the redundant impulses move only as much as the new equations require */
  for (int i = 0; i < nc; i++) {
    const double *l = &s->lam[3 * i], *B = &s->B[9 * i];
    double *q = &s->q[s->off[i]], iv = 1.0 / s->sq[i];
    switch (s->mode[i]) {
      case MODE_STICK:
        q[0] = l[0] * iv, q[1] = l[1] * iv, q[2] = l[2] * iv;
        break;
      case MODE_VERTEX:
        q[0] = l[0] * iv;
        break;
      case MODE_EDGE: { /* lambda_T = ln (B[1], B[2]) + t (B[4], B[5]) */
        double e2 = B[4] * B[4] + B[5] * B[5];
        q[0] = l[0] * iv;
        q[1] = ((l[1] - l[0] * B[1]) * B[4] + (l[2] - l[0] * B[2]) * B[5]) / e2 * iv;
        break;
      }
      default:
        break;
    }
  }
  productK(s, p, n, sym, s->q, s->r);
  st->products++;
  double rn = 0.0;
  for (int i = 0; i < nc; i++)
    for (int a = s->off[i]; a < s->off[i + 1]; a++) {
      s->r[a] = s->rhs[a] - s->r[a];
      rn = fmax(rn, fabs(s->r[a]) / s->sq[i]);
    }
  if (rn <= rtol) return 0; /* the start solves them already */
  int rc = analyse(s, n, sym, st);
  if (rc < 0) return CD_ERR_NOMEM;
  if (!rc && !sym && flops_max > 0 && s->ksym->est_flops > flops_max * n) return 2;
  if (rc || factor(s, n, sym)) {
    int oom = sym ? s->cc.status == CHOLMOD_OUT_OF_MEMORY : s->kc.status == KLU_OUT_OF_MEMORY;
    dropAnalysis(s);
    return oom ? CD_ERR_NOMEM : 1;
  }
  st->factorizations++;
  st->symmetric += sym;
  for (int k = 0; k < REFINE_MAX; k++) {
    if (solve(s, n, sym, s->r, s->dq)) return 1;
    st->solves++;
    for (int a = 0; a < n; a++) s->q[a] += s->dq[a];
    productK(s, p, n, sym, s->q, s->r);
    st->products++;
    double rn2 = 0.0;
    for (int i = 0; i < nc; i++)
      for (int a = s->off[i]; a < s->off[i + 1]; a++) {
        s->r[a] = s->rhs[a] - s->r[a];
        rn2 = fmax(rn2, fabs(s->r[a]) / s->sq[i]);
      }
    if (!(rn2 < rn)) { /* no better: the part of the data outside K's range is left */
      for (int a = 0; a < n; a++) s->q[a] -= s->dq[a];
      break;
    }
    if (rn2 <= rtol || rn2 > 0.9 * rn) {
      rn = rn2;
      break;
    }
    rn = rn2;
  }
  return rn <= ctol ? 0 : 1;
}

int cd_lcpNewtonSolve(cdLcpNewton *s, const cdContactProblem *p, int m, const double *D, double *z,
                      const cdLcpNewtonOptions *opt, cdLcpNewtonStats *stats) {
  cdLcpNewtonStats st;
  memset(&st, 0, sizeof st);
  int nc = p->ncon, nz = cd_lcpSize(nc, m);
  double tol = opt && opt->tolerance > 0 ? opt->tolerance : 1e-8, target = TARGET_SHARE * tol;
  int maxit = opt && opt->max_iterations > 0 ? opt->max_iterations : CD_LCP_NEWTON_ITERATIONS;
  st.converged = 1;
  if (nc <= 0) {
    if (stats) *stats = st;
    return CD_OK;
  }
  if (reserveContacts(s, nc, m)) return CD_ERR_NOMEM;
  double vs = cd_contactProblemVelocityScale(p);
  for (int i = 0; i < nc; i++) s->sq[i] = sqrt(cd_contactProblemMeff(p, i));

  /* the first modes: read off the start and its velocities */
  cd_lcpLambdaFromZ(nc, m, D, z, s->lam);
  cd_blockMatrixMul(&p->G, s->lam, s->u);
  for (int t = 0; t < 3 * nc; t++) s->u[t] += p->g[t];
  st.products++;
  for (int i = 0; i < nc; i++) {
    s->zb[0] = z[i];
    memcpy(&s->zb[1], &z[nc + m * i], (size_t)m * sizeof(double));
    s->zb[m + 1] = z[nc + nc * m + i];
    classify(s->zb, &s->u[3 * i], tol * vs, p->mu[i], m, &s->mode[i], &s->kdir[i]);
  }

  double bestres = INFINITY;
  int nv = 0, kchg = 0, backtracks = 0, rc = CD_OK;
  size_t c1 = (size_t)nc, c3 = 3 * (size_t)nc;
  while (st.iterations < maxit) {
    int sym, n = layout(s, p, m, D, &sym), failed = 0;
    if (n > 0) {
      rc = solveModes(s, p, n, sym, REFINE_SHARE * tol * vs, tol * vs, opt ? opt->lu_flops_max : 0.0, &st);
      if (rc == CD_ERR_NOMEM) break;
      if (rc == 2) { /* over the caller's bound: it solves the step another way */
        st.costly = 1;
        rc = CD_OK;
        break;
      }
      failed = rc != 0; /* a factorization failed, or modes without a solution */
      rc = CD_OK;
    }
    st.iterations++;
    double res = INFINITY;
    if (!failed) {
      res = check(s, p, m, D, z);
      st.products++;
    }
    if (res < DECREASE * bestres || (res <= tol && res < bestres)) {
      /* a better iterate: kept, and every violator of it changes mode next */
      bestres = res;
      memcpy(s->zbest, z, (size_t)nz * sizeof *z);
      memcpy(s->bmode, s->mode, c1), memcpy(s->bkdir, s->kdir, c1 * sizeof(int));
      memcpy(s->blam, s->lam, c3 * sizeof(double)), memcpy(s->bu, s->u, c3 * sizeof(double));
      memcpy(s->bviol, s->viol, c1 * sizeof(double));
      if (res <= target) break;
      nv = 0;
      for (int i = 0; i < nc; i++)
        if (s->viol[i] > target * vs) s->rank[nv].v = s->viol[i], s->rank[nv++].i = i;
      qsort(s->rank, (size_t)nv, sizeof *s->rank, violatorCompare);
      for (int h = 0; h < nv; h++) s->cand[h] = s->rank[h].i;
      kchg = nv;
    } else {
      /* no better (or no solution): back to the best iterate, and half as many of its
       * violators change, the largest first */
      if (bestres == INFINITY) break;
      memcpy(z, s->zbest, (size_t)nz * sizeof *z);
      memcpy(s->mode, s->bmode, c1), memcpy(s->kdir, s->bkdir, c1 * sizeof(int));
      memcpy(s->lam, s->blam, c3 * sizeof(double)), memcpy(s->u, s->bu, c3 * sizeof(double));
      memcpy(s->viol, s->bviol, c1 * sizeof(double));
      kchg /= 2;
      if (kchg == 0 || ++backtracks > BACKTRACKS) break;
    }
    int changed = 0;
    for (int h = 0; h < nv && changed < kchg; h++) {
      int i = s->cand[h], k;
      unsigned char md;
      nextMode(s, p, m, D, z, i, &md, &k);
      if (md != s->mode[i] || (k != s->kdir[i] && md >= MODE_VERTEX)) {
        s->mode[i] = md, s->kdir[i] = k;
        changed++;
      }
    }
    st.mode_changes += changed;
    if (!changed) break; /* the violations are not the modes' (cycling at roundoff) */
  }
  if (bestres < INFINITY) memcpy(z, s->zbest, (size_t)nz * sizeof *z);
  st.residual = bestres;
  st.converged = bestres <= tol;
  if (stats) *stats = st;
  return rc;
}
