/* backends.h: the list of contact models, found by name. */
#ifndef CD_BACKENDS_H
#define CD_BACKENDS_H

#include "backend.h"

extern const cdBackend cd_backendLcp;     /* solvers/lcp.c */
extern const cdBackend cd_backendCcp;     /* solvers/ccp.c */
extern const cdBackend cd_backendNcp;     /* solvers/ncp.c */
extern const cdBackend cd_backendPenalty; /* solvers/penalty.c */

/* the backend called name ("lcp", "ccp", "ncp", "penalty"), or NULL */
const cdBackend *cd_backendFind(const char *name);

#endif
