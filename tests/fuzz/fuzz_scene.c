/* fuzz_scene.c: libFuzzer harness of the scene loader (io/scene_json.c) with --set overrides.
 *
 * Input: SCENE TEXT [NUL OVERRIDES], the overrides one a line as POINTER=JSON (the text of
 * a --set option; a line without '=' sets the pointer to null). The harness loads it with
 * cd_sceneLoad, the function the command line uses, and checks the loader's contracts:
 *   - it returns 0, 2 or -1 (-1 only for out of memory, which the harness never injects);
 *   - on 2 the message is non-empty, ends with '\n' and every line is printable (no control
 *     byte but '\n': one message a line, whatever the input holds);
 *   - on 0 the scene is usable: bodies >= 1, dt in (0, 10], nstep in [0, 1e9], every moving
 *     body with a finite positive mass and inertia, every body's material in range, and
 *     the effective scene text loads again to the same body count (a round trip);
 *   - every block cd_malloc gave is freed (cd_allocLive back where it was).
 * A violated contract aborts, which libFuzzer reports as a crash; ASan and UBSan catch the
 * rest. Build and run: make fuzz (tests/fuzz/README.md).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "scene_json.h"

#define FUZZ_MAX_SETS 16

static void fail(const char *what, const char *detail) {
  fprintf(stderr, "fuzz_scene: contract violated: %s\n%s\n", what, detail ? detail : "");
  abort();
}

static void checkMessage(const char *err) {
  size_t n = strlen(err);
  if (n == 0) fail("a rejected scene gives no message", NULL);
  if (err[n - 1] != '\n') fail("a message does not end with a newline", err);
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)err[i];
    if (c < 0x20 && c != '\n') fail("a message holds a control byte", err);
  }
}

static void checkScene(const cdScene *s) {
  if (s->nbody < 1 || !s->body) fail("a loaded scene has no bodies", NULL);
  if (!(s->dt > 0 && s->dt <= 10)) fail("dt out of (0, 10]", NULL);
  if (s->nstep < 0 || s->nstep > 1000000000L) fail("nstep out of [0, 1e9]", NULL);
  if (s->nmaterial < 1 || s->ground_material < 0 || s->ground_material >= s->nmaterial)
    fail("ground material out of range", NULL);
  for (int i = 0; i < s->nbody; i++) {
    const cdBodyDef *b = &s->body[i];
    if (b->material < 0 || b->material >= s->nmaterial) fail("body material out of range", b->name);
    if (b->fixed) continue;
    if (!(b->mass > 0 && b->mass < 1e308)) fail("moving body without a finite positive mass", b->name);
    for (int k = 0; k < 3; k++)
      if (!(b->inertia[k] > 0 && b->inertia[k] < 1e308)) fail("moving body without a finite inertia", b->name);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* the text (NUL-terminated copy) and the overrides after the first NUL */
  char *buf = malloc(size + 2);
  if (!buf) return 0;
  memcpy(buf, data, size);
  buf[size] = 0;
  buf[size + 1] = 0;
  const char *text = buf;
  size_t tlen = strlen(buf);
  cdSceneSet sets[FUZZ_MAX_SETS];
  int nset = 0;
  if (tlen < size) {
    char *line = buf + tlen + 1;
    while (*line && nset < FUZZ_MAX_SETS) {
      char *nl = strchr(line, '\n');
      if (nl) *nl = 0;
      char *eq = strchr(line, '=');
      if (eq) *eq = 0;
      sets[nset].pointer = line;
      sets[nset].json = eq ? eq + 1 : "null";
      nset++;
      if (!nl) break;
      line = nl + 1;
    }
  }
  long live = cd_allocLive();
  cdScene scene;
  char *effective = NULL;
  char err[4096];
  err[0] = 0;
  int st = cd_sceneLoad("fuzz.json", text, sets, nset, &scene, &effective, err, sizeof err);
  if (st != 0 && st != 2) fail("cd_sceneLoad returned neither 0 nor 2", err);
  if (st == 2) {
    checkMessage(err);
    if (effective) fail("a rejected scene returns an effective text", NULL);
  } else {
    checkScene(&scene);
    if (!effective) fail("a loaded scene has no effective text", NULL);
    cdScene again;
    char err2[4096];
    err2[0] = 0;
    int st2 = cd_sceneLoad("effective.json", effective, NULL, 0, &again, NULL, err2, sizeof err2);
    if (st2 != 0) fail("the effective scene does not load again", err2);
    if (again.nbody != scene.nbody || again.nstep != scene.nstep) fail("the effective scene differs", effective);
    cd_sceneFree(&again);
    cd_free(effective);
    cd_sceneFree(&scene);
  }
  if (cd_allocLive() != live) fail("cd_malloc blocks leaked", NULL);
  free(buf);
  return 0;
}
