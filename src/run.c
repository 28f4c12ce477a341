/* run.c: the run loop: scene -> backend -> world -> recorder, step after step.
 *
 * Order matters for "nothing lost": everything that can reject the input (the scene, the
 * model, the solver options) is checked before the output file is created, so a bad
 * command leaves an existing file at --out untouched. Once the file exists, every way out
 * (the end, a failure, SIGINT or SIGTERM) goes through cd_recorderClose with a status.
 */
#include "run.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "alloc.h"
#include "backends.h"
#include "fclib_dump.h"
#include "notices.h"
#include "recorder.h"
#include "summary.h"
#include "world.h"
#include "xdmf.h"

static volatile sig_atomic_t g_signal;

static void onSignal(int sig) { g_signal = sig; }

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* SCENE's base name without ".json", plus "-MODEL.h5" */
static void defaultOut(const char *scene_path, const char *model, char *out, size_t n) {
  const char *base = strrchr(scene_path, '/');
  base = base ? base + 1 : scene_path;
  size_t len = strlen(base);
  if (len > 5 && strcmp(base + len - 5, ".json") == 0) len -= 5;
  snprintf(out, n, "%.*s-%s.h5", (int)len, base, model);
}

static void progress(long step, long nstep, double t, double t0, double wall0) {
  double el = now() - wall0, rate = el > 0 ? (double)step / el : 0;
  double eta = rate > 0 ? (double)(nstep - step) / rate : 0;
  fprintf(stderr, "\rcdsim: step %ld/%ld  t = %.4g s  %.0f steps/s  ETA %.0f s   ", step, nstep, t - t0, rate,
          eta);
}

/* a JSON string: quotes, backslashes and control characters escaped */
static void jsonString(const char *s) {
  putchar('"');
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      printf("\\%c", c);
    else if (c < 0x20)
      printf("\\u%04x", c);
    else
      putchar(c);
  }
  putchar('"');
}

/* --summary: one JSON line on stdout (scripts/sweep reads it) */
static void printSummary(const char *scene, const char *model, const char *solver, const char *out,
                         const char *status, int code, const cdSummary *s) {
  fputs("{\"scene\": ", stdout);
  jsonString(scene);
  fputs(", \"model\": ", stdout);
  jsonString(model);
  fputs(", \"solver\": ", stdout);
  jsonString(solver);
  fputs(", \"out\": ", stdout);
  jsonString(out);
  fputs(", \"status\": ", stdout);
  jsonString(status);
  printf(", \"exit\": %d, \"steps\": %ld, \"substeps\": %ld, \"wall_time\": %.6g, \"contacts_mean\": %.6g, "
         "\"contacts_max\": %ld, \"iterations_mean\": %.6g, \"iterations_max\": %ld, \"residual_max\": %.6g, "
         "\"nonconverged_steps\": %ld, \"fallbacks\": %ld, \"penetration_max\": %.6g, \"lift_max\": %.6g, "
         "\"kinetic_energy_final\": %.6g, \"time_collide\": %.6g, \"time_build\": %.6g, \"time_solve\": %.6g, "
         "\"time_record\": %.6g, \"step_time_median\": %.6g, \"step_time_max\": %.6g, \"step_time_max_at\": %ld}\n",
         code, s->steps, s->substeps, s->wall_time, s->contacts_mean, s->contacts_max, s->iterations_mean,
         s->iterations_max, s->residual_max, s->nonconverged_steps, s->fallbacks, s->penetration_max, s->lift_max,
         s->kinetic_energy_final, s->time_collide, s->time_build, s->time_solve, s->time_record,
         s->step_time_median, s->step_time_max, s->step_time_max_at);
  fflush(stdout);
}

