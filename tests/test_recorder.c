/* test_recorder.c: the HDF5 output file (io/recorder.c, DESIGN §3).
 *
 * A hand-made scene (a sphere and a box that move, a fixed cube) and a hand-filled world
 * whose state and contacts are functions of the frame number k, so a test can regenerate
 * any frame and compare what the file holds with what was written, exactly.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <hdf5.h>

#include "alloc.h"
#include "contact.h"
#include "recorder.h"
#include "test.h"

enum { NB = 3, NALPHA = 4 };
static const double DT = 1e-3;

typedef struct {
  cdScene scene;
  cdMaterial mat[1];
  cdBodyDef body[NB];
  cdWorld world;
  double x[NB * 3], q[NB * 4], v[NB * 6], R[NB * 9];
  cdSolveStats stats;
  int alpha_from; /* first frame whose contact set has NALPHA directions; -1: never */
} Fixture;

static const cdRunInfo run_info = {"lcp", "lemke", "cdsim run scene.json -o out.h5", "{\"bodies\": []}", 1e-3, 1};

static void fixture_init(Fixture *f, int alpha_from) {
  memset(f, 0, sizeof *f);
  cdScene *s = &f->scene;
  snprintf(s->model, sizeof s->model, "lcp");
  s->gravity[2] = -9.81;
  s->gravity[0] = 0.5; /* a tilted gravity checks every component of -m g.x */
  s->dt = DT;
  s->nmaterial = 1;
  s->material = f->mat;
  s->nbody = NB;
  s->body = f->body;
  cdBodyDef *b = f->body;
  snprintf(b[0].name, sizeof b[0].name, "ball");
  b[0].shape = CD_SPHERE;
  b[0].radius = 0.1;
  b[0].mass = 2.0;
  for (int k = 0; k < 3; k++) b[0].inertia[k] = 0.4 * 2.0 * 0.01;
  snprintf(b[1].name, sizeof b[1].name, "brick");
  b[1].shape = CD_BOX;
  b[1].half[0] = 0.2, b[1].half[1] = 0.1, b[1].half[2] = 0.05;
  b[1].mass = 3.0;
  b[1].inertia[0] = 3.0 / 3.0 * (0.01 + 0.0025);
  b[1].inertia[1] = 3.0 / 3.0 * (0.04 + 0.0025);
  b[1].inertia[2] = 3.0 / 3.0 * (0.04 + 0.01);
  snprintf(b[2].name, sizeof b[2].name, "floor");
  b[2].shape = CD_BOX;
  b[2].half[0] = b[2].half[1] = b[2].half[2] = 1.0;
  b[2].fixed = 1;
  cdWorld *w = &f->world;
  w->nbody = NB;
  w->x = f->x, w->q = f->q, w->v = f->v, w->R = f->R;
  cd_contactSetInit(&w->contacts);
  /* grow the set once now, so that making frames allocates nothing later */
  if (alpha_from == 0) cd_contactSetSetAlpha(&w->contacts, NALPHA);
  cd_contactSetPush(&w->contacts);
  cd_contactSetClear(&w->contacts);
  f->alpha_from = alpha_from;
}

static void fixture_free(Fixture *f) { cd_contactSetFree(&f->world.contacts); }

static int contacts_of(int k) { return k == 0 ? 0 : (k * 7) % 5; }

/* the state of frame k */
static void frame_make(Fixture *f, int k) {
  cdWorld *w = &f->world;
  w->time = k * DT;
  w->step = k;
  for (int i = 0; i < NB; i++) {
    double *x = &w->x[3 * i], *q = &w->q[4 * i], *v = &w->v[6 * i], *R = &w->R[9 * i];
    int moving = !f->body[i].fixed;
    double t = moving ? 0.1 * k + i : i;
    x[0] = i + 0.01 * (moving ? k : 0);
    x[1] = 0.5 * i - 0.002 * (moving ? k : 0);
    x[2] = 1.0 + sin(t);
    double a = 0.05 * t + i, ax[3] = {1 / sqrt(14.0), 2 / sqrt(14.0), 3 / sqrt(14.0)};
    q[0] = cos(a / 2);
    for (int d = 0; d < 3; d++) q[1 + d] = sin(a / 2) * ax[d];
    double qw = q[0], qx = q[1], qy = q[2], qz = q[3];
    R[0] = 1 - 2 * (qy * qy + qz * qz), R[1] = 2 * (qx * qy - qw * qz), R[2] = 2 * (qx * qz + qw * qy);
    R[3] = 2 * (qx * qy + qw * qz), R[4] = 1 - 2 * (qx * qx + qz * qz), R[5] = 2 * (qy * qz - qw * qx);
    R[6] = 2 * (qx * qz - qw * qy), R[7] = 2 * (qy * qz + qw * qx), R[8] = 1 - 2 * (qx * qx + qy * qy);
    for (int d = 0; d < 6; d++) v[d] = moving ? cos(t + d) * (1 + d) : 0.0;
  }
  w->warn_cholmod = k / 10, w->warn_nonconverged = k / 20, w->warn_fallback = k / 30;
  f->stats = (cdSolveStats){.iterations = k % 7 + 1, .residual = 1e-9 * k, .converged = k % 3 != 0, .substeps = k % 4};
  cdContactSet *cs = &w->contacts;
  if (f->alpha_from > 0 && k == f->alpha_from) cd_contactSetSetAlpha(cs, NALPHA);
  cd_contactSetClear(cs);
  for (int i = 0; i < contacts_of(k); i++) {
    cdContact *c = cd_contactSetPush(cs);
    if (!c) return;
    c->body[0] = i % 2 ? -1 : 0;
    c->body[1] = 1 + i % 2;
    c->feature[0] = (uint32_t)i;
    c->feature[1] = (uint32_t)(CD_FEAT_FACE + i);
    double th = 0.01 * k + 0.3 * i, s = sin(th), co = cos(th);
    c->point[0] = 0.01 * k, c->point[1] = 0.1 * i, c->point[2] = 0.5;
    c->normal[0] = s, c->normal[1] = 0, c->normal[2] = co;
    c->t1[0] = co, c->t1[1] = 0, c->t1[2] = -s;
    c->t2[0] = 0, c->t2[1] = 1, c->t2[2] = 0;
    c->gap = -1e-4 * i;
    c->lambda[0] = 0.1 * k + i, c->lambda[1] = 0.01 * i + 0.003, c->lambda[2] = -0.02 * k;
    c->beta = 0.001 * k;
    for (int d = 0; d < 4; d++) c->state[d] = k + 10.0 * i + d;
    c->post_vn = 0.5 - 0.001 * k;
    c->post_vt[0] = 0.1 * i, c->post_vt[1] = -0.2 * k, c->post_vt[2] = 0.3;
    for (int a = 0; a < cs->nalpha; a++) cs->alpha[i * cs->nalpha + a] = k + 0.1 * a + 0.01 * i;
  }
}

/* writes frames 0 .. nframe-1 and closes with status; 0 when every call succeeded */
static int run_write(const char *path, int nframe, int alpha_from, const char *status) {
  Fixture *f = calloc(1, sizeof *f);
  if (!f) return -1;
  fixture_init(f, alpha_from);
  char err[512];
  cdRecorder *r = cd_recorderOpen(path, &f->scene, &run_info, err, sizeof err);
  int rc = r ? 0 : -1;
  for (int k = 0; r && k < nframe; k++) {
    frame_make(f, k);
    if (cd_recorderWriteFrame(r, &f->scene, &f->world, k ? &f->stats : NULL)) rc = -1;
  }
  if (r && cd_recorderClose(r, status, NULL)) rc = -1;
  fixture_free(f);
  free(f);
  return rc;
}

/* ---- reading back ---------------------------------------------------------------- */

typedef struct {
  int rank;
  hsize_t dims[3];
  size_t n; /* elements */
  void *data;
} Array;

static int array_read(hid_t file, const char *path, hid_t mtype, Array *a) {
  memset(a, 0, sizeof *a);
  hid_t d = H5Dopen2(file, path, H5P_DEFAULT);
  if (d < 0) return -1;
  hid_t s = H5Dget_space(d);
  a->rank = H5Sget_simple_extent_dims(s, a->dims, NULL);
  a->n = (size_t)H5Sget_simple_extent_npoints(s);
  a->data = calloc(a->n ? a->n : 1, H5Tget_size(mtype));
  int rc = a->data && (a->n == 0 || H5Dread(d, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, a->data) >= 0) ? 0 : -1;
  H5Sclose(s);
  H5Dclose(d);
  return rc;
}

