/* peer_data.h: where the tests find the public problem collections, and their readers
 * (io/problem_file.h). */
#ifndef CD_PEER_DATA_H
#define CD_PEER_DATA_H

#include "problem_file.h"

/* the peer-data folder: $CDSIM_PEER_DATA, or NULL when unset or not a readable directory */
const char *cd_peerDir(void);

/* a problem file of a collection */
typedef struct {
  char path[1400]; /* the file */
  char name[256];  /* its name in its folder */
  char set[64];    /* the collection it belongs to (the caller's label) */
} cdPeerFile;

/* appends the files of dir whose names end in ext to out[n ..] (at most cap in all), sorted
 * by name, labelled set; returns the new count */
int cd_peerListDir(const char *dir, const char *ext, const char *set, cdPeerFile *out, int n, int cap);

/* the friction-contact problems of the peer folder dir (fc-dat/NAME.dat, then fclib/NAME.hdf5),
 * labelled "peer-data"; returns the count (at most cap) */
int cd_peerFrictionFiles(const char *dir, cdPeerFile *out, int cap);

#endif
