/* recorder.c: the HDF5 output file of a run (DESIGN §3), written frame by frame.
 *
 * Layout. F = frames (frame 0 is the initial state), B = bodies, C = contacts over all
 * frames, m = LCP friction directions. All numbers little-endian; strings are
 * variable-length UTF-8 (h5py gives str for the attributes; for the string datasets use
 * .asstr(), as for any h5py string dataset).
 *
 *   / attributes      format = "cdsim", format_version = 1 (i32), model, solver (the
 *                     configured name at open, rewritten at close with what ran),
 *                     dt (f64, s), output_every (i32: a frame every Nth step),
 *                     command_line, scene (effective scene JSON), cdsim_version,
 *                     status ("running" while the run goes; the caller's status at close)
 *   /time                          f64 [F]      simulated time, s
 *   /bodies/name                   str [B]      as in the scene
 *   /bodies/shape                  str [B]      "sphere" | "cube" (a box with three equal
 *                                               half extents) | "box"
 *   /bodies/mass                   f64 [B]      kg (0 for a fixed body: infinite)
 *   /bodies/fixed                  u8  [B]      1 when the body never moves
 *   /bodies/radius                 f64 [B]      sphere radius, m (0 for a box)
 *   /bodies/half_extents           f64 [B,3]    box half extents, m (a sphere: r, r, r)
 *   /trajectory/position           f64 [F,B,3]  centre of mass, world, m
 *   /trajectory/orientation        f64 [F,B,4]  unit quaternion (w, x, y, z), body to world
 *   /trajectory/velocity           f64 [F,B,3]  linear, world, m/s
 *   /trajectory/angular_velocity   f64 [F,B,3]  world, rad/s
 *   /contacts/offset               i64 [F+1]    rows offset[k] .. offset[k+1]-1 are the
 *                                               contacts of the step that produced frame k;
 *                                               offset[0] = 0 and frame 0 has none
 *   /contacts/bodies               i32 [C,2]    a, b; a = -1 is the ground
 *   /contacts/point                f64 [C,3]    world, m
 *   /contacts/normal               f64 [C,3]    unit, world, from a towards b
 *   /contacts/gap                  f64 [C]      signed gap at the start of the step, m
 *   /contacts/normal_impulse       f64 [C]      lambda_n on b over the step, N s
 *   /contacts/tangent_impulse      f64 [C,3]    lambda_t1 t1 + lambda_t2 t2, world, N s
 *   beyond DESIGN §3:
 *   /contacts/normal_velocity      f64 [C]      normal relative velocity of b w.r.t. a
 *                                               after the step, m/s (cdContact.post_vn)
 *   /contacts/tangent_velocity     f64 [C,3]    tangential relative velocity after the
 *                                               step, world, m/s (cdContact.post_vt)
 *   /contacts/feature              u32 [C,2]    feature codes of a and b (contact.h); with
 *                                               /contacts/bodies the key that follows a
 *                                               contact from frame to frame
 *   /contacts/beta                 f64 [C]      LCP friction-bound multiplier, m/s (else 0)
 *   /contacts/alpha                f64 [C,m]    LCP friction multipliers, N s; only in runs
 *                                               whose contact set has m > 0 (created at the
 *                                               first frame that shows m; rows of contacts
 *                                               recorded without alpha read NaN)
 *   /contacts/penalty_state        f64 [C,4]    penalty model data (cdContact.state): gap,
 *                                               |v_t|, impact velocity, plastic overlap
 *   /solver/iterations             i32 [F]      solver iterations (Lemke pivots) of the step
 *   /solver/residual               f64 [F]      the backend's complementarity residual
 *   /solver/converged              u8  [F]      1 when the stopping rule was met
 *   /solver/substeps               i32 [F]      force backends: substeps of the step
 *   /solver/factorizations         i32 [F]      sparse factorizations of the step (work not
 *                                                counted as iterations; cdSolveStats)
 *   /solver/products               i32 [F]      operator products not counted as iterations
 *   /solver/warn_cholmod           i64 [F]      cumulative counters of numerical trouble
 *   /solver/warn_nonconverged      i64 [F]        up to this frame (cdWorld.warn_*): they
 *   /solver/warn_fallback          i64 [F]        also count the steps between frames
 *   /energy/kinetic                f64 [F]      sum 1/2 m v.v + 1/2 w.(R I R^T) w, J
 *   /energy/potential              f64 [F]      -sum m g.x, J (fixed bodies: nothing)
 *   /geometry (what the XDMF sidecar draws, io/xdmf.c; X = boxes, cubes included)
 *   /geometry/spheres              i32 [S]      body indices of the spheres
 *   /geometry/box_body             i32 [X]      body index of each box
 *   /geometry/hexahedra            i32 [X,8]    rows of box_vertices of each box, in VTK's
 *                                               hexahedron order
 *   /geometry/box_vertices         f64 [F,8X,3] corners of every box, world, m (only in
 *                                               scenes with boxes)
 *   /summary attributes            the run summary (src/summary.h), written at the end:
 *                                  steps, substeps, contacts_max, iterations_max,
 *                                  nonconverged_steps, fallbacks (i64); wall_time (s), contacts_mean,
 *                                  iterations_mean, residual_max, penetration_max (m),
 *                                  lift_max (m), kinetic_energy_final (J), time_collide,
 *                                  time_build, time_solve, time_record, step_time_median,
 *                                  step_time_max (s) (f64); step_time_max_at (i64)
 *   Frame 0 solver entries are 0, 0, 1, 0 (and whenever the caller passes no stats).
 *
 * Storage. Every per-frame and per-contact dataset is chunked, with the shuffle and deflate
 * filters when HDF5 has deflate (any reader opens it, no plugin), and has an unlimited
 * first dimension. A per-frame chunk holds 32 frames, or the largest power of two of
 * frames within 256 KiB (a frame beyond it is split along the bodies); a contact chunk
 * holds the power of two of rows, 128 to 4096, that covers a batch of frames at 4
 * contacts a moving body (4096 from 32 moving bodies up). The writer builds each chunk itself (chunk_build: gather, shuffle,
 * io/deflate.c) and hands HDF5 the stored bytes (H5Dwrite_chunk); the file's last, partly
 * filled chunk of a column is kept in memory (its tail) and written again, whole, with
 * the next batch. zlib level 4 through HDF5's filter was 85% of the writing, 10-14 ms for
 * a frame of the 1000-sphere pile (S2 10, 2,050 contacts, 570 kB of rows), and the writer
 * fell behind steps faster than that; io/deflate.c writes the same frames in 2.5-4 ms
 * (S2 10 at 20 iterations, 200 frames: 57.48 MB against zlib's 57.22 MB, +0.5%).
 * Chunks of 256 KiB rather than 1 MiB make a batch of the pile's frames whole sooner
 * (8 frames), and keep its Huffman blocks as good (57.31 MB with 1 MiB; 128 KiB: 57.78).
 * The writer runs beside the steps, so its cost is the second core's.
 * Objects carry no modification times, so the same frames give the same dataset bytes.
 *
 * Threads. The main thread copies each frame into one of two buffers and goes on
 * stepping; a writer thread writes the other buffer. The copy is as plain as it can be:
 * the bodies' arrays into the per-frame columns, the step's contacts as they are (one
 * memcpy of cdContact rows into COL_STAGE), which the writer lays out in the contact
 * columns (contacts_expand). A batch is handed over at 32 frames, 64 MiB or 5 s since
 * the last one, after the writer has finished the batch before (so at most two batches
 * are in memory); and sooner, once it holds 1 MiB and whole per-frame chunks, whether or
 * not the writer is idle (a writer still busy is helped to the end of its batch, below):
 * handing batches over only to an idle writer let a writer that a fast step outran fall
 * behind by up to 32 frames, all of it left for the close (the pile at 20 iterations, runs
 * in fresh processes: close 56 ms against 24 ms, every frame / last only 1.30x against
 * 1.12x; at the default limits 1.03-1.04x against 1.05x). The writer faults in the pages of the main thread's next frames while it is
 * idle or between two chunks (prefault_ask), and a buffer's first growth holds a batch
 * of frames like the one that asked: growth by doubling and first-touch page faults were
 * most of the main thread's time in the recorder on the pile (perf). When the main
 * thread waits for the writer (cd_recorderFlush, close, a batch that finds the writer
 * busy) it builds chunks of the batch itself (help_one): the two threads claim the
 * batch's chunks in order, the writer writes each in its turn, so the file is the same
 * byte for byte whoever built a chunk. The last batch, which no step overlaps, is so
 * shared by both cores at close. Each
 * batch ends with H5Fflush(H5F_SCOPE_GLOBAL): between batches the file on disk is
 * complete and consistent. Only one thread calls HDF5 at a time: the writer while a batch
 * is pending; the main thread at open, and after writer_wait (the summary, the creation
 * of /contacts/alpha, close). Debian's HDF5 is built thread-safe (a global lock, an
 * error stack a thread); the code does not rely on it. A run that ends, fails or is
 * stopped by a signal closes the recorder, which writes every frame it was given; a
 * process that dies without closing keeps the batches the writer had finished.
 *
 * Why not SWMR. A SWMR writer (H5Fstart_swmr_write, latest format) that dies leaves the
 * superblock marked "open for write": h5dump and a plain h5py.File(path) then refuse the
 * file until `h5clear -s` is run, which defeats the point for a batch tool whose users
 * open crashed runs in ordinary readers. SWMR also forbids creating objects and
 * attributes once started (/contacts/alpha is created when its width is first known) and
 * needs the 1.10 file format. The default (oldest compatible) format with flushed
 * batches instead leaves an ordinary file; the residual risk is a death in the middle of
 * a batch write, which can leave that last batch inconsistent.
 *
 * Errors. HDF5's automatic error printing is turned off; a failed call becomes a return
 * code, and at open a one-line message naming the path and the reason (the OS message
 * when HDF5 reports one). Before a batch the writer makes sure the file can grow by what
 * the batch may take (room_check); a batch that does not fit (a full disk, a file size
 * limit) is refused before HDF5 touches the file, the recorder is marked failed (the
 * next frame is refused), and cd_recorderClose records the status where there is room
 * and returns -1. A write that fails anyway shrinks every dataset back to the last
 * complete batch; HDF5 gives no guarantee then (a partly filled chunk being moved can
 * lose its earlier frames). tests/test_recorder.c fills the file at six sizes.
 */
