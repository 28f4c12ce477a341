/* test_deflate.c: io/deflate.c's streams decode with zlib's inflate to the input, on the
 * shapes of input the recorder gives it and on the corners of the format. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "deflate.h"
#include "test.h"

/* compresses in, inflates it with zlib, and checks it comes back; the stream's length
 * (0 on failure) */
static size_t round_trip(const unsigned char *in, size_t n) {
  size_t cap = cd_deflateBound(n);
  unsigned char *z = malloc(cap), *back = malloc(n + 1);
  size_t m = z && back ? cd_deflate(in, n, z, cap) : 0;
  CHECK_MSG(m > 0, "cd_deflate failed on %zu bytes", n);
  if (m > 0) {
    uLongf got = (uLongf)(n + 1);
    int st = uncompress(back, &got, z, (uLong)m);
    CHECK_MSG(st == Z_OK, "zlib cannot inflate the stream of %zu bytes: %d", n, st);
    CHECK_MSG(st != Z_OK || (got == n && memcmp(back, in, n) == 0), "%zu bytes came back different (%lu bytes)", n,
              (unsigned long)got);
    CHECK_MSG(m <= cap, "stream of %zu bytes over the bound %zu", m, cap);
  }
  free(z);
  free(back);
  return m;
}

static uint64_t rng_next(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

/* HDF5's shuffle of n doubles */
static void shuffle8(const double *x, size_t n, unsigned char *out) {
  const unsigned char *b = (const unsigned char *)x;
  for (size_t k = 0; k < 8; k++)
    for (size_t i = 0; i < n; i++) out[k * n + i] = b[8 * i + k];
}

CD_TEST(deflateStreamsInflateToTheirInputAtBlockAndFormatCorners) {
  uint64_t s = 0x9e3779b97f4a7c15ull;
  size_t sizes[] = {0, 1, 2, 3, 4, 5, 63, 64, 65, 257, 258, 259, 4095, 4096, 32767, 32768, 32769, 65535, 65536, 65537,
                    100003};
  for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
    size_t n = sizes[k];
    unsigned char *b = malloc(n + 1);
    for (size_t i = 0; i < n; i++) b[i] = (unsigned char)rng_next(&s); /* noise: stored blocks */
    round_trip(b, n);
    memset(b, 0, n); /* one long run: distance-1 matches of 258 */
    round_trip(b, n);
    for (size_t i = 0; i < n; i++) b[i] = (unsigned char)(i % 7 == 0 ? rng_next(&s) % 3 : 'a' + i % 5); /* mixed */
    round_trip(b, n);
    free(b);
  }
}

CD_TEST(deflateMatchesAtTheFarthestDistanceAndBeyondComeBack) {
  /* a 4 KiB pattern repeated at distances 32767, 32768 and 32769 (beyond the window) in noise */
  size_t n = 4 * 32768 + 8192;
  unsigned char *b = malloc(n);
  uint64_t s = 12345;
  for (size_t i = 0; i < n; i++) b[i] = (unsigned char)rng_next(&s);
  size_t at[] = {32767, 2 * 32768 + 1, 3 * 32768 + 4000};
  for (int k = 0; k < 3; k++) memcpy(b + at[k], b, 4096);
  size_t m = round_trip(b, n);
  CHECK_MSG(m < n, "a repeated pattern saved nothing: %zu of %zu bytes", m, n);
  free(b);
}

CD_TEST(deflateRandomStructuresComeBackAndCompress) {
  /* inputs built of noise, runs and copies from earlier at every distance and length */
  uint64_t s = 777;
  for (int trial = 0; trial < 60; trial++) {
    size_t n = 1 + rng_next(&s) % 200000;
    unsigned char *b = malloc(n);
    size_t i = 0;
    while (i < n) {
      size_t len = 1 + rng_next(&s) % 600;
      if (len > n - i) len = n - i;
      int kind = (int)(rng_next(&s) % 3);
      if (kind == 0 || i == 0) {
        for (size_t k = 0; k < len; k++) b[i + k] = (unsigned char)rng_next(&s);
      } else if (kind == 1) {
        memset(b + i, (int)(rng_next(&s) & 0xff), len);
      } else {
        size_t d = 1 + rng_next(&s) % (i < 40000 ? i : 40000);
        for (size_t k = 0; k < len; k++) b[i + k] = b[i + k - d]; /* overlapping copies too */
      }
      i += len;
    }
    round_trip(b, n);
    free(b);
  }
}

CD_TEST(deflateShuffledDoublesCompressLikeZlib) {
  /* a smooth column (positions of a settling body), shuffled as HDF5 does: the sign and
   * exponent planes are runs, the mantissa's high bytes repeat; zlib level 4 is the
   * reference the recorder used before */
  size_t n = 4096;
  double *x = malloc(n * sizeof *x);
  for (size_t i = 0; i < n; i++) x[i] = i % 3 == 0 ? 0.0 : 0.5 + 0.1 * exp(-1e-3 * (double)i) * sin(0.01 * i);
  unsigned char *sh = malloc(8 * n);
  shuffle8(x, n, sh);
  size_t ours = round_trip(sh, 8 * n);
  uLongf zl = compressBound(8 * n);
  unsigned char *z = malloc(zl);
  CHECK(compress2(z, &zl, sh, 8 * n, 4) == Z_OK);
  CHECK_MSG(ours > 0 && ours < 8 * n * 3 / 4, "shuffled smooth doubles: %zu of %zu bytes", ours, 8 * n);
  CHECK_MSG(ours <= zl * 105 / 100, "ours %zu bytes, zlib level 4 %lu", ours, (unsigned long)zl);
  free(z);
  free(sh);
  free(x);
}

CD_TEST(deflateRefusesAnOutputTooSmall) {
  unsigned char in[1000], out[64];
  uint64_t s = 5;
  for (size_t i = 0; i < sizeof in; i++) in[i] = (unsigned char)rng_next(&s);
  CHECK(cd_deflate(in, sizeof in, out, sizeof out) == 0);
  cd_deflateRelease();
}
