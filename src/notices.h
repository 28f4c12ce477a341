/* notices.h: what a run says once on stderr, before its first step, about input that will
 * not do what it seems to. Not errors (the run goes on as the models define it), and not
 * silenced by --quiet: --quiet silences the run's progress and its numerical warnings,
 * which the output file counts; these are about what the user asked for, and a notice
 * that is not seen is an option silently ignored.
 *
 *   - an option the chosen model does not use (--friction-dirs outside lcp, --substeps
 *     outside penalty, --tolerance / --max-iterations under penalty);
 *   - a penalty parameter without effect (restitution with impact_model 0 only; pull-off
 *     force or adhesion with plasticity_ratio 0, which turns the Edinburgh model off);
 *   - bodies that start inside each other: the impulse models remove an overlap within
 *     one step (phi/dt), so it sets the pair apart at overlap / dt; the penalty model
 *     starts the contact compressed.
 * Each line starts "cdsim: warning: ".
 */
#ifndef CD_NOTICES_H
#define CD_NOTICES_H

#include <stdio.h>

#include "backend.h"
#include "scene.h"
#include "world.h"

/* options given (non-zero in opt: main.c leaves those not given at 0) that `model` does
 * not use; returns the number of lines written */
int cd_noticeOptions(FILE *f, const char *model, const cdBackendOptions *opt);

/* material parameters without effect under `model` (penalty only: the impulse models use
 * friction alone, as README says); returns the number of lines written */
int cd_noticeMaterials(FILE *f, const char *model, const cdScene *scene);

/* the initial overlaps of w (deeper than CD_NOTICE_OVERLAP), the deepest pairs first, at
 * most CD_NOTICE_OVERLAP_LINES of them; returns CD_OK or CD_ERR_NOMEM (nothing said) */
#define CD_NOTICE_OVERLAP 1e-9 /* m: far above the rounding of touching poses (~1e-16 m) */
#define CD_NOTICE_OVERLAP_LINES 5
int cd_noticeOverlaps(FILE *f, const char *model, const cdScene *scene, cdWorld *w);

#endif
