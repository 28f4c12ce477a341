/* test_ncp_fclib.c: FCLIB out (io/fclib_dump.c, --dump-problems) and in (io/problem_file.c,
 * used by cdsim --solve-fclib): a dumped step reads back as the same problem, bit
 * for bit, with the model's solution, whose residual is the one the run reported; libfclib
 * reads the file as well (the writer is cdsim's own) and its own merit function agrees; a
 * write that fails is an error naming the file; and the command line writes one
 * file a step under lcp, ccp and ncp and refuses the penalty model. */
#include <fclib.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc.h"
#include "cli_util.h"
#include "cone.h"
#include "fclib_dump.h"
#include "ncp.h"
#include "peer_data.h"
#include "simtest.h"
#include "test.h"

/* entry (r, c) of block (i, j) of G, 0 when the block is not stored */
static double blockEntry(const cdBlockMatrix *G, int i, int j, int r, int c) {
  for (int k = G->rowptr[i]; k < G->rowptr[i + 1]; k++)
    if (G->col[k] == j) return G->val[9 * (size_t)k + 3 * r + c];
  return 0.0;
}

/* /solution/NAME of an FCLIB file into out (n doubles); 0 ok */
static int readSolution(const char *path, const char *name, double *out, int n) {
  char ds[64];
  snprintf(ds, sizeof ds, "/solution/%s", name);
  double *v = NULL;
  long got = cd_cliReadDataset(path, ds, &v, NULL, NULL);
  if (got != n) {
    free(v);
    return -1;
  }
  memcpy(out, v, (size_t)n * sizeof(double));
  free(v);
  return 0;
}

CD_TEST(dumpedStepReadsBackBitForBitWithItsSolutionAndResidual) {
  const char *scenes[3] = {"sliding-cube.json", "cube-on-cube.json", "sphere-pile.json"};
  const long steps[3] = {5, 3, 12};
  for (int sc = 0; sc < 3; sc++) {
    cdSim s;
    if (cd_simMakeFile(&s, scenes[sc], "ncp", NULL, NULL)) return;
    if (cd_simRun(&s, steps[sc])) {
      cd_simFree(&s);
      return;
    }
    cdContactProblem *p = &s.world->cp;
    CHECK_MSG(p->ncon > 0, "%s: no contacts at step %ld", scenes[sc], steps[sc]);
    char path[512], err[512];
    snprintf(path, sizeof path, "%s/dump-%d.hdf5", cd_cliTmpdir(), sc);
    cdFclibInfo info = {scenes[sc], "ncp", s.backend->solverName(s.bstate), steps[sc], s.world->time, s.scene.dt,
                        s.stats.residual, s.stats.converged};
    CHECK(cd_contactProblemDelassus(p) == 0);
    int rc = cd_fclibWrite(path, p, &info, err, sizeof err);
    CHECK_MSG(rc == 0, "%s", err);
    /* written twice: the second replaces the first */
    rc = cd_fclibWrite(path, p, &info, err, sizeof err);
    CHECK_MSG(rc == 0, "rewrite: %s", err);
    /* a write that cannot be made is one line naming the file, and the process goes on */
    char bad[600];
    snprintf(bad, sizeof bad, "%s/no-such-dir/dump.hdf5", cd_cliTmpdir());
    rc = cd_fclibWrite(bad, p, &info, err, sizeof err);
    CHECK_MSG(rc == -1 && strstr(err, bad) && !strchr(err, '\n') && access(bad, F_OK) != 0, "bad path: rc %d: %s", rc,
              err);
    cdContactProblem q;
    rc = cd_fclibFileRead(path, &q, err, sizeof err);
    CHECK_MSG(rc == 0, "%s", err);
    if (rc) {
      cd_simFree(&s);
      return;
    }
    int n = 3 * p->ncon, same = q.ncon == p->ncon;
    for (int i = 0; same && i < p->ncon; i++) {
      same &= q.mu[i] == p->mu[i];
      for (int j = 0; same && j < p->ncon; j++)
        for (int r = 0; r < 3; r++)
          for (int c = 0; c < 3; c++) same &= blockEntry(&q.G, i, j, r, c) == blockEntry(&p->G, i, j, r, c);
    }
    for (int k = 0; same && k < n; k++) same &= q.g[k] == p->g[k];
    CHECK_MSG(same, "%s: the problem read back differs", scenes[sc]);
    /* the solution: r is the model's impulses, u = G r + q, bit for bit */
    double *r = cd_malloc((size_t)3 * n * sizeof(double)), *u = r ? r + n : NULL, *c = r ? r + 2 * n : NULL;
    if (r && readSolution(path, "r", r, n) == 0 && readSolution(path, "u", u, n) == 0) {
      cd_blockMatrixMul(&p->G, p->lambda, c);
      int sol = 1;
      for (int k = 0; k < n; k++) sol &= r[k] == p->lambda[k] && u[k] == c[k] + p->g[k];
      CHECK_MSG(sol, "%s: /solution is not the step's impulses and velocity", scenes[sc]);
      /* its residual on the problem read back is the one the run reported (meff from G's
       * diagonal here, from the velocity-space form in the run: equal to round-off) */
      double res = cd_ncpResidualOf(&q, r, c, NULL);
      printf("    %s step %ld: %d contacts, residual %.3e reported, %.3e of the file\n", scenes[sc], steps[sc], p->ncon,
             s.stats.residual, res);
      CHECK_NEAR(res, s.stats.residual, 1e-9 * s.stats.residual + 1e-15);
      CHECK(res <= CD_NCP_TOL);
    } else {
      cd_testFail(__FILE__, __LINE__, "%s: /solution/r or /u missing", scenes[sc]);
    }
    /* libfclib reads it as a local problem in CSC, and its merit (the natural map with unit
     * steps over (1 + sqrt ||q||)) is bounded by ours: per contact the unit-step map is at most
     * max(1, meff_i) r_i (the natural map grows with its step, and over it shrinks) */
    struct fclib_local *loc = fclib_read_local(path);
    CHECK(loc != NULL);
    if (loc && r) {
      CHECK(loc->W->nz == -1 && loc->W->m == n && loc->W->n == n && loc->spacedim == 3);
      CHECK(loc->info && loc->info->description && strstr(loc->info->description, "model ncp"));
      struct fclib_solution sol = {NULL, u, r, NULL};
      double merit = fclib_merit_local(loc, MERIT_1, &sol), qn = 0.0, sum = 0.0;
      for (int k = 0; k < n; k++) qn += p->g[k] * p->g[k];
      for (int i = 0; i < p->ncon; i++) {
        double m = cd_contactProblemMeff(p, i);
        sum += (m > 1.0 ? m * m : 1.0);
      }
      double bound = sqrt(sum) * s.stats.residual * cd_contactProblemVelocityScale(p) / (1.0 + sqrt(sqrt(qn)));
      printf("    libfclib merit %.3e (bound %.3e)\n", merit, bound);
      CHECK(merit <= bound * (1.0 + 1e-9) + 1e-15);
    }
    /* fclib_delete_local frees the members, not the struct fclib_read_local allocated */
    if (loc) fclib_delete_local(loc);
    free(loc);
    cd_free(r);
    cd_contactProblemFree(&q);
    cd_simFree(&s);
  }
}

