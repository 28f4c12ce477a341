/* backends.c: the registry of contact models. */
#include "backends.h"

#include <string.h>

static const cdBackend *const g_backends[] = {&cd_backendLcp, &cd_backendCcp, &cd_backendPenalty};

const cdBackend *cd_backendFind(const char *name) {
  for (size_t i = 0; i < sizeof g_backends / sizeof g_backends[0]; i++)
    if (strcmp(g_backends[i]->name, name) == 0) return g_backends[i];
  return NULL;
}
