/* recorder.h: the HDF5 output file (DESIGN §3), written frame by frame.
 *
 * Datasets are chunked, shuffled, deflate-compressed and extended as the run goes. The
 * main thread copies each frame into a buffer and goes on; a writer thread of the
 * recorder writes the buffered frames in batches and flushes the file after each, so a
 * run that stops early (failure, SIGINT, SIGTERM) still leaves a valid file holding every
 * frame it recorded once cd_recorderClose has run, and a process that dies without it
 * keeps every batch the writer had finished.
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
/* writes every frame given so far and flushes the file (waits for the writer): the file
 * on disk then holds them all. Returns the frames it holds, or -1 after a failed write. */
long cd_recorderFlush(cdRecorder *r);
/* chunks the calling thread compressed for the writer while it waited for it (in
 * cd_recorderFlush, cd_recorderClose, or a frame that found the writer busy), so far */
long cd_recorderChunksHelped(cdRecorder *r);
/* writes the XDMF sidecar (io/xdmf.h) of every frame given so far, after flushing them;
 * 0, or -1 with a one-line message in err. After a failed write (the run then has its I/O
 * error) it writes none and returns 0. */
int cd_recorderWriteXdmf(cdRecorder *r, char *err, size_t errlen);
/* writes the run summary as the attributes of the group /summary (once, before close).
 * Returns 0 or -1. */
int cd_recorderWriteSummary(cdRecorder *r, const cdSummary *s);
/* writes the frames still buffered, then the root attributes status and, unless NULL,
 * solver (what ran, known at the end: e.g. whether the LCP ever fell back to bgs), flushes
 * and closes; r is freed. Returns 0 or -1 (a write failed, now or before). */
int cd_recorderClose(cdRecorder *r, const char *status, const char *solver);

#endif
