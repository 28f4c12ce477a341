/* lcp_newton.c: the Anitescu-Hart contact LCP by active sets and a sparse direct solve.
 *
 * Problem: 0 <= z perp A z + b >= 0 in z = (lambda_N, alpha, beta) (lcp.h, seed 000), with
 * contact velocities c = G lambda + g, lambda_i = (lambda_n, D alpha)_i.
 *
 * Modes. Every solution puts each contact i in one of four modes, and each mode turns the
 * contact's complementarity rows into r_i linear equations C_i c_i = 0 in r_i unknowns p_i
 * with lambda_i = B_i p_i (frame (n, t1, t2); d_k the friction directions):
 *   separated  r = 0  lambda = 0; beta = max(0, max_l -d_l . c_T)
 *   sticking   r = 3  C = B^T = Q (a turn about n, below): c = 0; alpha = lambda_T split
 *                     over the two directions of its sector (cd_lcpAlphaFromTangent), beta = 0
 *   vertex k   r = 1  C = n^T, B = n + mu d_k: c_n = 0, alpha_k = mu lambda_n,
 *                     beta = -d_k . c_T (the contact slides against d_k)
 *   edge k,k+1 r = 2  C = [n^T; (d_k - d_k+1)^T], B = [n + mu (d_k + d_k+1)/2, d_k - d_k+1]:
 *                     c_n = 0, c_T opposite the edge's bisector; p = (lambda_n, t) with
 *                     alpha_k,k+1 = mu lambda_n / 2 +- t, beta = -d_k . c_T
 * (with mu = 0 an active contact is vertex 0: B = C^T = n.) The modes' equations for all
 * contacts together are the Schur complement of the saddle system NUMERICS.md writes out,
 *     K p = -C g,   K = C G B  (block sparse with the pattern of G on the active contacts),
 * solved in units where impulses are velocities: rows and columns of contact i scaled by
 * sqrt(meff_i), so that K's normal diagonal is 1 whatever the masses (the residual's units,
 * problem.h). K is symmetric positive semidefinite when every active contact sticks (or has
 * mu = 0): an LDL' in a fill-reducing order (AMD on the active contacts' graph, each
 * contact's unknowns together), CHOLMOD's simplicial one bit for bit, its analysis made here
 * at the contacts' level (cholAnalyse), its factorization and solves sparse_ldlt.c's; sliding makes it unsymmetric: an LDU with the diagonal as pivots on K's
 * symmetric pattern (sparse_ldu.c: elimination tree and L's pattern once per pattern, an
 * up-looking numeric factorization whose inner loop updates both triangular solves with one
 * index), taken while every multiplier of L and U is at most 1 / LDU_TOL; where one is not,
 * KLU (sparse LU with partial pivoting; no BLAS and no large workspace, which made UMFPACK's
 * page faults and BLAS threads most of a step on the cube pyramid) factors that K in the same
 * order, counted (lu_fallbacks), without BTF (K of a pile is one block, or blocks AMD keeps
 * apart) and unscaled (K's rows are in velocity units already, its normal diagonal 1; partial
 * pivoting compares entries of one column, all in those units). Its order: AMD on K where no order is
 * kept, else the kept one (keptOrder): the contacts in the order of the last AMD on the same G
 * (the active sets of a step and of its tries inside bgs share G; each new active set has a
 * new pattern, of which only the rows' reaches before its first changed contact carry over,
 * sparse_ldu.c), active contacts new to it last, taken while its LU's flops an unknown (from
 * the LDU's analysis in that order) stay within ORDER_SLACK of that AMD's. Measured on the 1000-sphere pile (S2 10, its first 50
 * steps, callgrind, the same active sets, main thread): AMD, BTF and KLU's analysis 1.19G ->
 * 0.18G instructions, klu_scale 0.18G -> 0, KLU's factorizations 1.61G -> 1.67G (fill +4.5 %),
 * this method 4.81G -> 3.84G, the steps 9.44G -> 8.46G; ORDER_SLACK 1.5: the same, no bound
 * (a kept order always): 8.53G; its 150 steps (trajectories apart from roundoff at step 20,
 * growing to 5e-5 m/s by step 150; every step converged, residual at most 8.6e-12): the steps
 * 79.4G -> 69.3G, this method 44.6G -> 36.3G (KLU's analyses 8.62G -> 0.90G, scaling 1.34G ->
 * 0, factorizations 17.4G -> 18.0G), 1,688 of 1,981 analyses in a kept order. The
 * restriction of one AMD order of all of G's contacts (AMD once a step) was tried: 7.8 times
 * the flops and twice the fill of each active set's own AMD, as were AMD on the active
 * contacts' graph (+40 % flops, +11 % fill; and the set of active contacts changed in 89 % of
 * the analyses, so an order kept for it was rarely reused), and the body form on the pile
 * (26.1G instructions for the 50 steps against 10.0G: H's LU 5 times K's). Tried too, on its
 * 150 steps (callgrind, main thread: the steps 69.7G instructions, KLU's factorizations 9.80G,
 * 253 analyses by AMD and 868 in a kept order): the order carried to the next step's G by
 * contact (its two moving bodies and its rank among their contacts): that step's first active
 * set has many active contacts the last AMD's set lacked, all last, and its flops were a
 * median 14 times that AMD's (within ORDER_SLACK on 2 of 131 steps): 70.1G, 261 AMD; a new
 * contact placed just before its first neighbour in the order instead of last: fewer flops
 * (factorizations 9.49G) but more sets over the bound (469 AMD): 70.5G; just after its last
 * neighbour: 9.59G, 332 AMD, 69.9G; that, with the order grown by each kept set's new
 * contacts and carried to the next step: 9.62G, 336 AMD, 70.5G; ORDER_SLACK 1.1: 9.41G, 418
 * AMD (analyses 0.86G -> 1.41G), 69.7G. KLU's pivots were the
 * diagonal (27 off the diagonal in 1,124 factorizations; L and U as the analysis estimated in
 * all but 6), so its pivot tolerance (Common.tol) kept no fill; on the 253 patterns AMD
 * ordered, METIS's order took 21 % more flops and CHOLMOD's NESDIS 1.3 % fewer. KLU's kernel
 * did ~12-15 instructions a flop of its estimate (9.71G for 0.82 Gflop): its columns are short
 * (L ~10-15 entries a column), and its depth-first search and pivot search are per entry. Hence
 * the LDU, whose pivot test is KLU's threshold test at its Common.tol (1e-3) on the diagonal,
 * against the pivot's column and row. Measured on S2 10, its first 60 steps (callgrind, the
 * whole run, output every 400 steps): 308 factorizations of K, 1.36e8 flops: KLU's 2.02G
 * instructions (14.9 a flop; its given-order analyses 0.08G more) -> the LDU's 0.56G (4.2 a
 * flop) and its analyses 0.54G (308: an active set's pattern is new to nearly every
 * factorization, so the analysis costs about what the factorization does), solves 0.18G ->
 * 0.16G; this method 4.32G -> 3.30G, the run 11.84G -> 10.82G; one K fell back to KLU (AMD's
 * orders, by klu_analyze, 0.23G, as before; since by amd_2 itself, below). Its 400 steps: user CPU 11.49 s -> 10.61 s
 * (medians of five alternating pairs against main's binary),
 * 1,855 factorizations of K, the largest multiplier at most 10 in 1,696, 10-100 in 137,
 * 100-1000 in 16 and above 1000 in 6 (factored by KLU); every step converged (residual at most
 * 9.6e-9; main's 9.8e-9), trajectories apart from main's from step 21 (velocities 5e-16 m/s)
 * by roundoff growing tenfold every ~10 steps as the pile lands (largest velocity difference
 * 2e-8 m/s at step 100, 4e-5 at 150, 6e-2 at 200; positions 7e-7 m at 150, 0.1 m by 350: the
 * pile's spheres then roll differently). AMD's order is amd_2's on the matrix amd_order
 * builds from K (amdOrder: the same order and flops estimate as klu_analyze's, which ran AMD
 * for nothing else; KLU analyses K in that order at a fallback only): on S2 10's first 60
 * steps (callgrind, 71 fresh orders, each the same as amd_order's) 0.23G -> 0.12G (amd_valid,
 * amd_aat, amd_1's own work and KLU's symbolic object 0.125G -> K's copy without its
 * diagonal 0.016G; with assemble's change below the run 8.831G -> 8.711G, the same answers bit
 * for bit: h5same on S2 10, S3 20 and S4 10). Tried on the same 60 steps: the
 * analysis over contacts (the elimination tree and every row's reach over the active
 * contacts' graph, each contact's unknowns a chain; 71 of AMD's 305 orders split a contact's
 * unknowns and stayed scalar): expanded into the scalar analysis's arrays it cost more than
 * that analysis (0.56G for 234 against 0.53G for all 305); holding block arrays only, with a
 * factorization walking them in the scalar one's order (bit for bit), the analyses 0.53G ->
 * 0.49G but the factorizations 0.55G -> 0.60G, the run 8.714G -> 8.728G: the analysis's cost
 * is L's pattern and C's entries (O(nnz), O(lnz) stores, which blocks of 1-3 unknowns do not
 * shrink), not the tree walk, and so dropped (sparse_ldu.c). Tried too: the analysis made
 * for a frame of slots (the union of a G's active sets, 0-3 slots a contact) and reused by
 * every set that fits it, unused slots identity rows: on S2 10's first 60 steps LDU analyses
 * 279 -> 147, factorizations +8 % (L 5.9 % larger), the run -2.1 % in instructions; its
 * answers move by roundoff, and one of the ten piles (seed 9) then meets a step that does not
 * converge (main's analyses from step 200 of that trajectory fail it too): held back (branch
 * lcptrycost-frame; HISTORY.md). K is assembled only
 * to be analysed or factored (a vertex contact's row, C_i = n^T: the normal row of G B only;
 * the steps 8.46G -> 8.40G), an unsymmetric K a block column at a time (each block of G
 * once for the block column's unknowns, the same operations per entry: S2 10, 60 steps,
 * 0.362G -> 0.352G; two columns at once in SSE2 lanes, each lane's operations a column's:
 * 0.385G, dropped); its products (refinement) go through G: K x = S C G B S x, one
 * block product.
 * The body form. Where contacts share bodies densely (four corners a face, a cube on two or
 * four others: K's rows couple every contact of both bodies, ~70 entries a row on the 55-cube
 * pyramid) a regularised inverse (K + eps I)^-1 is applied through the bodies by the
 * Woodbury identity, factoring H = eps M + J^T B S^2 C J (6 unknowns a body, a 6x6 block per
 * pair of bodies an active contact joins) with KLU instead of K: taken where H has BODY_RATIO
 * times fewer entries than K (the pyramid: 330 unknowns and 8,460 entries against ~1,100 and
 * ~77,000; an LU of 15,000 entries, ~0.3 ms), with eps = REG_BODY (REG after a stall, below).
 * Everything else (modes, refinement on K, the kept factorization) is the same; see bodyForm
 * below.
 * Factorizations kept. The symbolic analysis is kept while the pattern holds (the same
 * unknowns a contact and the same block pattern of G), and with it the last numeric
 * factorization, of an earlier K: refinement on the current K starts with that one and goes
 * on with it while each solve takes REUSE_RATE off the residual of the mode equations until
 * they hold to REFINE_SHARE of the tolerance; otherwise K is factored anew. A resting stack's
 * K moves by roundoff from step to step, so its first factorization solves every later step
 * (the 20-cube stack: one factorization in 200 steps). That holds because a sticking
 * contact's unknowns are in its own frame turned about n by a quarter turn Q (stickFrame: the
 * tangent of t1, t2, -t1, -t2 most along a fixed world direction): cd_tangentFrame's t1 of a
 * near-axis normal turns by a quarter between steps on roundoff ties, which changed the
 * stack's K by 0.75 in its largest entries; in the turned frame, by 1e-14.
 * Which solution. Redundant contacts (four corners of a face, a stack) make K singular: the
 * impulses are not unique there, the velocities are. The factorization is of K + eps I
 * (eps = REG, dimensionless) and iterative refinement on K itself (until the mode equations
 * hold to REFINE_SHARE of the tolerance) converges on the range of K by a factor
 * eps / (sigma + eps) a solve and never moves p along K's null space. It starts from the
 * current impulses (the warm start's in the first active set, written in the new modes'
 * unknowns), so every answer is the active set's solution nearest them (sum_i ||dp_i||^2 /
 * meff_i least): a resting stack keeps its load distribution, and a mode change moves the
 * redundant impulses only as much as the new equations require (from zero, the least-norm
 * solution of each new active set redistributed the load of the whole 55-cube pyramid and
 * its modes never settled). Nearly redundant contacts (eigenvalues of K far below eps)
 * are moved by at most r / eps for a residual r there, which is left where it is below
 * the tolerance (solved to roundoff, a residual of 1e-9 m/s moved the impulses of a whole
 * row of the pyramid by their own size, and no mode of the next active set held). An
 * active set whose own violations are EARLY_RATIO times the residual of its equations, while
 * its solves converge (EARLY_RATE), is refined no further: its modes change next (the
 * 55-cube pyramid, S4 10, 200 steps: 107 -> 72 factorizations, its first step 18.4M ->
 * 17.4M instructions, its trajectory within 1e-12 m of the fully refined one; S2 10, 250
 * steps: 19,566 -> 16,998 products). A system
 * whose residual stays above the tolerance (modes that admit no solution) counts as an
 * active set no better than the best.
 * Check and mode changes. From p: lambda, then c = G lambda + g (one product), each contact's
 * z_i as above and its part of cd_lcpResidual. A contact that violates its mode's
 * inequalities (lambda_n < 0, lambda_T outside the polygon, a negative slip speed, slip
 * along a better direction, c_n < 0 while separated) takes the mode that its largest
 * violation points to (nextMode). Changing every violated mode at once cycles on coupled
 * contacts (one wrong change among twenty on the pyramid sends the residual from 3e-2 to
 * 0.5). The method keeps its best iterate: after a better one, all of its violators
 * change mode; at the first one that is no better, it ends with the best iterate, from
 * which its callers' sweeps go on (lcp.c's step and the tries inside bgs, lcp_bgs.c: every
 * caller has sweeps after it). It used to go back to the best iterate and change half as
 * many, largest violation first, down to the largest violator's change alone (block
 * principal pivoting's safeguard, Judice & Pires, as a backtracking over the number of
 * changes): traced on the 1000-sphere pile's first 130 steps (S2 10), 190 of the tries'
 * 733 active sets were such sets no better than the best, 131 of them after the try's first,
 * and 12 of those 131 improved on the best and 7 tries solved after one; the sweeps find
 * those modes for less. Ten piles of its kind (S2 10 and the generator's seeds 1-9, 400
 * steps each), with the tries' limit of 4 sets: 16,871 -> 14,653 sets, 614.2 -> 612.5
 * iterations a step summed; with the limit at 6 (CD_BGS_TRY_SETS: the tries that still
 * improve at their fourth set go on) 14,082 sets and 584.7 iterations, every step converged;
 * four more piles (seeds 10-13) 6,475 -> 5,643 sets, 235.8 -> 237.4 iterations; the 55-cube
 * pyramid (S4 10) 72 -> 70 factorizations (tests/bench/HISTORY.md). An active set already solved is not
 * solved again (modeHash: it counts as one no better): in this call, and with remember in
 * the calls since cd_lcpNewtonForget (the tries of one step from the sweeps' nearby
 * iterates land on the same sets: S2 10, step 82 solved the same eight sets in four tries;
 * without this memory, another step alternated between two iterates whose tries solved the
 * same twelve sets every ten sweeps). The violators that change are the neighbourhoods'
 * largest: one that shares a moving body with a larger violator (G's block pattern, when G is
 * built) keeps its mode until the next active set (neighbourhoodLeaders). A wrong mode moves
 * its neighbours' impulses in the active set's solution, so they violate theirs too, and
 * their changes are then wrong: on the 1000-sphere pile's landing (S2 10, step 82) a ground
 * contact pressed in the sweeps where it separates in the answer (its sphere wedged between
 * two neighbours, unloaded by the sweeps at ~2e-4 N s a sweep); the try's first active set
 * needed lambda_n = -0.28 there, its neighbours' three contacts violated theirs (0.14, 0.13,
 * 0.09 against 0.45), and changing all four sent those three sliding: four active sets went
 * 0.45 -> 2.5e-2 and the tries failed for 970 sweeps (997 iterations); with the rule the try
 * at 60 sweeps solves it (67 iterations). S2 10, 400 steps: iterations 36,473 -> 34,205, in
 * steps 51-100 (the landing) 11,501 -> 8,653, the slowest step 997 -> 817, user CPU 16.5 ->
 * 14.8 s (medians of five alternating pairs), every step converged; S3 20 and S4 10 bit for
 * bit the same. With local_modes (the tries inside bgs, lcp_bgs.c),
 * a violator first takes the mode of its own block LCP, the others' impulses fixed
 * (localMode: cd_bgsBlockSolve, one Gauss-Seidel step), and the rule above only where that is
 * its present mode: near the sweeps' iterate the rule's choice (the largest violation's)
 * sends coupled contacts back and forth (a thousand-sphere pile, S2 10, its first 120 steps:
 * 291 -> 160 iterations a step); from a warm start on the settling 55-cube pyramid the rule
 * alone takes fewer active sets (S4 10: 107 factorizations in 200 steps against 149), so the
 * warm start keeps it. The best iterate is returned.
 * The escape (escape, the tries inside bgs). A try whose first active set an earlier try of
 * the step solved did nothing (its changes lead to sets solved before): the sweeps stall at
 * 1e-5 .. 1e-4 with one or a few modes wrong, and every try from there starts from the same
 * remembered set (S2 10, step 279: the tries from 200 sweeps on, for 1,700 sweeps). Traced
 * there: the sweeps' modes were two changes from the answer, contact 1464 sticking at its
 * friction bound where it slides (a neighbourhood's leader, 8th of the set's 35 violators)
 * and contact 51 sliding where it separates (a follower, 15th; the sweeps unloaded it slowly,
 * lambda_n 7e-3 at the first try and 1e-3 at the last, and separated it at sweep ~1,900); from
 * the step's third try on only 51 was wrong. The set's exact solution was at 0.77 (the sweeps' iterate
 * 6e-5): its four largest violators are pressing contacts the wrong modes overload, whose
 * changes the backtracking takes and which lead away. Neither right change lowers the largest
 * violation alone (1464: 0.7657 -> 0.7657; 51 released: 0.615), and the rule's mode for 51 is
 * sticking (localMode), not separated. So such a try (escapeTry) solves that set again (refined
 * fully: an early stop may have left it unsolved with exactly the answer's modes), then from
 * its modes the single changes of its violators (ESCAPE_SCAN of them, leaders first, largest
 * first): every one released to separated first, then by the rule, then by the other rule
 * (nextMode where localMode's was taken), skipping those that lead to a set solved before
 * (free: the hash is known before solving), one at a time from the try's start, up to
 * max_iterations + CD_LCP_NEWTON_ESCAPE_SETS sets and ESCAPE_STEP_SETS a step (later tries go
 * on with the changes not yet solved). Five piles of S2 10's kind (S2 10 and the generator's
 * seeds 1, 2, 6, 8; 400 steps each): iterations 210,886 -> 179,909, factorizations 10,879 ->
 * 10,992, work (sweeps + 10 sets) 308,797 -> 278,837 (-9.7 %), every step converged; S2 10's
 * step 279 3,917 -> 229 iterations (its slowest now 673, 12.7x the median step against 73.9x);
 * the slowest step over the five 73.9x -> 70.6x the median step in iterations, 53.1x -> 49.9x
 * in work (seed 1's step 146, whose stuck sets are five changes from the answer; seed 8's step
 * 130: three, two at contacts that violate nothing). 184 escapes, 831 sets; 54 solved the
 * step's problem: 40 by the largest violator's release, 9 by its rule's change, 2 by its other
 * rule's, 3 further down (S2 10's 279: the 14th violator's release), none by the set solved
 * again alone. Measured (work over the five piles): the release last for each violator in
 * turn, no cap, 280,498 (step 279 852); without the release (the rule and the other rule)
 * 301,726, the rule alone 304,287; 4 / 16 extra sets a try 280,532 / 281,168; the base refined
 * with the early stop 281,232; a second level (the best single change's set as the next base
 * once every single change was solved) 279,232, the slowest steps no better; releases first
 * with a cap of 48 sets a step 279,337 (seed 1's step 146 solving 100 sets against 53 on main
 * and 76 capped at 24; with the release last and no cap, 173), a cap of 12: 282,281 (step 279
 * 3,929: its escape needs two tries). Dropped: the escape as the backtracking's continuation
 * (after its single change failed, the next violators' changes by the rule, followers
 * included; a remembered first set solved again and the backtracking from it), in every try or
 * only in those from a remembered set, with or without taking a set that leaves the largest
 * violation where it was but lowers the violations' sum: 311,179 .. 317,775, step 279 3,980 ..
 * 4,090 (a better set leads back into the leaders' changes, which wander among sets near
 * 7e-3). S3 20 and S4 10 bit for bit the same (no try of theirs starts from a remembered set).
 * Warm start: the first modes are read off the start z (the previous step's lambda, alpha
 * and beta, carried by key, or an iterate of bgs): a contact with lambda_n > 0 keeps the
 * mode its z shows, one with lambda_n = 0 is separated unless it closes or touches. A
 * resting stack then keeps its modes: one factorization and one check a step.
 * Stops at cd_lcpResidual <= TARGET_SHARE tolerance, at max_iterations, when the
 * backtracking's single change failed too or when no violated contact changes mode;
 * converged: the best iterate's residual <= tolerance; otherwise lcp.c goes on with bgs (counted).
 * References: Judice & Pires, "A block principal pivoting algorithm for large-scale strictly
 * monotone linear complementarity problems", Comp. & OR 21 (1994); Kostreva (1978);
 * NUMERICS.md, "The Anitescu-Hart LCP by active sets".
 */
