/* test_lcp_lemke_scenes.c: the exact LCP solvers inside the backend on the bundled
 * redundant-contact scenes: Lemke (--solver lemke) on the pyramid, the default active-set
 * method on the stack. The cube pyramid (10 cubes, 64 coplanar box-box and box-ground contacts,
 * hyperstatic) made the textbook lexicographic Lemke fail on nearly every step (299 of 300
 * fell back to bgs); with the largest-pivot tie rule and the previous step's basis as the
 * start (lcp_lemke.c) every step is solved by Lemke to its tolerance. The cube stack (10 cubes,
 * 40 contacts, four coplanar ones a face) ended 76 of its 300 steps on a complementary basis
 * whose x_B was infeasible by 1e-10 on degenerate rows; restarting from that basis factored
 * afresh (lcp_lemke.c) solves all but a few, whose data are inconsistent at the tolerance
 * itself (phi/dt of the redundant contacts, phi ~ 1e-12 m, dt = 0.01 s). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "lcp.h"
#include "lcp_bgs.h"
#include "lcp_newton.h"
#include "simtest.h"
#include "test.h"

/* How far a resting stack may move, from the LCP's stopping rule. A loaded contact ends a
 * step with w_N = v_n + phi/dt within the residual r of 0 (r = tol max(1, ||b||_inf); b is
 * below 1 m/s here, so r = tol), so its gap after the step, phi + dt v_n, is within dt r of 0
 * whatever it was before: heights do not drift, and a cube L contact levels up sits within
 * L dt r of its resting height. A sticking contact's slip is within 2 r (the beta row and the
 * balanced directions d, -d), and slips add up: the top of L levels moves sideways at most
 * 2 L sum_k dt r_k over the run. */
static double stackHeightBound(int levels, double dt, double tol) { return levels * dt * tol; }

/* runs every step of the scene, each of which must converge; the fallbacks to bgs and the
 * largest residual over the run as a fraction of what the solver of the step guarantees */
static void runScene(cdSim *sim, long *fallbacks, double *resmax) {
  long steps = sim->scene.nstep, pivots = 0;
  *fallbacks = 0;
  *resmax = 0.0;
  for (long k = 0; k < steps; k++) {
    if (cd_simStep(sim)) break;
    *fallbacks += sim->stats.fallbacks;
    pivots += sim->stats.iterations;
    /* the residual relative to what Lemke's check guarantees: ||min(z, Az + b)||_inf <=
     * 1e-10 max(1, ||b||_inf) in the unscaled LCP (N s and m/s), which the relative residual
     * of lcp.h (impulses / meff_i, then / vscale) can exceed by at most max_i(1 / meff_i) /
     * vscale; a bgs step is held to the default tolerance 1e-8 of that residual itself */
    const cdContactProblem *p = &sim->world->cp;
    double wmax = 0.0, vs = cd_contactProblemVelocityScale(p);
    for (int i = 0; i < p->ncon; i++) wmax = fmax(wmax, 1.0 / p->meff[i]);
    double allowed = sim->stats.fallbacks ? 1e-8 : 1e-10 * fmax(1.0, vs) * fmax(1.0, wmax) / vs;
    *resmax = fmax(*resmax, sim->stats.residual / allowed);
    CHECK_MSG(sim->stats.converged, "step %ld did not converge", k);
  }
  printf("    %ld steps: %ld fallbacks, %ld pivots in all, residual max %.2f of what the solver guarantees\n", steps,
         *fallbacks, pivots, *resmax);
}

