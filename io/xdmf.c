/* xdmf.c: the XDMF sidecar of an output file (xdmf.h), for ParaView.
 *
 * Layout of FILE.xdmf (XDMF 2, read by ParaView's "XDMF Reader"): three temporal
 * collections, each with one uniform grid a frame of FILE.h5, at the frame's /time:
 *
 *   spheres   Polyvertex cells at the spheres (/geometry/spheres: body indices) over the
 *             points /trajectory/position[k] (every body's centre); point data radius
 *             (/bodies/radius, 0 for a box), velocity, angular_velocity, orientation
 *             (w, x, y, z: ParaView's "3D Glyphs" quaternion order)
 *   boxes     Hexahedron cells (/geometry/hexahedra) over the corners
 *             /geometry/box_vertices[k]; cell data body (/geometry/box_body)
 *   contacts  Polyvertex cells at /contacts/point rows offset[k] .. offset[k+1]-1; point
 *             data normal, normal_impulse, tangent_impulse, gap
 *
 * A collection is left out when the file has no such thing (no spheres, no boxes). Every
 * reference is a HyperSlab of a dataset of the file ("frame k" or "rows a .. b"), named
 * relative to the sidecar: the two files move together. A frame without contacts has an
 * empty contact grid. The sidecar is written to FILE.xdmf.tmp, then renamed, so that a
 * reader never sees half of it.
 */
#include "xdmf.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <hdf5.h>

#include "alloc.h"

void cd_xdmfPath(const char *h5path, char *out, size_t n) {
  size_t len = strlen(h5path);
  if (len > 3 && strcmp(h5path + len - 3, ".h5") == 0) len -= 3;
  snprintf(out, n, "%.*s.xdmf", (int)len, h5path);
}

void cd_xdmfRemove(const char *h5path) {
  char path[4200];
  cd_xdmfPath(h5path, path, sizeof path);
  struct stat st;
  if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) unlink(path);
}

/* ---- reading the HDF5 file ------------------------------------------------------- */

typedef struct {
  hsize_t dims[3];
  int rank; /* -1: absent */
} cdShapeInfo;

static cdShapeInfo shape_of(hid_t file, const char *path) {
  cdShapeInfo s = {{0, 0, 0}, -1};
  if (H5Lexists(file, path, H5P_DEFAULT) <= 0) return s;
  hid_t d = H5Dopen2(file, path, H5P_DEFAULT);
  if (d < 0) return s;
  hid_t sp = H5Dget_space(d);
  if (sp >= 0) {
    s.rank = H5Sget_simple_extent_dims(sp, s.dims, NULL);
    H5Sclose(sp);
  }
  H5Dclose(d);
  return s;
}

