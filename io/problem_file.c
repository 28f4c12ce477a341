/* problem_file.c: readers of LCP and friction-contact problem files (contracts in
 * problem_file.h; the formats are described in the peer collections' README, §1 Siconos text
 * and §2 FCLIB HDF5).
 *
 * Every matrix, whatever its storage, is first read into a list of triplets in the file's
 * own indices (contact components of dimension d); the friction-contact readers then map
 * component k of the file to row 3 (k / d) + k % d and assemble the 3x3 block CSR matrix
 * from the triplets, summing entries that fall into the same block.
 */
#include "problem_file.h"

#include "linalg.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cholmod.h>
#include <hdf5.h>

#include "alloc.h"
#include "backend.h"

/* M counts as symmetric when |M - M^T|_1 <= this times |M|_1: the sparse text storage keeps
 * about 6 significant digits (README §1.1 c), so a symmetric M written there differs from
 * its transpose by up to about 5e-6 relative per entry */
#define CD_PEER_SYM_TOL 1e-5

/* ---- error reporting ---- */

typedef struct cdPeerCtx {
  const char *path; /* the file being read, for messages */
  char *err;        /* message buffer (may be NULL) */
  size_t errlen;
} cdPeerCtx;

static int ctxFail(const cdPeerCtx *x, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int ctxFail(const cdPeerCtx *x, int code, const char *fmt, ...) {
  if (x->err && x->errlen) {
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(x->err, x->errlen, "%s: %s", x->path, msg);
  }
  return code;
}

static int ctxNomem(const cdPeerCtx *x) { return ctxFail(x, CD_ERR_NOMEM, "out of memory"); }

/* ---- triplet lists ---- */

typedef struct cdTrip {
  int rows, cols;  /* matrix size */
  size_t nz, cap;  /* entries stored, allocated */
  int *ri, *ci;    /* (nz) row and column of each entry */
  double *v;       /* (nz) values; duplicates mean a sum */
} cdTrip;

static void tripFree(cdTrip *t) {
  cd_free(t->ri);
  cd_free(t->ci);
  cd_free(t->v);
  memset(t, 0, sizeof *t);
}

static int tripPush(cdTrip *t, int r, int c, double v) {
  if (t->nz == t->cap) {
    size_t cap = t->cap ? 2 * t->cap : 64;
    int *ri = cd_realloc(t->ri, cap * sizeof *ri);
    if (!ri) return CD_ERR_NOMEM;
    t->ri = ri;
    int *ci = cd_realloc(t->ci, cap * sizeof *ci);
    if (!ci) return CD_ERR_NOMEM;
    t->ci = ci;
    double *vv = cd_realloc(t->v, cap * sizeof *vv);
    if (!vv) return CD_ERR_NOMEM;
    t->v = vv;
    t->cap = cap;
  }
  t->ri[t->nz] = r;
  t->ci[t->nz] = c;
  t->v[t->nz] = v;
  t->nz++;
  return 0;
}

/* ---- the contact problem from local data ---- */

typedef struct cdEnt {
  int br, bc; /* block row and column */
  int off;    /* 0..8: position in the row-major 3x3 block */
  double v;
} cdEnt;

static int entCmp(const void *a, const void *b) {
  const cdEnt *x = a, *y = b;
  if (x->br != y->br) return x->br < y->br ? -1 : 1;
  if (x->bc != y->bc) return x->bc < y->bc ? -1 : 1;
  return 0;
}

/* file component k of a d-dimensional problem -> row of the 3-D problem */
static int comp3(int k, int d) { return 3 * (k / d) + k % d; }

/* out = the local problem u = W r + q of nc contacts of dimension d (W as triplets in file
 * indices, q (d nc), mu (nc)); 2-D problems get the decoupled t2 of peer_data.h */
static int problemBuild(const cdPeerCtx *x, int d, int nc, const cdTrip *W, const double *q, const double *mu,
                        cdContactProblem *out) {
  size_t nent = W->nz + (size_t)nc * (d == 2 ? 2 : 1);
  cdEnt *e = cd_malloc(nent * sizeof *e);
  if (!e) return ctxNomem(x);
  size_t k = 0;
  for (size_t t = 0; t < W->nz; t++) {
    int r = comp3(W->ri[t], d), c = comp3(W->ci[t], d);
    e[k++] = (cdEnt){r / 3, c / 3, 3 * (r % 3) + c % 3, W->v[t]};
  }
  for (int i = 0; i < nc; i++) {
    e[k++] = (cdEnt){i, i, 0, 0.0}; /* keeps the diagonal block present */
    if (d == 2) e[k++] = (cdEnt){i, i, 8, 1.0};
  }
  qsort(e, nent, sizeof *e, entCmp);
  int nnzb = 0;
  for (size_t t = 0; t < nent; t++)
    if (t == 0 || entCmp(&e[t], &e[t - 1]) != 0) nnzb++;

  memset(out, 0, sizeof *out);
  out->ncon = nc;
  out->g = cd_calloc(3 * (size_t)nc, sizeof(double));
  out->mu = cd_calloc((size_t)nc, sizeof(double));
  out->lambda = cd_calloc(3 * (size_t)nc, sizeof(double));
  if (!out->g || !out->mu || !out->lambda || cd_blockMatrixAlloc(&out->G, nc, nnzb) != 0) {
    cd_free(e);
    cd_contactProblemFree(out);
    return ctxNomem(x);
  }
  cdBlockMatrix *G = &out->G;
  int b = -1;
  for (size_t t = 0; t < nent; t++) {
    if (t == 0 || entCmp(&e[t], &e[t - 1]) != 0) {
      b++;
      G->col[b] = e[t].bc;
      G->rowptr[e[t].br + 1]++;
      if (e[t].bc == e[t].br) G->diag[e[t].br] = b;
    }
    G->val[9 * (size_t)b + (size_t)e[t].off] += e[t].v;
  }
  for (int i = 0; i < nc; i++) G->rowptr[i + 1] += G->rowptr[i];
  for (int i = 0; i < d * nc; i++) out->g[comp3(i, d)] = q[i];
  for (int i = 0; i < nc; i++) out->mu[i] = mu[i];
  cd_free(e);
  return 0;
}

/* ---- global -> local condensation with CHOLMOD ---- */

static int cholFail(const cdPeerCtx *x, const cholmod_common *cm, const char *what) {
  if (cm->status == CHOLMOD_OUT_OF_MEMORY) return ctxNomem(x);
  return ctxFail(x, CD_FILE_ERR_INPUT, "CHOLMOD failed in %s (status %d)", what, cm->status);
}

static cholmod_sparse *tripToSparse(const cdTrip *t, cholmod_common *cm) {
  size_t nz = t->nz ? t->nz : 1;
  cholmod_triplet *T = cholmod_allocate_triplet((size_t)t->rows, (size_t)t->cols, nz, 0, CHOLMOD_REAL, cm);
  if (!T) return NULL;
  int *Ti = T->i, *Tj = T->j;
  double *Tx = T->x;
  for (size_t k = 0; k < t->nz; k++) {
    Ti[k] = t->ri[k];
    Tj[k] = t->ci[k];
    Tx[k] = t->v[k];
  }
  T->nnz = t->nz;
  cholmod_sparse *A = cholmod_triplet_to_sparse(T, t->nz, cm); /* sums duplicates */
  cholmod_free_triplet(&T, cm);
  return A;
}

/* out = the local form W = H^T M^-1 H, q = H^T M^-1 f + w of the global problem
 * M v = H r + f, u = H^T v + w (M ndof x ndof symmetric positive definite, H ndof x d nc) */
static int problemCondense(const cdPeerCtx *x, int d, int nc, const cdTrip *M, const cdTrip *H, const double *f,
                           const double *w, const double *mu, cdContactProblem *out) {
  int ndof = M->rows, m = d * nc, rc = 0;
  cholmod_common cm;
  cholmod_sparse *A = NULL, *At = NULL, *D = NULL, *S = NULL, *Hs = NULL, *Ht = NULL, *X = NULL, *Ws = NULL;
  cholmod_factor *L = NULL;
  cholmod_dense *fd = NULL, *y = NULL, *qd = NULL;
  cdTrip Wt = {0};
  double one[2] = {1, 0}, minus[2] = {-1, 0}, half[2] = {0.5, 0}, anorm, asym, *q = NULL;
  if (ndof < 1) return ctxFail(x, CD_FILE_ERR_INPUT, "global problem with an empty M");
  cd_linalgInit(); /* CHOLMOD's memory through src/alloc.h, as in the simulator */
  cholmod_start(&cm);
  cm.print = 0;                        /* no printing: errors come back as messages */
  cm.final_ll = 1;                     /* LL^T: an M that is not SPD stops the factorization */
  cm.supernodal = CHOLMOD_SIMPLICIAL;  /* LDL^T reports a matrix that is not SPD too; the supernodal
                                        path of CHOLMOD 3 crashes in a later solve when one of
                                        its allocations failed */

  /* M: symmetric to the storage's precision; its symmetric part (M + M^T) / 2 is factored */
  A = tripToSparse(M, &cm);
  if (!A) {
    rc = cholFail(x, &cm, "triplet_to_sparse(M)");
    goto done;
  }
  At = cholmod_transpose(A, 1, &cm);
  D = At ? cholmod_add(A, At, one, minus, 1, 0, &cm) : NULL;
  if (!D) {
    rc = cholFail(x, &cm, "add(M, -M^T)");
    goto done;
  }
  anorm = cholmod_norm_sparse(A, 1, &cm);
  asym = cholmod_norm_sparse(D, 1, &cm);
  if (!(asym <= CD_PEER_SYM_TOL * anorm)) {
    rc = ctxFail(x, CD_FILE_ERR_INPUT, "M is not symmetric (|M - M^T|_1 / |M|_1 = %.3g)", asym / anorm);
    goto done;
  }
  cholmod_free_sparse(&D, &cm);
  D = cholmod_add(A, At, half, half, 1, 0, &cm);
  S = D ? cholmod_copy(D, 1, 1, &cm) : NULL; /* upper triangle, stype 1 */
  L = S ? cholmod_analyze(S, &cm) : NULL;
  if (!L) {
    rc = cholFail(x, &cm, "analyze(M)");
    goto done;
  }
  cholmod_factorize(S, L, &cm);
  if (cm.status == CHOLMOD_OUT_OF_MEMORY) {
    rc = cholFail(x, &cm, "factorize(M)");
    goto done;
  }
  if (cm.status == CHOLMOD_NOT_POSDEF || L->minor < L->n) {
    rc = ctxFail(x, CD_FILE_ERR_INPUT, "M is not positive definite (CHOLMOD: not SPD at column %d)", (int)L->minor);
    goto done;
  }
  if (cm.status < 0) {
    rc = cholFail(x, &cm, "factorize(M)");
    goto done;
  }

  /* W = H^T (M^-1 H), q = H^T (M^-1 f) + w */
  Wt.rows = Wt.cols = m;
  q = cd_calloc((size_t)m + 1, sizeof(double));
  if (!q) {
    rc = ctxNomem(x);
    goto done;
  }
  if (m > 0) {
    Hs = tripToSparse(H, &cm);
    /* M^-1 H through a dense solve: cholmod_spsolve of CHOLMOD 3 (Debian 12) dereferences
     * a failed allocation of its own, and these problems are small (ndof x m dense) */
    cholmod_dense *Hd = Hs ? cholmod_sparse_to_dense(Hs, &cm) : NULL;
    cholmod_dense *Xd = Hd ? cholmod_solve(CHOLMOD_A, L, Hd, &cm) : NULL;
    X = Xd ? cholmod_dense_to_sparse(Xd, 1, &cm) : NULL;
    cholmod_free_dense(&Hd, &cm);
    cholmod_free_dense(&Xd, &cm);
    Ht = X ? cholmod_transpose(Hs, 1, &cm) : NULL;
    Ws = Ht ? cholmod_ssmult(Ht, X, 0, 1, 1, &cm) : NULL;
    if (!Ws) {
      rc = cholFail(x, &cm, "H^T M^-1 H");
      goto done;
    }
    /* one at a time: each CHOLMOD call resets cm.status, which would hide the first failure */
    fd = cholmod_allocate_dense((size_t)ndof, 1, (size_t)ndof, CHOLMOD_REAL, &cm);
    qd = fd ? cholmod_allocate_dense((size_t)m, 1, (size_t)m, CHOLMOD_REAL, &cm) : NULL;
    if (!fd || !qd) {
      rc = cholFail(x, &cm, "allocate_dense");
      goto done;
    }
    memcpy(fd->x, f, (size_t)ndof * sizeof(double));
    memcpy(qd->x, w, (size_t)m * sizeof(double));
    y = cholmod_solve(CHOLMOD_A, L, fd, &cm);
    if (!y || !cholmod_sdmult(Hs, 1, one, one, y, qd, &cm)) {
      rc = cholFail(x, &cm, "H^T M^-1 f");
      goto done;
    }
    memcpy(q, qd->x, (size_t)m * sizeof(double));
    const int *Wp = Ws->p, *Wi = Ws->i;
    const double *Wx = Ws->x;
    for (int j = 0; j < m; j++)
      for (int p = Wp[j]; p < Wp[j + 1]; p++)
        if (tripPush(&Wt, Wi[p], j, Wx[p]) != 0) {
          rc = ctxNomem(x);
          goto done;
        }
  }
  rc = problemBuild(x, d, nc, &Wt, q, mu, out);
done:
  cd_free(q);
  tripFree(&Wt);
  cholmod_free_dense(&fd, &cm);
  cholmod_free_dense(&y, &cm);
  cholmod_free_dense(&qd, &cm);
  cholmod_free_sparse(&A, &cm);
  cholmod_free_sparse(&At, &cm);
  cholmod_free_sparse(&D, &cm);
  cholmod_free_sparse(&S, &cm);
  cholmod_free_sparse(&Hs, &cm);
  cholmod_free_sparse(&Ht, &cm);
  cholmod_free_sparse(&X, &cm);
  cholmod_free_sparse(&Ws, &cm);
  cholmod_free_factor(&L, &cm);
  cholmod_finish(&cm);
  return rc;
}

/* ---- Siconos text files ---- */

typedef struct cdText {
  cdPeerCtx x;
  char *buf;   /* (len + 1) the whole file, NUL-terminated */
  size_t len;
  size_t pos;  /* read position */
} cdText;

static int textLoad(cdText *t, const char *path, char *err, size_t errlen) {
  memset(t, 0, sizeof *t);
  t->x = (cdPeerCtx){path, err, errlen};
  FILE *fp = fopen(path, "rb");
  if (!fp) return ctxFail(&t->x, CD_FILE_ERR_INPUT, "cannot open: %s", strerror(errno));
  size_t cap = 1 << 16;
  t->buf = cd_malloc(cap);
  while (t->buf) {
    t->len += fread(t->buf + t->len, 1, cap - 1 - t->len, fp);
    if (t->len < cap - 1) break;
    char *nb = cd_realloc(t->buf, 2 * cap);
    if (!nb) {
      cd_free(t->buf);
      t->buf = NULL;
      break;
    }
    t->buf = nb;
    cap *= 2;
  }
  int bad = ferror(fp);
  fclose(fp);
  if (!t->buf) return ctxNomem(&t->x);
  t->buf[t->len] = '\0';
  if (bad) return ctxFail(&t->x, CD_FILE_ERR_INPUT, "read error");
  return 0;
}

static int isSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

/* a message with the line number of the read position */
static int textFail(const cdText *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int textFail(const cdText *t, const char *fmt, ...) {
  char msg[200];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  long line = 1;
  for (size_t i = 0; i < t->pos && i < t->len; i++) line += t->buf[i] == '\n';
  return ctxFail(&t->x, CD_FILE_ERR_INPUT, "line %ld: %s", line, msg);
}

/* the next whitespace-delimited token [*b, *e); 0 at end of file */
static int textToken(cdText *t, size_t *b, size_t *e) {
  size_t p = t->pos;
  while (p < t->len && isSpace(t->buf[p])) p++;
  if (p == t->len) return 0;
  *b = p;
  while (p < t->len && !isSpace(t->buf[p])) p++;
  *e = p;
  return 1;
}

/* the next token as an int (the whole token must be one); -1 without moving otherwise */
static int textTryInt(cdText *t, int *v) {
  size_t b, e;
  if (!textToken(t, &b, &e)) return -1;
  char *end;
  errno = 0;
  long l = strtol(t->buf + b, &end, 10);
  if (end != t->buf + e || errno || l < INT_MIN || l > INT_MAX) return -1;
  *v = (int)l;
  t->pos = e;
  return 0;
}

static int textInt(cdText *t, const char *what, int *v) {
  if (textTryInt(t, v) == 0) return 0;
  size_t b, e;
  if (!textToken(t, &b, &e)) return textFail(t, "file ends where %s (an integer) is expected", what);
  return textFail(t, "expected an integer (%s), found '%.20s'", what, t->buf + b);
}

static int textDouble(cdText *t, const char *what, double *v) {
  size_t b, e;
  if (!textToken(t, &b, &e)) return textFail(t, "file ends where %s (a number) is expected", what);
  char *end;
  *v = strtod(t->buf + b, &end);
  if (end != t->buf + e) return textFail(t, "expected a number (%s), found '%.20s'", what, t->buf + b);
  t->pos = e;
  return 0;
}

static int textDoubles(cdText *t, const char *what, int n, double **out) {
  *out = cd_malloc(((size_t)n + 1) * sizeof(double));
  if (!*out) return ctxNomem(&t->x);
  for (int i = 0; i < n; i++) {
    int rc = textDouble(t, what, &(*out)[i]);
    if (rc) return rc;
  }
  return 0;
}

/* the rest of the current line into buf (cut to n-1 chars), moving past it; blank lines are
 * skipped; -1 at end of file */
static int textLine(cdText *t, char *buf, size_t n) {
  for (;;) {
    if (t->pos >= t->len) return -1;
    size_t b = t->pos, e = b;
    while (e < t->len && t->buf[e] != '\n') e++;
    t->pos = e < t->len ? e + 1 : e;
    int blank = 1;
    for (size_t i = b; i < e; i++) blank &= isSpace(t->buf[i]);
    if (blank) continue;
    size_t k = e - b < n - 1 ? e - b : n - 1;
    memcpy(buf, t->buf + b, k);
    buf[k] = '\0';
    return 0;
  }
}

/* the rest of the current line, even if blank */
static void textSkipLine(cdText *t) {
  while (t->pos < t->len && t->buf[t->pos] != '\n') t->pos++;
  if (t->pos < t->len) t->pos++;
}

static int tripAdd(cdText *t, cdTrip *m, int r, int c, double v) {
  if (v == 0.0) return 0;
  return tripPush(m, r, c, v) ? ctxNomem(&t->x) : 0;
}

/* storage 0: rows cols, then rows*cols values column by column */
static int readDense(cdText *t, cdTrip *m) {
  int r2, c2, rc;
  if ((rc = textInt(t, "dense rows", &r2)) || (rc = textInt(t, "dense cols", &c2))) return rc;
  if (r2 != m->rows || c2 != m->cols)
    return textFail(t, "dense size %dx%d differs from the header's %dx%d", r2, c2, m->rows, m->cols);
  for (int j = 0; j < m->cols; j++)
    for (int i = 0; i < m->rows; i++) {
      double v;
      if ((rc = textDouble(t, "dense entry", &v)) || (rc = tripAdd(t, m, i, j, v))) return rc;
    }
  return 0;
}

/* reads n ints into a fresh array (n >= 0) */
static int textInts(cdText *t, const char *what, int n, int **out) {
  *out = cd_malloc(((size_t)n + 1) * sizeof(int));
  if (!*out) return ctxNomem(&t->x);
  for (int i = 0; i < n; i++) {
    int rc = textInt(t, what, &(*out)[i]);
    if (rc) return rc;
  }
  return 0;
}

/* cumulative block sizes: strictly increasing, ending at total */
static int checkCumulative(cdText *t, const int *bs, int nb, int total, const char *what) {
  for (int k = 0; k < nb; k++)
    if (bs[k] <= (k ? bs[k - 1] : 0)) return textFail(t, "%s block sizes are not increasing", what);
  if (nb > 0 && bs[nb - 1] != total) return textFail(t, "%s block sizes end at %d, not %d", what, bs[nb - 1], total);
  return 0;
}

/* storage 1 (SBM): README §1.1 b */
static int readSbm(cdText *t, cdTrip *m) {
  int nbb, nb0, nb1, f1, f2, rc;
  int *bs0 = NULL, *bs1 = NULL, *ix1 = NULL, *ix2 = NULL;
  if ((rc = textInt(t, "SBM nbblocks", &nbb))) return rc;
  if (nbb < 0) return textFail(t, "negative block count %d", nbb);
  if (nbb == 0) return 0;
  if ((rc = textInt(t, "SBM block rows", &nb0)) || (rc = textInt(t, "SBM block cols", &nb1))) return rc;
  if (nb0 < 1 || nb1 < 1) return textFail(t, "bad block grid %dx%d", nb0, nb1);
  if ((rc = textInts(t, "blocksize0", nb0, &bs0)) || (rc = textInts(t, "blocksize1", nb1, &bs1)) ||
      (rc = checkCumulative(t, bs0, nb0, m->rows, "row")) || (rc = checkCumulative(t, bs1, nb1, m->cols, "column")) ||
      (rc = textInt(t, "filled1", &f1)) || (rc = textInt(t, "filled2", &f2)))
    goto done;
  if (f1 != nb0 + 1 || f2 != nbb) {
    rc = textFail(t, "filled1/filled2 = %d/%d, expected %d/%d", f1, f2, nb0 + 1, nbb);
    goto done;
  }
  if ((rc = textInts(t, "index1_data", f1, &ix1)) || (rc = textInts(t, "index2_data", f2, &ix2))) goto done;
  for (int r = 0; r < nb0; r++)
    if (ix1[r] > ix1[r + 1]) {
      rc = textFail(t, "index1_data is not nondecreasing");
      goto done;
    }
  if (ix1[0] != 0 || ix1[nb0] != nbb) {
    rc = textFail(t, "index1_data runs %d..%d, expected 0..%d", ix1[0], ix1[nb0], nbb);
    goto done;
  }
  for (int r = 0; r < nb0; r++)
    for (int b = ix1[r]; b < ix1[r + 1]; b++) {
      int c = ix2[b], check;
      if (c < 0 || c >= nb1) {
        rc = textFail(t, "block %d has column %d outside 0..%d", b, c, nb1 - 1);
        goto done;
      }
      if ((rc = textInt(t, "block number", &check))) goto done;
      if (check != b) {
        rc = textFail(t, "block number %d where %d is expected", check, b);
        goto done;
      }
      int r0 = r ? bs0[r - 1] : 0, c0 = c ? bs1[c - 1] : 0;
      for (int jj = 0; jj < bs1[c] - c0; jj++)
        for (int ii = 0; ii < bs0[r] - r0; ii++) {
          double v;
          if ((rc = textDouble(t, "block entry", &v)) || (rc = tripAdd(t, m, r0 + ii, c0 + jj, v))) goto done;
        }
    }
done:
  cd_free(bs0);
  cd_free(bs1);
  cd_free(ix1);
  cd_free(ix2);
  return rc;
}

/* storage 2 (CSparse print, line by line): README §1.1 c; origin 1 triplet, 2 CSC */
static int readSparse(cdText *t, cdTrip *m) {
  int origin, rc, M, N;
  long nzmax, nnz;
  char line[256];
  if ((rc = textInt(t, "sparse origin", &origin))) return rc;
  if (origin != 1 && origin != 2) return textFail(t, "sparse origin %d not supported (1 triplet, 2 CSC)", origin);
  textSkipLine(t);
  if (textLine(t, line, sizeof line)) return textFail(t, "file ends in a sparse header");
  if (strstr(line, "CSparse") && textLine(t, line, sizeof line)) return textFail(t, "file ends in a sparse header");
  int ok = origin == 1 ? sscanf(line, " triplet: %d-by-%d, nzmax: %ld nnz: %ld", &M, &N, &nzmax, &nnz)
                       : sscanf(line, " %d-by-%d, nzmax: %ld nnz: %ld", &M, &N, &nzmax, &nnz);
  if (ok != 4) return textFail(t, "unreadable sparse header '%.60s'", line);
  if (M != m->rows || N != m->cols) return textFail(t, "sparse size %dx%d differs from %dx%d", M, N, m->rows, m->cols);
  if (nnz < 0) return textFail(t, "negative nnz %ld", nnz);
  if (origin == 1) {
    for (long k = 0; k < nnz; k++) {
      int i, j;
      double v;
      if (textLine(t, line, sizeof line) || sscanf(line, " %d %d : %lg", &i, &j, &v) != 3)
        return textFail(t, "triplet entry %ld of %ld missing or unreadable", k, nnz);
      if (i < 0 || i >= M || j < 0 || j >= N) return textFail(t, "triplet entry (%d, %d) outside %dx%d", i, j, M, N);
      if ((rc = tripAdd(t, m, i, j, v))) return rc;
    }
    return 0;
  }
  long next = 0;
  for (int j = 0; j < N; j++) {
    int jj;
    long a, b;
    if (textLine(t, line, sizeof line) || sscanf(line, " col %d : locations %ld to %ld", &jj, &a, &b) != 3)
      return textFail(t, "column %d header missing or unreadable", j);
    if (jj != j || a != next || b < a - 1 || b >= nnz) return textFail(t, "column %d header inconsistent", j);
    for (long p = a; p <= b; p++) {
      int i;
      double v;
      if (textLine(t, line, sizeof line) || sscanf(line, " %d : %lg", &i, &v) != 2)
        return textFail(t, "entry %ld of column %d missing or unreadable", p, j);
      if (i < 0 || i >= M) return textFail(t, "row %d outside 0..%d", i, M - 1);
      if ((rc = tripAdd(t, m, i, j, v))) return rc;
    }
    next = b + 1;
  }
  return 0;
}

/* one matrix block ("NumericsMatrix", README §1.1): storage rows cols, then the layout */
static int readMatrix(cdText *t, const char *what, cdTrip *m) {
  int st, rc;
  memset(m, 0, sizeof *m);
  if ((rc = textInt(t, what, &st)) || (rc = textInt(t, "matrix rows", &m->rows)) ||
      (rc = textInt(t, "matrix cols", &m->cols)))
    return rc;
  if (m->rows < 0 || m->cols < 0) return textFail(t, "%s has a negative size %dx%d", what, m->rows, m->cols);
  switch (st) {
  case 0: return readDense(t, m);
  case 1: return readSbm(t, m);
  case 2: return readSparse(t, m);
  default: return textFail(t, "%s: unknown storage type %d", what, st);
  }
}

int cd_lcpFileRead(const char *path, cdLcpFile *out, char *err, size_t errlen) {
  cdText t;
  cdTrip M = {0};
  int n = 0, rc;
  memset(out, 0, sizeof *out);
  if ((rc = textLoad(&t, path, err, errlen))) goto done;
  if ((rc = textInt(&t, "n", &n)) || (rc = readMatrix(&t, "storage type of M", &M))) goto done;
  if (n < 1 || M.rows != n || M.cols != n) {
    rc = textFail(&t, "M is %dx%d for n = %d", M.rows, M.cols, n);
    goto done;
  }
  out->n = n;
  out->M = cd_calloc((size_t)n * (size_t)n, sizeof(double));
  if (!out->M) {
    rc = ctxNomem(&t.x);
    goto done;
  }
  for (size_t k = 0; k < M.nz; k++) out->M[(size_t)M.ri[k] + (size_t)n * (size_t)M.ci[k]] += M.v[k];
  rc = textDoubles(&t, "q", n, &out->q);
done:
  if (rc) cd_lcpFileFree(out);
  tripFree(&M);
  cd_free(t.buf);
  return rc;
}

void cd_lcpFileFree(cdLcpFile *p) {
  cd_free(p->M);
  cd_free(p->q);
  memset(p, 0, sizeof *p);
}

/* is the next thing a matrix block header "st rows cols" with st 0..2, rows, cols given?
 * (the read position does not move) */
static int looksLikeMatrix(cdText *t, int rows, int cols) {
  size_t save = t->pos;
  int st, r, c;
  int yes = textTryInt(t, &st) == 0 && st >= 0 && st <= 2 && textTryInt(t, &r) == 0 && r == rows &&
            textTryInt(t, &c) == 0 && c == cols;
  t->pos = save;
  return yes;
}

int cd_fcFileRead(const char *path, cdContactProblem *out, char *err, size_t errlen) {
  cdText t;
  cdTrip A = {0}, H = {0};
  double *q = NULL, *w = NULL, *mu = NULL;
  int d = 0, nc = 0, rc;
  memset(out, 0, sizeof *out);
  if ((rc = textLoad(&t, path, err, errlen))) goto done;
  if ((rc = textInt(&t, "dimension d", &d)) || (rc = textInt(&t, "number of contacts", &nc))) goto done;
  if ((d != 2 && d != 3) || nc < 0 || nc > INT_MAX / 3) {
    rc = textFail(&t, "d = %d, nc = %d: expected d 2 or 3 and nc >= 0", d, nc);
    goto done;
  }
  int m = d * nc;
  if ((rc = readMatrix(&t, "storage type of the first matrix", &A))) goto done;
  if (looksLikeMatrix(&t, A.rows, m)) {
    /* global: M, H, f, w, mu */
    if (A.rows != A.cols) {
      rc = textFail(&t, "M is %dx%d, not square", A.rows, A.cols);
      goto done;
    }
    if ((rc = readMatrix(&t, "storage type of H", &H)) || (rc = textDoubles(&t, "f", A.rows, &q)) ||
        (rc = textDoubles(&t, "w", m, &w)) || (rc = textDoubles(&t, "mu", nc, &mu)))
      goto done;
    rc = problemCondense(&t.x, d, nc, &A, &H, q, w, mu, out);
  } else {
    /* local: W, q, mu */
    if (A.rows != m || A.cols != m) {
      rc = textFail(&t, "W is %dx%d, expected %dx%d (d nc) for a local problem", A.rows, A.cols, m, m);
      goto done;
    }
    if ((rc = textDoubles(&t, "q", m, &q)) || (rc = textDoubles(&t, "mu", nc, &mu))) goto done;
    rc = problemBuild(&t.x, d, nc, &A, q, mu, out);
  }
done:
  tripFree(&A);
  tripFree(&H);
  cd_free(q);
  cd_free(w);
  cd_free(mu);
  cd_free(t.buf);
  return rc;
}

/* ---- FCLIB HDF5 ---- */

/* a dataset of n values of memtype (elsize bytes each) into a fresh array */
static int h5Array(const cdPeerCtx *x, hid_t g, const char *name, hid_t memtype, size_t elsize, void **out,
                   size_t *n) {
  *out = NULL;
  *n = 0;
  if (H5Lexists(g, name, H5P_DEFAULT) <= 0) return ctxFail(x, CD_FILE_ERR_INPUT, "dataset %s missing", name);
  hid_t ds = H5Dopen2(g, name, H5P_DEFAULT);
  if (ds < 0) return ctxFail(x, CD_FILE_ERR_INPUT, "cannot open dataset %s", name);
  hid_t sp = H5Dget_space(ds);
  hssize_t np = sp >= 0 ? H5Sget_simple_extent_npoints(sp) : -1;
  int rc = 0;
  if (np < 0) {
    rc = ctxFail(x, CD_FILE_ERR_INPUT, "cannot size dataset %s", name);
  } else if (!(*out = cd_malloc(((size_t)np + 1) * elsize))) {
    rc = ctxNomem(x);
  } else if (np > 0 && H5Dread(ds, memtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, *out) < 0) {
    rc = ctxFail(x, CD_FILE_ERR_INPUT, "cannot read dataset %s", name);
  }
  if (sp >= 0) H5Sclose(sp);
  H5Dclose(ds);
  if (rc) {
    cd_free(*out);
    *out = NULL;
  } else {
    *n = (size_t)np;
  }
  return rc;
}

static int h5Int(const cdPeerCtx *x, hid_t g, const char *name, int *v) {
  void *a;
  size_t n;
  int rc = h5Array(x, g, name, H5T_NATIVE_INT, sizeof(int), &a, &n);
  if (rc) return rc;
  if (n != 1) rc = ctxFail(x, CD_FILE_ERR_INPUT, "dataset %s has %zu values, expected 1", name, n);
  else *v = *(int *)a;
  cd_free(a);
  return rc;
}

/* a vector dataset of exactly n doubles */
static int h5Vector(const cdPeerCtx *x, hid_t g, const char *name, int n, double **out) {
  void *a;
  size_t got;
  int rc = h5Array(x, g, name, H5T_NATIVE_DOUBLE, sizeof(double), &a, &got);
  if (rc) return rc;
  if (got != (size_t)n) {
    cd_free(a);
    return ctxFail(x, CD_FILE_ERR_INPUT, "%s has %zu values, expected %d", name, got, n);
  }
  *out = a;
  return 0;
}

/* a FCLIB matrix group (README §2): nz -1 CSC, -2 CSR, >= 0 triplet (i rows, p columns) */
static int h5Matrix(const cdPeerCtx *x, hid_t parent, const char *name, cdTrip *m) {
  memset(m, 0, sizeof *m);
  if (H5Lexists(parent, name, H5P_DEFAULT) <= 0) return ctxFail(x, CD_FILE_ERR_INPUT, "matrix %s missing", name);
  hid_t g = H5Gopen2(parent, name, H5P_DEFAULT);
  if (g < 0) return ctxFail(x, CD_FILE_ERR_INPUT, "cannot open matrix group %s", name);
  int nz = 0, nzmax = 0, rc;
  void *pa = NULL, *ia = NULL, *xa = NULL;
  size_t np = 0, ni = 0, nx = 0;
  if ((rc = h5Int(x, g, "m", &m->rows)) || (rc = h5Int(x, g, "n", &m->cols)) || (rc = h5Int(x, g, "nz", &nz)) ||
      (rc = h5Int(x, g, "nzmax", &nzmax)) || (rc = h5Array(x, g, "p", H5T_NATIVE_INT, sizeof(int), &pa, &np)) ||
      (rc = h5Array(x, g, "i", H5T_NATIVE_INT, sizeof(int), &ia, &ni)) ||
      (rc = h5Array(x, g, "x", H5T_NATIVE_DOUBLE, sizeof(double), &xa, &nx)))
    goto done;
  const int *p = pa, *ix = ia;
  const double *v = xa;
  if (m->rows < 0 || m->cols < 0) {
    rc = ctxFail(x, CD_FILE_ERR_INPUT, "matrix %s has size %dx%d", name, m->rows, m->cols);
    goto done;
  }
  if (nz >= 0) {
    if (np < (size_t)nz || ni < (size_t)nz || nx < (size_t)nz) {
      rc = ctxFail(x, CD_FILE_ERR_INPUT, "matrix %s: triplet arrays shorter than nz = %d", name, nz);
      goto done;
    }
    for (int k = 0; k < nz; k++) {
      if (ix[k] < 0 || ix[k] >= m->rows || p[k] < 0 || p[k] >= m->cols) {
        rc = ctxFail(x, CD_FILE_ERR_INPUT, "matrix %s: entry (%d, %d) outside %dx%d", name, ix[k], p[k], m->rows,
                     m->cols);
        goto done;
      }
      if (tripPush(m, ix[k], p[k], v[k])) {
        rc = ctxNomem(x);
        goto done;
      }
    }
  } else if (nz == -1 || nz == -2) {
    int csr = nz == -2, nouter = csr ? m->rows : m->cols, ninner = csr ? m->cols : m->rows;
    if (np < (size_t)nouter + 1 || p[0] != 0) {
      rc = ctxFail(x, CD_FILE_ERR_INPUT, "matrix %s: pointer array malformed", name);
      goto done;
    }
    for (int o = 0; o < nouter; o++) {
      if (p[o + 1] < p[o] || (size_t)p[o + 1] > ni || (size_t)p[o + 1] > nx) {
        rc = ctxFail(x, CD_FILE_ERR_INPUT, "matrix %s: pointer array malformed at %d", name, o);
        goto done;
      }
      for (int k = p[o]; k < p[o + 1]; k++) {
        if (ix[k] < 0 || ix[k] >= ninner) {
          rc = ctxFail(x, CD_FILE_ERR_INPUT, "matrix %s: index %d out of range", name, ix[k]);
          goto done;
        }
        if (tripPush(m, csr ? o : ix[k], csr ? ix[k] : o, v[k])) {
          rc = ctxNomem(x);
          goto done;
        }
      }
    }
  } else {
    rc = ctxFail(x, CD_FILE_ERR_INPUT, "matrix %s: nz = %d not supported", name, nz);
  }
done:
  cd_free(pa);
  cd_free(ia);
  cd_free(xa);
  H5Gclose(g);
  if (rc) tripFree(m);
  return rc;
}

static int fclibLocal(const cdPeerCtx *x, hid_t g, cdContactProblem *out) {
  cdTrip W = {0};
  double *q = NULL, *mu = NULL;
  int d = 0, rc;
  if ((rc = h5Int(x, g, "spacedim", &d)) || (rc = h5Matrix(x, g, "W", &W))) goto done;
  if ((d != 2 && d != 3) || W.rows != W.cols || W.rows % d != 0) {
    rc = ctxFail(x, CD_FILE_ERR_INPUT, "spacedim %d with W %dx%d", d, W.rows, W.cols);
    goto done;
  }
  int nc = W.rows / d;
  if ((rc = h5Vector(x, g, "vectors/q", W.rows, &q)) || (rc = h5Vector(x, g, "vectors/mu", nc, &mu))) goto done;
  rc = problemBuild(x, d, nc, &W, q, mu, out);
done:
  tripFree(&W);
  cd_free(q);
  cd_free(mu);
  return rc;
}

static int fclibGlobal(const cdPeerCtx *x, hid_t g, cdContactProblem *out) {
  cdTrip M = {0}, H = {0};
  double *f = NULL, *w = NULL, *mu = NULL;
  int d = 0, rc;
  if ((rc = h5Int(x, g, "spacedim", &d)) || (rc = h5Matrix(x, g, "M", &M)) || (rc = h5Matrix(x, g, "H", &H))) goto done;
  if ((d != 2 && d != 3) || M.rows != M.cols || H.rows != M.rows || H.cols % d != 0) {
    rc = ctxFail(x, CD_FILE_ERR_INPUT, "spacedim %d with M %dx%d and H %dx%d", d, M.rows, M.cols, H.rows, H.cols);
    goto done;
  }
  int nc = H.cols / d;
  if ((rc = h5Vector(x, g, "vectors/f", M.rows, &f)) || (rc = h5Vector(x, g, "vectors/w", H.cols, &w)) ||
      (rc = h5Vector(x, g, "vectors/mu", nc, &mu)))
    goto done;
  rc = problemCondense(x, d, nc, &M, &H, f, w, mu, out);
done:
  tripFree(&M);
  tripFree(&H);
  cd_free(f);
  cd_free(w);
  cd_free(mu);
  return rc;
}

int cd_fclibFileRead(const char *path, cdContactProblem *out, char *err, size_t errlen) {
  cdPeerCtx x = {path, err, errlen};
  memset(out, 0, sizeof *out);
  /* HDF5 prints a stack for every failed call by default; failures come back as messages
   * here, so printing is off while reading and restored afterwards */
  H5E_auto2_t oldFunc = NULL;
  void *oldData = NULL;
  H5Eget_auto2(H5E_DEFAULT, &oldFunc, &oldData);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  int rc;
  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f < 0) {
    rc = ctxFail(&x, CD_FILE_ERR_INPUT, "cannot open as HDF5 (missing, truncated or not HDF5)");
  } else {
    if (H5Lexists(f, "fclib_local", H5P_DEFAULT) > 0) {
      hid_t g = H5Gopen2(f, "fclib_local", H5P_DEFAULT);
      rc = g < 0 ? ctxFail(&x, CD_FILE_ERR_INPUT, "cannot open /fclib_local") : fclibLocal(&x, g, out);
      if (g >= 0) H5Gclose(g);
    } else if (H5Lexists(f, "fclib_global", H5P_DEFAULT) > 0) {
      hid_t g = H5Gopen2(f, "fclib_global", H5P_DEFAULT);
      rc = g < 0 ? ctxFail(&x, CD_FILE_ERR_INPUT, "cannot open /fclib_global") : fclibGlobal(&x, g, out);
      if (g >= 0) H5Gclose(g);
    } else if (H5Lexists(f, "fclib_global_rolling", H5P_DEFAULT) > 0) {
      rc = ctxFail(&x, CD_FILE_ERR_INPUT, "rolling friction problem: not supported");
    } else {
      rc = ctxFail(&x, CD_FILE_ERR_INPUT, "no /fclib_local or /fclib_global group");
    }
    H5Fclose(f);
  }
  H5Eset_auto2(H5E_DEFAULT, oldFunc, oldData);
  if (rc) cd_contactProblemFree(out);
  return rc;
}

int cd_frictionFileRead(const char *path, cdContactProblem *out, char *err, size_t errlen) {
  size_t l = strlen(path);
  return l > 5 && !strcmp(path + l - 5, ".hdf5") ? cd_fclibFileRead(path, out, err, errlen)
                                                 : cd_fcFileRead(path, out, err, errlen);
}