/* the number of files in dir */
static int countFiles(const char *dir) {
  char cmd[600], out[64];
  snprintf(cmd, sizeof cmd, "ls '%s' 2>/dev/null | wc -l", dir);
  FILE *f = popen(cmd, "r");
  if (!f) return -1;
  int n = fgets(out, sizeof out, f) ? atoi(out) : -1;
  pclose(f);
  return n;
}

CD_TEST(dumpProblemsWritesAFileAStepUnderEveryImpulseModelAndRefusesPenalty) {
  if (!cd_cliHaveBin()) CD_SKIP("CDSIM_BIN not built");
  char scene[1024], dir[600], out[600], err[8192], so[4096], file[700];
  cd_cliScenePath(scene, sizeof scene, "sliding-cube.json");
  const char *models[3] = {"lcp", "ccp", "ncp"};
  for (int m = 0; m < 3; m++) {
    snprintf(dir, sizeof dir, "%s/dump-%s", cd_cliTmpdir(), models[m]);
    snprintf(out, sizeof out, "%s/dump-%s.h5", cd_cliTmpdir(), models[m]);
    int code = cd_cliRun((const char *const[]){scene, "--model", models[m], "--steps", "4", "--dump-problems", dir,
                                               "--out", out, "--quiet", NULL},
                         NULL, so, sizeof so, err, sizeof err, NULL);
    CHECK_MSG(code == 0, "%s: exit %d: %s", models[m], code, err);
    /* one file a step with contacts (the CCP's cube is in flight after its kick) */
    double *off = NULL;
    long nf = cd_cliReadDataset(out, "/contacts/offset", &off, NULL, NULL);
    int withContacts = 0;
    for (long k = 1; k + 1 < nf; k++) withContacts += off[k + 1] > off[k];
    free(off);
    CHECK_MSG(nf == 6 && countFiles(dir) == withContacts, "%s: %d files in %s, %d steps with contacts", models[m],
              countFiles(dir), dir, withContacts);
    snprintf(file, sizeof file, "%s/step-00000001.hdf5", dir);
    cdContactProblem q;
    char rerr[512];
    if (cd_fclibFileRead(file, &q, rerr, sizeof rerr)) {
      cd_testFail(__FILE__, __LINE__, "%s: %s", models[m], rerr);
      continue;
    }
    double r[12], c[12];
    CHECK(q.ncon == 4 && readSolution(file, "r", r, 12) == 0);
    /* each model's first step measured on the exact Coulomb problem: the LCP's (4 directions,
     * the slide along one of them) and the NCP's are Coulomb answers; the CCP's kick lifts, and
     * its exact-Coulomb residual is of the size of that lift, mu |c_T| over ||g||_inf */
    double res = cd_ncpResidualOf(&q, r, c, NULL);
    printf("    %s: step 1's answer has exact-Coulomb residual %.2e\n", models[m], res);
    if (m == 1)
      CHECK(res > 0.1);
    else
      CHECK(res <= 1e-8);
    struct fclib_local *loc = fclib_read_local(file);
    char want[32];
    snprintf(want, sizeof want, "model %s", models[m]);
    CHECK(loc && loc->info && loc->info->description && strstr(loc->info->description, want));
    if (loc) fclib_delete_local(loc);
    free(loc);
    cd_contactProblemFree(&q);
  }
  snprintf(dir, sizeof dir, "%s/dump-penalty", cd_cliTmpdir());
  int code = cd_cliRun((const char *const[]){scene, "--model", "penalty", "--steps", "2", "--dump-problems", dir,
                                             "--out", out, "--quiet", NULL},
                       NULL, so, sizeof so, err, sizeof err, NULL);
  CHECK_MSG(code == 2 && strstr(err, "--dump-problems") && strstr(err, "penalty"), "penalty: exit %d: %s", code, err);
  CHECK(access(dir, F_OK) != 0);
  /* a directory that cannot be made: exit 1 naming it, before the output file exists */
  snprintf(out, sizeof out, "%s/never.h5", cd_cliTmpdir());
  code = cd_cliRun((const char *const[]){scene, "--model", "ncp", "--steps", "2", "--dump-problems",
                                         "/proc/cdsim-no-such-dir/x", "--out", out, "--quiet", NULL},
                   NULL, so, sizeof so, err, sizeof err, NULL);
  CHECK_MSG(code == 1 && strstr(err, "/proc/cdsim-no-such-dir/x"), "exit %d: %s", code, err);
  CHECK(access(out, F_OK) != 0);
}

