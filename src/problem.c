/* problem.c: building the contact problem of a step (see problem.h) and applying its
 * solution.
 *
 * M is block diagonal, one 6x6 block a moving body: m I3 and the world inertia R I R^T.
 * Its inverse is per body and closed-form (1/m, and R I^-1 R^T from cdWorld.Iinv): the one
 * representation of M^-1 in cdsim. Solvers that factor a matrix holding M (the velocity-space
 * Newton methods: M + J^T D J) do so with CHOLMOD themselves.
 *
 * J: contact i and its side s (a, b) on moving body k has the 3x6 block
 *     J_is = sign_s [ d^T , (r_s x d)^T ]  for d = n, t1, t2,    r_s = point - x_k,
 * sign_a = -1, sign_b = +1: row d of J v is d . (relative velocity of b w.r.t. a at the point).
 * The free velocity, g = J v_f + phi/dt, the effective normal masses and v+ = v_f + M^-1 J^T
 * lambda all follow contact by contact and body by body: O(contacts + bodies).
 *
 * G (on demand, cd_contactProblemDelassus): G_ij = sum over the moving bodies k that contacts
 * i and j share of J_ik M_k^-1 J_jk^T. Contacts are listed per body (adj, in contact order, so
 * each list ascends); block row i is the merge of the lists of its two bodies, which gives its
 * block columns in ascending order with the diagonal among them. A block costs 54 multiply-adds
 * a shared body (J_ik M_k^-1 is formed once per contact side). Nothing is allocated once the
 * arrays have grown to the largest step's size.
 */
#include "problem_build.h"

#include <math.h>
#include <string.h>
#include <time.h>

#include "alloc.h"
#include "vec3.h"

/* the per-contact and per-body arrays grow by half again when they must (never shrink): the
 * contact count of a run changes a little from step to step, and must not realloc each time */
static size_t grownSize(int want, int cap) {
  size_t n = (size_t)(want > 0 ? want : 1), g = (size_t)cap + (size_t)cap / 2;
  return n > g ? n : g;
}

static int reserveContacts(cdContactProblem *p, int nc) {
  if (nc <= p->cap && p->g) return CD_OK;
  size_t n = grownSize(nc, p->cap);
  if (cd_grow(&p->g, 3 * n, sizeof(double)) || cd_grow(&p->mu, n, sizeof(double)) ||
      cd_grow(&p->lambda, 3 * n, sizeof(double)) || cd_grow(&p->meff, n, sizeof(double)) ||
      cd_grow(&p->cbody, 2 * n, sizeof(int)) || cd_grow(&p->J, 36 * n, sizeof(double)) ||
      cd_grow(&p->adj, 2 * n, sizeof(int)) || cd_grow(&p->JM, 36 * n, sizeof(double)) ||
      cd_grow(&p->Jp, 24 * n, sizeof(double)) || cd_grow(&p->JMp, 24 * n, sizeof(double)))
    return CD_ERR_NOMEM;
  p->cap = (int)n;
  return CD_OK;
}

static int reserveBodies(cdContactProblem *p, int nb) {
  if (nb <= p->body_cap && p->minv) return CD_OK;
  size_t n = grownSize(nb, p->body_cap);
  if (cd_grow(&p->minv, n, sizeof(double)) || cd_grow(&p->Iinv, 9 * n, sizeof(double)) ||
      cd_grow(&p->vf, 6 * n, sizeof(double)) || cd_grow(&p->adj_ptr, n + 1, sizeof(int)))
    return CD_ERR_NOMEM;
  p->body_cap = (int)n;
  return CD_OK;
}

/* v_f = v + dt M^-1 (m g, -w x I w) per moving body (the gyroscopic term explicit) */
static void freeVelocity(const cdScene *scene, const cdWorld *w, double dt, cdContactProblem *p) {
  for (int i = 0; i < w->nbody; i++) {
    int o = w->dof[i];
    if (o < 0) continue;
    int k = o / 6;
    const cdBodyDef *b = &scene->body[i];
    const double *v = &w->v[6 * i], *om = &w->v[6 * i + 3], *Ii = &w->Iinv[9 * (size_t)i];
    double *vf = &p->vf[6 * k];
    double Iw[9], Io[3], gyro[3], dw[3];
    p->minv[k] = 1.0 / b->mass;
    memcpy(&p->Iinv[9 * k], Ii, 9 * sizeof(double));
    cd_m3rotateDiag(Iw, &w->R[9 * (size_t)i], b->inertia);
    cd_m3mulv(Io, Iw, om);
    cd_v3cross(gyro, om, Io);
    cd_m3mulv(dw, Ii, gyro);
    for (int e = 0; e < 3; e++) {
      vf[e] = v[e] + dt * scene->gravity[e];
      vf[3 + e] = om[e] - dt * dw[e];
    }
  }
}

