/* json_pointer.c: RFC 6901 JSON Pointers on a cJSON tree (see json_pointer.h).
 *
 * Tokens are compared in their escaped form, decoding "~0" and "~1" on the fly, so a
 * pointer of any length needs no buffer; only a member added by cd_jsonPointerSet needs its
 * decoded key, which cJSON then copies. Arrays are walked through their linked list once
 * (an index costs O(index), as it must in cJSON). Keys are matched case-sensitively, and an
 * object holding a key twice resolves to its first member, as cJSON's own lookup does.
 */
#include "json_pointer.h"

#include <string.h>

#include "alloc.h"

/* the position of the first bad character, or (size_t)-1 when pointer is well formed */
static size_t syntaxError(const char *pointer, size_t len) {
  if (len == 0) return (size_t)-1;
  if (pointer[0] != '/') return 0;
  for (size_t i = 0; i < len; i++)
    if (pointer[i] == '~' && pointer[i + 1] != '0' && pointer[i + 1] != '1') return i;
  return (size_t)-1;
}

/* whether the escaped token tok[0..n) decodes to key */
static int tokenEquals(const char *tok, size_t n, const char *key) {
  for (size_t i = 0; i < n; i++, key++) {
    char c = tok[i];
    if (c == '~') {
      c = tok[i + 1] == '0' ? '~' : '/';
      i++;
    }
    if (*key != c) return 0;
  }
  return *key == '\0';
}

/* a decimal array index without leading zeros; -1 when tok is not one (or is absurdly big) */
static long tokenIndex(const char *tok, size_t n) {
  if (n == 0 || n > 10 || (n > 1 && tok[0] == '0')) return -1;
  long v = 0;
  for (size_t i = 0; i < n; i++) {
    if (tok[i] < '0' || tok[i] > '9') return -1;
    v = 10 * v + (tok[i] - '0');
  }
  return v;
}

/* the child of container named by tok[0..n), or NULL */
static cJSON *childFor(const cJSON *container, const char *tok, size_t n) {
  if (cJSON_IsObject(container)) {
    for (cJSON *c = container->child; c; c = c->next)
      if (c->string && tokenEquals(tok, n, c->string)) return c;
    return NULL;
  }
  long k = tokenIndex(tok, n);
  if (k < 0) return NULL;
  cJSON *c = container->child;
  while (c && k-- > 0) c = c->next;
  return c;
}

/* resolves the first len bytes of a well-formed pointer */
static cJSON *resolve(const cJSON *root, const char *pointer, size_t len, cdJsonPointerStatus *status,
                      size_t *fail_len) {
  const cJSON *cur = root;
  size_t pos = 0;
  while (pos < len) {
    size_t start = pos + 1, end = start;
    while (end < len && pointer[end] != '/') end++;
    if (!cJSON_IsObject(cur) && !cJSON_IsArray(cur)) {
      *status = CD_JP_NOT_CONTAINER;
      *fail_len = pos;
      return NULL;
    }
    const cJSON *next = childFor(cur, pointer + start, end - start);
    if (!next) {
      *status = CD_JP_MISSING;
      *fail_len = end;
      return NULL;
    }
    cur = next;
    pos = end;
  }
  *status = CD_JP_OK;
  *fail_len = 0;
  /* cJSON's API hands out mutable items; the const on root only promises this walk writes nothing */
  union {
    const cJSON *c;
    cJSON *m;
  } u = {cur};
  return u.m;
}

cJSON *cd_jsonPointerGet(const cJSON *root, const char *pointer, cdJsonPointerStatus *status, size_t *fail_len) {
  cdJsonPointerStatus st_;
  size_t fl_;
  if (!status) status = &st_;
  if (!fail_len) fail_len = &fl_;
  size_t len = strlen(pointer);
  size_t bad = syntaxError(pointer, len);
  if (bad != (size_t)-1) {
    *status = CD_JP_SYNTAX;
    *fail_len = bad + (pointer[bad] == '~' ? 2 : 1);
    if (*fail_len > len) *fail_len = len;
    return NULL;
  }
  return resolve(root, pointer, len, status, fail_len);
}

/* decodes tok[0..n) into a fresh NUL-terminated string (cd_malloc), or NULL */
static char *tokenDecode(const char *tok, size_t n) {
  char *s = cd_malloc(n + 1);
  if (!s) return NULL;
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    if (tok[i] == '~') {
      s[k++] = tok[i + 1] == '0' ? '~' : '/';
      i++;
    } else {
      s[k++] = tok[i];
    }
  }
  s[k] = '\0';
  return s;
}

cdJsonPointerStatus cd_jsonPointerSet(cJSON **root, const char *pointer, cJSON *value, size_t *fail_len) {
  size_t fl_;
  if (!fail_len) fail_len = &fl_;
  *fail_len = 0;
  size_t len = strlen(pointer);
  size_t bad = syntaxError(pointer, len);
  if (bad != (size_t)-1) {
    *fail_len = bad + (pointer[bad] == '~' ? 2 : 1);
    if (*fail_len > len) *fail_len = len;
    return CD_JP_SYNTAX;
  }
  if (len == 0) {
    cJSON_Delete(*root);
    *root = value;
    return CD_JP_OK;
  }

  /* the parent must exist and hold members or elements */
  size_t last = len;
  while (pointer[last - 1] != '/') last--;
  last--; /* pointer[last] is the '/' before the final token */
  cdJsonPointerStatus st;
  cJSON *parent = resolve(*root, pointer, last, &st, fail_len);
  if (!parent) return st;
  if (!cJSON_IsObject(parent) && !cJSON_IsArray(parent)) {
    *fail_len = last;
    return CD_JP_NOT_CONTAINER;
  }
  const char *tok = pointer + last + 1;
  size_t n = len - last - 1;

  /* a value that arrives with a key of its own would leak it when it takes a member's place */
  if (value->string && !(value->type & cJSON_StringIsConst)) cJSON_free(value->string);
  value->string = NULL;
  value->type &= ~cJSON_StringIsConst;

  cJSON *old = childFor(parent, tok, n);
  if (old) {
    /* the replacement takes over the member's key; no allocation, so it cannot fail */
    value->string = old->string;
    value->type |= old->type & cJSON_StringIsConst;
    old->string = NULL;
    cJSON_ReplaceItemViaPointer(parent, old, value);
    return CD_JP_OK;
  }
  if (cJSON_IsObject(parent)) {
    char *key = tokenDecode(tok, n);
    if (!key) return CD_JP_NOMEM;
    int ok = cJSON_AddItemToObject(parent, key, value);
    cd_free(key);
    return ok ? CD_JP_OK : CD_JP_NOMEM;
  }
  long k = tokenIndex(tok, n);
  if ((n == 1 && tok[0] == '-') || (k >= 0 && k == cJSON_GetArraySize(parent))) {
    cJSON_AddItemToArray(parent, value);
    return CD_JP_OK;
  }
  *fail_len = len;
  return CD_JP_MISSING;
}

size_t cd_jsonPointerEscape(const char *token, char *out, size_t outlen) {
  size_t k = 0, written = 0;
  int full = !out || outlen == 0;
  for (const char *p = token; *p; p++) {
    const char *rep = *p == '~' ? "~0" : *p == '/' ? "~1" : NULL;
    size_t m = rep ? 2 : 1;
    if (!full && written + m < outlen) {
      memcpy(out + written, rep ? rep : p, m);
      written += m;
    } else {
      full = 1; /* truncated at a whole character: write nothing more */
    }
    k += m;
  }
  if (out && outlen > 0) out[written] = '\0';
  return k;
}
