/* fclib_dump.c: a step's contact problem as an FCLIB local problem, written with plain HDF5
 * calls in the layout libfclib reads (what is written, and why local, in fclib_dump.h). */
#include "fclib_dump.h"

#include <errno.h>
#include <hdf5.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alloc.h"
#include "backend.h"

int cd_fclibDumpPrepare(const char *dir, char *err, size_t errlen) {
  struct stat st;
  if (strlen(dir) > CD_FCLIB_DIR_MAX) {
    snprintf(err, errlen, "--dump-problems: directory name longer than %d bytes", CD_FCLIB_DIR_MAX);
    return -1;
  }
  if (stat(dir, &st) != 0) {
    if (errno != ENOENT || mkdir(dir, 0777) != 0) {
      snprintf(err, errlen, "--dump-problems: cannot create directory %s (%s)", dir, strerror(errno));
      return -1;
    }
  } else if (!S_ISDIR(st.st_mode)) {
    snprintf(err, errlen, "--dump-problems: %s exists and is not a directory", dir);
    return -1;
  }
  if (access(dir, W_OK | X_OK) != 0) {
    snprintf(err, errlen, "--dump-problems: cannot write in %s (%s)", dir, strerror(errno));
    return -1;
  }
  return 0;
}

void cd_fclibStepPath(const char *dir, long step, char *out, size_t n) {
  snprintf(out, n, "%s/step-%08ld.hdf5", dir, step);
}

/* one dataset under g: n values of type t (a 1-d array, as libfclib writes even a scalar);
 * 0 or -1 */
