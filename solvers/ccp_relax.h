/* ccp_relax.h: over-relaxed block Gauss-Seidel over a worklist of contacts (ccp_relax.c), the
 * first phase of apgd on a simulation step's CCP (ccp_apgd.c). */
#ifndef CD_CCP_RELAX_H
#define CD_CCP_RELAX_H

#include "problem.h"

/* s_i for contact i's diagonal block Gii (3x3, row-major) in the metric diag(pn, pt, pt): the
 * largest absolute row sum of P^-1/2 Gii P^-1/2 (Gershgorin), a bound on its largest eigenvalue,
 * exact for a diagonal block (a sphere's contact: 1) */
double cd_ccpRelaxCurvature(const double *Gii, double pn, double pt);

/* The per-contact data of the sweeps, in the metric P_i = diag(pn_i, pt_i, pt_i) (apgd's,
 * ccp_apgd.c): its projection scale sr_i = sqrt(pt_i / pn_i), the step 1 / (s_i P_i) with
 * s_i >= lambda_max(P_i^-1/2 G_ii P_i^-1/2) (cd_ccpRelaxCurvature; 1 for a sphere's contact), and 1 / meff_i (cone.h). */
typedef struct cdCcpRelaxMetric {
  const double *sr;        /* (ncon) */
  const double *ipn, *ipt; /* (ncon) 1 / (s_i pn_i), 1 / (s_i pt_i) */
  const double *iw;        /* (ncon) 1 / meff_i */
} cdCcpRelaxMetric;

/* The sweeps' workspace, grown on demand and kept from one call to the next (zero it before the
 * first call; cd_ccpRelaxWorkFree releases it): the worklists and marks, and the rows of G the
 * sweeps read, packed without the idle contacts' rows and blocks (ccp_relax.c: memory). */
typedef struct cdCcpRelaxWork {
  int *list;           /* (2 ncon) this pass's list, then the next one's */
  unsigned char *mark; /* (ncon) */
  int *rowptr;         /* (ncon + 1) packed row i: blocks rowptr[i] .. rowptr[i + 1] - 1 */
  int *col;            /* (bcap) each packed block's column */
  double *val;         /* (9 bcap) the blocks, row-major as in G */
  int ccap, bcap;      /* contacts and blocks the arrays hold */
} cdCcpRelaxWork;
void cd_ccpRelaxWorkFree(cdCcpRelaxWork *w);

/* Sweeps over the contacts whose residual r_i (cone.h, unscaled: m/s) exceeds thr, on a
 * problem whose G is symmetric by construction (a simulation step's), each contact's impulse
 * moved by one over-relaxed projected step, until no contact exceeds thr or the sweeps have made
 * budget block updates. The contacts with lambda_i = 0 and c_i inside K* by more than idle (m/s;
 * INFINITY: none) are left out (ccp_relax.c: idle contacts). lambda (3 ncon) in K and c = G
 * lambda + g (3 ncon) are updated in place (c incrementally, and not at the idle contacts, whose
 * c_i is stale on return). Returns 1 when no contact but the idle ones exceeds thr (by the
 * incremental c), 0 when the budget ran out, -1 when w could not grow (nothing moved);
 * *updates: the block updates made. */
int cd_ccpRelax(const cdContactProblem *p, const cdCcpRelaxMetric *m, double thr, double idle, long budget,
                double *lambda, double *c, cdCcpRelaxWork *w, long *updates);

#endif