static char *attr_string_read(hid_t file, const char *name) {
  hid_t a = H5Aopen(file, name, H5P_DEFAULT);
  if (a < 0) return NULL;
  hid_t t = H5Aget_type(a);
  char *out = NULL;
  if (H5Tget_class(t) == H5T_STRING && H5Tis_variable_str(t) > 0) {
    char *s = NULL;
    if (H5Aread(a, t, &s) >= 0 && s) {
      out = strdup(s);
      H5free_memory(s);
    }
  }
  H5Tclose(t);
  H5Aclose(a);
  return out;
}

static char *tmpdir_make(void) {
  char *dir = strdup("/tmp/cdsim-recorder-XXXXXX");
  if (dir && !mkdtemp(dir)) {
    free(dir);
    return NULL;
  }
  return dir;
}

static void tmpdir_remove(char *dir, const char *file) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", dir, file);
  unlink(path);
  rmdir(dir);
  free(dir);
}

static double kinetic_by_hand(const Fixture *f) {
  double ke = 0;
  for (int i = 0; i < NB; i++) {
    const cdBodyDef *b = &f->body[i];
    if (b->fixed) continue;
    const double *v = &f->v[6 * i], *w = &f->v[6 * i + 3], *R = &f->R[9 * i];
    double I[9];
    /* the world inertia as a full matrix */
    for (int r = 0; r < 3; r++)
      for (int c = 0; c < 3; c++)
        I[3 * r + c] = R[3 * r] * b->inertia[0] * R[3 * c] + R[3 * r + 1] * b->inertia[1] * R[3 * c + 1] +
                       R[3 * r + 2] * b->inertia[2] * R[3 * c + 2];
    double wIw = 0;
    for (int r = 0; r < 3; r++)
      for (int c = 0; c < 3; c++) wIw += w[r] * I[3 * r + c] * w[c];
    ke += 0.5 * b->mass * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]) + 0.5 * wIw;
  }
  return ke;
}

static double potential_by_hand(const Fixture *f) {
  double pe = 0;
  for (int i = 0; i < NB; i++)
    if (!f->body[i].fixed)
      pe -= f->body[i].mass *
            (f->scene.gravity[0] * f->x[3 * i] + f->scene.gravity[1] * f->x[3 * i + 1] +
             f->scene.gravity[2] * f->x[3 * i + 2]);
  return pe;
}

/* checks that the file holds frames 0 .. F-1 of the fixture: consistent shapes and
 * offsets, and the values written, bit for bit; returns F or -1 */
static long check_frames(const char *path, int alpha_from) {
  hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  CHECK_MSG(file >= 0, "cannot open %s", path);
  if (file < 0) return -1;
  Fixture *f = calloc(1, sizeof *f);
  fixture_init(f, alpha_from);
  Array t, pos, ori, vel, ang, off, it, res, conv, sub, wc, ke, pe;
  Array bod, pt, nor, gap, ni, ti, nv, tv, fea, beta, pst, alpha;
  hid_t D = H5T_NATIVE_DOUBLE;
  int bad = array_read(file, "/time", D, &t) | array_read(file, "/trajectory/position", D, &pos) |
            array_read(file, "/trajectory/orientation", D, &ori) |
            array_read(file, "/trajectory/velocity", D, &vel) |
            array_read(file, "/trajectory/angular_velocity", D, &ang) |
            array_read(file, "/contacts/offset", H5T_NATIVE_INT64, &off) |
            array_read(file, "/solver/iterations", H5T_NATIVE_INT32, &it) |
            array_read(file, "/solver/residual", D, &res) |
            array_read(file, "/solver/converged", H5T_NATIVE_UINT8, &conv) |
            array_read(file, "/solver/substeps", H5T_NATIVE_INT32, &sub) |
            array_read(file, "/solver/warn_cholmod", H5T_NATIVE_INT64, &wc) |
            array_read(file, "/energy/kinetic", D, &ke) | array_read(file, "/energy/potential", D, &pe) |
            array_read(file, "/contacts/bodies", H5T_NATIVE_INT32, &bod) |
            array_read(file, "/contacts/point", D, &pt) | array_read(file, "/contacts/normal", D, &nor) |
            array_read(file, "/contacts/gap", D, &gap) | array_read(file, "/contacts/normal_impulse", D, &ni) |
            array_read(file, "/contacts/tangent_impulse", D, &ti) |
            array_read(file, "/contacts/normal_velocity", D, &nv) |
            array_read(file, "/contacts/tangent_velocity", D, &tv) |
            array_read(file, "/contacts/feature", H5T_NATIVE_UINT32, &fea) |
            array_read(file, "/contacts/beta", D, &beta) | array_read(file, "/contacts/penalty_state", D, &pst);
  int has_alpha = H5Lexists(file, "/contacts/alpha", H5P_DEFAULT) > 0;
  CHECK_MSG(has_alpha == (alpha_from >= 0), "/contacts/alpha present %d, expected %d", has_alpha, alpha_from >= 0);
  if (has_alpha) bad |= array_read(file, "/contacts/alpha", D, &alpha);
  CHECK_MSG(!bad, "a dataset of %s is missing or unreadable", path);
  long F = bad ? -1 : (long)t.dims[0];
  if (bad) goto done;

  /* shapes: every per-frame dataset has F rows, offset F + 1, every contact one C */
  const Array *perframe[] = {&res, &conv, &sub, &it, &wc, &ke, &pe};
  for (size_t i = 0; i < sizeof perframe / sizeof *perframe; i++) CHECK(perframe[i]->dims[0] == (hsize_t)F);
  CHECK(pos.rank == 3 && pos.dims[0] == (hsize_t)F && pos.dims[1] == NB && pos.dims[2] == 3);
  CHECK(ori.rank == 3 && ori.dims[0] == (hsize_t)F && ori.dims[1] == NB && ori.dims[2] == 4);
  CHECK(vel.rank == 3 && vel.dims[0] == (hsize_t)F && vel.dims[2] == 3);
  CHECK(ang.rank == 3 && ang.dims[0] == (hsize_t)F && ang.dims[2] == 3);
  CHECK(off.dims[0] == (hsize_t)F + 1);
  const int64_t *o = off.data;
  hsize_t C = bod.dims[0];
  CHECK(o[0] == 0);
  CHECK_MSG((hsize_t)o[F] == C, "offset[F] = %lld, C = %llu", (long long)o[F], (unsigned long long)C);
  CHECK(bod.rank == 2 && bod.dims[1] == 2 && fea.dims[1] == 2 && fea.dims[0] == C);
  const Array *c3[] = {&pt, &nor, &ti, &tv};
  for (size_t i = 0; i < 4; i++) CHECK(c3[i]->rank == 2 && c3[i]->dims[0] == C && c3[i]->dims[1] == 3);
  const Array *c1[] = {&gap, &ni, &nv, &beta};
  for (size_t i = 0; i < 4; i++) CHECK(c1[i]->rank == 1 && c1[i]->dims[0] == C);
  CHECK(pst.rank == 2 && pst.dims[0] == C && pst.dims[1] == 4);
  if (has_alpha) CHECK(alpha.rank == 2 && alpha.dims[0] == C && alpha.dims[1] == NALPHA);
  if (cd_testFailed()) goto done;

  /* values, frame by frame */
  long mismatch = 0;
  double ke_err = 0;
  for (long k = 0; k < F; k++) {
    frame_make(f, (int)k);
    const double *tt = t.data, *p = pos.data, *q = ori.data, *v = vel.data, *w = ang.data;
    mismatch += tt[k] != f->world.time;
    mismatch += memcmp(&p[k * NB * 3], f->x, sizeof f->x) != 0;
    mismatch += memcmp(&q[k * NB * 4], f->q, sizeof f->q) != 0;
    for (int i = 0; i < NB; i++)
      for (int d = 0; d < 3; d++) {
        mismatch += v[(k * NB + i) * 3 + d] != f->v[6 * i + d];
        mismatch += w[(k * NB + i) * 3 + d] != f->v[6 * i + 3 + d];
      }
    cdSolveStats st = k ? f->stats : (cdSolveStats){.converged = 1};
    mismatch += ((int32_t *)it.data)[k] != st.iterations;
    mismatch += ((double *)res.data)[k] != st.residual;
    mismatch += ((uint8_t *)conv.data)[k] != (st.converged ? 1 : 0);
    mismatch += ((int32_t *)sub.data)[k] != st.substeps;
    mismatch += ((int64_t *)wc.data)[k] != f->world.warn_cholmod;
    double kh = kinetic_by_hand(f), ph = potential_by_hand(f);
    double e1 = fabs(((double *)ke.data)[k] - kh) / (1 + fabs(kh));
    double e2 = fabs(((double *)pe.data)[k] - ph) / (1 + fabs(ph));
    ke_err = fmax(ke_err, fmax(e1, e2));
    int n = contacts_of((int)k);
    CHECK_MSG(o[k + 1] - o[k] == n, "frame %ld: %lld contacts, expected %d", k, (long long)(o[k + 1] - o[k]), n);
    if (o[k + 1] - o[k] != n) break;
    for (int i = 0; i < n; i++) {
      const cdContact *c = &f->world.contacts.con[i];
      hsize_t row = (hsize_t)o[k] + (hsize_t)i;
      const int32_t *b = bod.data;
      const uint32_t *fe = fea.data;
      mismatch += b[2 * row] != c->body[0] || b[2 * row + 1] != c->body[1];
      mismatch += fe[2 * row] != c->feature[0] || fe[2 * row + 1] != c->feature[1];
      mismatch += memcmp(&((double *)pt.data)[3 * row], c->point, sizeof c->point) != 0;
      mismatch += memcmp(&((double *)nor.data)[3 * row], c->normal, sizeof c->normal) != 0;
      mismatch += ((double *)gap.data)[row] != c->gap;
      mismatch += ((double *)ni.data)[row] != c->lambda[0];
      for (int d = 0; d < 3; d++)
        mismatch += ((double *)ti.data)[3 * row + d] != c->lambda[1] * c->t1[d] + c->lambda[2] * c->t2[d];
      mismatch += ((double *)nv.data)[row] != c->post_vn;
      mismatch += memcmp(&((double *)tv.data)[3 * row], c->post_vt, sizeof c->post_vt) != 0;
      mismatch += ((double *)beta.data)[row] != c->beta;
      mismatch += memcmp(&((double *)pst.data)[4 * row], c->state, sizeof c->state) != 0;
      for (int a = 0; has_alpha && a < NALPHA; a++) {
        double got = ((double *)alpha.data)[NALPHA * row + (hsize_t)a];
        if (k >= alpha_from)
          mismatch += got != f->world.contacts.alpha[i * NALPHA + a];
        else
          mismatch += !isnan(got);
      }
    }
  }
  CHECK_MSG(mismatch == 0, "%ld values differ from those written", mismatch);
  /* the recorder sums the same terms in another order: rounding only */
  CHECK_MSG(ke_err <= 1e-14, "energy relative error %.3g", ke_err);
done:;
  Array *all[] = {&t, &pos, &ori, &vel, &ang, &off, &it, &res, &conv, &sub, &wc, &ke, &pe,
                  &bod, &pt, &nor, &gap, &ni, &ti, &nv, &tv, &fea, &beta, &pst};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) free(all[i]->data);
  if (has_alpha) free(alpha.data);
  fixture_free(f);
  free(f);
  H5Fclose(file);
  return F;
}

