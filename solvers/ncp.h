/* ncp.h: the exact Coulomb model (--model ncp, the problem that opens seed 001) and its
 * solvers, for the backend table, the tests and the FCLIB tools.
 *
 * Problem, on a cdContactProblem p (problem.h: G, g, mu, warm start lambda), per contact i in
 * its frame (normal, t1, t2):
 *     K_mu ∋ lambda_i ⟂ ĉ_i ∈ K*_mu,   ĉ_i = c̄_i + (mu_i ||c̄_T,i||, 0, 0),   c̄ = G lambda + g,
 * De Saxcé's form of Coulomb's law (the bipotential): a loaded contact either sticks
 * (c̄_i = 0, lambda_i ∈ K) or slides with c̄_N = 0 and the friction opposite to the slip at the
 * cone's edge (lambda_T = -mu lambda_N c̄_T / ||c̄_T||), and a free one has lambda_i = 0 and
 * c̄_N >= 0. Unlike the CCP (ccp.h, the same problem without the mu ||c̄_T|| term) nothing
 * lifts a sliding contact: c̄_N = 0, not mu ||c̄_T||. This is FCLIB's local problem with W = G
 * and q = g (Acary, Cadoux, Lemaréchal & Malick 2011; Acary, Brémond & Huber 2018).
 *
 * What is and is not guaranteed (seed 001: the problem is non-convex):
 *  - existence: a solution exists for every mu >= 0 when some velocity separates every contact
 *    at once (J v + phi/dt e_N in the interior of K*: Acary, Cadoux, Lemaréchal & Malick 2011,
 *    by Brouwer's theorem on their fixed-point map), even when G is singular (a cube's four
 *    corners); bodies resting on the ground or on each other can always be moved apart, so
 *    every step of the scenes qualifies; a peer problem read from a file need not;
 *  - uniqueness: only for small mu (relative to the coupling of G's normal and tangential
 *    parts); with larger mu several impulses can be exact answers, and which one a solver
 *    returns depends on the solver and the warm start;
 *  - convergence: none of the solvers is proved to converge (no merit function decreases
 *    along their iterates). Each stops at the tolerance on the residual below or at its
 *    iteration limit, returns the best iterate it met, and reports converged = 0 when the
 *    tolerance was not met: the run loop marks such a step in /solver/converged, counts it in
 *    /solver/warn_nonconverged and says so once on stderr (src/run.c).
 *
 * The residual (the natural map on ĉ, in the dimensionless form of cone.h): with the impulses
 * taken as velocities l_i = lambda_i / meff_i (problem.h),
 *     r_i = || l_i - Proj_K(l_i - ĉ_i) ||,     residual = max_i r_i / vscale,
 * zero exactly at a solution (Proj_K is positively homogeneous), relative to vscale = ||g||_inf
 * and unchanged when every mass is scaled: the CCP's residual with ĉ in place of c̄.
 *
 * Solvers (option --solver; each file says what one iteration is):
 *   nsgs       nonsmooth Gauss-Seidel over contacts with an exact one-contact solver
 *              (ncp_nsgs.c, ncp_local.c), Siconos's fc3d NSGS with an enumerative local solver;
 *   fp-apgd, fp-pgs, fp-ipm
 *              the fixed point over convex CCPs (ncp_fp.c): each CCP is p with g shifted by
 *              (mu_i ||c̄_T,i||, 0, 0) from the previous iterate, solved by the CCP solver named;
 *   nsgs+fp-apgd (the default; ncp.c) nsgs until it converges or stalls (its best residual not
 *              halved in 256 sweeps), then fp-apgd from its best iterate (counted as a fallback),
 *              itself stopped when its best residual has not halved in 20 CCP solves, then
 *              nsgs again from there with the sweeps the first stage left.
 * Defaults (tolerance 0 / max_iterations 0 take these): tolerance 1e-8; nsgs 2000 sweeps, the
 * fixed point 100 CCP solves; the hybrid's max_iterations bounds its nsgs sweeps.
 */
#ifndef CD_NCP_H
#define CD_NCP_H

#include <cholmod.h>

#include "backend.h"
#include "cone.h"
#include "problem.h"

#define CD_NCP_TOL 1e-8
#define CD_NCP_NSGS_MAXIT 2000
#define CD_NCP_FP_MAXIT 100
#define CD_NCP_NSGS_STALL 256 /* the hybrid's stall windows: nsgs sweeps, */
#define CD_NCP_FP_STALL 20     /* and CCP solves of the fixed point after it */

typedef struct cdNcpParams {
  double tolerance;   /* stop when the residual (above) is <= this */
  int max_iterations; /* nsgs: sweeps; fixed point: CCP solves (outer iterations) */
  int stall;          /* give up when the best residual has not halved over this many iterations
                         (a stall: the hybrid's nsgs then hands over to the fixed point); 0: never */
} cdNcpParams;

/* the residual of lambda (3 ncon) given c̄ = G lambda + g (3 ncon), and its parts (cone.h's
 * struct, with ĉ in place of c̄: natural, cone violation of lambda, dual-cone violation of ĉ,
 * complementarity |l^T ĉ|, scale); parts may be NULL. Returns the residual (INFINITY when an
 * input is not finite). */
double cd_ncpResidual(const cdContactProblem *p, const double *lambda, const double *cbar, cdConeResidual *parts);
/* the same, computing c̄ into work (3 ncon) first */
double cd_ncpResidualOf(const cdContactProblem *p, const double *lambda, double *work, cdConeResidual *parts);

/* the one-contact problem (ncp_local.c): given its 3x3 Delassus block W (row-major), the rest
 * b of its contact velocity (c̄ = W x + b) and mu, an exact solution x (3), preferring the one
 * nearest the start value x holds on entry. Returns 0, or 1 when no exact solution was found
 * (x then holds the best approximation by the one-contact residual). */
int cd_ncpLocalSolve(const double W[9], const double b[3], double mu, double x[3]);

/* nonsmooth Gauss-Seidel (ncp_nsgs.c); p->G must be built (cd_contactProblemDelassus) */
int cd_ncpNsgsSolve(cdContactProblem *p, const cdNcpParams *par, cdSolveStats *stats);

/* the fixed point over shifted CCPs (ncp_fp.c), with the CCP solver inner (ccp.h);
 * cc: a started cholmod_common for the ipm inner solver (NULL for the others); outer, when
 * not NULL, receives the number of CCPs solved. p->G must be built. */
typedef enum { CD_NCP_INNER_APGD = 0, CD_NCP_INNER_PGS = 1, CD_NCP_INNER_IPM = 2 } cdNcpInner;
int cd_ncpFixedPointSolve(cdContactProblem *p, const cdNcpParams *par, cdNcpInner inner, cholmod_common *cc,
                          cdSolveStats *stats, int *outer);

/* the backend: solvers "nsgs", "fp-apgd", "fp-pgs", "fp-ipm" (default: ncp.c) */
extern const cdBackend cd_backendNcp;

#endif
