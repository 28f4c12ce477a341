/* contact.c: the contact set and its key-matched carry from step to step. */
#include "contact.h"
#include "vec3.h"

#include <stdlib.h>
#include <string.h>

#include "alloc.h"

void cd_contactSetInit(cdContactSet *s) { memset(s, 0, sizeof *s); }

void cd_contactSetFree(cdContactSet *s) {
  cd_free(s->con);
  cd_free(s->alpha);
  memset(s, 0, sizeof *s);
}

void cd_contactSetClear(cdContactSet *s) { s->ncon = 0; }

static int grow(cdContactSet *s, int cap) {
  cdContact *c = cd_realloc(s->con, (size_t)cap * sizeof *c);
  if (!c) return -1;
  s->con = c;
  if (s->nalpha) {
    double *a = cd_realloc(s->alpha, (size_t)cap * (size_t)s->nalpha * sizeof *a);
    if (!a) return -1;
    s->alpha = a;
  }
  s->cap = cap;
  return 0;
}

cdContact *cd_contactSetPush(cdContactSet *s) {
  if (s->ncon >= CD_CONTACT_MAX) return NULL;
  if (s->ncon == s->cap && grow(s, s->cap ? 2 * s->cap : 64)) return NULL;
  cdContact *c = &s->con[s->ncon];
  memset(c, 0, sizeof *c);
  if (s->nalpha) memset(&s->alpha[(size_t)s->ncon * (size_t)s->nalpha], 0, (size_t)s->nalpha * sizeof(double));
  s->ncon++;
  return c;
}

int cd_contactSetSetAlpha(cdContactSet *s, int nalpha) {
  cd_free(s->alpha);
  s->alpha = NULL;
  s->nalpha = nalpha;
  if (nalpha && s->cap) {
    s->alpha = cd_calloc((size_t)s->cap * (size_t)nalpha, sizeof(double));
    if (!s->alpha) return -1;
  }
  return 0;
}

int cd_contactKeyCompare(const cdContact *x, const cdContact *y) {
  for (int i = 0; i < 2; i++) {
    if (x->body[i] != y->body[i]) return x->body[i] < y->body[i] ? -1 : 1;
  }
  for (int i = 0; i < 2; i++) {
    if (x->feature[i] != y->feature[i]) return x->feature[i] < y->feature[i] ? -1 : 1;
  }
  return 0;
}

static int cmp(const void *a, const void *b) { return cd_contactKeyCompare(a, b); }

/* alpha rows are not moved: collision fills contacts without them, and the carry that
 * follows the sort writes every row */
void cd_contactSetSort(cdContactSet *s) {
  if (s->ncon > 1) qsort(s->con, (size_t)s->ncon, sizeof *s->con, cmp);
}

void cd_contactSetCarry(cdContactSet *cur, const cdContactSet *prev) {
  int j = 0;
  int na = cur->nalpha == prev->nalpha ? cur->nalpha : 0;
  for (int i = 0; i < cur->ncon; i++) {
    cdContact *c = &cur->con[i];
    while (j < prev->ncon && cd_contactKeyCompare(&prev->con[j], c) < 0) j++;
    if (j < prev->ncon && cd_contactKeyCompare(&prev->con[j], c) == 0) {
      const cdContact *p = &prev->con[j];
      /* the impulse is carried as the same world vector, in the new contact frame: t1 of a
       * near-axis normal can turn by 90 degrees between steps (cd_tangentFrame ties on
       * round-off), which would make the warm start's friction wrong */
      if (cd_v3dot(p->t1, c->t1) < 1.0 - 1e-12 || cd_v3dot(p->normal, c->normal) < 1.0 - 1e-12) {
        double lw[3];
        for (int e = 0; e < 3; e++) lw[e] = p->lambda[0] * p->normal[e] + p->lambda[1] * p->t1[e] + p->lambda[2] * p->t2[e];
        c->lambda[0] = cd_v3dot(lw, c->normal);
        c->lambda[1] = cd_v3dot(lw, c->t1);
        c->lambda[2] = cd_v3dot(lw, c->t2);
      } else {
        memcpy(c->lambda, p->lambda, sizeof c->lambda);
      }
      c->beta = p->beta;
      memcpy(c->state, p->state, sizeof c->state);
      if (na) memcpy(&cur->alpha[(size_t)i * na], &prev->alpha[(size_t)j * na], (size_t)na * sizeof(double));
      c->fresh = 0;
    } else {
      c->fresh = 1;
      if (cur->nalpha) memset(&cur->alpha[(size_t)i * cur->nalpha], 0, (size_t)cur->nalpha * sizeof(double));
    }
  }
}