#include "lcp_newton.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <amd.h>
#include <klu.h>

#include "alloc.h"
#include "backend.h"
#include "lcp.h"
#include "lcp_bgs.h"
#include "linalg.h"
#include "sparse_ldlt.h"
#include "sparse_ldu.h"
#include "vec3.h"

/* the regularisation of K (dimensionless: K's normal diagonal is 1). A solve moves the
 * impulses along a direction of K's eigenvalue sigma by r / (sigma + REG) for a residual r
 * of the mode equations there: directions far stiffer than REG are solved in a solve or two,
 * and the near-null ones of nearly redundant contacts (a settling pyramid's, sigma far below
 * 1e-9, where a residual of 1e-9 m/s asked the impulses of a whole row of cubes to move by
 * their own size) move by at most r / REG, and are left where they do not matter at the
 * tolerance */
#define REG 1e-6
/* the body form's regularisation while its refinement converges (bodyReg): on the 55-cube
 * pyramid, whose warm starts meet the tolerance on most steps and are refined from mode
 * residuals of 1e-11 .. 1e-9 m/s, near-null directions of nearly redundant contacts moved by
 * r / REG (1e-5 .. 1e-3 m/s) put friction impulses outside their polygons, and the modes
 * searched for the next active set failed on half the steps; at REG_BODY they move 300 times
 * less (S4 10, 200 steps: 387 -> 156 factorizations, 511 -> 299 iterations, at most 5 active
 * sets a step against 45). Directions softer than REG_BODY / 10 are refined too slowly (K of
 * the 20-cube stack, S3 20, factored at 3e-4 stalled on every step; its body form did not),
 * so a body-form solve that stalls is factored again at REG, and REG is kept from there on */
#define REG_BODY 3e-4
/* refinement solves at most per active set; they stop once the mode equations hold to
 * REFINE_SHARE of the tolerance (relative to ||g||_inf), or when a solve no longer takes a
 * tenth off their residual */
#define REFINE_MAX 20
#define REFINE_SHARE 1e-3
/* a factorization of an earlier K of the same pattern is used while each of its solves takes
 * at least three quarters off the residual of the mode equations and they reach REFINE_SHARE
 * of the tolerance; otherwise K is factored anew */
#define REUSE_RATE 0.25
/* the method goes on changing modes until cd_lcpResidual <= TARGET_SHARE of the tolerance
 * (an answer well inside it keeps the next step's warm start in its modes), and reports
 * convergence at the tolerance itself */
#define TARGET_SHARE 1e-2

/* an active set is better than the best iterate when its residual is below DECREASE times
 * the best one's (the pyramid's successful solves fall by 1.7 to 1e10 an active set; a
 * pile in flight whose modes the method does not find creeps down by a few percent) */
#define DECREASE 0.7
/* a refinement stops once the active set's own violations are this many times the residual
 * of its mode equations: the next modes are read off them, and further solves would move
 * them by less than a thousandth (the 55-cube pyramid's first step, S4 10: its cold active set
 * of sticking contacts, at 3e-2, was refined by five solves to 3e-13) */
#define EARLY_RATIO 1e3
/* after such a stop, a contact violates its mode when its residual is above EARLY_FLOOR times
 * the residual of the mode equations (below, it may be the refinement's) */
#define EARLY_FLOOR 10.0
/* ... and only while its solves take nine tenths off that residual each: equations that
 * admit no solution, whose refinement stalls, stay a failed active set */
#define EARLY_RATE 0.1
/* the active sets remembered (a ring), so that none is solved twice in a call, nor in the
 * calls with remember since the last cd_lcpNewtonForget: more than the active sets of the
 * tries of a step (lcp_bgs.c) */
#define SEEN_MAX 256
/* the escape (cdLcpNewtonOptions' escape, escapeTry): the violators whose single changes it
 * tries, at most, each by up to ESCAPE_ALTS modes, and the active sets the escapes solve at
 * most between two cd_lcpNewtonForget (a step; 24: two escapes, see the opening comment) */
#define ESCAPE_SCAN 32
#define ESCAPE_ALTS 3
#define ESCAPE_STEP_SETS 24

enum { MODE_SEPARATED = 0, MODE_STICK = 1, MODE_VERTEX = 2, MODE_EDGE = 3 };
static const int modeRows[4] = {0, 3, 1, 2};
#define LAY_NONE 0xff /* (layout: no mode) */

/* how an active set's system is solved: K by the LDU (KLU where its pivots fail), K by CHOLMOD
 * (symmetric), or K + REG I through the bodies (the body form, H by KLU) */
enum { SYS_LU = 0, SYS_CHOL = 1, SYS_BODY = 2 };

/* the body form is taken when K would have more than BODY_RATIO times the entries of H
 * (both counted from the block patterns: H's an upper bound, a block per moving body and two
 * per contact between two of them). Measured: the 55-cube pyramid (S4 10; four corner contacts
 * a face, 23 blocks a row of G) 3-4x, the 20-cube stack (S3 20) 1.3x, a 1000-sphere pile
 * (S2 10) below 1 */
#define BODY_RATIO 2.0

/* the LDU's diagonal pivots are taken while every multiplier of L and U is at most 1 / LDU_TOL
 * (sparse_ldu.c: KLU's threshold test of partial pivoting, at its default Common.tol), else K is
 * factored by KLU */
#define LDU_TOL 1e-3

/* a kept order of K's unknowns (keptOrder) is taken while its LU's flops an unknown are at most
 * this many times those of the last fresh AMD. With the LDU (S2 10, first 60 steps, callgrind):
 * 1.25: the method 3.30G, the run 10.82G; 1.5: 3.25G, 10.77G; 2: 3.25G, 10.76G (AMD 0.23G ->
 * 0.14G, the LDU 0.56G -> 0.59G); 3 (no bound in effect): 3.29G, 10.81G; kept at 1.25, the
 * differences being half a percent */
#define ORDER_SLACK 1.25

typedef struct cdViolator {
  double v; /* a contact's residual, m/s */
  int i;    /* the contact */
} cdViolator;

struct cdLcpNewton {
  /* the symmetric K's LDL' in a fill-reducing order P (sparse_ldlt.c), its layout made by
   * cholAnalyse at the contacts' level */
  cdSparseLdlt ldlt;
  int *pinv;          /* (pat_n) new index of each unknown under P */
  double *ldlt_y;     /* (pat_n) a right side under P (solve) */
  cdSparseLdu *ldu;   /* K's LDU with diagonal pivots (unsymmetric systems, sparse_ldu.c) */
  int lu_klu;         /* 1: K's factorization held is KLU's (the LDU's pivots failed) */
  double ldu_tol;     /* the LDU's pivot threshold (cdLcpNewtonOptions', LDU_TOL) */
  double est_flops;   /* the analysed LU's flops (KLU's estimate, the same sum for the LDU) */
  klu_common kc;
  klu_symbolic *ksym; /* KLU's analysis and factor: H (body form), and K where the LDU's pivots
                         fail (analysed in the LDU's order then) */
  klu_numeric *knum;
  /* the pattern the current analysis is of */
  int pat_n, pat_nnz, pat_sym; /* pat_sym: the system kind (SYS_*), -1 none */
  int *pat_p, *pat_i;
  /* what the pattern is of: the contacts' unknowns and G's block pattern (patternHeld) */
  int key_nc, key_nnzb;
  unsigned char *key_rows; /* (key_nc) */
  int *key_rowptr, *key_col;
  int *key_cbody;          /* (2 key_nc) the contacts' moving bodies, when key_body */
  int key_body;            /* 1: the key is the bodies (key_cbody), 0: G's block pattern */
  int numeric; /* 1: L or knum holds a factorization of some K of this pattern */
  double breg;  /* the body form's regularisation: REG_BODY, REG after a stall (REG_BODY) */
  double freg;  /* the regularisation of the factorization held (K + freg I) */
  int refactored; /* 1: knum was refactored with an earlier H's pivot order (factor) */
  /* per contact (ccap) */
  int ccap;
  unsigned char *mode;
  unsigned char *turn; /* the quarter turn of the sticking unknowns' tangent frame (stickFrame) */
  unsigned char *lay_mode; /* the mode B and C were made for in this call (layout), LAY_NONE: none */
  int *lay_kdir;           /* ... and the direction */
  int *kdir;    /* the vertex, or the edge's first direction */
  int *off;     /* first unknown of the contact */
  double *B;    /* (ccap x 9) 3 x r, column-major */
  double *C;    /* (ccap x 9) r x 3, row-major */
  double *sq;   /* sqrt(meff_i) */
  double *wi;   /* 1 / meff_i: the residual's units (cd_lcpContactResidualOf) */
  double *lam;  /* (3 ccap) */
  double *wl, *wu; /* (3 ccap) modeResidual's lambda(q) and G lambda (check takes them; wl and lam trade) */
  int wu_q;        /* 1: wl = lambda(s->q) and wu = G wl in the current modes (modeResidual's last
                      product), until check takes them */
  int chk_q;       /* 1: check's last answer (chk_res, and its z, u, lam, viol) is of s->q now */
  double chk_res;
  double *wb;      /* (wbcap) cd_lcpDelassusMul's scratch, NULL when it needs none */
  size_t wbcap;
  double *u;    /* (3 ccap) c = G lambda + g */
  double *viol; /* contact residuals (m/s) */
  int *cand;    /* the best iterate's violators, largest first */
  struct cdViolator *rank;
  /* per LCP variable (zcap) */
  size_t zcap;
  double *zbest;
  /* per unknown (ncap) */
  /* K's size from the bodies (bodyForm): per contact (ccap) */
  int *pgrp;       /* the group of contacts between the same two moving bodies, -1: one moving body */
  int pg_nc, pg_nb; /* pgrp is of pg_nc contacts on pg_nb bodies (-1: none) ... */
  int pg_ng;        /* ... in pg_ng groups */
  int *pg_cbody;    /* ... with these moving bodies (2 pg_nc): the tries of a step share them */
  double *gsum;    /* (pg_ng) unknowns of each group's active contacts */
  int *pg_scr;      /* (pg_scap) pairGroups' buckets */
  size_t pg_scap;
  int bcap;        /* bodies bsum holds */
  double *bsum;    /* (bcap) unknowns of each body's active contacts */
  int ncap;
  double *rhs, *q, *r, *dq;
  int *Kp;
  /* per entry (nzcap) */
  size_t nzcap;
  int *Ki;
  double *Kx;
  /* the last unsymmetric K assembled (assemble) and what it was of: the contacts' modes and
   * directions, the unknowns' offsets */
  int ka_valid;          /* 1: held (this call's; cd_lcpNewtonSolve drops it) */
  int ka_nc;
  size_t ka_ccap, ka_ncap;
  int *ka_off, *ka_Kp, *ka_kdir;
  double *ka_Kx;         /* (nzcap) its values (Kx's other buffer) */
  unsigned char *ka_mode, *ka_same;
  /* the LU's contact order kept (keepOrder) and what it is of: G's block pattern */
  int *corder;           /* (ord_na) contacts in elimination order */
  int ord_nc, ord_nnzb;  /* -1: none */
  int ord_na;
  double ord_flops;      /* the fresh AMD's estimated flops an unknown */
  int *ord_rowptr, *ord_col;
  int *oscr;             /* (2 ord_nc + unknowns) scratch */
  int *kperm;            /* (pat_n) the LU's order of K's unknowns (the LDU's, and KLU's given one) */
  size_t oscr_cap, ocol_cap, kperm_cap, kcol_cap; /* what oscr, ord_col, kperm and key_col hold (reserve) */
  int zb_m;
  double *zb;   /* (m + 2) one contact's z */
  /* the body form (SYS_BODY): H's block pattern and a body vector */
  size_t hcap;      /* bodies and block entries the arrays below hold */
  long long *hkey;  /* (2 ncon + nbody) block (column, row) keys, sorted */
  int *hptr;        /* (nbody + 1) first block of each block column */
  int *hrow;        /* (blocks) row body of each block, ascending in a column */
  double *hy;       /* (6 nbody) */
  unsigned char *hact; /* (hnc) 1: contact active in the pattern in Kp, Ki ... */
  int *hcb;         /* (2 hnc) ... and its bodies */
  int hnc, hnb, hvalid; /* hvalid: Kp, Ki hold H's pattern of hact, hcb (assembleBody) */
  /* the active sets solved (modeHash): by this call, or by the calls with remember since the
   * last cd_lcpNewtonForget (SEEN_MAX, a ring) */
  unsigned long long *seen;
  int nseen;
  /* the escape: the base active set's modes and impulses, and its single changes (contact,
   * mode, direction), ESCAPE_ALTS ESCAPE_SCAN at most */
  int ecap;
  unsigned char *emode;
  int *ekdir;
  double *elam;
  int elist[3 * ESCAPE_ALTS * ESCAPE_SCAN];
  int escaped; /* active sets the escapes solved since the last cd_lcpNewtonForget */
  /* refine's early stop (EARLY_RATIO): this call's z, D, m and tolerance (m/s), and 1 when the
   * last solveModes stopped there */
  double *ez;
  const double *eD;
  int em, early;
  double etol, early_rn;
};

cdLcpNewton *cd_lcpNewtonMake(void) {
  cdLcpNewton *s = cd_calloc(1, sizeof *s);
  if (!s) return NULL;
  cd_linalgInit();
  klu_defaults(&s->kc);
  if (!(s->ldu = cd_sparseLduMake())) {
    cd_lcpNewtonFree(s);
    return NULL;
  }
  s->pat_sym = -1;
  s->key_nc = -1;
  s->ord_nc = -1;
  s->pg_nc = -1;
  s->breg = REG_BODY;
  if (!(s->seen = cd_malloc(SEEN_MAX * sizeof *s->seen))) {
    cd_lcpNewtonFree(s);
    return NULL;
  }
  return s;
}

void cd_lcpNewtonForget(cdLcpNewton *s) { s->nseen = 0, s->escaped = 0; }

static void dropAnalysis(cdLcpNewton *s) {
  if (s->knum) klu_free_numeric(&s->knum, &s->kc);
  if (s->ksym) klu_free_symbolic(&s->ksym, &s->kc);
  s->pat_sym = -1;
  s->key_nc = -1;
  s->numeric = 0;
}

