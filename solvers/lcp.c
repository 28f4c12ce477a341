/* lcp.c: the Anitescu-Hart velocity-impulse LCP backend (--model lcp), seeds 000 and 004.
 *
 * Problem (seed 000; Anitescu & Hart, IJNME 2004; Anitescu & Potra, Nonlinear Dynamics
 * 1997). The core gives the step's contact problem (problem.h): the Delassus operator
 * G = J M^-1 J^T in 3x3 blocks in each contact's frame (n, t1, t2) and
 * g = J v_f + (phi/dt, 0, 0), so the post-step contact velocity is c = G lambda + g (m/s).
 * The circular friction cone is replaced by the polygon spanned by m balanced directions
 * d_k = cos(2 pi k/m) t1 + sin(2 pi k/m) t2, lambda_T = D alpha with alpha >= 0, and the
 * maximum-dissipation LP's multiplier beta (m/s) is kept as an unknown. Per contact:
 *     0 <= lambda_n  perp  c_n                    >= 0   (Signorini, stabilised by phi/dt)
 *     0 <= alpha     perp  D^T c_T + e beta       >= 0   (slip opposes the impulse)
 *     0 <= beta      perp  mu lambda_n - e^T alpha >= 0  (polygonal Coulomb bound)
 * which is the LCP 0 <= z perp A z + b >= 0 in z = (lambda_N, alpha, beta) of lcp.h.
 * Sliding contacts keep c_n = 0 (no lift, unlike the CCP of seed 001), and beta is the
 * sliding speed measured along the most opposed direction: beta = max_k (-d_k . c_T).
 * With mu = 0, alpha = 0 and the normal rows are seed 004's frictionless LCP
 * 0 <= lambda_N perp G_NN lambda_N + g_N >= 0.
 *
 * Solvers: "lemke" (lcp_lemke.c) on the dense A, exact up to roundoff (checked to
 * 1e-10 max(1, ||b||_inf) by default); "bgs" (lcp_bgs.c, alias "pgs") block Gauss-Seidel
 * over contacts, each contact's block solved exactly (closed-form active sets, Lemke when
 * degenerate), subspace steps on the active set the sweeps found (lcp_subspace.c), stalled
 * clusters of contacts solved exactly by Lemke, contacts swept
 * bottom-up against gravity, to cd_lcpResidual <= tol (lcp.h: the pairs of the LCP compared in
 * m/s, relative to ||g||_inf) with --tolerance tol, 1e-8 by default; the default picks Lemke for
 * n = ncon (m + 2) <= CD_LCP_AUTO_LEMKE_MAX and bgs above. Lemke runs with the largest-pivot
 * tie rule from the warm start's basis (lcp_lemke.c), then if needed once more with the
 * textbook lexicographic rule from the standard start. When Lemke does not solve
 * (ray termination, pivot limit, an inaccurate basis, or n > CD_LCP_LEMKE_MAX), the step
 * falls back to bgs from the warm start; stats->fallbacks counts it, so it is never silent.
 * A bgs solve that misses its rule from the warm start runs once more from zero, and the
 * answer of smaller residual is taken (both runs' sweeps are counted).
 * Warm start (bgs): lambda_n and beta from the previous step's contact (the core carries
 * them by key), alpha from the contact set's alpha rows when they reproduce lambda_T, else
 * lambda_T split over the two directions adjacent to its angle.
 * Outputs: p->lambda = (lambda_n, D alpha) per contact, each contact's beta, and the
 * contact set's alpha rows (m a contact). stats: iterations = Lemke pivots plus bgs sweeps
 * of the step, residual = cd_lcpResidual of the answer (relative), converged =
 * the stopping rule of the solver that produced it was met.
 */
#include "lcp.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "lcp_bgs.h"
#include "lcp_lemke.h"

int cd_lcpSize(int ncon, int m) { return ncon * (m + 2); }

void cd_lcpDirections(int m, double *D) {
  /* exact at the quarter turns so that m = 4 gives (+-1, 0), (0, +-1) exactly and the
   * balanced pairs d_{k + m/2} = -d_k hold bit for bit */
  for (int k = 0; k < m; k++) {
    double c, s;
    if (4 * k % m == 0) {
      int q = 4 * k / m;
      c = q == 0 ? 1.0 : q == 2 ? -1.0 : 0.0;
      s = q == 1 ? 1.0 : q == 3 ? -1.0 : 0.0;
    } else if (2 * k >= m) {
      c = -D[2 * (k - m / 2)];
      s = -D[2 * (k - m / 2) + 1];
    } else {
      double a = 2.0 * M_PI * k / m;
      c = cos(a);
      s = sin(a);
    }
    D[2 * k] = c;
    D[2 * k + 1] = s;
  }
}

