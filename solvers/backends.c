/* backends.c: the registry of contact models (NULL-terminated). */
#include "backends.h"

#include <string.h>

static const cdBackend *const g_backends[] = {&cd_backendLcp, &cd_backendCcp, &cd_backendNcp, &cd_backendPenalty, NULL};

const cdBackend *cd_backendFind(const char *name) {
  for (int i = 0; g_backends[i]; i++)
    if (strcmp(g_backends[i]->name, name) == 0) return g_backends[i];
  return NULL;
}