void cd_lcpNewtonFree(cdLcpNewton *s) {
  if (!s) return;
  dropAnalysis(s);
  cd_sparseLduFree(s->ldu);
  cd_free(s->pat_p), cd_free(s->pat_i), cd_free(s->pinv), cd_free(s->ldlt_y);
  cd_sparseLdltFree(&s->ldlt);
  cd_free(s->key_rows), cd_free(s->key_rowptr), cd_free(s->key_col), cd_free(s->key_cbody);
  cd_free(s->hkey), cd_free(s->hptr), cd_free(s->hrow), cd_free(s->hy), cd_free(s->hact), cd_free(s->hcb);
  cd_free(s->mode), cd_free(s->turn), cd_free(s->lay_mode), cd_free(s->lay_kdir), cd_free(s->kdir), cd_free(s->off), cd_free(s->B), cd_free(s->C), cd_free(s->sq), cd_free(s->wi);
  cd_free(s->lam), cd_free(s->wb), cd_free(s->wl), cd_free(s->wu), cd_free(s->u), cd_free(s->viol), cd_free(s->cand), cd_free(s->zbest);
  cd_free(s->rank);
  cd_free(s->rhs), cd_free(s->q), cd_free(s->r), cd_free(s->dq), cd_free(s->Kp);
  cd_free(s->Ki), cd_free(s->Kx), cd_free(s->zb), cd_free(s->seen);
  cd_free(s->ka_off), cd_free(s->ka_Kp), cd_free(s->ka_kdir), cd_free(s->ka_Kx), cd_free(s->ka_mode), cd_free(s->ka_same);
  cd_free(s->emode), cd_free(s->ekdir), cd_free(s->elam);
  cd_free(s->pgrp), cd_free(s->gsum), cd_free(s->pg_scr), cd_free(s->bsum), cd_free(s->pg_cbody);
  cd_free(s->corder), cd_free(s->ord_rowptr), cd_free(s->ord_col), cd_free(s->oscr), cd_free(s->kperm);
  cd_free(s);
}

/* *pbuf (*cap elements of size bytes) grown to at least n (one at least), by half again past
 * n; 0 ok, -1 no memory */
static int reserve(void *pbuf, size_t *cap, size_t n, size_t size) {
  if (n <= *cap && *cap > 0) return 0;
  size_t c = n + n / 2 + 1;
  if (cd_grow(pbuf, c, size)) return -1;
  *cap = c;
  return 0;
}

/* the arrays of contacts, unknowns and entries grow by half again past the size asked (the
 * contacts of a landing pile, and an active set's unknowns, grow call by call; grown to the size
 * asked, each growth a copy: S2 10's first 60 steps, cd_grow from cd_lcpNewtonSolve 1,012 calls
 * and 10.6M instructions -> 248 and 1.8M, the run 4.692G -> 4.678G) */
static int reserveContacts(cdLcpNewton *s, const cdContactProblem *p, int m) {
  int nc = p->ncon;
  if (nc > s->ccap) {
    size_t n = (size_t)nc + (size_t)nc / 2;
    if (cd_grow(&s->mode, n, 1) || cd_grow(&s->turn, n, 1) || cd_grow(&s->lay_mode, n, 1) || cd_grow(&s->lay_kdir, n, sizeof(int)) || cd_grow(&s->kdir, n, sizeof(int)) || cd_grow(&s->off, n + 1, sizeof(int)) ||
        cd_grow(&s->B, 9 * n, sizeof(double)) || cd_grow(&s->C, 9 * n, sizeof(double)) || cd_grow(&s->sq, n, sizeof(double)) || cd_grow(&s->wi, n, sizeof(double)) ||
        cd_grow(&s->lam, 3 * n, sizeof(double)) || cd_grow(&s->wl, 3 * n, sizeof(double)) ||
        cd_grow(&s->wu, 3 * n, sizeof(double)) || cd_grow(&s->u, 3 * n, sizeof(double)) ||
        cd_grow(&s->viol, n, sizeof(double)) || cd_grow(&s->cand, n, sizeof(int)) ||
        cd_grow(&s->rank, n, sizeof *s->rank) || cd_grow(&s->pgrp, n, sizeof(int)) ||
        cd_grow(&s->gsum, n, sizeof(double)) ||
        cd_grow(&s->key_rows, n, 1) || cd_grow(&s->key_cbody, 2 * n, sizeof(int)) || cd_grow(&s->pg_cbody, 2 * n, sizeof(int)) ||
        cd_grow(&s->hact, n, 1) || cd_grow(&s->hcb, 2 * n, sizeof(int)) || cd_grow(&s->corder, n, sizeof(int)) ||
        cd_grow(&s->ord_rowptr, n + 1, sizeof(int)) || cd_grow(&s->key_rowptr, n + 1, sizeof(int)))
      return -1;
    s->ccap = (int)n;
  }
  if (p->nbody > s->bcap) {
    if (cd_grow(&s->bsum, (size_t)p->nbody, sizeof(double))) return -1;
    s->bcap = p->nbody;
  }
  size_t nb = cd_lcpDelassusScratch(p);
  if (nb > s->wbcap) {
    if (cd_grow(&s->wb, nb, sizeof(double))) return -1;
    s->wbcap = nb;
  }
  size_t nz = (size_t)cd_lcpSize(nc, m);
  if (nz > s->zcap) {
    nz += nz / 2;
    if (cd_grow(&s->zbest, nz, sizeof(double))) return -1;
    s->zcap = nz;
  }
  if (s->zb_m != m) {
    cd_free(s->zb);
    s->zb = cd_malloc((size_t)(m + 2) * sizeof(double) + cd_bgsBlockWorkSize(m));
    if (!s->zb) {
      s->zb_m = 0;
      return -1;
    }
    s->zb_m = m;
  }
  return 0;
}

/* the tangent frame of a sticking contact's unknowns: the contact frame (n, t1, t2) turned
 * about n by a quarter turn so that its first tangent is the one of t1, t2, -t1, -t2 that
 * points most along a fixed world direction; returns the turns (0..3). cd_tangentFrame turns
 * t1 of a near-axis normal by a quarter between steps (its choice ties on roundoff); in the
 * turned frame a resting contact's rows of K stay the same, so that the factorization of an
 * earlier step still solves them (solveModes). 0 without the velocity-space form */
static unsigned char stickFrame(const cdContactProblem *p, int i) {
  static const double w[3] = {0.8, 0.5, 0.3}; /* distinct: no ties on axis-aligned normals */
  if (!p->J || !p->cbody) return 0;
  int s = p->cbody[2 * i] >= 0 ? 0 : 1;
  const double *J = &p->J[36 * (size_t)i + 18 * (size_t)s];
  double sg = s ? 1.0 : -1.0; /* side a carries the minus sign */
  double a = sg * (w[0] * J[6] + w[1] * J[7] + w[2] * J[8]), b = sg * (w[0] * J[12] + w[1] * J[13] + w[2] * J[14]);
  if (fabs(a) >= fabs(b)) return a >= 0.0 ? 0 : 2;
  return b >= 0.0 ? 1 : 3;
}

/* B (3 x r, column-major) and C (r x 3, row-major) of a mode (turn: stickFrame's) */
static void modeMatrices(int mode, int k, int turn, double mu, int m, const double *D, double *B, double *C) {
  memset(B, 0, 9 * sizeof *B);
  memset(C, 0, 9 * sizeof *C);
  const double *dk = &D[2 * k], *dl = &D[2 * ((k + 1) % m)];
  switch (mode) {
    case MODE_STICK: {
      /* B = C^T = [n, t1', t2'] in the contact frame: t1' = (c, s), t2' = (-s, c) */
      double c = turn == 0 ? 1.0 : turn == 2 ? -1.0 : 0.0, sn = turn == 1 ? 1.0 : turn == 3 ? -1.0 : 0.0;
      B[0] = 1.0, B[4] = c, B[5] = sn, B[7] = -sn, B[8] = c;
      for (int e = 0; e < 9; e++) C[e] = B[e]; /* (C row-major is B^T: the same array) */
      break;
    }
    case MODE_VERTEX:
      B[0] = 1.0, B[1] = mu * dk[0], B[2] = mu * dk[1];
      C[0] = 1.0;
      break;
    case MODE_EDGE:
      B[0] = 1.0, B[1] = 0.5 * mu * (dk[0] + dl[0]), B[2] = 0.5 * mu * (dk[1] + dl[1]);
      B[3] = 0.0, B[4] = dk[0] - dl[0], B[5] = dk[1] - dl[1];
      C[0] = 1.0;
      C[3] = 0.0, C[4] = dk[0] - dl[0], C[5] = dk[1] - dl[1];
      break;
    default:
      break;
  }
}

/* the unknowns of every contact, B and C; returns the number of unknowns, *sym = 1 when K is
 * symmetric (B_i = C_i^T for every active contact). B and C are made anew only for the contacts
 * whose mode (or direction, where the mode has one) is not the one they were made for in this
 * call (s->lay_mode, lay_kdir; cd_lcpNewtonSolve marks them none at its start: mu, D and the
 * turns are the call's). S2 10, 60 steps: layout 27.9M instructions -> 15.9M */
static int layout(cdLcpNewton *s, const cdContactProblem *p, int m, const double *D, int *sym) {
  int nc = p->ncon, n = 0;
  *sym = 1;
  for (int i = 0; i < nc; i++) {
    s->off[i] = n;
    int md = s->mode[i];
    n += modeRows[md];
    if (md != s->lay_mode[i] || (md >= MODE_VERTEX && s->kdir[i] != s->lay_kdir[i])) {
      modeMatrices(md, s->kdir[i], s->turn[i], p->mu[i], m, D, &s->B[9 * i], &s->C[9 * i]);
      s->lay_mode[i] = (unsigned char)md, s->lay_kdir[i] = s->kdir[i];
    }
    if (md != MODE_STICK && md != MODE_SEPARATED && p->mu[i] != 0.0) *sym = 0;
  }
  s->off[nc] = n;
  return n;
}

/* the arrays of n unknowns; 0 ok, -1 no memory */
static int reserveUnknowns(cdLcpNewton *s, int n) {
  if (n + 1 > s->ncap) {
    size_t nn = (size_t)n + 1 + (size_t)n / 2;
    if (cd_grow(&s->rhs, nn, sizeof(double)) || cd_grow(&s->q, nn, sizeof(double)) || cd_grow(&s->r, nn, sizeof(double)) ||
        cd_grow(&s->dq, nn, sizeof(double)) || cd_grow(&s->Kp, nn, sizeof(int)))
      return -1;
    s->ncap = (int)nn;
  }
  return 0;
}

/* the columns of B of a sticking contact (modeMatrices) by its quarter turn: +-e_k, k the
 * entry's low two bits, negative for -e_k (-3: -e_1, -2: -e_2) */
static const signed char quarterTurn[4][3] = {{0, 1, 2}, {0, 2, -3}, {0, -3, -2}, {0, -2, 1}};

/* 1 when the last unsymmetric K assembled is held (of this call: the same G, sqrt(meff), turns
 * and directions). Either way s->ka_same[i] is contact i's unknowns (0-3) plus KA_SAME when it
 * is held and the contact's mode (and direction where the mode has one) is the same as then:
 * its B and C are, and so are K's blocks between two such contacts */
#define KA_SAME 4
static int assembledHeld(cdLcpNewton *s, const cdContactProblem *p) {
  int nc = p->ncon, held = s->ka_valid && s->ka_nc == nc;
  const unsigned char *mode = s->mode, *kam = s->ka_mode;
  unsigned char *same = s->ka_same;
  for (int i = 0; i < nc; i++) {
    int md = mode[i];
    same[i] = (unsigned char)(modeRows[md] +
                              (held && md == kam[i] && ((md != MODE_VERTEX && md != MODE_EDGE) || s->kdir[i] == s->ka_kdir[i]) ? KA_SAME : 0));
  }
  return held;
}

/* keeps what the unsymmetric K just assembled (n unknowns, in s->Kx; the last one's values in
 * s->ka_Kx) is of: the modes, directions and offsets (assembledHeld); 0 ok, -1 no memory */
static int assembledKeep(cdLcpNewton *s, const cdContactProblem *p, int n) {
  int nc = p->ncon;
  s->ka_valid = 0;
  if ((size_t)n + 1 > s->ka_ncap) {
    size_t c = (size_t)n + 1 + (size_t)n / 2;
    if (cd_grow(&s->ka_Kp, c, sizeof(int))) return -1;
    s->ka_ncap = c;
  }
  memcpy(s->ka_mode, s->mode, (size_t)nc);
  memcpy(s->ka_kdir, s->kdir, (size_t)nc * sizeof(int));
  memcpy(s->ka_off, s->off, ((size_t)nc + 1) * sizeof(int));
  memcpy(s->ka_Kp, s->Kp, ((size_t)n + 1) * sizeof(int));
  s->ka_nc = nc;
  s->ka_valid = 1;
  return 0;
}

/* column col of a block of K between two sticking contacts, before REG: B_i, B_j are signed
 * permutations (stickFrame's quarter turns), so entry (a, col) is G_ij(Pi[a], Pj[col]) =
 * Gt[3 Pj[col] + Pi[a]] up to sign, times scale, as the products C_i G_ij B_j give it (each sum
 * one product of +-1 and zeros; S2 10, 60 steps: assemble 327M -> 303M instructions, the same
 * answers). pj is Pj[col]; i1, n1, i2, n2 Pi[1]'s and Pi[2]'s axis and sign (Pi[0] = 0: the
 * normal), taken once a block by the caller */
static inline void stickColumn(const double *Gt, int pj, int i1, int n1, int i2, int n2, double scale, double *v) {
  const double *gc = &Gt[3 * (pj & 3)];
  double sc = pj < 0 ? -scale : scale, g1 = gc[i1], g2 = gc[i2];
  v[0] = sc * gc[0];
  v[1] = sc * (n1 ? -g1 : g1);
  v[2] = sc * (n2 ? -g2 : g2);
}

/* K = S C G B S (+ REG on the diagonal) in compressed columns (rows ascending); the upper
 * triangle only when sym. 0 ok, -1 no memory */
