/* ccp_relax.c: the CCP's over-relaxed block Gauss-Seidel over a worklist of contacts, the
 * first phase of apgd on a simulation step (ccp_apgd.c).
 *
 * Problem (seed 001, the dual): min f(lambda) = 1/2 lambda^T G lambda + g^T lambda over
 * lambda ∈ K = Π_i K_mu_i, whose KKT conditions are the CCP K ∋ lambda ⟂ c = G lambda + g ∈ K*.
 *
 * Step. Contact i alone moves, by one projected gradient step of f in the metric P_i =
 * diag(pn_i, pt_i, pt_i) (apgd's), over-relaxed:
 *     lambda_i <- Proj^P_K(lambda_i - omega / s_i P_i^-1 c_i),   s_i >= lambda_max(P_i^-1/2 G_ii P_i^-1/2),
 * then c_j += G_ji d for the contacts j that share a body with i (d the change of lambda_i; G_ji =
 * G_ij^T, so row i of G read transposed), s_i the largest absolute row sum of P_i^-1/2 G_ii
 * P_i^-1/2 (Gershgorin's bound). f restricted to lambda_i is a quadratic whose curvature in the
 * metric P_i is at most s_i, so for 0 < omega < 2 the step decreases f (a projected
 * gradient step shorter than 2 / Lipschitz), and the sweeps are projected SOR (Mangasarian; for
 * the CCP Tasora & Anitescu 2011) with an inexact block solve. For a sphere's contact G_ii is
 * diag(pn, pt, pt) exactly in the contact frame (s_i = 1): the step with omega = 1 is the exact
 * block minimiser, the classic SOR step.
 *
 * Worklist. Only contacts whose residual r_i = ||l_i - Proj_K(l_i - c_i)|| (cone.h, l_i =
 * lambda_i / meff_i) exceeds thr are moved: the first pass over every contact lists them, and each
 * later pass visits the contacts that the pass before moved or touched (a contact's r_i changes
 * only when it or a contact sharing a body moves), moving those still above thr. When a pass
 * lists nothing, every contact is within thr (by the incrementally kept c; the caller recomputes
 * c and decides). On a step of a sphere pile from the last step's impulses the residual sits at
 * a few hundred contacts and shrinks to a few as the sweeps go on, so the sweeps cost a fraction
 * of full ones (measured on ccp_apgd.c's pile: opening comment there).
 *
 * Idle contacts. A contact that carries no impulse (lambda_i = 0) and whose c_i lies inside K*
 * by more than idle (c_N - mu ||c_T|| > idle, m/s) at the first pass has r_i = 0 and stays
 * so while its c_i stays in K*: it is left out for the whole call, its c_i is no longer kept
 * (the moving contacts skip its block, and it never enters a list). Over half of a sphere
 * pile's listed contacts are such (separated within the contact margin, or opening), and their
 * blocks are over half of G's. A contact that the others' moves push out of K* is not seen
 * here: the caller recomputes c and runs the sweeps again, which list it (ccp_apgd.c).
 *
 * Memory. On a large pile the sweeps are bound by memory more than by arithmetic: G's rows are
 * ~12 blocks of 72 bytes a contact (9.4 MB on the 4096-sphere pile, which the cache does not
 * hold; 1.6 MB on the 1000-sphere one), and a moved contact reads its whole row. So each call
 * first packs the rows it can read into its workspace, contiguous in contact order (the order of
 * the long lists): only the non-idle contacts' rows, and in them only the blocks of non-idle
 * columns (the ones a move updates; the diagonal block among them). Over the 4096-sphere pile's
 * first 100 steps that is 47k of G's 108k blocks a call (3.6 MB against 8.2 MB), on the
 * 1000-sphere pile 9.4k of 18.5k; the copy reads G once a call, against the ~30 rows a contact
 * the sweeps read. The arithmetic and its order are unchanged: lambda and c come out bit for
 * bit as when the sweeps read G itself (both piles' 400 steps: every dataset the same).
 * Measured in user CPU, medians of runs alternating with the binary before on a machine shared
 * with three other sessions: the 4096-sphere pile's first 100 steps 6.4 -> 5.3 s (4 pairs), its
 * 400 steps 21.5 -> 18.6 s (2 pairs); the 1000-sphere pile's 100 steps 0.77 -> 0.73 s, its 400
 * steps 2.51 -> 2.47 s (7 pairs): the ratio of the two over the same simulated time 8.1 -> 7.4
 * (0.5 s) and 8.6 -> 7.5 (2 s). What is left of it is mostly work, not memory: over the 2 s the
 * larger pile has 5.09 times the contacts and 1.67 times the sweeps a step. Tried and dropped
 * (same runs): the contacts' data a visit reads (c_i, lambda_i, mu_i, 1 / meff_i) on one
 * 64-byte record, the step's factors on another (a visit in a short list's discovery order
 * touches 4 lines of separate arrays): no change measurable (per-pair ratios 0.75-1.02); the
 * packed blocks in single precision (half the bytes): 3-10% less on the 4096-sphere pile, none
 * measurable on the 1000-sphere one, but the sweeps then meet their threshold only in their
 * own rounded G (the exact residual of the sweeps alone stalls near 1e-8 of the scale, which
 * apgd's rounds would have to refine), and the answers are no longer bit for bit.
 */
#include "ccp_relax.h"

#include <math.h>
#include <string.h>

#include "alloc.h"
#include "cone.h"

#define RELAX_IDLE 2 /* mark of an idle contact (1: in the next pass's list) */
#define RELAX_OMEGA 1.6 /* the over-relaxation (ccp_apgd.c's opening comment has the measured choice) */

