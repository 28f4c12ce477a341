/* scene_json.c: the scene file loader (DESIGN §2) with strict validation.
 *
 * Pipeline: read the file -> check its JSON syntax (our own scanner, below) -> parse with
 * cJSON -> apply the --set overrides in order (json_pointer.c) -> validate every value and
 * fill the cdScene -> cd_sceneFinish -> print the effective scene.
 *
 * Why a syntax scanner of our own: cJSON's error offset is approximate (it points past a bad
 * key, or at the last byte), and cJSON accepts text that JSON forbids (any byte <= 32 as
 * whitespace, NUL included; raw control characters in strings; "\uZZZZ" read as U+0000). The
 * scanner is at least as strict as cJSON in every respect, so when it accepts a text cJSON
 * can fail only by running out of memory: a NULL from cJSON after the scanner said yes is
 * reported as out of memory (-1). The scanner also rejects: a NUL byte anywhere, control
 * characters in strings, "\u0000" (C strings would cut a name there), numbers longer than
 * 63 characters (cJSON would silently cut them), anything but whitespace after the value.
 * Nesting is limited to 1000 levels, cJSON's CJSON_NESTING_LIMIT. It is iterative: no
 * recursion, so no input can exhaust the C stack.
 *
 * Messages, one line each ('\n'-terminated) into err, at most 20 plus a count of the rest:
 *   FILE:LINE:COL: what                  syntax; LINE and COL are 1-based, COL counts bytes
 *   FILE: /json/pointer: what (got X)    values; X is the value as JSON (numbers exact,
 *                                        strings quoted and cut at 40 bytes, "an array of N")
 *   --set POINTER=JSON: what             overrides
 * FILE is the path exactly as the caller gave it. Text that comes from the input (keys,
 * strings, the path) is printed with control characters and invalid UTF-8 as \xNN, so a
 * message is always one line.
 *
 * Defaults and rules (scenes/README.md sums them up):
 *   model             "lcp" | "ccp" | "ncp" | "penalty"; default "lcp"
 *   gravity           [0, 0, -9.81]
 *   dt                0.01; in (0, 10]
 *   duration | steps  at most one of them; neither: duration 1. steps is an integer in
 *                     [0, 1e9]. duration >= 0 gives nstep = cd_sceneStepCount(duration,
 *                     dt) (scene.h: the nearest integer within 1e-9 relative, else up);
 *                     <= 1e9.
 *   contact_margin    "auto" (default: collide.c's velocity-adaptive margin) or a distance
 *                     in metres in [0, 1e6]: only contacts with gap at most that
 *   ground            absent: no ground; {"height": 0, "material": built-in}
 *   materials         {NAME: {param: value}}; every param optional with the value of
 *                     cd_materialDefault(); NAME "default" is reserved for the built-in
 *                     material, which is always cdScene.material[0]; the scene's materials
 *                     follow in file order. Limits: friction in [0, 10], restitution in (0, 1],
 *                     stiffness > 0, damping >= 0, stiffness_exponent in (0, 10], impact_model
 *                     0, 1 or 2, min_impact_velocity >= 0, friction_regularization > 0,
 *                     pull_off_force >= 0, plasticity_ratio in [0, 1), adhesion_coefficient
 *                     >= 0, adhesion_exponent > 0.
 *   bodies            a non-empty array (a scene without bodies is an error). Each body:
 *     name            default "body<i>" (i its index); unique; 1..63 bytes of valid UTF-8
 *                     without control characters (material names likewise)
 *     shape           required: "sphere" (radius), "cube" (size = edge), "box" (size [a,b,c])
 *     radius, size    in (0, 1e6]; only the one the shape uses
 *     mass | density  exactly one, > 0, unless "fixed": true (then neither)
 *     position        required; orientation [w, x, y, z] default [1, 0, 0, 0]: a norm off 1
 *                     by more than 1e-3 is an error, a smaller deviation is normalized
 *                     silently; velocity, angular_velocity default 0 (a fixed body's must be 0)
 *     material        a name from "materials" or "default"; default the built-in material
 *     hollow          sphere only (a thin shell: inertia 2/3 m r^2; it takes mass, not
 *                     density); fixed: false by default
 *   Every number must be finite (1e400 parses as inf: an error); every vector component
 *   (gravity, position, velocity, angular_velocity) and the ground height lie in [-1e9, 1e9].
 *   Unknown keys and duplicate keys are errors. After cd_sceneFinish every moving body must
 *   have a finite positive mass and inertia (a density of 1e300 is caught there).
 *
 * Memory: cd_sceneLoad installs cJSON hooks that allocate through cd_malloc / cd_free (so an
 * injected failure reaches cJSON too, and *effective, printed by cJSON, is cd_malloc memory).
 * Every path frees what it allocated; on failure scene is left empty (zeroed).
 * Work is O(size of the file + B log B + M log M): body and material names are checked for
 * uniqueness, and material names looked up, through sorted arrays.
 */
#include "scene_json.h"

#include <cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "json_pointer.h"

#define CD_MAX_ERROR_LINES 20
#define CD_NAME_MAX 63       /* bytes, the char[64] of cdMaterial.name / cdBodyDef.name */
#define CD_JSON_MAX_DEPTH 1000
#define CD_NUMBER_MAX_CHARS 63

/* ------------------------------------------------------------------------------------------
 * text helpers: a truncating string builder and the escaping of untrusted bytes */

typedef struct {
  char *s;
  size_t cap, len; /* s holds len bytes + NUL; cap > 0 */
} cdStr;

static void sbPut(cdStr *b, const char *s, size_t n) {
  if (b->len + 1 >= b->cap) return;
  size_t room = b->cap - 1 - b->len;
  if (n > room) n = room;
  memcpy(b->s + b->len, s, n);
  b->len += n;
  b->s[b->len] = '\0';
}

static void sbPuts(cdStr *b, const char *s) { sbPut(b, s, strlen(s)); }

