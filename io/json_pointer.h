/* json_pointer.h: RFC 6901 JSON Pointers on a cJSON tree, and the `--set POINTER=JSON`
 * override that writes a value at one.
 *
 * A pointer is "" (the whole document) or a sequence of "/token"; in a token "~1" stands for
 * '/' and "~0" for '~' (any other '~' is a syntax error). On an array a token is a decimal
 * index without leading zeros ("0", "12"); for cd_jsonPointerSet, the index equal to the
 * array's size and the token "-" append (as JSON Patch "add" does).
 *
 * Failures say where: *fail_len receives the length of the shortest prefix of the pointer
 * that is at fault, so a caller can print "%.*s" (e.g. "/bodies/9" for "/bodies/9/radius"
 * when there are 3 bodies).
 */
#ifndef CD_JSON_POINTER_H
#define CD_JSON_POINTER_H

#include <stddef.h>

#include <cJSON.h>

typedef enum {
  CD_JP_OK = 0,
  CD_JP_SYNTAX = 1,        /* not "" and not starting with '/', or a bad '~' escape at fail_len */
  CD_JP_MISSING = 2,       /* the prefix of length fail_len names nothing */
  CD_JP_NOT_CONTAINER = 3, /* the prefix of length fail_len is a scalar: nothing is under it */
  CD_JP_NOMEM = 4          /* an allocation failed; the tree is unchanged */
} cdJsonPointerStatus;

/* the item pointer names in root, or NULL (then *status and *fail_len, both optional, say why) */
cJSON *cd_jsonPointerGet(const cJSON *root, const char *pointer, cdJsonPointerStatus *status, size_t *fail_len);

/* writes value at pointer: replaces an existing member or element, adds a new member to an
 * existing object, appends to an existing array; "" replaces the whole document (*root).
 * Every token but the last must name something that exists. On CD_JP_OK the tree owns
 * value; on any other status the tree is unchanged and the caller still owns value. */
cdJsonPointerStatus cd_jsonPointerSet(cJSON **root, const char *pointer, cJSON *value, size_t *fail_len);

/* writes token escaped for a pointer ('~' -> "~0", '/' -> "~1") into out (NUL-terminated,
 * truncated to outlen); returns the length the full escaped token has */
size_t cd_jsonPointerEscape(const char *token, char *out, size_t outlen);

#endif