static int assemble(cdLcpNewton *s, const cdContactProblem *p, int n, int sym) {
  const cdBlockMatrix *G = &p->G;
  s->hvalid = 0; /* (Kp, Ki: K's pattern from here) */
  int nc = p->ncon;
  if ((size_t)nc + 1 > s->ka_ccap) {
    size_t c = (size_t)nc + 1 + (size_t)nc / 2;
    if (cd_grow(&s->ka_off, c, sizeof(int)) || cd_grow(&s->ka_kdir, c, sizeof(int)) || cd_grow(&s->ka_mode, c, 1) ||
        cd_grow(&s->ka_same, c, 1))
      return -1;
    s->ka_ccap = c;
  }
  /* an upper bound on the entries: 9 a block of G (counting the active sets' own took 7 % of
   * this function on a 1000-sphere pile), grown by half again (G grows step by step while a
   * pile lands: each growth a copy). Only Kx's values are kept (the last K's, ka_Kx below):
   * Ki and ka_Kx (this K's buffer) are written anew, so they are allocated, not copied (S2 10,
   * 60 steps: assemble's cd_grow 6.4M instructions -> 3.0M) */
  size_t bound = 9 * (size_t)G->rowptr[nc];
  if (bound > s->nzcap) {
    bound += bound / 2;
    s->nzcap = 0;
    cd_free(s->Ki), cd_free(s->ka_Kx);
    s->Ki = cd_malloc(bound * sizeof(int)), s->ka_Kx = cd_malloc(bound * sizeof(double));
    if (!s->Ki || !s->ka_Kx || cd_grow(&s->Kx, bound, sizeof(double))) return -1;
    s->nzcap = bound;
  }
  size_t e = 0;
  if (!sym) { /* (the last K's values to ka_Kx, this one's into its other buffer) */
    double *sw = s->Kx;
    s->Kx = s->ka_Kx, s->ka_Kx = sw;
  }
  if (!sym) {
    /* the whole of K a block column at a time: each block of G (with an active contact) once,
     * its ri x rj block of K into the rj columns (each column len entries: those of the
     * block column's blocks in turn); the same operations per entry as the upper triangle's
     * below (two loops: one helper for both took 28 % more of this function's instructions).
     * (Each contact's unknowns and whether its blocks are the last K's in one byte, ka_same,
     * the arrays' pointers and a contact's offset in locals: the stores no longer reload them;
     * S2 10, 60 steps: assemble 146.8M instructions -> 126.8M, the same values) */
    assembledHeld(s, p);
    const unsigned char *info = s->ka_same, *mode = s->mode, *turn = s->turn;
    const int *off = s->off, *rowptr = G->rowptr, *gcol = G->col;
    const double *sq = s->sq;
    int *Kp = s->Kp, *Ki = s->Ki;
    double *Kx = s->Kx;
    for (int j = 0; j < nc; j++) {
      int rj = info[j] & 3;
      if (!rj) continue;
      const double *Bj = &s->B[9 * j];
      int len = 0, ro = 0, all = info[j], oj = off[j];
      for (int t = rowptr[j]; t < rowptr[j + 1]; t++) {
        int f = info[gcol[t]];
        len += f & 3;
        all &= f;
      }
      for (int col = 0; col < rj; col++) Kp[oj + col] = (int)e + col * len;
      if (all & KA_SAME) {
        /* every block of the column as the last K's of this call (the active sets after a
         * call's first differ in a few contacts' modes): its values copied, the same numbers
         * as the products below would give, its rows from the offsets now. S2 10, 60 steps:
         * 164k of the block columns copied, assemble 304.8M -> 199.2M instructions. Comparing
         * G, B, C and sqrt(meff) bit for bit to carry K across calls: 433.8M (copying and
         * comparing G's values and each contact's B and C cost more than the blocks saved) */
        memcpy(&Kx[e], &s->ka_Kx[s->ka_Kp[s->ka_off[j]]], (size_t)rj * (size_t)len * sizeof *Kx);
        int *ki = &Ki[e];
        for (int t = rowptr[j]; t < rowptr[j + 1]; t++) {
          int i = gcol[t], oi = off[i];
          for (int a = 0, ri = info[i] & 3; a < ri; a++) ki[ro++] = oi + a;
        }
        for (int col = 1; col < rj; col++) memcpy(&ki[col * len], ki, (size_t)len * sizeof *ki);
        e += (size_t)rj * (size_t)len;
        continue;
      }
      for (int t = rowptr[j]; t < rowptr[j + 1]; t++) {
        int i = gcol[t], ri = info[i] & 3, oi = off[i];
        if (!ri) continue;
        const double *Gt = &G->val[9 * (size_t)t], *Ci = &s->C[9 * i]; /* G_ji; G_ij = G_ji^T */
        double scale = sq[i] * sq[j];
        int *ki = &Ki[e + (size_t)ro];
        double *kx = &Kx[e + (size_t)ro];
        /* (a row is a column's own, row == cidx below, only in contact j's own block: i == j,
         * a == col) */
        if (mode[i] == MODE_STICK && mode[j] == MODE_STICK) {
          /* (each column's three entries written out, REG on the diagonal after: 126.8M ->
           * 116.3M) */
          const signed char *Pi = quarterTurn[turn[i]], *Pj = quarterTurn[turn[j]];
          int i1 = Pi[1] & 3, i2 = Pi[2] & 3, n1 = Pi[1] < 0, n2 = Pi[2] < 0;
          for (int col = 0; col < 3; col++, ki += len, kx += len) {
            stickColumn(Gt, Pj[col], i1, n1, i2, n2, scale, kx);
            ki[0] = oi, ki[1] = oi + 1, ki[2] = oi + 2;
            if (i == j) kx[col] += REG;
          }
          ro += 3;
          continue;
        }
        int vertex = mode[i] == MODE_VERTEX;
        for (int col = 0; col < rj; col++, ki += len, kx += len) {
          /* T = G_ij B_j[:, col] */
          const double *b = &Bj[3 * col];
          double T[3];
          T[0] = Gt[0] * b[0] + Gt[3] * b[1] + Gt[6] * b[2];
          if (vertex) { /* C_i = n^T: the normal row only (most of a pile's) */
            double v = scale * T[0];
            if (i == j) v += REG; /* (a vertex contact has one unknown: col 0) */
            ki[0] = oi;
            kx[0] = v;
            continue;
          }
          for (int a = 1; a < 3; a++) T[a] = Gt[a] * b[0] + Gt[3 + a] * b[1] + Gt[6 + a] * b[2];
          for (int a = 0; a < ri; a++) {
            double v = scale * (Ci[3 * a] * T[0] + Ci[3 * a + 1] * T[1] + Ci[3 * a + 2] * T[2]);
            if (i == j && a == col) v += REG;
            ki[a] = oi + a;
            kx[a] = v;
          }
        }
        ro += ri;
      }
      e += (size_t)rj * (size_t)len;
    }
    s->Kp[n] = (int)e;
    return assembledKeep(s, p, n);
  }
  s->ka_valid = 0;
  /* symmetric: K's upper triangle (the blocks of contacts i <= j in column block j), a block
   * of G at a time as the whole K above, the same operations an entry (the diagonal block's
   * rows up to its column only). Column by column, each block's product made for every
   * column: the 20-cube stack's first step, assemble 196k instructions -> 116k, the same
   * values (h5same: S3 20, the ten piles) */
  const unsigned char *mode = s->mode, *turn = s->turn;
  const int *off = s->off, *rowptr = G->rowptr, *gcol = G->col;
  const double *sq = s->sq;
  int *Kp = s->Kp, *Ki = s->Ki;
  double *Kx = s->Kx;
  for (int j = 0; j < nc; j++) {
    int rj = modeRows[mode[j]], oj = off[j], len = 0, ro = 0;
    if (!rj) continue;
    for (int t = rowptr[j]; t < rowptr[j + 1] && gcol[t] < j; t++) len += modeRows[mode[gcol[t]]];
    for (int col = 0; col < rj; col++) Kp[oj + col] = (int)e + col * len + col * (col + 1) / 2;
    const double *Bj = &s->B[9 * j];
    for (int t = rowptr[j]; t < rowptr[j + 1] && gcol[t] <= j; t++) {
      int i = gcol[t], ri = modeRows[mode[i]], oi = off[i];
      if (!ri) continue;
      const double *Gt = &G->val[9 * (size_t)t], *Ci = &s->C[9 * i]; /* G_ji; G_ij = G_ji^T */
      double scale = sq[i] * sq[j];
      int diag = i == j, at = (int)e + ro; /* (at: the block's entries in column col) */
      int stick = mode[i] == MODE_STICK && mode[j] == MODE_STICK, vertex = mode[i] == MODE_VERTEX;
      const signed char *Pi = quarterTurn[turn[i]], *Pj = quarterTurn[turn[j]];
      int i1 = Pi[1] & 3, i2 = Pi[2] & 3, n1 = Pi[1] < 0, n2 = Pi[2] < 0;
      if (!diag && stick) { /* (the block's rows all above the diagonal, three a column) */
        for (int col = 0; col < 3; at += len + col + 1, col++) {
          int *ki = &Ki[at];
          stickColumn(Gt, Pj[col], i1, n1, i2, n2, scale, &Kx[at]);
          ki[0] = oi, ki[1] = oi + 1, ki[2] = oi + 2;
        }
        ro += 3;
        continue;
      }
      for (int col = 0; col < rj; at += len + col + 1, col++) {
        int *ki = &Ki[at], nr = diag ? col + 1 : ri;
        double *kx = &Kx[at], v[3];
        if (stick) {
          stickColumn(Gt, Pj[col], i1, n1, i2, n2, scale, v);
        } else {
          /* T = G_ij B_j[:, col] */
          const double *b = &Bj[3 * col];
          double T[3];
          T[0] = Gt[0] * b[0] + Gt[3] * b[1] + Gt[6] * b[2];
          if (vertex) { /* C_i = n^T: the normal row only (most of a pile's) */
            v[0] = scale * T[0];
          } else {
            for (int a = 1; a < 3; a++) T[a] = Gt[a] * b[0] + Gt[3 + a] * b[1] + Gt[6 + a] * b[2];
            for (int a = 0; a < nr; a++) v[a] = scale * (Ci[3 * a] * T[0] + Ci[3 * a + 1] * T[1] + Ci[3 * a + 2] * T[2]);
          }
        }
        if (diag) v[col] += REG;
        for (int a = 0; a < nr; a++) ki[a] = oi + a, kx[a] = v[a];
      }
      ro += ri;
    }
    e += (size_t)rj * (size_t)len + (size_t)(rj * (rj + 1) / 2);
  }
  s->Kp[n] = (int)e;
  return 0;
}


/* The body form. With U = S C J M^-1 and V = J^T B S, K = U V (J: the contacts' Jacobian,
 * M the bodies' mass matrix, problem.h), and the Woodbury identity gives
 *     (K + eps I)^-1 = (I - S C J H^-1 J^T B S) / eps,   H = eps M + J^T B S^2 C J,
 * H of body size (6 nbody, a 6x6 block per pair of bodies an active contact joins; symmetric
 * when every active contact sticks). Where many contacts share bodies (four corners a face, a
 * cube on four others) K's rows couple every contact of both bodies (~70 entries a row on the
 * 55-cube pyramid) and H is several times smaller: a factorization of H replaces K's. The
 * same (K + eps I)^-1 up to roundoff: the refinement and the kept factorization are those of
 * K's form, and the answer, refined on K, is K's up to the near-null directions that eps
 * leaves (eps = breg: REG_BODY, above). Its solve's roundoff is eps^-1 times larger (the
 * difference of two near-equal terms); the refinement on K takes it off. */

/* the groups of contacts between the same two moving bodies (s->pgrp), for bodyForm: the
 * contacts bucketed by their lower body, then each bucket's by the other body, a group a body
 * pair (bodyForm reads only which contacts share a group). -1 no memory. S2 10, 60 steps: a
 * sort by the pairs' keys (qsort) took 22.9M instructions in 51 calls, this ~2.3M */
static int pairGroups(cdLcpNewton *s, const cdContactProblem *p) {
  int nc = p->ncon, nb = p->nbody, ng = 0;
  if (reserve(&s->pg_scr, &s->pg_scap, 3 * (size_t)nb + 1 + (size_t)nc, sizeof(int))) return -1;
  int *start = s->pg_scr, *mark = start + nb + 1, *gid = mark + nb, *list = gid + nb;
  for (int b = 0; b <= nb; b++) start[b] = 0;
  for (int i = 0; i < nc; i++) {
    int a = p->cbody[2 * i], b = p->cbody[2 * i + 1];
    s->pgrp[i] = -1;
    if (a >= 0 && b >= 0 && a != b) start[(a < b ? a : b) + 1]++;
  }
  for (int b = 0; b < nb; b++) start[b + 1] += start[b], mark[b] = -1;
  for (int i = 0; i < nc; i++) { /* (start[a] moves to the end of a's bucket) */
    int a = p->cbody[2 * i], b = p->cbody[2 * i + 1];
    if (a >= 0 && b >= 0 && a != b) list[start[a < b ? a : b]++] = i;
  }
  for (int a = 0, t = 0; a < nb; a++)
    for (; t < start[a]; t++) {
      int i = list[t], b = p->cbody[2 * i] == a ? p->cbody[2 * i + 1] : p->cbody[2 * i];
      if (mark[b] != a) mark[b] = a, gid[b] = ng++;
      s->pgrp[i] = gid[b];
    }
  s->pg_ng = ng;
  return 0;
}

/* 1 when the active set is solved in the body form (form: cdLcpNewtonOptions'; by default
 * where H has fewer entries than K by BODY_RATIO). K's entries are counted from the bodies,
 * without G: block row j of G holds every contact that shares a moving body with contact j,
 * so row j of K has r_j (R_a + R_b - R_ab) entries, R_k the unknowns of the active contacts
 * on body k and R_ab those of the contacts between j's bodies a and b (j among them); -1 no
 * memory */
static int bodyForm(cdLcpNewton *s, const cdContactProblem *p, int form) {
  if (p->nbody <= 0 || !p->J || !p->cbody || !p->minv || !p->Iinv || form == CD_LCP_NEWTON_FORM_CONTACT) return 0;
  if (form == CD_LCP_NEWTON_FORM_BODY) return 1;
  int nc = p->ncon;
  if (s->pg_nc != nc || s->pg_nb != p->nbody || memcmp(s->pg_cbody, p->cbody, 2 * (size_t)nc * sizeof(int))) {
    /* (made anew for each call: S2 10, 60 steps, 45M instructions of qsort for 91 calls) */
    if (pairGroups(s, p)) return -1;
    memcpy(s->pg_cbody, p->cbody, 2 * (size_t)nc * sizeof(int));
    s->pg_nc = nc, s->pg_nb = p->nbody;
  }
  /* sum_j r_j (R_a + R_b - R_ab) over the contacts is sum_k R_k^2 over the bodies less
   * sum_g R_g^2 over the groups (each contact's r_j once in R_k for each of its moving bodies,
   * once in its group's R_g), less r_j R_a once for a contact whose two sides are one body a
   * (counted twice in R_a, once in its row). Every term and partial sum an integer far below
   * 2^53, the same number as the sum over the contacts in any order. (S2 10, 60 steps: a
   * second loop over the contacts instead, solveModes' own 75.5M instructions -> 68.2M) */
  int nb = p->nbody, ng = s->pg_ng, self = 0;
  const unsigned char *mode = s->mode;
  const int *cb = p->cbody, *pg = s->pgrp;
  double *bsum = s->bsum, *gsum = s->gsum, nnzK = 0.0, blocks = nb;
  memset(bsum, 0, (size_t)nb * sizeof *bsum);
  memset(gsum, 0, (size_t)ng * sizeof *gsum);
  for (int i = 0; i < nc; i++) {
    int r = modeRows[mode[i]], a = cb[2 * i], b = cb[2 * i + 1];
    if (!r) continue;
    if (a >= 0) bsum[a] += r;
    if (b >= 0) bsum[b] += r;
    if (pg[i] >= 0) gsum[pg[i]] += r;
    if (a >= 0 && b >= 0) blocks += 2.0, self |= a == b;
  }
  for (int k = 0; k < nb; k++) nnzK += bsum[k] * bsum[k];
  for (int g = 0; g < ng; g++) nnzK -= gsum[g] * gsum[g];
  for (int j = 0; self && j < nc; j++)
    if (modeRows[mode[j]] && cb[2 * j] >= 0 && cb[2 * j] == cb[2 * j + 1]) nnzK -= modeRows[mode[j]] * bsum[cb[2 * j]];
  return 36.0 * blocks * BODY_RATIO < nnzK;
}

static int keyCompare(const void *x, const void *y) {
  long long a = *(const long long *)x, b = *(const long long *)y;
  return (a > b) - (a < b);
}

/* where entry (6 r, 6 c) of H sits in Kx (block (r, c) of the pattern); entry (6 r + a, 6 c + e)
 * is a + e *stride further */
static size_t bodyBlock(const cdLcpNewton *s, int r, int c, size_t *stride) {
  int t = s->hptr[c], nblk = s->hptr[c + 1] - t;
  while (s->hrow[t] != r) t++;
  *stride = 6 * (size_t)nblk;
  return 36 * (size_t)s->hptr[c] + 6 * (size_t)(t - s->hptr[c]);
}

/* 1 when Kp, Ki hold H's pattern for the active contacts and bodies of now */
static int bodyPatternHeld(const cdLcpNewton *s, const cdContactProblem *p) {
  if (!s->hvalid || s->hnc != p->ncon || s->hnb != p->nbody) return 0;
  for (int i = 0; i < p->ncon; i++)
    if (s->hact[i] != (modeRows[s->mode[i]] != 0)) return 0;
  return !memcmp(s->hcb, p->cbody, 2 * (size_t)p->ncon * sizeof(int));
}

/* H's pattern into Kp, Ki (rows ascending, each block column's 6x6 blocks in their rows'
 * order), hptr and hrow: a block per moving body and per pair of bodies an active contact
 * joins. 0 ok, -1 no memory */
static int bodyPattern(cdLcpNewton *s, const cdContactProblem *p) {
  int nb = p->nbody, nc = p->ncon;
  size_t want = 2 * (size_t)nc + (size_t)nb;
  if (want > s->hcap) {
    if (cd_grow(&s->hkey, want, sizeof(long long)) || cd_grow(&s->hrow, want, sizeof(int)) ||
        cd_grow(&s->hptr, (size_t)nb + 1, sizeof(int)) || cd_grow(&s->hy, 6 * (size_t)nb, sizeof(double)))
      return -1;
    s->hcap = want;
  }
  int n6 = 6 * nb;
  s->hvalid = 0;
  s->ka_valid = 0; /* (Kx: H from here) */
  /* the block pattern: the diagonal and both blocks of every active contact between two bodies */
  size_t nk = 0;
  for (int b = 0; b < nb; b++) s->hkey[nk++] = (long long)b * nb + b;
  for (int i = 0; i < nc; i++) {
    int a = p->cbody[2 * i], b = p->cbody[2 * i + 1];
    if (!modeRows[s->mode[i]] || a < 0 || b < 0 || a == b) continue;
    s->hkey[nk++] = (long long)a * nb + b;
    s->hkey[nk++] = (long long)b * nb + a;
  }
  qsort(s->hkey, nk, sizeof *s->hkey, keyCompare);
  int nblk = 0;
  for (size_t k = 0; k < nk; k++)
    if (k == 0 || s->hkey[k] != s->hkey[k - 1]) s->hrow[nblk++] = (int)(s->hkey[k] % nb);
  /* block columns (the keys are c nb + r): counted from the sorted, distinct keys */
  for (int c = 0; c <= nb; c++) s->hptr[c] = 0;
  for (size_t k = 0; k < nk; k++)
    if (k == 0 || s->hkey[k] != s->hkey[k - 1]) s->hptr[s->hkey[k] / nb + 1]++;
  for (int c = 0; c < nb; c++) s->hptr[c + 1] += s->hptr[c];
  size_t nnz = 36 * (size_t)nblk;
  if (reserveUnknowns(s, n6)) return -1;
  if (nnz > s->nzcap) {
    if (cd_grow(&s->Ki, nnz, sizeof(int)) || cd_grow(&s->Kx, nnz, sizeof(double)) || cd_grow(&s->ka_Kx, nnz, sizeof(double)))
      return -1;
    s->nzcap = nnz;
  }
  for (int c = 0; c < nb; c++) {
    int t0 = s->hptr[c], nbc = s->hptr[c + 1] - t0;
    for (int e = 0; e < 6; e++) {
      size_t col = 36 * (size_t)t0 + 6 * (size_t)nbc * (size_t)e;
      s->Kp[6 * c + e] = (int)col;
      for (int t = 0; t < nbc; t++)
        for (int a = 0; a < 6; a++) s->Ki[col + 6 * (size_t)t + (size_t)a] = 6 * s->hrow[t0 + t] + a;
    }
  }
  s->Kp[n6] = (int)nnz;
  for (int i = 0; i < nc; i++) s->hact[i] = modeRows[s->mode[i]] != 0;
  memcpy(s->hcb, p->cbody, 2 * (size_t)nc * sizeof(int));
  s->hnc = nc, s->hnb = nb, s->hvalid = 1;
  return 0;
}

/* H = REG M + J^T B S^2 C J (body form, above) in compressed columns in Kp, Ki, Kx (rows
 * ascending), each block column's 6x6 blocks in their rows' order (bodyPattern, kept while
 * the same contacts are active on the same bodies); *N: its size, 6 nbody. 0 ok, -1 no memory */