#define _GNU_SOURCE /* pthread_setname_np */
#include "recorder.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <hdf5.h>

#include "alloc.h"
#include "deflate.h"
#include "xdmf.h"

/* the writer hands HDF5 chunks as they are stored (H5Dwrite_chunk: no type conversion), in
 * the file types' little-endian byte order, from memory of the native types */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "io/recorder.c writes native memory as the little-endian file types: a big-endian host needs a byte swap"
#endif

#ifndef CDSIM_VERSION
#error "CDSIM_VERSION is defined by the Makefile"
#endif

enum {
  CD_REC_BATCH = 32,             /* frames per batch at most (a multiple of the frames of a chunk) */
  CD_REC_CONTACT_CHUNK = 4096,  /* contact rows per chunk at most */
  CD_REC_CONTACTS_PER_BODY = 4,  /* contacts a frame a moving body, for the contact chunk (a cube at rest) */
  CD_REC_CHUNK_BYTES = 1 << 18,  /* largest per-frame chunk, bytes */
  CD_REC_DEFLATE = 1               /* the level the file records: readers ignore it, and
                                      * io/deflate.c's encoder has none (its header says fastest) */
};
#define CD_REC_BATCH_BYTES (64.0 * 1024 * 1024) /* a batch is handed over sooner past this */
/* and sooner still once it holds this much and whole per-frame chunks: the last batch,
 * which no step overlaps, is all the writing a run waits for at close */
#define CD_REC_EARLY_BYTES (1024.0 * 1024)
#define CD_REC_FLUSH_SECONDS 5.0
/* frames ahead whose buffer pages the writer faults in for the main thread (prefault) */
#define CD_REC_PREFAULT_FRAMES 16
/* bytes the writer faults in at a time, between which it looks for a batch */
#define CD_REC_PREFAULT_PIECE (1024 * 1024)
/* compressed chunks the main thread may hold for the writer while it helps (writer_wait) */
#define CD_REC_HELP_SLOTS 4

/* the datasets written frame by frame, in file creation order */
enum {
  COL_TIME,
  COL_POSITION,
  COL_ORIENTATION,
  COL_VELOCITY,
  COL_ANGULAR,
  COL_OFFSET,
  COL_ITERATIONS,
  COL_RESIDUAL,
  COL_CONVERGED,
  COL_SUBSTEPS,
  COL_FACTORIZATIONS,
  COL_PRODUCTS,
  COL_WARN_CHOLMOD,
  COL_WARN_NONCONVERGED,
  COL_WARN_FALLBACK,
  COL_KINETIC,
  COL_POTENTIAL,
  COL_BOX_VERTICES, /* only in scenes with boxes */
  COL_NFRAME_COLS, /* the columns below have one row per contact */
  COL_BODIES = COL_NFRAME_COLS,
  COL_POINT,
  COL_NORMAL,
  COL_GAP,
  COL_NORMAL_IMPULSE,
  COL_TANGENT_IMPULSE,
  COL_NORMAL_VELOCITY,
  COL_TANGENT_VELOCITY,
  COL_FEATURE,
  COL_BETA,
  COL_PENALTY_STATE,
  COL_ALPHA, /* created at the first frame with nalpha > 0 */
  COL_COUNT,
  /* not a dataset: the contacts of the frames buffered, as the world has them (cdContact
   * rows), which the writer lays out in the columns COL_BODIES .. COL_PENALTY_STATE
   * (contacts_expand) */
  COL_STAGE = COL_COUNT
};

/* one extensible dataset and the rows buffered for it */
typedef struct cdColumn {
  const char *path;
  hid_t mtype;         /* memory (native) type, a library constant: never closed */
  hid_t ftype;         /* file type, a library constant */
  int rank;            /* 1..3 */
  hsize_t inner[2];    /* dimensions after the first */
  size_t width;        /* elements per row (product of inner) */
  size_t esize;        /* bytes per element */
  int active;          /* rows are recorded (the dataset exists) */
  hid_t dset;          /* H5I_INVALID_HID until created */
  /* two buffers of rows not yet in the file: the main thread fills buf[fill] while the
   * writer writes buf[!fill] */
  unsigned char *buf[2]; /* (cap x width x esize) */
  size_t nbuf[2], cap[2]; /* rows buffered, rows allocated */
  size_t ready[2];     /* rows whose pages the writer was asked to fault in (prefault_ask) */
  hsize_t nfile;       /* rows in the file (the last complete batch); the writer's */
  hsize_t chunk_rows;  /* rows of a chunk */
  hsize_t chunk_cols;  /* extent of a chunk along the second dimension (inner[0] unless a
                        * frame is split along the bodies) */
  unsigned char *tail; /* (chunk_rows x width x esize) rows nfile - nfile % chunk_rows ..
                        * nfile - 1: the file's last, partly filled chunk, written again
                        * with the next batch; the writer's */
} cdColumn;

/* a thread's buffers for one chunk: gathered, shuffled, compressed */
typedef struct cdScratch {
  unsigned char *p[3];
  size_t cap[3];
} cdScratch;

/* one chunk of a batch: rows row0 .. of its column counted from the first row of the
 * file's last, partly filled chunk (the column's tail), columns col0 .. */
enum { JOB_OPEN, JOB_WRITER, JOB_HELPER, JOB_DONE };
typedef struct cdChunkJob {
  int col;             /* COL_* */
  size_t row0, col0;
  int state;           /* JOB_*: unclaimed, the writer's, being compressed by the main
                        * thread, compressed by the main thread into z */
  unsigned char *z;    /* (size) the main thread's compressed chunk (help_out[slot]);
                        * NULL: the writer builds it */
  size_t size;
  int slot;
} cdChunkJob;

enum { GRP_BODIES, GRP_TRAJECTORY, GRP_CONTACTS, GRP_SOLVER, GRP_ENERGY, GRP_GEOMETRY, GRP_COUNT };
static const char *const group_name[GRP_COUNT] = {"/bodies", "/trajectory", "/contacts", "/solver", "/energy",
                                                  "/geometry"};

struct cdRecorder {
  hid_t file;
  hid_t group[GRP_COUNT];
  hid_t str_type;        /* variable-length UTF-8 string */
  cdColumn col[COL_COUNT + 1]; /* the datasets, and COL_STAGE */
  int nbody;
  int nbox;              /* bodies that are boxes (cubes included) */
  int *box_body;         /* (nbox) their body indices */
  long nframe;           /* frames accepted (in the file or buffered) */
  int nbatch;            /* frames buffered in buf[fill] */
  hsize_t frame_chunk;   /* frames of the smallest per-frame chunk (a power of two) */
  hsize_t contact_chunk; /* rows of a contact chunk (a power of two) */
  double batch_bytes;    /* bytes buffered in buf[fill] */
  int64_t ncontact;      /* contacts accepted */
  int deflate;           /* chunks are shuffled and deflated (HDF5 has the deflate filter) */
  cdScratch wscratch;    /* the writer's chunk buffers */
  struct timespec last_batch;
  /* the writer thread; everything below the mutex is shared with it */
  int fill;              /* the buffer side the main thread fills */
  int threaded;          /* the writer thread runs */
  pthread_t writer;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int pending;           /* a batch (buf[!fill]) was handed to the writer and is not written yet */
  int quit;              /* the writer is to stop */
  long nframe_file;      /* frames in the file */
  int failed;            /* a batch write failed: the file ends at the batch before */
  /* the chunks of the batch being written, in the order the writer hands them to HDF5;
   * the main thread, while it waits for the writer, compresses chunks of them too */
  cdChunkJob *job;       /* (job_cap) */
  int njob, job_cap;
  int job_next;          /* the first chunk nobody has claimed */
  int jobs_open;         /* the main thread may claim chunks */
  long helped;           /* chunks the main thread compressed, over the run */
  /* memory the main thread is about to fill, whose pages the writer faults in when it is
   * idle or between two chunks (prefault), so that the main thread does not */
  unsigned char *pop_at[COL_COUNT + 1][2];
  size_t pop_len[COL_COUNT + 1][2];
  int pop_any;
  /* the main thread's memory for that, allocated at open (its allocations are then the
   * same in every run, whoever builds which chunk): chunks up to help_bytes uncompressed */
  cdScratch hscratch;    /* gathered and shuffled */
  unsigned char *help_out[CD_REC_HELP_SLOTS]; /* compressed chunks the writer has not written */
  int help_busy[CD_REC_HELP_SLOTS];
  size_t help_bytes;
  char why[200];         /* reason of the last HDF5 failure */
  char path[4096];       /* the file */
};

/* ---- error text ------------------------------------------------------------------ */

typedef struct {
  char *buf;
  size_t len;
} cdReason;

/* the innermost error of the stack is where HDF5 met the trouble; the file drivers put
 * the OS message in it as "error message = '...'" */
static herr_t reason_walk(unsigned n, const H5E_error2_t *e, void *data) {
  cdReason *r = data;
  if (n != 0 || !e->desc) return 0;
  const char *s = strstr(e->desc, "error message = '");
  if (s) {
    s += strlen("error message = '");
    const char *end = strchr(s, '\'');
    size_t k = end ? (size_t)(end - s) : strlen(s);
    snprintf(r->buf, r->len, "%.*s", (int)k, s);
  } else {
    snprintf(r->buf, r->len, "%s", e->desc);
  }
  return 0;
}

/* records the reason of the HDF5 call that just failed (what: the object, or NULL);
 * returns -1 */
static int h5fail(cdRecorder *r, const char *what) {
  char reason[160] = "HDF5 error";
  cdReason rr = {reason, sizeof reason};
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, reason_walk, &rr);
  if (what)
    snprintf(r->why, sizeof r->why, "%s: %s", what, reason);
  else
    snprintf(r->why, sizeof r->why, "%s", reason);
  return -1;
}

static double seconds_since(const struct timespec *t0) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)(t.tv_sec - t0->tv_sec) + 1e-9 * (double)(t.tv_nsec - t0->tv_nsec);
}

/* ---- attributes and fixed datasets ----------------------------------------------- */