/* entry (r, c) of the coupling block: index 0 is lambda_n, 1 + l is alpha_l */
static double couplingEntry(const double *Gb, const double *D, int r, int c) {
  if (r == 0 && c == 0) return Gb[0];
  if (r == 0) return Gb[1] * D[2 * (c - 1)] + Gb[2] * D[2 * (c - 1) + 1];
  const double *dr = &D[2 * (r - 1)];
  if (c == 0) return dr[0] * Gb[3] + dr[1] * Gb[6];
  const double *dc = &D[2 * (c - 1)];
  return dr[0] * (Gb[4] * dc[0] + Gb[5] * dc[1]) + dr[1] * (Gb[7] * dc[0] + Gb[8] * dc[1]);
}

void cd_lcpCouplingBlock(const double *Gb, int m, const double *D, double *T, int ld) {
  for (int c = 0; c <= m; c++)
    for (int r = 0; r <= m; r++) T[r + (size_t)c * (size_t)ld] = couplingEntry(Gb, D, r, c);
}

void cd_lcpBuildDense(const cdContactProblem *p, int m, const double *D, double *A, double *b) {
  int nc = p->ncon;
  size_t n = (size_t)cd_lcpSize(nc, m);
  memset(A, 0, n * n * sizeof *A);
  const cdBlockMatrix *G = &p->G;
  for (int i = 0; i < nc; i++) {
    for (int t = G->rowptr[i]; t < G->rowptr[i + 1]; t++) {
      int j = G->col[t];
      const double *Gb = &G->val[9 * (size_t)t];
      for (int c = 0; c <= m; c++) {
        size_t cj = c == 0 ? (size_t)j : (size_t)(nc + m * j + c - 1);
        for (int r = 0; r <= m; r++) {
          size_t ri = r == 0 ? (size_t)i : (size_t)(nc + m * i + r - 1);
          A[ri + cj * n] = couplingEntry(Gb, D, r, c);
        }
      }
    }
    size_t bi = (size_t)(nc + nc * m + i);
    for (int l = 0; l < m; l++) {
      size_t ai = (size_t)(nc + m * i + l);
      A[ai + bi * n] = 1.0;  /* E */
      A[bi + ai * n] = -1.0; /* -E^T */
    }
    A[bi + (size_t)i * n] = p->mu[i]; /* M_mu */
    b[i] = p->g[3 * i];
    for (int l = 0; l < m; l++) b[nc + m * i + l] = D[2 * l] * p->g[3 * i + 1] + D[2 * l + 1] * p->g[3 * i + 2];
    b[bi] = 0.0;
  }
}

void cd_lcpLambdaFromZ(int ncon, int m, const double *D, const double *z, double *lambda) {
  for (int i = 0; i < ncon; i++) {
    double t1 = 0.0, t2 = 0.0;
    for (int l = 0; l < m; l++) {
      double a = z[ncon + m * i + l];
      t1 += D[2 * l] * a;
      t2 += D[2 * l + 1] * a;
    }
    lambda[3 * i] = z[i];
    lambda[3 * i + 1] = t1;
    lambda[3 * i + 2] = t2;
  }
}

void cd_lcpAlphaFromTangent(int m, const double *D, const double *lt, double *alpha) {
  for (int l = 0; l < m; l++) alpha[l] = 0.0;
  if (lt[0] == 0.0 && lt[1] == 0.0) return;
  double th = atan2(lt[1], lt[0]);
  if (th < 0) th += 2.0 * M_PI;
  int k = (int)floor(th / (2.0 * M_PI / m));
  if (k < 0) k = 0;
  if (k >= m) k = m - 1;
  int l = (k + 1) % m;
  const double *dk = &D[2 * k], *dl = &D[2 * l];
  double det = dk[0] * dl[1] - dk[1] * dl[0]; /* sin(2 pi / m) > 0 */
  alpha[k] = fmax(0.0, (lt[0] * dl[1] - lt[1] * dl[0]) / det);
  alpha[l] = fmax(0.0, (dk[0] * lt[1] - dk[1] * lt[0]) / det);
}