static int assembleBody(cdLcpNewton *s, const cdContactProblem *p, int *N) {
  int nb = p->nbody, nc = p->ncon, n6 = 6 * nb;
  if (!bodyPatternHeld(s, p) && bodyPattern(s, p)) return -1;
  size_t nnz = (size_t)s->Kp[n6];
  memset(s->Kx, 0, nnz * sizeof *s->Kx);
  /* breg M: breg m on the linear dofs, breg I_world (the inverse of Iinv) on the angular ones */
  for (int b = 0; b < nb; b++) {
    double I[9];
    cd_m3inverse(I, &p->Iinv[9 * (size_t)b]);
    size_t st, at = bodyBlock(s, b, b, &st);
    for (int a = 0; a < 3; a++) {
      s->Kx[at + (size_t)a + st * (size_t)a] += s->breg / p->minv[b];
      for (int e = 0; e < 3; e++) s->Kx[at + (size_t)(3 + a) + st * (size_t)(3 + e)] += s->breg * I[3 * a + e];
    }
  }
  /* J_i^T P J_i, P = meff_i B_i C_i, into the blocks of contact i's bodies */
  for (int i = 0; i < nc; i++) {
    int r = modeRows[s->mode[i]];
    if (!r) continue;
    const double *B = &s->B[9 * i], *C = &s->C[9 * i];
    double P[9], w = s->sq[i] * s->sq[i];
    if (s->mode[i] == MODE_STICK) {
      /* P = w I (B is a quarter turn of the frame: B C = B B^T = I), so the blocks are
       * w J_r^T J_c: each diagonal one symmetric, the (c, r) one the transpose of (r, c) */
      for (int sr = 0; sr < 2; sr++) {
        int kr = p->cbody[2 * i + sr];
        if (kr < 0) continue;
        const double *Jr = &p->J[36 * (size_t)i + 18 * (size_t)sr];
        for (int sc = sr; sc < 2; sc++) {
          int kc = p->cbody[2 * i + sc];
          if (kc < 0) continue;
          const double *Jc = &p->J[36 * (size_t)i + 18 * (size_t)sc];
          double v[36]; /* v[6 e + a]: entry (a, e) of block (kr, kc) */
          for (int e = 0; e < 6; e++)
            for (int a = sr == sc ? e : 0; a < 6; a++)
              v[6 * e + a] = w * (Jr[a] * Jc[e] + Jr[6 + a] * Jc[6 + e] + Jr[12 + a] * Jc[12 + e]);
          size_t st, at = bodyBlock(s, kr, kc, &st);
          if (sr == sc) {
            for (int e = 0; e < 6; e++)
              for (int a = e; a < 6; a++) {
                s->Kx[at + (size_t)a + st * (size_t)e] += v[6 * e + a];
                if (a != e) s->Kx[at + (size_t)e + st * (size_t)a] += v[6 * e + a];
              }
          } else {
            size_t st2, at2 = bodyBlock(s, kc, kr, &st2);
            for (int e = 0; e < 6; e++)
              for (int a = 0; a < 6; a++) {
                s->Kx[at + (size_t)a + st * (size_t)e] += v[6 * e + a];
                s->Kx[at2 + (size_t)e + st2 * (size_t)a] += v[6 * e + a];
              }
          }
        }
      }
      continue;
    }
    for (int a = 0; a < 3; a++)
      for (int b = 0; b < 3; b++) {
        double v = 0.0;
        for (int k = 0; k < r; k++) v += B[3 * k + a] * C[3 * k + b];
        P[3 * a + b] = w * v;
      }
    for (int sc = 0; sc < 2; sc++) {
      int kc = p->cbody[2 * i + sc];
      if (kc < 0) continue;
      const double *Jc = &p->J[36 * (size_t)i + 18 * (size_t)sc];
      double Q[18]; /* P J_c (3 x 6) */
      for (int a = 0; a < 3; a++)
        for (int e = 0; e < 6; e++) Q[6 * a + e] = P[3 * a] * Jc[e] + P[3 * a + 1] * Jc[6 + e] + P[3 * a + 2] * Jc[12 + e];
      for (int sr = 0; sr < 2; sr++) {
        int kr = p->cbody[2 * i + sr];
        if (kr < 0) continue;
        const double *Jr = &p->J[36 * (size_t)i + 18 * (size_t)sr];
        size_t st, at = bodyBlock(s, kr, kc, &st);
        for (int e = 0; e < 6; e++, at += st)
          for (int a = 0; a < 6; a++) s->Kx[at + (size_t)a] += Jr[a] * Q[e] + Jr[6 + a] * Q[6 + e] + Jr[12 + a] * Q[12 + e];
      }
    }
  }
  *N = n6;
  return 0;
}

/* x = (K + freg I)^-1 b through the bodies with H's factorization held (body form, above) */
static int solveBody(cdLcpNewton *s, const cdContactProblem *p, const double *b, double *x) {
  int nc = p->ncon, n6 = 6 * p->nbody;
  double *y = s->hy;
  memset(y, 0, (size_t)n6 * sizeof *y);
  for (int i = 0; i < nc; i++) { /* y = J^T B S b */
    int r = modeRows[s->mode[i]];
    if (!r) continue;
    const double *B = &s->B[9 * i], *bi = &b[s->off[i]];
    double l[3] = {0.0, 0.0, 0.0};
    for (int a = 0; a < r; a++) {
      double pa = s->sq[i] * bi[a];
      l[0] += B[3 * a] * pa, l[1] += B[3 * a + 1] * pa, l[2] += B[3 * a + 2] * pa;
    }
    cd_contactProblemRowsTMulAdd(p, i, l, y);
  }
  if (!klu_solve(s->ksym, s->knum, n6, 1, y, &s->kc)) return 1;
  for (int i = 0; i < nc; i++) { /* x = (b - S C J y) / freg */
    int r = modeRows[s->mode[i]];
    if (!r) continue;
    const double *C = &s->C[9 * i], *bi = &b[s->off[i]];
    double u[3];
    cd_contactProblemRowsMul(p, p->J, i, y, u);
    for (int a = 0; a < r; a++)
      x[s->off[i] + a] = (bi[a] - s->sq[i] * (C[3 * a] * u[0] + C[3 * a + 1] * u[1] + C[3 * a + 2] * u[2])) / s->freg;
  }
  return 0;
}

/* CHOLMOD's symbolic factor of K (n unknowns, its upper triangle in Kp, Ki: assemble's) in a
 * fill-reducing order, made here at the contacts' level into s->ldlt's layout (sparse_ldlt.h): Ap, Ai the
 * pattern of the upper triangle of P K P^T (rows ascending in each column), s->pinv each
 * unknown's new index, kfrom the entry of K each of its entries is, Lp L's columns laid out by
 * their counts (Li, Lx sized), and no, nr, sp, st the order the factorization takes L's
 * columns in. K's blocks are dense (a contact's unknowns together, a block per block of G
 * between two active contacts), so what CHOLMOD found from K's entries is the contacts' graph's:
 * the order is AMD's on that graph (amd_2 on the graph cholmod_amd builds from it: each contact's
 * neighbours ascending, the same elbow room and controls, so the same order), each contact's
 * unknowns kept together; the permuted triangle is written block by block (a block's entries
 * land together); and L's column counts come from the contacts' elimination tree: a contact's
 * column of L holds its own later unknowns and every unknown of the contacts in its block
 * column. The same order, triangle and L as cholmod_amd and ccp_hessian.c's ordered
 * CHOLMOD analysis made (compared entry by entry in the 209 analyses of
 * make test, S3 20 and the ten piles), without CHOLMOD's scalar passes (its copies and
 * transposes, elimination tree, postorder and row and column counts over 240 unknowns on the
 * 20-cube stack). S3 20's first step: cholmod_amd, the permuted triangle and cholmod_analyze
 * 0.66M instructions -> 0.19M here (amd_2 0.04M of it), the step 2.62M -> 2.10M with the
 * assembly below; its wall time 0.50 -> 0.45 ms (medians of 15 runs alternating, shared
 * machine). 0 ok, -1 no memory */
static int cholAnalyse(cdLcpNewton *s, const cdContactProblem *p, int n) {
  const cdBlockMatrix *G = &p->G;
  const int *rowptr = G->rowptr, *gcol = G->col, *off = s->off, *Kp = s->Kp;
  int nc = p->ncon, nnzb = rowptr[nc];
  size_t iwcap = (size_t)nnzb + (size_t)nnzb / 2 + (size_t)nc + 1;
  int *w = cd_malloc((13 * (size_t)nc + 1 + 4 * (size_t)nnzb + iwcap) * sizeof(int));
  if (!w) return -1;
  int *act = w, *cpos = act + nc, *no = cpos + nc, *Pe = no + nc, *Len = Pe + nc, *Nv = Len + nc, *Next = Nv + nc;
  int *Last = Next + nc, *Head = Last + nc, *Elen = Head + nc, *Degree = Elen + nc, *W = Degree + nc, *uptr = W + nc;
  int *tt = uptr + nc + 1, *kpre = tt + nnzb, *apre = kpre + nnzb, *ulist = apre + nnzb, *Iw = ulist + nnzb;
  const unsigned char *mode = s->mode;
  /* the active contacts' graph as cholmod_amd has it (cholmod_copy of the strict upper
   * triangle: each lower block of G in both columns, in this order) */
  int na = 0, cnz = 0;
  for (int i = 0; i < nc; i++) act[i] = modeRows[mode[i]] ? na++ : -1;
  for (int a = 0; a < na; a++) Len[a] = 0;
  for (int j = 0; j < nc; j++)
    if (act[j] >= 0)
      for (int t = rowptr[j]; t < rowptr[j + 1] && gcol[t] < j; t++)
        if (act[gcol[t]] >= 0) Len[act[j]]++, Len[act[gcol[t]]]++, cnz += 2;
  for (int a = 0, e = 0; a < na; a++) Pe[a] = Nv[a] = e, e += Len[a];
  for (int j = 0; j < nc; j++)
    if (act[j] >= 0)
      for (int t = rowptr[j]; t < rowptr[j + 1] && gcol[t] < j; t++) {
        int i = act[gcol[t]];
        if (i >= 0) Iw[Nv[act[j]]++] = i, Iw[Nv[i]++] = act[j];
      }
  double control[AMD_CONTROL], info[AMD_INFO];
  control[AMD_DENSE] = AMD_DEFAULT_DENSE, control[AMD_AGGRESSIVE] = AMD_DEFAULT_AGGRESSIVE; /* (cholmod_amd's:
                                                                                        CHOLMOD's defaults) */
  amd_2(na, Pe, Iw, Len, cnz + cnz / 2 + na, cnz, Nv, Next, Last, Head, Elen, Degree, W, control, info);
  /* the contacts in that order (ord), their positions and first new unknowns */
  int *con = Pe, *ord = Len, *rup = Degree; /* (rup: unknowns above a contact's diagonal block) */
  for (int i = 0; i < nc; i++)
    if (act[i] >= 0) con[act[i]] = i;
  for (int i = 0; i < nc; i++) cpos[i] = -1;
  for (int a = 0, k = 0; a < na; a++) {
    int j = con[Last[a]], rj = modeRows[mode[j]];
    ord[a] = j, cpos[j] = a, no[j] = k;
    for (int u = 0; u < rj; u++) s->pinv[off[j] + u] = k + u;
    k += rj;
  }
  /* each block's transpose (G's block pattern is symmetric, columns ascending), its offset in
   * K's column (kpre, blocks above the diagonal) and in Ap's (apre: the blocks of each column
   * sorted by their contacts' new positions, in ulist) */
  for (int i = 0; i < nc; i++) Nv[i] = rowptr[i];
  for (int j = 0; j < nc; j++)
    for (int t = rowptr[j]; t < rowptr[j + 1]; t++) tt[t] = Nv[gcol[t]]++;
  for (int j = 0; j < nc; j++)
    for (int t = rowptr[j], r = 0; t < rowptr[j + 1]; t++) kpre[t] = r, r += modeRows[mode[gcol[t]]];
  int nu = 0;
  for (int a = 0; a < na; a++) {
    int j = ord[a], r = 0;
    uptr[a] = nu;
    for (int t = rowptr[j]; t < rowptr[j + 1]; t++) {
      int i = gcol[t], c = cpos[i];
      if (i == j || c < 0 || c > a) continue;
      int q = nu++;
      for (; q > uptr[a] && cpos[gcol[ulist[q - 1]]] > c; q--) ulist[q] = ulist[q - 1];
      ulist[q] = t;
    }
    for (int q = uptr[a]; q < nu; q++) apre[ulist[q]] = r, r += modeRows[mode[gcol[ulist[q]]]];
    rup[a] = r;
  }
  uptr[na] = nu;
  int nnz = Kp[n], rc = 1;
  if (cd_grow(&s->ldlt.Ap, (size_t)n + 1, sizeof(int)) || cd_grow(&s->ldlt.Ai, (size_t)nnz, sizeof(int))) {
    rc = -1;
    goto done;
  }
  /* Ap's columns: a contact's first column its blocks' rows above the diagonal, then its own
   * first unknown; each later column the same rows and one more of its own */
  int *Bp = s->ldlt.Ap, *Bi = s->ldlt.Ai, e = 0;
  for (int a = 0; a < na; a++) {
    int j = ord[a], rj = modeRows[mode[j]], nj = no[j], r = rup[a], e0 = e;
    for (int q = uptr[a]; q < uptr[a + 1]; q++) {
      int i = gcol[ulist[q]], ni = no[i], ri = modeRows[mode[i]];
      for (int u = 0; u < ri; u++) Bi[e + u] = ni + u;
      e += ri;
    }
    Bp[nj] = e0;
    Bi[e++] = nj;
    for (int col = 1; col < rj; col++) {
      Bp[nj + col] = e;
      memcpy(&Bi[e], &Bi[e0], (size_t)r * sizeof *Bi);
      for (int u = 0; u <= col; u++) Bi[e + r + u] = nj + u;
      e += r + col + 1;
    }
  }
  Bp[n] = e;
  /* kfrom, block by block of K's upper triangle: a block above the diagonal in the new order
   * too lands in the column of its own contact, else transposed in the other's */
  int *kfrom = s->ldlt.kfrom;
  for (int j = 0; j < nc; j++) {
    int rj = modeRows[mode[j]], oj = off[j], nj = no[j];
    if (!rj) continue;
    for (int t = rowptr[j]; t < rowptr[j + 1] && gcol[t] <= j; t++) {
      int i = gcol[t], ri = modeRows[mode[i]], kp = kpre[t];
      if (!ri) continue;
      if (i == j) {
        for (int col = 0, b = rup[cpos[j]]; col < rj; col++)
          for (int u = 0, k = Kp[oj + col] + kp, d = Bp[nj + col] + b; u <= col; u++) kfrom[d + u] = k + u;
      } else if (cpos[i] < cpos[j]) {
        for (int col = 0, b = apre[t]; col < rj; col++)
          for (int u = 0, k = Kp[oj + col] + kp, d = Bp[nj + col] + b; u < ri; u++) kfrom[d + u] = k + u;
      } else {
        int kc[3], b = apre[tt[t]], ni = no[i];
        for (int col = 0; col < rj; col++) kc[col] = Kp[oj + col] + kp;
        for (int u = 0; u < ri; u++) {
          int d = Bp[ni + u] + b;
          for (int col = 0; col < rj; col++) kfrom[d + col] = kc[col] + u;
        }
      }
    }
  }
  /* the contacts' elimination tree (parent, with ancestor: Liu's algorithm on Ap's blocks
   * above the diagonal), then each contact's unknowns below its diagonal block in L (cnt):
   * row a of L's blocks is the tree's paths from the blocks above a's diagonal up to a */
  int *parent = Nv, *anc = Next, *mark = Head, *cnt = Elen;
  for (int a = 0; a < na; a++) {
    parent[a] = anc[a] = mark[a] = -1, cnt[a] = 0;
    for (int q = uptr[a]; q < uptr[a + 1]; q++)
      for (int b = cpos[gcol[ulist[q]]], nx; b != -1 && b < a; b = nx) {
        nx = anc[b], anc[b] = a;
        if (nx == -1) parent[b] = a;
      }
  }
  int nst = 0;
  for (int a = 0; a < na; a++) {
    int ra = modeRows[mode[ord[a]]];
    mark[a] = a;
    for (int q = uptr[a]; q < uptr[a + 1]; q++)
      for (int b = cpos[gcol[ulist[q]]]; mark[b] != a; b = parent[b]) cnt[b] += ra, mark[b] = a, nst++;
  }
  /* the order cholmod_rowfac meets row (a, t) of L in (its SUBTREE: from each row of Ap's
   * column (a, t), ascending, up the elimination tree to a node met already, each path put
   * before the earlier ones): a block's unknowns are a chain (its diagonal block dense), a
   * path from (c, 0) runs through all of c's to (parent of c, 0), and the first path ends
   * in (a, 0 .. t-1); so row (a, t) meets the contacts' paths of row a (st), each
   * contact's unknowns ascending, then (a, 0 .. t-1) */
  if (cd_grow(&s->ldlt.no, (size_t)na, sizeof(int)) || cd_grow(&s->ldlt.nr, (size_t)na, sizeof(int)) ||
      cd_grow(&s->ldlt.sp, (size_t)na + 1, sizeof(int)) || cd_grow(&s->ldlt.st, nst > 0 ? (size_t)nst : 1, sizeof(int)) ||
      cd_grow(&s->ldlt.W, (size_t)n, sizeof(double)) || cd_grow(&s->ldlt_y, (size_t)n, sizeof(double))) {
    cd_free(w);
    return -1;
  }
  memset(s->ldlt.W, 0, (size_t)n * sizeof(double));
  int *path = W, *stk = Last; /* (AMD's W and Last: free now) */
  int q = 0;
  for (int a = 0; a < na; a++) {
    int top = na, stamp = na + a;
    s->ldlt.no[a] = no[ord[a]], s->ldlt.nr[a] = modeRows[mode[ord[a]]], s->ldlt.sp[a] = q;
    for (int u = uptr[a]; u < uptr[a + 1]; u++) {
      int len = 0;
      for (int b = cpos[gcol[ulist[u]]]; b < a && mark[b] != stamp; b = parent[b]) path[len++] = b, mark[b] = stamp;
      while (len > 0) stk[--top] = path[--len];
    }
    while (top < na) s->ldlt.st[q++] = stk[top++];
  }
  s->ldlt.sp[na] = q;
  s->ldlt.na = na, s->ldlt.n = n;
  /* L's columns laid out by their counts (cholmod_factorize's layout of them: final_pack) */
  if (cd_grow(&s->ldlt.Lp, (size_t)n + 1, sizeof(int)) || cd_grow(&s->ldlt.Lnz, (size_t)n, sizeof(int))) {
    rc = -1;
    goto done;
  }
  int *lp = s->ldlt.Lp, lnz = 0;
  for (int a = 0; a < na; a++) {
    int j = ord[a], rj = modeRows[mode[j]];
    for (int u = 0; u < rj; u++) lp[no[j] + u] = lnz, lnz += rj - u + cnt[a];
  }
  lp[n] = lnz;
  rc = cd_grow(&s->ldlt.Li, (size_t)lnz, sizeof(int)) || cd_grow(&s->ldlt.Lx, (size_t)lnz, sizeof(double)) ? -1 : 0;
done:
  cd_free(w);
  return rc;
}