/* ---- tests ----------------------------------------------------------------------- */

CD_TEST(recorderReadsBackEveryFrameExactly) {
  char *dir = tmpdir_make();
  CHECK(dir != NULL);
  if (!dir) return;
  char path[512];
  snprintf(path, sizeof path, "%s/run.h5", dir);
  CHECK(run_write(path, 100, 0, "ok") == 0);
  CHECK(check_frames(path, 0) == 100);
  tmpdir_remove(dir, "run.h5");
}

/* n unit spheres at rest in a scene of one material and their world (identity
 * orientations), and path[512] = a new temporary directory / name, for the tests of
 * frames larger than a chunk: the directory, or NULL (a failed check) when out of memory.
 * bigSpheresFree releases the scene and the world. */
static char *bigSpheres(int n, const char *name, char *path, cdScene *scene, cdMaterial *mat, cdWorld *w) {
  char *dir = tmpdir_make();
  CHECK(dir != NULL);
  if (!dir) return NULL;
  snprintf(path, 512, "%s/%s", dir, name);
  memset(scene, 0, sizeof *scene);
  memset(mat, 0, sizeof *mat);
  memset(w, 0, sizeof *w);
  snprintf(scene->model, sizeof scene->model, "ccp");
  scene->gravity[2] = -9.81;
  scene->dt = DT;
  scene->nmaterial = 1;
  scene->material = mat;
  scene->nbody = n;
  scene->body = calloc((size_t)n, sizeof *scene->body);
  w->nbody = n;
  w->x = calloc(3 * (size_t)n, sizeof(double)), w->q = calloc(4 * (size_t)n, sizeof(double));
  w->v = calloc(6 * (size_t)n, sizeof(double)), w->R = calloc(9 * (size_t)n, sizeof(double));
  cd_contactSetInit(&w->contacts);
  CHECK(scene->body && w->x && w->q && w->v && w->R);
  if (!scene->body || !w->x || !w->q || !w->v || !w->R) {
    free(scene->body), free(w->x), free(w->q), free(w->v), free(w->R);
    tmpdir_remove(dir, name);
    return NULL;
  }
  for (int i = 0; i < n; i++) {
    cdBodyDef *b = &scene->body[i];
    snprintf(b->name, sizeof b->name, "s%d", i);
    b->shape = CD_SPHERE;
    b->radius = 0.01;
    b->mass = 1.0;
    b->inertia[0] = b->inertia[1] = b->inertia[2] = 4e-5;
    w->q[4 * i] = 1.0;
    w->R[9 * i] = w->R[9 * i + 4] = w->R[9 * i + 8] = 1.0;
  }
  return dir;
}

static void bigSpheresFree(cdScene *scene, cdWorld *w) {
  cd_contactSetFree(&w->contacts);
  free(scene->body), free(w->x), free(w->q), free(w->v), free(w->R);
}

/* Frames larger than a chunk: 45,000 bodies make a row of /trajectory/position larger
 * than a chunk's 1 MiB (the columns are split along the bodies), 3,000 contacts a frame
 * fill several 4096-row chunks, and batches handed over early (cd_recorderFlush) end in
 * the middle of chunks, which the next batch writes again. Every value reads back. */
CD_TEST(recorderLargeFramesReadBackAcrossChunks) {
  enum { NBIG = 45000, NCON = 3000, NFR = 7 };
  char path[512];
  cdScene scene;
  cdMaterial mat[1];
  cdWorld w;
  char *dir = bigSpheres(NBIG, "big.h5", path, &scene, mat, &w);
  if (!dir) return;
  char err[512];
  cdRecorder *r = cd_recorderOpen(path, &scene, &run_info, err, sizeof err);
  CHECK_MSG(r != NULL, "%s", err);
  cdSolveStats stats = {.iterations = 1, .converged = 1};
  for (int k = 0; r && k < NFR; k++) {
    w.time = k * DT;
    for (int i = 0; i < 3 * NBIG; i++) w.x[i] = 0.02 * (i / 3) + 0.5 * (i % 3) + 1e-3 * k;
    for (int i = 0; i < 6 * NBIG; i++) w.v[i] = (i % 6 < 3) ? -9.81 * k * DT : 0.0;
    cd_contactSetClear(&w.contacts);
    for (int c = 0; k > 0 && c < NCON; c++) {
      cdContact *ct = cd_contactSetPush(&w.contacts);
      CHECK(ct != NULL);
      if (!ct) break;
      ct->body[0] = c % 2 ? -1 : c, ct->body[1] = c + 1;
      ct->point[0] = 0.02 * c, ct->point[1] = k, ct->point[2] = 1e-3 * c * k;
      ct->normal[2] = 1.0;
      ct->lambda[0] = 0.001 * c + k;
    }
    CHECK(cd_recorderWriteFrame(r, &scene, &w, k ? &stats : NULL) == 0);
    if (k == 2 || k == 5) CHECK(cd_recorderFlush(r) >= 0);
  }
  if (r) CHECK(cd_recorderClose(r, "ok", NULL) == 0);
  hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  CHECK(file >= 0);
  Array pos = {0}, vel = {0}, pt = {0}, bod = {0}, ni = {0};
  if (file >= 0 && array_read(file, "/trajectory/position", H5T_NATIVE_DOUBLE, &pos) == 0 &&
      array_read(file, "/trajectory/velocity", H5T_NATIVE_DOUBLE, &vel) == 0 &&
      array_read(file, "/contacts/point", H5T_NATIVE_DOUBLE, &pt) == 0 &&
      array_read(file, "/contacts/bodies", H5T_NATIVE_INT32, &bod) == 0 &&
      array_read(file, "/contacts/normal_impulse", H5T_NATIVE_DOUBLE, &ni) == 0) {
    CHECK(pos.dims[0] == NFR && pos.dims[1] == NBIG && pt.dims[0] == (hsize_t)(NFR - 1) * NCON);
    long bad = 0;
    const double *X = pos.data, *V = vel.data, *P = pt.data, *N = ni.data;
    const int32_t *B = bod.data;
    for (int k = 0; k < NFR && pos.n == (size_t)NFR * NBIG * 3; k++)
      for (int i = 0; i < 3 * NBIG; i++) {
        bad += X[(size_t)k * 3 * NBIG + i] != 0.02 * (i / 3) + 0.5 * (i % 3) + 1e-3 * k;
        bad += V[(size_t)k * 3 * NBIG + i] != -9.81 * k * DT;
      }
    for (int k = 1; k < NFR && pt.n == (size_t)(NFR - 1) * NCON * 3; k++)
      for (int c = 0; c < NCON; c++) {
        size_t row = (size_t)(k - 1) * NCON + c;
        bad += P[3 * row] != 0.02 * c || P[3 * row + 1] != k || P[3 * row + 2] != 1e-3 * c * k;
        bad += B[2 * row] != (c % 2 ? -1 : c) || B[2 * row + 1] != c + 1;
        bad += N[row] != 0.001 * c + k;
      }
    CHECK_MSG(bad == 0, "%ld values read back different", bad);
  } else {
    CHECK_MSG(0, "cannot read back %s", path);
  }
  if (file >= 0) H5Fclose(file);
  free(pos.data), free(vel.data), free(pt.data), free(bod.data), free(ni.data);
  bigSpheresFree(&scene, &w);
  tmpdir_remove(dir, "big.h5");
}

