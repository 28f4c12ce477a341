/* problem.h: the contact problem of one time step, shared by the impulse backends.
 *
 * Unknowns: the contact impulses lambda_i = (l_n, l_t1, l_t2) on body b of contact i, in
 * its frame (n, t1, t2), N s. With v_f = v + dt M^-1 (f_ext - omega x I omega) the free
 * velocity and J (3 ncon x 6 nbody) the contact Jacobian (rows: the normal and tangential
 * relative velocity of b w.r.t. a at the contact point), the post-step velocity is
 *     v+ = v_f + M^-1 J^T lambda,       c = J v+ = G lambda + J v_f,
 * with the Delassus operator G = J M^-1 J^T (3x3 blocks, symmetric PSD). The vector
 *     g = J v_f + (phi_i / dt, 0, 0)_i
 * is the seeds' b (LCP, 000/004) and g (CCP, 001): the stabilised contact velocity.
 * Component order (normal, t1, t2) per contact matches the Siconos / FCLIB local problems
 * (u = W r + q with W = G, q = g), so the peer collections feed the same solvers.
 *
 * Two forms of the same problem:
 *  - contact space (every problem): G, g, mu. G of a simulation step is built on demand
 *    (cd_contactProblemDelassus): a solver that works in velocity space never pays for it.
 *  - velocity space (problems of a simulation step; nbody = 0 for a problem read from a
 *    file): per moving body its inverse mass and world inverse inertia, per contact the two
 *    3x6 Jacobian blocks and the bodies they act on, and v_f. Seed 001's primal
 *    min 1/2 ||v - v_f||^2_M s.t. J v + (phi/dt) e_n in K* is posed on these.
 *
 * The residual scales (one residual for every model, dimensionless and relative; DESIGN §4):
 *  - meff_i = 1 / G_ii[n,n] (kg), the effective mass of contact i along its normal: an
 *    impulse lambda_i (N s) is compared with velocities (m/s) as lambda_i / meff_i;
 *  - vscale = ||g||_inf (m/s; 1 m/s when g = 0), the size of the free contact velocity.
 * Every backend reports max over its complementarity pairs of the mismatch in m/s divided by
 * vscale (cone.h for the CCP, lcp.h for the LCP): scaling every mass of a scene by a factor
 * scales lambda and meff alike and leaves the residual, hence every stopping rule, unchanged.
 */
#ifndef CD_PROBLEM_H
#define CD_PROBLEM_H

#include <stddef.h>
#include <string.h>

/* a square block-sparse matrix of 3x3 blocks (block CSR): block row i holds blocks
 * (i, col[k]) for k in rowptr[i] .. rowptr[i+1]-1, columns ascending, the diagonal block
 * always present. Symmetric matrices store both triangles. */
typedef struct cdBlockMatrix {
  int nblock;   /* block rows = block columns */
  int nnzb;     /* stored blocks */
  int *rowptr;  /* (nblock + 1) */
  int *col;     /* (nnzb) */
  double *val;  /* (nnzb x 9) each block row-major */
  int *diag;    /* (nblock) index k of the diagonal block of each row */
  int rcap, bcap; /* rows and blocks the arrays hold (>= nblock, nnzb), for reuse */
  int transposed; /* 1: each block (i, j != i) is block (j, i) transposed, bit for bit, as
                     cd_contactProblemDelassus writes G (its diagonal blocks need not be
                     symmetric); 0 after cd_blockMatrixAlloc and cd_blockMatrixReserve */
} cdBlockMatrix;

int cd_blockMatrixAlloc(cdBlockMatrix *m, int nblock, int nnzb); /* 0 ok, -1 no memory */
/* grows the arrays (never shrinks them) to hold nblock rows and nnzb blocks; the contents
 * are undefined afterwards. 0 ok, -1 no memory (m unchanged) */
int cd_blockMatrixReserve(cdBlockMatrix *m, int nblock, int nnzb);
void cd_blockMatrixFree(cdBlockMatrix *m);
/* y = G x (x, y: 3 nblock); y must not alias x. The same bits whichever way it goes: by rows,
 * or by columns where m->transposed (see problem_block.c) */
void cd_blockMatrixMul(const cdBlockMatrix *m, const double *x, double *y);
/* y = m x for a symmetric m (each block (i, j) the transpose of block (j, i), as a step's
 * G = J M^-1 J^T is built), by columns: column j read as row j transposed, skipped where x_j
 * is zero (the contacts without an impulse; apgd, ccp_apgd.c) */
