/* lcp_newton.h: the Anitescu-Hart LCP (layout in lcp.h) by active sets: each contact's mode
 * turns its complementarity rows into linear equations, the whole active set is solved by a
 * sparse direct factorization (CHOLMOD where it is symmetric, an LDU with diagonal pivots
 * where sliding friction makes it unsymmetric, KLU where those pivots fail; through the bodies,
 * by KLU, where that system is the smaller), and the modes that the solution violates change, the largest
 * violations first. lcp_newton.c has the math. */
#ifndef CD_LCP_NEWTON_H
#define CD_LCP_NEWTON_H

#include "problem.h"

typedef struct cdLcpNewton cdLcpNewton; /* the factorizations and workspace, kept between steps */

typedef struct cdLcpNewtonOptions {
  double tolerance;   /* stop when cd_lcpResidual <= tolerance; 0: 1e-8 */
  int max_iterations; /* active sets solved at most; 0: CD_LCP_NEWTON_ITERATIONS */
  double lu_flops_max; /* > 0: stop (stats->costly) at an unsymmetric active set whose LU would
                          take more than this many flops an unknown (estimated from its order's
                          symbolic analysis, before the factorization); 0: no bound */
  double ldu_tol;      /* the threshold of the LDU's diagonal pivots (sparse_ldu.h): an unsymmetric K
                          whose LDU has a multiplier above 1 / ldu_tol is factored by KLU with
                          partial pivoting instead (stats->lu_fallbacks); in (0, 1], 0: 1e-3 */
  int form;            /* the system each active set factors: CD_LCP_NEWTON_FORM_AUTO (0: the body form
                          where it is the smaller, lcp_newton.c), _CONTACT (K always) or _BODY (the
                          body form wherever the problem has its velocity-space form) */
  int local_modes;     /* 1: a violated contact takes the mode of its own block LCP with the
                          others' impulses fixed (cd_bgsBlockSolve, a Gauss-Seidel step), and
                          the mode-change rule of its largest violation only where that is its
                          present mode; 0: that rule alone (lcp_newton.c: nextMode, localMode) */
  int remember;        /* 1: the active sets solved by the calls with remember since the last
                          cd_lcpNewtonForget count as solved (a try that meets one takes it as no
                          better; the tries of one step, lcp_bgs.c); 0: only this call's */
  int escape;          /* 1: a call whose first active set was solved before (remember) solves it
                          again and then the single changes of its violators that lead to sets
                          not solved yet, one at a time, up to max_iterations +
                          CD_LCP_NEWTON_ESCAPE_SETS active sets, and the escapes at most 24
                          between two cd_lcpNewtonForget (lcp_newton.c, escapeTry: the tries
                          inside bgs); 0: such a call solves nothing */
  cdContactProblem *delassus; /* the problem itself when its G may be still unbuilt
                                 (p->delassus_pending): built here the first time a system in
                                 K's form needs it (the body form and the products need none);
                                 NULL: G is built */
} cdLcpNewtonOptions;

enum { CD_LCP_NEWTON_FORM_AUTO = 0, CD_LCP_NEWTON_FORM_CONTACT = 1, CD_LCP_NEWTON_FORM_BODY = 2 };

/* the active sets a solve tries at most by default: a warm-started step needs one or two,
 * a cold pile or a pyramid settling a handful; one that needs more is cycling */
#define CD_LCP_NEWTON_ITERATIONS 20
/* the active sets an escape (cdLcpNewtonOptions' escape) may solve beyond max_iterations */
#define CD_LCP_NEWTON_ESCAPE_SETS 8

typedef struct cdLcpNewtonStats {
  int iterations;     /* active sets solved (each: one numeric factorization, its solves, one check) */
  int factorizations; /* numeric factorizations (= iterations, less the ones that failed to start) */
  int analyses;       /* symbolic analyses: only when the pattern changed */
  int kept_orders;    /* analyses in a kept order of the unknowns (no AMD of their own) */
  int solves;         /* triangular solves, iterative refinement included */
  int products;       /* products with G (the checks) and with the active-set matrix (refinement) */
  int mode_changes;   /* contacts whose mode changed, summed over the iterations */
  int symmetric;      /* iterations whose system was symmetric (CHOLMOD), the rest KLU */
  int body;           /* factorizations of the body form (H, through the bodies; KLU) */
  int lu_fallbacks;   /* unsymmetric K factored by KLU because a diagonal pivot of its LDU
                         failed the threshold test (lcp_newton.c, LDU_TOL) */
  double residual;    /* cd_lcpResidual of the returned z */
  int converged;      /* residual <= tolerance */
  int costly;         /* 1: stopped at an active set over lu_flops_max (not converged) */
} cdLcpNewtonStats;

cdLcpNewton *cd_lcpNewtonMake(void); /* NULL: no memory */
void cd_lcpNewtonForget(cdLcpNewton *s); /* a new problem: no active set solved yet (remember) */
void cd_lcpNewtonFree(cdLcpNewton *s);

/* solves the LCP of p (G built: cd_contactProblemDelassus, or opt->delassus given) with m directions D for z
 * (cd_lcpSize(ncon, m)): in, the warm start, from which the first modes are read; out, the
 * iterate of smallest residual. CD_OK, CD_ERR_NOMEM or CD_ERR_NUMERIC (a factorization
 * library failed for another reason than a singular matrix). */
int cd_lcpNewtonSolve(cdLcpNewton *s, const cdContactProblem *p, int m, const double *D, double *z,
                      const cdLcpNewtonOptions *opt, cdLcpNewtonStats *stats);

#endif
