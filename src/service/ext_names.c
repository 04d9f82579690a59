/* ext_names.c - ExtenderArgs.NodeNames read from the raw body (issue 25).
 *
 * kube-scheduler names every candidate node in each filter and prioritize:
 * at 5,000 nodes, jansson building a string per name (then the parser
 * copying it) was about a third of a filter. Here the body's top-level
 * object is walked without building anything, the NodeNames array is
 * decoded straight into one buffer, and jansson then parses the rest of
 * the body with that array read as [] (extender_json.c).
 *
 * Only the common body is taken: anything else - no exact "NodeNames" key
 * at the top, a key that differs only in case or has an escape in it, a
 * NodeNames that is not an array of names, a name that is empty, longer
 * than 253 bytes, not ASCII, holds a control character, a NUL or an
 * invalid escape, too many names - answers "not mine" and the caller uses
 * the jansson parser for the whole body, so that what is accepted and
 * refused, and the errors, are exactly that parser's (test_extender
 * `test_names_fast_equals_tree`; fuzz/fuzz_extender.c compares the two).
 *
 * Why the rest of the walk may be loose: values other than NodeNames are
 * skipped by counting brackets outside strings, which finds the true top
 * level of any valid body; and the caller keeps the fast names only when
 * jansson accepts the body with the array read as [], which makes the
 * body valid, so the walk's view of it was the true one.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "service/extender.h"

#define NAME_MAX_LEN 253
#define MAX_NAMES 100000   /* extender_json.c's MAX_NODES: above it, its 413 */

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Four hex digits at s[i]: their value, or -1. */
static long hex4(const char *s, size_t i, size_t n)
{
    long v = 0;
    int k, h;

    if (n - i < 4)
        return -1;
    for (k = 0; k < 4; k++) {
        if ((h = hexval(s[i + k])) < 0)
            return -1;
        v = v * 16 + h;
    }
    return v;
}