/* the LU's order of K's unknowns, kept. A fresh one is AMD on K (amdOrder, klu_analyze's); the
 * contacts in that order (each at its first unknown) are kept as the order of the step's G
 * (s->corder), and a later active set on the same G takes it (keptOrder): its active contacts
 * in that order, contacts new to it last, each contact's unknowns together. Its LU's flops
 * come from the LDU's analysis in it (analyse); the kept order is taken while its flops an
 * unknown are at most ORDER_SLACK times those of the last fresh AMD, else AMD runs afresh */
static int orderHeld(const cdLcpNewton *s, const cdContactProblem *p) {
  const cdBlockMatrix *G = &p->G;
  int nc = p->ncon, nnzb = G->rowptr[nc];
  return s->ord_nc == nc && s->ord_nnzb == nnzb && !memcmp(s->ord_rowptr, G->rowptr, ((size_t)nc + 1) * sizeof(int)) &&
         !memcmp(s->ord_col, G->col, (size_t)nnzb * sizeof(int));
}

/* keeps the contact order of a fresh AMD order Q of the n unknowns, of an LU of the given
 * flops; 0 ok, -1 no memory */
static int keepOrder(cdLcpNewton *s, const cdContactProblem *p, int n, const int *Q, double flops) {
  const cdBlockMatrix *G = &p->G;
  int nc = p->ncon, nnzb = G->rowptr[nc];
  s->ord_nc = -1;
  if (reserve(&s->oscr, &s->oscr_cap, 2 * (size_t)nc + (size_t)n, sizeof(int)) ||
      reserve(&s->ord_col, &s->ocol_cap, (size_t)nnzb, sizeof(int)))
    return -1;
  int *ucon = s->oscr, *seen = ucon + n, na = 0; /* each unknown's contact; contacts placed */
  for (int i = 0; i < nc; i++) {
    seen[i] = 0;
    for (int r = s->off[i]; r < s->off[i + 1]; r++) ucon[r] = i;
  }
  for (int k = 0; k < n; k++) {
    int i = ucon[Q[k]];
    if (!seen[i]) seen[i] = 1, s->corder[na++] = i;
  }
  memcpy(s->ord_rowptr, G->rowptr, ((size_t)nc + 1) * sizeof(int));
  memcpy(s->ord_col, G->col, (size_t)nnzb * sizeof(int));
  s->ord_nc = nc, s->ord_nnzb = nnzb, s->ord_na = na;
  s->ord_flops = flops / n;
  return 0;
}

/* the kept order for the active set: its n unknowns into perm, the kept contacts that are
 * active, in order, then the active ones new to it, each contact's unknowns together. Whether
 * it is good enough is the LDU's analysis in it (analyse: its flops, from L's column counts).
 * That came first from the elimination tree over the contacts (each contact's block of K
 * dense, so the same column counts: the same flops in all 1,261 kept orders tried on S2 10's
 * 400 steps, of which 30 over ORDER_SLACK); an analysis that goes on is one tree walk fewer:
 * S2 10, 60 steps, 237 kept orders tried (15 refused): keptOrder 71.8M -> 15.1M
 * instructions, the LDU's analyses 416.4M -> 438.5M (the 15 refused ones stop before L's
 * columns), the run 5.955G -> 5.918G */
static void keptOrder(cdLcpNewton *s, const cdContactProblem *p, int *perm) {
  int nc = p->ncon, *act = s->oscr, *at = act + nc, na = 0, k = 0;
  for (int i = 0; i < nc; i++) at[i] = -1;
  for (int a = 0; a < s->ord_na; a++) {
    int i = s->corder[a];
    if (modeRows[s->mode[i]]) at[i] = na, act[na++] = i;
  }
  for (int i = 0; i < nc; i++)
    if (modeRows[s->mode[i]] && at[i] < 0) at[i] = na, act[na++] = i;
  for (int j = 0; j < na; j++)
    for (int r = s->off[act[j]]; r < s->off[act[j] + 1]; r++) perm[k++] = r;
}

/* 1 when the system's pattern is the analysed one without assembling it: the same kind, the
 * same unknowns a contact and the same block pattern of G, which the contacts' moving bodies
 * make where the problem has them (no G needed: the body form, or G not yet built) */
static int patternHeld(const cdLcpNewton *s, const cdContactProblem *p, int kind) {
  const cdBlockMatrix *G = &p->G;
  int nc = p->ncon;
  if (s->pat_sym != kind || s->key_nc != nc || s->key_body != (p->cbody != NULL)) return 0;
  for (int i = 0; i < nc; i++)
    if (s->key_rows[i] != modeRows[s->mode[i]]) return 0;
  if (p->cbody) return !memcmp(s->key_cbody, p->cbody, 2 * (size_t)nc * sizeof(int));
  return s->key_nnzb == G->rowptr[nc] && !memcmp(s->key_rowptr, G->rowptr, ((size_t)nc + 1) * sizeof(int)) &&
         !memcmp(s->key_col, G->col, (size_t)s->key_nnzb * sizeof(int));
}

/* records what the analysed pattern is of (patternHeld); 0 ok, -1 no memory */
static int keepKey(cdLcpNewton *s, const cdContactProblem *p) {
  const cdBlockMatrix *G = &p->G;
  int nc = p->ncon;
  s->key_nc = -1;
  unsigned char *rows = s->key_rows; /* (in locals: a byte's store reloads s's fields; S2 10, 60
                                        steps: keepKey 3.5M instructions -> 2.7M) */
  const unsigned char *mode = s->mode;
  for (int i = 0; i < nc; i++) rows[i] = (unsigned char)modeRows[mode[i]];
  s->key_body = p->cbody != NULL;
  if (p->cbody) {
    memcpy(s->key_cbody, p->cbody, 2 * (size_t)nc * sizeof(int));
  } else {
    int nnzb = G->rowptr[nc];
    if (reserve(&s->key_col, &s->kcol_cap, (size_t)nnzb, sizeof(int))) return -1;
    memcpy(s->key_rowptr, G->rowptr, ((size_t)nc + 1) * sizeof(int));
    memcpy(s->key_col, G->col, (size_t)nnzb * sizeof(int));
    s->key_nnzb = nnzb;
  }
  s->key_nc = nc;
  return 0;
}

/* AMD's order of the n unknowns of K in Kp, Ki (n > 0) into perm, and its LU's flops as
 * klu_analyze estimates them (2 NMULTSUBS_LU + NDIV): amd_order's, by amd_2 on the matrix
 * amd_order would build. K's pattern is symmetric (G's block pattern on the active contacts,
 * each block dense) with its rows ascending, so A + A^T is K without its diagonal, which is
 * what amd_1 builds (each column's rows above the diagonal, then below, both ascending; its
 * scans of the lower part meet only transposes), in amd_order's workspace (elbow room
 * nnz / 5 + n): the same order without amd_order's checks and counts, amd_1's transposition
 * and KLU's symbolic object. 0 ok, -1 no memory */
static int amdOrder(cdLcpNewton *s, int n, int *perm, double *flops) {
  size_t nz = (size_t)s->Kp[n]; /* (A + A^T's entries: at most K's) */
  int *w = cd_malloc((8 * (size_t)n + nz + nz / 5 + (size_t)n + 1) * sizeof(int));
  if (!w) return -1;
  int *Pe = w, *Len = Pe + n, *Nv = Len + n, *Next = Nv + n, *Head = Next + n, *Elen = Head + n, *Degree = Elen + n;
  int *W = Degree + n, *Iw = W + n, pfree = 0;
  for (int j = 0; j < n; j++) {
    Pe[j] = pfree;
    for (int t = s->Kp[j]; t < s->Kp[j + 1]; t++)
      if (s->Ki[t] != j) Iw[pfree++] = s->Ki[t];
    Len[j] = pfree - Pe[j];
  }
  double info[AMD_INFO];
  for (int k = 0; k < AMD_INFO; k++) info[k] = -1.0;
  amd_2(n, Pe, Iw, Len, pfree + pfree / 5 + n, pfree, Nv, Next, perm, Head, Elen, Degree, W, NULL, info);
  *flops = 2 * info[AMD_NMULTSUBS_LU] + info[AMD_NDIV];
  cd_free(w);
  return 0;
}
/* the analysis of the pattern in Kp, Ki, reused when it is the last one's (the numeric
 * factorization of an earlier K kept with it); 0 ok, 1 the library failed (out of memory or a
 * numerical breakdown), -1 no memory here */
static int analyse(cdLcpNewton *s, const cdContactProblem *p, int n, int kind, cdLcpNewtonStats *st) {
  int nnz = s->Kp[n], sym = kind == SYS_CHOL;
  /* (the LDU's K: a pattern patternHeld does not hold is new; copied and compared here, S2 10's
   * first 60 steps took 27M instructions more: 7.026G against 7.000G, the same answers) */
  if (kind != SYS_LU && s->pat_sym == kind && s->pat_n == n && s->pat_nnz == nnz &&
      !memcmp(s->pat_p, s->Kp, (size_t)(n + 1) * sizeof(int)) && !memcmp(s->pat_i, s->Ki, (size_t)nnz * sizeof(int)))
    return keepKey(s, p);
  dropAnalysis(s);
  st->analyses++;
  if (sym) {
    /* K's upper triangle in the fill-reducing order, factored as it is (cholAnalyse): no
     * permuted transposes in each factorization (on the 20-cube stack they were a quarter of
     * CHOLMOD's) */
    if (cd_grow(&s->pinv, (size_t)n, sizeof(int)) || cd_grow(&s->ldlt.kfrom, (size_t)nnz, sizeof(int))) return -1;
    int rc = cholAnalyse(s, p, n);
    if (rc) return rc;
  } else if (kind == SYS_LU) {
    /* the LDU in the kept order where it is good enough, else in AMD's (klu_analyze's order,
     * without BTF: K of a pile is one block, or blocks AMD keeps apart; KLU's analysis in
     * that order at a fallback only, factor) */
    int kept = 0;
    if (reserve(&s->kperm, &s->kperm_cap, (size_t)n, sizeof(int))) return -1;
    if (orderHeld(s, p)) {
      keptOrder(s, p, s->kperm);
      int rc = cd_sparseLduAnalyseWithin(s->ldu, n, s->Kp, s->Ki, s->kperm, ORDER_SLACK * s->ord_flops * n, 0);
      if (rc < 0) return -1;
      if (rc == 1) return 1;
      if (rc == 0) kept = 1, st->kept_orders++;
    }
    if (!kept) {
      /* AMD on K as klu_analyze orders it without BTF (its Q and est_flops: K of 3 unknowns
       * or fewer in its own order, else AMD with 2 NMULTSUBS_LU + NDIV) */
      double flops;
      if (n <= 3) {
        for (int k = 0; k < n; k++) s->kperm[k] = k;
        flops = n * (n - 1) / 2 + (n - 1) * n * (2 * n - 1) / 6;
      } else {
        int rc = amdOrder(s, n, s->kperm, &flops);
        if (rc) return rc;
      }
      if (keepOrder(s, p, n, s->kperm, flops)) return -1;
      int rc = cd_sparseLduAnalyseWithin(s->ldu, n, s->Kp, s->Ki, s->kperm, INFINITY, 0);
      if (rc) return rc < 0 ? -1 : 1;
    }
    s->est_flops = cd_sparseLduFlops(s->ldu);
  } else {
    if (!(s->ksym = klu_analyze(n, s->Kp, s->Ki, &s->kc))) {
      return 1;
    }
    s->est_flops = s->ksym->est_flops;
  }
  if (kind != SYS_LU) {
    if (cd_grow(&s->pat_p, (size_t)n + 1, sizeof(int)) || cd_grow(&s->pat_i, (size_t)nnz, sizeof(int))) return -1;
    memcpy(s->pat_p, s->Kp, (size_t)(n + 1) * sizeof(int));
    memcpy(s->pat_i, s->Ki, (size_t)nnz * sizeof(int));
  }
  s->pat_n = n, s->pat_nnz = nnz, s->pat_sym = kind;
  return keepKey(s, p);
}

/* the numeric factorization of K + REG I (of H in the body form, with breg: n its size): K's
 * by the LDU, or by KLU in the LDU's order where the LDU's pivots fail (LDU_TOL; counted in
 * st->lu_fallbacks); 0 ok, 1 failed */
static int factor(cdLcpNewton *s, int n, int kind, int fresh, cdLcpNewtonStats *st) {
  s->numeric = 0;
  s->refactored = 0;
  s->lu_klu = 0;
  s->freg = kind == SYS_BODY ? s->breg : REG;
  if (kind == SYS_CHOL) {
    if (cd_sparseLdltFactor(&s->ldlt, s->Kx)) return 1;
    s->numeric = 1;
    return 0;
  }
  if (kind == SYS_LU) {
    if (!cd_sparseLduFactor(s->ldu, s->Kx, s->ldu_tol)) {
      s->numeric = 1;
      return 0;
    }
    /* a diagonal pivot failed the threshold: KLU with partial pivoting, analysed in the same
     * order (without BTF) the first time */
    st->lu_fallbacks++;
    s->lu_klu = 1;
    if (!s->ksym) {
      s->kc.btf = 0;
      s->ksym = klu_analyze_given(n, s->Kp, s->Ki, s->kperm, s->kperm, &s->kc);
      s->kc.btf = 1;
      if (!s->ksym) return 1;
    }
  }
  /* K unscaled: its rows are in velocity units already, its normal diagonal 1 (S above); H's
   * mix masses and inertias, scaled by their largest entries (KLU's default) */
  s->kc.scale = kind == SYS_LU ? -1 : 2;
  if (kind == SYS_BODY && !fresh && s->knum) {
    /* H of an earlier active set on the same bodies (modes that changed between sticking and
     * sliding keep H's pattern): the pivot order of its LU, without KLU's search (solveModes
     * factors afresh when the solves with it do not converge) */
    if (klu_refactor(s->Kp, s->Ki, s->Kx, s->ksym, s->knum, &s->kc) && s->kc.status == KLU_OK) {
      s->numeric = s->refactored = 1;
      return 0;
    }
  }
  if (s->knum) klu_free_numeric(&s->knum, &s->kc);
  s->knum = klu_factor(s->Kp, s->Ki, s->Kx, s->ksym, &s->kc);
  if (!s->knum || s->kc.status != KLU_OK) { /* (a singular U, KLU_SINGULAR: not taken) */
    if (s->knum) klu_free_numeric(&s->knum, &s->kc);
    return 1;
  }
  s->numeric = 1;
  return 0;
}

/* x = (K + REG I)^-1 b (n) with the factorization held (of this K or an earlier one, of H in
 * the body form); b is overwritten. 0 ok, 1 failed, CD_ERR_NOMEM */
static int solve(cdLcpNewton *s, const cdContactProblem *p, int n, int kind, double *b, double *x) {
  if (kind == SYS_BODY) return solveBody(s, p, b, x);
  if (kind == SYS_CHOL) {
    double *y = s->ldlt_y;
    for (int k = 0; k < n; k++) y[s->pinv[k]] = b[k];
    cd_sparseLdltSolve(&s->ldlt, y);
    for (int k = 0; k < n; k++) x[k] = y[s->pinv[k]];
    return 0;
  }
  memcpy(x, b, (size_t)n * sizeof *x);
  if (!s->lu_klu) {
    cd_sparseLduSolve(s->ldu, x);
    return 0;
  }
  return !klu_solve(s->ksym, s->knum, n, 1, x, &s->kc);
}

/* unknowns -> lambda, c = G lambda + g, z and every contact's residual (s->viol, m/s); returns
 * the largest over vscale: cd_lcpResidual of z. The product G lambda is modeResidual's last
 * when that was of these unknowns (the same lambda, bit for bit), else one more (counted) */
static double check(cdLcpNewton *s, const cdContactProblem *p, int m, const double *D, double *z,
                    cdLcpNewtonStats *st) {
  int nc = p->ncon;
  const double *gl = s->wu; /* G lambda */
  if (s->wu_q) {
    /* lambda and G lambda are modeResidual's last (s->wl by the same operations as below): its
     * lambda taken, the two buffers traded, and a check after this one makes its own. S2 10,
     * 60 steps: check 48.2M instructions -> 32.2M */
    double *t = s->lam;
    s->lam = s->wl, s->wl = t;
    s->wu_q = 0;
  } else {
    for (int i = 0; i < nc; i++) {
      double *l = &s->lam[3 * i];
      l[0] = l[1] = l[2] = 0.0;
      int r = modeRows[s->mode[i]];
      const double *B = &s->B[9 * i];
      for (int a = 0; a < r; a++) {
        double pa = s->sq[i] * s->q[s->off[i] + a];
        l[0] += B[3 * a] * pa, l[1] += B[3 * a + 1] * pa, l[2] += B[3 * a + 2] * pa;
      }
    }
    cd_lcpDelassusMul(p, s->lam, s->u, s->wb);
    st->products++;
    gl = s->u;
  }
  for (int t = 0; t < 3 * nc; t++) s->u[t] = gl[t] + p->g[t];
  double res = 0.0;
  /* every contact's alpha zero at once (one memset a contact took 12.3M instructions of S2 10's
   * first 60 steps; check 32.2M -> 23.8M) */
  memset(&z[nc], 0, (size_t)nc * (size_t)m * sizeof *z);
  for (int i = 0; i < nc; i++) {
    const double *u = &s->u[3 * i], *l = &s->lam[3 * i];
    double *alpha = &z[nc + m * i], *beta = &z[nc + nc * m + i], mu = p->mu[i];
    int k = s->kdir[i], k1 = (k + 1) % m;
    z[i] = l[0];
    switch (s->mode[i]) {
      case MODE_STICK:
        cd_lcpAlphaFromTangent(m, D, &l[1], alpha);
        *beta = 0.0;
        break;
      case MODE_VERTEX:
        alpha[k] = mu * l[0];
        /* frictionless: beta as for a separated contact */
        *beta = mu != 0.0 ? -(D[2 * k] * u[1] + D[2 * k + 1] * u[2]) : cd_lcpSlipSpeed(m, D, u[1], u[2]);
        break;
      case MODE_SEPARATED:
        *beta = cd_lcpSlipSpeed(m, D, u[1], u[2]);
        break;
      case MODE_EDGE: {
        double t = s->sq[i] * s->q[s->off[i] + 1];
        alpha[k] = 0.5 * mu * l[0] + t;
        alpha[k1] = 0.5 * mu * l[0] - t;
        *beta = -0.5 * ((D[2 * k] + D[2 * k1]) * u[1] + (D[2 * k + 1] + D[2 * k1 + 1]) * u[2]);
        break;
      }
      default:
        break;
    }
    s->viol[i] = cd_lcpContactResidualOf(nc, m, D, z, u, i, s->wi[i], mu);
    if (!(s->viol[i] <= res)) res = s->viol[i];
  }
  s->chk_q = 1;
  s->chk_res = res / cd_contactProblemVelocityScale(p);
  return s->chk_res;
}

