/* xdmf.h: the XDMF sidecar FILE.xdmf of an output file FILE.h5, for ParaView.
 *
 * The sidecar describes the frames of the HDF5 file as a temporal collection and refers
 * to its datasets (HyperSlabs of /trajectory/position, /geometry/box_vertices and the
 * /contacts rows of each frame) rather than copying them: it is a few hundred bytes a
 * frame. It is written from the HDF5 file as it is on disk, so it describes exactly the
 * frames the file holds. ParaView opens it with its "XDMF Reader" (the legacy xdmf2
 * reader); the Xdmf3 readers do not read HyperSlabs (they show no points).
 */
#ifndef CD_XDMF_H
#define CD_XDMF_H

#include <stddef.h>

#include <hdf5.h>

/* the sidecar's path: FILE.h5 -> FILE.xdmf (another name: NAME -> NAME.xdmf) */
void cd_xdmfPath(const char *h5path, char *out, size_t n);
/* writes the sidecar of the cdsim output file h5path; 0, or -1 with a one-line message
 * in err naming the file */
int cd_xdmfWrite(const char *h5path, char *err, size_t errlen);
/* the same from file, the open HDF5 file at h5path (the recorder's, its frames flushed):
 * no second open, which HDF5 refuses or lets close the recorder's objects */
int cd_xdmfWriteFile(hid_t file, const char *h5path, char *err, size_t errlen);
/* removes a sidecar of h5path, when there is a regular file there */
void cd_xdmfRemove(const char *h5path);

#endif