static size_t put_utf8(char *o, long c)
{
    if (c < 0x80) {
        o[0] = (char)c;
        return 1;
    }
    if (c < 0x800) {
        o[0] = (char)(0xC0 | (c >> 6));
        o[1] = (char)(0x80 | (c & 0x3F));
        return 2;
    }
    if (c < 0x10000) {
        o[0] = (char)(0xE0 | (c >> 12));
        o[1] = (char)(0x80 | ((c >> 6) & 0x3F));
        o[2] = (char)(0x80 | (c & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | (c >> 18));
    o[1] = (char)(0x80 | ((c >> 12) & 0x3F));
    o[2] = (char)(0x80 | ((c >> 6) & 0x3F));
    o[3] = (char)(0x80 | (c & 0x3F));
    return 4;
}

/* One node name: s[*i] is its opening quote. Decoded into o (room for the
 * string's raw length), NUL-terminated; *i moves past the closing quote.
 * Its decoded length, or -1 when it is not a name this reader takes.
 * JSON's escapes exactly: \" \\ \/ \b \f \n \r \t \uXXXX, a surrogate
 * pair as one character; a lone surrogate or \u0000 (jansson refuses
 * both) and raw bytes below 0x20 (refused) or above 0x7F (UTF-8 to check,
 * and no node's name) are left to the jansson parser. */
static long read_name(const char *s, size_t *i, size_t n, char *o)
{
    size_t j = *i + 1, len = 0;
    long c, lo;

    while (j < n && s[j] != '"') {
        unsigned char b = (unsigned char)s[j];

        if (b < 0x20 || b > 0x7F)
            return -1;
        if (b != '\\') {
            o[len++] = (char)b;
            j++;
            continue;
        }
        if (++j >= n)
            return -1;
        switch (s[j]) {
        case '"': case '\\': case '/':
            o[len++] = s[j];
            break;
        case 'b': o[len++] = '\b'; break;
        case 'f': o[len++] = '\f'; break;
        case 'n': o[len++] = '\n'; break;
        case 'r': o[len++] = '\r'; break;
        case 't': o[len++] = '\t'; break;
        case 'u':
            if ((c = hex4(s, j + 1, n)) <= 0 || (c >= 0xDC00 && c <= 0xDFFF))
                return -1;
            j += 4;
            if (c >= 0xD800 && c <= 0xDBFF) {
                if (n - j < 7 || s[j + 1] != '\\' || s[j + 2] != 'u' ||
                    (lo = hex4(s, j + 3, n)) < 0xDC00 || lo > 0xDFFF)
                    return -1;
                c = 0x10000 + ((c - 0xD800) << 10) + (lo - 0xDC00);
                j += 6;
            }
            len += put_utf8(o + len, c);
            break;
        default:
            return -1;
        }
        j++;
    }
    if (j >= n || len == 0 || len > NAME_MAX_LEN)
        return -1;
    o[len] = '\0';
    *i = j + 1;
    return (long)len;
}

/* The array at s[i] ('['): its names into buf (room for the array's raw
 * bytes), their count in *count, *end after its ']'. 0, or -1: not ours. */
static int read_names(const char *s, size_t i, size_t n, char *buf, int *count, size_t *end)
{
    size_t used = 0;
    long len;
    int k = 0;

    i = ms_jtext_skip_ws(s, i + 1, n);
    if (i < n && s[i] == ']') {
        *count = 0;
        *end = i + 1;
        return 0;
    }
    for (;;) {
        if (i >= n || s[i] != '"' || k >= MAX_NAMES)
            return -1;
        if ((len = read_name(s, &i, n, buf + used)) < 0)
            return -1;
        used += (size_t)len + 1;
        k++;
        i = ms_jtext_skip_ws(s, i, n);
        if (i < n && s[i] == ']')
            break;
        if (i >= n || s[i] != ',')
            return -1;
        i = ms_jtext_skip_ws(s, i + 1, n);
    }
    *count = k;
    *end = i + 1;
    return 0;
}

/* The top-level key at s[i] ('"'): 1 it is exactly NodeNames, 0 another
 * key, -1 one the jansson parser must judge (an escape: it may decode to
 * NodeNames; NodeNames in another case: getk's any-case rule). *i moves
 * past it. */
static int top_key(const char *s, size_t *i, size_t n)
{
    size_t a = *i + 1, e = ms_jtext_skip_string(s, *i, n);

    if (e == MS_JTEXT_BAD || memchr(s + a, '\\', e - 1 - a) != NULL)
        return -1;
    *i = e;
    if (e - 1 - a != 9 || strncasecmp(s + a, "NodeNames", 9) != 0)
        return 0;
    return memcmp(s + a, "NodeNames", 9) == 0 ? 1 : -1;
}

int svc_ext_names_scan(const char *s, size_t n, svc_ext_names_t *out)
{
    size_t i = ms_jtext_skip_ws(s, 0, n), end;
    int key;

    memset(out, 0, sizeof(*out));
    if (i >= n || s[i] != '{')
        return -1;
    i = ms_jtext_skip_ws(s, i + 1, n);
    for (;;) {
        if (i >= n || s[i] != '"' || (key = top_key(s, &i, n)) < 0)
            goto no;
        i = ms_jtext_skip_ws(s, i, n);
        if (i >= n || s[i] != ':')
            goto no;
        i = ms_jtext_skip_ws(s, i + 1, n);
        if (key == 1) {
            if (out->buf != NULL || i >= n || s[i] != '[')
                goto no;   /* twice (jansson's duplicate), or not a list */
            /* the names, decoded, fit in the array's raw bytes */
            end = ms_jtext_skip_value(s, i, n);
            if (end == MS_JTEXT_BAD || (out->buf = malloc(end - i)) == NULL ||
                read_names(s, i, end, out->buf, &out->n, &end) != 0)
                goto no;
            out->start = i;
            out->end = i = end;
        } else if ((i = ms_jtext_skip_value(s, i, n)) == MS_JTEXT_BAD) {
            goto no;
        }
        i = ms_jtext_skip_ws(s, i, n);
        if (i < n && s[i] == '}')
            break;
        if (i >= n || s[i] != ',')
            goto no;
        i = ms_jtext_skip_ws(s, i + 1, n);
    }
    if (ms_jtext_skip_ws(s, i + 1, n) != n || out->buf == NULL)
        goto no;
    return 0;
no:
    free(out->buf);
    memset(out, 0, sizeof(*out));
    return -1;
}
