/* test_xdmf.c: the XDMF sidecar FILE.xdmf of a run (io/xdmf.c), through the real binary:
 * what it describes (every frame of the file, and no more), the options, scripts/xdmf, and
 * ParaView itself (pvpython, when installed) opening it. Also the root attribute solver,
 * which names the solver that ran (written at close). */
#include <fcntl.h>
#include <hdf5.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli_util.h"
#include "test.h"
#include "xdmf.h"

#define RUN(out, err, ...) \
  cd_cliRun((const char *const[]){__VA_ARGS__, NULL}, NULL, out, sizeof(out), err, sizeof(err), NULL)

/* three spheres, a cube and a box dropped on the ground, some spinning: every kind of grid */
static const char *const MIXED =
    "{\"dt\": 0.01, \"steps\": 40, \"ground\": {},\n"
    " \"bodies\": [\n"
    "  {\"name\": \"s0\", \"shape\": \"sphere\", \"radius\": 0.1, \"mass\": 1, \"position\": [0, 0, 0.1]},\n"
    "  {\"name\": \"s1\", \"shape\": \"sphere\", \"radius\": 0.1, \"mass\": 1, \"position\": [0.05, 0.02, 0.35]},\n"
    "  {\"name\": \"c0\", \"shape\": \"cube\", \"size\": 0.2, \"mass\": 1, \"position\": [0.5, 0, 0.3],\n"
    "   \"orientation\": [0.9238795, 0.3826834, 0, 0]},\n"
    "  {\"name\": \"s2\", \"shape\": \"sphere\", \"radius\": 0.05, \"mass\": 1, \"position\": [-0.4, 0, 0.2],\n"
    "   \"velocity\": [1, 0, 0]},\n"
    "  {\"name\": \"b0\", \"shape\": \"box\", \"size\": [0.4, 0.2, 0.1], \"mass\": 2, \"position\": [0, 0.6, 0.3],\n"
    "   \"angular_velocity\": [0, 0, 3]}\n"
    " ]}\n";

static void mixedScene(char *path, size_t n) {
  snprintf(path, n, "%s/mixed.json", cd_cliTmpdir());
  cd_cliWriteFile(path, MIXED);
}

static char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc((size_t)n + 1);
  if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
    free(buf);
    buf = NULL;
  }
  if (buf) buf[n] = 0;
  if (len) *len = (size_t)n;
  fclose(f);
  return buf;
}

static int count(const char *s, const char *needle) {
  int n = 0;
  for (const char *p = s; (p = strstr(p, needle)); p += strlen(needle)) n++;
  return n;
}

/* checks that the sidecar text x describes exactly the frames of the HDF5 file h5: one grid
 * of each kind a frame, at the file's times, each contact grid the frame's rows of
 * /contacts (count and first row); returns the frames it describes, or -1 */
static long checkSidecar(const char *x, const char *h5, int nkinds) {
  double *t = NULL, *off = NULL;
  long F = cd_cliReadDataset(h5, "/time", &t, NULL, NULL);
  long P = cd_cliReadDataset(h5, "/contacts/offset", &off, NULL, NULL);
  CHECK_MSG(F > 0 && P == F + 1, "%s: %ld frames, %ld offsets", h5, F, P);
  long described = count(x, "<Grid Name=\"contacts\" GridType=\"Uniform\">");
  CHECK_MSG(count(x, "GridType=\"Uniform\">") == nkinds * described, "grids of each kind differ in number");
  CHECK_MSG(count(x, "CollectionType=\"Temporal\"") == nkinds, "expected %d collections", nkinds);
  CHECK_MSG(described == F, "the sidecar describes %ld frames, the file holds %ld", described, F);
  /* the contacts collection comes last: walk its frames */
  const char *p = strstr(x, "<Grid Name=\"contacts\" GridType=\"Uniform\">");
  long bad = 0;
  for (long k = 0; p && k < F && k + 1 < P; k++) {
    double tk = 0;
    unsigned long long n = 0, start = 0;
    const char *tv = strstr(p, "<Time Value=\"");
    const char *ne = strstr(p, "NumberOfElements=\"");
    if (!tv || !ne || sscanf(tv, "<Time Value=\"%lf", &tk) != 1 || sscanf(ne, "NumberOfElements=\"%llu", &n) != 1) {
      bad++;
      break;
    }
    bad += tk != t[k];
    bad += (double)n != off[k + 1] - off[k];
    const char *sel = strstr(p, "Format=\"XML\">");
    if (n > 0) bad += !sel || sscanf(sel, "Format=\"XML\">%llu", &start) != 1 || (double)start != off[k];
    p = strstr(p + 1, "<Grid Name=\"contacts\" GridType=\"Uniform\">");
  }
  CHECK_MSG(bad == 0, "%ld frames of the sidecar differ from the file (time, contact rows)", bad);
  free(t);
  free(off);
  return described;
}

