/* test_residual.c: the one residual every model reports (problem.h) is dimensionless.
 *
 * Scaling every mass (and so every inertia) of a scene by a factor s scales G by 1/s, the
 * impulses lambda by s and the effective normal masses meff by s, and leaves g, the
 * velocities and the trajectory unchanged. A residual that compares impulses with velocities
 * through meff and divides by ||g||_inf is then unchanged, and so is every stopping rule
 * built on it: the solvers take the same iterations (up to roundoff in the iterates) and
 * converge on the same steps. The mixed-unit residuals this replaced did not
 * (||min(z, Az + b)|| with lambda in N s against m/s; the CCP's natural map with a unit step).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "simtest.h"
#include "test.h"

/* the text of scenes/NAME with every "mass": 1 replaced by "mass": MASS */
static char *sceneWithMass(const char *name, const char *mass) {
  const char *root = getenv("CDSIM_ROOT");
  char path[4096];
  snprintf(path, sizeof path, "%s/scenes/%s", root ? root : ".", name);
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *in = malloc((size_t)n + 1), *out = malloc(2 * (size_t)n + 1);
  size_t got = in ? fread(in, 1, (size_t)n, f) : 0;
  fclose(f);
  if (!in || !out) {
    free(in);
    free(out);
    return NULL;
  }
  in[got] = 0;
  const char *key = "\"mass\": 1,";
  char *o = out;
  for (const char *p = in; *p;) {
    if (strncmp(p, key, strlen(key)) == 0) {
      o += sprintf(o, "\"mass\": %s,", mass);
      p += strlen(key);
    } else {
      *o++ = *p++;
    }
  }
  *o = 0;
  free(in);
  return out;
}

typedef struct {
  long iterations, nonconverged;
  double residual_max, x_last[3];
} runFigures;

static int runScaled(const char *name, const char *mass, const char *model, const char *solver, long steps,
                     runFigures *fig) {
  char *text = sceneWithMass(name, mass);
  CHECK_MSG(text != NULL, "cannot read scenes/%s", name);
  if (!text) return -1;
  cdSim sim;
  cdBackendOptions opt = {.solver = solver, .friction_dirs = 4};
  int st = cd_simMake(&sim, text, model, &opt);
  free(text);
  if (st) return -1;
  memset(fig, 0, sizeof *fig);
  int ncontact = 0;
  for (long k = 0; k < steps; k++) {
    if (cd_simStep(&sim)) break;
    fig->iterations += sim.stats.iterations;
    fig->nonconverged += !sim.stats.converged;
    fig->residual_max = fmax(fig->residual_max, sim.stats.residual);
    ncontact += sim.world->contacts.ncon;
  }
  CHECK_MSG(ncontact > 0, "%s had no contact", name);
  memcpy(fig->x_last, &sim.world->x[0], sizeof fig->x_last);
  cd_simFree(&sim);
  return 0;
}