CD_TEST(lcpCubePyramidStepsAreSolvedByLemkeWithoutFallback) {
  cdSim sim;
  cdBackendOptions lemke = {.solver = "lemke"};
  if (cd_simMakeFile(&sim, "cube-pyramid.json", "lcp", &lemke, NULL)) return;
  long steps = sim.scene.nstep, fallbacks;
  double resmax;
  runScene(&sim, &fallbacks, &resmax);
  CHECK_MSG(fallbacks == 0, "%ld of %ld steps fell back to bgs", fallbacks, steps);
  CHECK(sim.world->warn_fallback == 0);
  /* Lemke's check on every step (runScene) */
  CHECK(resmax <= 1.0);
  /* the pyramid comes to rest: the top cube stays on its support */
  int top = cd_simBody(&sim, "r3c0");
  CHECK(top >= 0);
  if (top >= 0) {
    /* four contact levels (ground, three rows) below the top's base; Lemke's 1e-10 */
    printf("    top cube: z - 0.7 = %.3g m, x = %.3g m\n", sim.world->x[3 * top + 2] - 0.7, sim.world->x[3 * top]);
    CHECK_NEAR(sim.world->x[3 * top + 2], 0.7, stackHeightBound(4, sim.scene.dt, 1e-10));
    CHECK_NEAR(sim.world->x[3 * top], 0.0, 2 * 4 * (double)steps * sim.scene.dt * 1e-10);
  }
  cd_simFree(&sim);
}

CD_TEST(lcpCubeStackStepsAreSolvedByTheActiveSetMethodOnItsFirstFactorization) {
  /* the default solver on the stack (40 contacts, n = 240: the active-set method,
   * lcp_newton.c): every contact sticks, the modes read off the warm start are the
   * solution's, so every step is one active set, never a fallback (the rare inconsistent
   * step that Lemke handed to bgs above does not arise: the regularised solve returns the
   * least-norm impulses of the redundant contacts); and the resting stack's K moves by
   * roundoff only (its sticking unknowns in frames that do not turn with cd_tangentFrame's
   * ties), so the first step's factorization solves every later one: one a run, not one a
   * step */
  cdSim sim;
  if (cd_simMakeFile(&sim, "cube-stack.json", "lcp", NULL, NULL)) return;
  long steps = sim.scene.nstep, fallbacks = 0, factorizations = 0, itmax = 0;
  double resmax = 0.0;
  for (long k = 0; k < steps; k++) {
    if (cd_simStep(&sim)) break;
    fallbacks += sim.stats.fallbacks;
    factorizations += sim.stats.factorizations;
    if (sim.stats.iterations > itmax) itmax = sim.stats.iterations;
    resmax = fmax(resmax, sim.stats.residual);
    CHECK_MSG(sim.stats.converged, "step %ld did not converge", k);
  }
  printf("    %ld steps: %ld fallbacks, %ld factorizations, at most %ld active sets a step, residual max %.1e\n", steps,
         fallbacks, factorizations, itmax, resmax);
  CHECK(fallbacks == 0 && sim.world->warn_fallback == 0);
  CHECK(itmax == 1 && factorizations >= 1 && factorizations <= 2);
  CHECK(resmax <= 1e-8); /* the default tolerance */
  /* the stack stands: the top cube stays at 1.9 m, on its axis */
  int top = cd_simBody(&sim, "c9");
  CHECK(top >= 0);
  if (top >= 0) {
    printf("    top cube: z - 1.9 = %.3g m, x %.3g, y %.3g\n", sim.world->x[3 * top + 2] - 1.9, sim.world->x[3 * top],
           sim.world->x[3 * top + 1]);
    /* ten contact levels; the last step by Lemke (1e-10) or, at worst, by bgs (1e-8) */
    CHECK_NEAR(sim.world->x[3 * top + 2], 1.9, stackHeightBound(10, sim.scene.dt, fallbacks ? 1e-8 : 1e-10));
    double slip = 2 * 10 * sim.scene.dt * ((double)(steps - fallbacks) * 1e-10 + (double)fallbacks * 1e-8);
    CHECK_NEAR(sim.world->x[3 * top], 0.0, slip);
    CHECK_NEAR(sim.world->x[3 * top + 1], 0.0, slip);
  }
  cd_simFree(&sim);
}

/* a pyramid of rows cubes at its base (a wall: rows, rows - 1 .. 1 cubes, 0.2 m, 1 kg, 1 cm
 * apart, mu = 0.5), the scene of ../shared/peer-bench's S4, into buf */