__attribute__((format(printf, 2, 3))) static void sbPrintf(cdStr *b, const char *fmt, ...) {
  char tmp[256];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (n > 0) sbPut(b, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

/* length of the valid UTF-8 sequence at s (at most n bytes), 0 when invalid */
static size_t utf8Len(const unsigned char *s, size_t n) {
  unsigned c = s[0];
  size_t len;
  unsigned min;
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) len = 2, min = 0x80;
  else if (c >= 0xE0 && c <= 0xEF) len = 3, min = 0x800;
  else if (c >= 0xF0 && c <= 0xF4) len = 4, min = 0x10000;
  else return 0;
  if (len > n) return 0;
  unsigned cp = c & (0x3Fu >> (len - 1));
  for (size_t i = 1; i < len; i++) {
    if ((s[i] & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (s[i] & 0x3Fu);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return len;
}

/* appends s[0..n) with control bytes and invalid UTF-8 as \xNN, cut after max bytes ("...") */
static void sbPutSafe(cdStr *b, const char *s, size_t n, size_t max) {
  const unsigned char *u = (const unsigned char *)s;
  size_t i = 0;
  while (i < n) {
    if (i >= max) {
      sbPuts(b, "...");
      return;
    }
    size_t k = u[i] >= 0x20 && u[i] != 0x7F ? utf8Len(u + i, n - i) : 0;
    if (k == 0) {
      sbPrintf(b, "\\x%02X", u[i]);
      k = 1;
    } else {
      sbPut(b, s + i, k);
    }
    i += k;
  }
}

/* a number as JSON would have it: the shortest of %.15g / %.17g that reads back exactly */
static void fmtNumber(double v, char *out, size_t outlen) {
  if (isnan(v)) {
    snprintf(out, outlen, "nan");
    return;
  }
  if (isinf(v)) {
    snprintf(out, outlen, v > 0 ? "inf" : "-inf");
    return;
  }
  snprintf(out, outlen, "%.15g", v);
  if (strtod(out, NULL) != v) snprintf(out, outlen, "%.17g", v);
}

/* a short description of a JSON value for "(got X)" */
static void describe(cdStr *b, const cJSON *v) {
  char num[40];
  if (cJSON_IsNumber(v)) {
    fmtNumber(v->valuedouble, num, sizeof num);
    sbPuts(b, num);
  } else if (cJSON_IsString(v)) {
    sbPuts(b, "\"");
    sbPutSafe(b, v->valuestring, strlen(v->valuestring), 40);
    sbPuts(b, "\"");
  } else if (cJSON_IsTrue(v)) {
    sbPuts(b, "true");
  } else if (cJSON_IsFalse(v)) {
    sbPuts(b, "false");
  } else if (cJSON_IsNull(v)) {
    sbPuts(b, "null");
  } else if (cJSON_IsArray(v)) {
    long n = 0;
    for (const cJSON *c = v->child; c; c = c->next) n++;
    sbPrintf(b, "an array of %ld", n);
  } else {
    sbPuts(b, "an object");
  }
}

/* ------------------------------------------------------------------------------------------
 * the error list */

typedef struct {
  char *buf;  /* caller's err, or NULL */
  size_t cap; /* errlen */
  size_t len;
  int nline;  /* lines written */
  int nmore;  /* errors not written (past the line limit or the buffer) */
} cdErrs;

/* room kept at the end of err for the "N more errors" line */
#define CD_ERR_RESERVE 96

static void errInit(cdErrs *e, char *buf, size_t cap) {
  memset(e, 0, sizeof *e);
  e->buf = cap > 0 ? buf : NULL;
  e->cap = e->buf ? cap : 0;
  if (e->buf) e->buf[0] = '\0';
}

static int errTotal(const cdErrs *e) { return e->nline + e->nmore; }

/* whether the next error will be shown (so its text is worth building) */
static int errShown(const cdErrs *e) { return e->buf && e->nline < CD_MAX_ERROR_LINES; }

static void errAdd(cdErrs *e, const char *line) {
  size_t n = strlen(line);
  size_t limit = e->cap > 2 * CD_ERR_RESERVE ? e->cap - CD_ERR_RESERVE : e->cap;
  if (!errShown(e) || e->len + n + 2 > limit) {
    e->nmore++;
    return;
  }
  memcpy(e->buf + e->len, line, n);
  e->buf[e->len + n] = '\n';
  e->len += n + 1;
  e->buf[e->len] = '\0';
  e->nline++;
}

/* the closing "N more errors" line */
static void errFinish(cdErrs *e, const char *file) {
  if (e->nmore == 0 || !e->buf) return;
  char line[CD_ERR_RESERVE + 64];
  cdStr b = {line, sizeof line, 0};
  line[0] = '\0';
  sbPutSafe(&b, file, strlen(file), 48);
  sbPrintf(&b, ": %d more error%s not shown", e->nmore, e->nmore == 1 ? "" : "s");
  size_t n = strlen(line);
  if (e->len + n + 2 <= e->cap) {
    memcpy(e->buf + e->len, line, n);
    e->buf[e->len + n] = '\n';
    e->len += n + 1;
    e->buf[e->len] = '\0';
  }
}

/* ------------------------------------------------------------------------------------------
 * JSON syntax: the scanner (see the top of the file) */

typedef struct {
  size_t pos;    /* byte offset of the fault */
  char msg[200]; /* what */
} cdSyntaxError;

static int isJsonSpace(unsigned char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

static size_t skipSpace(const char *s, size_t n, size_t p) {
  while (p < n && isJsonSpace((unsigned char)s[p])) p++;
  return p;
}

/* "got X" for the text at p: end of file, a short word, one character, or a byte */
static void describeAt(cdStr *b, const char *s, size_t n, size_t p) {
  if (p >= n) {
    sbPuts(b, "end of file");
    return;
  }
  unsigned char c = (unsigned char)s[p];
  static const char word[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_+-.";
  if (c != 0 && strchr(word, c)) {
    size_t e = p;
    while (e < n && s[e] != 0 && strchr(word, s[e]) && e - p < 16) e++;
    sbPuts(b, "'");
    sbPut(b, s + p, e - p);
    sbPuts(b, e < n && s[e] != 0 && strchr(word, s[e]) ? "...'" : "'");
    return;
  }
  size_t k = c >= 0x20 && c != 0x7F ? utf8Len((const unsigned char *)s + p, n - p) : 0;
  if (k == 0) {
    sbPrintf(b, "byte 0x%02X", c);
  } else {
    sbPuts(b, "'");
    sbPut(b, s + p, k);
    sbPuts(b, "'");
  }
}

__attribute__((format(printf, 5, 6))) static int syntaxFail(cdSyntaxError *err, const char *s, size_t n, size_t p,
                                                             const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err->msg, sizeof err->msg, fmt, ap);
  va_end(ap);
  err->pos = p;
  (void)s;
  (void)n;
  return 0;
}

/* "expected WHAT, got X" at p, with a plainer word for the usual non-JSON habits */
static int syntaxExpected(cdSyntaxError *err, const char *s, size_t n, size_t p, const char *what) {
  if (p + 1 < n && s[p] == '/' && (s[p + 1] == '/' || s[p + 1] == '*'))
    return syntaxFail(err, s, n, p, "comments are not allowed in JSON");
  if (p < n && s[p] == '\'') return syntaxFail(err, s, n, p, "strings and keys must be in double quotes, not '");
  char got[64];
  cdStr b = {got, sizeof got, 0};
  got[0] = '\0';
  describeAt(&b, s, n, p);
  return syntaxFail(err, s, n, p, "expected %s, got %s", what, got);
}

static int hex4(const char *s, unsigned *out) {
  unsigned v = 0;
  for (int i = 0; i < 4; i++) {
    char c = s[i];
    unsigned d;
    if (c >= '0' && c <= '9') d = (unsigned)(c - '0');
    else if (c >= 'a' && c <= 'f') d = (unsigned)(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F') d = (unsigned)(c - 'A' + 10);
    else return 0;
    v = 16 * v + d;
  }
  *out = v;
  return 1;
}

/* a string starting at the quote s[*p]; on success *p is past the closing quote */
static int scanString(const char *s, size_t n, size_t *p, cdSyntaxError *err) {
  size_t open = *p, i = open + 1;
  while (i < n && s[i] != '"') {
    unsigned char c = (unsigned char)s[i];
    if (c == '\n' || c == '\r') return syntaxFail(err, s, n, open, "unterminated string (it runs to the end of the line)");
    if (c < 0x20) return syntaxFail(err, s, n, i, "control character 0x%02X in a string (write it as an escape)", c);
    if (c != '\\') {
      i++;
      continue;
    }
    if (i + 1 >= n) {
      i = n; /* a '\\' as the last byte: the string never ends */
      break;
    }
    char e = s[i + 1];
    if (strchr("bfnrt\"\\/", e) && e != '\0') {
      i += 2;
      continue;
    }
    if (e != 'u') {
      if ((unsigned char)e < 0x20 || (unsigned char)e >= 0x7F)
        return syntaxFail(err, s, n, i, "invalid escape in a string (byte 0x%02X after '\\')", (unsigned char)e);
      return syntaxFail(err, s, n, i, "invalid escape '\\%c' in a string", e);
    }
    unsigned cp, lo;
    if (i + 6 > n || !hex4(s + i + 2, &cp))
      return syntaxFail(err, s, n, i, "'\\u' must be followed by 4 hexadecimal digits");
    if (cp == 0) return syntaxFail(err, s, n, i, "'\\u0000' is not allowed in a string");
    if (cp >= 0xDC00 && cp <= 0xDFFF)
      return syntaxFail(err, s, n, i, "unpaired UTF-16 surrogate '\\u%04X' in a string", cp);
    if (cp >= 0xD800 && cp <= 0xDBFF) {
      if (i + 12 > n || s[i + 6] != '\\' || s[i + 7] != 'u' || !hex4(s + i + 8, &lo) || lo < 0xDC00 || lo > 0xDFFF)
        return syntaxFail(err, s, n, i, "unpaired UTF-16 surrogate '\\u%04X' in a string", cp);
      i += 12;
    } else {
      i += 6;
    }
  }
  if (i >= n) return syntaxFail(err, s, n, open, "unterminated string");
  *p = i + 1;
  return 1;
}

static int isDigit(char c) { return c >= '0' && c <= '9'; }

/* a number at s[*p] ('-' or a digit) in the strict JSON grammar */
static int scanNumber(const char *s, size_t n, size_t *p, cdSyntaxError *err) {
  size_t start = *p, i = start;
  if (i < n && s[i] == '-') i++;
  int ok = 1;
  if (i < n && s[i] == '0') {
    i++;
    if (i < n && isDigit(s[i])) ok = 0; /* leading zero */
  } else if (i < n && isDigit(s[i])) {
    while (i < n && isDigit(s[i])) i++;
  } else {
    ok = 0;
  }
  if (ok && i < n && s[i] == '.') {
    i++;
    if (!(i < n && isDigit(s[i]))) ok = 0;
    while (i < n && isDigit(s[i])) i++;
  }
  if (ok && i < n && (s[i] == 'e' || s[i] == 'E')) {
    i++;
    if (i < n && (s[i] == '+' || s[i] == '-')) i++;
    if (!(i < n && isDigit(s[i]))) ok = 0;
    while (i < n && isDigit(s[i])) i++;
  }
  /* the run of number characters cJSON would take must be exactly this number */
  size_t run = start;
  while (run < n && strchr("0123456789+-eE.", s[run]) && s[run] != '\0') run++;
  if (!ok || run != i) {
    char got[64];
    cdStr b = {got, sizeof got, 0};
    got[0] = '\0';
    describeAt(&b, s, n, start);
    return syntaxFail(err, s, n, start, "invalid number %s", got);
  }
  if (i - start > CD_NUMBER_MAX_CHARS)
    return syntaxFail(err, s, n, start, "number longer than %d characters", CD_NUMBER_MAX_CHARS);
  *p = i;
  return 1;
}

/* checks that s[0..n) is one JSON value (after an optional UTF-8 byte order mark) and
 * nothing but whitespace after it; 1 when it is, else 0 with the first fault in err */
static int scanJson(const char *s, size_t n, cdSyntaxError *err) {
  enum { VALUE, KEY, AFTER } state = VALUE;
  char stack[CD_JSON_MAX_DEPTH]; /* '{' or '[' of each open container */
  int depth = 0;
  int first_key = 0; /* KEY right after '{': '}' is fine there */
  size_t comma = 0;  /* where the last ',' was, for "trailing comma" */
  const void *nul = memchr(s, '\0', n);
  if (nul) return syntaxFail(err, s, n, (size_t)((const char *)nul - s), "NUL byte in the file");
  size_t p = 0;
  /* cJSON skips a BOM only when at least 5 bytes are there; so do we, to agree with it */
  if (n >= 5 && memcmp(s, "\xEF\xBB\xBF", 3) == 0) p = 3;
  p = skipSpace(s, n, p);
  if (p >= n) return syntaxFail(err, s, n, p, "the file is empty (expected a JSON object)");
  for (;;) {
    switch (state) {
    case VALUE: {
      if (p >= n) return syntaxExpected(err, s, n, p, "a value");
      char c = s[p];
      if (c == '{' || c == '[') {
        if (depth >= CD_JSON_MAX_DEPTH)
          return syntaxFail(err, s, n, p, "nesting deeper than %d levels", CD_JSON_MAX_DEPTH);
        stack[depth++] = c;
        p = skipSpace(s, n, p + 1);
        if (p < n && s[p] == (c == '{' ? '}' : ']')) {
          depth--;
          p++;
          state = AFTER;
        } else if (c == '{') {
          state = KEY;
          first_key = 1;
        }
        break;
      }
      if (c == '"') {
        if (!scanString(s, n, &p, err)) return 0;
      } else if (c == '-' || isDigit(c)) {
        if (!scanNumber(s, n, &p, err)) return 0;
      } else if (n - p >= 4 && memcmp(s + p, "true", 4) == 0) {
        p += 4;
      } else if (n - p >= 5 && memcmp(s + p, "false", 5) == 0) {
        p += 5;
      } else if (n - p >= 4 && memcmp(s + p, "null", 4) == 0) {
        p += 4;
      } else {
        return syntaxExpected(err, s, n, p, "a value");
      }
      state = AFTER;
      break;
    }
    case KEY:
      p = skipSpace(s, n, p);
      if (p >= n || s[p] != '"') {
        if (!first_key && p < n && s[p] == '}') return syntaxFail(err, s, n, comma, "trailing comma before '}'");
        return syntaxExpected(err, s, n, p, first_key ? "a key in double quotes or '}'" : "a key in double quotes");
      }
      if (!scanString(s, n, &p, err)) return 0;
      p = skipSpace(s, n, p);
      if (p >= n || s[p] != ':') return syntaxExpected(err, s, n, p, "':' after the key");
      p = skipSpace(s, n, p + 1);
      state = VALUE;
      break;
    case AFTER:
      p = skipSpace(s, n, p);
      if (depth == 0) {
        if (p < n) {
          char got[64];
          cdStr b = {got, sizeof got, 0};
          got[0] = '\0';
          describeAt(&b, s, n, p);
          return syntaxFail(err, s, n, p, "unexpected text after the end of the JSON value, got %s", got);
        }
        return 1;
      }
      if (stack[depth - 1] == '{') {
        if (p < n && s[p] == ',') {
          comma = p;
          p++;
          state = KEY;
          first_key = 0;
        } else if (p < n && s[p] == '}') {
          depth--;
          p++;
        } else {
          return syntaxExpected(err, s, n, p, "',' or '}'");
        }
      } else {
        if (p < n && s[p] == ',') {
          comma = p;
          p = skipSpace(s, n, p + 1);
          if (p < n && s[p] == ']') return syntaxFail(err, s, n, comma, "trailing comma before ']'");
          state = VALUE;
        } else if (p < n && s[p] == ']') {
          depth--;
          p++;
        } else {
          return syntaxExpected(err, s, n, p, "',' or ']'");
        }
      }
      break;
    }
  }
}

/* line and column (1-based; the column counts bytes) of offset pos */
static void lineCol(const char *s, size_t pos, long *line, long *col) {
  long l = 1;
  size_t start = 0;
  for (size_t i = 0; i < pos; i++)
    if (s[i] == '\n') {
      l++;
      start = i + 1;
    }
  *line = l;
  *col = (long)(pos - start) + 1;
}

/* parses text after the scanner: NULL with *status 2 (syntax) or -1 (memory) */
static cJSON *parseText(const char *text, size_t len, cdSyntaxError *serr, int *status) {
  if (!scanJson(text, len, serr)) {
    *status = 2;
    return NULL;
  }
  const char *end = NULL;
  cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
  *status = root ? 0 : -1;
  return root;
}

/* ------------------------------------------------------------------------------------------
 * validation context: the file name, the errors, the JSON Pointer of the current place */

typedef struct {
  const char *file;
  cdErrs *e;
  char path[512];
  size_t plen;
} cdCtx;

static size_t pathPush(cdCtx *c, const char *key) {
  size_t saved = c->plen;
  char esc[160];
  cd_jsonPointerEscape(key, esc, sizeof esc);
  cdStr b = {c->path, sizeof c->path, c->plen};
  sbPuts(&b, "/");
  sbPutSafe(&b, esc, strlen(esc), 64);
  c->plen = b.len;
  return saved;
}

static size_t pathPushIndex(cdCtx *c, long i) {
  size_t saved = c->plen;
  cdStr b = {c->path, sizeof c->path, c->plen};
  sbPrintf(&b, "/%ld", i);
  c->plen = b.len;
  return saved;
}

static void pathPop(cdCtx *c, size_t saved) {
  c->plen = saved;
  c->path[saved] = '\0';
}

/* one value error at the current place: "FILE: PATH: what (got X)"; got_v or got_s (a
 * string, printed quoted) may give X */
__attribute__((format(printf, 4, 5))) static void bad(cdCtx *c, const cJSON *got_v, const char *got_s, const char *fmt,
                                                      ...) {
  if (!errShown(c->e)) {
    c->e->nmore++;
    return;
  }
  char line[1024], what[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  cdStr b = {line, sizeof line, 0};
  line[0] = '\0';
  sbPutSafe(&b, c->file, strlen(c->file), 200);
  sbPuts(&b, ": ");
  if (c->plen > 0) {
    sbPuts(&b, c->path);
    sbPuts(&b, ": ");
  }
  sbPuts(&b, what);
  if (got_v || got_s) {
    sbPuts(&b, " (got ");
    if (got_v) {
      describe(&b, got_v);
    } else {
      sbPuts(&b, "\"");
      sbPutSafe(&b, got_s, strlen(got_s), 40);
      sbPuts(&b, "\"");
    }
    sbPuts(&b, ")");
  }
  errAdd(c->e, line);
}

/* ------------------------------------------------------------------------------------------
 * typed values */

typedef struct {
  double lo, hi;
  char lo_kind, hi_kind; /* 0 none; 1 strict (> lo, < hi); 2 inclusive (>= lo, <= hi) */
} cdRange;

static const cdRange kAny = {0, 0, 0, 0};
static const cdRange kPositive = {0, 0, 1, 0};
static const cdRange kNonNegative = {0, 0, 2, 0};
static const cdRange kSize = {0, 1e6, 1, 2};
static const cdRange kCoordinate = {-1e9, 1e9, 2, 2};

static int inRange(cdCtx *c, const cJSON *v, const cdRange *r) {
  double x = v->valuedouble;
  char bound[40];
  if ((r->lo_kind == 1 && !(x > r->lo)) || (r->lo_kind == 2 && !(x >= r->lo))) {
    fmtNumber(r->lo, bound, sizeof bound);
    bad(c, v, NULL, "must be %s %s", r->lo_kind == 1 ? ">" : ">=", bound);
    return 0;
  }
  if ((r->hi_kind == 1 && !(x < r->hi)) || (r->hi_kind == 2 && !(x <= r->hi))) {
    fmtNumber(r->hi, bound, sizeof bound);
    bad(c, v, NULL, "must be %s %s", r->hi_kind == 1 ? "<" : "<=", bound);
    return 0;
  }
  return 1;
}

/* v at the current place: a finite number in r */
static int numberValue(cdCtx *c, const cJSON *v, const cdRange *r, double *out) {
  if (!cJSON_IsNumber(v)) {
    bad(c, v, NULL, "must be a number");
    return 0;
  }
  if (!isfinite(v->valuedouble)) {
    bad(c, v, NULL, "must be a finite number");
    return 0;
  }
  if (!inRange(c, v, r)) return 0;
  *out = v->valuedouble;
  return 1;
}

/* member v (may be NULL: *out keeps its default) under key: a finite number in r */
static int numberAt(cdCtx *c, const cJSON *v, const char *key, const cdRange *r, double *out) {
  if (!v) return 1;
  size_t s = pathPush(c, key);
  int ok = numberValue(c, v, r, out);
  pathPop(c, s);
  return ok;
}

/* an integer (a number with no fraction) in r */
static int integerAt(cdCtx *c, const cJSON *v, const char *key, const cdRange *r, double *out) {
  if (!v) return 1;
  size_t s = pathPush(c, key);
  double x = 0;
  int ok = numberValue(c, v, &kAny, &x);
  if (ok && x != floor(x)) {
    bad(c, v, NULL, "must be an integer");
    ok = 0;
  }
  if (ok) ok = inRange(c, v, r);
  if (ok) *out = x;
  pathPop(c, s);
  return ok;
}

/* an array of n finite numbers, each in r */
static int vectorAt(cdCtx *c, const cJSON *v, const char *key, int n, const cdRange *r, double *out) {
  if (!v) return 1;
  size_t s = pathPush(c, key);
  int count = 0, ok = 1;
  if (cJSON_IsArray(v))
    for (const cJSON *e = v->child; e; e = e->next) count++;
  if (!cJSON_IsArray(v) || count != n) {
    bad(c, v, NULL, "must be an array of %d numbers", n);
    pathPop(c, s);
    return 0;
  }
  double tmp[4];
  int i = 0;
  for (const cJSON *e = v->child; e; e = e->next, i++) {
    size_t s2 = pathPushIndex(c, i);
    if (!numberValue(c, e, r, &tmp[i])) ok = 0;
    pathPop(c, s2);
  }
  if (ok) memcpy(out, tmp, (size_t)n * sizeof *out);
  pathPop(c, s);
  return ok;
}

static int boolAt(cdCtx *c, const cJSON *v, const char *key, int *out) {
  if (!v) return 1;
  if (!cJSON_IsBool(v)) {
    size_t s = pathPush(c, key);
    bad(c, v, NULL, "must be true or false");
    pathPop(c, s);
    return 0;
  }
  *out = cJSON_IsTrue(v);
  return 1;
}

static int stringAt(cdCtx *c, const cJSON *v, const char *key, const char **out) {
  if (!v) return 1;
  if (!cJSON_IsString(v)) {
    size_t s = pathPush(c, key);
    bad(c, v, NULL, "must be a string");
    pathPop(c, s);
    return 0;
  }
  *out = v->valuestring;
  return 1;
}

/* a body or material name at the current place */
static int nameValid(cdCtx *c, const char *name, const char *what) {
  size_t n = strlen(name);
  if (n == 0) {
    bad(c, NULL, NULL, "%s must not be empty", what);
    return 0;
  }
  if (n > CD_NAME_MAX) {
    bad(c, NULL, name, "%s must be at most %d bytes", what, CD_NAME_MAX);
    return 0;
  }
  const unsigned char *u = (const unsigned char *)name;
  for (size_t i = 0; i < n;) {
    if (u[i] < 0x20 || u[i] == 0x7F) {
      bad(c, NULL, name, "%s must not hold control characters", what);
      return 0;
    }
    size_t k = utf8Len(u + i, n - i);
    if (k == 0) {
      bad(c, NULL, name, "%s must be valid UTF-8", what);
      return 0;
    }
    i += k;
  }
  return 1;
}

/* edit distance of two short strings (for "did you mean"), capped at 9 */
static int editDistance(const char *a, const char *b) {
  size_t na = strlen(a), nb = strlen(b);
  if (na > 31 || nb > 31) return 9;
  int d[32][32];
  for (size_t i = 0; i <= na; i++) d[i][0] = (int)i;
  for (size_t j = 0; j <= nb; j++) d[0][j] = (int)j;
  for (size_t i = 1; i <= na; i++)
    for (size_t j = 1; j <= nb; j++) {
      int sub = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
      int del = d[i - 1][j] + 1, ins = d[i][j - 1] + 1;
      d[i][j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
    }
  return d[na][nb];
}

/* the members of object obj that are in keys[0..nkey): out[k] is the member for keys[k] or
 * NULL; unknown and repeated keys are errors */
static void members(cdCtx *c, const cJSON *obj, const char *const *keys, int nkey, const cJSON **out) {
  for (int k = 0; k < nkey; k++) out[k] = NULL;
  for (const cJSON *m = obj->child; m; m = m->next) {
    int k = 0;
    while (k < nkey && strcmp(m->string, keys[k]) != 0) k++;
    size_t s = pathPush(c, m->string);
    if (k == nkey) {
      int best = 3, bk = -1;
      for (int j = 0; j < nkey; j++) {
        int dist = editDistance(m->string, keys[j]);
        if (dist < best) best = dist, bk = j;
      }
      if (bk >= 0)
        bad(c, NULL, NULL, "unknown key (did you mean \"%s\"?)", keys[bk]);
      else
        bad(c, NULL, NULL, "unknown key");
    } else if (out[k]) {
      bad(c, NULL, NULL, "duplicate key");
    } else {
      out[k] = m;
    }
    pathPop(c, s);
  }
}

/* ------------------------------------------------------------------------------------------
 * materials */

typedef struct {
  const char *name;
  int index;
} cdNameRef;

static int byNameThenIndex(const void *a, const void *b) {
  const cdNameRef *x = a, *y = b;
  int r = strcmp(x->name, y->name);
  return r ? r : (x->index > y->index) - (x->index < y->index);
}

static int byName(const void *key, const void *elem) {
  return strcmp((const char *)key, ((const cdNameRef *)elem)->name);
}

typedef struct {
  const char *key;
  size_t offset; /* of the double in cdMaterial (impact_model: handled apart) */
  cdRange range;
} cdParamSpec;

static const cdParamSpec kParams[] = {
    {"friction", offsetof(cdMaterial, friction), {0, 10, 2, 2}},
    {"restitution", offsetof(cdMaterial, restitution), {0, 1, 1, 2}},
    {"stiffness", offsetof(cdMaterial, stiffness), {0, 0, 1, 0}},
    {"damping", offsetof(cdMaterial, damping), {0, 0, 2, 0}},
    {"stiffness_exponent", offsetof(cdMaterial, stiffness_exponent), {0, 10, 1, 2}},
    {"impact_model", offsetof(cdMaterial, impact_model), {0, 0, 0, 0}}, /* an int: 0, 1 or 2 */
    {"min_impact_velocity", offsetof(cdMaterial, min_impact_velocity), {0, 0, 2, 0}},
    {"friction_regularization", offsetof(cdMaterial, friction_regularization), {0, 0, 1, 0}},
    {"pull_off_force", offsetof(cdMaterial, pull_off_force), {0, 0, 2, 0}},
    {"plasticity_ratio", offsetof(cdMaterial, plasticity_ratio), {0, 1, 2, 1}},
    {"adhesion_coefficient", offsetof(cdMaterial, adhesion_coefficient), {0, 0, 2, 0}},
    {"adhesion_exponent", offsetof(cdMaterial, adhesion_exponent), {0, 0, 1, 0}},
};
#define CD_NPARAM ((int)(sizeof kParams / sizeof kParams[0]))

static void materialParams(cdCtx *c, const cJSON *obj, cdMaterial *m) {
  const char *keys[CD_NPARAM];
  const cJSON *v[CD_NPARAM];
  for (int k = 0; k < CD_NPARAM; k++) keys[k] = kParams[k].key;
  members(c, obj, keys, CD_NPARAM, v);
  for (int k = 0; k < CD_NPARAM; k++) {
    if (!v[k]) continue;
    double x = 0;
    if (strcmp(kParams[k].key, "impact_model") == 0) {
      if (!integerAt(c, v[k], kParams[k].key, &kAny, &x)) continue;
      if (x == 0 || x == 1 || x == 2) {
        m->impact_model = (int)x;
      } else {
        size_t s = pathPush(c, kParams[k].key);
        bad(c, v[k], NULL, "must be 0, 1 or 2");
        pathPop(c, s);
      }
    } else if (numberAt(c, v[k], kParams[k].key, &kParams[k].range, &x)) {
      memcpy((char *)m + kParams[k].offset, &x, sizeof x);
    }
  }
}

/* the material index of name, or -1 */
static int materialFind(const cdNameRef *sorted, int n, const char *name) {
  if (strcmp(name, "default") == 0) return 0;
  const cdNameRef *r = n > 0 ? bsearch(name, sorted, (size_t)n, sizeof *sorted, byName) : NULL;
  return r ? r->index : -1;
}

/* a "material" member: its index (the built-in 0 when v is NULL), -1 on error */
static int materialRef(cdCtx *c, const cJSON *v, const cdNameRef *sorted, int n) {
  const char *name = NULL;
  if (!v) return 0;
  if (!stringAt(c, v, "material", &name)) return -1;
  int k = materialFind(sorted, n, name);
  if (k < 0) {
    size_t s = pathPush(c, "material");
    bad(c, v, NULL, "unknown material");
    pathPop(c, s);
  }
  return k;
}

/* ------------------------------------------------------------------------------------------
 * bodies */

enum {
  B_NAME, B_SHAPE, B_RADIUS, B_SIZE, B_MASS, B_DENSITY, B_POSITION, B_ORIENTATION, B_VELOCITY,
  B_ANGULAR_VELOCITY, B_MATERIAL, B_HOLLOW, B_FIXED, B_NKEY
};
static const char *const kBodyKeys[B_NKEY] = {"name",     "shape",    "radius",   "size",
                                              "mass",     "density",  "position", "orientation",
                                              "velocity", "angular_velocity", "material", "hollow", "fixed"};

static void missing(cdCtx *c, const char *key) { bad(c, NULL, NULL, "missing required key \"%s\"", key); }

/* fills b from body object obj at the current place; *named says whether a name was given */
static void body(cdCtx *c, const cJSON *obj, long index, cdBodyDef *b, int *named, const cdNameRef *mats, int nmat) {
  const cJSON *v[B_NKEY];
  members(c, obj, kBodyKeys, B_NKEY, v);

  /* name */
  const char *name = NULL;
  *named = 0;
  snprintf(b->name, sizeof b->name, "body%ld", index);
  if (v[B_NAME] && stringAt(c, v[B_NAME], "name", &name)) {
    size_t s = pathPush(c, "name");
    if (nameValid(c, name, "a name")) {
      memcpy(b->name, name, strlen(name) + 1);
      *named = 1;
    } else {
      b->name[0] = '\0'; /* left out of the uniqueness check */
    }
    pathPop(c, s);
  }

  boolAt(c, v[B_FIXED], "fixed", &b->fixed);
  boolAt(c, v[B_HOLLOW], "hollow", &b->hollow);

  /* shape and its dimensions */
  const char *shape = NULL;
  int kind = -1; /* 0 sphere, 1 cube, 2 box */
  if (!v[B_SHAPE]) {
    missing(c, "shape");
  } else if (stringAt(c, v[B_SHAPE], "shape", &shape)) {
    if (strcmp(shape, "sphere") == 0) kind = 0;
    else if (strcmp(shape, "cube") == 0) kind = 1;
    else if (strcmp(shape, "box") == 0) kind = 2;
    else {
      size_t s = pathPush(c, "shape");
      bad(c, v[B_SHAPE], NULL, "must be \"sphere\", \"cube\" or \"box\"");
      pathPop(c, s);
    }
  }
  if (kind == 0) {
    b->shape = CD_SPHERE;
    if (!v[B_RADIUS]) missing(c, "radius");
    numberAt(c, v[B_RADIUS], "radius", &kSize, &b->radius);
    if (v[B_SIZE]) {
      size_t s = pathPush(c, "size");
      bad(c, NULL, NULL, "not allowed for a sphere (a sphere has a radius)");
      pathPop(c, s);
    }
  } else if (kind == 1 || kind == 2) {
    b->shape = CD_BOX;
    if (!v[B_SIZE]) {
      missing(c, "size");
    } else if (kind == 1) {
      double edge = 0;
      if (numberAt(c, v[B_SIZE], "size", &kSize, &edge)) b->half[0] = b->half[1] = b->half[2] = 0.5 * edge;
    } else {
      double abc[3];
      if (vectorAt(c, v[B_SIZE], "size", 3, &kSize, abc))
        for (int k = 0; k < 3; k++) b->half[k] = 0.5 * abc[k];
    }
    if (v[B_RADIUS]) {
      size_t s = pathPush(c, "radius");
      bad(c, NULL, NULL, "not allowed for a %s (it has a size)", kind == 1 ? "cube" : "box");
      pathPop(c, s);
    }
    if (b->hollow) {
      size_t s = pathPush(c, "hollow");
      bad(c, NULL, NULL, "only a sphere may be hollow");
      pathPop(c, s);
    }
  }

  /* mass or density, neither when fixed */
  if (b->fixed) {
    for (int k = B_MASS; k <= B_DENSITY; k++)
      if (v[k]) {
        size_t s = pathPush(c, kBodyKeys[k]);
        bad(c, NULL, NULL, "a fixed body has no %s", kBodyKeys[k]);
        pathPop(c, s);
      }
  } else if (v[B_MASS] && v[B_DENSITY]) {
    bad(c, NULL, NULL, "give \"mass\" or \"density\", not both");
  } else if (!v[B_MASS] && !v[B_DENSITY]) {
    bad(c, NULL, NULL, "missing \"mass\" or \"density\" (or \"fixed\": true)");
  } else if (v[B_DENSITY] && b->hollow) {
    /* a thin shell has no volume for a density to fill */
    size_t s = pathPush(c, "density");
    bad(c, NULL, NULL, "a hollow sphere (a thin shell) needs \"mass\", not \"density\"");
    pathPop(c, s);
  } else {
    numberAt(c, v[B_MASS], "mass", &kPositive, &b->mass);
    numberAt(c, v[B_DENSITY], "density", &kPositive, &b->density);
  }

  /* placement and motion */
  if (!v[B_POSITION]) missing(c, "position");
  vectorAt(c, v[B_POSITION], "position", 3, &kCoordinate, b->position);
  b->orientation[0] = 1;
  double q[4];
  if (v[B_ORIENTATION] && vectorAt(c, v[B_ORIENTATION], "orientation", 4, &kAny, q)) {
    double norm = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    if (!(fabs(norm - 1) <= 1e-3)) {
      char nb[40];
      fmtNumber(norm, nb, sizeof nb);
      size_t s = pathPush(c, "orientation");
      bad(c, NULL, NULL, "must be a unit quaternion [w, x, y, z] (got norm %s)", nb);
      pathPop(c, s);
    } else {
      for (int k = 0; k < 4; k++) b->orientation[k] = q[k] / norm;
    }
  }
  vectorAt(c, v[B_VELOCITY], "velocity", 3, &kCoordinate, b->velocity);
  vectorAt(c, v[B_ANGULAR_VELOCITY], "angular_velocity", 3, &kCoordinate, b->angular_velocity);
  if (b->fixed)
    for (int k = B_VELOCITY; k <= B_ANGULAR_VELOCITY; k++) {
      const double *w = k == B_VELOCITY ? b->velocity : b->angular_velocity;
      if (v[k] && (w[0] != 0 || w[1] != 0 || w[2] != 0)) {
        size_t s = pathPush(c, kBodyKeys[k]);
        bad(c, NULL, NULL, "must be [0, 0, 0]: a fixed body never moves");
        pathPop(c, s);
      }
    }

  int m = materialRef(c, v[B_MATERIAL], mats, nmat);
  b->material = m > 0 ? m : 0;
}

/* ------------------------------------------------------------------------------------------
 * the scene */

enum { T_MODEL, T_GRAVITY, T_DT, T_DURATION, T_STEPS, T_MARGIN, T_GROUND, T_MATERIALS, T_BODIES, T_NKEY };
static const char *const kTopKeys[T_NKEY] = {"model", "gravity", "dt",     "duration",  "steps",
                                             "contact_margin", "ground", "materials", "bodies"};

typedef struct {
  cdNameRef *mat_sorted;  /* (nmat) scene materials by name */
  cdNameRef *body_sorted; /* (nbody) bodies by name */
  char *named;            /* (nbody) 1 when the body gave its name */
} cdScratch;

static void scratchFree(cdScratch *w) {
  cd_free(w->mat_sorted);
  cd_free(w->body_sorted);
  cd_free(w->named);
  memset(w, 0, sizeof *w);
}

/* "contact_margin" (v may be NULL): "auto", or a distance in metres */
static void contactMargin(cdCtx *c, const cJSON *v, cdScene *scene) {
  static const cdRange kMargin = {0, 1e6, 2, 2};
  if (!v || (cJSON_IsString(v) && strcmp(v->valuestring, "auto") == 0)) return;
  size_t s = pathPush(c, "contact_margin");
  if (!cJSON_IsNumber(v))
    bad(c, v, NULL, "must be \"auto\" or a distance in metres >= 0");
  else if (numberValue(c, v, &kMargin, &scene->contact_margin))
    scene->contact_margin_given = 1;
  pathPop(c, s);
}

/* validates root and fills scene; 0, 2 (errors reported) or -1 (memory) */
static int validate(cdCtx *c, const cJSON *root, cdScene *scene, cdScratch *w) {
  if (!cJSON_IsObject(root)) {
    bad(c, root, NULL, "the scene must be a JSON object");
    return 2;
  }
  const cJSON *v[T_NKEY];
  members(c, root, kTopKeys, T_NKEY, v);

  /* model */
  snprintf(scene->model, sizeof scene->model, "lcp");
  const char *model = NULL;
  if (v[T_MODEL] && stringAt(c, v[T_MODEL], "model", &model)) {
    if (strcmp(model, "lcp") == 0 || strcmp(model, "ccp") == 0 || strcmp(model, "ncp") == 0 ||
        strcmp(model, "penalty") == 0) {
      snprintf(scene->model, sizeof scene->model, "%s", model);
    } else {
      size_t s = pathPush(c, "model");
      bad(c, v[T_MODEL], NULL, "must be \"lcp\", \"ccp\", \"ncp\" or \"penalty\"");
      pathPop(c, s);
    }
  }

  /* gravity, time */
  scene->gravity[0] = scene->gravity[1] = 0;
  scene->gravity[2] = -9.81;
  vectorAt(c, v[T_GRAVITY], "gravity", 3, &kCoordinate, scene->gravity);
  static const cdRange kDt = {0, 10, 1, 2}, kSteps = {0, 1e9, 2, 2};
  scene->dt = 0.01;
  int dt_ok = numberAt(c, v[T_DT], "dt", &kDt, &scene->dt);
  if (v[T_DURATION] && v[T_STEPS]) {
    size_t s = pathPush(c, "steps");
    bad(c, NULL, NULL, "give \"duration\" or \"steps\", not both");
    pathPop(c, s);
  } else if (v[T_STEPS]) {
    double n = 0;
    if (integerAt(c, v[T_STEPS], "steps", &kSteps, &n)) scene->nstep = (long)n;
  } else {
    double duration = 1.0;
    if (numberAt(c, v[T_DURATION], "duration", &kNonNegative, &duration) && dt_ok) {
      double steps = cd_sceneStepCount(duration, scene->dt);
      if (!(steps <= 1e9)) {
        size_t s = pathPush(c, "duration");
        char nb[40];
        fmtNumber(steps, nb, sizeof nb);
        bad(c, NULL, NULL, "must be at most 1e9 steps of dt (got %s steps)", nb);
        pathPop(c, s);
      } else {
        scene->nstep = (long)steps;
      }
    }
  }

  contactMargin(c, v[T_MARGIN], scene);

  /* materials: index 0 is the built-in one */
  int nmat = 0;
  const cJSON *mats = v[T_MATERIALS];
  if (mats && !cJSON_IsObject(mats)) {
    size_t s = pathPush(c, "materials");
    bad(c, mats, NULL, "must be an object of materials by name");
    pathPop(c, s);
    mats = NULL;
  }
  if (mats)
    for (const cJSON *m = mats->child; m; m = m->next) nmat++;
  scene->material = cd_calloc((size_t)nmat + 1, sizeof *scene->material);
  w->mat_sorted = cd_calloc((size_t)nmat + 1, sizeof *w->mat_sorted);
  if (!scene->material || !w->mat_sorted) return -1;
  scene->nmaterial = nmat + 1;
  scene->material[0] = cd_materialDefault();
  int k = 0, nsorted = 0;
  if (mats) {
    size_t s0 = pathPush(c, "materials");
    for (const cJSON *m = mats->child; m; m = m->next, k++) {
      cdMaterial *mat = &scene->material[k + 1];
      *mat = cd_materialDefault();
      size_t s = pathPush(c, m->string);
      int ok = nameValid(c, m->string, "a material name");
      if (ok && strcmp(m->string, "default") == 0) {
        bad(c, NULL, NULL, "the name \"default\" is reserved for the built-in material");
        ok = 0;
      }
      if (ok) {
        memcpy(mat->name, m->string, strlen(m->string) + 1);
        w->mat_sorted[nsorted++] = (cdNameRef){mat->name, k + 1};
      }
      if (!cJSON_IsObject(m))
        bad(c, m, NULL, "a material must be an object of parameters");
      else
        materialParams(c, m, mat);
      pathPop(c, s);
    }
    qsort(w->mat_sorted, (size_t)nsorted, sizeof *w->mat_sorted, byNameThenIndex);
    for (int i = 1; i < nsorted; i++)
      if (strcmp(w->mat_sorted[i].name, w->mat_sorted[i - 1].name) == 0) {
        size_t s = pathPush(c, w->mat_sorted[i].name);
        bad(c, NULL, NULL, "duplicate key");
        pathPop(c, s);
      }
    pathPop(c, s0);
  }

  /* ground */
  const cJSON *g = v[T_GROUND];
  if (g) {
    size_t s = pathPush(c, "ground");
    if (!cJSON_IsObject(g)) {
      bad(c, g, NULL, "must be an object {\"height\": ..., \"material\": ...}");
    } else {
      static const char *const kGroundKeys[] = {"height", "material"};
      const cJSON *gv[2];
      members(c, g, kGroundKeys, 2, gv);
      scene->has_ground = 1;
      numberAt(c, gv[0], "height", &kCoordinate, &scene->ground_height);
      int m = materialRef(c, gv[1], w->mat_sorted, nsorted);
      scene->ground_material = m > 0 ? m : 0;
    }
    pathPop(c, s);
  }

  /* bodies */
  const cJSON *bodies = v[T_BODIES];
  if (!bodies) {
    missing(c, "bodies");
    return 2;
  }
  size_t sb = pathPush(c, "bodies");
  long nbody = 0;
  if (cJSON_IsArray(bodies))
    for (const cJSON *b = bodies->child; b; b = b->next) nbody++;
  if (!cJSON_IsArray(bodies) || nbody == 0) {
    bad(c, bodies, NULL, "must be a non-empty array of bodies");
    pathPop(c, sb);
    return 2;
  }
  if (nbody > 100000000) {
    bad(c, NULL, NULL, "more than 1e8 bodies");
    pathPop(c, sb);
    return 2;
  }
  scene->body = cd_calloc((size_t)nbody, sizeof *scene->body);
  w->body_sorted = cd_calloc((size_t)nbody, sizeof *w->body_sorted);
  w->named = cd_calloc((size_t)nbody, 1);
  if (!scene->body || !w->body_sorted || !w->named) {
    pathPop(c, sb);
    return -1;
  }
  scene->nbody = (int)nbody;
  long i = 0;
  int nnamed = 0;
  for (const cJSON *b = bodies->child; b; b = b->next, i++) {
    size_t s = pathPushIndex(c, i);
    if (!cJSON_IsObject(b)) {
      bad(c, b, NULL, "a body must be an object");
    } else {
      int named = 0;
      body(c, b, i, &scene->body[i], &named, w->mat_sorted, nsorted);
      w->named[i] = (char)named;
    }
    if (scene->body[i].name[0]) w->body_sorted[nnamed++] = (cdNameRef){scene->body[i].name, (int)i};
    pathPop(c, s);
  }

  /* unique names: after a sort, equal names are neighbours */
  qsort(w->body_sorted, (size_t)nnamed, sizeof *w->body_sorted, byNameThenIndex);
  for (int j = 1; j < nnamed; j++) {
    const cdNameRef *r = &w->body_sorted[j], *first = &w->body_sorted[j];
    if (strcmp(r->name, w->body_sorted[j - 1].name) != 0) continue;
    while (first > w->body_sorted && strcmp(first[-1].name, r->name) == 0) first--;
    size_t s = pathPushIndex(c, r->index);
    if (w->named[r->index]) {
      size_t s2 = pathPush(c, "name");
      bad(c, NULL, r->name, "duplicate body name, first at /bodies/%d", first->index);
      pathPop(c, s2);
    } else {
      bad(c, NULL, r->name, "its default name is taken by /bodies/%d", first->index);
    }
    pathPop(c, s);
  }
  pathPop(c, sb);
  return errTotal(c->e) ? 2 : 0;
}

/* after cd_sceneFinish: derived masses and inertias must be usable numbers */
static int derivedValid(cdCtx *c, const cdScene *scene) {
  size_t sb = pathPush(c, "bodies");
  for (int i = 0; i < scene->nbody; i++) {
    const cdBodyDef *b = &scene->body[i];
    if (b->fixed) continue;
    int ok = isfinite(b->mass) && b->mass > 0;
    for (int k = 0; k < 3; k++) ok = ok && isfinite(b->inertia[k]) && b->inertia[k] > 0;
    if (!ok) {
      char mb[40];
      fmtNumber(b->mass, mb, sizeof mb);
      size_t s = pathPushIndex(c, i);
      bad(c, NULL, NULL, "mass and inertia must be finite and > 0 (got mass %s)", mb);
      pathPop(c, s);
    }
  }
  pathPop(c, sb);
  return errTotal(c->e) ? 2 : 0;
}

/* ------------------------------------------------------------------------------------------
 * files and overrides */

/* the whole file in a NUL-terminated cd_malloc buffer; 0, 2 (message in err) or -1 */
static int readFile(const char *path, cdErrs *e, char **text, size_t *len) {
  *text = NULL;
  *len = 0;
  FILE *f = fopen(path, "rb");
  if (!f) {
    int code = errno;
    char line[512];
    cdStr b = {line, sizeof line, 0};
    line[0] = '\0';
    sbPutSafe(&b, path, strlen(path), 200);
    sbPrintf(&b, ": cannot open: %s", strerror(code));
    errAdd(e, line);
    return 2;
  }
  size_t cap = 65536, n = 0;
  char *buf = cd_malloc(cap);
  if (!buf) {
    fclose(f);
    return -1;
  }
  for (;;) {
    if (n + 1 >= cap) {
      if (cap > ((size_t)-1) / 4) {
        errno = EFBIG;
        break;
      }
      char *nb = cd_realloc(buf, 2 * cap);
      if (!nb) {
        cd_free(buf);
        fclose(f);
        return -1;
      }
      buf = nb;
      cap *= 2;
    }
    errno = 0;
    size_t got = fread(buf + n, 1, cap - 1 - n, f);
    n += got;
    if (got == 0) break;
  }
  int failed = ferror(f) || errno == EFBIG;
  int code = errno;
  fclose(f);
  if (failed) {
    cd_free(buf);
    char line[512];
    cdStr b = {line, sizeof line, 0};
    line[0] = '\0';
    sbPutSafe(&b, path, strlen(path), 200);
    sbPrintf(&b, ": cannot read: %s", strerror(code ? code : EIO));
    errAdd(e, line);
    return 2;
  }
  buf[n] = '\0';
  *text = buf;
  *len = n;
  return 0;
}

/* one message line about an override: "--set POINTER=JSON: what" */
__attribute__((format(printf, 3, 4))) static void badSet(cdErrs *e, const cdSceneSet *set, const char *fmt, ...) {
  if (!errShown(e)) {
    e->nmore++;
    return;
  }
  char line[1024], what[600];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  cdStr b = {line, sizeof line, 0};
  line[0] = '\0';
  const char *p = set->pointer ? set->pointer : "", *j = set->json ? set->json : "";
  sbPuts(&b, "--set ");
  sbPutSafe(&b, p, strlen(p), 200);
  sbPuts(&b, "=");
  sbPutSafe(&b, j, strlen(j), 60);
  sbPuts(&b, ": ");
  sbPuts(&b, what);
  errAdd(e, line);
}

/* applies one override to *root; 0, 2 (message in e) or -1 */
static int applySet(cJSON **root, const cdSceneSet *set, const char *file, cdErrs *e) {
  if (!set->pointer || !set->json) {
    badSet(e, set, "needs POINTER=JSON");
    return 2;
  }
  cdSyntaxError serr;
  int st = 0;
  cJSON *value = parseText(set->json, strlen(set->json), &serr, &st);
  if (!value) {
    if (st == 2) badSet(e, set, "invalid JSON value");
    return st;
  }
  size_t fail = 0;
  cdJsonPointerStatus r = cd_jsonPointerSet(root, set->pointer, value, &fail);
  if (r == CD_JP_OK) return 0;
  cJSON_Delete(value);
  if (r == CD_JP_NOMEM) return -1;

  /* the failing prefix and the file name, both untrusted, made printable */
  char where[300], fname[300];
  cdStr bw = {where, sizeof where, 0}, bf = {fname, sizeof fname, 0};
  where[0] = fname[0] = '\0';
  sbPutSafe(&bw, set->pointer, fail, 200);
  sbPutSafe(&bf, file, strlen(file), 200);
  if (r == CD_JP_SYNTAX) {
    if (set->pointer[0] != '/')
      badSet(e, set, "invalid pointer: it must be empty or start with '/'");
    else
      badSet(e, set, "invalid pointer: '~' must be followed by 0 or 1");
  } else if (r == CD_JP_MISSING) {
    badSet(e, set, "%s does not exist in %s", where, fname);
  } else if (fail == 0) {
    badSet(e, set, "the scene in %s is not an object or array", fname);
  } else {
    badSet(e, set, "%s is not an object or array in %s", where, fname);
  }
  return 2;
}

/* ------------------------------------------------------------------------------------------ */

int cd_sceneLoad(const char *path, const char *text, const cdSceneSet *sets, int nset, cdScene *scene,
                 char **effective, char *err, size_t errlen) {
  cdErrs e;
  errInit(&e, err, errlen);
  memset(scene, 0, sizeof *scene);
  if (effective) *effective = NULL;
  const char *file = path ? path : "scene";
  if (!sets) nset = 0;

  /* cJSON allocates through cd_malloc from here on (see the top of the file) */
  cJSON_Hooks hooks = {cd_malloc, cd_free};
  cJSON_InitHooks(&hooks);

  char *owned = NULL;
  size_t len = 0;
  int status = 0;
  if (text) {
    len = strlen(text);
  } else if (path) {
    status = readFile(path, &e, &owned, &len);
    text = owned;
  } else {
    errAdd(&e, "scene: no file and no text given");
    status = 2;
  }

  cJSON *root = NULL;
  cdCtx ctx;
  memset(&ctx, 0, sizeof ctx);
  ctx.file = file;
  ctx.e = &e;
  cdScratch w;
  memset(&w, 0, sizeof w);

  if (status == 0) {
    cdSyntaxError serr;
    root = parseText(text, len, &serr, &status);
    if (status == 2) {
      long line, col;
      lineCol(text, serr.pos, &line, &col);
      char msg[512];
      cdStr b = {msg, sizeof msg, 0};
      msg[0] = '\0';
      sbPutSafe(&b, file, strlen(file), 200);
      sbPrintf(&b, ":%ld:%ld: ", line, col);
      sbPuts(&b, serr.msg);
      errAdd(&e, msg);
    }
  }
  cd_free(owned);

  /* overrides: all of them are tried, so that each bad one is reported */
  for (int i = 0; status == 0 && i < nset; i++) {
    int r = applySet(&root, &sets[i], file, &e);
    if (r == -1) status = -1;
  }
  if (status == 0 && errTotal(&e)) status = 2;

  if (status == 0) status = validate(&ctx, root, scene, &w);
  if (status == 0) {
    cd_sceneFinish(scene);
    status = derivedValid(&ctx, scene);
  }
  if (status == 0 && effective) {
    *effective = cJSON_PrintUnformatted(root);
    if (!*effective) status = -1;
  }
  scratchFree(&w);
  cJSON_Delete(root);

  if (status == -1) {
    char line[300];
    cdStr b = {line, sizeof line, 0};
    line[0] = '\0';
    sbPutSafe(&b, file, strlen(file), 200);
    sbPuts(&b, ": out of memory");
    errAdd(&e, line);
  }
  errFinish(&e, file);
  if (status != 0) {
    if (effective && *effective) {
      cd_free(*effective);
      *effective = NULL;
    }
    cd_sceneFree(scene);
  }
  return status;
}
