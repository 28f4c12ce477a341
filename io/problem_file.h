/* problem_file.h: readers of LCP and friction-contact problem files: Siconos .dat text files
 * and FCLIB .hdf5 files (the formats are described in the peer collections' README), the
 * formats of the public collections the tests check the solvers on, and of the files
 * `cdsim --dump-problems` writes; `cdsim --solve-fclib` (src/solve_file.c) reads them with
 * these. FCLIB files are read with plain HDF5 calls, which fail with a message where
 * libfclib's reader exits the process. Every reader returns 0 on success; on
 * failure a nonzero code (CD_ERR_NOMEM when memory ran out, -4 for bad or unsupported input)
 * and one line in err naming the file and what is wrong, and *out left zeroed.
 *
 * Friction-contact problems come out as a cdContactProblem in FCLIB local form:
 *     u = W r + q,   G = W (3x3 blocks, contact i owns rows 3i..3i+2, order normal, t1, t2),
 *     g = q, mu as read, lambda zeroed.
 * Entries of W that land in the same 3x3 block are summed (so are duplicate triplets); every
 * diagonal block is present (a zero one is inserted where the file has none); entries that are
 * exactly zero in the file are not stored (a block of zeros only is left out).
 *
 * 2-D problems (d = 2, components normal, tangent) are embedded in 3-D with a decoupled
 * second tangent: W_t2t2 = 1, q_t2 = 0 and every other coupling of t2 is 0, so u_t2 = r_t2.
 * Any solution then has r_t2 = 0: sticking (u_T = 0) gives r_t2 = u_t2 = 0; sliding gives
 * r_T = -mu r_n u_T / |u_T|, so r_t2 (1 + mu r_n / |u_T|) = 0; separation gives r = 0. With
 * r_t2 = u_t2 = 0 the 3-D conditions are the 2-D ones, so (r_n, r_t1) solves the 2-D problem
 * and every 2-D solution is a 3-D one.
 *
 * Global problems (M v = H r + f, u = H^T v + w) are condensed to local form:
 *     W = H^T M^-1 H,   q = H^T M^-1 f + w,
 * with M^-1 applied by a CHOLMOD (supernodal LL^T) factor of the symmetric part (M + M^T) / 2.
 * M must be symmetric to |M - M^T|_1 <= 1e-5 |M|_1 (the sparse text storage keeps 6 digits;
 * the LMGC90 FEM files CubeH8 and ...00046 measure 1.5e-6) and positive definite; otherwise
 * the reader fails with "M is not symmetric" / "M is not positive definite".
 */
#ifndef CD_PROBLEM_FILE_H
#define CD_PROBLEM_FILE_H

#include <stddef.h>

#include "problem.h"

/* reader return code for malformed or unsupported input (CD_ERR_NOMEM for memory) */
#define CD_FILE_ERR_INPUT (-4)

/* a dense LCP: find z >= 0, w = M z + q >= 0, z.w = 0 */
typedef struct cdLcpFile {
  int n;     /* unknowns */
  double *M; /* (n x n) column-major: M(i,j) = M[i + n j] */
  double *q; /* (n) */
} cdLcpFile;

/* lcp/NAME.dat (Siconos LCP text file: n, a matrix block of any storage, q) */
int cd_lcpFileRead(const char *path, cdLcpFile *out, char *err, size_t errlen);
void cd_lcpFileFree(cdLcpFile *p);

/* fc-dat/NAME.dat, local (fc3d/fc2d) or global (gfc3d/gfc2d), told apart by content: the file
 * is global when its first matrix block is followed by another matrix block header (three
 * integer tokens: storage 0..2, rows equal to the first matrix's rows, cols = d nc);
 * otherwise it is local and the first matrix must be (d nc) x (d nc). Local q values are
 * doubles never laid out like such a header in any of the collection's files. */
int cd_fcFileRead(const char *path, cdContactProblem *out, char *err, size_t errlen);

/* fclib/NAME.hdf5: /fclib_local (W, vectors/q, vectors/mu, spacedim) or /fclib_global
 * (M, H, vectors/f, vectors/w, vectors/mu, spacedim). /fclib_global_rolling files give
 * CD_FILE_ERR_INPUT with "rolling friction problem: not supported" in err. */
int cd_fclibFileRead(const char *path, cdContactProblem *out, char *err, size_t errlen);

/* a friction-contact problem file of either kind: FCLIB when its name ends in .hdf5, else
 * fc-dat */
int cd_frictionFileRead(const char *path, cdContactProblem *out, char *err, size_t errlen);

#endif