double cd_ccpRelaxCurvature(const double *Gii, double pn, double pt) {
  double q[3] = {1.0 / sqrt(pn), 1.0 / sqrt(pt), 1.0 / sqrt(pt)}, s = 0.0;
  for (int r = 0; r < 3; r++) {
    double row = 0.0;
    for (int c = 0; c < 3; c++) row += fabs(q[r] * 0.5 * (Gii[3 * r + c] + Gii[3 * c + r]) * q[c]);
    s = row > s ? row : s;
  }
  return s;
}

void cd_ccpRelaxWorkFree(cdCcpRelaxWork *w) {
  cd_free(w->list);
  cd_free(w->mark);
  cd_free(w->rowptr);
  cd_free(w->col);
  cd_free(w->val);
  memset(w, 0, sizeof *w);
}

/* room for nc contacts and nnzb blocks (never shrinks); 0 ok, -1 no memory */
static int relaxReserve(cdCcpRelaxWork *w, int nc, int nnzb) {
  if (nc > w->ccap) {
    int *l = cd_realloc(w->list, 2 * (size_t)nc * sizeof *l);
    if (l) w->list = l;
    unsigned char *mk = l ? cd_realloc(w->mark, (size_t)nc) : NULL;
    if (mk) w->mark = mk;
    int *rp = mk ? cd_realloc(w->rowptr, ((size_t)nc + 1) * sizeof *rp) : NULL;
    if (rp) w->rowptr = rp;
    if (!rp) return -1;
    w->ccap = nc;
  }
  if (nnzb > w->bcap) {
    int *cl = cd_realloc(w->col, (size_t)nnzb * sizeof *cl);
    if (cl) w->col = cl;
    double *v = cl ? cd_realloc(w->val, 9 * (size_t)nnzb * sizeof *v) : NULL;
    if (v) w->val = v;
    if (!v) return -1;
    w->bcap = nnzb;
  }
  return 0;
}

int cd_ccpRelax(const cdContactProblem *p, const cdCcpRelaxMetric *m, double thr, double idle, long budget,
                double *lambda, double *c, cdCcpRelaxWork *w, long *updates) {
  const cdBlockMatrix *G = &p->G;
  int nc = p->ncon, nl = 0;
  *updates = 0;
  if (relaxReserve(w, nc, G->nnzb)) return -1;
  int *list = w->list, *next = list + nc;
  unsigned char *mark = w->mark;
  double thr2 = thr * thr;
  long upd = 0;
  for (int i = 0; i < nc; i++) {
    const double *li = &lambda[3 * i], *ci = &c[3 * i];
    mark[i] = 0;
    if (cd_coneNatural2(p->mu[i], m->iw[i], li, ci) > thr2)
      list[nl++] = i;
    else if (li[0] == 0.0 && li[1] == 0.0 && li[2] == 0.0 && ci[0] - p->mu[i] * sqrt(ci[1] * ci[1] + ci[2] * ci[2]) > idle)
      mark[i] = RELAX_IDLE;
  }
  /* the rows the sweeps read, without the idle contacts' rows and blocks, packed in contact order */
  int *rp = w->rowptr, *col = w->col, nb = 0;
  double *val = w->val;
  for (int i = 0; i < nc; i++) {
    rp[i] = nb;
    if (mark[i]) continue;
    for (int k = G->rowptr[i]; k < G->rowptr[i + 1]; k++) {
      int j = G->col[k];
      if (mark[j]) continue;
      memcpy(&val[9 * (size_t)nb], &G->val[9 * (size_t)k], 9 * sizeof *val);
      col[nb++] = j;
    }
  }
  rp[nc] = nb;
  for (int pass = 0; nl > 0; pass++) {
    int nn = 0;
    for (int q = 0; q < nl; q++) mark[list[q]] = 0; /* marks now say: in the next pass's list */
    for (int q = 0; q < nl; q++) {
      int i = list[q];
      /* the first pass listed only contacts above thr; a later one checks what it visits */
      if (pass > 0 && !(cd_coneNatural2(p->mu[i], m->iw[i], &lambda[3 * i], &c[3 * i]) > thr2)) continue;
      if (upd >= budget) {
        *updates = upd;
        return 0;
      }
      double *li = &lambda[3 * i];
      const double *ci = &c[3 * i];
      double sn = RELAX_OMEGA * m->ipn[i], st = RELAX_OMEGA * m->ipt[i], x[3];
      double a[3] = {li[0] - sn * ci[0], li[1] - st * ci[1], li[2] - st * ci[2]};
      cd_coneProjectScaled(p->mu[i], m->sr[i], a, x);
      double d0 = x[0] - li[0], d1 = x[1] - li[1], d2 = x[2] - li[2];
      upd++;
      if (d0 == 0.0 && d1 == 0.0 && d2 == 0.0) continue;
      li[0] = x[0];
      li[1] = x[1];
      li[2] = x[2];
      for (int k = rp[i]; k < rp[i + 1]; k++) {
        int j = col[k];
        const double *B = &val[9 * (size_t)k]; /* block (i, j): its transpose is block (j, i) */
        double *cj = &c[3 * (size_t)j];
        cj[0] += B[0] * d0 + B[3] * d1 + B[6] * d2;
        cj[1] += B[1] * d0 + B[4] * d1 + B[7] * d2;
        cj[2] += B[2] * d0 + B[5] * d1 + B[8] * d2;
        if (!mark[j]) {
          mark[j] = 1;
          next[nn++] = j;
        }
      }
    }
    if (8 * nn > nc) { /* a long list in index order: the order of G's rows, fewer cache misses */
      int k = 0;
      for (int j = 0; j < nc; j++)
        if (mark[j] == 1) list[k++] = j;
    } else {
      memcpy(list, next, (size_t)nn * sizeof *list);
    }
    nl = nn;
  }
  *updates = upd;
  return nl == 0;
}