/* The main thread compresses chunks of a batch beside the writer while it waits for it
 * (cd_recorderFlush, cd_recorderClose), and the writer writes them in their turn. 20,000
 * bodies make every frame of the trajectory several chunks (split along the bodies) and
 * 3,000 contacts a frame cross the 4096-row contact chunks, so a batch is dozens
 * of chunks to share; every value depends on its frame, body (or contact) and component,
 * so a chunk the split lost, wrote twice, or put in another chunk's place reads back
 * wrong. The run flushes every three frames until the main thread has built some chunks
 * itself (cd_recorderChunksHelped), at most 12 times: it never having helped fails. */
CD_TEST(recorderChunksSharedWithTheMainThreadReadBackInPlace) {
  enum { NBIG = 20000, NCON = 3000, MAXFR = 37 };
  char path[512];
  cdScene scene;
  cdMaterial mat[1];
  cdWorld w;
  char *dir = bigSpheres(NBIG, "split.h5", path, &scene, mat, &w);
  if (!dir) return;
  char err[512];
  cdRecorder *r = cd_recorderOpen(path, &scene, &run_info, err, sizeof err);
  CHECK_MSG(r != NULL, "%s", err);
  cdSolveStats stats = {.iterations = 1, .converged = 1};
  int nfr = 0;
  long helped = 0;
  for (int k = 0; r && k < MAXFR; k++, nfr++) {
    w.time = k * DT;
    for (int i = 0; i < 3 * NBIG; i++) w.x[i] = i + 1e6 * k;
    for (int i = 0; i < 4 * NBIG; i++) w.q[i] = -(i + 1e6 * k);
    for (int i = 0; i < 6 * NBIG; i++) w.v[i] = 0.5 * i + 1e6 * k;
    cd_contactSetClear(&w.contacts);
    for (int c = 0; k > 0 && c < NCON; c++) {
      cdContact *ct = cd_contactSetPush(&w.contacts);
      CHECK(ct != NULL);
      if (!ct) break;
      ct->body[0] = c, ct->body[1] = k;
      ct->point[0] = c, ct->point[1] = k, ct->point[2] = -c;
      ct->lambda[0] = c + 1e4 * k;
    }
    CHECK(cd_recorderWriteFrame(r, &scene, &w, k ? &stats : NULL) == 0);
    if (k % 3 == 2) {
      CHECK(cd_recorderFlush(r) == k + 1);
      helped = cd_recorderChunksHelped(r);
      if (helped > 0 && k > 6) {
        nfr++;
        break;
      }
    }
  }
  printf("    %d frames; the main thread built %ld chunks\n", nfr, helped);
  CHECK_MSG(helped > 0, "the main thread never built a chunk in %d flushes", MAXFR / 3);
  if (r) CHECK(cd_recorderClose(r, "ok", NULL) == 0);
  hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  CHECK(file >= 0);
  Array pos = {0}, ori = {0}, vel = {0}, ang = {0}, pt = {0}, bod = {0}, ni = {0}, off = {0};
  if (file >= 0 && array_read(file, "/trajectory/position", H5T_NATIVE_DOUBLE, &pos) == 0 &&
      array_read(file, "/trajectory/orientation", H5T_NATIVE_DOUBLE, &ori) == 0 &&
      array_read(file, "/trajectory/velocity", H5T_NATIVE_DOUBLE, &vel) == 0 &&
      array_read(file, "/trajectory/angular_velocity", H5T_NATIVE_DOUBLE, &ang) == 0 &&
      array_read(file, "/contacts/point", H5T_NATIVE_DOUBLE, &pt) == 0 &&
      array_read(file, "/contacts/bodies", H5T_NATIVE_INT32, &bod) == 0 &&
      array_read(file, "/contacts/normal_impulse", H5T_NATIVE_DOUBLE, &ni) == 0 &&
      array_read(file, "/contacts/offset", H5T_NATIVE_INT64, &off) == 0) {
    size_t nb = NBIG, nc = (size_t)(nfr - 1) * NCON;
    CHECK(pos.n == nfr * nb * 3 && ori.n == nfr * nb * 4 && vel.n == nfr * nb * 3 && ang.n == nfr * nb * 3);
    CHECK(pt.n == nc * 3 && bod.n == nc * 2 && ni.n == nc && off.n == (size_t)nfr + 1);
    long bad = 0;
    const double *X = pos.data, *Q = ori.data, *V = vel.data, *A = ang.data, *P = pt.data, *N = ni.data;
    const int32_t *B = bod.data;
    const int64_t *O = off.data;
    for (size_t k = 0; k < (size_t)nfr && pos.n == nfr * nb * 3 && ori.n == nfr * nb * 4; k++) {
      for (size_t i = 0; i < 3 * nb; i++) bad += X[k * 3 * nb + i] != i + 1e6 * k;
      for (size_t i = 0; i < 4 * nb; i++) bad += Q[k * 4 * nb + i] != -(i + 1e6 * k);
      for (size_t i = 0; i < nb && vel.n == pos.n && ang.n == pos.n; i++)
        for (size_t d = 0; d < 3; d++) {
          bad += V[k * 3 * nb + 3 * i + d] != 0.5 * (6 * i + d) + 1e6 * k;
          bad += A[k * 3 * nb + 3 * i + d] != 0.5 * (6 * i + 3 + d) + 1e6 * k;
        }
    }
    for (size_t k = 1; k < (size_t)nfr && pt.n == nc * 3 && bod.n == nc * 2 && ni.n == nc; k++)
      for (size_t c = 0; c < NCON; c++) {
        size_t row = (k - 1) * NCON + c;
        bad += P[3 * row] != c || P[3 * row + 1] != k || P[3 * row + 2] != -(double)c;
        bad += B[2 * row] != (int32_t)c || B[2 * row + 1] != (int32_t)k;
        bad += N[row] != c + 1e4 * k;
      }
    for (size_t k = 0; k <= (size_t)nfr && off.n == (size_t)nfr + 1; k++) bad += O[k] != (int64_t)(k ? (k - 1) * NCON : 0);
    CHECK_MSG(bad == 0, "%ld values read back different", bad);
  } else {
    CHECK_MSG(0, "cannot read back %s", path);
  }
  if (file >= 0) H5Fclose(file);
  free(pos.data), free(ori.data), free(vel.data), free(ang.data);
  free(pt.data), free(bod.data), free(ni.data), free(off.data);
  bigSpheresFree(&scene, &w);
  tmpdir_remove(dir, "split.h5");
}

typedef struct {
  const char *path;
  H5T_class_t cls;
  size_t size;     /* bytes; 0 for variable-length strings */
  H5T_sign_t sign; /* for integers */
  int rank;
  char dims[3];    /* F (frames), P (F + 1), C (contacts), B (bodies), V (box corners: 8 x
                     boxes), or a digit */
} Layout;