static void pyramidScene(char *buf, size_t len, int rows) {
  size_t at = (size_t)snprintf(buf, len,
                               "{\"gravity\": [0, 0, -9.81], \"dt\": 0.01, \"duration\": 2.0, \"ground\": {\"material\": "
                               "\"m\"}, \"materials\": {\"m\": {\"friction\": 0.5}}, \"bodies\": [");
  for (int r = 0, b = 0; r < rows; r++)
    for (int j = 0; j < rows - r; j++, b++)
      at += (size_t)snprintf(buf + at, len - at,
                             "%s{\"name\": \"p%d\", \"shape\": \"cube\", \"size\": 0.2, \"mass\": 1.0, \"position\": "
                             "[%.17g, 0, %.17g], \"material\": \"m\"}",
                             b ? ", " : "", b, 0.21 * (j - 0.5 * (rows - r - 1)), 0.1 + 0.2 * r);
  snprintf(buf + at, len - at, "]}");
}

CD_TEST(lcpNewtonBodyFormGivesTheContactFormsVelocitiesOnThePyramid) {
  /* the body form (lcp_newton.c: (K + REG I)^-1 through H = REG M + J^T B S^2 C J, 6 a body)
   * is K's regularised inverse written another way: on an eight-row pyramid's contact
   * problems (36 cubes, 256 contacts, four coplanar ones a face: K has 3-4 times H's entries,
   * so the default takes the body form; sliding modes make both unsymmetric) the active-set
   * method from where 20 bgs sweeps leave the step (as the default's tries start) meets the
   * tolerance with either form, with the same contact velocities (unique; the redundant
   * impulses are not) */
  static char text[16384];
  pyramidScene(text, sizeof text, 8);
  cdSim sim;
  if (cd_simMake(&sim, text, "lcp", NULL)) return;
  const int m = 4;
  double D[8];
  cd_lcpDirections(m, D);
  const long at[3] = {1, 60, 150};
  int bodies = 0; /* factorizations of the body form */
  for (int k = 0, done = 0; k < 3; k++) {
    if (cd_simRun(&sim, at[k] - done)) break;
    done = (int)at[k];
    cdContactProblem *p = &sim.world->cp;
    int nc = p->ncon, n = cd_lcpSize(nc, m);
    CHECK(nc > 0 && p->nbody > 0);
    CHECK(cd_contactProblemDelassus(p) == CD_OK); /* (the step's body form did not need G; bgs does) */
    double *z[3], *u[3];
    cdLcpNewtonStats st[3];
    const int forms[3] = {CD_LCP_NEWTON_FORM_CONTACT, CD_LCP_NEWTON_FORM_BODY, CD_LCP_NEWTON_FORM_AUTO};
    int ok = 1;
    for (int f = 0; f < 3; f++) {
      z[f] = calloc((size_t)n, sizeof *z[f]);
      u[f] = calloc(3 * (size_t)nc, sizeof *u[f]);
      double *lam = calloc(3 * (size_t)nc, sizeof *lam);
      cdLcpNewton *s = cd_lcpNewtonMake();
      cdLcpNewtonOptions o = {.tolerance = 1e-8, .form = forms[f]};
      cdBgsOptions bo = {.tolerance = 1e-12, .max_sweeps = 20};
      if (!z[f] || !u[f] || !lam || !s || cd_bgsSolve(p, m, D, z[f], &bo, NULL) != CD_OK ||
          cd_lcpNewtonSolve(s, p, m, D, z[f], &o, &st[f]) != CD_OK) {
        ok = 0;
      } else {
        cd_lcpLambdaFromZ(nc, m, D, z[f], lam);
        cd_blockMatrixMul(&p->G, lam, u[f]);
        for (int t = 0; t < 3 * nc; t++) u[f][t] += p->g[t];
      }
      free(lam);
      cd_lcpNewtonFree(s);
    }
    CHECK(ok);
    if (ok) {
      printf("    step %ld: %d contacts; K: %d active sets, %d factorizations, residual %.1e; body form: %d, %d, %.1e; "
             "default: %d of %d factorizations in the body form\n",
             at[k], nc, st[0].iterations, st[0].factorizations, st[0].residual, st[1].iterations, st[1].factorizations,
             st[1].residual, st[2].body, st[2].factorizations);
      CHECK(st[0].converged && st[1].converged && st[2].converged);
      CHECK(st[0].body == 0 && st[1].body == st[1].factorizations);
      bodies += st[1].body;
      CHECK(st[2].body == st[2].factorizations);
      double vs = cd_contactProblemVelocityScale(p);
      for (int f = 1; f < 3; f++) {
        double du = 0.0;
        for (int t = 0; t < 3 * nc; t++) du = fmax(du, fabs(u[f][t] - u[0][t]));
        /* each answer within 1e-8 vs of the solution's complementarity: the velocities agree
         * to a few times that */
        CHECK_MSG(du <= 4e-8 * vs, "step %ld: velocities differ by %.2g m/s (%.2g of vscale)", at[k], du, du / vs);
      }
    }
    for (int f = 0; f < 3; f++) free(z[f]), free(u[f]);
  }
  CHECK(bodies > 0);
  cd_simFree(&sim);
}

