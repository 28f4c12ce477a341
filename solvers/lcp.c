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
 * Solvers: "newton" (lcp_newton.c), the active-set method: each contact's mode (separated,
 * sticking, sliding at a vertex or along an edge of the polygon) makes its rows linear
 * equations, the active set's sparse system is factored directly (CHOLMOD when every active
 * contact sticks, KLU with sliding friction; regularised and refined: the impulses nearest
 * the start) and violated modes change, the neighbourhoods' largest, until an active set
 * is no better than the best iterate, from which bgs goes on; its first modes are read off
 * its start. "lemke" (lcp_lemke.c) on the dense A, exact up to roundoff (checked to 1e-10
 * in the residual's units). "bgs" (lcp_bgs.c, alias "pgs") block Gauss-Seidel over
 * contacts, each block solved exactly, with subspace steps (lcp_subspace.c) and exact
 * cluster solves, to cd_lcpResidual <= tol (--tolerance, 1e-8 by default).
 * The default: Lemke for n = ncon (m + 2) <= CD_LCP_AUTO_LEMKE_MAX (a few contacts); above
 * it, and when Lemke fails, what --solver newton does, within a cost bound: the active-set
 * method from the warm start (the default pauses this try for 1, 2, 4 .. BACKOFF_MAX steps
 * after it failed, and for BACKOFF_MAX at once when an active set was over AUTO_LU_FLOPS;
 * inside bgs the tries end at the first such active set and the subspace steps of --solver
 * bgs take over for the rest of the step), and
 * when it fails, the warm start where that meets the tolerance already, else bgs from the
 * better of the warm start and the method's best iterate (on the
 * 55-cube pyramid the method often stops a few modes short at 1e-7, where the warm start is
 * at 1e-5), with active-set tries from the sweeps' iterates in
 * place of the subspace steps (lcp_bgs.c: the sweeps put nearly every contact in its mode;
 * on the settling 55-cube pyramid, whose friction limits move between redundant contacts
 * from step to step, the warm start's modes cycle while the sweeps' at a residual of 1e-4
 * are solved in one to four active sets) and once more on the sweeps' answer, so that the
 * answer is well inside the tolerance (lcp_newton.c: TARGET_SHARE) and the next step's warm
 * start keeps its modes. Lemke runs with the largest-pivot tie rule from the warm start's
 * basis, then if needed once more with the lexicographic rule from the standard start. A
 * bgs solve that misses its rule from the warm start by more than COLD_ABOVE times runs once
 * more from zero, then the better of the two goes on for up to BGS_CONTINUE_SWEEPS (not under a --max-iterations
 * cap). Every fall from one solver to the next, and every active-set try that did not
 * solve, is in stats->fallbacks, so it is never silent.
 * Warm start: lambda_n and beta from the previous step's contact (the core carries them by
 * key), alpha from the contact set's alpha rows when they reproduce lambda_T; where they do
 * not (the frame turned with the normal), a contact that slid at a vertex (beta > 0, one
 * alpha) slides at the vertex nearest lambda_T in the new frame, and otherwise
 * cd_lcpAlphaFromTangent splits lambda_T over the two directions around it.
 * Outputs: p->lambda = (lambda_n, D alpha) per contact, each contact's beta, and the
 * contact set's alpha rows (m a contact). stats (per step; each solver's unit):
 *   iterations      Lemke pivots + active sets solved (Newton, inside bgs too) + bgs sweeps;
 *   factorizations  Newton's numeric sparse factorizations + bgs's dense cluster solves;
 *   products        products with G or with the active-set matrix outside those counts:
 *                   Newton's checks and refinement products, bgs's residual checks and GMRES
 *                   iterations of its subspace steps;
 *   residual        cd_lcpResidual of the answer (relative; the active-set method's answer
 *                   comes with it, computed through the bodies); converged: the stopping
 *                   rule of the solver that produced it was met.
 * --max-iterations caps Newton's active sets (each try; the tries inside bgs take at most
 * CD_BGS_TRY_SETS, lcp_bgs.h, whichever is smaller) and bgs's sweeps (and drops the cold
 * retry).
 */
#include "lcp.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "ccp_velocity.h"
#include "lcp_bgs.h"
#include "lcp_lemke.h"
#include "lcp_newton.h"

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