CD_TEST(runWritesASidecarDescribingEveryFrameOfItsFile) {
  if (!cd_cliHaveBin()) CD_SKIP("CDSIM_BIN not built");
  char scene[512], out[512], xpath[600], so[4096], se[4096];
  mixedScene(scene, sizeof scene);
  snprintf(out, sizeof out, "%s/mixed.h5", cd_cliTmpdir());
  int code = RUN(so, se, scene, "--model", "ccp", "--out", out, "--quiet");
  CHECK_MSG(code == 0, "exit %d: %s", code, se);
  cd_xdmfPath(out, xpath, sizeof xpath);
  CHECK(strcmp(xpath + strlen(xpath) - 10, "mixed.xdmf") == 0);
  size_t len = 0;
  char *x = slurp(xpath, &len);
  CHECK_MSG(x != NULL, "no sidecar %s", xpath);
  if (!x) return;
  /* spheres, boxes, contacts; references name the HDF5 file beside it, not a copy */
  CHECK(checkSidecar(x, out, 3) == 41);
  CHECK(strstr(x, "mixed.h5:/trajectory/position") && strstr(x, "mixed.h5:/geometry/box_vertices") &&
        strstr(x, "mixed.h5:/contacts/normal_impulse"));
  CHECK(strstr(x, cd_cliTmpdir()) == NULL);
  printf("    41 frames: %zu bytes of XML\n", len);
  free(x);
}

CD_TEST(noXdmfWritesNoSidecarAndARunRemovesTheSidecarOfTheFileItReplaces) {
  if (!cd_cliHaveBin()) CD_SKIP("CDSIM_BIN not built");
  char scene[1024], out[512], xpath[600], so[4096], se[4096];
  cd_cliScenePath(scene, sizeof scene, "sliding-cube.json");
  snprintf(out, sizeof out, "%s/nox.h5", cd_cliTmpdir());
  cd_xdmfPath(out, xpath, sizeof xpath);
  CHECK(cd_cliWriteFile(xpath, "a sidecar of an earlier run") == 0);
  int code = RUN(so, se, scene, "--steps", "5", "--out", out, "--quiet", "--no-xdmf");
  CHECK_MSG(code == 0, "exit %d: %s", code, se);
  struct stat st;
  CHECK_MSG(stat(xpath, &st) != 0, "%s is still there", xpath);
  code = RUN(so, se, scene, "--steps", "5", "--out", out, "--quiet");
  CHECK(code == 0 && stat(xpath, &st) == 0);
  /* an invalid scene changes nothing: neither the file nor its sidecar */
  code = RUN(so, se, scene, "--steps", "5", "--out", out, "--quiet", "--set", "/dt=-1");
  CHECK(code == 2 && stat(xpath, &st) == 0);
}

CD_TEST(interruptedRunSidecarDescribesExactlyTheFramesTheFileHolds) {
  if (!cd_cliHaveBin()) CD_SKIP("CDSIM_BIN not built");
  char scene[1024], out[512], xpath[600];
  cd_cliScenePath(scene, sizeof scene, "pile-1000.json");
  snprintf(out, sizeof out, "%s/int.h5", cd_cliTmpdir());
  cd_xdmfPath(out, xpath, sizeof xpath);
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, 2);
    execl(cd_cliBin(), cd_cliBin(), scene, "--model", "ccp", "--steps", "100000", "--out", out, "--quiet",
          (char *)NULL);
    _exit(127);
  }
  /* the run takes SIGINT once its file exists (the handler is set right after); wait for
   * that, then a second more for some frames (a loaded machine starts slowly) */
  struct timespec tick = {0, 50000000}, more = {1, 0};
  struct stat st;
  for (int i = 0; i < 600 && stat(out, &st) != 0; i++) nanosleep(&tick, NULL);
  nanosleep(&more, NULL);
  kill(pid, SIGINT);
  int status = 0;
  waitpid(pid, &status, 0);
  CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 1, "status %d", status);
  char *x = slurp(xpath, NULL);
  CHECK_MSG(x != NULL, "no sidecar after SIGINT");
  if (!x) return;
  long F = checkSidecar(x, out, 2); /* spheres and contacts */
  CHECK(F >= 2);
  printf("    interrupted after %ld frames: the sidecar has them all\n", F);
  free(x);
}

