/* sparse_ldu.c: A = P^T L D U P, diagonal pivots, on a structurally symmetric pattern.
 *
 * Problem: A x = b, A n x n, nonsingular, with A(i, j) != 0 only where A(j, i) may be (the
 * pattern symmetric, the values not), and a fill-reducing order P given. With C = P A P^T,
 *     C = L D U,  L unit lower triangular, D diagonal, U unit upper triangular,
 * and pattern(U) = pattern(L)^T, both that of the Cholesky factor of C's pattern: row k of L
 * (and column k of U) is the reach of column k of C's upper part in the elimination tree
 * (Liu; Davis, "Direct Methods for Sparse Linear Systems", 2006, ch. 4). The analysis builds
 * the tree, every row's reach in a topological order and L's columns (rows ascending) once per
 * pattern and order. The numeric factorization is up-looking: at row k it solves
 *     L(0:k, 0:k) w = C(0:k, k)        (w = D U(0:k, k))
 *     U(0:k, 0:k)^T v = C(k, 0:k)^T   (v = D L(k, 0:k)^T)
 * over the reach, both at once (L and U share their pattern: one index a pair of entries), then
 * U(j, k) = w_j / d_j, L(k, j) = v_j / d_j and d_k = C(k, k) - sum_j L(k, j) w_j. Its inner
 * loop is a sparse axpy over a column of L with no search: the positions of every entry are
 * the analysis's; on the active-set method's K (S2 10, first 60 steps) it takes 4.2
 * instructions a flop against KLU's 14.9. Tried: the columns of each fundamental supernode
 * (a sticking contact's three, and chains of fill) fused, three at a time, into one pass over
 * the rows they share: 0.61G -> 0.72G instructions on those 308 factorizations, as the rows
 * shared above k are few and the dense triangles and per-run bookkeeping cost more than the
 * loads saved. Two rows a trip in the inner loops (the same operations in the same order):
 * the factorizations 0.61G -> 0.56G, the solves 0.17G -> 0.16G. Tried too (S2 10, 60 steps,
 * 305 analyses, each of a new pattern): the analysis over the active-set method's contacts
 * (blocks of 1-3 unknowns, each block dense): the tree and the reaches walked over the
 * contacts' graph, whose row reach expanded is every unknown's (each contact's unknowns a chain
 * of the tree; row a of a contact: its contact's reach, then its a earlier unknowns), so that
 * the factorization does the same operations in the same order (tests bit for bit against
 * this analysis; 71 of the 305 orders, AMD's, split a contact's unknowns and stayed scalar).
 * Expanded into this analysis's arrays: 0.56G for 234 analyses against 0.53G for all 305.
 * Holding the blocks' arrays only (Li, and each contact's reach and C's entries as lists its
 * rows share) with a factorization walking them: the analyses 0.53G -> 0.49G, the
 * factorizations 0.55G -> 0.60G (per row the contact's loops, C's entries at an offset a
 * column, the diagonal block apart), the run 8.714G -> 8.728G. The analysis's cost is its
 * O(nnz) and O(lnz) stores (C's entries, L's rows, the reaches), which contacts of ~2.3
 * unknowns (S2 10: half to 60 % of the active contacts sticking, the rest of 1 or 2) barely
 * shrink, not the tree walk: dropped.
 * Pivots. The diagonal is taken whatever the values; a multiplier L(k, j) (U(j, k)) is the
 * entry of column (row) j of the matrix reduced at step j over its pivot d_j, so |L|, |U| <=
 * 1 / tol is the threshold test of partial pivoting (KLU's Common.tol, default 1e-3) passed by
 * every diagonal pivot against its column and its row. A factorization in which one fails (or
 * a pivot is zero or not finite) stops and reports it: the caller factors A with pivoting.
 */
#include "sparse_ldu.h"

#include <math.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "alloc.h"

/* a pair of doubles: an entry of L with the entry of U at its transpose (and the two solves'
 * values of one row), updated together in one vector operation */