static int attr_write(cdRecorder *r, const char *name, hid_t ftype, hid_t mtype, const void *value) {
  hid_t space = H5Screate(H5S_SCALAR);
  if (space < 0) return h5fail(r, name);
  hid_t a = H5Acreate2(r->file, name, ftype, space, H5P_DEFAULT, H5P_DEFAULT);
  int rc = a < 0 || H5Awrite(a, mtype, value) < 0 ? h5fail(r, name) : 0;
  if (a >= 0) H5Aclose(a);
  H5Sclose(space);
  return rc;
}

static int attr_string(cdRecorder *r, const char *name, const char *value) {
  const char *v = value ? value : "";
  return attr_write(r, name, r->str_type, r->str_type, &v);
}

/* a small fixed-size dataset of n rows of w elements (w = 1: rank 1) in group g, written whole */
static int fixed_write(cdRecorder *r, int g, const char *name, hid_t ftype, hid_t mtype, hsize_t n, hsize_t w,
                       const void *data) {
  hsize_t dims[2] = {n, w};
  hid_t space = H5Screate_simple(w > 1 ? 2 : 1, dims, NULL);
  if (space < 0) return h5fail(r, name);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  hid_t d = -1;
  int rc = 0;
  if (dcpl < 0 || H5Pset_obj_track_times(dcpl, 0) < 0) rc = h5fail(r, name);
  if (!rc) {
    d = H5Dcreate2(r->group[g], name, ftype, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    if (d < 0) rc = h5fail(r, name);
  }
  /* a conversion buffer the size of the data: HDF5's default is a zeroed 1 MiB one a write
   * (the body names' strings convert), which made the eight writes here a sixth of a short
   * run's CPU time */
  size_t ts = H5Tget_size(ftype) > H5Tget_size(mtype) ? H5Tget_size(ftype) : H5Tget_size(mtype);
  hid_t dxpl = rc || n == 0 ? -1 : H5Pcreate(H5P_DATASET_XFER);
  if (!rc && n > 0 && (dxpl < 0 || H5Pset_buffer(dxpl, n * w * ts + 64, NULL, NULL) < 0)) rc = h5fail(r, name);
  if (!rc && n > 0 && H5Dwrite(d, mtype, H5S_ALL, H5S_ALL, dxpl, data) < 0) rc = h5fail(r, name);
  if (dxpl >= 0) H5Pclose(dxpl);
  if (d >= 0) H5Dclose(d);
  if (dcpl >= 0) H5Pclose(dcpl);
  H5Sclose(space);
  return rc;
}

static const char *shape_name(const cdBodyDef *b) {
  if (b->shape == CD_SPHERE) return "sphere";
  return b->half[0] == b->half[1] && b->half[1] == b->half[2] ? "cube" : "box";
}

/* /bodies and the fixed datasets of /geometry */
static int bodies_group(cdRecorder *r, const cdScene *scene) {
  size_t n = (size_t)scene->nbody, nx = (size_t)r->nbox;
  const char **name = cd_calloc(n ? n : 1, sizeof *name);
  const char **shape = cd_calloc(n ? n : 1, sizeof *shape);
  double *mass = cd_calloc(n ? n : 1, sizeof *mass);
  double *radius = cd_calloc(n ? n : 1, sizeof *radius);
  double *half = cd_calloc(n ? 3 * n : 1, sizeof *half);
  uint8_t *fixed = cd_calloc(n ? n : 1, sizeof *fixed);
  int32_t *spheres = cd_calloc(n ? n : 1, sizeof *spheres);
  int32_t *hexa = cd_calloc(nx ? 8 * nx : 1, sizeof *hexa);
  int rc = 0, nsphere = 0;
  if (!name || !shape || !mass || !radius || !half || !fixed || !spheres || !hexa) {
    snprintf(r->why, sizeof r->why, "out of memory");
    rc = -1;
  }
  for (size_t i = 0; !rc && i < n; i++) {
    const cdBodyDef *b = &scene->body[i];
    name[i] = b->name;
    shape[i] = shape_name(b);
    mass[i] = b->mass;
    fixed[i] = b->fixed ? 1 : 0;
    radius[i] = b->shape == CD_SPHERE ? b->radius : 0.0;
    for (int d = 0; d < 3; d++) half[3 * i + (size_t)d] = b->shape == CD_SPHERE ? b->radius : b->half[d];
    if (b->shape == CD_SPHERE) spheres[nsphere++] = (int32_t)i;
  }
  for (size_t j = 0; j < 8 * nx && !rc; j++) hexa[j] = (int32_t)j;
  hid_t F = H5T_IEEE_F64LE, D = H5T_NATIVE_DOUBLE, I = H5T_STD_I32LE, NI = H5T_NATIVE_INT32;
  if (!rc) rc = fixed_write(r, GRP_BODIES, "name", r->str_type, r->str_type, n, 1, name);
  if (!rc) rc = fixed_write(r, GRP_BODIES, "shape", r->str_type, r->str_type, n, 1, shape);
  if (!rc) rc = fixed_write(r, GRP_BODIES, "mass", F, D, n, 1, mass);
  if (!rc) rc = fixed_write(r, GRP_BODIES, "fixed", H5T_STD_U8LE, H5T_NATIVE_UINT8, n, 1, fixed);
  if (!rc) rc = fixed_write(r, GRP_BODIES, "radius", F, D, n, 1, radius);
  if (!rc) rc = fixed_write(r, GRP_BODIES, "half_extents", F, D, n, 3, half);
  if (!rc) rc = fixed_write(r, GRP_GEOMETRY, "spheres", I, NI, (hsize_t)nsphere, 1, spheres);
  if (!rc) rc = fixed_write(r, GRP_GEOMETRY, "box_body", I, NI, nx, 1, r->box_body);
  if (!rc) rc = fixed_write(r, GRP_GEOMETRY, "hexahedra", I, NI, nx, 8, hexa);
  cd_free(name);
  cd_free(shape);
  cd_free(mass);
  cd_free(radius);
  cd_free(half);
  cd_free(fixed);
  cd_free(spheres);
  cd_free(hexa);
  return rc;
}

/* ---- extensible columns ---------------------------------------------------------- */

static void col_define(cdColumn *c, const char *path, hid_t mtype, hid_t ftype, int rank, hsize_t d1, hsize_t d2) {
  c->path = path;
  c->mtype = mtype;
  c->ftype = ftype;
  c->rank = rank;
  c->inner[0] = rank > 1 ? d1 : 1;
  c->inner[1] = rank > 2 ? d2 : 1;
  c->width = (size_t)(c->inner[0] * c->inner[1]);
  c->esize = H5Tget_size(mtype);
  c->dset = H5I_INVALID_HID;
}

/* creates the dataset with nrows rows already present (they read as the fill value) */
static int col_create(cdRecorder *r, cdColumn *c, int per_contact, hsize_t nrows, const double *fill) {
  hsize_t dims[3] = {nrows, c->inner[0], c->inner[1]};
  hsize_t maxdims[3] = {H5S_UNLIMITED, c->inner[0], c->inner[1]};
  hsize_t chunk[3] = {1, c->inner[0], c->inner[1]};
  size_t rowbytes = c->width * c->esize;
  for (int d = 1; d < 3; d++) {
    /* a zero-length inner dimension (no bodies) still needs a chunk of 1 */
    if (chunk[d] == 0) {
      chunk[d] = 1;
      maxdims[d] = H5S_UNLIMITED;
    }
  }
  if (per_contact) {
    chunk[0] = r->contact_chunk;
  } else {
    /* a power of two dividing the batch, so that a full batch writes whole chunks and
     * no chunk is compressed twice */
    chunk[0] = CD_REC_BATCH;
    while (chunk[0] > 1 && rowbytes * chunk[0] > CD_REC_CHUNK_BYTES) chunk[0] /= 2;
    /* a frame larger than a chunk (many bodies) is split along the bodies */
    if (rowbytes > CD_REC_CHUNK_BYTES && c->rank == 3) {
      hsize_t per_body = c->inner[1] * c->esize;
      chunk[1] = CD_REC_CHUNK_BYTES / per_body;
      if (chunk[1] < 1) chunk[1] = 1;
    }
  }
  hid_t space = H5Screate_simple(c->rank, dims, maxdims);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  int rc = 0;
  if (space < 0 || dcpl < 0 || H5Pset_chunk(dcpl, c->rank, chunk) < 0 || H5Pset_obj_track_times(dcpl, 0) < 0)
    rc = h5fail(r, c->path);
  if (!rc && r->deflate && (H5Pset_shuffle(dcpl) < 0 || H5Pset_deflate(dcpl, CD_REC_DEFLATE) < 0))
    rc = h5fail(r, c->path);
  if (!rc && fill && H5Pset_fill_value(dcpl, H5T_NATIVE_DOUBLE, fill) < 0) rc = h5fail(r, c->path);
  if (!rc) {
    c->dset = H5Dcreate2(r->file, c->path, c->ftype, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    if (c->dset < 0) rc = h5fail(r, c->path);
  }
  c->nfile = nrows;
  c->chunk_rows = chunk[0];
  c->chunk_cols = c->rank > 1 ? chunk[1] : 1;
  size_t tail_bytes = (size_t)c->chunk_rows * rowbytes;
  if (!rc && !(c->tail = cd_malloc(tail_bytes ? tail_bytes : 1))) {
    snprintf(r->why, sizeof r->why, "out of memory");
    rc = -1;
  }
  /* rows already present read as the fill value, and are written so when their chunk is */
  for (size_t k = 0; !rc && fill && k < tail_bytes / sizeof(double); k++) ((double *)c->tail)[k] = *fill;
  c->active = !rc;
  if (dcpl >= 0) H5Pclose(dcpl);
  if (space >= 0) H5Sclose(space);
  return rc;
}

/* asks the writer to fault in the pages of rows row0 .. row1 - 1 of column i's buffer
 * side (the main thread's call, after it allocated them). Page faults cost the main
 * thread of a 60-step run of the pile 1,800 faults, about 4% of its time (perf); the
 * writer makes the pages present with madvise(MADV_POPULATE_WRITE), which changes no
 * byte: a request for memory since reallocated is harmless, and a kernel without it
 * (before Linux 5.14) leaves the faults to the main thread. */
static void prefault_ask(cdRecorder *r, int i, int side, size_t row0, size_t row1) {
  cdColumn *c = &r->col[i];
  size_t rb = c->width * c->esize;
  if (row1 <= row0 || rb == 0) return;
  c->ready[side] = row1;
  pthread_mutex_lock(&r->mu);
  r->pop_at[i][side] = c->buf[side] + row0 * rb;
  r->pop_len[i][side] = (row1 - row0) * rb;
  r->pop_any = 1;
  pthread_cond_broadcast(&r->cv);
  pthread_mutex_unlock(&r->mu);
}

/* with r->mu held, by the writer: faults in a piece of the memory asked for; 0 when
 * nothing was asked */
static int prefault_piece(cdRecorder *r) {
  for (int i = 0; i <= COL_STAGE && r->pop_any; i++)
    for (int f = 0; f < 2; f++) {
      if (r->pop_len[i][f] == 0) continue;
      uintptr_t at = (uintptr_t)r->pop_at[i][f];
      size_t len = r->pop_len[i][f] < CD_REC_PREFAULT_PIECE ? r->pop_len[i][f] : CD_REC_PREFAULT_PIECE;
      r->pop_at[i][f] += len;
      r->pop_len[i][f] -= len;
      pthread_mutex_unlock(&r->mu);
      uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), lo = (at + page - 1) / page * page;
      uintptr_t hi = (at + len) / page * page;
#ifdef MADV_POPULATE_WRITE
      if (hi > lo) madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE);
#endif
      pthread_mutex_lock(&r->mu);
      return 1;
    }
  r->pop_any = 0;
  return 0;
}

