/* deflate.c: a fast deflate encoder (see deflate.h for why).
 *
 * The stream (RFC 1950): the two header bytes 0x78 0x01 (deflate, 32 KiB window, "fastest"),
 * deflate blocks (RFC 1951), the Adler-32 of the input, big-endian.
 *
 * Matching. The input is cut into tokens, a literal byte or a match (length 4..258 bytes
 * copied from distance 1..32768 back). At each position the four bytes there are compared
 * with those at the distance of the last match (a frame's rows repeat at one distance)
 * and hashed into a table that remembers the last two positions of each hash; the
 * longest of these candidates within the window, extended as far as it goes (at most
 * 258), is taken (greedy: no lazy evaluation); otherwise the byte is a literal. After 32
 * positions in a row without a match the probes thin out (every 2nd position, then every
 * 3rd, ...): the low mantissa bytes of shuffled doubles are noise, and probing each of
 * them costs more than it finds. The first match resets the stride.
 *
 * Blocks. A block ends every 32 KiB of input and at every eighth of it when an eighth is
 * 1 KiB or more (block_stop: the byte planes of HDF5's shuffle filter). Its tokens are coded with the shortest of: a
 * Huffman code built for the block (code lengths limited to 15 bits, the code-length code
 * to 7, by halving the frequencies until the lengths fit), the fixed code of RFC 1951, or
 * stored bytes. The code lengths of a dynamic block are run-length coded with symbols 16,
 * 17, 18.
 *
 * Measured on the chunks of the 1000-sphere pile (64 frames under ccp, 23 MB shuffled, the
 * recorder's chunk shapes): 12.74 MB against zlib level 4's 12.71 MB, and 3-4x zlib's
 * speed; tests/test_deflate.c inflates its streams with zlib.
 */
#include "deflate.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define WINDOW 32768        /* farthest match distance */
#define MIN_MATCH 4         /* the matcher compares four bytes; deflate allows 3 */
#define WAYS 2              /* positions remembered a hash */
#define SKIP 5              /* 2^SKIP misses in a row widen the stride by one */
#define MAX_MATCH 258
#define HASH_BITS 15
#define BLOCK_INPUT 32768   /* input bytes a block; <= 65535 so a stored block is one */
#define NLIT 286            /* literal/length symbols: 0-255, end of block 256, lengths 257-285 */
#define NDIST 30
#define NCL 19              /* code-length code symbols */
#define END_BLOCK 256
#define MATCH_FLAG 0x80000000u

/* ---- the tables of RFC 1951 §3.2.5 ------------------------------------------------ */