/* u = G lambda(z) + g into work + 3 ncon; returns it */
static double *contactVelocity(const cdContactProblem *p, int m, const double *D, const double *z, double *work) {
  int nc = p->ncon;
  double *lam = work, *u = work + 3 * (size_t)nc;
  cd_lcpLambdaFromZ(nc, m, D, z, lam);
  cd_blockMatrixMul(&p->G, lam, u);
  for (int t = 0; t < 3 * nc; t++) u[t] += p->g[t];
  return u;
}

void cd_lcpEvaluate(const cdContactProblem *p, int m, const double *D, const double *z, double *w, double *work) {
  int nc = p->ncon;
  const double *u = contactVelocity(p, m, D, z, work);
  for (int i = 0; i < nc; i++) {
    double beta = z[nc + nc * m + i], sum = 0.0;
    w[i] = u[3 * i];
    for (int l = 0; l < m; l++) {
      w[nc + m * i + l] = D[2 * l] * u[3 * i + 1] + D[2 * l + 1] * u[3 * i + 2] + beta;
      sum += z[nc + m * i + l];
    }
    w[nc + nc * m + i] = p->mu[i] * z[i] - sum;
  }
}

static double worse(double res, double zi, double wi) {
  double v = fabs(fmin(zi, wi));
  return v <= res ? res : v; /* NaN propagates */
}

double cd_lcpResidual(const cdContactProblem *p, int m, const double *D, const double *z, double *work) {
  int nc = p->ncon;
  const double *u = contactVelocity(p, m, D, z, work);
  double res = 0.0;
  for (int i = 0; i < nc; i++) {
    /* impulses (lambda_N, alpha, the bound mu lambda_N - sum alpha) as velocities: / meff_i */
    double beta = z[nc + nc * m + i], sum = 0.0, w = 1.0 / cd_contactProblemMeff(p, i);
    res = worse(res, w * z[i], u[3 * i]);
    for (int l = 0; l < m; l++) {
      double a = z[nc + m * i + l];
      res = worse(res, w * a, D[2 * l] * u[3 * i + 1] + D[2 * l + 1] * u[3 * i + 2] + beta);
      sum += a;
    }
    res = worse(res, beta, w * (p->mu[i] * z[i] - sum));
  }
  return res / cd_contactProblemVelocityScale(p);
}

/* ---- the backend ---- */

typedef enum { LCP_AUTO = 0, LCP_LEMKE, LCP_BGS } cdLcpMode;

typedef struct {
  double h; /* height of the contact point along up, m */
  int i;    /* contact */
} cdLcpRank;

typedef struct cdLcpState {
  int m;           /* friction directions */
  double *D;       /* (2 x m) */
  cdLcpMode mode;
  double tol;      /* user tolerance, 0: each solver's default */
  int max_sweeps;  /* bgs, 0: default */
  int used_lemke, used_bgs;
  double up[3];    /* unit, world: against gravity (z without gravity); heights for the bgs order */
  /* scratch, grown on demand and kept between steps */
  size_t zcap, wcap, acap, lcap; /* bytes */
  double *z;       /* (2 n) the solution, then the warm start */
  double *work;    /* (6 ncon) */
  double *A;       /* (n x n + 2 n) the dense A, then b, then the scales of lcpScaleDense */
  size_t ocap;     /* contacts rank and order hold */
  cdLcpRank *rank; /* (ocap) contact heights, sorted into the bgs order */
  int *order;      /* (ocap) */
  void *lemke;     /* cd_lemkeWorkSize(n) bytes */
} cdLcpState;

static void lcpFree(void *state) {
  cdLcpState *s = state;
  if (!s) return;
  cd_free(s->D), cd_free(s->z), cd_free(s->work), cd_free(s->A), cd_free(s->lemke);
  cd_free(s->rank), cd_free(s->order);
  cd_free(s);
}