/* room for rows more rows in the buffer the main thread fills; amortised doubling */
static int col_reserve(cdRecorder *r, cdColumn *c, size_t rows) {
  int f = r->fill;
  if (c->nbuf[f] + rows <= c->cap[f]) {
    /* the writer keeps the pages ahead of the rows present */
    if (c->nbuf[f] + rows * (CD_REC_PREFAULT_FRAMES / 2) > c->ready[f] && c->ready[f] < c->cap[f]) {
      size_t ahead = c->nbuf[f] + rows * CD_REC_PREFAULT_FRAMES;
      prefault_ask(r, (int)(c - r->col), f, c->ready[f], ahead < c->cap[f] ? ahead : c->cap[f]);
    }
    return 0;
  }
  /* a batch's worth of frames like this one at once: each growth copies the rows so far
   * into new memory (on the pile, doubling from 256 rows was a third of the main thread's
   * time in the recorder: the copies' page faults); pages never written are never touched */
  size_t cap = c->cap[f] ? 2 * c->cap[f] : 256, rb = c->width * c->esize > 0 ? c->width * c->esize : 1;
  size_t batch = rows * CD_REC_BATCH, most = (size_t)(CD_REC_BATCH_BYTES / (double)rb) + rows; /* a batch at most */
  if (cap < batch) cap = batch < most ? batch : most;
  while (cap < c->nbuf[f] + rows) cap *= 2;
  unsigned char *b = cd_realloc(c->buf[f], cap * c->width * c->esize);
  if (!b) return -1;
  c->buf[f] = b;
  c->cap[f] = cap;
  size_t ahead = c->nbuf[f] + rows * CD_REC_PREFAULT_FRAMES;
  prefault_ask(r, (int)(c - r->col), f, c->nbuf[f], ahead < cap ? ahead : cap);
  return 0;
}

/* the next row of the buffer the main thread fills (room reserved before) */
static void *col_push(cdRecorder *r, cdColumn *c) {
  int f = r->fill;
  void *p = c->buf[f] + c->nbuf[f] * c->width * c->esize;
  c->nbuf[f]++;
  return p;
}

/* the next n rows of the buffer the main thread fills (room reserved before) */
static void *col_rows(cdRecorder *r, cdColumn *c, size_t n) {
  int f = r->fill;
  void *p = c->buf[f] + c->nbuf[f] * c->width * c->esize;
  c->nbuf[f] += n;
  return p;
}

/* room for n bytes in buffer k of s (the writer's: they grow as chunks need) */
static unsigned char *scratch_get(cdScratch *s, int k, size_t n) {
  if (n > s->cap[k]) {
    unsigned char *p = cd_realloc(s->p[k], n);
    if (!p) return NULL;
    s->p[k] = p;
    s->cap[k] = n;
  }
  return s->p[k];
}

static void scratch_free(cdScratch *s) {
  for (int k = 0; k < 3; k++) {
    cd_free(s->p[k]);
    s->p[k] = NULL;
    s->cap[k] = 0;
  }
}

/* bytes of a chunk of c, uncompressed */
static size_t chunk_bytes(const cdColumn *c) {
  return (size_t)c->chunk_rows * (size_t)c->chunk_cols * (size_t)c->inner[1] * c->esize;
}

/* the 8x8 byte matrix whose row j is w[j] (byte k of a little-endian word is column k),
 * transposed in place: three rounds of swapping off-diagonal blocks of 4, 2 and 1 bytes */
static void transpose8(uint64_t w[8]) {
  for (int j = 0; j < 4; j++) {
    uint64_t t = ((w[j] >> 32) ^ w[j + 4]) & 0x00000000FFFFFFFFull;
    w[j] ^= t << 32;
    w[j + 4] ^= t;
  }
  for (int j = 0; j < 8; j += (j & 1) ? 3 : 1) { /* 0, 1, 4, 5 */
    uint64_t t = ((w[j] >> 16) ^ w[j + 2]) & 0x0000FFFF0000FFFFull;
    w[j] ^= t << 16;
    w[j + 2] ^= t;
  }
  for (int j = 0; j < 8; j += 2) {
    uint64_t t = ((w[j] >> 8) ^ w[j + 1]) & 0x00FF00FF00FF00FFull;
    w[j] ^= t << 8;
    w[j + 1] ^= t;
  }
}

/* HDF5's shuffle filter: the k-th bytes of the n elements of size es one after the other.
 * Elements of 8 bytes (most columns: doubles, i64) go 8 at a time through an 8x8 byte
 * transpose on a little-endian machine: a fifth of the byte loop's instructions */
static void shuffle(const unsigned char *in, size_t n, size_t es, unsigned char *out) {
  size_t i0 = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  if (es == 8) {
    for (; i0 + 8 <= n; i0 += 8) {
      uint64_t w[8];
      memcpy(w, in + i0 * 8, sizeof w);
      transpose8(w);
      for (size_t k = 0; k < 8; k++) memcpy(out + k * n + i0, &w[k], 8);
    }
  }
#endif
  for (size_t k = 0; k < es; k++)
    for (size_t i = i0; i < n; i++) out[k * n + i] = in[i * es + k];
}

/* the chunk of c whose rows start at row0 (counted from the first row of the column's
 * tail) and whose columns start at col0, from the tail and buffer side: gathered and
 * shuffled in s, deflated (io/deflate.c) into z (NULL: s's third buffer; else room for
 * cd_deflateBound of the chunk's bytes), as HDF5 stores it. Its size, with *data at its
 * bytes; 0 when memory ran out. Reads c and the buffers only: the writer and the
 * main thread (writer_wait) build chunks of one batch at once. */
static size_t chunk_build(const cdRecorder *r, const cdColumn *c, int side, size_t row0, size_t col0, cdScratch *s,
                          unsigned char *z, const unsigned char **data) {
  size_t es = c->esize, rowbytes = c->width * es, t = (size_t)(c->nfile % c->chunk_rows);
  size_t cols = (size_t)c->inner[0], cc = (size_t)c->chunk_cols, per_col = (size_t)c->inner[1] * es;
  size_t nbytes = chunk_bytes(c), total = t + c->nbuf[side];
  unsigned char *raw = scratch_get(s, 0, nbytes), *shuf = scratch_get(s, 1, nbytes);
  if (!z) z = scratch_get(s, 2, cd_deflateBound(nbytes));
  if (!raw || !shuf || !z) return 0;
  size_t rows = total - row0 < c->chunk_rows ? total - row0 : (size_t)c->chunk_rows;
  size_t ncol = cols - col0 < cc ? cols - col0 : cc;
  /* past the extent (rows and columns the chunk does not cover): zeros, never read */
  if (ncol < cc)
    memset(raw, 0, nbytes);
  else
    memset(raw + rows * cc * per_col, 0, nbytes - rows * cc * per_col);
  for (size_t k = 0; k < rows; k++) {
    size_t row = row0 + k;
    const unsigned char *src = row < t ? c->tail + row * rowbytes : c->buf[side] + (row - t) * rowbytes;
    memcpy(raw + k * cc * per_col, src + col0 * per_col, ncol * per_col);
  }
  if (!r->deflate) {
    *data = raw;
    return nbytes;
  }
  shuffle(raw, nbytes / es, es, shuf);
  *data = z;
  return cd_deflate(shuf, nbytes, z, cd_deflateBound(nbytes));
}

/* lists the chunks that buffer side writes, column by column, from the start of each
 * column's tail (the file's last, partly filled chunk, written again whole); 0 or -1 */
static int jobs_plan(cdRecorder *r, int side) {
  int n = 0;
  for (int pass = 0; pass < 2; pass++) {
    if (pass == 1 && n > r->job_cap) {
      cdChunkJob *j = cd_realloc(r->job, (size_t)n * sizeof *j);
      if (!j) return -1;
      r->job = j;
      r->job_cap = n;
    }
    n = 0;
    for (int i = 0; i < COL_COUNT; i++) {
      const cdColumn *c = &r->col[i];
      if (!c->active || c->nbuf[side] == 0 || c->width == 0) continue;
      size_t total = (size_t)(c->nfile % c->chunk_rows) + c->nbuf[side];
      for (size_t row0 = 0; row0 < total; row0 += (size_t)c->chunk_rows)
        for (size_t col0 = 0; col0 < (size_t)c->inner[0]; col0 += (size_t)c->chunk_cols, n++)
          if (pass == 1) r->job[n] = (cdChunkJob){.col = i, .row0 = row0, .col0 = col0, .state = JOB_OPEN};
    }
  }
  pthread_mutex_lock(&r->mu);
  r->njob = n;
  r->job_next = 0;
  r->jobs_open = 1;
  pthread_cond_broadcast(&r->cv);
  pthread_mutex_unlock(&r->mu);
  return 0;
}

