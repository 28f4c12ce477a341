/* backends.c: the registry of contact models (NULL-terminated). */
#include "backends.h"

#include <stdio.h>
#include <string.h>

static const cdBackend *const g_backends[] = {&cd_backendLcp, &cd_backendCcp, &cd_backendNcp, &cd_backendPenalty, NULL};

const cdBackend *cd_backendFind(const char *name) {
  for (int i = 0; g_backends[i]; i++)
    if (strcmp(g_backends[i]->name, name) == 0) return g_backends[i];
  return NULL;
}

int cd_backendSolverIndex(const char *model, const char *name, const char *const *names, int n, char *err,
                          size_t errlen) {
  for (int k = 0; k < n; k++)
    if (strcmp(name, names[k]) == 0) return k;
  if (err && errlen) {
    int w = snprintf(err, errlen, "%s: unknown solver '%s' (", model, name);
    for (int k = 0; k < n && w >= 0 && (size_t)w < errlen; k++)
      w += snprintf(err + w, errlen - (size_t)w, "%s%s", k ? ", " : "", names[k]);
    if (w >= 0 && (size_t)w < errlen) snprintf(err + w, errlen - (size_t)w, ")");
  }
  return -1;
}