CD_TEST(xdmfScriptWritesTheSidecarTheRunWrites) {
  if (!cd_cliHaveBin()) CD_SKIP("CDSIM_BIN not built");
  if (system("/usr/bin/python3 -c 'import h5py' >/dev/null 2>&1") != 0) CD_SKIP("python3 with h5py not installed");
  char scene[512], out[512], xpath[600], cmd[2400], so[4096], se[4096];
  mixedScene(scene, sizeof scene);
  snprintf(out, sizeof out, "%s/script.h5", cd_cliTmpdir());
  cd_xdmfPath(out, xpath, sizeof xpath);
  int code = RUN(so, se, scene, "--model", "lcp", "--steps", "12", "--out", out, "--quiet");
  CHECK_MSG(code == 0, "exit %d: %s", code, se);
  size_t n1 = 0, n2 = 0;
  char *run = slurp(xpath, &n1);
  CHECK(run != NULL && unlink(xpath) == 0);
  const char *root = getenv("CDSIM_ROOT") ? getenv("CDSIM_ROOT") : ".";
  snprintf(cmd, sizeof cmd, "CDSIM_BIN='%s' '%s/scripts/xdmf' '%s' 2>&1", cd_cliBin(), root, out);
  CHECK_MSG(system(cmd) == 0, "%s failed", cmd);
  char *script = slurp(xpath, &n2);
  CHECK_MSG(run && script && n1 == n2 && memcmp(run, script, n1) == 0, "scripts/xdmf wrote another sidecar");
  /* not a cdsim file: exit 1 and one line naming it */
  snprintf(cmd, sizeof cmd, "CDSIM_BIN='%s' '%s/scripts/xdmf' '%s' 2>&1", cd_cliBin(), root, scene);
  FILE *p = popen(cmd, "r");
  char msg[2048] = "";
  size_t got = p ? fread(msg, 1, sizeof msg - 1, p) : 0;
  msg[got] = 0;
  int rc = p ? pclose(p) : -1;
  CHECK_MSG(WIFEXITED(rc) && WEXITSTATUS(rc) == 1, "scripts/xdmf on a JSON file: status %d", rc);
  CHECK_MSG(strstr(msg, scene) && count(msg, "\n") == 1 && !strstr(msg, "Traceback"), "message: %s", msg);
  free(run);
  free(script);
}

CD_TEST(lcpRunRecordsTheSolverThatRanAtItsEnd) {
  /* the default LCP solver is "lemke+bgs" until it has solved a step; on the sliding cube
   * Lemke solves every step, and the file and the summary say "lemke" */
  if (!cd_cliHaveBin()) CD_SKIP("CDSIM_BIN not built");
  char scene[1024], out[512], so[4096], se[4096], attr[256];
  cd_cliScenePath(scene, sizeof scene, "sliding-cube.json");
  snprintf(out, sizeof out, "%s/solver.h5", cd_cliTmpdir());
  int code = RUN(so, se, scene, "--model", "lcp", "--steps", "10", "--out", out, "--quiet", "--summary");
  CHECK_MSG(code == 0, "exit %d: %s", code, se);
  CHECK(cd_cliReadAttr(out, "solver", attr, sizeof attr) == 0);
  CHECK_MSG(strcmp(attr, "lemke") == 0, "solver attribute '%s'", attr);
  CHECK_MSG(strstr(so, "\"solver\": \"lemke\""), "summary: %s", so);
}

/* ---- ParaView ------------------------------------------------------------------------ */

/* run by pvpython: opens the sidecar with the XDMF Reader and checks every frame's time and,
 * at the last frame, that the spheres, boxes and contacts are the file's: the bounds of the
 * sphere centres and of the box corners are those of the last frame's data (so they hold
 * every body), the points are the file's values, and the contacts carry their normals and
 * impulses. Prints OK and exits 0, or says what differs and exits 1. */