/* the batch's chunks are all written (or it failed): the main thread claims no more, and
 * the writer waits for the chunk it may still be compressing */
static void jobs_close(cdRecorder *r) {
  pthread_mutex_lock(&r->mu);
  r->jobs_open = 0;
  for (int j = 0; j < r->njob; j++)
    while (r->job[j].state == JOB_HELPER) pthread_cond_wait(&r->cv, &r->mu);
  r->njob = r->job_next = 0;
  for (int k = 0; k < CD_REC_HELP_SLOTS; k++) r->help_busy[k] = 0;
  pthread_cond_broadcast(&r->cv);
  pthread_mutex_unlock(&r->mu);
}

/* writes the chunks of buffer side in their order (the writer's call): each is the
 * writer's own to build, or one the main thread has built meanwhile (writer_wait), which
 * the writer waits for. HDF5 gets the chunks as they are stored (H5Dwrite_chunk), so
 * that its own deflate never runs; the file records the ordinary shuffle and deflate
 * filters, which every reader has. Who built a chunk changes neither its bytes nor the
 * order of the HDF5 calls. */
static int batch_chunks(cdRecorder *r, int side) {
  if (jobs_plan(r, side)) {
    snprintf(r->why, sizeof r->why, "out of memory");
    return -1;
  }
  int j = 0;
  for (int i = 0; i < COL_COUNT; i++) {
    cdColumn *c = &r->col[i];
    if (!c->active || c->nbuf[side] == 0) continue;
    hsize_t dims[3] = {c->nfile + c->nbuf[side], c->inner[0], c->inner[1]};
    if (H5Dset_extent(c->dset, dims) < 0) return h5fail(r, c->path);
    hsize_t first = c->nfile - c->nfile % c->chunk_rows; /* the file row of the tail's first */
    for (; j < r->njob && r->job[j].col == i; j++) {
      cdChunkJob *jb = &r->job[j];
      pthread_mutex_lock(&r->mu);
      prefault_piece(r); /* the main thread's next frames first */
      if (r->job_next == j) {
        r->job_next++;
        jb->state = JOB_WRITER;
        pthread_cond_broadcast(&r->cv); /* the main thread may take the next one */
      }
      while (jb->state != JOB_DONE && jb->state != JOB_WRITER) pthread_cond_wait(&r->cv, &r->mu);
      pthread_mutex_unlock(&r->mu);
      const unsigned char *data = jb->z;
      size_t size = jb->size;
      if (!data) size = chunk_build(r, c, side, jb->row0, jb->col0, &r->wscratch, NULL, &data);
      if (size == 0) {
        snprintf(r->why, sizeof r->why, "out of memory");
        return -1;
      }
      hsize_t offset[3] = {first + jb->row0, jb->col0, 0};
      if (H5Dwrite_chunk(c->dset, H5P_DEFAULT, 0, offset, size, data) < 0) return h5fail(r, c->path);
      if (jb->z) { /* the main thread's slot is free again */
        pthread_mutex_lock(&r->mu);
        jb->z = NULL;
        r->help_busy[jb->slot] = 0;
        pthread_cond_broadcast(&r->cv);
        pthread_mutex_unlock(&r->mu);
      }
    }
  }
  return 0;
}

/* after buffer side is in the file: the rows of the file's new last, partly filled chunk
 * (called before nfile counts them) */
static void col_tail(cdColumn *c, int side) {
  size_t n = c->nbuf[side], rb = c->width * c->esize;
  size_t t_old = (size_t)(c->nfile % c->chunk_rows), t_new = (size_t)((c->nfile + n) % c->chunk_rows);
  if (t_new == 0 || rb == 0) return;
  if (n >= t_new)
    memcpy(c->tail, c->buf[side] + (n - t_new) * rb, t_new * rb);
  else /* the batch went into the same chunk: t_new = t_old + n */
    memcpy(c->tail + t_old * rb, c->buf[side], n * rb);
}

/* makes sure the file can grow by what writing buffer side may take (its rows, the
 * partly filled chunks HDF5 writes anew elsewhere, and 64 KiB of metadata) before HDF5
 * touches the file: the space is allocated past the end, then given back. HDF5 meets a
 * full disk (or a file size limit) in the middle of a batch, sometimes in the flush
 * that records its new end of file, and the file can then no longer be opened; a batch
 * refused here leaves the file as the last batch left it. side -1: the metadata only.
 * 0, or -1 with the reason. */
static int room_check(cdRecorder *r, int side) {
  void *handle = NULL;
  struct stat st;
  if (H5Fget_vfd_handle(r->file, H5P_DEFAULT, &handle) < 0 || !handle) return 0;
  int fd = *(int *)handle;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return 0;
  double need = 65536;
  for (int i = 0; i < COL_COUNT; i++) {
    const cdColumn *c = &r->col[i];
    if (c->active && side >= 0)
      need += (double)(c->nbuf[side] + c->nfile % c->chunk_rows) * (double)(c->width * c->esize);
  }
  if (fallocate(fd, 0, st.st_size, (off_t)need) != 0) {
    int e = errno;
    if (e == EOPNOTSUPP || e == ENOSYS || e == EINVAL) return 0; /* a file system without it */
    snprintf(r->why, sizeof r->why, "%s", strerror(e));
    return -1;
  }
  if (ftruncate(fd, st.st_size) != 0) {
    snprintf(r->why, sizeof r->why, "%s", strerror(errno));
    return -1;
  }
  return 0;
}

/* lays out the contacts buffered in side (COL_STAGE) in the columns COL_BODIES ..
 * COL_PENALTY_STATE of that side: the writer's work, not the main thread's, which only
 * copies the world's contacts with one memcpy. Its instructions are about the same
 * (callgrind: 8.25M against 8.36M in cd_recorderWriteFrame over 21 frames of the pile,
 * S2 10 at 20 iterations), but one sequential stream of stores instead of twelve
 * interleaved ones costs the main thread less time: in bench_recorder at load 7, the
 * main thread's CPU time every frame / last only was 0.95-0.98 with it and 1.12-1.30
 * without, and the run's wall-time ratio 1.30-1.46 against 1.65-1.74 (three runs each,
 * alternately). 0, or -1 when memory ran out. */
static int contacts_expand(cdRecorder *r, int side) {
  const cdColumn *st = &r->col[COL_STAGE];
  size_t n = st->nbuf[side];
  if (n == 0) return 0;
  cdColumn *c = r->col;
  for (int i = COL_BODIES; i < COL_ALPHA; i++) {
    if (c[i].cap[side] >= n) continue;
    size_t cap = 2 * c[i].cap[side] > n ? 2 * c[i].cap[side] : n;
    unsigned char *b = cd_realloc(c[i].buf[side], cap * c[i].width * c[i].esize);
    if (!b) {
      snprintf(r->why, sizeof r->why, "out of memory");
      return -1;
    }
    c[i].buf[side] = b;
    c[i].cap[side] = cap;
  }
  const cdContact *con = (const cdContact *)st->buf[side];
  int32_t *bodies = (int32_t *)c[COL_BODIES].buf[side];
  uint32_t *feature = (uint32_t *)c[COL_FEATURE].buf[side];
  double *point = (double *)c[COL_POINT].buf[side], *normal = (double *)c[COL_NORMAL].buf[side];
  double *gap = (double *)c[COL_GAP].buf[side], *ni = (double *)c[COL_NORMAL_IMPULSE].buf[side];
  double *ti = (double *)c[COL_TANGENT_IMPULSE].buf[side], *nv = (double *)c[COL_NORMAL_VELOCITY].buf[side];
  double *tv = (double *)c[COL_TANGENT_VELOCITY].buf[side], *beta = (double *)c[COL_BETA].buf[side];
  double *pst = (double *)c[COL_PENALTY_STATE].buf[side];
  for (size_t i = 0; i < n; i++) {
    const cdContact *k = &con[i];
    bodies[2 * i] = k->body[0];
    bodies[2 * i + 1] = k->body[1];
    feature[2 * i] = k->feature[0];
    feature[2 * i + 1] = k->feature[1];
    memcpy(&point[3 * i], k->point, sizeof k->point);
    memcpy(&normal[3 * i], k->normal, sizeof k->normal);
    gap[i] = k->gap;
    ni[i] = k->lambda[0];
    for (int d = 0; d < 3; d++) ti[3 * i + (size_t)d] = k->lambda[1] * k->t1[d] + k->lambda[2] * k->t2[d];
    nv[i] = k->post_vn;
    memcpy(&tv[3 * i], k->post_vt, sizeof k->post_vt);
    beta[i] = k->beta;
    memcpy(&pst[4 * i], k->state, sizeof k->state);
  }
  for (int i = COL_BODIES; i < COL_ALPHA; i++) c[i].nbuf[side] = n;
  return 0;
}

/* writes every row of buffer side and flushes the file; on failure every dataset goes
 * back to the last complete batch. Only one thread at a time calls HDF5: the writer, or
 * the main thread while no batch is pending (before the writer starts, after it stops). */
static int batch_write(cdRecorder *r, int side) {
  if (contacts_expand(r, side) || room_check(r, side)) {
    for (int i = 0; i <= COL_STAGE; i++) r->col[i].nbuf[side] = 0;
    return -1;
  }
  int rc = batch_chunks(r, side);
  jobs_close(r); /* before the buffers change: the main thread may be reading them */
  if (!rc && H5Fflush(r->file, H5F_SCOPE_GLOBAL) < 0) rc = h5fail(r, "flush");
  for (int i = 0; i < COL_COUNT; i++) {
    cdColumn *c = &r->col[i];
    if (rc && c->active) {
      hsize_t dims[3] = {c->nfile, c->inner[0], c->inner[1]};
      H5Dset_extent(c->dset, dims);
    } else if (!rc) {
      if (c->active) col_tail(c, side);
      c->nfile += c->nbuf[side];
    }
    c->nbuf[side] = 0;
  }
  r->col[COL_STAGE].nbuf[side] = 0;
  if (rc) H5Fflush(r->file, H5F_SCOPE_GLOBAL);
  return rc;
}

/* ---- the writer thread ----------------------------------------------------------- */

static int recorder_failed(cdRecorder *r);

