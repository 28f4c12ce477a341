/* solve_file.h: `cdsim --solve-fclib FILE...`: cdsim's impulse solvers on contact problems
 * read from files (the layer above io/ and solvers/, like run.h). */
#ifndef CD_SOLVE_FILE_H
#define CD_SOLVE_FILE_H

#include "backend.h"

/* solves each file (FCLIB .hdf5, local or global condensed to local, as `--dump-problems`
 * writes them or the FCLIB collection holds them; or a Siconos friction-contact .dat) from
 * zero impulses with the model ("ncp" or "ccp") and the options, and prints one line a file:
 * name, contacts, model, solver, iterations, the model's residual, the exact Coulomb residual
 * (the FCLIB problem's own measure, the same for every model), converged, seconds. Returns
 * an exit status: 0 when every file was read (converged or not: the line says), 1 when one
 * could not be read (a line on stderr names it) or memory ran out, 2 for a bad option. */
int cd_solveFiles(const char *const *files, int nfile, const char *model, const cdBackendOptions *opt);

#endif
