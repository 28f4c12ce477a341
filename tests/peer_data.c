/* peer_data.c: the peer-data folder of the tests (peer_data.h). */
#include "peer_data.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *cd_peerDir(void) {
  const char *dir = getenv("CDSIM_PEER_DATA");
  struct stat st;
  if (!dir || !*dir || stat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || access(dir, R_OK | X_OK) != 0) return NULL;
  return dir;
}

static int fileCmp(const void *a, const void *b) {
  return strcmp(((const cdPeerFile *)a)->name, ((const cdPeerFile *)b)->name);
}

int cd_peerListDir(const char *dir, const char *ext, const char *set, cdPeerFile *out, int n, int cap) {
  DIR *d = opendir(dir);
  if (!d) return n;
  int first = n;
  struct dirent *e;
  size_t le = strlen(ext), ld = strlen(dir);
  while ((e = readdir(d)) && n < cap) {
    size_t l = strlen(e->d_name);
    if (l <= le || strcmp(e->d_name + l - le, ext) != 0 || l >= sizeof out[n].name ||
        ld + 1 + l >= sizeof out[n].path)
      continue;
    snprintf(out[n].path, sizeof out[n].path, "%s/%s", dir, e->d_name);
    snprintf(out[n].name, sizeof out[n].name, "%s", e->d_name);
    snprintf(out[n].set, sizeof out[n].set, "%s", set);
    n++;
  }
  closedir(d);
  qsort(out + first, (size_t)(n - first), sizeof *out, fileCmp);
  return n;
}

int cd_peerFrictionFiles(const char *dir, cdPeerFile *out, int cap) {
  char sub[1200];
  snprintf(sub, sizeof sub, "%s/fc-dat", dir);
  int n = cd_peerListDir(sub, ".dat", "peer-data", out, 0, cap);
  snprintf(sub, sizeof sub, "%s/fclib", dir);
  return cd_peerListDir(sub, ".hdf5", "peer-data", out, n, cap);
}
