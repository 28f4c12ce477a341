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

/* a backend's --solver: the index of name in names[0 .. n - 1]; -1 when it is none of them,
 * with "MODEL: unknown solver 'NAME' (the names)" in err */
int cd_backendSolverIndex(const char *model, const char *name, const char *const *names, int n, char *err,
                          size_t errlen);

#endif
