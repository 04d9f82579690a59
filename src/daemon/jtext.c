/* jtext.c - JSON written as text (daemon.h). Any thread, one buffer per
 * thread. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/daemon.h"

void ms_jtext_reset(ms_jtext_t *t)
{
    t->len = 0;
    t->oom = false;
    if (t->p != NULL)
        t->p[0] = '\0';
}

void ms_jtext_free(ms_jtext_t *t)
{
    free(t->p);
    t->p = NULL;
    t->len = t->cap = 0;
    t->oom = false;
}

void ms_jtext_add(ms_jtext_t *t, const char *p, size_t n)
{
    if (t->oom)
        return;
    if (t->len + n + 1 > t->cap) {   /* + 1: the NUL */
        size_t cap = t->cap ? t->cap : 512;
        char *q;

        while (cap < t->len + n + 1)
            cap *= 2;
        if ((q = realloc(t->p, cap)) == NULL) {
            t->oom = true;
            return;
        }
        t->p = q;
        t->cap = cap;
    }
    memcpy(t->p + t->len, p, n);
    t->len += n;
    t->p[t->len] = '\0';
}

void ms_jtext_raw(ms_jtext_t *t, const char *s)
{
    ms_jtext_add(t, s, strlen(s));
}

void ms_jtext_int(ms_jtext_t *t, long long v)
{
    char buf[24];
    int n = snprintf(buf, sizeof(buf), "%lld", v);

    ms_jtext_add(t, buf, (size_t)n);
}

void ms_jtext_real(ms_jtext_t *t, double v)
{
    char buf[40], *e;
    int n;

    if (!isfinite(v)) {
        ms_jtext_add(t, "null", 4);
        return;
    }
    n = snprintf(buf, sizeof(buf), "%.17g", v);
    if ((e = strchr(buf, 'e')) != NULL) {
        /* jansson's form: e5, e-7 (no '+', no leading zeros) */
        char *d = e + 1, *s = e + 1;

        if (*s == '+')
            s++;
        else if (*s == '-')
            *d++ = *s++;
        while (*s == '0' && s[1] != '\0')
            s++;
        memmove(d, s, strlen(s) + 1);
        n = (int)strlen(buf);
    } else if (strchr(buf, '.') == NULL) {
        buf[n++] = '.';   /* 17 digits leave room: buf holds 40 */
        buf[n++] = '0';
        buf[n] = '\0';
    }
    ms_jtext_add(t, buf, (size_t)n);
}

void ms_jtext_str(ms_jtext_t *t, const char *s)
{
    const char *run;

    if (s == NULL) {
        ms_jtext_add(t, "null", 4);
        return;
    }
    ms_jtext_add(t, "\"", 1);
    for (run = s; *s != '\0'; s++) {
        unsigned char ch = (unsigned char)*s;
        char esc[8];

        if (ch >= 0x20 && ch != '"' && ch != '\\')
            continue;
        ms_jtext_add(t, run, (size_t)(s - run));
        /* jansson's escapes, byte for byte: the canonical request (the
         * idempotency check compares it as text) is written here */
        switch (ch) {
        case '"': ms_jtext_add(t, "\\\"", 2); break;
        case '\\': ms_jtext_add(t, "\\\\", 2); break;
        case '\b': ms_jtext_add(t, "\\b", 2); break;
        case '\f': ms_jtext_add(t, "\\f", 2); break;
        case '\n': ms_jtext_add(t, "\\n", 2); break;
        case '\r': ms_jtext_add(t, "\\r", 2); break;
        case '\t': ms_jtext_add(t, "\\t", 2); break;
        default:
            snprintf(esc, sizeof(esc), "\\u%04X", ch);
            ms_jtext_add(t, esc, 6);
        }
        run = s + 1;
    }
    ms_jtext_add(t, run, (size_t)(s - run));
    ms_jtext_add(t, "\"", 1);
}

char *ms_jtext_take(ms_jtext_t *t)
{
    char *p = t->p;

    if (t->oom || p == NULL) {
        ms_jtext_free(t);
        return t->oom ? NULL : strdup("");
    }
    t->p = NULL;
    t->len = t->cap = 0;
    return p;
}

/* --- the light scanner behind ms_jtext_member --------------------------- */

size_t ms_jtext_skip_ws(const char *s, size_t i, size_t n)
{
    while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
        i++;
    return i;
}

size_t ms_jtext_skip_string(const char *s, size_t i, size_t n)
{
    for (i++; i < n; i++) {
        if ((unsigned char)s[i] < 0x20)
            return MS_JTEXT_BAD;
        if (s[i] == '\\')
            i++;
        else if (s[i] == '"')
            return i + 1;
    }
    return MS_JTEXT_BAD;
}

size_t ms_jtext_skip_value(const char *s, size_t i, size_t n)
{
    int depth = 0;

    if (i >= n)
        return MS_JTEXT_BAD;
    if (s[i] == '"')
        return ms_jtext_skip_string(s, i, n);
    if (s[i] != '{' && s[i] != '[') {   /* a number, true, false, null */
        size_t j = i;

        while (j < n && s[j] != ',' && s[j] != '}' && s[j] != ']' && s[j] != ' ' && s[j] != '\t' &&
               s[j] != '\n' && s[j] != '\r' && s[j] != '"' && s[j] != '{' && s[j] != '[')
            j++;
        return j > i ? j : MS_JTEXT_BAD;
    }
    while (i < n) {
        char c = s[i];

        if (c == '"') {
            if ((i = ms_jtext_skip_string(s, i, n)) == MS_JTEXT_BAD)
                return MS_JTEXT_BAD;
            continue;
        }
        if (c == '{' || c == '[')
            depth++;
        else if (c == '}' || c == ']') {
            if (--depth == 0)
                return i + 1;
        }
        i++;
    }
    return MS_JTEXT_BAD;
}

bool ms_jtext_member(const char *s, size_t n, const char *key, const char **at, size_t *len)
{
    size_t klen = strlen(key), i = ms_jtext_skip_ws(s, 0, n), end;
    bool found = false;

#define AT(k) ((k) < n ? s[k] : '\0')
    if (AT(i) != '{' || (end = ms_jtext_skip_value(s, i, n)) == MS_JTEXT_BAD || ms_jtext_skip_ws(s, end, n) != n)
        return false;   /* not one closed object */
    i = ms_jtext_skip_ws(s, i + 1, n);
    if (AT(i) == '}')
        return false;
    for (;;) {
        size_t k0 = i, k1, v0, v1;

        if (AT(i) != '"' || (k1 = ms_jtext_skip_string(s, i, n)) == MS_JTEXT_BAD)
            return false;
        i = ms_jtext_skip_ws(s, k1, n);
        if (AT(i) != ':')
            return false;
        v0 = ms_jtext_skip_ws(s, i + 1, n);
        if ((v1 = ms_jtext_skip_value(s, v0, n)) == MS_JTEXT_BAD)
            return false;
        if (!found && k1 - k0 == klen + 2 && memcmp(s + k0 + 1, key, klen) == 0) {
            *at = s + v0;
            *len = v1 - v0;
            found = true;
        }
        i = ms_jtext_skip_ws(s, v1, n);
        if (AT(i) == '}')
            return found;
        if (AT(i) != ',')
            return false;
        i = ms_jtext_skip_ws(s, i + 1, n);
    }
#undef AT
}