static const Layout layout[] = {
    {"/time", H5T_FLOAT, 8, H5T_SGN_ERROR, 1, "F"},
    {"/bodies/name", H5T_STRING, 0, H5T_SGN_ERROR, 1, "B"},
    {"/bodies/shape", H5T_STRING, 0, H5T_SGN_ERROR, 1, "B"},
    {"/bodies/mass", H5T_FLOAT, 8, H5T_SGN_ERROR, 1, "B"},
    {"/bodies/fixed", H5T_INTEGER, 1, H5T_SGN_NONE, 1, "B"},
    {"/bodies/radius", H5T_FLOAT, 8, H5T_SGN_ERROR, 1, "B"},
    {"/bodies/half_extents", H5T_FLOAT, 8, H5T_SGN_ERROR, 2, "B3"},
    {"/geometry/spheres", H5T_INTEGER, 4, H5T_SGN_2, 1, "1"},
    {"/geometry/box_body", H5T_INTEGER, 4, H5T_SGN_2, 1, "2"},
    {"/geometry/hexahedra", H5T_INTEGER, 4, H5T_SGN_2, 2, "28"},
    {"/geometry/box_vertices", H5T_FLOAT, 8, H5T_SGN_ERROR, 3, "FV3"},
    {"/trajectory/position", H5T_FLOAT, 8, H5T_SGN_ERROR, 3, "FB3"},
    {"/trajectory/orientation", H5T_FLOAT, 8, H5T_SGN_ERROR, 3, "FB4"},
    {"/trajectory/velocity", H5T_FLOAT, 8, H5T_SGN_ERROR, 3, "FB3"},
    {"/trajectory/angular_velocity", H5T_FLOAT, 8, H5T_SGN_ERROR, 3, "FB3"},
    {"/contacts/offset", H5T_INTEGER, 8, H5T_SGN_2, 1, "P"},
    {"/contacts/bodies", H5T_INTEGER, 4, H5T_SGN_2, 2, "C2"},
    {"/contacts/point", H5T_FLOAT, 8, H5T_SGN_ERROR, 2, "C3"},
    {"/contacts/normal", H5T_FLOAT, 8, H5T_SGN_ERROR, 2, "C3"},
    {"/contacts/gap", H5T_FLOAT, 8, H5T_SGN_ERROR, 1, "C"},
    {"/contacts/normal_impulse", H5T_FLOAT, 8, H5T_SGN_ERROR, 1, "C"},
    {"/contacts/tangent_impulse", H5T_FLOAT, 8, H5T_SGN_ERROR, 2, "C3"},
    {"/contacts/normal_velocity", H5T_FLOAT, 8, H5T_SGN_ERROR, 1, "C"},
    {"/contacts/tangent_velocity", H5T_FLOAT, 8, H5T_SGN_ERROR, 2, "C3"},
    {"/contacts/feature", H5T_INTEGER, 4, H5T_SGN_NONE, 2, "C2"},
    {"/contacts/beta", H5T_FLOAT, 8, H5T_SGN_ERROR, 1, "C"},
    {"/contacts/alpha", H5T_FLOAT, 8, H5T_SGN_ERROR, 2, "C4"},
    {"/contacts/penalty_state", H5T_FLOAT, 8, H5T_SGN_ERROR, 2, "C4"},
    {"/solver/iterations", H5T_INTEGER, 4, H5T_SGN_2, 1, "F"},
    {"/solver/residual", H5T_FLOAT, 8, H5T_SGN_ERROR, 1, "F"},
    {"/solver/converged", H5T_INTEGER, 1, H5T_SGN_NONE, 1, "F"},
    {"/solver/substeps", H5T_INTEGER, 4, H5T_SGN_2, 1, "F"},
    {"/solver/warn_cholmod", H5T_INTEGER, 8, H5T_SGN_2, 1, "F"},
    {"/solver/warn_nonconverged", H5T_INTEGER, 8, H5T_SGN_2, 1, "F"},
    {"/solver/warn_fallback", H5T_INTEGER, 8, H5T_SGN_2, 1, "F"},
    {"/energy/kinetic", H5T_FLOAT, 8, H5T_SGN_ERROR, 1, "F"},
    {"/energy/potential", H5T_FLOAT, 8, H5T_SGN_ERROR, 1, "F"},
};
enum { NLAYOUT = sizeof layout / sizeof *layout };

static hsize_t total_contacts(int nframe) {
  hsize_t c = 0;
  for (int k = 0; k < nframe; k++) c += (hsize_t)contacts_of(k);
  return c;
}

CD_TEST(recorderLayoutHasEveryDatasetWithItsTypeAndShape) {
  char *dir = tmpdir_make();
  CHECK(dir != NULL);
  if (!dir) return;
  char path[512];
  snprintf(path, sizeof path, "%s/run.h5", dir);
  enum { F = 100 };
  CHECK(run_write(path, F, 0, "ok") == 0);
  hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  CHECK(file >= 0);
  hsize_t C = total_contacts(F);
  for (int i = 0; file >= 0 && i < NLAYOUT; i++) {
    const Layout *l = &layout[i];
    hid_t d = H5Dopen2(file, l->path, H5P_DEFAULT);
    CHECK_MSG(d >= 0, "%s missing", l->path);
    if (d < 0) continue;
    hid_t t = H5Dget_type(d), s = H5Dget_space(d);
    CHECK_MSG(H5Tget_class(t) == l->cls, "%s: type class %d", l->path, (int)H5Tget_class(t));
    if (l->cls == H5T_STRING) {
      CHECK_MSG(H5Tis_variable_str(t) > 0 && H5Tget_cset(t) == H5T_CSET_UTF8, "%s: not VL UTF-8", l->path);
    } else {
      CHECK_MSG(H5Tget_size(t) == l->size, "%s: %zu bytes", l->path, H5Tget_size(t));
      CHECK_MSG(H5Tget_order(t) == H5T_ORDER_LE, "%s: not little-endian", l->path);
      if (l->cls == H5T_INTEGER) CHECK_MSG(H5Tget_sign(t) == l->sign, "%s: signedness", l->path);
    }
    hsize_t dims[3] = {0}, maxdims[3] = {0};
    int rank = H5Sget_simple_extent_dims(s, dims, maxdims);
    CHECK_MSG(rank == l->rank, "%s: rank %d", l->path, rank);
    for (int k = 0; k < rank && k < 3; k++) {
      char c = l->dims[k];
      hsize_t want = c == 'F'   ? F
                     : c == 'P' ? F + 1
                     : c == 'C' ? C
                     : c == 'B' ? NB
                     : c == 'V' ? 16
                                : (hsize_t)(c - '0');
      CHECK_MSG(dims[k] == want, "%s: dim %d is %llu, expected %llu", l->path, k, (unsigned long long)dims[k],
                (unsigned long long)want);
    }
    /* what grows with the run is chunked and extensible along its first dimension */
    if (l->dims[0] == 'F' || l->dims[0] == 'P' || l->dims[0] == 'C') {
      hid_t dcpl = H5Dget_create_plist(d);
      CHECK_MSG(H5Pget_layout(dcpl) == H5D_CHUNKED && maxdims[0] == H5S_UNLIMITED, "%s: not extensible", l->path);
      CHECK_MSG(H5Pget_nfilters(dcpl) == (H5Zfilter_avail(H5Z_FILTER_DEFLATE) > 0 ? 2 : 0), "%s: filters",
                l->path);
      H5Pclose(dcpl);
    }
    H5Sclose(s);
    H5Tclose(t);
    H5Dclose(d);
  }
  /* bodies: names, shapes (the equal-sided box is a cube), masses, fixed flags */
  if (file >= 0) {
    hid_t d = H5Dopen2(file, "/bodies/shape", H5P_DEFAULT), t = H5Dget_type(d);
    char *shape[NB] = {0};
    CHECK(H5Dread(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, shape) >= 0);
    CHECK(shape[0] && strcmp(shape[0], "sphere") == 0);
    CHECK(shape[1] && strcmp(shape[1], "box") == 0);
    CHECK(shape[2] && strcmp(shape[2], "cube") == 0);
    for (int i = 0; i < NB; i++) H5free_memory(shape[i]);
    H5Tclose(t);
    H5Dclose(d);
    d = H5Dopen2(file, "/bodies/name", H5P_DEFAULT), t = H5Dget_type(d);
    char *name[NB] = {0};
    CHECK(H5Dread(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, name) >= 0);
    CHECK(name[0] && strcmp(name[0], "ball") == 0 && name[2] && strcmp(name[2], "floor") == 0);
    for (int i = 0; i < NB; i++) H5free_memory(name[i]);
    H5Tclose(t);
    H5Dclose(d);
    Array mass, fixed;
    CHECK(array_read(file, "/bodies/mass", H5T_NATIVE_DOUBLE, &mass) == 0);
    CHECK(array_read(file, "/bodies/fixed", H5T_NATIVE_UINT8, &fixed) == 0);
    if (mass.data && fixed.data) {
      CHECK(((double *)mass.data)[0] == 2.0 && ((double *)mass.data)[1] == 3.0);
      CHECK(((uint8_t *)fixed.data)[0] == 0 && ((uint8_t *)fixed.data)[2] == 1);
    }
    free(mass.data);
    free(fixed.data);
    H5Fclose(file);
  }
  tmpdir_remove(dir, "run.h5");
}

