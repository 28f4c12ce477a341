/* recorder.h: the HDF5 output file (DESIGN §3), written frame by frame.
 *
 * Datasets are chunked, deflate-compressed and extended as the run goes; the file is
 * flushed after every batch of frames, so a run that stops early (failure, SIGINT,
 * SIGTERM) still leaves a valid file holding every frame written so far.
 */
#ifndef CD_RECORDER_H
#define CD_RECORDER_H

#include <stddef.h>

#include "backend.h"
#include "scene.h"
#include "summary.h"
#include "world.h"

typedef struct cdRecorder cdRecorder;

typedef struct cdRunInfo {
  const char *model;        /* "lcp" | "ccp" | "penalty" */
  const char *solver;       /* effective solver name */
  const char *command_line; /* the command as typed, arguments joined with spaces */
  const char *scene_json;   /* the effective scene (after --set) */
  double dt;                /* s */
  int output_every;         /* record every Nth step */
} cdRunInfo;

/* creates path (truncating it), writes the root attributes and the /bodies group.
 * NULL on failure, with a one-line message in err. */
cdRecorder *cd_recorderOpen(const char *path, const cdScene *scene, const cdRunInfo *info, char *err,
                            size_t errlen);
/* appends one frame: time, trajectory, energies, solver stats, and the contacts of the
 * step that produced it (world->contacts; for frame 0 none). Returns 0 or -1 (I/O). */
int cd_recorderWriteFrame(cdRecorder *r, const cdScene *scene, const cdWorld *world, const cdSolveStats *stats);
/* writes the run summary as the attributes of the group /summary (once, before close).
 * Returns 0 or -1. */
int cd_recorderWriteSummary(cdRecorder *r, const cdSummary *s);
/* writes status (the root attribute), flushes and closes; r is freed. Returns 0 or -1. */
int cd_recorderClose(cdRecorder *r, const char *status);

#endif
