/* scene_json.h: the scene file (DESIGN §2), read with cJSON and validated strictly.
 *
 * Errors are one line each, naming the place and the value:
 *   scene.json:12:7: expected ',' or '}'                      (syntax, line:column)
 *   scene.json: /bodies/3/radius: must be > 0 (got -0.5)       (values, JSON Pointer)
 *   scene.json: /bodies/0/colour: unknown key                  (typos are errors)
 *   --set /bodies/9/radius=0.1: /bodies/9 does not exist in scene.json   (overrides)
 */
#ifndef CD_SCENE_JSON_H
#define CD_SCENE_JSON_H

#include <stddef.h>

#include "scene.h"

/* one --set POINTER=JSON override, applied in order before validation (RFC 6901) */
typedef struct cdSceneSet {
  const char *pointer; /* "/bodies/0/velocity" */
  const char *json;    /* "[2,0,0]" */
} cdSceneSet;

/* reads path (or the text when text != NULL, path then only names it in messages),
 * applies the overrides, validates and fills scene (then cd_sceneFinish has run).
 * *effective (may be NULL) receives the scene after the overrides as compact JSON text,
 * allocated with cd_malloc. Returns 0, or 2 for a bad file / bad value / bad override
 * (messages in err, one per line, at most errlen bytes), or -1 when memory runs out. */
int cd_sceneLoad(const char *path, const char *text, const cdSceneSet *sets, int nset, cdScene *scene,
                 char **effective, char *err, size_t errlen);

#endif