static const char *const PV_CHECK =
    "import sys\n"
    "import numpy as np, h5py\n"
    "from paraview.simple import XDMFReader\n"
    "from paraview import servermanager\n"
    "from vtk.numpy_interface import dataset_adapter as dsa\n"
    "xdmf, h5 = sys.argv[1], sys.argv[2]\n"
    "f = h5py.File(h5, 'r')\n"
    "t = f['time'][:]\n"
    "r = XDMFReader(FileNames=[xdmf])\n"
    "ts = np.array(r.TimestepValues)\n"
    "def fail(m):\n"
    "    print('FAIL', m); sys.exit(1)\n"
    "if len(ts) != len(t) or np.abs(ts - t).max() > 1e-12 * max(1.0, abs(t[-1])): fail('times %s' % ts[:5])\n"
    "r.UpdatePipeline(ts[-1])\n"
    "d = servermanager.Fetch(r)\n"
    "blocks = {d.GetMetaData(i).Get(d.NAME()): d.GetBlock(i) for i in range(d.GetNumberOfBlocks())}\n"
    "if sorted(blocks) != ['boxes', 'contacts', 'spheres']: fail('blocks %s' % sorted(blocks))\n"
    "def bounds_are(b, pts, what):\n"
    "    lo, hi = pts.min(0), pts.max(0)\n"
    "    bb = np.array(b.GetBounds())\n"
    "    if np.abs(bb[0::2] - lo).max() > 1e-12 or np.abs(bb[1::2] - hi).max() > 1e-12: fail('%s bounds %s' % (what, bb))\n"
    "pos = f['trajectory/position'][-1]\n"
    "sph = f['geometry/spheres'][:]\n"
    "s = dsa.WrapDataObject(blocks['spheres'])\n"
    "if s.GetNumberOfCells() != len(sph) or np.abs(np.array(s.Points) - pos).max() != 0: fail('sphere centres')\n"
    "if np.abs(np.array(s.PointData['radius']) - f['bodies/radius'][:]).max() != 0: fail('radius')\n"
    "bounds_are(blocks['spheres'], pos, 'sphere')\n"
    "corners = f['geometry/box_vertices'][-1]\n"
    "bx = dsa.WrapDataObject(blocks['boxes'])\n"
    "if bx.GetNumberOfCells() != len(f['geometry/box_body']) or bx.GetCellType(0) != 12: fail('box cells')\n"
    "if np.abs(np.array(bx.Points) - corners).max() != 0: fail('box corners')\n"
    "bounds_are(blocks['boxes'], corners, 'box')\n"
    "off = f['contacts/offset'][:]\n"
    "a, b = off[-2], off[-1]\n"
    "c = dsa.WrapDataObject(blocks['contacts'])\n"
    "if c.GetNumberOfPoints() != b - a or b == a: fail('contacts %d of %d' % (c.GetNumberOfPoints(), b - a))\n"
    "if np.abs(np.array(c.Points) - f['contacts/point'][a:b]).max() != 0: fail('contact points')\n"
    "for name in ('normal', 'normal_impulse', 'tangent_impulse', 'gap'):\n"
    "    if np.abs(np.array(c.PointData[name]) - f['contacts/' + name][a:b]).max() != 0: fail(name)\n"
    "print('OK', len(ts), 'frames;', len(sph), 'spheres,', bx.GetNumberOfCells(), 'boxes,', b - a, 'contacts at the last')\n";

CD_TEST(paraviewOpensTheSidecarAsAnAnimationOfEveryFrame) {
  if (!cd_cliHaveBin()) CD_SKIP("CDSIM_BIN not built");
  if (system("command -v pvpython >/dev/null 2>&1") != 0)
    CD_SKIP("pvpython not installed (Debian: apt-get install paraview python3-paraview); ParaView not checked");
  char scene[512], out[512], xpath[600], py[512], cmd[2400], so[4096], se[4096];
  mixedScene(scene, sizeof scene);
  snprintf(out, sizeof out, "%s/pv.h5", cd_cliTmpdir());
  snprintf(py, sizeof py, "%s/pv_check.py", cd_cliTmpdir());
  cd_xdmfPath(out, xpath, sizeof xpath);
  int code = RUN(so, se, scene, "--model", "ccp", "--out", out, "--quiet");
  CHECK_MSG(code == 0, "exit %d: %s", code, se);
  CHECK(cd_cliWriteFile(py, PV_CHECK) == 0);
  /* offscreen, no display needed; pvpython prints its own start-up noise on stderr */
  snprintf(cmd, sizeof cmd, "pvpython --force-offscreen-rendering '%s' '%s' '%s' 2>/dev/null", py, xpath, out);
  FILE *p = popen(cmd, "r");
  char line[512] = "", last[512] = "";
  while (p && fgets(line, sizeof line, p))
    if (!strncmp(line, "OK", 2) || !strncmp(line, "FAIL", 4)) snprintf(last, sizeof last, "%s", line);
  int rc = p ? pclose(p) : -1;
  CHECK_MSG(rc == 0 && strncmp(last, "OK", 2) == 0, "pvpython: %s", last[0] ? last : "no answer");
  printf("    pvpython: %s", last);
}
