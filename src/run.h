/* run.h: one run from a scene file to an output file (the layer above io/ and solvers/). */
#ifndef CD_RUN_H
#define CD_RUN_H

#include "backend.h"
#include "scene_json.h"

/* exit statuses (DESIGN §1) */
enum { CD_EXIT_OK = 0, CD_EXIT_ERROR = 1, CD_EXIT_USAGE = 2, CD_EXIT_FAILED = 3 };

typedef struct cdRunConfig {
  const char *scene_path;   /* the scene file */
  const char *model;        /* --model, or NULL for the scene's */
  const char *out;          /* --out, or NULL for SCENE-MODEL.h5 in the working directory */
  cdSceneSet *sets;         /* --set overrides (and --dt as /dt), in order */
  int nset;
  double duration;          /* --duration, or < 0 */
  long steps;               /* --steps, or < 0 */
  int output_every;         /* --output-every (>= 1) */
  int quiet;                /* --quiet: no progress, no warnings about the run (notices.h) */
  int summary;              /* --summary: one JSON line of the run summary on stdout */
  int no_xdmf;              /* --no-xdmf: no FILE.xdmf sidecar beside the output */
  cdBackendOptions bopt;    /* --solver, --tolerance, --max-iterations, --friction-dirs, --substeps */
  const char *command_line; /* the arguments joined, for the output file */
  const char *dump_dir;     /* --dump-problems: each step's contact problem as FCLIB into it (io/fclib_dump.h), or NULL */
} cdRunConfig;

/* runs it; messages on stderr; returns an exit status */
int cd_run(const cdRunConfig *cfg);

#endif