CD_TEST(recorderWritesRootAttributes) {
  char *dir = tmpdir_make();
  CHECK(dir != NULL);
  if (!dir) return;
  char path[512];
  snprintf(path, sizeof path, "%s/run.h5", dir);
  CHECK(run_write(path, 5, -1, "stopped: non-finite state (body 1)") == 0);
  hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  CHECK(file >= 0);
  if (file >= 0) {
    const char *want[][2] = {{"format", "cdsim"},
                             {"model", run_info.model},
                             {"solver", run_info.solver},
                             {"command_line", run_info.command_line},
                             {"scene", run_info.scene_json},
                             {"cdsim_version", CDSIM_VERSION},
                             {"status", "stopped: non-finite state (body 1)"}};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
      char *s = attr_string_read(file, want[i][0]);
      CHECK_MSG(s && strcmp(s, want[i][1]) == 0, "attribute %s = '%s', expected '%s'", want[i][0], s ? s : "(none)",
                want[i][1]);
      free(s);
    }
    int version = 0, every = 0;
    double dt = 0;
    hid_t a = H5Aopen(file, "format_version", H5P_DEFAULT);
    hid_t t = H5Aget_type(a);
    CHECK(H5Tget_class(t) == H5T_INTEGER);
    CHECK(H5Aread(a, H5T_NATIVE_INT, &version) >= 0 && version == 1);
    H5Tclose(t);
    H5Aclose(a);
    a = H5Aopen(file, "dt", H5P_DEFAULT);
    t = H5Aget_type(a);
    CHECK(H5Tget_class(t) == H5T_FLOAT);
    CHECK(H5Aread(a, H5T_NATIVE_DOUBLE, &dt) >= 0 && dt == run_info.dt);
    H5Tclose(t);
    H5Aclose(a);
    a = H5Aopen(file, "output_every", H5P_DEFAULT);
    CHECK(H5Aread(a, H5T_NATIVE_INT, &every) >= 0 && every == run_info.output_every);
    H5Aclose(a);
    H5Fclose(file);
  }
  tmpdir_remove(dir, "run.h5");
}

CD_TEST(recorderEnergiesMatchHandComputation) {
  /* the energies of frame k against an independent sum (full world inertia matrix);
   * values here are O(10) J, so the tolerance is a few ulps of the sum */
  char *dir = tmpdir_make();
  CHECK(dir != NULL);
  if (!dir) return;
  char path[512];
  snprintf(path, sizeof path, "%s/run.h5", dir);
  CHECK(run_write(path, 40, -1, "ok") == 0);
  hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  Array ke, pe;
  CHECK(array_read(file, "/energy/kinetic", H5T_NATIVE_DOUBLE, &ke) == 0 && ke.n == 40);
  CHECK(array_read(file, "/energy/potential", H5T_NATIVE_DOUBLE, &pe) == 0 && pe.n == 40);
  Fixture *f = calloc(1, sizeof *f);
  fixture_init(f, -1);
  for (int k = 0; ke.data && pe.data && k < 40; k++) {
    frame_make(f, k);
    double kh = kinetic_by_hand(f), ph = potential_by_hand(f);
    CHECK(kh > 0.1); /* the bodies do move and spin */
    CHECK_NEAR(((double *)ke.data)[k], kh, 1e-13 * fabs(kh));
    CHECK_NEAR(((double *)pe.data)[k], ph, 1e-13 * fabs(ph) + 1e-15);
  }
  /* frame 0 by hand from the numbers of frame_make: the fixed floor adds nothing */
  frame_make(f, 0);
  double x0 = f->x[2], x1 = f->x[5];
  CHECK_NEAR(((double *)pe.data)[0], -(2.0 * (0.5 * 0.0 - 9.81 * x0) + 3.0 * (0.5 * 1.0 - 9.81 * x1)), 1e-12);
  fixture_free(f);
  free(f);
  free(ke.data);
  free(pe.data);
  H5Fclose(file);
  tmpdir_remove(dir, "run.h5");
}

/* bytes of every dataset of the layout (strings: their characters) */
static int dataset_bytes(hid_t file, const char *path, unsigned char **out, size_t *len) {
  hid_t d = H5Dopen2(file, path, H5P_DEFAULT);
  if (d < 0) return -1;
  hid_t ft = H5Dget_type(d), s = H5Dget_space(d);
  size_t n = (size_t)H5Sget_simple_extent_npoints(s);
  int rc = 0;
  if (H5Tget_class(ft) == H5T_STRING) {
    char **str = calloc(n ? n : 1, sizeof *str);
    rc = n && H5Dread(d, ft, H5S_ALL, H5S_ALL, H5P_DEFAULT, str) < 0 ? -1 : 0;
    size_t total = 0;
    for (size_t i = 0; i < n; i++) total += str[i] ? strlen(str[i]) + 1 : 0;
    *out = calloc(total + 1, 1);
    *len = 0;
    for (size_t i = 0; i < n; i++)
      if (str[i]) {
        memcpy(*out + *len, str[i], strlen(str[i]) + 1);
        *len += strlen(str[i]) + 1;
        H5free_memory(str[i]);
      }
    free(str);
  } else {
    *len = n * H5Tget_size(ft);
    *out = calloc(*len + 1, 1);
    if (n && H5Dread(d, ft, H5S_ALL, H5S_ALL, H5P_DEFAULT, *out) < 0) rc = -1;
  }
  H5Sclose(s);
  H5Tclose(ft);
  H5Dclose(d);
  return rc;
}

CD_TEST(recorderSameFramesGiveBitIdenticalDatasets) {
  char *dir = tmpdir_make();
  CHECK(dir != NULL);
  if (!dir) return;
  char p1[512], p2[512];
  snprintf(p1, sizeof p1, "%s/a.h5", dir);
  snprintf(p2, sizeof p2, "%s/b.h5", dir);
  CHECK(run_write(p1, 100, 0, "ok") == 0);
  CHECK(run_write(p2, 100, 0, "ok") == 0);
  hid_t f1 = H5Fopen(p1, H5F_ACC_RDONLY, H5P_DEFAULT), f2 = H5Fopen(p2, H5F_ACC_RDONLY, H5P_DEFAULT);
  CHECK(f1 >= 0 && f2 >= 0);
  size_t total = 0;
  for (int i = 0; f1 >= 0 && f2 >= 0 && i < NLAYOUT; i++) {
    unsigned char *a = NULL, *b = NULL;
    size_t na = 0, nb = 0;
    CHECK(dataset_bytes(f1, layout[i].path, &a, &na) == 0);
    CHECK(dataset_bytes(f2, layout[i].path, &b, &nb) == 0);
    CHECK_MSG(na == nb && a && b && memcmp(a, b, na) == 0, "%s differs between two identical runs", layout[i].path);
    total += na;
    free(a);
    free(b);
  }
  CHECK(total > 10000); /* the comparison did cover the data */
  if (f1 >= 0) H5Fclose(f1);
  if (f2 >= 0) H5Fclose(f2);
  unlink(p1);
  tmpdir_remove(dir, "b.h5");
}

CD_TEST(recorderFileOfAKilledWriterHoldsItsFlushedFrames) {
  /* a child writes 70 frames, then 5 more after flushing the first 70, and dies without
   * closing (as to SIGKILL). A valid file must hold exactly the 70 flushed frames: the
   * writer had written them all (two full batches and the 6 of the flush), and had not
   * been handed the last 5. */
  char *dir = tmpdir_make();
  CHECK(dir != NULL);
  if (!dir) return;
  char path[512];
  snprintf(path, sizeof path, "%s/crash.h5", dir);
  enum { WRITTEN = 70 };
  fflush(stdout);
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    Fixture *f = calloc(1, sizeof *f);
    fixture_init(f, 0);
    char err[512];
    cdRecorder *r = cd_recorderOpen(path, &f->scene, &run_info, err, sizeof err);
    if (!r) _exit(2);
    for (int k = 0; k < WRITTEN; k++) {
      frame_make(f, k);
      if (cd_recorderWriteFrame(r, &f->scene, &f->world, &f->stats)) _exit(3);
    }
    if (cd_recorderFlush(r) != WRITTEN) _exit(4);
    for (int k = WRITTEN; k < WRITTEN + 5; k++) {
      frame_make(f, k);
      if (cd_recorderWriteFrame(r, &f->scene, &f->world, &f->stats)) _exit(3);
    }
    _exit(1);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 1, "child status %d", status);
  long F = check_frames(path, 0);
  CHECK_MSG(F == WRITTEN, "%ld frames survived of %d flushed", F, WRITTEN);
  hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  char *s = file >= 0 ? attr_string_read(file, "status") : NULL;
  CHECK_MSG(s && strcmp(s, "running") == 0, "status '%s'", s ? s : "(none)");
  free(s);
  if (file >= 0) H5Fclose(file);
  tmpdir_remove(dir, "crash.h5");
}