static int putArray(hid_t g, const char *name, hid_t t, const void *v, hsize_t n) {
  hid_t sp = H5Screate_simple(1, &n, NULL);
  hid_t ds = sp < 0 ? -1 : H5Dcreate2(g, name, t, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  int ok = ds >= 0 && H5Dwrite(ds, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0;
  if (ds >= 0) H5Dclose(ds);
  if (sp >= 0) H5Sclose(sp);
  return ok ? 0 : -1;
}

static int putInt(hid_t g, const char *name, int v) { return putArray(g, name, H5T_NATIVE_INT, &v, 1); }

/* a scalar string dataset, null-terminated, of the string's own length */
static int putString(hid_t g, const char *name, const char *s) {
  hid_t t = H5Tcopy(H5T_C_S1), sp = H5Screate(H5S_SCALAR), ds = -1;
  int ok = t >= 0 && sp >= 0 && H5Tset_size(t, strlen(s) + 1) >= 0 && H5Tset_strpad(t, H5T_STR_NULLTERM) >= 0 &&
           (ds = H5Dcreate2(g, name, t, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0 &&
           H5Dwrite(ds, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, s) >= 0;
  if (ds >= 0) H5Dclose(ds);
  if (sp >= 0) H5Sclose(sp);
  if (t >= 0) H5Tclose(t);
  return ok ? 0 : -1;
}

/* a new group under parent, or -1 */
static hid_t newGroup(hid_t parent, const char *name) {
  return H5Gcreate2(parent, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
}

/* FCLIB 3's local problem and solution, as libfclib lays them out:
 *   /fclib_local/spacedim                      int[1]
 *   /fclib_local/W/{nzmax, m, n, nz}, p, i, x  CSC (nz = -1), int[1] / int[n+1] / int[nnz] / double[nnz]
 *   /fclib_local/vectors/{q, mu}               double[n], double[nc]
 *   /fclib_local/info/{title, description, math_info}  strings
 *   /solution/{u, r}                           double[n]
 * (V and R, absent here, are optional.) 0 or -1; the file is removed on failure */
static int writeLocal(const char *path, int n, int nnz, const int *colp, const int *rowi, const double *x,
                      const cdContactProblem *p, const double *u, const double *r, const char *title,
                      const char *description, const char *math_info) {
  hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (f < 0) return -1;
  hid_t loc = newGroup(f, "fclib_local"), W = -1, vec = -1, inf = -1, sol = -1;
  int bad = loc < 0 || putInt(loc, "spacedim", 3) || (W = newGroup(loc, "W")) < 0 || putInt(W, "nzmax", nnz) ||
            putInt(W, "m", n) || putInt(W, "n", n) || putInt(W, "nz", -1) ||
            putArray(W, "p", H5T_NATIVE_INT, colp, (hsize_t)n + 1) ||
            putArray(W, "i", H5T_NATIVE_INT, rowi, (hsize_t)nnz) ||
            putArray(W, "x", H5T_NATIVE_DOUBLE, x, (hsize_t)nnz) || (vec = newGroup(loc, "vectors")) < 0 ||
            putArray(vec, "q", H5T_NATIVE_DOUBLE, p->g, (hsize_t)n) ||
            putArray(vec, "mu", H5T_NATIVE_DOUBLE, p->mu, (hsize_t)p->ncon) || (inf = newGroup(loc, "info")) < 0 ||
            putString(inf, "title", title) || putString(inf, "description", description) ||
            putString(inf, "math_info", math_info) || (sol = newGroup(f, "solution")) < 0 ||
            putArray(sol, "u", H5T_NATIVE_DOUBLE, u, (hsize_t)n) || putArray(sol, "r", H5T_NATIVE_DOUBLE, r, (hsize_t)n);
  hid_t groups[] = {sol, inf, vec, W, loc};
  for (int k = 0; k < 5; k++)
    if (groups[k] >= 0) H5Gclose(groups[k]);
  bad |= H5Fclose(f) < 0;
  if (bad) unlink(path);
  return bad ? -1 : 0;
}

int cd_fclibWrite(const char *path, const cdContactProblem *p, const cdFclibInfo *info, char *err, size_t errlen) {
  const cdBlockMatrix *G = &p->G;
  int nc = p->ncon, n = 3 * nc, nnz = 9 * G->nnzb;
  if (nc < 1 || p->delassus_pending) {
    snprintf(err, errlen, "%s: no contact problem to write", path);
    return -1;
  }
  int *colp = cd_calloc((size_t)n + 1, sizeof(int)), *rowi = cd_malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof(int));
  int *fill = cd_calloc((size_t)n, sizeof(int));
  double *x = cd_malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof(double)), *u = cd_malloc((size_t)n * sizeof(double));
  double *r = cd_malloc((size_t)n * sizeof(double));
  int rc = CD_ERR_NOMEM;
  if (!colp || !rowi || !fill || !x || !u || !r) goto done;
  /* CSC of G: block (i, j) puts entry (r, c) at row 3i + r of column 3j + c; block rows in
   * order keep each column's rows ascending */
  for (int i = 0; i < nc; i++)
    for (int k = G->rowptr[i]; k < G->rowptr[i + 1]; k++)
      for (int c = 0; c < 3; c++) colp[3 * G->col[k] + c + 1] += 3;
  for (int j = 0; j < n; j++) colp[j + 1] += colp[j];
  for (int i = 0; i < nc; i++)
    for (int k = G->rowptr[i]; k < G->rowptr[i + 1]; k++)
      for (int c = 0; c < 3; c++) {
        int col = 3 * G->col[k] + c;
        for (int rr = 0; rr < 3; rr++) {
          int pos = colp[col] + fill[col]++;
          rowi[pos] = 3 * i + rr;
          x[pos] = G->val[9 * (size_t)k + 3 * rr + c];
        }
      }
  memcpy(r, p->lambda, (size_t)n * sizeof *r);
  cd_contactProblemVelocity(p, r, u);

  char title[512], description[2048];
  snprintf(title, sizeof title, "cdsim step %ld of %s (%s)", info->step, info->scene, info->model);
  snprintf(description, sizeof description,
           "cdsim %s: scene %s, model %s, solver %s, step %ld, t = %.9g s, dt = %.9g s, %d contacts. /solution "
           "holds the impulses r (N s) the model computed and u = W r + q; the model's own residual of r is "
           "%.3g (%s).",
           CDSIM_VERSION, info->scene, info->model, info->solver, info->step, info->time, info->dt, nc, info->residual,
           info->converged ? "converged" : "NOT converged");
  char math_info[] =
      "W = J M^-1 J^T (the Delassus operator; symmetric positive semidefinite, singular with redundant "
      "contacts), q = J v_f + (phi/dt) e_N with v_f the free velocity and phi the gap at the start of the step; "
      "components per contact (normal, t1, t2), r on body b of the contact. The exact Coulomb problem posed here "
      "is what cdsim's ncp model solves; the solution of the ccp model solves the CCP without the De Saxce term "
      "(u_N = mu |u_T| where it slides), that of the lcp model the Anitescu-Hart LCP with a polyhedral cone. "
      "A solution exists for every mu (some velocity separates every contact); uniqueness holds only for small mu.";
  /* HDF5's error stack printing is off while it writes: a failure is one line in err */
  H5E_auto2_t oldFunc = NULL;
  void *oldData = NULL;
  H5Eget_auto2(H5E_DEFAULT, &oldFunc, &oldData);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  errno = 0;
  int bad = writeLocal(path, n, nnz, colp, rowi, x, p, u, r, title, description, math_info);
  int e = errno;
  H5Eset_auto2(H5E_DEFAULT, oldFunc, oldData);
  if (bad) {
    snprintf(err, errlen, "%s: cannot write the problem (%s)", path, e ? strerror(e) : "HDF5 error");
    rc = -1;
    goto done;
  }
  rc = 0;
done:
  if (rc == CD_ERR_NOMEM) snprintf(err, errlen, "%s: out of memory writing the problem", path);
  cd_free(colp);
  cd_free(rowi);
  cd_free(fill);
  cd_free(x);
  cd_free(u);
  cd_free(r);
  return rc;
}