void cd_blockMatrixMulSymmetric(const cdBlockMatrix *m, const double *x, double *y);

/* the column index of a block matrix, for the Gauss-Seidel sweeps that move one block of x
 * at a time: block column i holds the stored blocks (row[q], i) at blk[q], q in
 * ptr[i] .. ptr[i + 1] - 1 */
typedef struct cdBlockColumns {
  int *ptr; /* (nblock + 1) */
  int *row; /* (nnzb) the block row */
  int *blk; /* (nnzb) the block's index in m */
} cdBlockColumns;
int cd_blockColumnsMake(const cdBlockMatrix *m, cdBlockColumns *c); /* 0 ok, -1 no memory (c empty) */
void cd_blockColumnsFree(cdBlockColumns *c);
/* y += (block column i of m) d, d of 3: what a change d of x_i does to y = m x */
static inline void cd_blockColumnAdd(const cdBlockMatrix *m, const cdBlockColumns *c, int i, const double d[3],
                                     double *y) {
  for (int q = c->ptr[i]; q < c->ptr[i + 1]; q++) {
    const double *B = &m->val[9 * (size_t)c->blk[q]];
    double *yj = &y[3 * c->row[q]];
    yj[0] += B[0] * d[0] + B[1] * d[1] + B[2] * d[2];
    yj[1] += B[3] * d[0] + B[4] * d[1] + B[5] * d[2];
    yj[2] += B[6] * d[0] + B[7] * d[1] + B[8] * d[2];
  }
}

/* a contact-space problem: what every impulse solver sees (and what a peer file holds) */
typedef struct cdContactProblem {
  int ncon;          /* contacts */
  cdBlockMatrix G;   /* (ncon x ncon blocks) Delassus operator J M^-1 J^T; see delassus_pending */
  int delassus_pending; /* 1 while G is still to be built from the velocity-space form */
  double *g;         /* (3 ncon) stabilised free contact velocity, m/s */
  double *mu;        /* (ncon) friction coefficient of each contact */
  double *lambda;    /* (3 ncon) impulses: warm start in, solution out, N s */
  double *meff;      /* (ncon) effective normal mass 1 / G_ii[0], kg; NULL: read off G's diagonal */
  double vscale;     /* ||g||_inf (1 when g = 0), m/s; <= 0: not computed (cd_contactProblemVelocityScale) */
  int cap;           /* contacts the per-contact arrays hold (>= ncon), for reuse */
  /* velocity-space form; nbody = 0 when absent */
  int nbody;         /* moving bodies, 6 dofs each (linear, angular; world frame) */
  int *cbody;        /* (ncon x 2) moving body of side a and side b of each contact, -1 for
                        the ground or a fixed body */
  double *J;         /* (ncon x 2 x 18) the 3x6 Jacobian block of each side, row-major: rows
                        (n, t1, t2), columns (v, omega); side a carries the minus sign */
  double *minv;      /* (nbody) inverse mass, 1/kg */
  double *Iinv;      /* (nbody x 9) inverse world inertia, row-major, 1/(kg m^2) */
  double *vf;        /* (6 nbody) free velocity: linear m/s, angular rad/s */
  int body_cap;      /* bodies the per-body arrays hold */
  /* workspace of the on-demand Delassus build (problem.c) */
  int *adj_ptr;      /* (body_cap + 1) contacts on each moving body ... */
  int *adj;          /* (2 cap) ... as 2 contact + side, ascending */
  double *JM;        /* (cap x 2 x 18) J M^-1 of each side, row-major like J */
  double *Jp;        /* (cap x 2 x 12) rows 0 and 1 of J of each side as pairs, column by
                        column (problem.c, addBlock) */
  double *JMp;       /* (cap x 2 x 12) the same of JM (cd_contactProblemRowsMul) */
  double time_delassus; /* seconds spent building G, added up over the run (a build-stage cost) */
} cdContactProblem;

/* builds G from the velocity-space form when it is still pending (O(sum over moving bodies of
 * contacts^2) blocks, no allocation once the workspace has grown); a solver that needs G calls
 * this first. CD_OK or CD_ERR_NOMEM. */
