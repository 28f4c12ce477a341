/* linalg.h: glue between cdsim and CHOLMOD. */
#ifndef CD_LINALG_H
#define CD_LINALG_H

#include <cholmod.h>

/* routes SuiteSparse's allocations through src/alloc.h (so that tests can count them and
 * inject failures) and silences its printing; idempotent */
void cd_linalgInit(void);

#endif
