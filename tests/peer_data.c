/* peer_data.c: the peer-data folder of the tests (peer_data.h). */
#include "peer_data.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

const char *cd_peerDir(void) {
  const char *dir = getenv("CDSIM_PEER_DATA");
  struct stat st;
  if (!dir || !*dir || stat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || access(dir, R_OK | X_OK) != 0) return NULL;
  return dir;
}