int cd_problemBuild(const cdScene *scene, cdWorld *w, double dt) {
  cdContactProblem *p = &w->cp;
  const cdContactSet *cs = &w->contacts;
  int nc = cs->ncon, nb = w->ndof / 6;
  if (reserveContacts(p, nc) || reserveBodies(p, nb)) return CD_ERR_NOMEM;
  p->ncon = nc;
  p->nbody = nb;
  freeVelocity(scene, w, dt, p);

  /* contacts per moving body: the work limit (world.h) before anything else */
  int *cnt = p->adj_ptr;
  memset(cnt, 0, ((size_t)nb + 1) * sizeof(int));
  double blocks = 0;
  for (int i = 0; i < nc; i++)
    for (int s = 0; s < 2; s++) {
      int b = cs->con[i].body[s];
      int k = b >= 0 && w->dof[b] >= 0 ? w->dof[b] / 6 : -1;
      p->cbody[2 * i + s] = k;
      if (k >= 0) cnt[k + 1]++;
    }
  for (int k = 0; k < nb; k++) {
    blocks += (double)cnt[k + 1] * (double)cnt[k + 1];
    cnt[k + 1] += cnt[k];
  }
  if (blocks > CD_WORLD_MAX_DELASSUS_BLOCKS) return CD_ERR_LIMIT;

  double vmax = 0;
  for (int i = 0; i < nc; i++) {
    const cdContact *c = &cs->con[i];
    const double *dir[3] = {c->normal, c->t1, c->t2};
    double gi[3] = {c->gap / dt, 0, 0}, gnn = 0;
    for (int s = 0; s < 2; s++) {
      double *Jb = &p->J[36 * (size_t)i + 18 * (size_t)s];
      int k = p->cbody[2 * i + s];
      if (k < 0) {
        memset(Jb, 0, 18 * sizeof(double));
        continue;
      }
      int b = c->body[s];
      double sign = s == 1 ? 1.0 : -1.0, arm[3], rxd[3], Ir[3];
      cd_v3sub(arm, c->point, &w->x[3 * b]);
      const double *vf = &p->vf[6 * k];
      for (int r = 0; r < 3; r++) {
        cd_v3cross(rxd, arm, dir[r]);
        double *row = &Jb[6 * r];
        for (int e = 0; e < 3; e++) {
          row[e] = sign * dir[r][e];
          row[3 + e] = sign * rxd[e];
        }
        gi[r] += row[0] * vf[0] + row[1] * vf[1] + row[2] * vf[2] + row[3] * vf[3] + row[4] * vf[4] + row[5] * vf[5];
        if (r == 0) {
          cd_m3mulv(Ir, &p->Iinv[9 * k], rxd);
          gnn += p->minv[k] + cd_v3dot(rxd, Ir);
        }
      }
    }
    for (int r = 0; r < 3; r++) {
      p->g[3 * i + r] = gi[r];
      vmax = fabs(gi[r]) > vmax ? fabs(gi[r]) : vmax;
    }
    p->meff[i] = gnn > 0 ? 1.0 / gnn : 1.0;
    p->mu[i] = cd_worldFriction(scene, w, c->body[0], c->body[1]);
    memcpy(&p->lambda[3 * i], c->lambda, 3 * sizeof(double));
  }
  p->vscale = vmax > 0 ? vmax : 1.0;
  p->delassus_pending = nc > 0;
  if (nc == 0) p->G.nblock = p->G.nnzb = 0;
  return CD_OK;
}

/* G_ij += J M^-1 of side si of contact i (JM) times J of side sj of contact j, transposed:
 * entry (r, c) += JM_i[r] . J_j[c], the six products summed left to right. Columns 0 and 1 of
 * a row go in one pair of lanes, JM_i[r][e] times the pair (J_j[0][e], J_j[1][e]) of Jp (made
 * once per contact side): the same sums as the scalar ones, in fewer instructions (S2 10 lcp,
 * 60 steps: 97.3M -> 63.0M in its 414k calls, Jp's copy 7.3M); the rows as three calls, not a
 * loop: the whole build 148.7M -> 143.0M */