CD_TEST(recorderOpenFailureNamesPathAndLeavesNothing) {
  char *dir = tmpdir_make();
  CHECK(dir != NULL);
  if (!dir) return;
  Fixture *f = calloc(1, sizeof *f);
  fixture_init(f, -1);
  char path[512], err[512] = "";
  /* a directory that does not exist */
  snprintf(path, sizeof path, "%s/missing/run.h5", dir);
  cdRecorder *r = cd_recorderOpen(path, &f->scene, &run_info, err, sizeof err);
  CHECK(r == NULL);
  CHECK_MSG(strstr(err, path) != NULL, "message does not name the path: %s", err);
  CHECK_MSG(strstr(err, "No such file or directory") != NULL, "message gives no OS reason: %s", err);
  CHECK(strchr(err, '\n') == NULL);
  struct stat st;
  CHECK(stat(path, &st) != 0);
  if (r) cd_recorderClose(r, "ok", NULL);
  /* the path is a directory */
  err[0] = 0;
  r = cd_recorderOpen(dir, &f->scene, &run_info, err, sizeof err);
  CHECK(r == NULL);
  CHECK_MSG(strstr(err, dir) != NULL && strstr(err, "directory") != NULL, "message: %s", err);
  CHECK(stat(dir, &st) == 0 && S_ISDIR(st.st_mode));
  if (r) cd_recorderClose(r, "ok", NULL);
  printf("    messages are like: %s\n", err);
  fixture_free(f);
  free(f);
  tmpdir_remove(dir, "none");
}

CD_TEST(recorderRecoversFromEveryAllocationFailure) {
  /* fails the k-th allocation of a small run (40 frames, a batch write in the middle,
   * alpha rows) for every k; each run must report an error, free all it took, and leave
   * a consistent file or none */
  char *dir = tmpdir_make();
  CHECK(dir != NULL);
  if (!dir) return;
  char path[512];
  snprintf(path, sizeof path, "%s/oom.h5", dir);
  enum { FRAMES = 40 };
  Fixture *f = calloc(1, sizeof *f);
  fixture_init(f, 0);
  char err[512];
  long live0 = cd_allocLive(), count0 = cd_allocCount();
  cdRecorder *r = cd_recorderOpen(path, &f->scene, &run_info, err, sizeof err);
  for (int k = 0; r && k < FRAMES; k++) {
    frame_make(f, k);
    cd_recorderWriteFrame(r, &f->scene, &f->world, &f->stats);
  }
  CHECK(r && cd_recorderClose(r, "ok", NULL) == 0);
  long n = cd_allocCount() - count0;
  CHECK(n > 0 && cd_allocLive() == live0);
  long failures_seen = 0;
  for (long k = 1; k <= n + 1; k++) {
    unlink(path);
    cd_allocFailAt(k);
    int errors = 0;
    r = cd_recorderOpen(path, &f->scene, &run_info, err, sizeof err);
    if (!r) {
      errors++;
      struct stat st;
      CHECK_MSG(stat(path, &st) != 0, "k=%ld: failed open left %s", k, path);
    }
    for (int j = 0; r && j < FRAMES; j++) {
      frame_make(f, j);
      errors += cd_recorderWriteFrame(r, &f->scene, &f->world, &f->stats) != 0;
    }
    if (r) errors += cd_recorderClose(r, "ok", NULL) != 0;
    cd_allocFailAt(0);
    CHECK_MSG(cd_allocLive() == live0, "k=%ld: %ld blocks leaked", k, cd_allocLive() - live0);
    CHECK_MSG((errors > 0) == (k <= n), "k=%ld: %d errors reported", k, errors);
    failures_seen += errors > 0;
    if (r) {
      /* the frames that were accepted form a valid file */
      hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
      Array t, off, bod;
      CHECK(file >= 0);
      CHECK(array_read(file, "/time", H5T_NATIVE_DOUBLE, &t) == 0);
      CHECK(array_read(file, "/contacts/offset", H5T_NATIVE_INT64, &off) == 0);
      CHECK(array_read(file, "/contacts/bodies", H5T_NATIVE_INT32, &bod) == 0);
      CHECK(off.n == t.n + 1 && off.data && (hsize_t)((int64_t *)off.data)[t.n] == bod.dims[0]);
      free(t.data);
      free(off.data);
      free(bod.data);
      if (file >= 0) H5Fclose(file);
    }
  }
  printf("    %ld allocations in a run, every one failed once\n", n);
  CHECK(failures_seen == n);
  fixture_free(f);
  free(f);
  tmpdir_remove(dir, "oom.h5");
}

/* a child limits its file size (RLIMIT_FSIZE: writes past it fail with EFBIG, as on a
 * full disk) and writes until the recorder reports it; exit code 0 means it did, that
 * later frames were refused and that close reported the failure. The limit is past the
 * first batches: the recorder refuses the batch that does not fit before HDF5 writes any
 * of it (io/recorder.c, room_check), and the file still opens with consistent lengths,
 * whole batches. Without that check, 2 (deflate level 4) to 4 (level 1) of 21 limits from
 * 180 to 640 KiB left a file that no longer opened (HDF5 met the limit in its flush). */
static void fullDiskAt(long LIMIT) {
  char *dir = tmpdir_make();
  CHECK(dir != NULL);
  if (!dir) return;
  char path[512];
  snprintf(path, sizeof path, "%s/full.h5", dir);
  int fds[2];
  CHECK(pipe(fds) == 0);
  fflush(stdout);
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    close(fds[0]);
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit rl = {LIMIT, LIMIT};
    if (setrlimit(RLIMIT_FSIZE, &rl)) _exit(10);
    Fixture *f = calloc(1, sizeof *f);
    fixture_init(f, 0);
    char err[512];
    cdRecorder *r = cd_recorderOpen(path, &f->scene, &run_info, err, sizeof err);
    if (!r) _exit(11);
    int k = 0, failed = 0;
    for (; k < 200000 && !failed; k++) {
      frame_make(f, k);
      failed = cd_recorderWriteFrame(r, &f->scene, &f->world, &f->stats) != 0;
    }
    if (!failed) _exit(12);
    if (write(fds[1], &k, sizeof k) != sizeof k) _exit(15);
    frame_make(f, k);
    if (cd_recorderWriteFrame(r, &f->scene, &f->world, &f->stats) == 0) _exit(13);
    if (cd_recorderClose(r, "failed: disk full", NULL) == 0) _exit(14);
    _exit(0);
  }
  close(fds[1]);
  int status = 0, accepted = 0;
  if (read(fds[0], &accepted, sizeof accepted) != sizeof accepted) accepted = 0;
  close(fds[0]);
  waitpid(pid, &status, 0);
  CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child %s %d",
            WIFEXITED(status) ? "exit code" : "signal", WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
  struct stat st;
  CHECK(stat(path, &st) == 0 && st.st_size <= LIMIT);
  /* lengths only: reading a chunk lost to the failed write is not safe (HDF5 1.10.8
   * overruns a buffer decoding it) */
  hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  CHECK_MSG(file >= 0, "the file does not open after the disk filled");
  long F = -1;
  hsize_t C = 0;
  for (int i = 0; file >= 0 && i < NLAYOUT; i++) {
    hid_t d = H5Dopen2(file, layout[i].path, H5P_DEFAULT);
    CHECK_MSG(d >= 0, "%s missing", layout[i].path);
    if (d < 0) continue;
    hid_t sp = H5Dget_space(d);
    hsize_t dims[3] = {0};
    H5Sget_simple_extent_dims(sp, dims, NULL);
    if (i == 0) F = (long)dims[0];
    if (strcmp(layout[i].path, "/contacts/bodies") == 0) C = dims[0];
    char c = layout[i].dims[0];
    if (c == 'F')
      CHECK_MSG(dims[0] == (hsize_t)F, "%s: %llu rows, /time %ld", layout[i].path, (unsigned long long)dims[0], F);
    if (c == 'P') CHECK(dims[0] == (hsize_t)F + 1);
    if (c == 'C' && C) CHECK_MSG(dims[0] == C, "%s: %llu rows", layout[i].path, (unsigned long long)dims[0]);
    H5Sclose(sp);
    H5Dclose(d);
  }
  if (file >= 0) H5Fclose(file);
  CHECK_MSG(F > 0 && F % 32 == 0 && F < accepted, "%ld frames kept of %d written", F, accepted);
  printf("    %ld KiB: disk full at frame %d; the file keeps %ld frames\n", LIMIT / 1024, accepted, F);
  tmpdir_remove(dir, "full.h5");
}