CD_TEST(lcpEightRowPyramidIsSolvedByActiveSetsEveryStep) {
  /* 36 cubes, 256 contacts, 150-odd of them holding their friction near the polygon's limit:
   * the default's active-set method factors the body form (lcp_newton.c), and where it stops
   * a few modes short, bgs goes on from its best iterate, not from the warm start (lcp.c).
   * Every step meets the tolerance in 1.2 iterations a step on average (before: 7, bgs with
   * subspace steps from the warm start on most steps) and the pyramid stays at rest. The body
   * form's regularisation REG_BODY keeps warm starts that meet the tolerance in their modes:
   * 7 factorizations in 200 steps, at most 3 active sets a step, no fallback (at REG: 34, and
   * 34 iterations and a fallback to bgs on the step whose modes the method did not find) */
  static char text[16384];
  pyramidScene(text, sizeof text, 8);
  cdSim sim;
  if (cd_simMake(&sim, text, "lcp", NULL)) return;
  int top = cd_simBody(&sim, "p35");
  CHECK(top >= 0);
  double z0 = top >= 0 ? sim.world->x[3 * top + 2] : 0.0;
  long steps = sim.scene.nstep, iterations = 0, itmax = 0, factorizations = 0, fallbacks = 0;
  for (long k = 0; k < steps; k++) {
    if (cd_simStep(&sim)) break;
    iterations += sim.stats.iterations;
    factorizations += sim.stats.factorizations;
    fallbacks += sim.stats.fallbacks;
    if (sim.stats.iterations > itmax) itmax = sim.stats.iterations;
    CHECK_MSG(sim.stats.converged && sim.stats.residual <= 1e-8, "step %ld: residual %.2g", k, sim.stats.residual);
  }
  double mean = (double)iterations / (double)steps;
  printf("    %ld steps: %.2f iterations a step (at most %ld), %ld factorizations, %ld fallbacks\n", steps, mean, itmax,
         factorizations, fallbacks);
  CHECK_MSG(mean <= 2.0, "%.2f iterations a step", mean);
  CHECK_MSG(factorizations <= 20 && itmax <= 10 && fallbacks == 0,
            "%ld factorizations, at most %ld iterations a step, %ld fallbacks", factorizations, itmax, fallbacks);
  if (top >= 0) {
    /* resting: eight contact levels below the top cube's base (stackHeightBound) */
    double dz = sim.world->x[3 * top + 2] - z0;
    printf("    top cube: z moved %.3g m\n", dz);
    CHECK(fabs(dz) <= stackHeightBound(8, sim.scene.dt, 1e-8));
  }
  cd_simFree(&sim);
}