static inline void addRow(double *Gr, const double *a, const cdV2 *Jp, const double *Jj, int first) {
  cdV2 a0 = {a[0], a[0]}, a1 = {a[1], a[1]}, a2 = {a[2], a[2]}, a3 = {a[3], a[3]}, a4 = {a[4], a[4]},
       a5 = {a[5], a[5]}, g = {0, 0};
  double g2 = 0;
  cdV2 s = a0 * Jp[0] + a1 * Jp[1] + a2 * Jp[2] + a3 * Jp[3] + a4 * Jp[4] + a5 * Jp[5];
  if (!first) memcpy(&g, Gr, sizeof g), g2 = Gr[2];
  g += s;
  memcpy(Gr, &g, sizeof g);
  Gr[2] = g2 + (a[0] * Jj[12] + a[1] * Jj[13] + a[2] * Jj[14] + a[3] * Jj[15] + a[4] * Jj[16] + a[5] * Jj[17]);
}

/* first: the block's first shared body, added to zeros held in registers (0 + s, the sum a
 * zeroed block would give: +0 + -0 is +0 either way) instead of a memset and three loads a
 * row */
static inline void addBlock(double *Gb, const double *JMi, const cdV2 *Jp, const double *Jj, int first) {
  addRow(Gb, JMi, Jp, Jj, first);
  addRow(Gb + 3, JMi + 6, Jp, Jj, first);
  addRow(Gb + 6, JMi + 12, Jp, Jj, first);
}

