/* fuzz_deflate.c: libFuzzer harness of io/deflate.c, the recorder's deflate encoder.
 *
 * Input: any bytes. They are compressed by cd_deflate into a buffer of cd_deflateBound
 * bytes, and the stream is inflated by zlib: what is a bug is a stream longer than the
 * bound, a stream zlib refuses, one that inflates to other bytes, a failure with room and
 * memory enough, or a crash or UB in the encoder. The input is also given as HDF5's shuffle
 * filter leaves 8-byte elements (its byte planes one after the other), the shape the
 * recorder gives it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "deflate.h"

static void round_trip(const unsigned char *in, size_t n) {
  size_t cap = cd_deflateBound(n);
  unsigned char *z = malloc(cap), *back = malloc(n + 1);
  if (!z || !back) abort();
  size_t m = cd_deflate(in, n, z, cap);
  if (m == 0 || m > cap) {
    fprintf(stderr, "cd_deflate: %zu bytes gave %zu (bound %zu)\n", n, m, cap);
    abort();
  }
  uLongf got = (uLongf)(n + 1);
  int st = uncompress(back, &got, z, (uLong)m);
  if (st != Z_OK || got != n || memcmp(back, in, n) != 0) {
    fprintf(stderr, "zlib: status %d, %lu bytes back of %zu\n", st, (unsigned long)got, n);
    abort();
  }
  free(z);
  free(back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  round_trip(data, size);
  size_t ne = size / 8;
  if (ne > 1) {
    unsigned char *sh = malloc(8 * ne);
    if (!sh) abort();
    for (size_t k = 0; k < 8; k++)
      for (size_t i = 0; i < ne; i++) sh[k * ne + i] = data[8 * i + k];
    round_trip(sh, 8 * ne);
    free(sh);
  }
  return 0;
}