static int lcpMake(const cdScene *scene, const cdBackendOptions *opt, void **state, char *err, size_t errlen) {
  *state = NULL;
  int m = opt && opt->friction_dirs ? opt->friction_dirs : 4;
  if (m < 4 || m % 2) {
    snprintf(err, errlen, "lcp: --friction-dirs must be an even number >= 4 (got %d)", m);
    return CD_ERR_USAGE;
  }
  cdLcpMode mode = LCP_AUTO;
  const char *name = opt ? opt->solver : NULL;
  if (name && !strcmp(name, "lemke"))
    mode = LCP_LEMKE;
  else if (name && (!strcmp(name, "bgs") || !strcmp(name, "pgs")))
    mode = LCP_BGS;
  else if (name) {
    snprintf(err, errlen, "lcp: unknown solver '%s' (expected lemke, bgs or pgs)", name);
    return CD_ERR_USAGE;
  }
  if (opt && !(opt->tolerance >= 0.0)) {
    snprintf(err, errlen, "lcp: --tolerance must be > 0 (got %g)", opt->tolerance);
    return CD_ERR_USAGE;
  }
  if (opt && opt->max_iterations < 0) {
    snprintf(err, errlen, "lcp: --max-iterations must be > 0 (got %d)", opt->max_iterations);
    return CD_ERR_USAGE;
  }
  cdLcpState *s = cd_calloc(1, sizeof *s);
  if (!s) return CD_ERR_NOMEM;
  s->D = cd_malloc(2 * (size_t)m * sizeof *s->D);
  if (!s->D) {
    lcpFree(s);
    return CD_ERR_NOMEM;
  }
  s->m = m;
  cd_lcpDirections(m, s->D);
  s->mode = mode;
  s->tol = opt ? opt->tolerance : 0.0;
  s->max_sweeps = opt ? opt->max_iterations : 0;
  double gn = scene ? sqrt(scene->gravity[0] * scene->gravity[0] + scene->gravity[1] * scene->gravity[1] +
                           scene->gravity[2] * scene->gravity[2])
                    : 0.0;
  for (int t = 0; t < 3; t++) s->up[t] = gn > 0.0 ? -scene->gravity[t] / gn : t == 2;
  *state = s;
  return CD_OK;
}

static const char *lcpSolverName(const void *state) {
  const cdLcpState *s = state;
  if (s->used_lemke && s->used_bgs) return "lemke+bgs";
  if (s->used_lemke) return "lemke";
  if (s->used_bgs) return "bgs";
  /* nothing solved yet: what the configuration will use */
  return s->mode == LCP_LEMKE ? "lemke" : s->mode == LCP_BGS ? "bgs" : "lemke+bgs";
}

/* grows *buf to hold want bytes; 0 ok */
static int reserve(void **buf, size_t *cap, size_t want) {
  if (want <= *cap) return 0;
  void *q = cd_realloc(*buf, want);
  if (!q) return -1;
  *buf = q;
  *cap = want;
  return 0;
}

/* the warm start z from p->lambda, the contacts' beta and alpha rows */
static void warmStart(const cdLcpState *s, const cdContactProblem *p, const cdContactSet *contacts, double *z) {
  int nc = p->ncon, m = s->m;
  for (int i = 0; i < nc; i++) {
    const double *lam = &p->lambda[3 * i];
    double *alpha = &z[nc + m * i];
    z[i] = fmax(0.0, lam[0]);
    z[nc + nc * m + i] = contacts ? fmax(0.0, contacts->con[i].beta) : 0.0;
    /* the carried alpha row, when it is non-negative and reproduces lambda_T */
    int ok = contacts && contacts->nalpha == m && contacts->alpha;
    if (ok) {
      const double *a = &contacts->alpha[(size_t)i * (size_t)m];
      double t1 = 0.0, t2 = 0.0;
      for (int l = 0; l < m; l++) {
        ok &= a[l] >= 0.0;
        t1 += s->D[2 * l] * a[l];
        t2 += s->D[2 * l + 1] * a[l];
      }
      double scale = 1.0 + fabs(lam[1]) + fabs(lam[2]);
      ok &= fabs(t1 - lam[1]) <= 1e-9 * scale && fabs(t2 - lam[2]) <= 1e-9 * scale;
      if (ok) memcpy(alpha, a, (size_t)m * sizeof *alpha);
    }
    if (!ok) cd_lcpAlphaFromTangent(m, s->D, &lam[1], alpha);
  }
}

static int rankCompare(const void *x, const void *y) {
  const cdLcpRank *a = x, *b = y;
  if (a->h != b->h) return a->h < b->h ? -1 : 1;
  return (a->i > b->i) - (a->i < b->i); /* ties by index: deterministic */
}

/* the bgs order: the contacts bottom-up along s->up, so that a forward sweep carries the
 * support up from the ground and the backward one the weight back down (O(ncon log ncon));
 * NULL (the key order) without a contact set. 0 ok, -1 no memory */
