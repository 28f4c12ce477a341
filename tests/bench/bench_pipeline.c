/* bench_pipeline.c: the contact stages on growing sphere lattices, to show that collision
 * and the problem build (J blocks, v_f, g; then G = J M^-1 J^T assembled from the blocks)
 * grow linearly with the contacts.
 * Writes pipeline.csv: spheres, contacts, stored 3x3 blocks of G, and the median time of
 * each stage over repeats, with the time per contact. */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "bench.h"
#include "collide.h"
#include "problem_build.h"
#include "vec3.h"
#include "world.h"

/* an n x n x n lattice of touching spheres (r = 0.1) standing on the ground */
static void lattice(cdScene *s, cdMaterial *m, int n) {
  memset(s, 0, sizeof *s);
  *m = cd_materialDefault();
  s->nmaterial = 1;
  s->material = m;
  s->has_ground = 1;
  cd_v3set(s->gravity, 0, 0, -9.81);
  s->dt = 0.01;
  s->nbody = n * n * n;
  s->body = calloc((size_t)s->nbody, sizeof *s->body);
  int k = 0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      for (int l = 0; l < n; l++, k++) {
        cdBodyDef *b = &s->body[k];
        snprintf(b->name, sizeof b->name, "s%d", k);
        b->shape = CD_SPHERE;
        b->radius = 0.1;
        b->mass = 1;
        b->orientation[0] = 1;
        cd_v3set(b->position, 0.2 * i, 0.2 * j, 0.1 + 0.2 * l);
      }
  cd_sceneFinish(s);
}

CD_BENCH(contactStagesScaleLinearly) {
  FILE *f = cd_benchOpen(outdir, "pipeline.csv");
  if (!f) return;
  fprintf(f, "spheres,contacts,G_blocks,collide_ms,build_ms,collide_us_per_contact,build_us_per_contact\n");
  int sizes[] = {6, 8, 10, 13, 16};
  for (int si = 0; si < 5; si++) {
    cdScene s;
    cdMaterial m;
    lattice(&s, &m, sizes[si]);
    cdWorld *w = cd_worldMake(&s);
    if (!w) {
      fprintf(stderr, "bench: world of %d bodies failed\n", s.nbody);
      free(s.body);
      continue;
    }
    enum { REPEAT = 7 };
    double tc[REPEAT], tb[REPEAT];
    for (int r = 0; r < REPEAT; r++) {
      double t0 = cd_benchNow();
      cd_collide(w->collider, &s, w->x, w->R, w->v, s.dt, &w->contacts);
      double t1 = cd_benchNow();
      cd_problemBuild(&s, w, s.dt);
      cd_contactProblemDelassus(&w->cp);
      double t2 = cd_benchNow();
      tc[r] = t1 - t0;
      tb[r] = t2 - t1;
    }
    double mc = cd_benchMedian(tc, REPEAT), mb = cd_benchMedian(tb, REPEAT);
    int nc = w->contacts.ncon;
    fprintf(f, "%d,%d,%d,%.3f,%.3f,%.3f,%.3f\n", s.nbody, nc, w->cp.G.nnzb, 1e3 * mc, 1e3 * mb,
            nc ? 1e6 * mc / nc : 0, nc ? 1e6 * mb / nc : 0);
    printf("  %5d spheres %6d contacts: collide %.2f ms, build %.2f ms\n", s.nbody, nc, 1e3 * mc, 1e3 * mb);
    cd_worldFree(w);
    free(s.body);
  }
  fclose(f);
}