static double seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int cd_contactProblemDelassus(cdContactProblem *p) {
  if (!p->delassus_pending) return CD_OK;
  double t0 = seconds();
  int nc = p->ncon, nb = p->nbody;
  const int *ptr = p->adj_ptr;
  /* the lists: contact i's side s as 2 i + s, in contact order (ptr[k] .. ptr[k+1]-1); the
   * fill uses ptr shifted by one slot, restored by the fill itself */
  int *fill = p->adj_ptr;
  for (int k = nb; k > 0; k--) fill[k] = fill[k - 1];
  fill[0] = 0;
  for (int i = 0; i < nc; i++)
    for (int s = 0; s < 2; s++) {
      int k = p->cbody[2 * i + s];
      if (k >= 0) p->adj[fill[k + 1]++] = 2 * i + s;
    }
  /* J M^-1 per contact side */
  for (int i = 0; i < nc; i++)
    for (int s = 0; s < 2; s++) {
      int k = p->cbody[2 * i + s];
      if (k < 0) continue;
      const double *Jb = &p->J[36 * (size_t)i + 18 * (size_t)s], *Ii = &p->Iinv[9 * (size_t)k];
      double *JMb = &p->JM[36 * (size_t)i + 18 * (size_t)s];
      for (int r = 0; r < 3; r++) {
        for (int e = 0; e < 3; e++) JMb[6 * r + e] = p->minv[k] * Jb[6 * r + e];
        cd_m3mulv(&JMb[6 * r + 3], Ii, &Jb[6 * r + 3]); /* Iinv symmetric: row of J_ang Iinv */
      }
      cdV2 *P = (cdV2 *)&p->Jp[24 * (size_t)i + 12 * (size_t)s], *PM = (cdV2 *)&p->JMp[24 * (size_t)i + 12 * (size_t)s];
      for (int e = 0; e < 6; e++) {
        P[e] = (cdV2){Jb[e], Jb[6 + e]};
        PM[e] = (cdV2){JMb[e], JMb[6 + e]};
      }
    }
  /* block rows by merging the two bodies' lists: first the count of each row, then the
   * blocks (i, j >= i), each written at its place in row i and, transposed, in row j (the
   * rows are filled in order, so row j's blocks left of its diagonal arrive in ascending i) */
  if (cd_blockMatrixReserve(&p->G, nc, 0)) return CD_ERR_NOMEM;
  int total = 0;
  for (int i = 0; i < nc; i++) {
    int ka = p->cbody[2 * i], kb = p->cbody[2 * i + 1];
    int a0 = ka >= 0 ? ptr[ka] : 0, a1 = ka >= 0 ? ptr[ka + 1] : 0;
    int b0 = kb >= 0 ? ptr[kb] : 0, b1 = kb >= 0 ? ptr[kb + 1] : 0;
    p->G.rowptr[i] = total;
    while (a0 < a1 || b0 < b1) {
      int ea = a0 < a1 ? p->adj[a0] >> 1 : nc, eb = b0 < b1 ? p->adj[b0] >> 1 : nc;
      int j = ea < eb ? ea : eb;
      a0 += ea == j;
      b0 += eb == j;
      total++;
    }
  }
  p->G.rowptr[nc] = total;
  if (cd_blockMatrixReserve(&p->G, nc, total)) return CD_ERR_NOMEM;
  int *next = p->G.diag; /* the fill cursor of each row, then the index of its diagonal */
  p->G.nblock = nc;
  p->G.nnzb = total;
  for (int i = 0; i < nc; i++) next[i] = p->G.rowptr[i];
  for (int i = 0; i < nc; i++) {
    int ka = p->cbody[2 * i], kb = p->cbody[2 * i + 1];
    int a0 = ka >= 0 ? ptr[ka] : 0, a1 = ka >= 0 ? ptr[ka + 1] : 0;
    int b0 = kb >= 0 ? ptr[kb] : 0, b1 = kb >= 0 ? ptr[kb + 1] : 0, kdiag = 0;
    while (a0 < a1 || b0 < b1) {
      int ea = a0 < a1 ? p->adj[a0] : 2 * nc + 2, eb = b0 < b1 ? p->adj[b0] : 2 * nc + 2;
      int j = (ea < eb ? ea : eb) >> 1;
      if (j >= i) {
        int k = next[i]++;
        if (j == i) kdiag = k;
        double *Gb = &p->G.val[9 * (size_t)k];
        const double *JMb = &p->JM[36 * (size_t)i + 18], *Jb = &p->J[18 * (size_t)eb];
        const cdV2 *Jpb = (const cdV2 *)&p->Jp[12 * (size_t)eb];
        if (ea >> 1 == j) { /* side a shares a body with contact j, side b perhaps too */
          addBlock(Gb, &p->JM[36 * (size_t)i], (const cdV2 *)&p->Jp[12 * (size_t)ea], &p->J[18 * (size_t)ea], 1);
          if (eb >> 1 == j) addBlock(Gb, JMb, Jpb, Jb, 0);
        } else {
          addBlock(Gb, JMb, Jpb, Jb, 1);
        }
        p->G.col[k] = j;
        if (j > i) {
          int kt = next[j]++;
          double *Gt = &p->G.val[9 * (size_t)kt];
          /* written out: 35 instructions a block as a double loop, 9 so (S2 10 lcp, 60 steps:
           * the build 163.7M -> 148.7M) */
          Gt[0] = Gb[0], Gt[1] = Gb[3], Gt[2] = Gb[6];
          Gt[3] = Gb[1], Gt[4] = Gb[4], Gt[5] = Gb[7];
          Gt[6] = Gb[2], Gt[7] = Gb[5], Gt[8] = Gb[8];
          p->G.col[kt] = i;
        }
      }
      a0 += ea >> 1 == j;
      b0 += eb >> 1 == j;
    }
    next[i] = kdiag; /* row i is complete: rows after it write only into their own rows */
  }

  p->G.transposed = 1;
  p->delassus_pending = 0;
  p->time_delassus += seconds() - t0;
  return CD_OK;
}

int cd_problemApply(cdWorld *w) {
  cdContactProblem *p = &w->cp;
  int nc = p->ncon, nb = p->nbody;
  /* P_k = sum of J_ik^T lambda_i over the contacts on body k, accumulated in place of v_f's
   * slot after scaling: v+ = v_f + M_k^-1 P_k */
  double *P = w->impulse;
  memset(P, 0, 6 * (size_t)nb * sizeof(double));
  for (int i = 0; i < nc; i++) {
    const double *l = &p->lambda[3 * i];
    cd_contactProblemRowsTMulAdd(p, i, l, P); /* by lanes: 25.9M -> 19.8M on S2 10, 60 steps */
    memcpy(w->contacts.con[i].lambda, l, 3 * sizeof(double));
  }
  for (int i = 0; i < w->nbody; i++) {
    int o = w->dof[i];
    if (o < 0) continue;
    int k = o / 6;
    const double *vf = &p->vf[6 * k], *Pk = &P[6 * k];
    double *v = &w->v[6 * i], dw[3];
    cd_m3mulv(dw, &p->Iinv[9 * k], &Pk[3]);
    for (int e = 0; e < 3; e++) {
      v[e] = vf[e] + p->minv[k] * Pk[e];
      v[3 + e] = vf[3 + e] + dw[e];
    }
  }
  return CD_OK;
}
