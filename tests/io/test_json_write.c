/* test_json_write.c - the one JSON string writer (json_write.h): exact
 * bytes for the escapes, and every byte 0x01-0xff read back unchanged by a
 * strict decoder of RFC 8259 strings. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "migsched/json_write.h"

/* What ms_json_write_str wrote for s, as a malloc'd string. */
static char *written(const char *s)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    assert_non_null(f);
    ms_json_write_str(f, s);
    assert_int_equal(ferror(f), 0);
    assert_int_equal(fclose(f), 0);
    return buf;
}

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

/* A strict decoder of one JSON string (the whole of j): -1 where the text
 * is not one, else the decoded bytes in out (the test only writes code
 * points below 0x100, so \u escapes above 0xff are rejected). */
static int decode(const char *j, char *out, size_t cap)
{
    size_t n = 0;

    if (*j++ != '"')
        return -1;
    while (*j != '"') {
        unsigned char c = (unsigned char)*j++;

        if (c == '\0' || c < 0x20 || n + 1 >= cap)
            return -1;
        if (c == '\\') {
            char e = *j++;
            int v = 0, k;

            if (e == '"' || e == '\\' || e == '/')
                c = (unsigned char)e;
            else if (e == 'u') {
                for (k = 0; k < 4; k++) {
                    int h = hexval(*j++);

                    if (h < 0)
                        return -1;
                    v = v * 16 + h;
                }
                if (v == 0 || v > 0xff)
                    return -1;
                c = (unsigned char)v;
            } else if (e == 'n' || e == 't' || e == 'r' || e == 'b' || e == 'f')
                c = (unsigned char)(e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e == 'b' ? '\b' : '\f');
            else
                return -1;
        }
        out[n++] = (char)c;
    }
    if (j[1] != '\0')
        return -1;
    out[n] = '\0';
    return (int)n;
}

static void test_exact(void **state)
{
    static const struct { const char *in, *out; } cases[] = {
        { "", "\"\"" },
        { "a100", "\"a100\"" },
        { "say \"hi\"", "\"say \\\"hi\\\"\"" },
        { "C:\\gpu", "\"C:\\\\gpu\"" },
        { "line\nnext\ttab\x01", "\"line\\u000anext\\u0009tab\\u0001\"" },
        { "caf\xc3\xa9 /", "\"caf\xc3\xa9 /\"" },
    };
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *w = written(cases[i].in);

        assert_string_equal(w, cases[i].out);
        free(w);
    }
    {
        char *w = written(NULL);

        assert_string_equal(w, "\"\"");
        free(w);
    }
}

static void test_every_byte_reads_back(void **state)
{
    char in[256], out[256];
    char *w;
    int c;

    (void)state;
    for (c = 1; c < 256; c++)
        in[c - 1] = (char)c;
    in[255] = '\0';
    w = written(in);
    assert_int_equal(decode(w, out, sizeof(out)), 255);
    assert_memory_equal(in, out, 256);
    free(w);
    for (c = 1; c < 256; c++) {   /* each byte alone, and between others */
        char one[4] = { 'x', (char)c, 'y', '\0' };

        w = written(one);
        assert_int_equal(decode(w, out, sizeof(out)), 3);
        assert_string_equal(out, one);
        free(w);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact),
        cmocka_unit_test(test_every_byte_reads_back),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