int cd_run(const cdRunConfig *cfg) {
  char err[4096];
  cdScene scene;
  char *scene_json = NULL;
  memset(&scene, 0, sizeof scene);
  err[0] = 0;
  int st = cd_sceneLoad(cfg->scene_path, NULL, cfg->sets, cfg->nset, &scene, &scene_json, err, sizeof err);
  if (st) {
    fputs(err[0] ? err : "cdsim: out of memory reading the scene\n", stderr);
    if (err[0] && err[strlen(err) - 1] != '\n') fputc('\n', stderr);
    return st == 2 ? CD_EXIT_USAGE : CD_EXIT_ERROR;
  }
  if (cfg->steps >= 0) {
    scene.nstep = cfg->steps;
  } else if (cfg->duration >= 0) {
    /* the scene's rule for its "duration" (scene.h), and its limit */
    double n = cd_sceneStepCount(cfg->duration, scene.dt);
    if (!(n <= 1e9)) {
      fprintf(stderr, "cdsim: --duration: must be at most 1e9 steps of dt (got %.17g s, %.3g steps)\n",
              cfg->duration, n);
      cd_free(scene_json);
      cd_sceneFree(&scene);
      return CD_EXIT_USAGE;
    }
    scene.nstep = (long)n;
  }

  int code = CD_EXIT_ERROR;
  const char *model = cfg->model ? cfg->model : scene.model;
  const cdBackend *be = cd_backendFind(model);
  void *bstate = NULL;
  cdWorld *w = NULL;
  cdRecorder *rec = NULL;
  if (!be) {
    fprintf(stderr, "cdsim: --model: unknown model '%s' (lcp, ccp, ncp or penalty)\n", model);
    code = CD_EXIT_USAGE;
    goto done;
  }
  if (cfg->dump_dir && be->kind != CD_BACKEND_IMPULSE) {
    fprintf(stderr, "cdsim: --dump-problems: the %s model poses no contact problem (it computes forces from the gaps, "
                    "substep by substep); use --model lcp, ccp or ncp\n", model);
    code = CD_EXIT_USAGE;
    goto done;
  }
  if ((st = be->make(&scene, &cfg->bopt, &bstate, err, sizeof err))) {
    if (st == CD_ERR_USAGE) {
      fprintf(stderr, "cdsim: %s\n", err);
      code = CD_EXIT_USAGE;
    } else {
      fprintf(stderr, "cdsim: out of memory making the %s backend\n", model);
    }
    goto done;
  }
  w = cd_worldMake(&scene);
  if (!w) {
    fprintf(stderr, "cdsim: out of memory (or CHOLMOD failure) making the world of %d bodies\n", scene.nbody);
    goto done;
  }
  /* what will not do what it seems to, once, whatever --quiet (notices.h) */
  cd_noticeOptions(stderr, model, &cfg->bopt);
  cd_noticeMaterials(stderr, model, &scene);
  if (cd_noticeOverlaps(stderr, model, &scene, w) != CD_OK) {
    fprintf(stderr, "cdsim: out of memory looking for initial overlaps\n");
    goto done;
  }

  if (cfg->dump_dir && cd_fclibDumpPrepare(cfg->dump_dir, err, sizeof err)) {
    fprintf(stderr, "cdsim: %s\n", err);
    goto done;
  }
  char outbuf[4096];
  const char *out = cfg->out;
  if (!out) {
    defaultOut(cfg->scene_path, model, outbuf, sizeof outbuf);
    out = outbuf;
  }
  cdRunInfo info = {model, be->solverName(bstate), cfg->command_line, scene_json, scene.dt, cfg->output_every};
  rec = cd_recorderOpen(out, &scene, &info, err, sizeof err);
  if (!rec) {
    fprintf(stderr, "cdsim: %s\n", err);
    goto done;
  }

  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = onSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);

  char status[4400] = "ok";
  code = CD_EXIT_OK;
  int show = !cfg->quiet && isatty(STDERR_FILENO), shown = 0;
  double wall0 = now(), last = wall0, trec = 0;
  if (cd_recorderWriteFrame(rec, &scene, w, NULL)) {
    snprintf(status, sizeof status, "I/O error writing frame 0 to %s", out);
    code = CD_EXIT_ERROR;
  }
  long warned_nc = 0, warned_fb = 0, warned_ch = 0;
  /* a fallback is said on stderr only under a solver the user named: the default of each model
   * is a policy of several methods (the output's solver attribute names those that ran, e.g.
   * "primal+apgd"), and its handovers are its design, counted in /solver/warn_fallback and in
   * the summary's fallbacks like every other */
  int named_solver = cfg->bopt.solver && cfg->bopt.solver[0];
  cdSummary sum;
  cd_summaryInit(&sum);
  for (long k = 1; code == CD_EXIT_OK && k <= scene.nstep; k++) {
    if (g_signal) {
      snprintf(status, sizeof status, "interrupted by %s after step %ld", g_signal == SIGINT ? "SIGINT" : "SIGTERM",
               k - 1);
      code = CD_EXIT_ERROR;
      break;
    }
    cdSolveStats stats;
    double tstep = now();
    st = cd_worldStep(&scene, w, be, bstate, scene.dt, &stats);
    tstep = now() - tstep;
    int bad = st == CD_OK ? cd_worldCheckFinite(w) : -1;
    if (st == CD_ERR_NOMEM) {
      snprintf(status, sizeof status, "out of memory at step %ld (%d contacts)", k, w->contacts.ncon);
      code = CD_EXIT_ERROR;
      break;
    }
    if (st == CD_ERR_LIMIT) {
      snprintf(status, sizeof status,
               "step %ld exceeds the work limit (%d contacts; bodies deep inside each other, or for "
               "--model penalty contacts too stiff: --substeps N bounds it)", k,
               w->contacts.ncon > w->previous.ncon ? w->contacts.ncon : w->previous.ncon);
      code = CD_EXIT_FAILED;
      break;
    }
    if (st != CD_OK) {
      snprintf(status, sizeof status, "solver breakdown at step %ld (t = %.6g s)", k, (double)k * scene.dt);
      code = CD_EXIT_FAILED;
      break;
    }
    cd_summaryStep(&sum, w, &stats);
    cd_summaryStepTime(&sum, tstep);
    if (bad >= 0) {
      snprintf(status, sizeof status, "non-finite state at step %ld (t = %.6g s), body %d '%s'", k,
               (double)k * scene.dt, bad, scene.body[bad].name);
      code = CD_EXIT_FAILED;
      break;
    }
    if (w->warn_nonconverged > warned_nc && warned_nc == 0 && !cfg->quiet)
      fprintf(stderr, "%scdsim: warning: step %ld: the %s solver did not converge (residual %.3g); "
                      "every such step is marked in /solver/converged\n",
              show ? "\n" : "", k, info.solver, stats.residual);
    if (w->warn_fallback > warned_fb && warned_fb == 0 && named_solver && !cfg->quiet)
      fprintf(stderr, "%scdsim: warning: step %ld: the %s solver fell back to another method; counted in "
                      "/solver/warn_fallback\n", show ? "\n" : "", k, cfg->bopt.solver);
    if (w->warn_cholmod > warned_ch && warned_ch == 0 && !cfg->quiet)
      fprintf(stderr, "%scdsim: warning: step %ld: a CHOLMOD factorization of the solver reported a warning; "
                      "counted in /solver/warn_cholmod\n", show ? "\n" : "", k);
    if (cfg->dump_dir && w->cp.ncon > 0) {
      /* the step's problem and the model's answer (w->cp holds both until the next step) */
      double t0 = now();
      char path[2200];
      cd_fclibStepPath(cfg->dump_dir, k, path, sizeof path);
      cdFclibInfo fi = {cfg->scene_path, model, info.solver, k, w->time, scene.dt, stats.residual, stats.converged};
      int bad_dump = cd_contactProblemDelassus(&w->cp);
      if (bad_dump)
        snprintf(err, sizeof err, "%s: out of memory building the problem", path);
      else
        bad_dump = cd_fclibWrite(path, &w->cp, &fi, err, sizeof err);
      trec += now() - t0;
      if (bad_dump) {
        snprintf(status, sizeof status, "I/O error: %s", err);
        code = CD_EXIT_ERROR;
        break;
      }
    }
    warned_nc = w->warn_nonconverged;
    warned_fb = w->warn_fallback;
    warned_ch = w->warn_cholmod;
    if (k % cfg->output_every == 0 || k == scene.nstep) {
      double t0 = now();
      int bad_write = cd_recorderWriteFrame(rec, &scene, w, &stats);
      trec += now() - t0;
      if (bad_write) {
        snprintf(status, sizeof status, "I/O error writing frame of step %ld to %s", k, out);
        code = CD_EXIT_ERROR;
        break;
      }
    }
    if (show && now() - last > 0.25) {
      last = now();
      progress(k, scene.nstep, w->time, 0, wall0);
      shown = 1;
    }
  }
  if (shown) fputc('\n', stderr);
  cd_summaryFinish(&sum, &scene, w, now() - wall0, trec);
  if (cd_recorderWriteSummary(rec, &sum) && code == CD_EXIT_OK) {
    snprintf(status, sizeof status, "I/O error writing the summary to %s", out);
    code = CD_EXIT_ERROR;
  }
  /* the XDMF sidecar, from the file once every frame is on disk and before the status is
   * written: a sidecar that cannot be written is an I/O error of the run */
  if (!cfg->no_xdmf && cd_recorderWriteXdmf(rec, err, sizeof err)) {
    if (code == CD_EXIT_OK) {
      snprintf(status, sizeof status, "I/O error: %s", err);
      code = CD_EXIT_ERROR;
    } else {
      fprintf(stderr, "cdsim: %s\n", err);
    }
  }
  /* the solver that ran (the LCP's default says at the end whether it fell back to bgs) */
  const char *solver_ran = be->solverName(bstate);
  if (cd_recorderClose(rec, status, solver_ran) && code == CD_EXIT_OK) {
    fprintf(stderr, "cdsim: I/O error closing %s\n", out);
    code = CD_EXIT_ERROR;
  }
  rec = NULL;
  if (strcmp(status, "ok") != 0)
    fprintf(stderr, "cdsim: %s; %s holds every frame up to it\n", status, out);
  else if (show) { /* on a terminal, what was done and where it is */
    char xdmf[2100], side[2200] = "";
    if (!cfg->no_xdmf) {
      cd_xdmfPath(out, xdmf, sizeof xdmf);
      snprintf(side, sizeof side, " (ParaView: %s)", xdmf);
    }
    fprintf(stderr, "cdsim: %ld steps, %.6g s simulated in %.3g s under %s (%s): %s%s\n", sum.steps, w->time,
            sum.wall_time, model, solver_ran, out, side);
  }
  if (cfg->summary) printSummary(cfg->scene_path, model, solver_ran, out, status, code, &sum);

done:
  if (be && bstate) be->free(bstate);
  cd_worldFree(w);
  cd_free(scene_json);
  cd_sceneFree(&scene);
  return code;
}