typedef double cdPair __attribute__((vector_size(2 * sizeof(double))));
/* a pair's bits: |l| and |u| as one and with the sign bits cleared (fabs of each lane took a
 * copy, a shuffle and two ands; S2 10, 60 steps: factorizations 328.7M -> 321.8M) */
typedef unsigned long long cdBits __attribute__((vector_size(2 * sizeof(double))));

/* g > a ? g : a in each lane: one maxpd, whose lanes are that expression (against a maxsd,
 * an unpckhpd and a maxsd; S2 10, 60 steps: factorizations 297.0M -> 290.5M instructions) */
static inline cdPair pairMax(cdPair g, cdPair a) {
#ifdef __SSE2__
  return _mm_max_pd(g, a);
#else
  return (cdPair){g[0] > a[0] ? g[0] : a[0], g[1] > a[1] ? g[1] : a[1]};
#endif
}

struct cdSparseLdu {
  int n;        /* the analysed size, 0: no analysis */
  int lnz;      /* entries of L below the diagonal (= U's above it) */
  double flops; /* the LU's flops as KLU estimates them (cd_sparseLduFlops) */
  int *perm;    /* (n) new index k is old perm[k] */
  int *Lp;      /* (n + 1) columns of L, and of U^T (n + 2 held: Lp[n + 1] read where nest is
                   made, as the column count of a column n, where parent n - 1 is not n) */
  cdPair **Li;  /* (lnz) the address in w of the row of each entry of L (rows ascending in a
                   column), where the solve's x is too: the updates address w and x without
                   a shift or a sum (twice the row as an int before, the scale of an
                   address being at most 8 bytes, cdPair 16: that gave 390.5M -> 362.8M
                   instructions, with the factorization's arrays in locals and the
                   multipliers' maxima a lane each; then the address: a load-and-add and the
                   store to one address took a lea first, 2 instructions a trip of two rows;
                   S2 10, 60 steps: factorizations 321.8M -> 297.0M, solves the same) */
  cdPair *LU;   /* (lnz) -L(i, j) and -U(j, i) of each entry of Li: the updates y -= l x as
                   y += (-l) x, the same bits (x - y is x + (-y), and (-l) x is -(l x)), with
                   the sum taking its operand from memory (S2 10, 60 steps: factorizations
                   362.8M -> 354.8M instructions, solves 123.2M -> 118.3M) */
  double *d;    /* (n) D */
  cdPair *dn;   /* (n) -D in both lanes: the divisor of a pair of multipliers, loaded as one
                   (S2 10, 60 steps: factorizations 354.8M -> 348.3M instructions) */
  int *Rp;      /* (n + 1) row k of L (the reach of column k of C's upper part) ... */
  int *Rj;      /* (rcap >= lnz) ... its columns, in a topological order of the elimination tree */
  size_t rcap;
  size_t ncap, zcap, lcap; /* what the arrays of n + 1, of nnz + 1 and of lnz entries hold, grown
                              only (cd_grow reallocates to the size asked: S2 10, 60 steps, 279
                              analyses 491M -> 417M instructions with w zeroed only when grown) */
  int *Rq;      /* (lnz) ... and where each entry sits in Li */
  int *Cp, *Ce; /* (n) column k of C above the diagonal, from Cp[k] to Ce[k] (at A's column
                   perm[k]'s place): ... */
  int *Cr;      /* (nnz) ... its rows, */
  int *Ct;      /* (nnz) ... where C(r, k) sits in Ax, */
  int *Ctt;     /* (nnz) ... and where C(k, r) sits in Ax */
  int *Cd;      /* (n) where C(k, k) sits in Ax, -1 absent */
  int *Op, *Oe, *Or; /* (n, n, nnz) Cp, Ce and Cr of the last analysis, ... */
  int *parent;  /* (n) ... its elimination tree, ... */
  unsigned char *nest; /* (n) 1: column j + 1 of L holds column j's rows after its first (row
                          j + 1): parent j + 1 and one entry fewer (a Cholesky factor's
                          pattern: column j's rows but its parent are in its parent's) */
  int on;       /* ... and its size, whose rows' reaches Rp, Rj hold (0: none) */
  cdPair *w;    /* (n) the factorization's two triangular solves, zero between its rows; and
                   cd_sparseLduSolve's x in lane 1, which the factorization zeroes first: x
                   at Li's addresses as they are, against x in pairs of its own after w's
                   (an offset added at each update; S2 10, 60 steps: solves 101.2M -> 96.4M,
                   factorizations 283.9M -> 285.9M with lane 1's zeroing, the run 4.1110G ->
                   4.1088G) */
  int failed;   /* the pivot at which the last factorization stopped, -1 none */
  double growth; /* the largest |L(i, j)|, |U(j, i)| of the last factorization */
  int analysed; /* 1: an analysis is held */
  int numeric;  /* 1: the factors hold a factorization */
};