static void *writer_main(void *arg) {
  cdRecorder *r = arg;
  pthread_setname_np(pthread_self(), "cdsim-writer");
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL); /* the library is thread-safe: each thread its own */
  pthread_mutex_lock(&r->mu);
  for (;;) {
    while (!r->pending && !r->quit)
      if (!prefault_piece(r)) pthread_cond_wait(&r->cv, &r->mu);
    if (!r->pending) break;
    int side = !r->fill;
    pthread_mutex_unlock(&r->mu);
    int rc = batch_write(r, side);
    pthread_mutex_lock(&r->mu);
    if (rc) r->failed = 1;
    else r->nframe_file = (long)r->col[COL_TIME].nfile;
    r->pending = 0;
    pthread_cond_broadcast(&r->cv);
  }
  pthread_mutex_unlock(&r->mu);
  return NULL;
}

/* with r->mu held, by the main thread while it waits for the writer: builds the next
 * chunk nobody has claimed of the batch being written, into a free slot, and hands it to
 * the writer, which writes it in its turn. The two cores then share the batch (at close,
 * the last one, which no step overlaps). 0 when there is nothing it can take: no chunk
 * left, no free slot, or a chunk larger than its memory (the writer builds those). */
static int help_one(cdRecorder *r) {
  if (!r->jobs_open || r->job_next >= r->njob) return 0;
  int slot = 0;
  while (slot < CD_REC_HELP_SLOTS && r->help_busy[slot]) slot++;
  cdChunkJob *jb = &r->job[r->job_next];
  const cdColumn *c = &r->col[jb->col];
  if (slot == CD_REC_HELP_SLOTS || chunk_bytes(c) > r->help_bytes) return 0;
  r->job_next++;
  jb->state = JOB_HELPER;
  r->help_busy[slot] = 1;
  int side = !r->fill;
  pthread_mutex_unlock(&r->mu);
  /* the job list and the batch's buffers stay as they are until the chunk is done
   * (jobs_close waits for it) */
  const unsigned char *data = NULL;
  size_t size = chunk_build(r, c, side, jb->row0, jb->col0, &r->hscratch, r->help_out[slot], &data);
  pthread_mutex_lock(&r->mu);
  if (size) {
    jb->z = r->help_out[slot];
    jb->size = size;
    jb->slot = slot;
    r->helped++;
  } else {
    r->help_busy[slot] = 0;
  }
  jb->state = JOB_DONE;
  pthread_cond_broadcast(&r->cv);
  return 1;
}

/* waits until the writer has written every batch handed to it; -1 when a write failed.
 * After it the main thread may call HDF5 until it hands over the next batch. */
static int writer_wait(cdRecorder *r) {
  if (!r->threaded) return r->failed ? -1 : 0;
  pthread_mutex_lock(&r->mu);
  while (r->pending) {
    if (help_one(r)) continue;
    pthread_cond_wait(&r->cv, &r->mu);
  }
  int failed = r->failed;
  pthread_mutex_unlock(&r->mu);
  return failed ? -1 : 0;
}

/* hands the frames buffered to the writer (after the batch before is written) and goes
 * on filling the other buffer; without the writer thread, writes them here */
static int batch_submit(cdRecorder *r) {
  int rc = writer_wait(r);
  if (!rc && !r->threaded) {
    rc = batch_write(r, r->fill);
    if (rc) r->failed = 1;
    else r->nframe_file = (long)r->col[COL_TIME].nfile;
  } else if (!rc) {
    pthread_mutex_lock(&r->mu);
    r->fill = !r->fill;
    r->pending = 1;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
  }
  r->nbatch = 0;
  r->batch_bytes = 0;
  clock_gettime(CLOCK_MONOTONIC, &r->last_batch);
  return rc;
}

/* stops the writer after the batches handed to it; the main thread owns HDF5 again */
static void writer_stop(cdRecorder *r) {
  if (!r->threaded) return;
  pthread_mutex_lock(&r->mu);
  r->quit = 1;
  pthread_cond_broadcast(&r->cv);
  pthread_mutex_unlock(&r->mu);
  pthread_join(r->writer, NULL);
  r->threaded = 0;
}

/* starts the writer with every signal blocked (they are the main thread's: SIGINT and
 * SIGTERM stop the run between steps). 0 or -1. */
static int writer_start(cdRecorder *r) {
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  int err = pthread_create(&r->writer, NULL, writer_main, r);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (err) {
    snprintf(r->why, sizeof r->why, "cannot start the writer thread: %s", strerror(err));
    return -1;
  }
  r->threaded = 1;
  return 0;
}

/* ---- open and close -------------------------------------------------------------- */

static void col_free(cdColumn *c) {
  cd_free(c->tail);
  c->tail = NULL;
  if (c->dset >= 0) H5Dclose(c->dset);
  c->dset = H5I_INVALID_HID;
  c->active = 0;
  for (int f = 0; f < 2; f++) {
    cd_free(c->buf[f]);
    c->buf[f] = NULL;
    c->nbuf[f] = c->cap[f] = c->ready[f] = 0;
  }
}

/* closes every id and frees r; returns -1 when the file did not close cleanly */
static int recorder_free(cdRecorder *r) {
  int rc = 0;
  writer_stop(r);
  pthread_cond_destroy(&r->cv);
  pthread_mutex_destroy(&r->mu);
  cd_free(r->box_body);
  scratch_free(&r->wscratch);
  scratch_free(&r->hscratch);
  for (int k = 0; k < CD_REC_HELP_SLOTS; k++) cd_free(r->help_out[k]);
  cd_free(r->job);
  for (int i = 0; i <= COL_STAGE; i++) col_free(&r->col[i]);
  for (int g = 0; g < GRP_COUNT; g++)
    if (r->group[g] >= 0) H5Gclose(r->group[g]);
  if (r->str_type >= 0) H5Tclose(r->str_type);
  if (r->file >= 0 && H5Fclose(r->file) < 0) rc = -1;
  cd_free(r);
  cd_deflateRelease();
  return rc;
}

static void columns_define(cdRecorder *r) {
  hsize_t b = (hsize_t)r->nbody;
  cdColumn *c = r->col;
  hid_t f64 = H5T_IEEE_F64LE, d = H5T_NATIVE_DOUBLE;
  col_define(&c[COL_TIME], "/time", d, f64, 1, 0, 0);
  col_define(&c[COL_POSITION], "/trajectory/position", d, f64, 3, b, 3);
  col_define(&c[COL_ORIENTATION], "/trajectory/orientation", d, f64, 3, b, 4);
  col_define(&c[COL_VELOCITY], "/trajectory/velocity", d, f64, 3, b, 3);
  col_define(&c[COL_ANGULAR], "/trajectory/angular_velocity", d, f64, 3, b, 3);
  col_define(&c[COL_OFFSET], "/contacts/offset", H5T_NATIVE_INT64, H5T_STD_I64LE, 1, 0, 0);
  col_define(&c[COL_ITERATIONS], "/solver/iterations", H5T_NATIVE_INT32, H5T_STD_I32LE, 1, 0, 0);
  col_define(&c[COL_RESIDUAL], "/solver/residual", d, f64, 1, 0, 0);
  col_define(&c[COL_CONVERGED], "/solver/converged", H5T_NATIVE_UINT8, H5T_STD_U8LE, 1, 0, 0);
  col_define(&c[COL_SUBSTEPS], "/solver/substeps", H5T_NATIVE_INT32, H5T_STD_I32LE, 1, 0, 0);
  col_define(&c[COL_FACTORIZATIONS], "/solver/factorizations", H5T_NATIVE_INT32, H5T_STD_I32LE, 1, 0, 0);
  col_define(&c[COL_PRODUCTS], "/solver/products", H5T_NATIVE_INT32, H5T_STD_I32LE, 1, 0, 0);
  col_define(&c[COL_WARN_CHOLMOD], "/solver/warn_cholmod", H5T_NATIVE_INT64, H5T_STD_I64LE, 1, 0, 0);
  col_define(&c[COL_WARN_NONCONVERGED], "/solver/warn_nonconverged", H5T_NATIVE_INT64, H5T_STD_I64LE, 1, 0, 0);
  col_define(&c[COL_WARN_FALLBACK], "/solver/warn_fallback", H5T_NATIVE_INT64, H5T_STD_I64LE, 1, 0, 0);
  col_define(&c[COL_KINETIC], "/energy/kinetic", d, f64, 1, 0, 0);
  col_define(&c[COL_POTENTIAL], "/energy/potential", d, f64, 1, 0, 0);
  col_define(&c[COL_BOX_VERTICES], "/geometry/box_vertices", d, f64, 3, 8 * (hsize_t)r->nbox, 3);
  col_define(&c[COL_BODIES], "/contacts/bodies", H5T_NATIVE_INT32, H5T_STD_I32LE, 2, 2, 0);
  col_define(&c[COL_POINT], "/contacts/point", d, f64, 2, 3, 0);
  col_define(&c[COL_NORMAL], "/contacts/normal", d, f64, 2, 3, 0);
  col_define(&c[COL_GAP], "/contacts/gap", d, f64, 1, 0, 0);
  col_define(&c[COL_NORMAL_IMPULSE], "/contacts/normal_impulse", d, f64, 1, 0, 0);
  col_define(&c[COL_TANGENT_IMPULSE], "/contacts/tangent_impulse", d, f64, 2, 3, 0);
  col_define(&c[COL_NORMAL_VELOCITY], "/contacts/normal_velocity", d, f64, 1, 0, 0);
  col_define(&c[COL_TANGENT_VELOCITY], "/contacts/tangent_velocity", d, f64, 2, 3, 0);
  col_define(&c[COL_FEATURE], "/contacts/feature", H5T_NATIVE_UINT32, H5T_STD_U32LE, 2, 2, 0);
  col_define(&c[COL_BETA], "/contacts/beta", d, f64, 1, 0, 0);
  col_define(&c[COL_PENALTY_STATE], "/contacts/penalty_state", d, f64, 2, 4, 0);
  /* the width of alpha is set when it is first seen */
  col_define(&c[COL_ALPHA], "/contacts/alpha", d, f64, 2, 1, 0);
  col_define(&c[COL_STAGE], "(contacts buffered)", H5T_NATIVE_UCHAR, H5T_NATIVE_UCHAR, 2, sizeof(cdContact), 0);
}