int cd_contactProblemDelassus(cdContactProblem *p);
/* the residual's velocity scale: p->vscale, or ||g||_inf (1 when 0) computed when absent */
double cd_contactProblemVelocityScale(const cdContactProblem *p);
/* meff of contact i (from p->meff, else from G's diagonal block) */
double cd_contactProblemMeff(const cdContactProblem *p, int i);
/* u = G lambda + g (3 ncon each): the post-step contact velocities of the impulses lambda, m/s;
 * G must be built (cd_contactProblemDelassus) and u must not alias lambda */
void cd_contactProblemVelocity(const cdContactProblem *p, const double *lambda, double *u);
void cd_contactProblemFree(cdContactProblem *p);

/* two doubles operated on lane by lane (GCC's and Clang's vector extension; SSE2 on x86-64) */
typedef double cdV2 __attribute__((vector_size(16)));

/* s = B_i x: contact i's three rows of B times the body velocities x (6 nbody); B is p->J,
 * or p->JM (J M^-1) once the Delassus build has made it. For p->JM rows 0 and 1 go in one
 * pair of lanes (p->JMp), each lane the same sums as its row's (S2 10 lcp, 60 steps: the
 * products of cd_lcpDelassusMul 80.6M -> 59.4M instructions, JMp's copy 3.4M) */
static inline void cd_contactProblemRowsMul(const cdContactProblem *p, const double *B, int i, const double *x,
                                            double s[3]) {
  if (B == p->JM) {
    cdV2 s01 = {0, 0};
    double s2 = 0;
    for (int si = 0; si < 2; si++) {
      int k = p->cbody[2 * i + si];
      if (k < 0) continue;
      const double *b = &B[36 * (size_t)i + 18 * (size_t)si], *xk = &x[6 * (size_t)k];
      const cdV2 *P = (const cdV2 *)&p->JMp[24 * (size_t)i + 12 * (size_t)si];
      cdV2 x0 = {xk[0], xk[0]}, x1 = {xk[1], xk[1]}, x2 = {xk[2], xk[2]}, x3 = {xk[3], xk[3]}, x4 = {xk[4], xk[4]},
           x5 = {xk[5], xk[5]};
      s01 += P[0] * x0 + P[1] * x1 + P[2] * x2 + P[3] * x3 + P[4] * x4 + P[5] * x5;
      s2 += b[12] * xk[0] + b[13] * xk[1] + b[14] * xk[2] + b[15] * xk[3] + b[16] * xk[4] + b[17] * xk[5];
    }
    s[0] = s01[0];
    s[1] = s01[1];
    s[2] = s2;
    return;
  }
  s[0] = s[1] = s[2] = 0;
  for (int si = 0; si < 2; si++) {
    int k = p->cbody[2 * i + si];
    if (k < 0) continue;
    const double *b = &B[36 * (size_t)i + 18 * (size_t)si], *xk = &x[6 * (size_t)k];
    for (int r = 0; r < 3; r++)
      s[r] += b[6 * r] * xk[0] + b[6 * r + 1] * xk[1] + b[6 * r + 2] * xk[2] + b[6 * r + 3] * xk[3] +
              b[6 * r + 4] * xk[4] + b[6 * r + 5] * xk[5];
  }
}

/* out (6 nbody) += J_i^T l: contact i's impulse l (3) on its bodies. Entries e and e + 1 in
 * a pair of lanes, each the same sum as alone (which the compiler does not do itself: out
 * might alias J), S2 10 lcp, 60 steps: 97.5M -> 61.3M instructions in cd_ccpJtMul */
static inline void cd_contactProblemRowsTMulAdd(const cdContactProblem *p, int i, const double l[3], double *out) {
  cdV2 l0 = {l[0], l[0]}, l1 = {l[1], l[1]}, l2 = {l[2], l[2]};
  for (int si = 0; si < 2; si++) {
    int k = p->cbody[2 * i + si];
    if (k < 0) continue;
    const double *J = &p->J[36 * (size_t)i + 18 * (size_t)si];
    double *o = &out[6 * (size_t)k];
    for (int e = 0; e < 6; e += 2) {
      cdV2 a, b, c, oe;
      memcpy(&a, &J[e], sizeof a), memcpy(&b, &J[6 + e], sizeof b), memcpy(&c, &J[12 + e], sizeof c);
      memcpy(&oe, &o[e], sizeof oe);
      oe += a * l0 + b * l1 + c * l2;
      memcpy(&o[e], &oe, sizeof oe);
    }
  }
}

#endif