/* check's answer for s->q: its last one when that was of this q (refine's early-stop test
 * checks the iterate it then returns, early or at its rate: the same z, u, lam and viol), else
 * check's. S2 10, its first 60 steps (callgrind): check 279M -> 173M instructions, the run
 * 7.252G -> 7.147G; the same answers bit for bit (h5same: S2 10 400 steps, S3 20, S4 10) */
static double checked(cdLcpNewton *s, const cdContactProblem *p, int m, const double *D, double *z, cdLcpNewtonStats *st) {
  if (s->chk_q) return s->chk_res;
  return check(s, p, m, D, z, st);
}

/* the mode whose friction impulse lies along v (2, in (t1, t2)): the vertex v points at, else
 * the edge of the sector that holds v */
static void sectorMode(int m, const double *D, const double *v, unsigned char *mode, int *k) {
  int best = 0;
  double dmax = -INFINITY;
  for (int l = 0; l < m; l++) {
    double d = D[2 * l] * v[0] + D[2 * l + 1] * v[1];
    if (d > dmax) dmax = d, best = l;
  }
  double cr = D[2 * best] * v[1] - D[2 * best + 1] * v[0];
  if (fabs(cr) <= 1e-12 * fmax(fabs(v[0]), fabs(v[1]))) {
    *mode = MODE_VERTEX, *k = best;
  } else {
    *mode = MODE_EDGE, *k = cr > 0.0 ? best : (best + m - 1) % m;
  }
}

/* the mode a contact's lambda_n (ln), alpha (m) and beta show (u (3): its velocity): pressing
 * where lambda_n > 0 or, with lambda_n = 0, where it closes or touches (u_n <= vtol);
 * sliding where beta > 0, along the edge of two adjacent positive alpha, else at the vertex
 * of the largest; sticking otherwise */
static void classify(double ln, const double *alpha, double beta, const double *u, double vtol, double mu, int m,
                     unsigned char *mode, int *k) {
  *k = 0;
  if (!(ln > 0.0)) {
    *mode = u[0] > vtol ? MODE_SEPARATED : mu == 0.0 ? MODE_VERTEX : MODE_STICK;
    return;
  }
  if (mu == 0.0) {
    *mode = MODE_VERTEX;
    return;
  }
  if (!(beta > 0.0)) {
    *mode = MODE_STICK;
    return;
  }
  int first = -1, second = -1, npos = 0, big = 0;
  for (int l = 0; l < m; l++) {
    if (alpha[l] > alpha[big]) big = l;
    if (alpha[l] > 0.0) {
      if (first < 0) first = l;
      else second = l;
      npos++;
    }
  }
  if (npos == 2 && second == first + 1) {
    *mode = MODE_EDGE, *k = first;
  } else if (npos == 2 && first == 0 && second == m - 1) {
    *mode = MODE_EDGE, *k = m - 1; /* the pair (m - 1, 0) wraps */
  } else {
    *mode = MODE_VERTEX, *k = big;
  }
}

/* the next mode of a contact that violates its mode's inequalities (s->u: its velocity,
 * z: its (lambda_n, alpha, beta)): the rule of its largest violation, in the residual's units
 *   lambda_n < 0                      -> separated
 *   c_n < 0 while separated           -> sticking (mu = 0: vertex 0)
 *   lambda_T outside the polygon      -> sliding with the impulse along lambda_T
 *   beta < 0 (the slip reversed)      -> sticking
 *   alpha of an edge's direction < 0  -> the other direction's vertex
 *   a direction opposes the slip more -> sliding with the impulse along -c_T */
static void nextMode(const cdLcpNewton *s, const cdContactProblem *p, int m, const double *D, const double *z, int i,
                     unsigned char *mode, int *k) {
  int nc = p->ncon, md = s->mode[i], kd = s->kdir[i];
  const double *u = &s->u[3 * i], *l = &s->lam[3 * i], *alpha = &z[nc + m * i];
  double w = s->wi[i], mu = p->mu[i], beta = z[nc + nc * m + i], worst = 0.0;
  *mode = (unsigned char)md, *k = kd;
  if (md == MODE_SEPARATED) {
    if (u[0] < 0.0) *mode = mu == 0.0 ? MODE_VERTEX : MODE_STICK, *k = 0;
    return;
  }
  if (-w * l[0] > worst) worst = -w * l[0], *mode = MODE_SEPARATED, *k = 0;
  if (md == MODE_STICK) {
    double sum = 0.0;
    for (int a = 0; a < m; a++) sum += alpha[a];
    if (-w * (mu * l[0] - sum) > worst) sectorMode(m, D, &l[1], mode, k);
    return;
  }
  if (mu == 0.0) return;
  if (-beta > worst) worst = -beta, *mode = MODE_STICK, *k = 0;
  if (md == MODE_EDGE) {
    int k1 = (kd + 1) % m;
    if (-w * alpha[kd] > worst) worst = -w * alpha[kd], *mode = MODE_VERTEX, *k = k1;
    if (-w * alpha[k1] > worst) worst = -w * alpha[k1], *mode = MODE_VERTEX, *k = kd;
  }
  double dmin = 0.0;
  for (int a = 0; a < m; a++) dmin = fmin(dmin, D[2 * a] * u[1] + D[2 * a + 1] * u[2] + beta);
  if (-dmin > worst) {
    double v[2] = {-u[1], -u[2]};
    sectorMode(m, D, v, mode, k);
  }
}

/* contact i's own Delassus block G_ii (3 x 3 row-major): G's when it is built, else
 * sum over its moving bodies of J_s M^-1 J_s^T */
static void diagBlock(const cdContactProblem *p, int i, double *W) {
  if (!p->delassus_pending) {
    memcpy(W, &p->G.val[9 * (size_t)p->G.diag[i]], 9 * sizeof *W);
    return;
  }
  memset(W, 0, 9 * sizeof *W);
  for (int sd = 0; sd < 2; sd++) {
    int k = p->cbody[2 * i + sd];
    if (k < 0) continue;
    const double *J = &p->J[36 * (size_t)i + 18 * (size_t)sd], *Ii = &p->Iinv[9 * (size_t)k];
    double mi = p->minv[k];
    for (int r = 0; r < 3; r++) {
      double Ir[3];
      for (int a = 0; a < 3; a++) Ir[a] = Ii[3 * a] * J[6 * r + 3] + Ii[3 * a + 1] * J[6 * r + 4] + Ii[3 * a + 2] * J[6 * r + 5];
      for (int c = 0; c < 3; c++) {
        const double *Jc = &J[6 * c];
        W[3 * c + r] += mi * (J[6 * r] * Jc[0] + J[6 * r + 1] * Jc[1] + J[6 * r + 2] * Jc[2]) +
                        Ir[0] * Jc[3] + Ir[1] * Jc[4] + Ir[2] * Jc[5];
      }
    }
  }
}

/* the mode contact i takes when it alone moves and every other contact keeps its impulse of
 * this iterate: the exact solution of its block LCP (cd_bgsBlockSolve, the block of a
 * Gauss-Seidel sweep) with c = u_i - G_ii lambda_i, read as classify reads a start */
static void localMode(cdLcpNewton *s, const cdContactProblem *p, int m, const double *D, const double *z, int i,
                      double vtol, unsigned char *mode, int *k) {
  int nc = p->ncon;
  double W[9], c[3], un[3], *zb = s->zb;
  const double *u = &s->u[3 * i], *l = &s->lam[3 * i];
  diagBlock(p, i, W);
  for (int r = 0; r < 3; r++) c[r] = u[r] - (W[3 * r] * l[0] + W[3 * r + 1] * l[1] + W[3 * r + 2] * l[2]);
  zb[0] = z[i];
  memcpy(&zb[1], &z[nc + m * i], (size_t)m * sizeof *zb);
  zb[m + 1] = z[nc + nc * m + i];
  cd_bgsBlockSolve(W, p->mu[i], m, D, c, s->wi[i], cd_contactProblemVelocityScale(p), zb,
                   zb + m + 2);
  double ln[3];
  cd_lcpLambdaFromZ(1, m, D, zb, ln); /* (one contact: z = (lambda_n, alpha, beta)) */
  for (int r = 0; r < 3; r++) un[r] = W[3 * r] * ln[0] + W[3 * r + 1] * ln[1] + W[3 * r + 2] * ln[2] + c[r];
  classify(zb[0], zb + 1, zb[m + 1], un, vtol, p->mu[i], m, mode, k);
}

/* a hash of the modes of every contact (FNV-1a over mode and direction): two active sets
 * with the same hash are taken to be the same (a collision costs one active set not tried) */
static unsigned long long modeHash(const cdLcpNewton *s, int nc) {
  unsigned long long h = 1469598103934665603ULL;
  for (int i = 0; i < nc; i++) {
    unsigned v = s->mode[i] | (s->mode[i] >= MODE_VERTEX ? (unsigned)s->kdir[i] << 2 : 0u);
    h = (h ^ v) * 1099511628211ULL;
    h = (h ^ (unsigned)i) * 1099511628211ULL;
  }
  return h;
}

static int violatorCompare(const void *x, const void *y) {
  const cdViolator *a = x, *b = y;
  if (a->v != b->v) return a->v > b->v ? -1 : 1;
  return (a->i > b->i) - (a->i < b->i);
}

/* writes the nv violators in s->rank (largest first) to s->cand: first those that violate most
 * among the contacts they share a moving body with (G's block pattern, when G is built; ties:
 * the lower index), in the same order, then the others (the followers), in the same order;
 * returns how many lead. A wrong mode moves its neighbours' impulses in the active set's
 * solution, so they violate theirs too; their changes wait until the largest one's has been
 * solved (see the opening comment: the pile's landing) */
static int neighbourhoodLeaders(const cdLcpNewton *s, const cdContactProblem *p, int nv) {
  if (p->delassus_pending) {
    for (int h = 0; h < nv; h++) s->cand[h] = s->rank[h].i;
    return nv;
  }
  const cdBlockMatrix *G = &p->G;
  int kept = 0, nf = 0;
  for (int h = 0; h < nv; h++) {
    int i = s->rank[h].i, leads = 1;
    double v = s->viol[i];
    for (int t = G->rowptr[i]; t < G->rowptr[i + 1] && leads; t++) {
      int j = G->col[t];
      leads = j == i || s->viol[j] < v || (s->viol[j] == v && j > i);
    }
    if (leads) s->cand[kept++] = i;
    else s->cand[nv - 1 - nf++] = i; /* (from the back, reversed below) */
  }
  for (int a = kept, b = nv - 1; a < b; a++, b--) {
    int t = s->cand[a];
    s->cand[a] = s->cand[b], s->cand[b] = t;
  }
  return kept;
}

/* the violators of the current iterate above floor (m/s), largest first, to s->cand (the
 * neighbourhoods' leaders first); returns how many, *nlead how many lead */
static int rankViolators(cdLcpNewton *s, const cdContactProblem *p, double floor, int *nlead) {
  int nv = 0;
  for (int i = 0; i < p->ncon; i++)
    if (s->viol[i] > floor) s->rank[nv].v = s->viol[i], s->rank[nv++].i = i;
  qsort(s->rank, (size_t)nv, sizeof *s->rank, violatorCompare);
  *nlead = neighbourhoodLeaders(s, p, nv);
  return nv;
}

/* the mode contact i changes to from the current iterate: localMode's (local), then the rule
 * of nextMode where that is its present mode; 1 when it differs from its present mode */
static int changeOf(cdLcpNewton *s, const cdContactProblem *p, int m, const double *D, const double *z, int i,
                    int local, double vtol, unsigned char *md, int *k) {
  *md = s->mode[i], *k = s->kdir[i];
  if (local) localMode(s, p, m, D, z, i, vtol, md, k);
  if (*md == s->mode[i] && (*k == s->kdir[i] || *md < MODE_VERTEX)) nextMode(s, p, m, D, z, i, md, k);
  return *md != s->mode[i] || (*k != s->kdir[i] && *md >= MODE_VERTEX);
}

#define SAME_MODE(ma, ka, mb, kb) ((ma) == (mb) && ((ka) == (kb) || (ma) < MODE_VERTEX))

/* contact i's alternative modes for the escape (md, k: ESCAPE_ALTS of them): 0 changeOf's, 1
 * the other rule's (nextMode where changeOf took localMode's, localMode's where it took
 * nextMode's), 2 separated (a pressing contact released); bit a of the result set when
 * alternative a differs from the present mode and from the alternatives before it */
static int alternatives(cdLcpNewton *s, const cdContactProblem *p, int m, const double *D, const double *z, int i,
                        int local, double vtol, unsigned char *md, int *k) {
  md[1] = s->mode[i], k[1] = s->kdir[i];
  int c0 = changeOf(s, p, m, D, z, i, local, vtol, &md[0], &k[0]);
  if (local) nextMode(s, p, m, D, z, i, &md[1], &k[1]);
  else localMode(s, p, m, D, z, i, vtol, &md[1], &k[1]);
  int c1 = !SAME_MODE(md[1], k[1], s->mode[i], s->kdir[i]) && !(c0 && SAME_MODE(md[1], k[1], md[0], k[0]));
  md[2] = MODE_SEPARATED, k[2] = 0;
  int c2 = s->mode[i] != MODE_SEPARATED && !(c0 && md[0] == MODE_SEPARATED) && !(c1 && md[1] == MODE_SEPARATED);
  return c0 | c1 << 1 | c2 << 2;
}

/* 1: the active set of the current modes is one solved before (s->seen) */
static int remembered(const cdLcpNewton *s, unsigned long long hash) {
  for (int t = 0; t < s->nseen && t < SEEN_MAX; t++)
    if (s->seen[t] == hash) return 1;
  return 0;
}

/* r = rhs - K q, K q = S C G B S q without K's regularisation, through G (one product,
 * cd_lcpDelassusMul; s->wl, s->wu and s->wb are its scratch); returns r's largest entry in
 * velocity units (each row / sqrt(meff)). (K q's rows go straight into r, then the sums in
 * locals and unrolled: S2 10, 60 steps, modeResidual 97.7M instructions -> 81.7M -> 62.9M) */
static double modeResidual(cdLcpNewton *s, const cdContactProblem *p) {
  int nc = p->ncon;
  const unsigned char *mode = s->mode;
  const int *off = s->off;
  const double *Bs = s->B, *Cs = s->C, *sqs = s->sq, *q = s->q, *rhs = s->rhs;
  double *wl = s->wl, *rs = s->r;
  /* (the sums in locals, the arrays' pointers held: the stores no longer reload them; the
   * loop over a contact's 0-3 unknowns unrolled, the same sums in the same order) */
  for (int i = 0; i < nc; i++) {
    const double *B = &Bs[9 * i], *xi = &q[off[i]];
    double l0 = 0.0, l1 = 0.0, l2 = 0.0, sq = sqs[i];
    int r = modeRows[mode[i]];
    if (r >= 1) {
      double pa = sq * xi[0];
      l0 += B[0] * pa, l1 += B[1] * pa, l2 += B[2] * pa;
      if (r >= 2) {
        pa = sq * xi[1];
        l0 += B[3] * pa, l1 += B[4] * pa, l2 += B[5] * pa;
        if (r >= 3) {
          pa = sq * xi[2];
          l0 += B[6] * pa, l1 += B[7] * pa, l2 += B[8] * pa;
        }
      }
    }
    wl[3 * i] = l0, wl[3 * i + 1] = l1, wl[3 * i + 2] = l2;
  }
  cd_lcpDelassusMul(p, s->wl, s->wu, s->wb);
  s->wu_q = 1; /* (s->wu = G lambda(q): check's product) */
  s->chk_q = 0;
  double rn = 0.0;
  const double *wu = s->wu;
  for (int i = 0; i < nc; i++) {
    int ri = modeRows[mode[i]];
    if (!ri) continue;
    const double *C = &Cs[9 * i], *rh = &rhs[off[i]];
    double *r = &rs[off[i]], sq = sqs[i], u0 = wu[3 * i], u1 = wu[3 * i + 1], u2 = wu[3 * i + 2];
    double v = rh[0] - sq * (C[0] * u0 + C[1] * u1 + C[2] * u2);
    r[0] = v;
    rn = cd_lcpMax(rn, fabs(v) / sq);
    if (ri >= 2) {
      v = rh[1] - sq * (C[3] * u0 + C[4] * u1 + C[5] * u2);
      r[1] = v;
      rn = cd_lcpMax(rn, fabs(v) / sq);
      if (ri >= 3) {
        v = rh[2] - sq * (C[6] * u0 + C[7] * u1 + C[8] * u2);
        r[2] = v;
        rn = cd_lcpMax(rn, fabs(v) / sq);
      }
    }
  }
  return rn;
}

/* iterative refinement of s->q on K with the factorization held, from its residual *rn
 * (s->r), until it is <= rtol or a solve takes less than the share 1 - rate off it (a solve
 * that makes it no smaller is undone), or, while *rn is above the tolerance, until the active
 * set's own violations (check, on the product the refinement made) exceed EARLY_RATIO times
 * *rn while the solves take EARLY_RATE off it (s->early, with s->early_rn: the modes change
 * next whatever the last digits); *rn: the last residual. 0 ok, 1 a solve failed,
 * CD_ERR_NOMEM */