cdSparseLdu *cd_sparseLduMake(void) {
  cdSparseLdu *f = cd_calloc(1, sizeof *f);
  if (f) f->failed = -1;
  return f;
}

void cd_sparseLduFree(cdSparseLdu *f) {
  if (!f) return;
  cd_free(f->perm), cd_free(f->Lp), cd_free(f->Li), cd_free(f->LU), cd_free(f->d), cd_free(f->dn), cd_free(f->Rp);
  cd_free(f->Rj), cd_free(f->Rq), cd_free(f->Cp), cd_free(f->Ce), cd_free(f->Cr), cd_free(f->Ct), cd_free(f->Ctt);
  cd_free(f->Cd), cd_free(f->w), cd_free(f->Op), cd_free(f->Oe), cd_free(f->Or), cd_free(f->parent), cd_free(f->nest);
  cd_free(f);
}

double cd_sparseLduFlops(const cdSparseLdu *f) { return f->flops; }
int cd_sparseLduFailedPivot(const cdSparseLdu *f) { return f->failed; }
double cd_sparseLduGrowth(const cdSparseLdu *f) { return f->growth; }

/* row k's reach (C's column k above the diagonal, up the elimination tree to k) appended
 * to f->Rj from e, a topological order (each node after its descendants), with the tree
 * grown on the way: a path that ends at a root below k (parent -1) joins k there (the tree
 * of C(0:k, 0:k) is the tree of the rows before it, plus k); mark: marked with k; first,
 * plen: n ints. Returns the new end */
static int reach(cdSparseLdu *f, int k, int e, int *parent, int *mark, int *first, int *plen) {
  /* (the arrays and bounds in locals: every array is of int, so that each store could
   * otherwise change them) */
  const int *Cr = f->Cr;
  int *count = f->Lp + 1, len = 0, np = 0, qe = f->Ce[k];
  mark[k] = k;
  /* each path from row r up to the first marked node walked, its first node and length
   * kept; then the paths into Rj last first, each as walked, walked again from the end of
   * the reach down (the parents inside a path are as they were: only a path's last node
   * can have been a root). Against each path onto a stack as walked and copied into Rj
   * last first (~16 instructions a path around the copy of its ~4.8 nodes): S2 10, 60
   * steps, 0.66M paths, the analyses 210.4M -> 204.4M instructions, and 202.4M with the
   * second walk two nodes a trip. (That copy was one copy instead of two, the path to a
   * stack's top, then the top to Rj with memcpy: 231.3M -> 221.2M) */
  for (int q = f->Cp[k]; q < qe; q++) {
    int i = Cr[q];
    if (mark[i] == k) continue;
    int m = 0;
    first[np] = i;
    for (;;) {
      mark[i] = k, m++;
      count[i]++; /* (L's column counts) */
      int up = parent[i];
      if (up < 0) { /* (k, marked: the path ends without its test; S2 10, 60 steps: 221.2M ->
                       212.0M instructions against the test after every node) */
        parent[i] = k;
        break;
      }
      i = up;
      if (mark[i] == k) break;
    }
    plen[np++] = m, len += m;
  }
  int *Rj = f->Rj + e + len;
  for (int t = 0; t < np; t++) {
    int i = first[t], *o = Rj - plen[t], *oe = Rj;
    Rj = o;
    if ((oe - o) & 1) *o++ = i, i = parent[i];
    for (; o < oe; o += 2) {
      o[0] = i, i = parent[i];
      o[1] = i, i = parent[i];
    }
  }
  return e + len;
}

