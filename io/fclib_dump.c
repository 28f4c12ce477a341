/* fclib_dump.c: a step's contact problem as an FCLIB local problem, through libfclib (what is
 * written, and why local, in fclib_dump.h). */
#include "fclib_dump.h"

#include <errno.h>
#include <fclib.h>
#include <hdf5.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
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

/* the directory part of path ("." when none) into out */
static void dirOf(const char *path, char *out, size_t n) {
  const char *slash = strrchr(path, '/');
  if (!slash)
    snprintf(out, n, ".");
  else if (slash == path)
    snprintf(out, n, "/");
  else
    snprintf(out, n, "%.*s", (int)(slash - path), path);
}

int cd_fclibWrite(const char *path, const cdContactProblem *p, const cdFclibInfo *info, char *err, size_t errlen) {
  const cdBlockMatrix *G = &p->G;
  int nc = p->ncon, n = 3 * nc, nnz = 9 * G->nnzb;
  if (nc < 1 || p->delassus_pending) {
    snprintf(err, errlen, "%s: no contact problem to write", path);
    return -1;
  }
  /* room for the file: W (an int and a double an entry, n + 1 pointers), q, mu, u, r, info */
  double bytes = 12.0 * nnz + 4.0 * (n + 1) + 8.0 * (3 * n + nc) + 65536.0;
  struct statvfs fs;
  char dir[4096];
  dirOf(path, dir, sizeof dir);
  if (statvfs(dir, &fs) == 0 && (double)fs.f_bavail * (double)fs.f_frsize < 2.0 * bytes + 1048576.0) {
    snprintf(err, errlen, "%s: not enough free space for the problem (%.0f bytes)", path, bytes);
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
  cd_blockMatrixMul(G, r, u);
  for (int k = 0; k < n; k++) u[k] += p->g[k];

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
  struct fclib_info fi = {title, description, math_info};
  struct fclib_matrix W = {nnz, n, n, colp, rowi, x, -1, NULL};
  struct fclib_local loc = {&W, NULL, NULL, p->mu, p->g, NULL, 3, &fi};
  struct fclib_solution sol = {NULL, u, r, NULL};
  /* libfclib refuses to write into a file that holds a problem; and it reports its own
   * failures on stderr: HDF5's error stack printing is off while it runs */
  if (unlink(path) != 0 && errno != ENOENT) {
    snprintf(err, errlen, "%s: cannot replace the file (%s)", path, strerror(errno));
    rc = -1;
    goto done;
  }
  H5E_auto2_t oldFunc = NULL;
  void *oldData = NULL;
  H5Eget_auto2(H5E_DEFAULT, &oldFunc, &oldData);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  int ok = fclib_write_local(&loc, path) && fclib_write_solution(&sol, path);
  H5Eset_auto2(H5E_DEFAULT, oldFunc, oldData);
  if (!ok) {
    snprintf(err, errlen, "%s: libfclib could not write the problem", path);
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
