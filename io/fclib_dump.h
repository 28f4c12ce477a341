/* fclib_dump.h: a step's contact problem as an FCLIB file (--dump-problems DIR), in FCLIB 3's
 * layout written with plain HDF5 calls (FCLIB 3, Acary et al., "FCLIB: a collection of discrete 3D frictional
 * contact problems", JOTA 2014).
 *
 * What is written: FCLIB's local problem /fclib_local, the form every cdsim impulse solver is
 * handed (problem.h), bit for bit:
 *     W = G = J M^-1 J^T (3 ncon square; CSC, nz = -1, every entry of G's stored 3x3 blocks),
 *     q = g = J v_f + (phi/dt) e_N (m/s),  mu,  spacedim 3,
 * components per contact (normal, t1, t2), so that u = W r + q is the contact velocity c̄ and
 * FCLIB's problem û = u + (mu ||u_T||, 0, 0), C* ∋ û ⟂ r ∈ C is the exact Coulomb problem of
 * ncp.h. (The global form M, H = J^T, f = M v_f, w would need M, whose per-body inverse is what
 * the core keeps: inverting it back would not give the solvers' problem exactly.) /solution
 * holds r = the impulses the model computed (N s) and u = G r + q, the velocity they give.
 * /fclib_local/info says which model and solver ran and what r solves: for ncp this problem;
 * for ccp the CCP without the De Saxcé term (so u_N = mu ||u_T|| where it slides); for lcp the
 * Anitescu-Hart LCP with a polyhedral cone. The penalty model poses no such problem (it
 * computes forces from the gaps, substep by substep): main.c refuses --dump-problems with it.
 *
 * Written with HDF5 directly, not through libfclib: libfclib exits the process when an HDF5
 * call fails (a full disk would lose the run), refuses to overwrite a problem, and links the
 * shared HDF5 with its libcurl, which the program leaves out (Makefile: static HDF5, ~30 ms of
 * start-up a run). The tests read every dumped file back with libfclib's own reader and merit
 * function (tests/test_ncp_fclib.c), so the layout is checked against FCLIB's library. The
 * directory is checked for writing before the run (cd_fclibDumpPrepare); a failed write
 * removes its file and comes back as one line in err.
 */
#ifndef CD_FCLIB_DUMP_H
#define CD_FCLIB_DUMP_H

#include <stddef.h>

#include "problem.h"

/* what the info group says about the problem and its solution */
typedef struct cdFclibInfo {
  const char *scene;  /* scene file */
  const char *model;  /* "lcp", "ccp", "ncp" */
  const char *solver; /* the solver in use */
  long step;          /* the step that solved it (1-based) */
  double time;        /* simulated time at the end of the step, s */
  double dt;          /* s */
  double residual;    /* the model's own residual of the solution (its /solver/residual) */
  int converged;      /* the model's solver met its tolerance */
} cdFclibInfo;

/* makes dir (one level) when missing and checks that files can be created in it (a name of at
 * most CD_FCLIB_DIR_MAX bytes, so that a step's path fits 2200 bytes); 0, or -1 with one line
 * in err */
#define CD_FCLIB_DIR_MAX 2048
int cd_fclibDumpPrepare(const char *dir, char *err, size_t errlen);
/* the file of step k in dir: DIR/step-00000012.hdf5 (8 digits, more when needed) */
void cd_fclibStepPath(const char *dir, long step, char *out, size_t n);
/* writes p (G built: cd_contactProblemDelassus) and its solution p->lambda to path, replacing
 * the file; 0, or -1 with one line in err (CD_ERR_NOMEM: out of memory) */
int cd_fclibWrite(const char *path, const cdContactProblem *p, const cdFclibInfo *info, char *err, size_t errlen);

#endif