/* C's columns above the diagonal (column k at A's column perm[k]'s place) and its diagonal,
 * with where each entry's transpose sits, from the entries of A below its diagonal alone:
 * A(i, j), i > j, and A(j, i) are C's entry in the column of the later of i and j in the
 * order. With rows ascending in every column, column i's rows j < i come in the order of the
 * columns j that hold A(i, j), so one cursor a column (cnt) finds the transposes; and every
 * C column's entries come in A's row order (those above A's diagonal from the earlier
 * columns, in turn, then its own below), as a pass over all of A's entries gave them. That
 * every entry below the diagonal meets its cursor, that a column's cursor has passed every
 * row above the diagonal when the column is reached, and that the rows below it ascend, is
 * the check: the pattern is symmetric and each column's rows ascend. S2 10, 60 steps, 294
 * analyses: 414.7M -> 381.8M instructions (a pass over every entry, half of them stored,
 * before), the same arrays. Without the check (check 0: a caller whose pattern is symmetric
 * with rows ascending by construction) the same arrays, the loop two loads and three tests
 * shorter: S2 10, 60 steps, 227 analyses 264.5M -> 231.3M instructions. Inlined with check a
 * constant, a loop of each. 0 ok, 1 the check failed */
static inline __attribute__((always_inline)) int columnsOfC(cdSparseLdu *f, int n, const int *Ap, const int *Ai,
                                                             int *pinv, int *cnt, int check) {
  int *Cp = f->Cp, *Ce = f->Ce, *Cr = f->Cr, *Ct = f->Ct, *Ctt = f->Ctt, *Cd = f->Cd; /* (see reach) */
  memcpy(cnt, Ap, (size_t)n * sizeof(int));
  for (int k = 0; k < n; k++) {
    int j = f->perm[k];
    pinv[j] = k, Cp[k] = Ce[k] = Ap[j], Cd[k] = -1;
  }
  for (int j = 0; j < n; j++) {
    int k = pinv[j], t = cnt[j], te = Ap[j + 1], prev = j, ek = Ce[k]; /* (Ce[k]: only here) */
    if (t < te && Ai[t] <= j) {
      if (check && Ai[t] < j) return 1; /* A(i, j) above the diagonal without A(j, i) */
      Cd[k] = t++;
    }
    for (; t < te; t++) {
      int i = Ai[t], c = cnt[i], r = pinv[i];
      if (check && (i <= prev || c >= Ap[i + 1] || Ai[c] != j))
        return 1; /* rows not ascending, or A(i, j) without A(j, i) */
      prev = i;
      cnt[i] = c + 1;
      if (r < k) {
        Cr[ek] = r, Ct[ek] = t, Ctt[ek] = c;
        ek++;
      } else {
        int e = Ce[r]++;
        Cr[e] = k, Ct[e] = c, Ctt[e] = t;
      }
    }
    Ce[k] = ek;
  }
  return 0;
}

int cd_sparseLduAnalyse(cdSparseLdu *f, int n, const int *Ap, const int *Ai, const int *perm) {
  return cd_sparseLduAnalyseWithin(f, n, Ap, Ai, perm, INFINITY, 1);
}