static int bgsOrder(cdLcpState *s, const cdContactSet *contacts, int nc, const int **order) {
  *order = NULL;
  if (!contacts) return 0;
  if ((size_t)nc > s->ocap) {
    cdLcpRank *r = cd_realloc(s->rank, (size_t)nc * sizeof *r);
    if (!r) return -1;
    s->rank = r;
    int *o = cd_realloc(s->order, (size_t)nc * sizeof *o);
    if (!o) return -1;
    s->order = o;
    s->ocap = (size_t)nc;
  }
  for (int i = 0; i < nc; i++) {
    const double *x = contacts->con[i].point;
    s->rank[i].h = x[0] * s->up[0] + x[1] * s->up[1] + x[2] * s->up[2];
    s->rank[i].i = i;
  }
  qsort(s->rank, (size_t)nc, sizeof *s->rank, rankCompare);
  for (int i = 0; i < nc; i++) s->order[i] = s->rank[i].i;
  *order = s->order;
  return 0;
}

/* the units of Lemke's scaled LCP (lcpSolve): sc[k] = 1 / meff_i for lambda_N and alpha of
 * contact i, 1 for beta; z' = S z / vscale, w' = R w / vscale with S = diag(sc) and R = 1 on
 * the velocity rows, 1 / meff_i on the bound rows; A' = R A S^-1, b' = R b / vscale, the
 * same complementarity. dir = 1 scales A, b (may be NULL) and z; dir = -1 takes z back. */
static void lcpScaleDense(const cdContactProblem *p, int m, double *sc, double *A, double *b, double *z, int dir) {
  size_t nc = (size_t)p->ncon, n = nc * (size_t)(m + 2), nb = nc + nc * (size_t)m;
  double vs = cd_contactProblemVelocityScale(p);
  for (size_t i = 0; i < nc; i++) {
    double w = 1.0 / cd_contactProblemMeff(p, (int)i);
    sc[i] = w;
    for (int l = 0; l < m; l++) sc[nc + (size_t)m * i + (size_t)l] = w;
    sc[nb + i] = 1.0;
  }
  for (size_t k = 0; k < n; k++) z[k] = dir > 0 ? z[k] * sc[k] / vs : z[k] * vs / sc[k];
  if (!A) return;
  for (size_t j = 0; j < n; j++) {
    double *col = &A[j * n], inv = 1.0 / sc[j];
    for (size_t k = 0; k < nb; k++) col[k] *= inv;
    for (size_t k = nb; k < n; k++) col[k] *= sc[k - nb] * inv;
  }
  for (size_t k = 0; k < n; k++) b[k] *= (k >= nb ? sc[k - nb] : 1.0) / vs;
}