/* cdsim --solve-fclib: a dumped step solved back from zero impulses by ncp (exact Coulomb
 * residual at the tolerance) and by ccp (converged on its own residual, with the lift's
 * Coulomb residual); a file that does not read: exit 1 naming it, the other files still
 * solved; options that belong to a run: exit 2 */
CD_TEST(solveFclibSolvesDumpedStepsAndNamesAFileItCannotRead) {
  if (!cd_cliHaveBin()) CD_SKIP("CDSIM_BIN not built");
  char scene[1024], dir[600], out[600], err[8192], so[8192], file[700], bad[700];
  cd_cliScenePath(scene, sizeof scene, "sliding-cube.json");
  snprintf(dir, sizeof dir, "%s/solve-fclib", cd_cliTmpdir());
  snprintf(out, sizeof out, "%s/solve-fclib.h5", cd_cliTmpdir());
  int code = cd_cliRun((const char *const[]){scene, "--model", "ncp", "--steps", "3", "--dump-problems", dir, "--out",
                                             out, "--quiet", NULL},
                       NULL, so, sizeof so, err, sizeof err, NULL);
  CHECK_MSG(code == 0, "dump: exit %d: %s", code, err);
  snprintf(file, sizeof file, "%s/step-00000002.hdf5", dir);
  snprintf(bad, sizeof bad, "%s/not-a-problem.hdf5", cd_cliTmpdir());
  CHECK(cd_cliWriteFile(bad, "not hdf5\n") == 0);
  code = cd_cliRun((const char *const[]){"--solve-fclib", file, "--model", "ncp", NULL}, NULL, so, sizeof so, err,
                   sizeof err, NULL);
  CHECK_MSG(code == 0 && strstr(so, "step-00000002.hdf5") && strstr(so, " yes "), "ncp: exit %d: %s%s", code, so,
            err);
  code = cd_cliRun((const char *const[]){"--solve-fclib", "--model", "ccp", "--solver", "pgs", file, NULL}, NULL, so,
                   sizeof so, err, sizeof err, NULL);
  CHECK_MSG(code == 0 && strstr(so, " ccp ") && strstr(so, " pgs ") && strstr(so, " yes "), "ccp: exit %d: %s%s",
            code, so, err);
  code = cd_cliRun((const char *const[]){"--solve-fclib", bad, file, NULL}, NULL, so, sizeof so, err, sizeof err, NULL);
  CHECK_MSG(code == 1 && strstr(err, "not-a-problem.hdf5") && strstr(so, "step-00000002.hdf5"), "bad file: exit %d: %s",
            code, err);
  code = cd_cliRun((const char *const[]){"--solve-fclib", file, "--out", out, NULL}, NULL, so, sizeof so, err,
                   sizeof err, NULL);
  CHECK_MSG(code == 2 && strstr(err, "--solve-fclib"), "--out: exit %d: %s", code, err);
}