int cd_sparseLduAnalyseWithin(cdSparseLdu *f, int n, const int *Ap, const int *Ai, const int *perm, double maxflops,
                              int check) {
  int on = f->on;
  f->n = f->on = 0;
  f->analysed = f->numeric = 0;
  int nnz = Ap[n];
  size_t nn = (size_t)n + 1, nz = (size_t)nnz + 1;
  if (nn > f->ncap) {
    f->ncap = 0;
    if (cd_grow(&f->perm, nn, sizeof(int)) ||
        cd_grow(&f->Lp, nn + 1, sizeof(int)) || cd_grow(&f->d, nn, sizeof(double)) ||
        cd_grow(&f->dn, nn, sizeof(cdPair)) || cd_grow(&f->Rp, nn, sizeof(int)) || cd_grow(&f->Cp, nn, sizeof(int)) ||
        cd_grow(&f->Ce, nn, sizeof(int)) || cd_grow(&f->Cd, nn, sizeof(int)) || cd_grow(&f->w, nn, sizeof(cdPair)) ||
        cd_grow(&f->Op, nn, sizeof(int)) ||
        cd_grow(&f->Oe, nn, sizeof(int)) || cd_grow(&f->parent, nn, sizeof(int)) ||
        cd_grow(&f->nest, nn, 1))
      return -1;
    memset(f->w, 0, nn * sizeof *f->w); /* (zero from here on between factorizations) */
    f->ncap = nn;
  }
  if (nz > f->zcap) {
    f->zcap = 0;
    if (cd_grow(&f->Cr, nz, sizeof(int)) || cd_grow(&f->Ct, nz, sizeof(int)) || cd_grow(&f->Ctt, nz, sizeof(int)) ||
        cd_grow(&f->Or, nz, sizeof(int)))
      return -1;
    f->zcap = nz;
  }
  /* scratch: pinv, marks, the paths' first nodes, cursors (then the paths' lengths, then fill
   * positions) */
  int *work = cd_malloc(4 * nn * sizeof(int));
  if (!work) return -1;
  int *pinv = work, *parent = f->parent, *mark = pinv + nn, *first = mark + nn, *cnt = first + nn;
  /* the last analysis's C, kept (its columns' rows are compared below) */
  int *sw = f->Cp;
  f->Cp = f->Op, f->Op = sw;
  sw = f->Ce, f->Ce = f->Oe, f->Oe = sw;
  sw = f->Cr, f->Cr = f->Or, f->Or = sw;
  if (perm)
    memcpy(f->perm, perm, (size_t)n * sizeof(int));
  else
    for (int k = 0; k < n; k++) f->perm[k] = k;
  if (check ? columnsOfC(f, n, Ap, Ai, pinv, cnt, 1) : columnsOfC(f, n, Ap, Ai, pinv, cnt, 0)) {
    cd_free(work);
    return 1;
  }
  f->n = n;
  /* the rows' reaches (the elimination tree grown with them, L's column counts in Lp[1..n])
   * into Rj, a row k holding at most k entries: Rj is grown to the rows so far plus k as it
   * fills. Row k's reach is made of C's columns 0..k alone (their rows, in their order), so
   * the rows before the first column that differs from the last analysis's keep its reaches,
   * and its tree as it stood then (the parents below k0), without a walk. The active-set
   * method's next set differs from the last in a few contacts, and in a kept order its
   * contacts come in the same order (S2 10: the first changed column at 24 % of the rows on
   * average over the first 100 steps' kept orders, 31 % over 400). S2 10, 60 steps, 294
   * analyses: 438.5M -> 414.7M instructions */
  int k0 = 0;
  for (int m = on < n ? on : n; k0 < m; k0++) {
    int len = f->Ce[k0] - f->Cp[k0];
    if (len != f->Oe[k0] - f->Op[k0]) break;
    const int *a = &f->Cr[f->Cp[k0]], *b = &f->Or[f->Op[k0]];
    int q = 0;
    while (q < len && a[q] == b[q]) q++;
    if (q < len) break;
  }
  /* (marks: a row's walk meets rows below k0, and rows from k0 up to its own, each marked
   * with its own index when its reach began; only those below k0 are set here, in the loop
   * of their parents, against all n by `memset` before: S2 10, 60 steps, the analyses 210.1M
   * -> 210.3M instructions, `memset` 2.0M fewer, the run 4.2193G -> 4.2175G) */
  for (int k = 0; k < k0; k++) {
    mark[k] = -1;
    if (parent[k] >= k0) parent[k] = -1;
  }
  for (int k = k0; k < n; k++) parent[k] = -1;
  for (int k = 0; k < n; k++) f->Lp[k + 1] = 0;
  int e = k0 > 0 ? f->Rp[k0] : 0;
  for (int q = 0; q < e; q++) f->Lp[f->Rj[q] + 1]++;
  for (int k = k0; k < n; k++) {
    if ((size_t)e + (size_t)k + 1 > f->rcap) {
      size_t want = 2 * ((size_t)e + (size_t)k + 1);
      if (want > 0x7fffffff || cd_grow(&f->Rj, want, sizeof(int))) {
        f->n = 0;
        cd_free(work);
        return -1;
      }
      f->rcap = want;
    }
    f->Rp[k] = e;
    e = reach(f, k, e, parent, mark, first, cnt);
  }
  f->Rp[n] = e;
  f->lnz = e;
  f->on = n;
  /* the flops from L's column counts, summed in order as L's columns' starts are (Lp, and the
   * next free place in column k in cnt; one loop: S2 10, 60 steps, 212.0M -> 211.1M
   * instructions); then L's columns: each row's entries placed (rows ascending in a column) */
  int *Lp = f->Lp;
  unsigned char *nest = f->nest;
  double flops = 0.0;
  Lp[n + 1] = 0;
  Lp[0] = 0;
  for (int k = 0; k < n; k++) {
    int ck = Lp[k + 1];
    nest[k] = (parent[k] == k + 1) & (ck == Lp[k + 2] + 1); /* (Lp[n + 1]: see Lp) */
    double c = ck;
    flops += c + 2.0 * c * c;
    cnt[k] = Lp[k];
    Lp[k + 1] = Lp[k] + ck;
  }
  f->flops = flops;
  if (!(f->flops <= maxflops)) {
    f->n = 0;
    cd_free(work);
    return 2;
  }
  size_t ln = e > 0 ? (size_t)e : 1;
  if (ln > f->lcap) {
    f->lcap = 0;
    if (cd_grow(&f->Li, ln, sizeof(cdPair *)) || cd_grow(&f->LU, ln, sizeof(cdPair)) || cd_grow(&f->Rq, ln, sizeof(int))) {
      f->n = 0;
      cd_free(work);
      return -1;
    }
    f->lcap = ln;
  }
  cdPair **Li = f->Li, *wk = f->w;
  int *Rq = f->Rq;
  const int *Rp = f->Rp, *Rj = f->Rj;
  for (int k = 0, q = 0; k < n; k++, wk++)
    for (int qe = Rp[k + 1]; q < qe; q++) {
      int at = cnt[Rj[q]]++;
      Li[at] = wk;
      Rq[q] = at;
    }
  f->analysed = 1;
  cd_free(work);
  return 0;
}

