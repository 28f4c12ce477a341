/* deflate.h: a fast encoder of zlib streams (RFC 1950 around RFC 1951 deflate) for the
 * recorder's chunks.
 *
 * Why an encoder of our own. On the 1000-sphere pile (S2 10) zlib's deflate was 85% of
 * the writer thread's time and the writer fell behind the steps (recording every frame
 * cost 2.2-2.8x a run recording the last frame only). The stream written here is plain
 * deflate: every reader decodes it with the zlib inflate it already has (HDF5's own
 * deflate filter, h5py, h5dump), no plugin, and the file records the ordinary shuffle and
 * deflate filters (the recorder hands HDF5 the compressed chunks, H5Dwrite_chunk: HDF5
 * 1.10 refuses to replace its predefined filters). Only the encoder differs: a few match
 * candidates a position (no chains, no lazy matching), which find the runs and the
 * frame-to-frame repeats of the shuffled columns, and a Huffman code of its own for every
 * byte plane (or a stored or a fixed-code block, whichever is the shortest).
 */
#ifndef CD_DEFLATE_H
#define CD_DEFLATE_H

#include <stddef.h>

/* the longest stream cd_deflate writes for n input bytes */
size_t cd_deflateBound(size_t n);
/* compresses in[0 .. n) into a zlib stream at out (cap bytes); its length, or 0 when it
 * does not fit or memory ran out. Thread-safe. */
size_t cd_deflate(const unsigned char *in, size_t n, unsigned char *out, size_t cap);
/* frees the work memory cd_deflate keeps between calls (the recorder calls it at close) */
void cd_deflateRelease(void);

#endif