/* everything of the file after its creation: attributes, groups, bodies, columns */
static int recorder_layout(cdRecorder *r, const cdScene *scene, const cdRunInfo *info) {
  int one = 1, every = info->output_every;
  double dt = info->dt;
  if (attr_string(r, "format", "cdsim") || attr_write(r, "format_version", H5T_STD_I32LE, H5T_NATIVE_INT, &one) ||
      attr_string(r, "model", info->model) || attr_string(r, "solver", info->solver) ||
      attr_write(r, "dt", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &dt) ||
      attr_write(r, "output_every", H5T_STD_I32LE, H5T_NATIVE_INT, &every) ||
      attr_string(r, "command_line", info->command_line) || attr_string(r, "scene", info->scene_json) ||
      attr_string(r, "cdsim_version", CDSIM_VERSION) || attr_string(r, "status", "running"))
    return -1;
  hid_t gcpl = H5Pcreate(H5P_GROUP_CREATE);
  if (gcpl < 0 || H5Pset_obj_track_times(gcpl, 0) < 0) {
    if (gcpl >= 0) H5Pclose(gcpl);
    return h5fail(r, "group properties");
  }
  int rc = 0;
  for (int g = 0; g < GRP_COUNT && !rc; g++) {
    r->group[g] = H5Gcreate2(r->file, group_name[g], H5P_DEFAULT, gcpl, H5P_DEFAULT);
    if (r->group[g] < 0) rc = h5fail(r, group_name[g]);
  }
  H5Pclose(gcpl);
  if (rc || bodies_group(r, scene)) return -1;
  for (int i = 0; i < COL_ALPHA; i++) {
    cdColumn *c = &r->col[i];
    if (i == COL_BOX_VERTICES && r->nbox == 0) continue;
    if (col_create(r, c, i >= COL_NFRAME_COLS, 0, NULL)) return -1;
    if (i < COL_NFRAME_COLS && (r->frame_chunk == 0 || c->chunk_rows < r->frame_chunk)) r->frame_chunk = c->chunk_rows;
    /* per-frame rows: a batch in each buffer; contact rows grow as they come */
    size_t cap = i < COL_NFRAME_COLS ? CD_REC_BATCH : 0;
    for (int f = 0; cap && f < 2; f++) {
      if (!(c->buf[f] = cd_malloc(cap * c->width * c->esize))) {
        snprintf(r->why, sizeof r->why, "out of memory");
        return -1;
      }
      c->cap[f] = cap;
    }
  }
  for (int i = 0; i < COL_NFRAME_COLS; i++)
    for (int f = 0; f < 2 && r->col[i].active; f++)
      prefault_ask(r, i, f, 0, CD_REC_PREFAULT_FRAMES < CD_REC_BATCH ? CD_REC_PREFAULT_FRAMES : CD_REC_BATCH);
  /* the chunk memory of both threads, for chunks of every column but alpha: the
   * allocations of a run then do not depend on which thread builds which chunk (the
   * writer's grows for alpha's, if larger) */
  for (int i = 0; i < COL_ALPHA; i++)
    if (r->col[i].active && chunk_bytes(&r->col[i]) > r->help_bytes) r->help_bytes = chunk_bytes(&r->col[i]);
  int nomem = 0;
  for (int k = 0; k < 3 && !nomem; k++) {
    size_t n = k < 2 ? r->help_bytes : cd_deflateBound(r->help_bytes);
    nomem = !scratch_get(&r->wscratch, k, n) || (k < 2 && !scratch_get(&r->hscratch, k, n));
  }
  for (int k = 0; k < CD_REC_HELP_SLOTS && !nomem; k++)
    nomem = !(r->help_out[k] = cd_malloc(cd_deflateBound(r->help_bytes)));
  if (nomem) {
    snprintf(r->why, sizeof r->why, "out of memory");
    return -1;
  }
  /* offset[0] = 0: the file is valid (zero frames) from the start */
  *(int64_t *)col_push(r, &r->col[COL_OFFSET]) = 0;
  if (batch_write(r, r->fill)) return -1;
  clock_gettime(CLOCK_MONOTONIC, &r->last_batch);
  return writer_start(r);
}

/* 1 when the regular file at path is open in another process that holds HDF5's file lock
 * on it (a run writing it, or a reader: HDF5 takes flock's exclusive or shared lock). Asked
 * before anything is touched: H5Fcreate with H5F_ACC_TRUNC truncates the file when it opens
 * it and only then finds the lock taken, so a second run given a running one's output
 * destroyed every frame that run had written (and removed its sidecar). The lock is taken
 * and dropped at once; a file system without flock (ENOLCK, ENOSYS) counts as free, as
 * HDF5 itself then works unlocked. */
static int path_locked(const char *path) {
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return 0;
  struct stat st;
  int locked = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && flock(fd, LOCK_EX | LOCK_NB) != 0 &&
               errno == EWOULDBLOCK;
  close(fd); /* and with it our lock */
  return locked;
}

cdRecorder *cd_recorderOpen(const char *path, const cdScene *scene, const cdRunInfo *info, char *err,
                            size_t errlen) {
  if (path_locked(path)) {
    snprintf(err, errlen,
             "cannot create output file %s: another process has it open (a run writing it, or a reader); "
             "it was left as it is: give this run another --out",
             path);
    return NULL;
  }
  /* No library shutdown at exit: after a write failed (a full disk) H5Fclose fails and
   * leaves the file's ID pointing at a half-closed file, and HDF5's atexit handler
   * (H5_term_library -> H5F__close_cb) then dereferences it: the process that reported
   * the error cleanly died of SIGSEGV on its way out. Every file the recorder closes
   * successfully is complete on disk, so skipping the shutdown loses nothing. Only
   * effective before the library's first use; later calls fail harmlessly. */
  H5dont_atexit();
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  cdRecorder *r = cd_calloc(1, sizeof *r);
  if (!r) {
    snprintf(err, errlen, "cannot create output file %s: out of memory", path);
    return NULL;
  }
  r->file = r->str_type = H5I_INVALID_HID;
  for (int g = 0; g < GRP_COUNT; g++) r->group[g] = H5I_INVALID_HID;
  pthread_mutex_init(&r->mu, NULL);
  pthread_cond_init(&r->cv, NULL);
  r->nbody = scene->nbody;
  snprintf(r->path, sizeof r->path, "%s", path);
  r->deflate = H5Zfilter_avail(H5Z_FILTER_DEFLATE) > 0;
  for (int i = 0; i < scene->nbody; i++) r->nbox += scene->body[i].shape != CD_SPHERE;
  /* a contact chunk of about a batch of frames' contacts: the file's last, partly filled
   * chunk of a column is compressed again with each batch, so a chunk of many batches'
   * rows is compressed that many times over (the sliding cube: 4 contacts a frame, 4096
   * rows = 32 batches; 77% of its run's instructions) */
  long moving = 0;
  for (int i = 0; i < scene->nbody; i++) moving += !scene->body[i].fixed;
  r->contact_chunk = 128;
  while (r->contact_chunk < CD_REC_CONTACT_CHUNK &&
         r->contact_chunk < (hsize_t)(CD_REC_CONTACTS_PER_BODY * CD_REC_BATCH) * (hsize_t)moving)
    r->contact_chunk *= 2;
  r->box_body = cd_calloc(r->nbox ? (size_t)r->nbox : 1, sizeof *r->box_body);
  if (!r->box_body) {
    snprintf(err, errlen, "cannot create output file %s: out of memory", path);
    recorder_free(r);
    return NULL;
  }
  for (int i = 0, j = 0; i < scene->nbody; i++)
    if (scene->body[i].shape != CD_SPHERE) r->box_body[j++] = i;
  columns_define(r);
  /* the sidecar of the file being replaced describes another run */
  cd_xdmfRemove(path);

  /* a strong close degree: closing the file closes whatever is still open in it */
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  int rc = 0;
  if (fapl < 0 || H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG) < 0) rc = h5fail(r, "file properties");
#if H5_VERSION_GE(1, 10, 7)
  /* lock the file, but still work on file systems without locks */
  if (!rc && H5Pset_file_locking(fapl, 1, 1) < 0) rc = h5fail(r, "file properties");
#endif
  if (!rc) {
    r->file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    if (r->file < 0) rc = h5fail(r, NULL);
  }
  if (fapl >= 0) H5Pclose(fapl);
  int created = !rc;
  if (!rc) {
    r->str_type = H5Tcopy(H5T_C_S1);
    if (r->str_type < 0 || H5Tset_size(r->str_type, H5T_VARIABLE) < 0 ||
        H5Tset_cset(r->str_type, H5T_CSET_UTF8) < 0)
      rc = h5fail(r, "string type");
  }
  if (!rc) rc = recorder_layout(r, scene, info);
  if (!rc && r->failed) rc = -1;
  if (rc) {
    snprintf(err, errlen, "cannot create output file %s: %s", path, r->why);
    recorder_free(r);
    /* leave nothing behind, but never remove what is not a regular file (/dev/...) */
    struct stat st;
    if (created && stat(path, &st) == 0 && S_ISREG(st.st_mode)) unlink(path);
    return NULL;
  }
  return r;
}

int cd_recorderWriteXdmf(cdRecorder *r, char *err, size_t errlen) {
  if (!r) return -1;
  /* after a failed write the run has its I/O error, and HDF5 no guarantee: no sidecar */
  if (recorder_failed(r) || cd_recorderFlush(r) < 0) return 0;
  /* the writer is idle: the main thread reads the file */
  return cd_xdmfWriteFile(r->file, r->path, err, errlen);
}

long cd_recorderFlush(cdRecorder *r) {
  if (!r || recorder_failed(r)) return -1;
  if ((r->nbatch > 0 && batch_submit(r)) || writer_wait(r)) return -1;
  return r->nframe_file;
}

long cd_recorderChunksHelped(cdRecorder *r) {
  pthread_mutex_lock(&r->mu);
  long n = r->helped;
  pthread_mutex_unlock(&r->mu);
  return n;
}

/* rewrites the string attribute name of the root */
static int attr_rewrite(cdRecorder *r, const char *name, const char *value) {
  hid_t a = H5Aopen(r->file, name, H5P_DEFAULT);
  int rc = a < 0 || H5Awrite(a, r->str_type, &value) < 0 ? -1 : 0;
  if (a >= 0) H5Aclose(a);
  return rc;
}

