/* test_resting.c: bodies resting on bodies, under every model (DESIGN §5): a cube turned 45°
 * rests flat on a bigger cube, a sphere rests on a cube.
 *
 * Bounds. The impulse models hold a resting contact at the solver's tolerance. The LCP's
 * stopping rule leaves a sticking contact slipping by at most 2 r (test_lcp_lemke_scenes.c),
 * r = 1e-8 m/s for bgs (Lemke: 1e-10), and heights return to rest every step: the top of two
 * contact levels moves by at most 2 levels x 2 r x 2 s = 8e-8 m. The CCP (natural-map
 * residual rho <= r_max ||g||_inf in velocity terms, cone.h, r_max the largest residual the
 * run's solver reported: 1e-8 for the default's primal, 1e-6 for apgd; ||g||_inf <= 1.1 m/s)
 * moves the top of n levels at up to (n + sqrt(5) n (n + 1)) rho (test_ccp_physics.c, the
 * stack), n = 2: 15.4 rho, 3.4e-7 m over 2 s at 1e-8. (Measured under primal: 2e-14 m and
 * 6e-14 m.) The exact Coulomb model (ncp: rho <= 1e-8 ||g||_inf, ncp.h) moves the top of
 * n levels at up to (n (2 + 1.5 sqrt 2) + sqrt(5) n (n + 1)) s rho, s = sqrt(1 + mu^2)
 * (test_ncp_physics.c, the stack), n = 2, mu = 0.5: 24.2 rho, 5.3e-7 m over 2 s. The penalty
 * model settles at
 * its static overlaps: each layer sinks by (the weight it carries) / (k x its contact points),
 * and after 2 s (damping ratio ~0.1, decay rate ~140 1/s) it sits there: 0.1% of the sink
 * (linear springs in series). */
#include <string.h>

#include "simtest.h"
#include "test.h"
#include "vec3.h"

typedef struct {
  const char *scene;
  const char *top;           /* the body that rests on the others */
  double sink_penalty;       /* its static sink under the penalty model, m */
} Resting;

static void restsUnderEveryModel(const Resting *r) {
  const char *models[] = {"lcp", "ccp", "penalty", "ncp"};
  const double bound[] = {2 * 2 * 1e-8 * 2.0, 0 /* from the run's residual, below */, 0,
                          (2 * (2 + 1.5 * sqrt(2.0)) + sqrt(5.0) * 2 * 3) * sqrt(1.25) * 1e-8 * 1.1 * 2.0};
  for (int m = 0; m < 4; m++) {
    cdSim s;
    if (cd_simMakeFile(&s, r->scene, models[m], NULL, NULL)) return;
    int i = cd_simBody(&s, r->top);
    CHECK(i >= 0);
    if (i < 0) {
      cd_simFree(&s);
      return;
    }
    double x0[3], q0[4];
    memcpy(x0, &s.world->x[3 * i], sizeof x0);
    memcpy(q0, &s.world->q[4 * i], sizeof q0);
    cd_simRun(&s, s.scene.nstep);
    const double *x = &s.world->x[3 * i], *R = &s.world->R[9 * i];
    double dz = x[2] - x0[2], dxy = hypot(x[0] - x0[0], x[1] - x0[1]);
    if (m != 2) {
      double b = m == 1 ? (2 + sqrt(5.0) * 2 * 3) * s.max_residual * 1.1 * 2.0 : bound[m];
      printf("    %s on %s: moved dz %.1e dxy %.1e (bound %.1e, %s)\n", models[m], r->scene, dz, dxy, b,
             s.backend->solverName(s.bstate));
      CHECK_MSG(fabs(dz) <= b && dxy <= b, "%s on %s: moved dz %.3g dxy %.3g", models[m], r->scene, dz, dxy);
    } else {
      CHECK_MSG(fabs(-dz - r->sink_penalty) <= 1e-3 * r->sink_penalty + 1e-10,
                "penalty on %s: sank %.6g, the static overlaps give %.6g", r->scene, -dz, r->sink_penalty);
      CHECK_MSG(dxy <= 1e-6, "penalty on %s: slid %.3g", r->scene, dxy);
    }
    /* flat: the body's z axis still vertical, and not turned about it */
    CHECK_MSG(R[8] >= 1 - 1e-9, "%s on %s: tilted (R_zz = %.12f)", models[m], r->scene, R[8]);
    double dq = fabs(fabs(cd_v3dot(&q0[1], &s.world->q[4 * i + 1]) + q0[0] * s.world->q[4 * i]) - 1);
    CHECK_MSG(dq <= 1e-9, "%s on %s: turned (1 - |q0.q| = %.3g)", models[m], r->scene, dq);
    CHECK_MSG(s.nonconverged == 0, "%s on %s: %ld steps did not converge", models[m], r->scene, s.nonconverged);
    cd_simFree(&s);
  }
}

CD_TEST(cubeTurned45DegreesRestsFlatOnABiggerCubeUnderEveryModel) {
  /* scenes/cube-on-cube.json: a 27 kg base on 4 corner points, a 1 kg top whose bottom face
   * lies inside the base's top face: its 4 corners; k = 1e7 per point */
  const double k = 1e7, g = 9.81;
  Resting r = {"cube-on-cube.json", "top", 28 * g / (4 * k) + 1 * g / (4 * k)};
  restsUnderEveryModel(&r);
}

CD_TEST(sphereRestsOnACubeUnderEveryModel) {
  /* scenes/sphere-on-cube.json: an 8 kg base on 4 corner points, a 1 kg ball on one point */
  const double k = 1e7, g = 9.81;
  Resting r = {"sphere-on-cube.json", "ball", 9 * g / (4 * k) + 1 * g / k};
  restsUnderEveryModel(&r);
}