int cd_sparseLduFactor(cdSparseLdu *f, const double *Ax, double tol) {
  int n = f->n;
  f->numeric = 0;
  f->failed = -1;
  if (!f->analysed) return -1;
  const int *Lp = f->Lp, *Rp = f->Rp, *Rj = f->Rj, *Rq = f->Rq;
  cdPair *const *Li = f->Li;
  const int *Cp = f->Cp, *Ce = f->Ce, *Cr = f->Cr, *Ct = f->Ct, *Ctt = f->Ctt, *Cd = f->Cd;
  cdPair *LU = f->LU, *w = f->w;
  cdPair *dn = f->dn;
  double *d = f->d, big = 1.0 / tol, growth = 0.0;
  for (int k = 0; k < n; k++) w[k][1] = 0.0; /* (the solves' x) */
  for (int k = 0; k < n; k++) {
    /* w = (C(0:k, k), C(k, 0:k)^T) over the reach, zero elsewhere */
    for (int q = Cp[k]; q < Ce[k]; q++) {
      cdPair a = {Ax[Ct[q]], Ax[Ctt[q]]};
      w[Cr[q]] = a;
    }
    double dk = Cd[k] >= 0 ? Ax[Cd[k]] : 0.0;
    cdPair g = {0.0, 0.0};
    for (int q = Rp[k]; q < Rp[k + 1]; q++) {
      int j = Rj[q], at = Rq[q];
      cdPair wv = w[j];
      w[j] = (cdPair){0.0, 0.0};
      /* the rows of column j above k: both solves' updates at once, two rows a trip (the
       * loop's own instructions halved), an odd row first (a column's rows are distinct: the
       * order within it changes no value), each row's update in turn (gcc then keeps the
       * trip to 15 instructions, and p != at its setup short; S2 10, 60 steps: 348.3M ->
       * 328.7M instructions against the odd row last and the trip's loads first). p and at
       * as ptrdiff_t: the loop's setup 2 instructions against 6 for an int p, whose trip
       * count gcc computed (S2 10, 60 steps: factorizations 290.5M -> 283.9M) */
      ptrdiff_t p = Lp[j], e = at;
      if ((e - p) & 1) *Li[p] += LU[p] * wv, p++;
      for (; p != e; p += 2) {
        *Li[p] += LU[p] * wv;
        *Li[p + 1] += LU[p + 1] * wv;
      }
      /* -(L(k, j), U(j, k)) = (v_j, w_j) / -d_j: one division of the pair, the same bits */
      cdPair lu = (cdPair){wv[1], wv[0]} / dn[j];
      LU[at] = lu;
      dk += lu[0] * wv[0];
      cdPair a = (cdPair)((cdBits)lu & (cdBits){~0ull >> 1, ~0ull >> 1}); /* |lu| */
      g = pairMax(g, a);
    }
    double gk = g[0] > g[1] ? g[0] : g[1];
    d[k] = dk, dn[k] = (cdPair){-dk, -dk};
    if (!(gk <= big) || !(fabs(dk) > 0.0) || !isfinite(dk)) {
      /* (the workspace is zero again: every entry scattered is in the reach, read and cleared).
       * gk again as one maximum over the row's pairs in order, as cd_sparseLduGrowth has
       * always reported it, to the bit: the lanes' maxima above are that maximum when the
       * multipliers are finite, and only a failing row has one that is not (an infinite one
       * fails the threshold; a NaN one is a NaN v_j or w_j, and so a NaN d_k) */
      gk = 0.0;
      for (int q = Rp[k]; q < Rp[k + 1]; q++) {
        double l = fabs(LU[Rq[q]][0]), u = fabs(LU[Rq[q]][1]), a = l > u ? l : u;
        gk = gk > a ? gk : a;
      }
      f->failed = k;
      f->growth = growth > gk ? growth : gk;
      return 1;
    }
    growth = growth > gk ? growth : gk;
  }
  f->growth = growth;
  f->numeric = 1;
  return 0;
}