size_t cd_lcpDelassusScratch(const cdContactProblem *p) {
  if (p->nbody <= 0 || !p->J || !p->cbody || !p->minv || !p->Iinv) return 0;
  if (p->delassus_pending) return 6 * (size_t)p->nbody; /* (no G to multiply with) */
  if (!p->JM) return 0;
  /* multiply-adds: 18 a block of J^T and of J M^-1 (two a contact, one on the ground) and the
   * zeroing of J^T x, against 9 a block of G */
  double body = 72.0 * p->ncon + 6.0 * p->nbody, assembled = 9.0 * p->G.rowptr[p->ncon];
  return body < assembled ? 6 * (size_t)p->nbody : 0;
}

void cd_lcpDelassusMul(const cdContactProblem *p, const double *x, double *y, double *wb) {
  if (!wb || !cd_lcpDelassusScratch(p)) {
    /* (by columns, the contacts with x_j = 0 left out, where cd_contactProblemDelassus built
     * G: problem_block.c; the active-set method's products are of impulses where about half
     * the contacts carry none: S2 10's first 60 steps, its 557 products through G 252.5M ->
     * 135M instructions) */
    cd_blockMatrixMul(&p->G, x, y);
    return;
  }
  /* y = (J M^-1) (J^T x), contact by contact; while G is not built there is no J M^-1 either:
   * wb = M^-1 (J^T x) body by body, then y = J wb */
  cd_ccpJtMul(p, x, wb);
  if (p->delassus_pending) cd_ccpMinvMul(p, wb);
  const double *JM = p->delassus_pending ? p->J : p->JM;
  for (int i = 0; i < p->ncon; i++) cd_contactProblemRowsMul(p, JM, i, wb, &y[3 * i]);
}