static int refine(cdLcpNewton *s, const cdContactProblem *p, int n, int kind, double rtol, double rate, double *rn,
                  cdLcpNewtonStats *st) {
  for (int k = 0; k < REFINE_MAX && *rn > rtol; k++) {
    int rc = solve(s, p, n, kind, s->r, s->dq);
    if (rc) return rc;
    st->solves++;
    for (int a = 0; a < n; a++) s->q[a] += s->dq[a];
    double rn2 = modeResidual(s, p);
    st->products++;
    if (!(rn2 < *rn)) { /* no better: the part of the data outside K's range is left */
      for (int a = 0; a < n; a++) s->q[a] -= s->dq[a];
      modeResidual(s, p); /* (s->r of the q kept, for a refinement after this one) */
      st->products++;
      return 0;
    }
    double prev = *rn;
    *rn = rn2;
    if (rn2 > s->etol && rn2 <= EARLY_RATE * prev && s->ez) {
      double res = check(s, p, s->em, s->eD, s->ez, st) * cd_contactProblemVelocityScale(p);
      if (res > EARLY_RATIO * rn2) {
        s->early = 1, s->early_rn = rn2;
        return 0;
      }
    }
    if (rn2 > rate * prev) return 0;
  }
  return 0;
}

/* a fresh factorization of the system assembled in s (with KLU's pivot search), then
 * refine from s->q; 0 ok, 1 the factorization or a solve failed, CD_ERR_NOMEM */
static int refactorAndRefine(cdLcpNewton *s, const cdContactProblem *p, int n, int nf, int kind, double rtol,
                             double *rn, cdLcpNewtonStats *st) {
  if (factor(s, nf, kind, 1, st)) {
    dropAnalysis(s);
    return s->kc.status == KLU_OUT_OF_MEMORY ? CD_ERR_NOMEM : 1;
  }
  st->factorizations++;
  st->body += kind == SYS_BODY;
  return refine(s, p, n, kind, rtol, 0.9, rn, st);
}

/* G for a system in K's form (kind), built on demand through lazy (cdLcpNewtonOptions'
 * delassus); 0 ok, 1 G is not built and cannot be (no lazy: the caller's contract broken),
 * CD_ERR_NOMEM */
static int buildDelassus(const cdContactProblem *p, cdContactProblem *lazy, int kind) {
  if (kind == SYS_BODY || !p->delassus_pending) return 0;
  if (!lazy) return 1;
  return cd_contactProblemDelassus(lazy) ? CD_ERR_NOMEM : 0;
}

/* solves the mode equations for s->q: refinement on K from the start below, with the
 * factorization of an earlier K of the same modes' pattern when one is held (a resting stack's K
 * moves by roundoff from step to step: its solves meet the equations as a new one would),
 * and with a new factorization when that one does not meet them to rtol at the rate
 * REUSE_RATE a solve. (The body form's H keeps its pattern when contacts change between
 * sticking and sliding, and with it the factorization of the earlier modes, which did not
 * take the residual down once in 106 tries on S4 10: such a factorization is not tried.) 0 ok, 1 the factorization failed or the equations are inconsistent
 * (their residual stays above ctol: the modes admit no solution), 2 the LU would cost more
 * than flops_max flops an unknown (not factored), CD_ERR_NOMEM */
static int solveModes(cdLcpNewton *s, const cdContactProblem *p, cdContactProblem *lazy, int n, int sym,
                      double rtol, double ctol, double flops_max, int form, cdLcpNewtonStats *st) {
  int nc = p->ncon;
  s->early = 0;
  if (reserveUnknowns(s, n)) return CD_ERR_NOMEM;
  /* rhs = -S C g (g's entries and the arrays' pointers in locals: the stores no longer reload
   * them; S2 10, 60 steps: solveModes' own 76.4M instructions -> 75.5M) */
  const unsigned char *mode = s->mode;
  const int *off = s->off;
  double *rhs = s->rhs;
  for (int i = 0; i < nc; i++) {
    int ri = modeRows[mode[i]];
    if (!ri) continue;
    const double *C = &s->C[9 * i], *g = &p->g[3 * i];
    double g0 = g[0], g1 = g[1], g2 = g[2], msq = -s->sq[i], *rh = &rhs[off[i]];
    for (int a = 0; a < ri; a++) rh[a] = msq * (C[3 * a] * g0 + C[3 * a + 1] * g1 + C[3 * a + 2] * g2);
  }
  /* the start: the current impulses in s->lam (the warm start's in the first iteration),
   * written in the new modes' unknowns; refinement keeps their part along K's null space, so
   * the redundant impulses move only as much as the new equations require */
  for (int i = 0; i < nc; i++) {
    const double *l = &s->lam[3 * i], *B = &s->B[9 * i];
    double *q = &s->q[s->off[i]], iv = 1.0 / s->sq[i];
    switch (s->mode[i]) {
      case MODE_STICK: /* q = B^T lambda */
        q[0] = l[0] * iv;
        q[1] = (B[4] * l[1] + B[5] * l[2]) * iv;
        q[2] = (B[7] * l[1] + B[8] * l[2]) * iv;
        break;
      case MODE_VERTEX:
        q[0] = l[0] * iv;
        break;
      case MODE_EDGE: { /* lambda_T = ln (B[1], B[2]) + t (B[4], B[5]) */
        double e2 = B[4] * B[4] + B[5] * B[5];
        q[0] = l[0] * iv;
        q[1] = ((l[1] - l[0] * B[1]) * B[4] + (l[2] - l[0] * B[2]) * B[5]) / e2 * iv;
        break;
      }
      default:
        break;
    }
  }
  double rn = modeResidual(s, p);
  st->products++;
  if (rn <= rtol) return 0; /* the start solves them already */
  /* K is assembled for a new analysis, and for a new factorization only */
  /* the system factored: K (CHOLMOD when symmetric, else the LDU or KLU), or H in the body form, whose
   * size nf is 6 nbody */
  int body = bodyForm(s, p, form);
  if (body < 0) return CD_ERR_NOMEM;
  int kind = body ? SYS_BODY : sym ? SYS_CHOL : SYS_LU, nf = kind == SYS_BODY ? 6 * p->nbody : n;
  int held = patternHeld(s, p, kind), rc = 0;
  if (!held) {
    if ((rc = buildDelassus(p, lazy, kind))) return rc;
    if (kind == SYS_BODY ? assembleBody(s, p, &nf) : assemble(s, p, n, sym)) return CD_ERR_NOMEM;
    rc = analyse(s, p, nf, kind, st);
    if (rc < 0) return CD_ERR_NOMEM;
  }
  if (!rc && kind != SYS_CHOL && flops_max > 0 && s->est_flops > flops_max * n) return 2;
  if (!rc && held && s->numeric) {
    rc = refine(s, p, n, kind, rtol, REUSE_RATE, &rn, st);
    if (rc == CD_ERR_NOMEM) return rc;
    if (!rc && (rn <= rtol || s->early)) return 0;
    rc = 0; /* (a failed solve with the old factorization: a new one) */
  }
  if (!rc && held && (rc = buildDelassus(p, lazy, kind))) return rc;
  if (!rc && held && (kind == SYS_BODY ? assembleBody(s, p, &nf) : assemble(s, p, n, sym))) return CD_ERR_NOMEM;
  if (rc || factor(s, nf, kind, 0, st)) {
    int oom = kind != SYS_CHOL && s->kc.status == KLU_OUT_OF_MEMORY; /* (K's LDL' fails at a zero pivot only) */
    dropAnalysis(s);
    return oom ? CD_ERR_NOMEM : 1;
  }
  st->factorizations++;
  st->symmetric += kind == SYS_CHOL;
  st->body += kind == SYS_BODY;
  rc = refine(s, p, n, kind, rtol, 0.9, &rn, st);
  if (rc == CD_ERR_NOMEM) return rc;
  if (!rc && s->early) return 0;
  if (s->refactored && (rc || rn > ctol)) {
    /* the earlier pivot order did not hold: factored afresh, with KLU's pivot search */
    rc = refactorAndRefine(s, p, n, nf, kind, rtol, &rn, st);
    if (rc == CD_ERR_NOMEM) return rc;
  }
  if (kind == SYS_BODY && s->freg > REG && (rc || rn > ctol)) {
    /* the refinement stalled at REG_BODY (or these modes admit no solution): factored again
     * at REG, kept from here on */
    s->breg = REG;
    if (assembleBody(s, p, &nf)) return CD_ERR_NOMEM;
    rc = refactorAndRefine(s, p, n, nf, kind, rtol, &rn, st);
  }
  if (rc) return rc == CD_ERR_NOMEM ? rc : 1;
  return rn <= ctol ? 0 : 1;
}

/* the escape, for a call whose first active set was solved before (its changes then lead to
 * sets solved before too, and the call would do nothing): that set solved again, refined
 * fully (EARLY_RATIO off: an early stop may have left exactly the answer's modes unsolved),
 * then, from its modes, the single changes of its violators (the leaders, then the followers,
 * largest first): every one released to separated, then by changeOf's rule, then by the other
 * rule, those that lead to active sets not solved before, one at a time, each from the
 * start's impulses, until one meets the target or budget active sets are solved. The best
 * iterate is kept in s->zbest and *bestres. CD_OK, CD_ERR_NOMEM */
static int escapeTry(cdLcpNewton *s, const cdContactProblem *p, int m, const double *D, double *z,
                     const cdLcpNewtonOptions *opt, int budget, cdLcpNewtonStats *st, double *bestres) {
  int nc = p->ncon, nz = cd_lcpSize(nc, m), local = opt->local_modes, ne = 0, e = -1;
  double tol = opt->tolerance > 0 ? opt->tolerance : 1e-8, vs = cd_contactProblemVelocityScale(p);
  double target = TARGET_SHARE * tol;
  size_t c1 = (size_t)nc, c3 = 3 * (size_t)nc;
  memcpy(s->elam, s->lam, c3 * sizeof(double)); /* the start's impulses */
  while (st->iterations < budget) {
    if (e >= 0) { /* the base's modes with change e */
      memcpy(s->mode, s->emode, c1), memcpy(s->kdir, s->ekdir, c1 * sizeof(int));
      memcpy(s->lam, s->elam, c3 * sizeof(double));
      int i = s->elist[3 * e];
      s->mode[i] = (unsigned char)s->elist[3 * e + 1], s->kdir[i] = s->elist[3 * e + 2];
      unsigned long long hash = modeHash(s, nc);
      if (remembered(s, hash)) {
        if (++e >= ne) break;
        continue;
      }
      s->seen[s->nseen++ % SEEN_MAX] = hash;
    }
    int sym, n = layout(s, p, m, D, &sym), rc = 0;
    s->wu_q = s->chk_q = 0;
    s->early = 0;
    if (e < 0) s->ez = NULL; /* (no early stop) */
    if (n > 0)
      rc = solveModes(s, p, opt->delassus, n, sym, REFINE_SHARE * tol * vs, tol * vs, opt->lu_flops_max, opt->form, st);
    s->ez = z;
    if (rc == CD_ERR_NOMEM) return rc;
    if (rc == 2) { /* over the caller's bound */
      st->costly = 1;
      return CD_OK;
    }
    st->iterations++;
    double res = rc ? INFINITY : checked(s, p, m, D, z, st);
    if (res < *bestres) {
      *bestres = res;
      memcpy(s->zbest, z, (size_t)nz * sizeof *z);
      if (res <= target) break;
    }
    if (e < 0) {
      if (res == INFINITY) break;
      /* the base: its single changes */
      memcpy(s->emode, s->mode, c1), memcpy(s->ekdir, s->kdir, c1 * sizeof(int));
      int nlead, nall = rankViolators(s, p, target * vs, &nlead), nscan = nall < ESCAPE_SCAN ? nall : ESCAPE_SCAN;
      unsigned char md[ESCAPE_SCAN][ESCAPE_ALTS];
      int k[ESCAPE_SCAN][ESCAPE_ALTS], differs[ESCAPE_SCAN];
      for (int h = 0; h < nscan; h++) differs[h] = alternatives(s, p, m, D, z, s->cand[h], local, tol * vs, md[h], k[h]);
      /* every violator's release first, then the rule's changes, then the other rule's */
      static const int aorder[ESCAPE_ALTS] = {2, 0, 1};
      for (int ai = 0; ai < ESCAPE_ALTS; ai++)
        for (int h = 0; h < nscan; h++) {
          int a = aorder[ai];
          if (!(differs[h] >> a & 1)) continue;
          s->elist[3 * ne] = s->cand[h], s->elist[3 * ne + 1] = md[h][a], s->elist[3 * ne + 2] = k[h][a];
          ne++;
        }
    }
    if (++e >= ne) break;
  }
  return CD_OK;
}

int cd_lcpNewtonSolve(cdLcpNewton *s, const cdContactProblem *p, int m, const double *D, double *z,
                      const cdLcpNewtonOptions *opt, cdLcpNewtonStats *stats) {
  cdLcpNewtonStats st;
  memset(&st, 0, sizeof st);
  int nc = p->ncon, nz = cd_lcpSize(nc, m);
  double tol = opt && opt->tolerance > 0 ? opt->tolerance : 1e-8, target = TARGET_SHARE * tol;
  int maxit = opt && opt->max_iterations > 0 ? opt->max_iterations : CD_LCP_NEWTON_ITERATIONS;
  int local = opt && opt->local_modes;
  st.converged = 1;
  if (nc <= 0) {
    if (stats) *stats = st;
    return CD_OK;
  }
  if (reserveContacts(s, p, m)) return CD_ERR_NOMEM;
  double vs = cd_contactProblemVelocityScale(p);
  s->ez = z, s->eD = D, s->em = m, s->etol = tol * vs;
  s->ldu_tol = opt && opt->ldu_tol > 0 ? opt->ldu_tol : LDU_TOL;
  for (int i = 0; i < nc; i++) {
    double me = cd_contactProblemMeff(p, i);
    s->sq[i] = sqrt(me), s->wi[i] = 1.0 / me, s->turn[i] = stickFrame(p, i);
    s->lay_mode[i] = LAY_NONE;
  }
  s->ka_valid = 0; /* (K's blocks are of this call's G, sqrt(meff), turns and directions) */

  /* the first modes: read off the start and its velocities */
  cd_lcpLambdaFromZ(nc, m, D, z, s->lam);
  cd_lcpDelassusMul(p, s->lam, s->u, s->wb);
  for (int t = 0; t < 3 * nc; t++) s->u[t] += p->g[t];
  st.products++;
  for (int i = 0; i < nc; i++)
    classify(z[i], &z[nc + m * i], z[nc + nc * m + i], &s->u[3 * i], tol * vs, p->mu[i], m, &s->mode[i], &s->kdir[i]);

  double bestres = INFINITY;
  int nv = 0, rc = CD_OK;
  /* the iterate is checked into cur, and the best one stays where it was checked (best): z and
   * s->zbest trade roles at each better iterate instead of a copy of it to s->zbest, and z gets
   * the best one at the end unless it holds it. S2 10, 60 steps: 207 copies of z (18.4M
   * instructions) and 85 back (6.7M) -> 40 back (3.8M) */
  double *cur = z, *best = s->zbest;
  size_t c1 = (size_t)nc, c3 = 3 * (size_t)nc;
  if (!(opt && opt->remember)) s->nseen = 0;
  if (opt && opt->escape && s->escaped < ESCAPE_STEP_SETS && remembered(s, modeHash(s, nc))) {
    /* the first active set was solved before: the escape instead */
    if (s->ecap < nc) {
      if (cd_grow(&s->emode, c1, 1) || cd_grow(&s->ekdir, c1, sizeof(int)) || cd_grow(&s->elam, c3, sizeof(double)))
        return CD_ERR_NOMEM;
      s->ecap = nc;
    }
    int budget = maxit + CD_LCP_NEWTON_ESCAPE_SETS;
    if (budget > ESCAPE_STEP_SETS - s->escaped) budget = ESCAPE_STEP_SETS - s->escaped;
    rc = escapeTry(s, p, m, D, z, opt, budget, &st, &bestres);
    s->escaped += st.iterations;
    maxit = 0; /* (no other active set) */
  }
  while (st.iterations < maxit) {
    int sym, n = layout(s, p, m, D, &sym), failed = 0;
    unsigned long long hash = modeHash(s, nc);
    int repeat = remembered(s, hash);
    if (!repeat) s->seen[s->nseen++ % SEEN_MAX] = hash;
    s->wu_q = s->chk_q = 0;
    s->early = 0;
    s->ez = cur;
    if (n > 0 && !repeat) {
      rc = solveModes(s, p, opt ? opt->delassus : NULL, n, sym, REFINE_SHARE * tol * vs, tol * vs, opt ? opt->lu_flops_max : 0.0,
                      opt ? opt->form : CD_LCP_NEWTON_FORM_AUTO, &st);
      if (rc == CD_ERR_NOMEM) break;
      if (rc == 2) { /* over the caller's bound: it solves the step another way */
        st.costly = 1;
        rc = CD_OK;
        break;
      }
      failed = rc != 0; /* a factorization failed, or modes without a solution */
      rc = CD_OK;
    }
    double res = INFINITY;
    if (!repeat) {
      st.iterations++;
      if (!failed) res = checked(s, p, m, D, cur, &st);
    }
    /* no better (or no solution): the best iterate (best) is the answer, and the caller's
     * sweeps go on from it */
    if (!(res < DECREASE * bestres || (res <= tol && res < bestres))) break;
    /* a better iterate: kept, and every violator of it changes mode next */
    bestres = res;
    best = cur, cur = cur == z ? s->zbest : z;
    if (res <= target) break;
    /* its violators (above what the refinement left, when it stopped early) */
    double floor = s->early ? fmax(target * vs, EARLY_FLOOR * s->early_rn) : target * vs;
    rankViolators(s, p, floor, &nv);
    int changed = 0;
    for (int h = 0; h < nv; h++) {
      int i = s->cand[h], k;
      unsigned char md;
      if (changeOf(s, p, m, D, best, i, local, tol * vs, &md, &k)) {
        s->mode[i] = md, s->kdir[i] = k;
        changed++;
      }
    }
    st.mode_changes += changed;
    if (!changed) break; /* the violations are not the modes' (cycling at roundoff) */
  }
  if (bestres < INFINITY && best != z) memcpy(z, best, (size_t)nz * sizeof *z);
  s->ez = NULL;
  st.residual = bestres;
  st.converged = bestres <= tol;
  if (stats) *stats = st;
  return rc;
}