void cd_sparseLduSolve(cdSparseLdu *f, double *b) {
  int n = f->n;
  const int *Lp = f->Lp, *perm = f->perm;
  const unsigned char *nest = f->nest;
  cdPair *const *Li = f->Li;
  const cdPair *LU = f->LU;
  const double *d = f->d;
  double *x = (double *)f->w + 1; /* (row i's x at Li's address of row i, lane 1) */
  for (int k = 0; k < n; k++) x[2 * k] = b[perm[k]];
  /* each column's odd entry first, then pairs, by pointers (the same order of each value's
   * updates: a column's rows are distinct, and U's row is summed in ascending order still);
   * D^-1 and the scatter to b in the backward pass. S2 10, 60 steps: 118.3M -> 101.2M
   * instructions (the loops' setup a column was ~15 instructions, the columns ~3 entries) */
  for (int j = 0; j < n; j++) { /* L y = P b */
    double xj = x[2 * j];
    if (xj == 0.0) continue;
    cdPair *const *li = Li + Lp[j], *const *le = Li + Lp[j + 1];
    const cdPair *lp = LU + Lp[j];
    if (nest[j]) {
      /* row j + 1 first, which makes x_{j+1} final; then columns j and j + 1 down their
       * shared rows together, each row's two updates in the order of the columns (the same
       * bits), one load and store of x_i for two; and three columns so where column j + 2
       * nests in j + 1 (a sticking contact's three unknowns). A zero x_{j+1} (x_{j+2}) is
       * skipped as alone. S2 10, 60 steps: solves 96.4M -> 91.8M with pairs, 88.0M with
       * runs of three, 86.8M with those two rows a trip, the analyses 202.4M -> 206.9M with
       * nest (the run 4.1004G -> 4.0947G); the 20-cube stack's pattern (20 blocks of 12
       * unknowns, each coupled to the next; AMD's order), a solve 64.5k -> 58.2k -> 57.2k
       * -> 55.2k instructions (CHOLMOD's simplicial LDL' solve 54.7k) */
      double *xn = (double *)*li++ + 1;
      *xn += (*lp++)[0] * xj;
      double xk = *xn;
      if (xk != 0.0) {
        const cdPair *lq = LU + Lp[j + 1] - (lp - LU); /* (column j + 1's at lq[p]) */
        ptrdiff_t p = lp - LU, e = le - Li;
        if (nest[j + 1]) {
          /* and column j + 2 too (its rows theirs after row j + 2) */
          double *xm = (double *)Li[p] + 1;
          *xm = *xm + LU[p][0] * xj + lq[p][0] * xk, p++;
          double xl = *xm;
          if (xl != 0.0) {
            const cdPair *lr = LU + Lp[j + 2] - p;
            if ((e - p) & 1) {
              double *xi = (double *)Li[p] + 1;
              *xi = *xi + LU[p][0] * xj + lq[p][0] * xk + lr[p][0] * xl, p++;
            }
            for (; p != e; p += 2) {
              double *x0 = (double *)Li[p] + 1, *x1 = (double *)Li[p + 1] + 1;
              *x0 = *x0 + LU[p][0] * xj + lq[p][0] * xk + lr[p][0] * xl;
              *x1 = *x1 + LU[p + 1][0] * xj + lq[p + 1][0] * xk + lr[p + 1][0] * xl;
            }
            j += 2;
            continue;
          }
        }
        if ((e - p) & 1) {
          double *xi = (double *)Li[p] + 1;
          *xi = *xi + LU[p][0] * xj + lq[p][0] * xk, p++;
        }
        for (; p != e; p += 2) {
          double *x0 = (double *)Li[p] + 1, *x1 = (double *)Li[p + 1] + 1;
          *x0 = *x0 + LU[p][0] * xj + lq[p][0] * xk;
          *x1 = *x1 + LU[p + 1][0] * xj + lq[p + 1][0] * xk;
        }
        j++;
        continue;
      }
    }
    if ((le - li) & 1) ((double *)*li++)[1] += (*lp++)[0] * xj;
    for (; li < le; li += 2, lp += 2) {
      double *x0 = (double *)li[0] + 1, *x1 = (double *)li[1] + 1;
      double a0 = lp[0][0] * xj, a1 = lp[1][0] * xj;
      *x0 += a0;
      *x1 += a1;
    }
  }
  for (int j = n - 1; j >= 0; j--) { /* U x = D^-1 y, by rows of U (columns of U^T) */
    double s = x[2 * j] / d[j];
    cdPair *const *li = Li + Lp[j], *const *le = Li + Lp[j + 1];
    const cdPair *lp = LU + Lp[j];
    if ((le - li) & 1) s += (*lp++)[1] * ((double *)*li++)[1];
    for (; li < le; li += 2, lp += 2) s = s + lp[0][1] * ((double *)li[0])[1] + lp[1][1] * ((double *)li[1])[1];
    x[2 * j] = s, b[perm[j]] = s;
  }
}