/* u = G lambda(z) + g into work + 3 ncon; returns it */
static double *contactVelocity(const cdContactProblem *p, int m, const double *D, const double *z, double *work) {
  int nc = p->ncon;
  double *lam = work, *u = work + 3 * (size_t)nc;
  cd_lcpLambdaFromZ(nc, m, D, z, lam);
  cd_contactProblemVelocity(p, lam, u);
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

double cd_lcpContactResidual(const cdContactProblem *p, int m, const double *D, const double *z, const double *u,
                             int i) {
  /* impulses (lambda_N, alpha, the bound mu lambda_N - sum alpha) as velocities: / meff_i */
  return cd_lcpContactResidualOf(p->ncon, m, D, z, u, i, 1.0 / cd_contactProblemMeff(p, i), p->mu[i]);
}

double cd_lcpResidualOfVelocity(const cdContactProblem *p, int m, const double *D, const double *z, const double *u) {
  double res = 0.0;
  for (int i = 0; i < p->ncon; i++) res = cd_lcpResidualMax(res, cd_lcpContactResidual(p, m, D, z, &u[3 * i], i));
  return res / cd_contactProblemVelocityScale(p);
}

double cd_lcpResidual(const cdContactProblem *p, int m, const double *D, const double *z, double *work) {
  return cd_lcpResidualOfVelocity(p, m, D, z, contactVelocity(p, m, D, z, work));
}

/* ---- the backend ---- */

typedef enum { LCP_AUTO = 0, LCP_LEMKE, LCP_NEWTON, LCP_BGS } cdLcpMode;

typedef struct {
  double h; /* height of the contact point along up, m */
  int i;    /* contact */
} cdLcpRank;

/* the default's pause of the active-set method from the warm start after it failed: 1, 2, 4
 * .. BACKOFF_MAX steps, doubling while it keeps failing, reset by a success */
typedef struct {
  int skip;  /* steps left without the try */
  int pause; /* the last pause, 0 after a success */
} cdLcpBackoff;

typedef struct cdLcpState {
  int m;           /* friction directions */
  double *D;       /* (2 x m) */
  cdLcpMode mode;
  double tol;      /* user tolerance, 0: each solver's default */
  int max_iter;    /* --max-iterations: Newton's active sets and bgs's sweeps; 0: defaults */
  int used_lemke, used_newton, used_bgs;
  char name[24];   /* the solvers used, "lemke+newton+bgs" at most */
  double up[3];    /* unit, world: against gravity (z without gravity); heights for the bgs order */
  cdLcpNewton *newton;
  cdLcpBackoff warm; /* the default's pause of the active-set method from the warm start */
  int costly;      /* 1: this step's active sets are over AUTO_LU_FLOPS (the default) */
  double newton_res; /* the residual of the active-set method's best iterate this step (INFINITY: none) */
  /* scratch, grown on demand and kept between steps */
  size_t zcap, wcap, acap, lcap; /* bytes */
  double *z;       /* (2 n) the solution, then the warm start */
  double *work;    /* (6 ncon) */
  double *A;       /* (n x n + 2 n) the dense A, then b, then the scales of lcpScaleDense */
  size_t ocap;     /* contacts rank and order hold */
  cdLcpRank *rank; /* (2 ocap) contact heights, sorted into the bgs order; rankSort's scratch */
  int *order;      /* (ocap) */
  void *lemke;     /* cd_lemkeWorkSize(n) bytes */
} cdLcpState;

static void lcpFree(void *state) {
  cdLcpState *s = state;
  if (!s) return;
  cd_lcpNewtonFree(s->newton);
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
  else if (name && !strcmp(name, "newton"))
    mode = LCP_NEWTON;
  else if (name && (!strcmp(name, "bgs") || !strcmp(name, "pgs")))
    mode = LCP_BGS;
  else if (name) {
    snprintf(err, errlen, "lcp: unknown solver '%s' (expected lemke, newton, bgs or pgs)", name);
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
  if (!s->D || (mode != LCP_LEMKE && !(s->newton = cd_lcpNewtonMake()))) {
    lcpFree(s);
    return CD_ERR_NOMEM;
  }
  s->m = m;
  cd_lcpDirections(m, s->D);
  s->mode = mode;
  s->tol = opt ? opt->tolerance : 0.0;
  s->max_iter = opt ? opt->max_iterations : 0;
  double gn = scene ? sqrt(scene->gravity[0] * scene->gravity[0] + scene->gravity[1] * scene->gravity[1] +
                           scene->gravity[2] * scene->gravity[2])
                    : 0.0;
  for (int t = 0; t < 3; t++) s->up[t] = gn > 0.0 ? -scene->gravity[t] / gn : t == 2;
  *state = s;
  return CD_OK;
}

static const char *lcpSolverName(const void *state) {
  const cdLcpState *s = state;
  cdLcpState *w = (cdLcpState *)(uintptr_t)state; /* the name buffer is scratch */
  int l = s->used_lemke, n = s->used_newton, b = s->used_bgs;
  if (!l && !n && !b) {
    /* nothing solved yet: what the configuration can use */
    l = s->mode == LCP_LEMKE || s->mode == LCP_AUTO;
    n = s->mode == LCP_NEWTON || s->mode == LCP_AUTO;
    b = 1;
  }
  snprintf(w->name, sizeof w->name, "%s%s%s%s%s", l ? "lemke" : "", l && (n || b) ? "+" : "", n ? "newton" : "",
           n && b ? "+" : "", b ? "bgs" : "");
  return w->name;
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
    int ok = contacts && contacts->nalpha == m && contacts->alpha, npos = 0;
    if (ok) {
      const double *a = &contacts->alpha[(size_t)i * (size_t)m];
      double t1 = 0.0, t2 = 0.0;
      for (int l = 0; l < m; l++) {
        ok &= a[l] >= 0.0;
        npos += a[l] > 0.0;
        t1 += s->D[2 * l] * a[l];
        t2 += s->D[2 * l + 1] * a[l];
      }
      double scale = fabs(lam[0]) + fabs(lam[1]) + fabs(lam[2]); /* (relative: any unit of mass) */
      if (ok && fabs(t1 - lam[1]) <= 1e-9 * scale && fabs(t2 - lam[2]) <= 1e-9 * scale) {
        memcpy(alpha, a, (size_t)m * sizeof *alpha);
        continue;
      }
    }
    if (ok && npos == 1 && z[nc + nc * m + i] > 0.0) {
      /* a contact that slid at a vertex of the polygon in a frame that has turned since
       * (the frame follows the normal: spheres that roll on each other turn theirs every
       * step): still at a vertex, the one nearest lambda_T in the new frame (split over two
       * directions it would read as sliding along an edge: on the 1000-sphere pile, S2 10,
       * nearly every vertex slide of a step was read so). Where lambda_T lies on a direction
       * already (a quarter turn of cd_tangentFrame's tie on a box's near-axis normal) the
       * split below is kept: the 8-row pyramid's test measured 7 factorizations in 200 steps
       * with it, 76 with the vertex */
      int k = 0;
      double dmax = -INFINITY;
      for (int l = 0; l < m; l++) {
        double d = s->D[2 * l] * lam[1] + s->D[2 * l + 1] * lam[2];
        alpha[l] = 0.0;
        if (d > dmax) dmax = d, k = l;
      }
      double lt = hypot(lam[1], lam[2]);
      if (dmax < (1.0 - 1e-9) * lt) {
        alpha[k] = lt;
        continue;
      }
    }
    cd_lcpAlphaFromTangent(m, s->D, &lam[1], alpha);
  }
}

/* a before b: lower first, ties by index (deterministic). A total order where the heights are
 * numbers; a NaN height (a non-finite state, which ends the run after the step) compares false
 * both ways and is placed wherever the sort leaves it: the order is still a permutation and
 * deterministic */
static inline int rankBefore(const cdLcpRank *a, const cdLcpRank *b) {
  return a->h < b->h || (a->h == b->h && a->i < b->i);
}

/* r (n) sorted by rankBefore, t (n) its scratch: runs of 16 by insertion, merged in pairs;
 * returns the sorted array (r or t). qsort in the same order (glibc's merge sort, a call
 * through a comparison function's pointer a comparison) took 33.3M instructions over the 41
 * orders of S2 10's first 60 steps (1,000-2,500 contacts), this ~10M: the run 4.662G ->
 * 4.646G. Tried: insertion from the last
 * order where the contacts are as many (the landing's contacts change in number at 40 of those
 * 41 orders, and the one that did not needed more than 8 ncon moves) */
static const cdLcpRank *rankSort(cdLcpRank *r, cdLcpRank *t, int n) {
  for (int a = 0; a < n; a += 16) {
    int e = a + 16 < n ? a + 16 : n;
    for (int q = a + 1; q < e; q++) {
      cdLcpRank v = r[q];
      int k = q;
      while (k > a && rankBefore(&v, &r[k - 1])) r[k] = r[k - 1], k--;
      r[k] = v;
    }
  }
  for (int w = 16; w < n; w *= 2) {
    for (int a = 0; a < n; a += 2 * w) {
      int mid = a + w < n ? a + w : n, e = a + 2 * w < n ? a + 2 * w : n, i = a, j = mid, k = a;
      while (i < mid && j < e) t[k++] = rankBefore(&r[j], &r[i]) ? r[j++] : r[i++];
      while (i < mid) t[k++] = r[i++];
      while (j < e) t[k++] = r[j++];
    }
    cdLcpRank *x = r;
    r = t, t = x;
  }
  return r;
}

/* the bgs order: the contacts bottom-up along s->up, so that a forward sweep carries the
 * support up from the ground and the backward one the weight back down (symmetric sweeps:
 * the sweeps alone; with the active-set tries they run forward only, lcp_bgs.c) (O(ncon log ncon));
 * NULL (the key order) without a contact set. 0 ok, -1 no memory */
static int bgsOrder(cdLcpState *s, const cdContactSet *contacts, int nc, const int **order) {
  *order = NULL;
  if (!contacts) return 0;
  if ((size_t)nc > s->ocap) {
    cdLcpRank *r = cd_realloc(s->rank, 2 * (size_t)nc * sizeof *r);
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
  const cdLcpRank *r = rankSort(s->rank, s->rank + nc, nc);
  for (int i = 0; i < nc; i++) s->order[i] = r[i].i;
  *order = s->order;
  return 0;
}

/* the units of Lemke's scaled LCP (lcpSolve): sc[k] = 1 / meff_i for lambda_N and alpha of
 * contact i, 1 for beta; z' = S z / vscale, w' = R w / vscale with S = diag(sc) and R = 1 on
 * the velocity rows, 1 / meff_i on the bound rows; A' = R A S^-1, b' = R b / vscale, the
 * same complementarity. dir = 1 scales A, b (may be NULL) and z; dir = -1 takes z back. */
void cd_lcpScaleDense(const cdContactProblem *p, int m, double *sc, double *A, double *b, double *z, int dir) {
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

/* Lemke on the dense A from the warm start zw (the residual's units, cd_lcpScaleDense);
 * 1 solved into z, 0 not, CD_ERR_NOMEM */
static int lemkeStep(cdLcpState *s, const cdContactProblem *p, double *z, double *zw, cdSolveStats *stats) {
  int m = s->m;
  size_t n = (size_t)cd_lcpSize(p->ncon, m);
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
  cd_lcpScaleDense(p, m, sc, A, b, zw, 1);
  /* a contact LCP that Lemke solves takes a few pivots a variable (a fraction of n on the
   * bundled scenes, 1.2 n cold on the cube pyramid, none warm); one that needs many more
   * is degenerate enough to cycle numerically, and another solver is the cheaper way out */
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
  cd_lcpScaleDense(p, m, sc, NULL, NULL, zw, -1);
  if (st != CD_LEMKE_SOLVED) return 0;
  cd_lcpScaleDense(p, m, sc, NULL, NULL, z, -1);
  s->used_lemke = 1;
  return 1;
}

/* the default's bound on the active-set method's cost: an unsymmetric active set whose LU
 * (KLU's estimate) takes more flops an unknown ends the method's use on the step, and bgs
 * with subspace steps solves it. Measured (KLU's est_flops / unknowns): 30 .. 950 on the
 * 1000-sphere pile (S2 10 of ../shared/peer-bench), where the active-set method and its
 * tries inside bgs are the fastest way; 8,700 .. 10,800 on the 55-cube pyramid (S4 10), whose
 * 3-D contact graph makes K nearly dense (70 entries a row): there KLU's factorizations were
 * 58 % of the run (perf) and bgs with subspace steps took a sixth of the time, every step
 * converged. The bound sits between the two. --solver newton has no bound. */
#define AUTO_LU_FLOPS 3000.0

static double luFlopsMax(const cdLcpState *s) { return s->mode == LCP_AUTO ? AUTO_LU_FLOPS : 0.0; }

/* the active-set method from zw; 1 solved into z, 0 not (z: its best iterate), CD_ERR_NOMEM */
static int newtonStep(cdLcpState *s, cdContactProblem *p, double *z, const double *zw, cdSolveStats *stats) {
  size_t n = (size_t)cd_lcpSize(p->ncon, s->m);
  memcpy(z, zw, n * sizeof *z);
  cdLcpNewtonOptions no = {
      .tolerance = s->tol, .max_iterations = s->max_iter, .lu_flops_max = luFlopsMax(s), .delassus = p, .remember = 1};
  cdLcpNewtonStats ns;
  int rc = cd_lcpNewtonSolve(s->newton, p, s->m, s->D, z, &no, &ns);
  s->costly |= ns.costly;
  s->newton_res = ns.residual;
  stats->iterations += ns.iterations;
  stats->factorizations += ns.factorizations;
  stats->products += ns.products;
  if (rc) return rc;
  s->used_newton = 1;
  return ns.converged;
}

/* the longest pause of the active-set method from the warm start, steps */
#define BACKOFF_MAX 32

/* bgs goes on from the active-set method's best iterate when its residual is below this share
 * of the warm start's: on the 55-cube pyramid (S4 10) the method often stops a few modes short
 * at ~1e-7 where the warm start is at ~1e-5, and from there the sweeps and their active-set
 * tries finish in one to a few sweeps (from the warm start ~10, some steps ~1,100: 38 ->
 * 2.9 iterations a step); on the 1000-sphere pile in flight (S2 10) the method's best iterate
 * of wrong modes is barely below the warm start, and bgs from it took 216 iterations a step
 * against 184 from the warm start */
#define NEWTON_START_SHARE 0.1

/* the sweeps a bgs solve that missed its rule warm and cold goes on for, from the better */
#define BGS_CONTINUE_SWEEPS 4000

/* the cold run comes only after a warm run that ended above this multiple of the tolerance:
 * one that ended just above it is nearly there, and a run from zero did not get closer. On
 * five piles of S2 10's kind (400 steps each), 2 of the 11 warm runs that missed ended within
 * it (1.3e-8, 1.8e-8): their cold runs ended at 6.6e-8 and 1.7e-8 after 1,000 sweeps, and the
 * continued runs met the tolerance in 38 and 58 sweeps; with the tries' sweeps forward only
 * (lcp_bgs.c), 1 of 3 (1.5e-8; cold 2.2e-7; continued 34), whose step now takes 1,053
 * iterations instead of 2,073 (the seed+6 pile's step 99, 31 -> 16 times the median). The
 * cold runs that met the tolerance (4 of those 14) followed warm runs at 3.2e-7 .. 1.9e-5. */
#define COLD_ABOVE 10.0

/* 1: the default skips the try on this step */
static int backoffSkips(const cdLcpState *s, cdLcpBackoff *b) {
  if (s->mode != LCP_AUTO || b->skip <= 0) return 0;
  b->skip--;
  return 1;
}

static void backoffRecord(cdLcpBackoff *b, int ok) {
  if (ok) {
    b->pause = 0;
    return;
  }
  b->pause = b->pause ? 2 * b->pause : 1;
  if (b->pause > BACKOFF_MAX) b->pause = BACKOFF_MAX;
  b->skip = b->pause;
}

/* one bgs run on z with bo, its work added to stats (fell 1: it follows a run that missed,
 * one more fall); an active set over the cost bound ends the tries for the runs after it.
 * CD_OK or CD_ERR_NOMEM */
static int bgsRun(cdLcpState *s, const cdContactProblem *p, double *z, cdBgsOptions *bo, int fell, cdBgsStats *b,
                  cdSolveStats *stats) {
  if (cd_bgsSolve(p, s->m, s->D, z, bo, b)) return CD_ERR_NOMEM;
  s->used_bgs = 1;
  s->used_newton |= b->newton_solved;
  s->costly |= b->newton_costly;
  if (s->costly) bo->newton = NULL;
  stats->iterations += b->sweeps + b->newton_sets;
  stats->products += b->products;
  stats->factorizations += b->factorizations;
  stats->fallbacks += fell + b->newton_tries - b->newton_solved;
  return CD_OK;
}

/* block Gauss-Seidel from z (in: the start, out: the answer), with the active-set tries
 * (lcp_bgs.c) when newton; sets stats->converged. A solve that misses its rule from the
 * warm start (by more than COLD_ABOVE times) runs once more from zero, and when that misses
 * too (or was not run), the better of the two goes
 * on for BGS_CONTINUE_SWEEPS (never under a --max-iterations cap, which bounds the step's
 * sweeps). CD_OK or CD_ERR_NOMEM */
static int bgsStep(cdLcpState *s, const cdContactProblem *p, const cdContactSet *contacts, double *z, int newton,
                   cdSolveStats *stats) {
  cdBgsOptions bo = {.tolerance = s->tol,
                     .max_sweeps = s->max_iter,
                     .newton = newton && !s->costly ? s->newton : NULL,
                     .lu_flops_max = luFlopsMax(s)};
  if (bgsOrder(s, contacts, p->ncon, &bo.order)) return CD_ERR_NOMEM;
  cdBgsStats bs;
  if (bgsRun(s, p, z, &bo, 0, &bs, stats)) return CD_ERR_NOMEM;
  stats->converged = bs.converged;
  if (!bs.converged && !s->max_iter) {
    /* a warm start can hold the sweeps in the basin of the previous step's active set
     * (measured on a 4096-sphere impact: 1000 sweeps to 3e-5 warm, 240 to 4e-8 cold):
     * once more from zero, the better of the two kept, both runs counted; not where the
     * warm run ended within COLD_ABOVE of the tolerance (see there) */
    cdBgsStats bc;
    if (bs.residual > COLD_ABOVE * (s->tol > 0 ? s->tol : 1e-8)) {
      size_t n = (size_t)cd_lcpSize(p->ncon, s->m);
      double *zc = z + n; /* (the warm start's copy, no longer needed) */
      memset(zc, 0, n * sizeof *zc);
      if (bgsRun(s, p, zc, &bo, 1, &bc, stats)) return CD_ERR_NOMEM;
      if (bc.residual < bs.residual) {
        memcpy(z, zc, n * sizeof *z);
        stats->converged = bc.converged;
      }
    }
    if (!stats->converged) {
      /* neither met the rule in its sweeps: the better iterate goes on (measured on the
       * settling 1000-sphere pile, S2 10 of ../shared/peer-bench: 3 of 400 steps missed
       * 1e-8 in 1000 sweeps warm and 1000 cold, each left at 2e-7 .. 4e-5; from the warm
       * start 1550 sweeps and tries met it), counted as one more fall */
      bo.max_sweeps = BGS_CONTINUE_SWEEPS;
      if (bgsRun(s, p, z, &bo, 1, &bc, stats)) return CD_ERR_NOMEM;
      stats->converged = bc.converged;
    }
  }
  return CD_OK;
}

static int lcpSolve(void *state, cdContactProblem *p, cdContactSet *contacts, cdSolveStats *stats) {
  cdLcpState *s = state;
  int nc = p->ncon, m = s->m;
  memset(stats, 0, sizeof *stats);
  stats->converged = 1;
  if (nc <= 0) return CD_OK;
  if (contacts && contacts->ncon != nc) return CD_ERR_USAGE; /* block i must be contact i */
  /* (G is built on demand: for Lemke, bgs and the residual of their answers, and by the
   * active-set method for a system in K's form; its body form needs none) */
  size_t n = (size_t)cd_lcpSize(nc, m);
  if (reserve((void **)&s->z, &s->zcap, 2 * n * sizeof(double)) ||
      reserve((void **)&s->work, &s->wcap, 6 * (size_t)nc * sizeof(double)))
    return CD_ERR_NOMEM;
  double *z = s->z, *zw = s->z + n;
  s->costly = 0;
  s->newton_res = INFINITY;
  if (s->newton) cd_lcpNewtonForget(s->newton); /* (a new problem: its active sets, lcp_newton.h) */
  warmStart(s, p, contacts, zw);

  /* Lemke first (--solver lemke, and the default on a few contacts), then the active-set
   * chain (newton, the default), or bgs; every fall from one solver to the next is counted */
  int rc = 0;
  if (s->mode == LCP_LEMKE || (s->mode == LCP_AUTO && n <= CD_LCP_AUTO_LEMKE_MAX)) {
    if (n <= CD_LCP_LEMKE_MAX) rc = cd_contactProblemDelassus(p) ? CD_ERR_NOMEM : lemkeStep(s, p, z, zw, stats);
    if (rc < 0) return rc;
    if (rc == 0) stats->fallbacks++;
  }
  int newton = s->mode == LCP_NEWTON || s->mode == LCP_AUTO;
  if (rc == 0 && newton && !backoffSkips(s, &s->warm)) {
    /* (a scene whose warm start is far from the step's modes, such as a pile of spheres
     * in flight, where 700 of 1000 pressing contacts change mode, pauses this try) */
    rc = newtonStep(s, p, z, zw, stats);
    if (rc < 0) return rc;
    backoffRecord(&s->warm, rc > 0);
    /* (over the cost bound: the contact graph that made the LU dense outlasts a few steps) */
    if (s->costly) s->warm.skip = s->warm.pause = BACKOFF_MAX;
    if (rc == 0) stats->fallbacks++;
  }
  int by_newton = rc > 0 && s->newton_res < INFINITY; /* the active-set method's answer */
  if (rc == 0) {
    if (cd_contactProblemDelassus(p)) return CD_ERR_NOMEM;
    /* bgs starts from the active-set method's best iterate where that is well below the
     * warm start (NEWTON_START_SHARE), else from the warm start */
    int from_newton = 0, warm_met = 0;
    if (s->newton_res < INFINITY) {
      stats->products++;
      double warm_res = cd_lcpResidual(p, m, s->D, zw, s->work);
      from_newton = s->newton_res < NEWTON_START_SHARE * warm_res;
      /* the warm start meets the tolerance already and the method, tried from it, did not
       * take it further: the warm start is the answer (bgs would stop at once and try the
       * method from it again, the same 4 or 5 active sets: on the 55-cube pyramid, S4 10,
       * 74 of 461 factorizations in 200 steps, the answers bit for bit the same) */
      warm_met = warm_res <= (s->tol > 0 ? s->tol : 1e-8);
    }
    if (!from_newton) memcpy(z, zw, n * sizeof *z);
    if (!warm_met && (rc = bgsStep(s, p, contacts, z, newton, stats))) return rc;
  }
  /* (the active-set method's answer comes with its residual, cd_lcpResidual's through the
   * bodies) */
  stats->residual = by_newton ? s->newton_res : cd_lcpResidual(p, m, s->D, z, s->work);

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