CD_TEST(recorderFullDiskIsAnErrorReturn) {
  for (long limit = 180 * 1024; limit <= 640 * 1024; limit += 92 * 1024) fullDiskAt(limit);
}

CD_TEST(recorderAlphaOnlyWhenTheContactSetHasDirections) {
  char *dir = tmpdir_make();
  CHECK(dir != NULL);
  if (!dir) return;
  char path[512];
  snprintf(path, sizeof path, "%s/run.h5", dir);
  /* no directions: no /contacts/alpha (check_frames checks its absence) */
  CHECK(run_write(path, 50, -1, "ok") == 0);
  CHECK(check_frames(path, -1) == 50);
  /* directions from frame 40 on, after a batch of contacts without them: those rows
   * read NaN, the later ones the values */
  unlink(path);
  CHECK(run_write(path, 80, 40, "ok") == 0);
  CHECK(check_frames(path, 40) == 80);
  tmpdir_remove(dir, "run.h5");
}

CD_TEST(recorderFileOpensInH5pyAndH5dump) {
  if (system("/usr/bin/python3 -c 'import h5py' >/dev/null 2>&1") != 0) CD_SKIP("python3 with h5py not installed");
  char *dir = tmpdir_make();
  CHECK(dir != NULL);
  if (!dir) return;
  char path[512], cmd[2048];
  snprintf(path, sizeof path, "%s/run.h5", dir);
  CHECK(run_write(path, 50, 0, "ok") == 0);
  snprintf(cmd, sizeof cmd,
           "/usr/bin/python3 -c \"import h5py,sys\n"
           "f = h5py.File('%s', 'r')\n"
           "a = f.attrs\n"
           "keys = ('format', 'model', 'solver', 'command_line', 'scene', 'cdsim_version', 'status')\n"
           "ok = all(isinstance(a[k], str) for k in keys)\n"
           "ok = ok and a['format'] == 'cdsim' and a['status'] == 'ok' and int(a['format_version']) == 1\n"
           "ok = ok and list(f['bodies/shape'].asstr()[:]) == ['sphere', 'box', 'cube']\n"
           "ok = ok and f['trajectory/position'].shape == (50, 3, 3)\n"
           "ok = ok and f['contacts/offset'][-1] == f['contacts/gap'].shape[0]\n"
           "sys.exit(0 if ok else 1)\"",
           path);
  CHECK_MSG(system(cmd) == 0, "h5py does not read the file as documented");
  if (system("command -v h5dump >/dev/null 2>&1") == 0) {
    snprintf(cmd, sizeof cmd, "h5dump -H '%s' >/dev/null 2>&1", path);
    CHECK_MSG(system(cmd) == 0, "h5dump cannot read the file");
  }
  tmpdir_remove(dir, "run.h5");
}

/* q (w, x, y, z) applied to v */
static void quat_rotate(const double *q, const double *v, double *out) {
  const double *u = &q[1];
  double t[3] = {2 * (u[1] * v[2] - u[2] * v[1]), 2 * (u[2] * v[0] - u[0] * v[2]), 2 * (u[0] * v[1] - u[1] * v[0])};
  out[0] = v[0] + q[0] * t[0] + (u[1] * t[2] - u[2] * t[1]);
  out[1] = v[1] + q[0] * t[1] + (u[2] * t[0] - u[0] * t[2]);
  out[2] = v[2] + q[0] * t[2] + (u[0] * t[1] - u[1] * t[0]);
}

CD_TEST(recorderBoxVerticesAreTheCornersOfEveryBoxAtItsPose) {
  /* /geometry/box_vertices[k] against the corners made from /trajectory (position and the
   * quaternion, not the rotation matrix the recorder uses) and /bodies/half_extents, in
   * VTK's hexahedron order; /geometry/box_body names the boxes (bodies 1 and 2) */
  char *dir = tmpdir_make();
  CHECK(dir != NULL);
  if (!dir) return;
  char path[512];
  snprintf(path, sizeof path, "%s/run.h5", dir);
  enum { F = 40 };
  CHECK(run_write(path, F, -1, "ok") == 0);
  hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  Array vert, pos, ori, half, body, hexa, sph, rad;
  hid_t D = H5T_NATIVE_DOUBLE, I = H5T_NATIVE_INT32;
  int bad = array_read(file, "/geometry/box_vertices", D, &vert) | array_read(file, "/trajectory/position", D, &pos) |
            array_read(file, "/trajectory/orientation", D, &ori) | array_read(file, "/bodies/half_extents", D, &half) |
            array_read(file, "/geometry/box_body", I, &body) | array_read(file, "/geometry/hexahedra", I, &hexa) |
            array_read(file, "/geometry/spheres", I, &sph) | array_read(file, "/bodies/radius", D, &rad);
  CHECK(!bad);
  if (!bad) {
    const int32_t *bb = body.data, *hx = hexa.data, *sp = sph.data;
    const double *r = rad.data, *h = half.data;
    CHECK(body.n == 2 && bb[0] == 1 && bb[1] == 2 && sph.n == 1 && sp[0] == 0);
    CHECK(r[0] == 0.1 && r[1] == 0 && r[2] == 0);
    CHECK(h[0] == 0.1 && h[1] == 0.1 && h[2] == 0.1 && h[3] == 0.2 && h[4] == 0.1 && h[5] == 0.05 && h[6] == 1.0);
    for (int j = 0; j < 16; j++) CHECK(hx[j] == j);
    CHECK(vert.rank == 3 && vert.dims[0] == F && vert.dims[1] == 16 && vert.dims[2] == 3);
    static const int sign[8][3] = {{-1, -1, -1}, {1, -1, -1}, {1, 1, -1}, {-1, 1, -1},
                                   {-1, -1, 1},  {1, -1, 1},  {1, 1, 1},  {-1, 1, 1}};
    double err = 0;
    for (int k = 0; k < F; k++)
      for (int j = 0; j < 2; j++) {
        int b = bb[j];
        const double *x = &((double *)pos.data)[(k * NB + b) * 3], *q = &((double *)ori.data)[(k * NB + b) * 4];
        for (int v = 0; v < 8; v++) {
          double loc[3], w[3];
          for (int d = 0; d < 3; d++) loc[d] = sign[v][d] * h[3 * b + d];
          quat_rotate(q, loc, w);
          const double *got = &((double *)vert.data)[((k * 16) + 8 * j + v) * 3];
          for (int d = 0; d < 3; d++) err = fmax(err, fabs(got[d] - (x[d] + w[d])));
        }
      }
    /* coordinates of order 1 m: the rotation matrix and the quaternion formula round apart */
    CHECK_MSG(err <= 1e-15 * 8, "corner error %.3g m", err);
  }
  Array *all[] = {&vert, &pos, &ori, &half, &body, &hexa, &sph, &rad};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) free(all[i]->data);
  if (file >= 0) H5Fclose(file);
  tmpdir_remove(dir, "run.h5");
}

CD_TEST(recorderCloseRewritesTheSolverAttributeWithWhatRan) {
  /* the run opens with the configured name (run_info: "lemke") and closes with the name of
   * what ran; NULL keeps the first */
  char *dir = tmpdir_make();
  CHECK(dir != NULL);
  if (!dir) return;
  char path[512];
  snprintf(path, sizeof path, "%s/run.h5", dir);
  Fixture *f = calloc(1, sizeof *f);
  fixture_init(f, -1);
  char err[512];
  for (int variant = 0; variant < 2; variant++) {
    cdRecorder *r = cd_recorderOpen(path, &f->scene, &run_info, err, sizeof err);
    CHECK(r != NULL);
    if (!r) break;
    for (int k = 0; k < 5; k++) {
      frame_make(f, k);
      CHECK(cd_recorderWriteFrame(r, &f->scene, &f->world, &f->stats) == 0);
    }
    CHECK(cd_recorderClose(r, "ok", variant ? NULL : "lemke+bgs") == 0);
    hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    char *s = file >= 0 ? attr_string_read(file, "solver") : NULL;
    const char *want = variant ? "lemke" : "lemke+bgs";
    CHECK_MSG(s && strcmp(s, want) == 0, "solver '%s', expected '%s'", s ? s : "(none)", want);
    free(s);
    if (file >= 0) H5Fclose(file);
  }
  fixture_free(f);
  free(f);
  tmpdir_remove(dir, "run.h5");
}