int cd_recorderClose(cdRecorder *r, const char *status, const char *solver) {
  if (!r) return -1;
  if (!recorder_failed(r) && r->nbatch > 0) batch_submit(r);
  int rc = writer_wait(r);
  writer_stop(r);
  /* after a failed write (a full disk) the attributes are rewritten only where there is
   * room: the file then keeps what the last batch left, status "running" */
  if (rc && room_check(r, -1)) {
    recorder_free(r);
    return -1;
  }
  /* a last batch that failed with room left (memory ran out): the file says so */
  char failed[300];
  if (rc) {
    snprintf(failed, sizeof failed, "I/O error: the last frames were not written (%s)", r->why);
    status = failed;
  }
  if (attr_rewrite(r, "status", status ? status : "")) rc = -1;
  if (solver && attr_rewrite(r, "solver", solver)) rc = -1;
  if (H5Fflush(r->file, H5F_SCOPE_GLOBAL) < 0) rc = -1;
  if (recorder_free(r)) rc = -1;
  return rc;
}

/* ---- frames ---------------------------------------------------------------------- */

/* activates /contacts/alpha with width m; rows of contacts accepted before read NaN */
static int alpha_activate(cdRecorder *r, int m) {
  /* the dataset is created here, by the main thread: the writer must be idle */
  if (writer_wait(r)) return -1;
  cdColumn *c = &r->col[COL_ALPHA];
  col_free(c); /* from an earlier failed activation, maybe of another width */
  col_define(c, c->path, H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE, 2, (hsize_t)m, 0);
  const double fill = NAN;
  size_t pending = r->col[COL_STAGE].nbuf[r->fill];
  if (col_reserve(r, c, pending)) return -1;
  if (col_create(r, c, 1, r->col[COL_BODIES].nfile, &fill)) {
    if (c->dset >= 0) H5Dclose(c->dset);
    c->dset = H5I_INVALID_HID;
    c->active = 0;
    return -1;
  }
  for (size_t i = 0; i < pending; i++) {
    double *row = col_push(r, c);
    for (int k = 0; k < m; k++) row[k] = fill;
  }
  return 0;
}

/* the eight corners of box i (world), in VTK's hexahedron order */
static void box_corners(const cdBodyDef *b, const double *x, const double *R, double *out) {
  static const signed char sign[8][3] = {{-1, -1, -1}, {1, -1, -1}, {1, 1, -1}, {-1, 1, -1},
                                         {-1, -1, 1},  {1, -1, 1},  {1, 1, 1},  {-1, 1, 1}};
  for (int v = 0; v < 8; v++) {
    double h[3] = {sign[v][0] * b->half[0], sign[v][1] * b->half[1], sign[v][2] * b->half[2]};
    for (int d = 0; d < 3; d++) out[3 * v + d] = x[d] + R[3 * d] * h[0] + R[3 * d + 1] * h[1] + R[3 * d + 2] * h[2];
  }
}

/* 1 once a batch write failed (the writer says so between frames) */
static int recorder_failed(cdRecorder *r) {
  if (!r->threaded) return r->failed;
  pthread_mutex_lock(&r->mu);
  int f = r->failed;
  pthread_mutex_unlock(&r->mu);
  return f;
}


int cd_recorderWriteFrame(cdRecorder *r, const cdScene *scene, const cdWorld *world, const cdSolveStats *stats) {
  if (!r || recorder_failed(r) || world->nbody != r->nbody || scene->nbody != r->nbody) return -1;
  const cdContactSet *cs = &world->contacts;
  /* frame 0 is the initial state: no step produced it, so it has no contacts */
  int ncon = r->nframe == 0 ? 0 : cs->ncon;
  int m = cs->nalpha;
  cdColumn *alpha = &r->col[COL_ALPHA];
  if (m > 0 && !alpha->active && alpha_activate(r, m)) return -1;
  if (m > 0 && (size_t)m != alpha->width) return -1;

  /* all memory first, so that a failure leaves no partial frame */
  if (col_reserve(r, &r->col[COL_STAGE], (size_t)ncon) || (alpha->active && col_reserve(r, alpha, (size_t)ncon)))
    return -1;

  cdColumn *c = r->col;
  size_t nb = (size_t)r->nbody;
  *(double *)col_push(r, &c[COL_TIME]) = world->time;
  double *pos = col_push(r, &c[COL_POSITION]), *ori = col_push(r, &c[COL_ORIENTATION]);
  double *vel = col_push(r, &c[COL_VELOCITY]), *ang = col_push(r, &c[COL_ANGULAR]);
  if (nb) {
    memcpy(pos, world->x, nb * 3 * sizeof(double));
    memcpy(ori, world->q, nb * 4 * sizeof(double));
  }
  for (size_t i = 0; i < nb; i++) {
    memcpy(&vel[3 * i], &world->v[6 * i], 3 * sizeof(double));
    memcpy(&ang[3 * i], &world->v[6 * i + 3], 3 * sizeof(double));
  }
  cdSolveStats none = {.converged = 1};
  const cdSolveStats *st = stats && r->nframe > 0 ? stats : &none;
  *(int32_t *)col_push(r, &c[COL_ITERATIONS]) = st->iterations;
  *(double *)col_push(r, &c[COL_RESIDUAL]) = st->residual;
  *(uint8_t *)col_push(r, &c[COL_CONVERGED]) = st->converged ? 1 : 0;
  *(int32_t *)col_push(r, &c[COL_SUBSTEPS]) = st->substeps;
  *(int32_t *)col_push(r, &c[COL_FACTORIZATIONS]) = st->factorizations;
  *(int32_t *)col_push(r, &c[COL_PRODUCTS]) = st->products;
  *(int64_t *)col_push(r, &c[COL_WARN_CHOLMOD]) = world->warn_cholmod;
  *(int64_t *)col_push(r, &c[COL_WARN_NONCONVERGED]) = world->warn_nonconverged;
  *(int64_t *)col_push(r, &c[COL_WARN_FALLBACK]) = world->warn_fallback;
  *(double *)col_push(r, &c[COL_KINETIC]) = cd_worldKineticEnergy(scene, world);
  *(double *)col_push(r, &c[COL_POTENTIAL]) = cd_worldPotentialEnergy(scene, world);
  if (r->nbox > 0) {
    double *corner = col_push(r, &c[COL_BOX_VERTICES]);
    for (int j = 0; j < r->nbox; j++) {
      int i = r->box_body[j];
      box_corners(&scene->body[i], &world->x[3 * i], &world->R[9 * i], &corner[24 * j]);
    }
  }

  /* the contacts as they are: the writer lays them out (contacts_expand) */
  size_t n = (size_t)ncon;
  if (n) memcpy(col_rows(r, &c[COL_STAGE], n), cs->con, n * sizeof(cdContact));
  double *al = alpha->active ? col_rows(r, alpha, n) : NULL;
  for (size_t i = 0; al && i < n; i++)
    for (size_t a = 0; a < alpha->width; a++)
      al[alpha->width * i + a] = m > 0 ? cs->alpha[i * (size_t)m + a] : NAN;
  r->ncontact += ncon;
  *(int64_t *)col_push(r, &c[COL_OFFSET]) = r->ncontact;
  r->nframe++;
  r->nbatch++;
  r->batch_bytes += (double)(nb * 13 + 24 * (size_t)r->nbox) * sizeof(double) + 176.0 * ncon;

  if (r->nbatch >= CD_REC_BATCH || r->batch_bytes >= CD_REC_BATCH_BYTES ||
      seconds_since(&r->last_batch) >= CD_REC_FLUSH_SECONDS ||
      (r->batch_bytes >= CD_REC_EARLY_BYTES && (hsize_t)r->nbatch % r->frame_chunk == 0))
    return batch_submit(r);
  return 0;
}

/* ---- summary --------------------------------------------------------------------- */

static int group_attr(cdRecorder *r, hid_t g, const char *name, hid_t ftype, hid_t mtype, const void *v) {
  hid_t space = H5Screate(H5S_SCALAR);
  if (space < 0) return h5fail(r, name);
  hid_t a = H5Acreate2(g, name, ftype, space, H5P_DEFAULT, H5P_DEFAULT);
  int rc = a < 0 || H5Awrite(a, mtype, v) < 0 ? h5fail(r, name) : 0;
  if (a >= 0) H5Aclose(a);
  H5Sclose(space);
  return rc;
}

int cd_recorderWriteSummary(cdRecorder *r, const cdSummary *s) {
  /* HDF5 calls of the main thread: the writer must be idle */
  if (!r || writer_wait(r)) return -1;
  hid_t g = H5Gcreate2(r->file, "/summary", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  if (g < 0) return h5fail(r, "/summary");
  const struct {
    const char *name;
    long v;
  } ints[] = {{"steps", s->steps},
              {"substeps", s->substeps},
              {"contacts_max", s->contacts_max},
              {"iterations_max", s->iterations_max},
              {"nonconverged_steps", s->nonconverged_steps},
              {"fallbacks", s->fallbacks},
              {"step_time_max_at", s->step_time_max_at}};
  const struct {
    const char *name;
    double v;
  } reals[] = {{"wall_time", s->wall_time},
               {"contacts_mean", s->contacts_mean},
               {"iterations_mean", s->iterations_mean},
               {"residual_max", s->residual_max},
               {"penetration_max", s->penetration_max},
               {"lift_max", s->lift_max},
               {"kinetic_energy_final", s->kinetic_energy_final},
               {"time_collide", s->time_collide},
               {"time_build", s->time_build},
               {"time_solve", s->time_solve},
               {"time_record", s->time_record},
               {"step_time_median", s->step_time_median},
               {"step_time_max", s->step_time_max}};
  int rc = 0;
  for (size_t i = 0; i < sizeof ints / sizeof ints[0] && !rc; i++) {
    int64_t v = ints[i].v;
    rc = group_attr(r, g, ints[i].name, H5T_STD_I64LE, H5T_NATIVE_INT64, &v);
  }
  for (size_t i = 0; i < sizeof reals / sizeof reals[0] && !rc; i++)
    rc = group_attr(r, g, reals[i].name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &reals[i].v);
  H5Gclose(g);
  return rc;
}
