/* cli_util.h: running the real binary from a test, and reading what it wrote. */
#ifndef CD_CLI_UTIL_H
#define CD_CLI_UTIL_H

#include <stddef.h>

/* one temporary folder for the whole runner, removed when it exits */
const char *cd_cliTmpdir(void);
const char *cd_cliBin(void); /* $CDSIM_BIN */
int cd_cliHaveBin(void);     /* it exists */
/* $CDSIM_ROOT/scenes/NAME */
void cd_cliScenePath(char *buf, size_t n, const char *name);
void cd_cliReadFile(const char *path, char *buf, size_t n); /* "" when missing */
int cd_cliWriteFile(const char *path, const char *text);    /* 0 ok */

/* limits on the child */
typedef struct cdCliLimits {
  int seconds;         /* SIGALRM after this long (a hang); 0: none */
  long fsize;          /* RLIMIT_FSIZE bytes, 0: none */
  int drop_privileges; /* as root, run as nobody (so file permissions apply) */
  long address_space;  /* RLIMIT_AS bytes, 0: none (ignored for a sanitizer build, whose
                          shadow memory is terabytes of address space) */
} cdCliLimits;

/* runs cdsim with the arguments (NULL-terminated, without argv[0]) under lim (may be NULL);
 * stdout and stderr go to out and err (either may be NULL). Returns the exit status, or
 * 128 + signal; *secs (may be NULL) gets the wall time. */
int cd_cliRun(const char *const *args, const cdCliLimits *lim, char *out, size_t outn, char *err, size_t errn,
              double *secs);

/* a string attribute of the root group ("" when missing); -1 when the file does not open */
int cd_cliReadAttr(const char *file, const char *name, char *buf, size_t n);
/* a whole dataset as doubles (*data, may be NULL) and/or its raw bytes (*raw, *rawlen);
 * returns the element count, or -1 */
long cd_cliReadDataset(const char *file, const char *path, double **data, void **raw, size_t *rawlen);

#endif