static const unsigned short len_base[29] = {3,  4,  5,  6,  7,  8,  9,  10, 11,  13,  15,  17,  19,  23, 27,
                                            31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
static const unsigned char len_extra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                            2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
static const unsigned short dist_base[30] = {1,    2,    3,    4,    5,    7,     9,     13,    17,  25,
                                             33,   49,   65,   97,   129,  193,   257,   385,   513, 769,
                                             1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
static const unsigned char dist_extra[30] = {0, 0, 0, 0, 1, 1, 2, 2,  3,  3,  4,  4,  5,  5,  6,
                                             6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};
/* the order in which the code-length code's lengths are sent */
static const unsigned char cl_order[NCL] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};

static unsigned char len_code[MAX_MATCH + 1]; /* length -> its code - 257 */
static unsigned char dist_code[512];          /* d = distance - 1: [d] below 256, else [256 + (d >> 7)] */
/* the fixed code: its lengths count 288 literal/length symbols (286 and 287 never occur
 * but shift the 9-bit codes) */
static unsigned char fixed_lit_len[288], fixed_dist_len[NDIST];
static unsigned short fixed_lit_code[288], fixed_dist_code[NDIST];
static unsigned char reverse8[256];          /* a byte's bits in reverse order */
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;

static void huff_codes(const unsigned char *len, int n, unsigned short *code);

static void tables_init(void) {
  for (int v = 0; v < 256; v++) {
    int r = 0;
    for (int b = 0; b < 8; b++) r |= ((v >> b) & 1) << (7 - b);
    reverse8[v] = (unsigned char)r;
  }
  for (int c = 0; c < 29; c++) {
    int top = c < 28 ? len_base[c] + (1 << len_extra[c]) : MAX_MATCH + 1;
    for (int l = len_base[c]; l < top && l <= MAX_MATCH; l++) len_code[l] = (unsigned char)c;
  }
  len_code[MAX_MATCH] = 28; /* 258 has a code of its own, not 227 + 31 */
  for (int c = 0; c < NDIST; c++) {
    int lo = dist_base[c] - 1, hi = lo + (1 << dist_extra[c]); /* distances - 1 in [lo, hi) */
    for (int d = lo; d < hi; d++) {
      if (d < 256)
        dist_code[d] = (unsigned char)c;
      else
        dist_code[256 + (d >> 7)] = (unsigned char)c;
    }
  }
  for (int s = 0; s < 288; s++) fixed_lit_len[s] = s < 144 ? 8 : s < 256 ? 9 : s < 280 ? 7 : 8;
  for (int s = 0; s < NDIST; s++) fixed_dist_len[s] = 5;
  huff_codes(fixed_lit_len, 288, fixed_lit_code);
  huff_codes(fixed_dist_len, NDIST, fixed_dist_code);
}

static inline int dcode(unsigned d) { return d < 256 ? dist_code[d] : dist_code[256 + (d >> 7)]; }

/* ---- Huffman codes ------------------------------------------------------------------ */

/* code lengths for the n symbols of freq (0: unused), none longer than limit; at least
 * two symbols get a length when any is used, so that the code is complete */
static void huff_lengths(const uint32_t *freq_in, int n, int limit, unsigned char *len) {
  uint32_t freq[NLIT];
  int sym[NLIT], nsym = 0;
  for (int s = 0; s < n; s++) {
    freq[s] = freq_in[s];
    len[s] = 0;
    if (freq[s]) sym[nsym++] = s;
  }
  if (nsym == 0) { /* no distances: two unused codes, as zlib sends */
    len[0] = len[1] = 1;
    return;
  }
  if (nsym == 1) { /* one symbol: a second, unused, completes a code of length 1 */
    len[sym[0]] = 1;
    len[sym[0] == 0 ? 1 : 0] = 1;
    return;
  }
  /* leaves sorted by frequency, ties by symbol: stable counting passes over the
   * frequencies' bytes, the symbols taken in increasing order (the Shell sort this
   * replaced, on frequency:symbol keys, was 80% of this function and 14% of the writer
   * thread on the 1000-sphere pile: the noisy planes' frequencies are all alike) */
  uint32_t top = 0;
  for (int i = 0; i < nsym; i++) top |= freq[sym[i]];
  int other[NLIT];
  int *from = sym, *to = other;
  for (int shift = 0; shift == 0 || (top >> shift) != 0; shift += 8) {
    int count[257] = {0};
    for (int i = 0; i < nsym; i++) count[((freq[from[i]] >> shift) & 255) + 1]++;
    for (int d = 0; d < 256; d++) count[d + 1] += count[d];
    for (int i = 0; i < nsym; i++) to[count[(freq[from[i]] >> shift) & 255]++] = from[i];
    int *t = from;
    from = to;
    to = t;
  }
  if (from != sym) memcpy(sym, from, (size_t)nsym * sizeof *sym);
  for (;;) {
    /* two queues: the sorted leaves, and the internal nodes in the order made (their
     * weights never decrease); node k < nsym is leaf sym[k], k >= nsym internal */
    uint64_t w[2 * NLIT];
    int parent[2 * NLIT], depth[2 * NLIT];
    for (int i = 0; i < nsym; i++) w[i] = freq[sym[i]];
    int leaf = 0, inode = nsym, next = nsym;
    while (next < 2 * nsym - 1) {
      int pick[2];
      for (int t = 0; t < 2; t++) {
        if (leaf < nsym && (inode >= next || w[leaf] <= w[inode]))
          pick[t] = leaf++;
        else
          pick[t] = inode++;
      }
      w[next] = w[pick[0]] + w[pick[1]];
      parent[pick[0]] = parent[pick[1]] = next;
      next++;
    }
    int root = next - 1, maxd = 0;
    depth[root] = 0;
    for (int k = root - 1; k >= 0; k--) {
      depth[k] = depth[parent[k]] + 1;
      if (k < nsym && depth[k] > maxd) maxd = depth[k];
    }
    if (maxd <= limit) {
      for (int i = 0; i < nsym; i++) len[sym[i]] = (unsigned char)depth[i];
      return;
    }
    for (int i = 0; i < nsym; i++) freq[sym[i]] = (freq[sym[i]] >> 1) | 1;
  }
}

/* the canonical codes of lengths len, bit-reversed (deflate sends codes from their first
 * bit, into a stream filled from the low bit) */
static void huff_codes(const unsigned char *len, int n, unsigned short *code) {
  int count[16] = {0}, next[16];
  for (int s = 0; s < n; s++) count[len[s]]++;
  count[0] = 0;
  int c = 0;
  for (int b = 1; b < 16; b++) {
    c = (c + count[b - 1]) << 1;
    next[b] = c;
  }
  for (int s = 0; s < n; s++) {
    int l = len[s];
    if (!l) continue;
    unsigned v = (unsigned)next[l]++; /* reversed: its 16 bits by bytes, then shifted down */
    code[s] = (unsigned short)(((unsigned)reverse8[v & 255] << 8 | reverse8[v >> 8]) >> (16 - l));
  }
}

/* ---- the bit writer ------------------------------------------------------------------ */

typedef struct {
  unsigned char *p, *end;
  uint64_t bits;
  int nbits;
} cdBits;

static inline void put(cdBits *b, uint32_t v, int n) {
  b->bits |= (uint64_t)v << b->nbits;
  b->nbits += n;
  if (b->nbits >= 32) {
    uint32_t w = (uint32_t)b->bits;
    b->p[0] = (unsigned char)w;
    b->p[1] = (unsigned char)(w >> 8);
    b->p[2] = (unsigned char)(w >> 16);
    b->p[3] = (unsigned char)(w >> 24);
    b->p += 4;
    b->bits >>= 32;
    b->nbits -= 32;
  }
}

/* pads to a byte boundary and writes the pending bytes */
static void align(cdBits *b) {
  while (b->nbits > 0) {
    *b->p++ = (unsigned char)b->bits;
    b->bits >>= 8;
    b->nbits -= 8;
  }
  b->bits = 0;
  b->nbits = 0;
}

/* ---- blocks ---------------------------------------------------------------------------- */

typedef struct {
  uint32_t lit[NLIT], dist[NDIST];
  uint64_t extra_bits; /* the length and distance extra bits of the block's matches */
} cdFreq;

/* run-length codes the lengths (symbols 16, 17, 18); rl[i] = symbol | extra << 8 */
static int cl_encode(const unsigned char *lens, int n, uint32_t *rl, uint32_t *clf) {
  int m = 0;
  for (int i = 0; i < n;) {
    int l = lens[i], run = 1;
    while (i + run < n && lens[i + run] == l) run++;
    int left = run;
    if (l == 0) {
      while (left >= 11) {
        int k = left < 138 ? left : 138;
        rl[m++] = 18u | (uint32_t)(k - 11) << 8;
        clf[18]++;
        left -= k;
      }
      if (left >= 3) {
        rl[m++] = 17u | (uint32_t)(left - 3) << 8;
        clf[17]++;
        left = 0;
      }
    } else {
      rl[m++] = (uint32_t)l;
      clf[l]++;
      left--;
      while (left >= 3) {
        int k = left < 6 ? left : 6;
        rl[m++] = 16u | (uint32_t)(k - 3) << 8;
        clf[16]++;
        left -= k;
      }
    }
    while (left-- > 0) {
      rl[m++] = (uint32_t)l;
      clf[l]++;
    }
    i += run;
  }
  return m;
}

/* the bits the block's tokens take under code lengths ll, dl (end of block included) */
static uint64_t tokens_cost(const cdFreq *f, const unsigned char *ll, const unsigned char *dl) {
  uint64_t c = f->extra_bits;
  for (int s = 0; s < NLIT; s++) c += (uint64_t)f->lit[s] * ll[s];
  for (int s = 0; s < NDIST; s++) c += (uint64_t)f->dist[s] * dl[s];
  return c;
}

static void tokens_write(cdBits *b, const uint32_t *tok, int ntok, const unsigned char *ll,
                         const unsigned short *lc, const unsigned char *dl, const unsigned short *dc) {
  for (int t = 0; t < ntok; t++) {
    uint32_t k = tok[t];
    if (!(k & MATCH_FLAG)) {
      put(b, lc[k], ll[k]);
      continue;
    }
    unsigned len = (k >> 15) & 0x1ff, d = k & 0x7fff;
    int c = len_code[len];
    put(b, lc[257 + c], ll[257 + c]);
    if (len_extra[c]) put(b, len - len_base[c], len_extra[c]);
    int e = dcode(d);
    put(b, dc[e], dl[e]);
    if (dist_extra[e]) put(b, d + 1 - dist_base[e], dist_extra[e]);
  }
  put(b, lc[END_BLOCK], ll[END_BLOCK]);
}

/* writes one block of tokens (raw: the input bytes they stand for); -1 when out is short */
static int block_write(cdBits *b, const uint32_t *tok, int ntok, cdFreq *f, const unsigned char *raw,
                       size_t nraw, int last) {
  f->lit[END_BLOCK]++;
  unsigned char ll[NLIT], dl[NDIST], cl[NCL];
  unsigned short lc[NLIT], dc[NDIST], cc[NCL];
  huff_lengths(f->lit, NLIT, 15, ll);
  huff_lengths(f->dist, NDIST, 15, dl);
  int nlit = NLIT, ndist = NDIST;
  while (nlit > 257 && !ll[nlit - 1]) nlit--;
  while (ndist > 1 && !dl[ndist - 1]) ndist--;
  unsigned char lens[NLIT + NDIST];
  memcpy(lens, ll, (size_t)nlit);
  memcpy(lens + nlit, dl, (size_t)ndist);
  uint32_t rl[NLIT + NDIST], clf[NCL] = {0};
  int nrl = cl_encode(lens, nlit + ndist, rl, clf);
  huff_lengths(clf, NCL, 7, cl);
  int ncl = NCL;
  while (ncl > 4 && !cl[cl_order[ncl - 1]]) ncl--;
  uint64_t dyn = 3 + 5 + 5 + 4 + 3 * (uint64_t)ncl + tokens_cost(f, ll, dl);
  for (int i = 0; i < nrl; i++) {
    int s = (int)(rl[i] & 0xff);
    dyn += cl[s] + (s == 16 ? 2 : s == 17 ? 3 : s == 18 ? 7 : 0);
  }
  uint64_t fix = 3 + tokens_cost(f, fixed_lit_len, fixed_dist_len);
  uint64_t stored = 3 + 7 + 32 + 8 * (uint64_t)nraw; /* the 7: at most, to the byte */
  uint64_t best = dyn < fix ? dyn : fix;
  if (stored < best) best = stored;
  if ((uint64_t)(b->end - b->p) * 8 < best + 64) return -1;

  if (best == stored) {
    put(b, (uint32_t)last, 1);
    put(b, 0, 2);
    align(b);
    unsigned n = (unsigned)nraw;
    b->p[0] = (unsigned char)n;
    b->p[1] = (unsigned char)(n >> 8);
    b->p[2] = (unsigned char)~n;
    b->p[3] = (unsigned char)(~n >> 8);
    memcpy(b->p + 4, raw, nraw);
    b->p += 4 + nraw;
    return 0;
  }
  put(b, (uint32_t)last, 1);
  if (best == fix) {
    put(b, 1, 2);
    tokens_write(b, tok, ntok, fixed_lit_len, fixed_lit_code, fixed_dist_len, fixed_dist_code);
    return 0;
  }
  put(b, 2, 2);
  put(b, (uint32_t)(nlit - 257), 5);
  put(b, (uint32_t)(ndist - 1), 5);
  put(b, (uint32_t)(ncl - 4), 4);
  for (int i = 0; i < ncl; i++) put(b, cl[cl_order[i]], 3);
  huff_codes(cl, NCL, cc);
  for (int i = 0; i < nrl; i++) {
    int s = (int)(rl[i] & 0xff);
    uint32_t x = rl[i] >> 8;
    put(b, cc[s], cl[s]);
    if (s == 16) put(b, x, 2);
    if (s == 17) put(b, x, 3);
    if (s == 18) put(b, x, 7);
  }
  huff_codes(ll, NLIT, lc);
  huff_codes(dl, NDIST, dc);
  tokens_write(b, tok, ntok, ll, lc, dl, dc);
  return 0;
}

/* ---- the stream ------------------------------------------------------------------------ */

/* every block is at most its stored form: its bytes and 6 more (3 bits, padding, LEN, NLEN);
 * a block ends at every 32 KiB and every eighth of the input (block_stop); then the
 * header, the checksum and the 8 bytes block_write keeps free */
size_t cd_deflateBound(size_t n) { return n + 6 * (n / BLOCK_INPUT + 9) + 2 + 4 + 8 + 16; }

static inline uint32_t load32(const unsigned char *p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}

static inline uint64_t load64(const unsigned char *p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
}

/* the length of the common prefix of a and b, at most max */
static inline unsigned match_length(const unsigned char *a, const unsigned char *b, unsigned max) {
  unsigned l = 0;
  while (l + 8 <= max) {
    uint64_t x = load64(a + l) ^ load64(b + l);
    if (x) return l + (unsigned)(__builtin_ctzll(x) >> 3);
    l += 8;
  }
  while (l < max && a[l] == b[l]) l++;
  return l;
}

/* where the block that starts at i ends: at 32 KiB, or earlier at the next eighth of the
 * input. HDF5's shuffle filter writes the k-th bytes of all the elements of a chunk one
 * after the other; for elements of 1, 2, 4 or 8 bytes these byte planes start at eighths
 * of the chunk, and each plane has a statistics of its own (a sign-and-exponent byte, a
 * noisy low mantissa byte), which a Huffman code of its own fits: from planes of 1 KiB up.
 * Below, a code a plane costs more than it saves: the sliding cube's run (chunks of 32
 * frames of one body, planes of 32-96 bytes) spent a third of its instructions building
 * Huffman codes for them; with one block a chunk the bundled scenes' files under ccp are
 * 0-8% smaller, the cube pyramid's 0.17% larger. */
static size_t block_stop(size_t i, size_t n) {
  size_t stop = n - i > BLOCK_INPUT ? i + BLOCK_INPUT : n;
  size_t eighth = n % 8 == 0 ? n / 8 : n % 4 == 0 ? n / 4 : n % 2 == 0 ? n / 2 : n;
  if (eighth >= 1024) {
    size_t next = (i / eighth + 1) * eighth;
    if (next < stop) stop = next;
  }
  return stop;
}

/* The matcher's memory: the hash table (WAYS positions a hash) and a block's tokens. It
 * is kept between calls (the writer compresses chunk after chunk: a fresh 256 KiB table a
 * chunk cost more in page faults than the matching) and not cleared: a table entry holds
 * base + position + 1, and entries not above the call's base are from earlier calls. */
typedef struct {
  uint32_t head[WAYS << HASH_BITS];
  uint32_t tok[BLOCK_INPUT];
  uint32_t base;
} cdDeflateWork;

/* two: the recorder's writer and, at the end of a batch, the main thread compress at once */
#define CACHED 2
static cdDeflateWork *cached[CACHED];
static pthread_mutex_t cached_mu = PTHREAD_MUTEX_INITIALIZER;

/* a cached work memory when another thread has not taken it, else a new one */
static cdDeflateWork *work_take(size_t n) {
  cdDeflateWork *w = NULL;
  pthread_mutex_lock(&cached_mu);
  for (int k = 0; k < CACHED && !w; k++) {
    w = cached[k];
    cached[k] = NULL;
  }
  pthread_mutex_unlock(&cached_mu);
  if (!w) w = calloc(1, sizeof *w);
  if (w && (uint64_t)w->base + n + 1 > UINT32_MAX) { /* positions would wrap: start over */
    memset(w->head, 0, sizeof w->head);
    w->base = 0;
  }
  return w;
}

static void work_give(cdDeflateWork *w, size_t n) {
  w->base += (uint32_t)n + 1;
  pthread_mutex_lock(&cached_mu);
  for (int k = 0; k < CACHED && w; k++)
    if (!cached[k]) {
      cached[k] = w;
      w = NULL;
    }
  pthread_mutex_unlock(&cached_mu);
  free(w);
}

void cd_deflateRelease(void) {
  pthread_mutex_lock(&cached_mu);
  for (int k = 0; k < CACHED; k++) {
    free(cached[k]);
    cached[k] = NULL;
  }
  pthread_mutex_unlock(&cached_mu);
}

size_t cd_deflate(const unsigned char *in, size_t n, unsigned char *out, size_t cap) {
  pthread_once(&tables_once, tables_init);
  if (cap < 6 + 16 || n > UINT32_MAX / 2) return 0;
  int hbits = 8; /* a table about the input's size keeps small chunks in the cache */
  while (hbits < HASH_BITS && ((size_t)1 << hbits) < n) hbits++;
  cdDeflateWork *w = work_take(n);
  if (!w) return 0;
  uint32_t *head = w->head, *tok = w->tok, base = w->base;
  cdBits b = {out, out + cap - 4, 0, 0}; /* the last 4 bytes for the checksum */
  put(&b, 0x78, 8);
  put(&b, 0x01, 8);
  size_t i = 0;
  size_t rep = 0; /* the distance of the last match: a frame's rows repeat at one distance */
  int ok = 1;
  do {
    size_t start = i, stop = block_stop(i, n);
    cdFreq f;
    memset(&f, 0, sizeof f);
    int ntok = 0;
    unsigned misses = 0;
    while (i < stop) {
      size_t step = 1;
      if (i + MIN_MATCH <= n) {
        uint32_t v = load32(in + i);
        uint32_t h = (v * 2654435761u) >> (32 - hbits);
        uint32_t *slot = head + WAYS * h;
        unsigned best = 0, bestd = 0;
        size_t max = n - i < MAX_MATCH ? n - i : MAX_MATCH;
        if (rep && i >= rep && load32(in + i - rep) == v) {
          best = MIN_MATCH + match_length(in + i - rep + MIN_MATCH, in + i + MIN_MATCH, (unsigned)(max - MIN_MATCH));
          bestd = (unsigned)rep - 1;
        }
        for (int k = 0; k < WAYS; k++) {
          if (slot[k] <= base) continue; /* empty, or from an earlier call */
          size_t cand = slot[k] - base;
          if (i + 1 - cand <= WINDOW && load32(in + cand - 1) == v) {
            unsigned len = MIN_MATCH + match_length(in + cand - 1 + MIN_MATCH, in + i + MIN_MATCH,
                                                    (unsigned)(max - MIN_MATCH));
            if (len > best) {
              best = len;
              bestd = (unsigned)(i + 1 - cand) - 1;
            }
          }
        }
        for (int k = WAYS - 1; k > 0; k--) slot[k] = slot[k - 1];
        slot[0] = base + (uint32_t)i + 1;
        if (best) {
          unsigned len = best, d = bestd;
          rep = (size_t)d + 1;
          tok[ntok++] = MATCH_FLAG | (uint32_t)len << 15 | d;
          int c = len_code[len], e = dcode(d);
          f.lit[257 + c]++;
          f.dist[e]++;
          f.extra_bits += len_extra[c] + dist_extra[e];
          i += len;
          misses = 0;
          continue;
        }
        step = 1 + (misses++ >> SKIP);
      }
      if (step > stop - i) step = stop - i;
      for (size_t k = 0; k < step; k++) {
        tok[ntok++] = in[i + k];
        f.lit[in[i + k]]++;
      }
      i += step;
    }
    /* a match may run past stop: the block stands for in[start .. i) */
    if (block_write(&b, tok, ntok, &f, in + start, i - start, i >= n)) {
      ok = 0;
      break;
    }
  } while (i < n);
  work_give(w, n);
  if (!ok) return 0;
  align(&b);
  uLong a = adler32(0L, Z_NULL, 0);
  for (size_t k = 0; k < n;) { /* adler32 takes uInt lengths */
    size_t m = n - k > (1u << 30) ? (1u << 30) : n - k;
    a = adler32(a, in + k, (uInt)m);
    k += m;
  }
  b.p[0] = (unsigned char)(a >> 24);
  b.p[1] = (unsigned char)(a >> 16);
  b.p[2] = (unsigned char)(a >> 8);
  b.p[3] = (unsigned char)a;
  return (size_t)(b.p + 4 - out);
}