/* reads a whole 1-D dataset of n elements of mtype into a new buffer */
static void *read_all(hid_t file, const char *path, hid_t mtype, size_t n) {
  void *buf = cd_malloc(n ? n * H5Tget_size(mtype) : 1);
  hid_t d = H5Dopen2(file, path, H5P_DEFAULT);
  if (!buf || d < 0 || (n && H5Dread(d, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0)) {
    cd_free(buf);
    buf = NULL;
  }
  if (d >= 0) H5Dclose(d);
  return buf;
}

/* ---- writing XML ----------------------------------------------------------------- */

typedef struct {
  FILE *f;
  char h5[1024]; /* the HDF5 file's name, XML-escaped */
} cdXml;

/* a HyperSlab of rows start .. start+count-1 of a dataset of dims (rank 1..3), the
 * first dimension selected, the others whole */
static void slab(cdXml *x, const char *path, const char *ntype, int prec, int rank, const hsize_t *dims,
                 unsigned long long start, unsigned long long count) {
  unsigned long long d1 = rank > 1 ? dims[1] : 1, d2 = rank > 2 ? dims[2] : 1;
  FILE *f = x->f;
  /* the selection drops the first dimension when a whole frame (count 1 of rank 3) is
   * taken: the result is B x 3, as a geometry wants */
  if (rank == 3)
    fprintf(f, "<DataItem ItemType=\"HyperSlab\" Dimensions=\"%llu %llu\">", d1, d2);
  else if (rank == 2)
    fprintf(f, "<DataItem ItemType=\"HyperSlab\" Dimensions=\"%llu %llu\">", count, d1);
  else
    fprintf(f, "<DataItem ItemType=\"HyperSlab\" Dimensions=\"%llu\">", count);
  fprintf(f, "<DataItem Dimensions=\"3 %d\" Format=\"XML\">", rank);
  if (rank == 3)
    fprintf(f, "%llu 0 0 1 1 1 %llu %llu %llu", start, count, d1, d2);
  else if (rank == 2)
    fprintf(f, "%llu 0 1 1 %llu %llu", start, count, d1);
  else
    fprintf(f, "%llu 1 %llu", start, count);
  fprintf(f, "</DataItem><DataItem Dimensions=\"");
  for (int i = 0; i < rank; i++) fprintf(f, i ? " %llu" : "%llu", (unsigned long long)dims[i]);
  fprintf(f, "\" NumberType=\"%s\" Precision=\"%d\" Format=\"HDF\">%s:%s</DataItem></DataItem>", ntype, prec, x->h5,
          path);
}

/* a whole dataset (rank 1 or 2) */
static void whole(cdXml *x, const char *path, const char *ntype, int prec, int rank, const hsize_t *dims) {
  fprintf(x->f, "<DataItem Dimensions=\"");
  for (int i = 0; i < rank; i++) fprintf(x->f, i ? " %llu" : "%llu", (unsigned long long)dims[i]);
  fprintf(x->f, "\" NumberType=\"%s\" Precision=\"%d\" Format=\"HDF\">%s:%s</DataItem>", ntype, prec, x->h5, path);
}

/* a whole dataset as the HyperSlab of all its rows: for a topology's connectivity, whose
 * plain reference makes the reader try to cache the geometry and say "Cannot find
 * DataItem element in geometry xml" on every update (ParaView 5.11, measured) */
static void whole_slab(cdXml *x, const char *path, int rank, const hsize_t *dims) {
  slab(x, path, "Int", 4, rank, dims, 0, dims[0]);
}

static void attr_open(cdXml *x, const char *name, const char *type, const char *center) {
  fprintf(x->f, "<Attribute Name=\"%s\" AttributeType=\"%s\" Center=\"%s\">", name, type, center);
}

static void xml_escape(const char *s, char *out, size_t n) {
  size_t k = 0;
  for (; *s && k + 7 < n; s++) {
    const char *e = *s == '&' ? "&amp;" : *s == '<' ? "&lt;" : *s == '>' ? "&gt;" : *s == '"' ? "&quot;" : NULL;
    if (e) {
      memcpy(out + k, e, strlen(e));
      k += strlen(e);
    } else {
      out[k++] = *s;
    }
  }
  out[k] = 0;
}

int cd_xdmfWrite(const char *h5path, char *err, size_t errlen) {
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  hid_t file = H5Fopen(h5path, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file < 0) {
    snprintf(err, errlen, "cannot write the XDMF sidecar of %s: not a readable HDF5 file", h5path);
    return -1;
  }
  int rc = cd_xdmfWriteFile(file, h5path, err, errlen);
  H5Fclose(file);
  return rc;
}

int cd_xdmfWriteFile(hid_t file, const char *h5path, char *err, size_t errlen) {
  char path[4200], tmp[4300];
  cd_xdmfPath(h5path, path, sizeof path);
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  cdShapeInfo t = shape_of(file, "/time"), off = shape_of(file, "/contacts/offset");
  cdShapeInfo pos = shape_of(file, "/trajectory/position"), vel = shape_of(file, "/trajectory/velocity");
  cdShapeInfo ang = shape_of(file, "/trajectory/angular_velocity"), ori = shape_of(file, "/trajectory/orientation");
  cdShapeInfo rad = shape_of(file, "/bodies/radius"), sph = shape_of(file, "/geometry/spheres");
  cdShapeInfo hexa = shape_of(file, "/geometry/hexahedra"), boxv = shape_of(file, "/geometry/box_vertices");
  cdShapeInfo boxb = shape_of(file, "/geometry/box_body"), point = shape_of(file, "/contacts/point");
  int rc = 0;
  if (t.rank != 1 || off.rank != 1 || pos.rank != 3 || vel.rank != 3 || ang.rank != 3 || ori.rank != 3 ||
      rad.rank != 1 || sph.rank != 1 || hexa.rank != 2 || boxb.rank != 1 || point.rank != 2 ||
      off.dims[0] != t.dims[0] + 1 || pos.dims[0] != t.dims[0]) {
    snprintf(err, errlen,
             "cannot write the XDMF sidecar of %s: not a cdsim output file with the /geometry group "
             "(cdsim 0.1 after the sidecar came; or frames missing)",
             h5path);
    return -1;
  }
  size_t F = (size_t)t.dims[0], nsphere = (size_t)sph.dims[0], nbox = (size_t)hexa.dims[0];
  if (nbox > 0 && (boxv.rank != 3 || boxv.dims[0] != F)) {
    snprintf(err, errlen, "cannot write the XDMF sidecar of %s: /geometry/box_vertices has the wrong shape",
             h5path);
    return -1;
  }
  double *time = read_all(file, "/time", H5T_NATIVE_DOUBLE, F);
  int64_t *offset = read_all(file, "/contacts/offset", H5T_NATIVE_INT64, F + 1);
  if (!time || !offset) {
    snprintf(err, errlen, "cannot write the XDMF sidecar of %s: out of memory reading /time and /contacts/offset",
             h5path);
    cd_free(time);
    cd_free(offset);
    return -1;
  }

  cdXml x;
  const char *base = strrchr(h5path, '/');
  xml_escape(base ? base + 1 : h5path, x.h5, sizeof x.h5);
  x.f = fopen(tmp, "w");
  if (!x.f) {
    snprintf(err, errlen, "cannot write %s: %s", tmp, strerror(errno));
    cd_free(time);
    cd_free(offset);
    return -1;
  }
  FILE *f = x.f;
  unsigned long long C = point.dims[0];
  fprintf(f, "<?xml version=\"1.0\" ?>\n<!-- cdsim output %s: %zu frames; open with ParaView's \"XDMF Reader\" -->\n"
             "<Xdmf Version=\"2.0\">\n<Domain>\n", x.h5, F);
  if (nsphere > 0) {
    fprintf(f, "<Grid Name=\"spheres\" GridType=\"Collection\" CollectionType=\"Temporal\">\n");
    for (size_t k = 0; k < F; k++) {
      fprintf(f, "<Grid Name=\"spheres\" GridType=\"Uniform\"><Time Value=\"%.17g\"/>", time[k]);
      fprintf(f, "<Topology TopologyType=\"Polyvertex\" NumberOfElements=\"%zu\" NodesPerElement=\"1\">", nsphere);
      whole_slab(&x, "/geometry/spheres", 1, sph.dims);
      fprintf(f, "</Topology><Geometry GeometryType=\"XYZ\">");
      slab(&x, "/trajectory/position", "Float", 8, 3, pos.dims, k, 1);
      fprintf(f, "</Geometry>");
      attr_open(&x, "radius", "Scalar", "Node");
      whole(&x, "/bodies/radius", "Float", 8, 1, rad.dims);
      fprintf(f, "</Attribute>");
      attr_open(&x, "velocity", "Vector", "Node");
      slab(&x, "/trajectory/velocity", "Float", 8, 3, vel.dims, k, 1);
      fprintf(f, "</Attribute>");
      attr_open(&x, "angular_velocity", "Vector", "Node");
      slab(&x, "/trajectory/angular_velocity", "Float", 8, 3, ang.dims, k, 1);
      fprintf(f, "</Attribute>");
      attr_open(&x, "orientation", "Matrix", "Node");
      slab(&x, "/trajectory/orientation", "Float", 8, 3, ori.dims, k, 1);
      fprintf(f, "</Attribute></Grid>\n");
    }
    fprintf(f, "</Grid>\n");
  }
  if (nbox > 0) {
    fprintf(f, "<Grid Name=\"boxes\" GridType=\"Collection\" CollectionType=\"Temporal\">\n");
    for (size_t k = 0; k < F; k++) {
      fprintf(f, "<Grid Name=\"boxes\" GridType=\"Uniform\"><Time Value=\"%.17g\"/>", time[k]);
      fprintf(f, "<Topology TopologyType=\"Hexahedron\" NumberOfElements=\"%zu\">", nbox);
      whole_slab(&x, "/geometry/hexahedra", 2, hexa.dims);
      fprintf(f, "</Topology><Geometry GeometryType=\"XYZ\">");
      slab(&x, "/geometry/box_vertices", "Float", 8, 3, boxv.dims, k, 1);
      fprintf(f, "</Geometry>");
      attr_open(&x, "body", "Scalar", "Cell");
      whole(&x, "/geometry/box_body", "Int", 4, 1, boxb.dims);
      fprintf(f, "</Attribute></Grid>\n");
    }
    fprintf(f, "</Grid>\n");
  }
  /* a frame without contacts selects none of the rows (an empty inline DataItem fails in
   * the XDMF Reader and crashes the Xdmf3 readers) */
  if (C > 0) fprintf(f, "<Grid Name=\"contacts\" GridType=\"Collection\" CollectionType=\"Temporal\">\n");
  hsize_t c1[1] = {C}, c3[2] = {C, 3};
  for (size_t k = 0; C > 0 && k < F; k++) {
    unsigned long long a = (unsigned long long)offset[k], n = (unsigned long long)(offset[k + 1] - offset[k]);
    if (n == 0 || a + n > C) a = n = 0;
    fprintf(f, "<Grid Name=\"contacts\" GridType=\"Uniform\"><Time Value=\"%.17g\"/>", time[k]);
    fprintf(f, "<Topology TopologyType=\"Polyvertex\" NumberOfElements=\"%llu\" NodesPerElement=\"1\"/>", n);
    fprintf(f, "<Geometry GeometryType=\"XYZ\">");
    slab(&x, "/contacts/point", "Float", 8, 2, c3, a, n);
    fprintf(f, "</Geometry>");
    attr_open(&x, "normal", "Vector", "Node");
    slab(&x, "/contacts/normal", "Float", 8, 2, c3, a, n);
    fprintf(f, "</Attribute>");
    attr_open(&x, "normal_impulse", "Scalar", "Node");
    slab(&x, "/contacts/normal_impulse", "Float", 8, 1, c1, a, n);
    fprintf(f, "</Attribute>");
    attr_open(&x, "tangent_impulse", "Vector", "Node");
    slab(&x, "/contacts/tangent_impulse", "Float", 8, 2, c3, a, n);
    fprintf(f, "</Attribute>");
    attr_open(&x, "gap", "Scalar", "Node");
    slab(&x, "/contacts/gap", "Float", 8, 1, c1, a, n);
    fprintf(f, "</Attribute></Grid>\n");
  }
  if (C > 0) fprintf(f, "</Grid>\n");
  fprintf(f, "</Domain>\n</Xdmf>\n");
  cd_free(time);
  cd_free(offset);
  if (ferror(f)) rc = -1;
  if (fclose(f) != 0) rc = -1;
  if (!rc && rename(tmp, path) != 0) rc = -1;
  if (rc) {
    snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno ? errno : EIO));
    unlink(tmp);
  }
  return rc;
}
