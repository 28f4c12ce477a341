/* peer_data.h: where the tests find the public problem collections, and their readers
 * (io/problem_file.h). */
#ifndef CD_PEER_DATA_H
#define CD_PEER_DATA_H

#include "problem_file.h"

/* the peer-data folder: $CDSIM_PEER_DATA, or NULL when unset or not a readable directory */
const char *cd_peerDir(void);

#endif
