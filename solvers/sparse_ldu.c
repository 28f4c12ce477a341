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
 * the factorizations 0.61G -> 0.56G, the solves 0.17G -> 0.16G.
 * Pivots. The diagonal is taken whatever the values; a multiplier L(k, j) (U(j, k)) is the
 * entry of column (row) j of the matrix reduced at step j over its pivot d_j, so |L|, |U| <=
 * 1 / tol is the threshold test of partial pivoting (KLU's Common.tol, default 1e-3) passed by
 * every diagonal pivot against its column and its row. A factorization in which one fails (or
 * a pivot is zero or not finite) stops and reports it: the caller factors A with pivoting.
 */
#include "sparse_ldu.h"

#include <math.h>
#include <string.h>

#include "alloc.h"

/* a pair of doubles: an entry of L with the entry of U at its transpose (and the two solves'
 * values of one row), updated together in one vector operation */
typedef double cdPair __attribute__((vector_size(2 * sizeof(double))));

struct cdSparseLdu {
  int n;        /* the analysed size, 0: no analysis */
  int lnz;      /* entries of L below the diagonal (= U's above it) */
  double flops; /* the LU's flops as KLU estimates them (cd_sparseLduFlops) */
  int *perm;    /* (n) new index k is old perm[k] */
  int *Lp;      /* (n + 1) columns of L, and of U^T */
  int *Li;      /* (lnz) row of each entry of L, ascending in a column */
  cdPair *LU;   /* (lnz) L(i, j) and U(j, i) of each entry of Li */
  double *d;    /* (n) D */
  int *Rp;      /* (n + 1) row k of L (the reach of column k of C's upper part) ... */
  int *Rj;      /* (rcap >= lnz) ... its columns, in a topological order of the elimination tree */
  size_t rcap;
  int *Rq;      /* (lnz) ... and where each entry sits in Li */
  /* an analysis over blocks (cd_sparseLduAnalyseBlocks) holds no Rp, Rj, Rq nor C's arrays:
   * the factorization walks the blocks' */
  int blocked;  /* 1: the analysis is over blocks */
  int na;       /* blocks with unknowns */
  int *pinv;    /* (n) the position of each unknown in the order */
  int *bst;     /* (na + 1) each block's first position in the order (the blocks in order) */
  int *bu;      /* (na) its first unknown */
  int *bAp;     /* (na) where its first column starts in Ax (its columns follow, blen apart) */
  int *blen;    /* (na) its columns' length */
  int *bdg;     /* (na) where its diagonal block sits in its first column, -1 absent */
  int *bCp;     /* (na + 1) the blocks of C above the diagonal in each block column: ... */
  int *bCi;     /* ... the block (its place in the order), */
  int *bCa;     /* ... where it sits in the block column's first column, */
  int *bCt;     /* ... and where its transpose sits in the block's own first column */
  int *bRp, *bRj, *bRq; /* each block row's reach over the blocks (bRp: na + 1), and where its
                           rows start among the rows of each block column it reaches (below
                           that block's own) */
  int *bLp, *bLi; /* (na + 1, bcap) the block rows of each block column of L */
  size_t bcap;  /* bRj's, bRq's and bLi's */
  int *Cp, *Ce; /* (n) column k of C above the diagonal, from Cp[k] to Ce[k] (at A's column
                   perm[k]'s place): ... */
  int *Cr;      /* (nnz) ... its rows, */
  int *Ct;      /* (nnz) ... where C(r, k) sits in Ax, */
  int *Ctt;     /* (nnz) ... and where C(k, r) sits in Ax */
  int *Cd;      /* (n) where C(k, k) sits in Ax, -1 absent */
  cdPair *w;    /* (n) the factorization's two triangular solves; zero between uses */
  double *x;    /* (n) cd_sparseLduSolve's work */
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
  cd_free(f->perm), cd_free(f->Lp), cd_free(f->Li), cd_free(f->LU), cd_free(f->d), cd_free(f->Rp);
  cd_free(f->Rj), cd_free(f->Rq), cd_free(f->Cp), cd_free(f->Ce), cd_free(f->Cr), cd_free(f->Ct), cd_free(f->Ctt);
  cd_free(f->Cd), cd_free(f->w), cd_free(f->x), cd_free(f->pinv), cd_free(f->bst), cd_free(f->bu), cd_free(f->bAp);
  cd_free(f->blen), cd_free(f->bdg), cd_free(f->bCp), cd_free(f->bCi), cd_free(f->bCa), cd_free(f->bCt);
  cd_free(f->bRp), cd_free(f->bRj), cd_free(f->bRq), cd_free(f->bLp), cd_free(f->bLi);
  cd_free(f);
}

double cd_sparseLduFlops(const cdSparseLdu *f) { return f->flops; }
int cd_sparseLduFailedPivot(const cdSparseLdu *f) { return f->failed; }
double cd_sparseLduGrowth(const cdSparseLdu *f) { return f->growth; }

/* row k's reach (C's column k above the diagonal, up the elimination tree to k) appended
 * to f->Rj from e, a topological order (each node after its descendants), with the tree
 * grown on the way: a path that ends at a root below k (parent -1) joins k there (the tree
 * of C(0:k, 0:k) is the tree of the rows before it, plus k); mark: marked with k; stack: n
 * ints. Returns the new end */
static int reach(cdSparseLdu *f, int k, int e, int *parent, int *mark, int *stack) {
  int n = f->n, top = n;
  mark[k] = k;
  for (int q = f->Cp[k]; q < f->Ce[k]; q++) {
    int len = 0;
    /* the path from row r up to the first marked node, then onto the stack reversed */
    for (int i = f->Cr[q]; mark[i] != k;) {
      stack[len++] = i, mark[i] = k;
      f->Lp[i + 1]++; /* (L's column counts) */
      if (parent[i] < 0) parent[i] = k;
      i = parent[i];
    }
    while (len > 0) stack[--top] = stack[--len];
  }
  memcpy(&f->Rj[e], &stack[top], (size_t)(n - top) * sizeof(int));
  return e + n - top;
}

int cd_sparseLduAnalyse(cdSparseLdu *f, int n, const int *Ap, const int *Ai, const int *perm) {
  f->n = 0;
  f->analysed = f->numeric = f->blocked = 0;
  int nnz = Ap[n];
  size_t nn = (size_t)n + 1;
  if (cd_grow(&f->perm, nn, sizeof(int)) || cd_grow(&f->Lp, nn, sizeof(int)) || cd_grow(&f->d, nn, sizeof(double)) ||
      cd_grow(&f->Rp, nn, sizeof(int)) || cd_grow(&f->Cp, nn, sizeof(int)) || cd_grow(&f->Ce, nn, sizeof(int)) || cd_grow(&f->Cd, nn, sizeof(int)) ||
      cd_grow(&f->Cr, (size_t)nnz + 1, sizeof(int)) || cd_grow(&f->Ct, (size_t)nnz + 1, sizeof(int)) ||
      cd_grow(&f->Ctt, (size_t)nnz + 1, sizeof(int)) || cd_grow(&f->w, nn, sizeof(cdPair)) ||
      cd_grow(&f->x, nn, sizeof(double)))
    return -1;
  /* scratch: pinv, the tree, marks, a stack, cursors (then fill positions) */
  int *work = cd_malloc(5 * nn * sizeof(int));
  if (!work) return -1;
  int *pinv = work, *parent = pinv + nn, *mark = parent + nn, *stack = mark + nn, *cnt = stack + nn;
  for (int k = 0; k < n; k++) f->perm[k] = perm ? perm[k] : k;
  for (int k = 0; k < n; k++) pinv[f->perm[k]] = k;
  /* C's columns above the diagonal (column k at A's column perm[k]'s place) and its diagonal,
   * with where each entry's transpose sits: with rows ascending in every column, column i's
   * rows j come in the order of the columns j that hold A(i, j), so one cursor a column (cnt)
   * finds them. That every entry meets its cursor and every cursor ends at its column's end
   * is the check: the pattern is symmetric and each column's rows ascend */
  for (int i = 0; i < n; i++) cnt[i] = Ap[i];
  for (int j = 0; j < n; j++) {
    int k = pinv[j], e = Ap[j];
    f->Cp[k] = e;
    f->Cd[k] = -1;
    for (int t = Ap[j]; t < Ap[j + 1]; t++) {
      int i = Ai[t], c = cnt[i], r = pinv[i];
      if (c >= Ap[i + 1] || Ai[c] != j) {
        cd_free(work); /* rows not ascending, or A(i, j) without A(j, i) */
        return 1;
      }
      cnt[i] = c + 1;
      if (r < k) f->Cr[e] = r, f->Ct[e] = t, f->Ctt[e] = c, e++;
      else if (r == k) f->Cd[k] = t;
    }
    f->Ce[k] = e;
  }
  for (int i = 0; i < n; i++)
    if (cnt[i] != Ap[i + 1]) { /* A(j, i) without A(i, j) */
      cd_free(work);
      return 1;
    }
  f->n = n;
  /* the rows' reaches (the elimination tree grown with them, L's column counts in Lp[1..n])
   * into Rj, a row k holding at most k entries: Rj is grown to the rows so far plus k as it
   * fills */
  for (int k = 0; k < n; k++) parent[k] = mark[k] = -1, f->Lp[k + 1] = 0;
  int e = 0;
  for (int k = 0; k < n; k++) {
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
    e = reach(f, k, e, parent, mark, stack);
  }
  f->Rp[n] = e;
  f->lnz = e;
  /* L's columns: their counts, then each row's entries placed (rows ascending in a column) */
  size_t ln = e > 0 ? (size_t)e : 1;
  if (cd_grow(&f->Li, ln, sizeof(int)) || cd_grow(&f->LU, ln, sizeof(cdPair)) || cd_grow(&f->Rq, ln, sizeof(int))) {
    f->n = 0;
    cd_free(work);
    return -1;
  }
  f->Lp[0] = 0;
  f->flops = 0.0;
  for (int k = 0; k < n; k++) {
    double c = f->Lp[k + 1];
    f->flops += c + 2.0 * c * c;
    f->Lp[k + 1] += f->Lp[k];
    cnt[k] = f->Lp[k]; /* (from here: the next free place in column k) */
  }
  for (int k = 0; k < n; k++)
    for (int q = f->Rp[k]; q < f->Rp[k + 1]; q++) {
      int at = cnt[f->Rj[q]]++;
      f->Li[at] = k;
      f->Rq[q] = at;
    }
  memset(f->w, 0, (size_t)n * sizeof *f->w);
  f->analysed = 1;
  cd_free(work);
  return 0;
}

/* the block reach of block row k (C's block column k above the diagonal, up the block
 * elimination tree to k), as reach() does over the unknowns: appended to f->bRj from e;
 * returns the new end */
static int blockReach(cdSparseLdu *f, int k, int e, int *parent, int *mark, int *stack) {
  int top = f->na;
  mark[k] = k;
  for (int q = f->bCp[k]; q < f->bCp[k + 1]; q++) {
    int len = 0;
    for (int i = f->bCi[q]; mark[i] != k;) {
      stack[len++] = i, mark[i] = k;
      if (parent[i] < 0) parent[i] = k;
      i = parent[i];
    }
    while (len > 0) stack[--top] = stack[--len];
  }
  memcpy(&f->bRj[e], &stack[top], (size_t)(f->na - top) * sizeof(int));
  return e + f->na - top;
}

int cd_sparseLduAnalyseBlocks(cdSparseLdu *f, int nb, const int *bsize, const int *Bp, const int *Bi, const int *perm,
                              const int *Ap) {
  f->n = 0;
  f->analysed = f->numeric = f->blocked = 0;
  int nnzb = Bp[nb], n = 0;
  for (int b = 0; b < nb; b++) {
    if (bsize[b] < 0) return 1;
    n += bsize[b];
  }
  size_t nbb = (size_t)nb + 1, neb = (size_t)nnzb + 1, nn = (size_t)n + 1;
  /* scratch: per block 7 (offsets, the order, its inverse, the tree, marks, a stack, cursors
   * then fill), per block entry 2 (row offset, transpose), per unknown 1 (its block) */
  int *work = cd_malloc((7 * nbb + 2 * neb + nn) * sizeof(int));
  if (!work) return -1;
  int *boff = work, *bperm = boff + nbb, *bpinv = bperm + nbb, *parent = bpinv + nbb, *mark = parent + nbb;
  int *stack = mark + nbb, *cur = stack + nbb, *rowoff = cur + nbb, *tr = rowoff + neb, *blk = tr + neb;
  int rc = -1, na = 0;
  if (cd_grow(&f->perm, nn, sizeof(int)) || cd_grow(&f->pinv, nn, sizeof(int))) goto out;
  rc = 1;
  int *pinv = f->pinv;
  for (int b = 0, u = 0; b < nb; b++) {
    boff[b] = u, bpinv[b] = -1;
    for (int c = 0; c < bsize[b]; c++) blk[u] = b, pinv[u++] = -1;
  }
  boff[nb] = n;
  /* the blocks' order from perm: each block's unknowns together (in any order among them) */
  for (int k = 0; k < n; k++)
    if (perm[k] < 0 || perm[k] >= n || pinv[perm[k]] >= 0) goto out;
    else pinv[perm[k]] = k;
  for (int k = 0; k < n; na++) {
    int b = blk[perm[k]];
    if (bpinv[b] >= 0) goto out;
    bpinv[b] = na, bperm[na] = b;
    for (int e = 0; e < bsize[b]; e++, k++)
      if (blk[perm[k]] != b) goto out;
  }
  rc = -1;
  size_t nab = (size_t)na + 1;
  if (cd_grow(&f->bst, nab, sizeof(int)) || cd_grow(&f->bu, nab, sizeof(int)) || cd_grow(&f->bAp, nab, sizeof(int)) ||
      cd_grow(&f->blen, nab, sizeof(int)) || cd_grow(&f->bdg, nab, sizeof(int)) || cd_grow(&f->bCp, nab, sizeof(int)) ||
      cd_grow(&f->bRp, nab, sizeof(int)) || cd_grow(&f->bLp, nab, sizeof(int)) || cd_grow(&f->bCi, neb, sizeof(int)) ||
      cd_grow(&f->bCa, neb, sizeof(int)) || cd_grow(&f->bCt, neb, sizeof(int)))
    goto out;
  rc = 1;
  f->na = na;
  for (int k = 0, st = 0; k < na; k++) {
    int j = bperm[k];
    f->bst[k] = st, st += bsize[j];
    f->bu[k] = boff[j], f->bAp[k] = Ap[boff[j]], f->bdg[k] = -1;
  }
  f->bst[na] = n;
  /* each block entry's row offset in its block column's scalar columns and where its
   * transpose sits (one cursor a block column: cd_sparseLduAnalyse's check, over the blocks
   * that have unknowns); the scalar columns' lengths must be their blocks' */
  for (int b = 0; b < nb; b++) cur[b] = Bp[b];
  for (int j = 0; j < nb; j++) {
    if (!bsize[j]) continue;
    int off = 0;
    for (int t = Bp[j]; t < Bp[j + 1]; t++) {
      int i = Bi[t];
      if (i < 0 || i >= nb || (t > Bp[j] && i <= Bi[t - 1])) goto out;
      if (!bsize[i]) continue;
      int c = cur[i];
      while (c < Bp[i + 1] && !bsize[Bi[c]]) c++;
      if (c >= Bp[i + 1] || Bi[c] != j) goto out;
      cur[i] = c + 1;
      tr[t] = c, rowoff[t] = off, off += bsize[i];
    }
    f->blen[bpinv[j]] = off;
    for (int c = 0; c < bsize[j]; c++)
      if (Ap[boff[j] + c + 1] - Ap[boff[j] + c] != off) goto out;
  }
  for (int i = 0; i < nb; i++) {
    if (!bsize[i]) continue;
    int c = cur[i];
    while (c < Bp[i + 1] && !bsize[Bi[c]]) c++;
    if (c != Bp[i + 1]) goto out;
  }
  /* C's block columns above the diagonal, in Bi's order (as A's columns list their rows,
   * which the reaches' order follows), and the diagonal blocks: a block of more than one
   * unknown must hold its own */
  int nce = 0, nr = 0; /* (C's entries above the diagonal in the blocks' first columns; the
                          unknowns of the blocks' first rows' reaches) */
  for (int k = 0, e = 0; k < na; k++) {
    int j = bperm[k];
    f->bCp[k] = e;
    for (int t = Bp[j]; t < Bp[j + 1]; t++) {
      int i = Bi[t];
      if (!bsize[i]) continue;
      int ki = bpinv[i];
      if (ki < k) f->bCi[e] = ki, f->bCa[e] = Ap[boff[j]] + rowoff[t], f->bCt[e] = Ap[boff[i]] + rowoff[tr[t]], e++, nce += bsize[i];
      else if (ki == k) f->bdg[k] = Ap[boff[j]] + rowoff[t];
    }
    f->bCp[k + 1] = e;
    if (bsize[j] > 1 && f->bdg[k] < 0) goto out;
  }
  /* the block rows' reaches (the block elimination tree grown with them) into bRj, and where
   * each block row's rows start in each block column it reaches (bRq; cur: the rows of each
   * block column so far, mark: its block rows) */
  rc = -1;
  int *fill = cur, *count = boff; /* (boff, cur: no longer needed) */
  for (int k = 0; k < na; k++) parent[k] = mark[k] = -1, fill[k] = count[k] = 0;
  int e = 0;
  for (int k = 0; k < na; k++) {
    if ((size_t)e + (size_t)k + 1 > f->bcap) {
      size_t want = 2 * ((size_t)e + (size_t)k + 1);
      if (want > 0x7fffffff || cd_grow(&f->bRj, want, sizeof(int)) || cd_grow(&f->bRq, want, sizeof(int)) ||
          cd_grow(&f->bLi, want, sizeof(int)))
        goto out;
      f->bcap = want;
    }
    f->bRp[k] = e;
    int end = blockReach(f, k, e, parent, mark, stack), rk = f->bst[k + 1] - f->bst[k];
    for (; e < end; e++) {
      int P = f->bRj[e];
      f->bRq[e] = fill[P], fill[P] += rk, count[P]++, nr += f->bst[P + 1] - f->bst[P];
    }
  }
  f->bRp[na] = e;
  /* L's columns: the unknown b of a block of r (a chain of the elimination tree: its
   * diagonal block is dense) holds its r - 1 - b later unknowns, then the rows of the block
   * rows of its block column (bLp, bLi: those block rows, ascending) */
  f->bLp[0] = 0;
  for (int k = 0; k < na; k++) f->bLp[k + 1] = f->bLp[k] + count[k], count[k] = f->bLp[k];
  for (int k = 0; k < na; k++)
    for (int q = f->bRp[k]; q < f->bRp[k + 1]; q++) f->bLi[count[f->bRj[q]]++] = k;
  if (cd_grow(&f->Lp, nn, sizeof(int)) || cd_grow(&f->d, nn, sizeof(double)) || cd_grow(&f->w, nn, sizeof(cdPair)) ||
      cd_grow(&f->x, nn, sizeof(double)))
    goto out;
  f->Lp[0] = 0;
  f->flops = 0.0;
  for (int k = 0; k < na; k++)
    for (int j = f->bst[k], r = f->bst[k + 1] - j, b = 0; b < r; b++) {
      double c = r - 1 - b + fill[k];
      f->flops += c + 2.0 * c * c;
      f->Lp[j + b + 1] = f->Lp[j + b] + (r - 1 - b + fill[k]);
    }
  int lnz = f->Lp[n];
  size_t ln = lnz > 0 ? (size_t)lnz : 1;
  if (cd_grow(&f->Li, ln, sizeof(int)) || cd_grow(&f->LU, ln, sizeof(cdPair))) goto out;
  {
    /* (the block rows' unknowns, the same in each column of the block: written once after
     * the first column's later unknowns, then copied) */
    const int *bst = f->bst, *bLp = f->bLp, *bLi = f->bLi, *Lp = f->Lp;
    int *Li = f->Li;
    for (int k = 0; k < na; k++) {
      int j = bst[k], r = bst[k + 1] - j, *li = &Li[Lp[j]], *rows;
      for (int a = 1; a < r; a++) *li++ = j + a;
      rows = li;
      for (int q = bLp[k]; q < bLp[k + 1]; q++) {
        int i = bst[bLi[q]], iend = bst[bLi[q] + 1];
        *li++ = i;
        while (++i < iend) *li++ = i;
      }
      for (int b = 1; b < r; b++) {
        int *lb = &Li[Lp[j + b]];
        for (int a = b + 1; a < r; a++) *lb++ = j + a;
        memcpy(lb, rows, (size_t)(li - rows) * sizeof(int));
      }
    }
  }
  /* what each block's rows share, as scalar lists (a block's r rows walk them alike): the
   * reach of its first row (Rp, Rj over the blocks; Rq: where L(k, j) sits for its first row
   * k, one further a row), and C's entries above the diagonal in its first column (Cp over
   * the blocks; Cr, the row; Ct, Ctt: where the entry and its transpose sit, the c-th column's
   * c len and c further) */
  if ((size_t)nr + 1 > f->rcap) {
    if (cd_grow(&f->Rj, (size_t)nr + 1, sizeof(int))) goto out;
    f->rcap = (size_t)nr + 1;
  }
  if (cd_grow(&f->Rq, (size_t)nr + 1, sizeof(int)) || cd_grow(&f->Rp, nab, sizeof(int)) || cd_grow(&f->Cp, nab, sizeof(int)) ||
      cd_grow(&f->Cr, (size_t)nce + 1, sizeof(int)) || cd_grow(&f->Ct, (size_t)nce + 1, sizeof(int)) ||
      cd_grow(&f->Ctt, (size_t)nce + 1, sizeof(int)))
    goto out;
  {
    const int *bst = f->bst, *bRp = f->bRp, *bRj = f->bRj, *bRq = f->bRq, *Lp = f->Lp, *bCp = f->bCp, *bCi = f->bCi;
    const int *bu = f->bu, *blen = f->blen, *bCa = f->bCa, *bCt = f->bCt;
    int *Rp = f->Rp, *Rj = f->Rj, *Rq = f->Rq, *Cp = f->Cp, *Cr = f->Cr, *Ct = f->Ct, *Ctt = f->Ctt;
    e = 0;
    for (int k = 0; k < na; k++) {
      Rp[k] = e;
      for (int q = bRp[k]; q < bRp[k + 1]; q++) {
        int P = bRj[q], j = bst[P], je = bst[P + 1], at0 = bRq[q] + je - 1;
        for (; j < je; j++, e++) Rj[e] = j, Rq[e] = Lp[j] + at0 - j;
      }
    }
    Rp[na] = e;
    e = 0;
    for (int k = 0; k < na; k++) {
      Cp[k] = e;
      for (int q = bCp[k]; q < bCp[k + 1]; q++) {
        int ki = bCi[q], ui = bu[ki], ri = bst[ki + 1] - bst[ki], li = blen[ki], a0 = bCa[q], t0 = bCt[q];
        for (int b = 0; b < ri; b++, e++) Cr[e] = pinv[ui + b], Ct[e] = a0 + b, Ctt[e] = t0 + b * li;
      }
    }
    Cp[na] = e;
  }
  memcpy(f->perm, perm, (size_t)n * sizeof(int));
  f->lnz = lnz;
  memset(f->w, 0, (size_t)n * sizeof *f->w);
  f->n = n;
  f->blocked = f->analysed = 1;
  rc = 0;
out:
  cd_free(work);
  return rc;
}

/* one entry j of row k's reach (L(k, j) and U(j, k) at Li's at): both solves' updates of the
 * rows of column j above k, then L(k, j), U(j, k), d_k's update (dk) and the largest
 * multiplier (gk); cd_sparseLduFactor's loop body, for factorBlocks */
#define PIVOT_STEP(j, at)                                         \
  do {                                                            \
    cdPair wv = w[j];                                             \
    w[j] = (cdPair){0.0, 0.0};                                    \
    int p = Lp[j];                                                \
    for (; p + 1 < (at); p += 2) {                                \
      int i0 = Li[p], i1 = Li[p + 1];                             \
      cdPair a0 = LU[p] * wv, a1 = LU[p + 1] * wv;                \
      w[i0] -= a0;                                                \
      w[i1] -= a1;                                                \
    }                                                             \
    if (p < (at)) w[Li[p]] -= LU[p] * wv;                         \
    double l = wv[1] / d[j], u = wv[0] / d[j];                    \
    LU[at] = (cdPair){l, u};                                      \
    dk -= l * wv[0];                                              \
    double am = fabs(l) > fabs(u) ? fabs(l) : fabs(u);            \
    gk = gk > am ? gk : am;                                       \
  } while (0)

/* cd_sparseLduFactor over an analysis over blocks: the same operations in the same order as
 * over the analysis cd_sparseLduAnalyse makes of the same pattern and order. Row k, the
 * unknown a of its block: C's column k above the diagonal comes from the blocks of C's block
 * column and the diagonal block; its reach is its block reach, each block's unknowns in
 * order, then the a unknowns of its block before it (the tail of the first path reach()
 * walks); L(k, j) sits, in column j (the unknown b of a block P of r), after P's r - 1 - b
 * later unknowns and the rows of P's block rows before k's block (bRq) */
static int factorBlocks(cdSparseLdu *f, const double *Ax, double tol) {
  const int *Lp = f->Lp, *Li = f->Li, *pinv = f->pinv, *bst = f->bst, *Rj = f->Rj, *Rq = f->Rq;
  const int *Cr = f->Cr, *Ct = f->Ct, *Ctt = f->Ctt;
  cdPair *LU = f->LU, *w = f->w;
  double *d = f->d, big = 1.0 / tol, growth = 0.0;
  for (int kb = 0; kb < f->na; kb++) {
    int st = bst[kb], r = bst[kb + 1] - st, u0 = f->bu[kb], len = f->blen[kb], dg = f->bdg[kb];
    for (int a = 0; a < r; a++) {
      int k = st + a, c = f->perm[k] - u0, cl = c * len;
      /* w = (C(0:k, k), C(k, 0:k)^T) over the reach, zero elsewhere */
      for (int q = f->Cp[kb]; q < f->Cp[kb + 1]; q++) {
        cdPair v = {Ax[Ct[q] + cl], Ax[Ctt[q] + c]};
        w[Cr[q]] = v;
      }
      double dk = 0.0, gk = 0.0;
      if (dg >= 0) {
        const double *x0 = &Ax[dg + cl], *t0 = &Ax[dg + c];
        for (int b = 0; b < r; b++) {
          int i = pinv[u0 + b];
          if (i < k) {
            cdPair v = {x0[b], t0[b * len]};
            w[i] = v;
          }
        }
        dk = x0[c];
      }
      for (int q = f->Rp[kb]; q < f->Rp[kb + 1]; q++) {
        int j = Rj[q], at = Rq[q] + a;
        PIVOT_STEP(j, at);
      }
      for (int j = st; j < k; j++) {
        int at = Lp[j] + k - j - 1;
        PIVOT_STEP(j, at);
      }
      d[k] = dk;
      growth = growth > gk ? growth : gk;
      if (!(gk <= big) || !(fabs(dk) > 0.0) || !isfinite(dk)) {
        f->failed = k;
        f->growth = growth;
        return 1;
      }
    }
  }
  f->growth = growth;
  f->numeric = 1;
  return 0;
}

int cd_sparseLduFactor(cdSparseLdu *f, const double *Ax, double tol) {
  int n = f->n;
  f->numeric = 0;
  f->failed = -1;
  if (!f->analysed) return -1;
  if (f->blocked) return factorBlocks(f, Ax, tol);
  const int *Lp = f->Lp, *Li = f->Li, *Rj = f->Rj, *Rq = f->Rq;
  cdPair *LU = f->LU, *w = f->w;
  double *d = f->d, big = 1.0 / tol, growth = 0.0;
  for (int k = 0; k < n; k++) {
    /* w = (C(0:k, k), C(k, 0:k)^T) over the reach, zero elsewhere */
    for (int q = f->Cp[k]; q < f->Ce[k]; q++) {
      cdPair a = {Ax[f->Ct[q]], Ax[f->Ctt[q]]};
      w[f->Cr[q]] = a;
    }
    double dk = f->Cd[k] >= 0 ? Ax[f->Cd[k]] : 0.0, gk = 0.0;
    for (int q = f->Rp[k]; q < f->Rp[k + 1]; q++) {
      int j = Rj[q], at = Rq[q];
      cdPair wv = w[j];
      w[j] = (cdPair){0.0, 0.0};
      /* the rows of column j above k: both solves' updates at once */
      int p = Lp[j];
      for (; p + 1 < at; p += 2) { /* (two rows a trip: the loop's own instructions halved) */
        int i0 = Li[p], i1 = Li[p + 1];
        cdPair a0 = LU[p] * wv, a1 = LU[p + 1] * wv;
        w[i0] -= a0;
        w[i1] -= a1;
      }
      if (p < at) w[Li[p]] -= LU[p] * wv;
      double l = wv[1] / d[j], u = wv[0] / d[j];
      LU[at] = (cdPair){l, u};
      dk -= l * wv[0];
      double a = fabs(l) > fabs(u) ? fabs(l) : fabs(u);
      gk = gk > a ? gk : a;
    }
    d[k] = dk;
    growth = growth > gk ? growth : gk;
    if (!(gk <= big) || !(fabs(dk) > 0.0) || !isfinite(dk)) {
      /* (the workspace is zero again: every entry scattered is in the reach, read and cleared) */
      f->failed = k;
      f->growth = growth;
      return 1;
    }
  }
  f->growth = growth;
  f->numeric = 1;
  return 0;
}

void cd_sparseLduSolve(cdSparseLdu *f, double *b) {
  int n = f->n;
  const int *Lp = f->Lp, *Li = f->Li, *perm = f->perm;
  const cdPair *LU = f->LU;
  const double *d = f->d;
  double *x = f->x;
  for (int k = 0; k < n; k++) x[k] = b[perm[k]];
  for (int j = 0; j < n; j++) { /* L y = P b */
    double xj = x[j];
    if (xj == 0.0) continue;
    int p = Lp[j];
    for (; p + 1 < Lp[j + 1]; p += 2) {
      int i0 = Li[p], i1 = Li[p + 1];
      double a0 = LU[p][0] * xj, a1 = LU[p + 1][0] * xj;
      x[i0] -= a0;
      x[i1] -= a1;
    }
    if (p < Lp[j + 1]) x[Li[p]] -= LU[p][0] * xj;
  }
  for (int k = 0; k < n; k++) x[k] /= d[k];
  for (int j = n - 1; j >= 0; j--) { /* U x = D^-1 y, by rows of U (columns of U^T) */
    double s = x[j];
    int p = Lp[j];
    for (; p + 1 < Lp[j + 1]; p += 2) s = s - LU[p][1] * x[Li[p]] - LU[p + 1][1] * x[Li[p + 1]];
    if (p < Lp[j + 1]) s -= LU[p][1] * x[Li[p]];
    x[j] = s;
  }
  for (int k = 0; k < n; k++) b[perm[k]] = x[k];
}
