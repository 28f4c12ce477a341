/* bench_recorder.c: what recording every frame costs a run (issue 13: at most 15% of the
 * run recording only the last frame). The 1000-sphere pile under ccp, stepped in-process
 * and recorded through io/recorder.c every frame or only at the last step, alternately,
 * three times each, at the default iteration limit and at 20 iterations (a cheaper step, where
 * recording weighs more). Writes recorder.csv: one row a run (wall time, ms a step, the
 * main thread's time in cd_recorderWriteFrame and cd_recorderClose a frame, file bytes),
 * then the ratio of the medians, every frame / last frame, for each iteration limit (and
 * that of the main thread's CPU time, which a busy machine disturbs less: the writer's
 * work is not in it, the main thread's share of the chunks at close is). The
 * writer thread's deflate runs on the other core: on a machine whose cores are busy the
 * ratio shows it. Each run is a child process of its own (runForked), as a user's run is. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "backends.h"
#include "bench.h"
#include "recorder.h"
#include "scene_json.h"
#include "world.h"

enum { STEPS = 60, REPS = 3 };

typedef struct {
  double wall;   /* s, the whole run: steps and recording */
  double record; /* s, the main thread in the recorder (frames and close) */
  double close;  /* s, cd_recorderClose: the frames no step overlaps */
  double cpu;    /* s, the main thread's CPU time over the run (CLOCK_THREAD_CPUTIME_ID) */
  long frames;
  long bytes;
} cdRecRun;

static double thread_cpu(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int runOnce(const char *outdir, int every, int max_iterations, cdRecRun *out) {
  const char *root = getenv("CDSIM_ROOT");
  char path[4096], h5[4096], err[4096];
  snprintf(path, sizeof path, "%s/scenes/pile-1000.json", root ? root : ".");
  snprintf(h5, sizeof h5, "%s/recorder-bench.h5", outdir);
  cdScene s;
  char *json = NULL;
  if (cd_sceneLoad(path, NULL, NULL, 0, &s, &json, err, sizeof err)) {
    fprintf(stderr, "bench: %s", err);
    return -1;
  }
  const cdBackend *be = cd_backendFind("ccp");
  cdBackendOptions opt = {.friction_dirs = 4, .max_iterations = max_iterations};
  void *bs = NULL;
  cdWorld *w = NULL;
  cdRecorder *rec = NULL;
  int rc = -1;
  if (be->make(&s, &opt, &bs, err, sizeof err) || !(w = cd_worldMake(&s))) goto done;
  cdRunInfo info = {"ccp", be->solverName(bs), "bench", json, s.dt, every};
  double t0 = cd_benchNow(), c0 = thread_cpu(), in = 0;
  if (!(rec = cd_recorderOpen(h5, &s, &info, err, sizeof err))) goto done;
  double a = cd_benchNow();
  if (cd_recorderWriteFrame(rec, &s, w, NULL)) goto done;
  in += cd_benchNow() - a;
  long frames = 1;
  for (long k = 1; k <= STEPS; k++) {
    cdSolveStats st;
    if (cd_worldStep(&s, w, be, bs, s.dt, &st)) goto done;
    if (k % every == 0 || k == STEPS) {
      a = cd_benchNow();
      if (cd_recorderWriteFrame(rec, &s, w, &st)) goto done;
      in += cd_benchNow() - a;
      frames++;
    }
  }
  a = cd_benchNow();
  int closed = cd_recorderClose(rec, "ok", NULL);
  rec = NULL;
  out->close = cd_benchNow() - a;
  in += out->close;
  out->wall = cd_benchNow() - t0;
  out->cpu = thread_cpu() - c0;
  out->record = in;
  out->frames = frames;
  struct stat st;
  out->bytes = stat(h5, &st) == 0 ? (long)st.st_size : -1;
  rc = closed;
done:
  if (rc) fprintf(stderr, "bench: the recorder run failed (%s)\n", err);
  if (rec) cd_recorderClose(rec, "failed", NULL);
  unlink(h5);
  if (bs) be->free(bs);
  cd_worldFree(w);
  free(json);
  cd_sceneFree(&s);
  return rc;
}

/* runOnce in a child process, its figures back through a pipe. Runs in one process
 * inherit each other's heap: glibc raises its mmap threshold after the first large block is
 * freed, so a later run's growing buffers (the contact problem's G) come from the heap,
 * copied and faulted in, and the same last-frame run took 3.0 or 4.1 ms a step depending
 * on the length of the output directory's name (the ratio 1.14 or 0.96). */
static int runForked(const char *outdir, int every, int max_iterations, cdRecRun *out) {
  int fd[2];
  if (pipe(fd)) return -1;
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) {
    close(fd[0]);
    close(fd[1]);
    return -1;
  }
  if (pid == 0) {
    close(fd[0]);
    cdRecRun r = {0, 0, 0, 0, 0, 0};
    int rc = runOnce(outdir, every, max_iterations, &r);
    if (!rc && write(fd[1], &r, sizeof r) != (ssize_t)sizeof r) rc = -1;
    fflush(NULL);
    _exit(rc ? 1 : 0);
  }
  close(fd[1]);
  ssize_t n = read(fd[0], out, sizeof *out);
  close(fd[0]);
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return -1;
  return n == (ssize_t)sizeof *out && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

CD_BENCH(recordingEveryFrameAgainstTheLastOnly) {
  FILE *f = cd_benchOpen(outdir, "recorder.csv");
  if (!f) return;
  fprintf(f, "max_iterations,every,steps,frames,wall_s,ms_per_step,record_ms_per_frame,close_ms,main_cpu_s,file_bytes\n");
  int limits[2] = {0, 20};
  for (int l = 0; l < 2; l++) {
    double wall[2][REPS], cpu[2][REPS];
    for (int rep = 0; rep < REPS; rep++)
      for (int v = 0; v < 2; v++) {
        int every = v == 0 ? 1 : STEPS;
        cdRecRun r = {0, 0, 0, 0, 0, 0};
        if (runForked(outdir, every, limits[l], &r)) {
          fclose(f);
          return;
        }
        wall[v][rep] = r.wall;
        cpu[v][rep] = r.cpu;
        fprintf(f, "%s,%d,%d,%ld,%.3f,%.2f,%.3f,%.2f,%.3f,%ld\n", limits[l] ? "20" : "default", every, STEPS,
                r.frames, r.wall, 1e3 * r.wall / STEPS, 1e3 * r.record / (double)r.frames, 1e3 * r.close, r.cpu,
                r.bytes);
        printf("  max_iterations %-7s every %2d: %.2f ms a step, the recorder %.3f ms a frame on the main thread "
               "(close %.1f ms), main thread CPU %.3f s\n",
               limits[l] ? "20" : "default", every, 1e3 * r.wall / STEPS, 1e3 * r.record / (double)r.frames,
               1e3 * r.close, r.cpu);
      }
    double all = cd_benchMedian(wall[0], REPS), last = cd_benchMedian(wall[1], REPS);
    double cpu_ratio = cd_benchMedian(cpu[0], REPS) / cd_benchMedian(cpu[1], REPS);
    fprintf(f, "# max_iterations %s: every frame / last frame = %.3f (main thread CPU %.3f)\n",
            limits[l] ? "20" : "default", all / last, cpu_ratio);
    printf("  max_iterations %s: every frame / last frame = %.3f (target <= 1.15), main thread CPU %.3f\n",
           limits[l] ? "20" : "default", all / last, cpu_ratio);
  }
  fclose(f);
}