static int lcpSolve(void *state, cdContactProblem *p, cdContactSet *contacts, cdSolveStats *stats) {
  cdLcpState *s = state;
  int nc = p->ncon, m = s->m;
  memset(stats, 0, sizeof *stats);
  stats->converged = 1;
  if (nc <= 0) return CD_OK;
  if (contacts && contacts->ncon != nc) return CD_ERR_USAGE; /* block i must be contact i */
  if (cd_contactProblemDelassus(p)) return CD_ERR_NOMEM;
  size_t n = (size_t)cd_lcpSize(nc, m);
  if (reserve((void **)&s->z, &s->zcap, 2 * n * sizeof(double)) ||
      reserve((void **)&s->work, &s->wcap, 6 * (size_t)nc * sizeof(double)))
    return CD_ERR_NOMEM;
  double *z = s->z, *zw = s->z + n;
  warmStart(s, p, contacts, zw);

  int use_lemke = s->mode == LCP_LEMKE ? n <= CD_LCP_LEMKE_MAX : s->mode == LCP_AUTO ? n <= CD_LCP_AUTO_LEMKE_MAX : 0;
  int done = 0;
  if (use_lemke) {
    if (reserve((void **)&s->A, &s->acap, (n * n + 2 * n) * sizeof(double)) ||
        reserve(&s->lemke, &s->lcap, cd_lemkeWorkSize((int)n)))
      return CD_ERR_NOMEM;
    double *A = s->A, *b = s->A + n * n, *sc = b + n;
    cd_lcpBuildDense(p, m, s->D, A, b);
    /* Lemke works in the residual's units (lcp.h): impulses as velocities, relative to
     * ||g||_inf, so that its pivot choices and its 1e-10 check do not depend on the unit of
     * mass. z' = S z / vscale, w' = R w / vscale with S = diag(1 / meff_i on lambda_N and
     * alpha, 1 on beta), R = diag(1 on the velocity rows, 1 / meff_i on the bound rows):
     * A' = R A S^-1, b' = R b / vscale, the same complementarity. */
    lcpScaleDense(p, m, sc, A, b, zw, 1);
    /* a contact LCP that Lemke solves takes a few pivots a variable (a fraction of n on the
     * bundled scenes, 1.2 n cold on the cube pyramid, none warm); one that needs many more
     * is degenerate enough to cycle numerically, and bgs from the warm start is the
     * cheaper way out */
    cdLemkeOptions lo = {.tolerance = s->tol, .work = s->lemke, .max_pivots = CD_LCP_LEMKE_PIVOTS((int)n),
                         .ties = CD_LEMKE_TIES_LARGEST_PIVOT, .start = zw};
    cdLemkeStats ls;
    int st = cd_lemkeSolve((int)n, A, b, z, &lo, &ls);
    if (st == CD_LEMKE_NOMEM) return CD_ERR_NOMEM;
    stats->iterations += ls.pivots;
    if (st != CD_LEMKE_SOLVED) {
      /* the textbook lexicographic rule from the standard start takes another path */
      lo.ties = CD_LEMKE_TIES_LEXICOGRAPHIC;
      lo.start = NULL;
      st = cd_lemkeSolve((int)n, A, b, z, &lo, &ls);
      if (st == CD_LEMKE_NOMEM) return CD_ERR_NOMEM;
      stats->iterations += ls.pivots;
    }
    lcpScaleDense(p, m, sc, NULL, NULL, zw, -1);
    if (st == CD_LEMKE_SOLVED) {
      lcpScaleDense(p, m, sc, NULL, NULL, z, -1);
      s->used_lemke = 1;
      done = 1;
    } else {
      stats->fallbacks++;
    }
  } else if (s->mode == LCP_LEMKE) {
    stats->fallbacks++; /* too large for the dense solver */
  }
  if (!done) {
    memcpy(z, zw, n * sizeof *z);
    cdBgsOptions bo = {.tolerance = s->tol, .max_sweeps = s->max_sweeps};
    if (bgsOrder(s, contacts, nc, &bo.order)) return CD_ERR_NOMEM;
    cdBgsStats bs;
    if (cd_bgsSolve(p, m, s->D, z, &bo, &bs)) return CD_ERR_NOMEM;
    s->used_bgs = 1;
    stats->iterations += bs.sweeps;
    stats->converged = bs.converged;
    if (!bs.converged) {
      /* a warm start can hold the sweeps in the basin of the previous step's active set
       * (measured on a 4096-sphere impact: 1000 sweeps to 3e-5 warm, 240 to 4e-8 cold):
       * once more from zero, the better of the two kept */
      cdBgsStats bc;
      memset(zw, 0, n * sizeof *zw);
      if (cd_bgsSolve(p, m, s->D, zw, &bo, &bc)) return CD_ERR_NOMEM;
      stats->iterations += bc.sweeps;
      if (bc.residual < bs.residual) {
        memcpy(z, zw, n * sizeof *z);
        stats->converged = bc.converged;
      }
    }
  }
  stats->residual = cd_lcpResidual(p, m, s->D, z, s->work);

  /* map back: lambda = (lambda_n, D alpha); beta and the alpha rows into the contact set */
  cd_lcpLambdaFromZ(nc, m, s->D, z, p->lambda);
  if (contacts) {
    if (contacts->nalpha != m && cd_contactSetSetAlpha(contacts, m)) return CD_ERR_NOMEM;
    for (int i = 0; i < nc; i++) {
      contacts->con[i].beta = z[n - (size_t)nc + (size_t)i];
      memcpy(&contacts->alpha[(size_t)i * (size_t)m], &z[(size_t)nc + (size_t)m * (size_t)i], (size_t)m * sizeof(double));
    }
  }
  return CD_OK;
}

const cdBackend cd_backendLcp = {
    .name = "lcp",
    .kind = CD_BACKEND_IMPULSE,
    .make = lcpMake,
    .solverName = lcpSolverName,
    .solve = lcpSolve,
    .substeps = NULL,
    .forces = NULL,
    .free = lcpFree,
};