CD_TEST(scalingEveryMassLeavesIterationsAndConvergenceUnchanged) {
  /* x 1024 is exact in binary floating point: every iterate scales exactly, so the counts
   * must be identical. x 1000 adds roundoff, which a first-order method on a hyperstatic stack
   * amplifies (apgd on the cube stack: 5171 sweeps at 1 kg, 2924 at 1000 kg, identical at
   * 1024 kg), so the 10% comparison is made where the iteration does not amplify it. Lemke on
   * the cube stack amplifies it too: its warm starts sit at the tolerance, and whether a step
   * needs 0 or 50 pivots is decided by roundoff (measured on main over 100 steps: 2262
   * iterations at 1 kg, 20 at 1 + 1e-10 kg, 2742 at 1 + 1e-9 kg); the active-set method (the
   * LCP's default there) and the Newton steps of primal do not. bgs (its block solves, clusters
   * and subspace steps, lcp_bgs.c, lcp_subspace.c) took 1268 sweeps on the pile at 1 kg and
   * 2288 at 1024 kg while its subspace step ranked impulse violations (N s) against velocity
   * ones (m/s) and tested slip speeds against 1e-12 times an impulse. */
  const struct {
    const char *scene, *model, *solver;
    long steps;
    int chaotic; /* 1: the count depends on roundoff (x 1024 only) */
  } runs[] = {{"sphere-pile.json", "ccp", "apgd", 100, 0},   {"sphere-pile.json", "ccp", "pgs", 100, 0},
              {"sphere-pile.json", "ccp", NULL, 100, 0},     {"cube-stack.json", "lcp", NULL, 100, 0},
              {"cube-stack.json", "lcp", "lemke", 100, 1},   {"cube-stack.json", "lcp", "bgs", 100, 0},
              {"sphere-pile.json", "lcp", "bgs", 100, 0},    {"cube-stack.json", "ccp", "apgd", 100, 1},
              {"cube-stack.json", "ccp", "primal", 100, 0}};
  for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++) {
    runFigures a, b, c;
    if (runScaled(runs[r].scene, "1", runs[r].model, runs[r].solver, runs[r].steps, &a) ||
        runScaled(runs[r].scene, "1024", runs[r].model, runs[r].solver, runs[r].steps, &b) ||
        runScaled(runs[r].scene, "1000", runs[r].model, runs[r].solver, runs[r].steps, &c))
      continue;
    printf("    %s %s %s: iterations %ld (1 kg), %ld (1024 kg), %ld (1000 kg); not converged %ld, %ld, %ld\n",
           runs[r].scene, runs[r].model, runs[r].solver ? runs[r].solver : "default", a.iterations, b.iterations,
           c.iterations, a.nonconverged, b.nonconverged, c.nonconverged);
    CHECK(a.iterations == b.iterations && a.nonconverged == b.nonconverged);
    CHECK(a.nonconverged == c.nonconverged);
    if (!runs[r].chaotic)
      CHECK_MSG(fabs((double)(a.iterations - c.iterations)) <= 0.1 * (double)a.iterations,
                "%s %s: %ld iterations at 1 kg, %ld at 1000 kg", runs[r].scene, runs[r].model, a.iterations,
                c.iterations);
    /* the same motion: the positions agree to what the solvers' tolerance leaves (1e-6 of
     * ||g|| over a step, accumulated over the run: well below a millimetre) */
    for (int e = 0; e < 3; e++) {
      CHECK(a.x_last[e] == b.x_last[e]);
      CHECK_NEAR(a.x_last[e], c.x_last[e], 1e-4);
    }
  }
}

/* the penalty model's residual is the exact-Coulomb natural map of its step impulses and
 * post-step velocities (penalty.c): a sphere resting on the ground, sunk by delta, with its
 * step impulse l_N = m g dt, meff = m and c̄_N = v+_n - delta / dt ~ -delta / dt, has
 * l - Proj_K(l - ĉ) = ĉ (l - ĉ lies inside the cone), so the residual is
 * (delta / dt) / ||g||_inf with ||g||_inf = g dt + delta / dt: dimensionless, and the size
 * of the sink against what the step's gravity asks of the contact */
CD_TEST(penaltyResidualIsTheSinkOfARestingSphereOverTheStepsVelocityScale) {
  const char *scene =
      "{\"gravity\": [0, 0, -9.81], \"dt\": 0.01, \"steps\": 300, \"ground\": {},"
      " \"bodies\": [{\"name\": \"ball\", \"shape\": \"sphere\", \"radius\": 0.1, \"mass\": 2,"
      " \"position\": [0, 0, 0.1]}]}";
  cdSim sim;
  if (cd_simMake(&sim, scene, "penalty", NULL)) return;
  for (long k = 0; k < sim.scene.nstep; k++)
    if (cd_simStep(&sim)) break;
  const cdContactSet *cs = &sim.world->contacts;
  CHECK(cs->ncon == 1);
  if (cs->ncon == 1) {
    const cdContact *c = &cs->con[0];
    double dt = sim.scene.dt, delta = -c->gap, g = 9.81;
    double cn = c->post_vn - delta / dt;
    double want = fabs(cn) / (g * dt + delta / dt);
    printf("    resting sphere: sink %.4g m (m g / k = %.4g), residual %.6g (closed form %.6g)\n", delta,
           2 * g / 1e6, sim.stats.residual, want);
    CHECK_NEAR(delta, 2 * g / 1e6, 1e-9);
    CHECK_NEAR(sim.stats.residual, want, 1e-6 * want);
    CHECK(sim.stats.converged);
  }
  cd_simFree(&sim);
}
