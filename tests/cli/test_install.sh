#!/usr/bin/env bash
# `make install DESTDIR=... PREFIX=/usr/local` gives a tree that a small C
# program compiles and links against through pkg-config, shared and static;
# the staged CLI runs; the man page holds every command's --help.
set -eu
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
unset MAKEFLAGS MFLAGS MAKELEVEL BUILD SAN OPT CC CFLAGS   # a make of its own: release flags
stage=$tmp/stage
make -s install DESTDIR="$stage" PREFIX=/usr/local >"$tmp/install.log" 2>&1 ||
    { tail -n 30 "$tmp/install.log"; echo "FAIL: make install"; exit 1; }
lib=$stage/usr/local/lib
for f in bin/migsched lib/libmigsched.a lib/pkgconfig/migsched.pc share/man/man1/migsched.1 \
         include/migsched/geometry.h include/migsched/trace.h; do
    [ -e "$stage/usr/local/$f" ] || { echo "FAIL: $f not installed"; exit 1; }
done
so=$(readlink "$lib/libmigsched.so")
[ "$so" = libmigsched.so.0 ] || { echo "FAIL: libmigsched.so -> $so"; exit 1; }
objdump -p "$lib/libmigsched.so.0" | grep -q 'SONAME *libmigsched.so.0$' ||
    { echo "FAIL: soname"; objdump -p "$lib/libmigsched.so.0" | grep SONAME; exit 1; }
cat >"$tmp/prog.c" <<'C'
#include <stdio.h>
#include <string.h>
#include <migsched/migsched.h>
#include <migsched/number.h>

int main(void)
{
    static const char tr[] = "job_id,arrival_s,profile,duration_s\na,0,3g,10\nb,1,1g,5\n";
    ms_geom_t *g = NULL;
    ms_trace_t *t = NULL;
    FILE *f = fmemopen((void *)tr, strlen(tr), "r");
    ms_state_t s;
    double v = 0;

    if (ms_geom_create(ms_model_find("A100-40GB"), 0, &g) != MS_OK || f == NULL)
        return 1;
    if (ms_trace_read(f, "t", g, &t, NULL) != MS_OK || t->n != 2)
        return 2;
    s = ms_state_place(g, ms_geom_empty_state(), ms_geom_profile_find(g, "1g"), 1);
    s = ms_state_place(g, s, ms_geom_profile_find(g, "1g"), 5);
    if (ms_number_double("1e-320", &v) != MS_OK)
        return 3;
    printf("jobs %zu fragcost %.4f version %s\n", t->n, ms_frag_cost(g, s, NULL), ms_version());
    fclose(f);
    ms_trace_free(t);
    ms_geom_destroy(g);
    return 0;
}
C
export PKG_CONFIG_PATH=$lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$stage
flags=$(pkg-config --cflags --libs migsched)
echo "pkg-config: $flags"
[ "$(pkg-config --modversion migsched)" = "$(cat VERSION)" ] || { echo "FAIL: version"; exit 1; }
cc -std=c17 -D_POSIX_C_SOURCE=200809L -Wall -Werror -o "$tmp/prog" "$tmp/prog.c" $flags -lm
LD_LIBRARY_PATH=$lib "$tmp/prog" >"$tmp/out.txt"
grep -q "jobs 2 fragcost 0.6250 version $(cat VERSION)\$" "$tmp/out.txt" || { echo "FAIL: shared run"; cat "$tmp/out.txt"; exit 1; }
ldd "$tmp/prog" | grep -q 'libmigsched.so.0' || { echo "FAIL: not linked shared"; exit 1; }
cc -std=c17 -D_POSIX_C_SOURCE=200809L -o "$tmp/prog_static" "$tmp/prog.c" \
    $(pkg-config --cflags migsched) "$lib/libmigsched.a" $(pkg-config --static --libs-only-l migsched | sed 's/-lmigsched//')
"$tmp/prog_static" | grep -q 'jobs 2 fragcost 0.6250' || { echo "FAIL: static run"; exit 1; }
# every public header compiles on its own
for h in "$stage"/usr/local/include/migsched/*.h; do
    printf '#include <migsched/%s>\n' "$(basename "$h")" >"$tmp/h.c"
    cc -std=c17 -D_POSIX_C_SOURCE=200809L -Wall -Werror $(pkg-config --cflags migsched) \
        -c "$tmp/h.c" -o "$tmp/h.o" || { echo "FAIL: $h alone"; exit 1; }
done
"$stage/usr/local/bin/migsched" frag --used 1g@1,1g@5 | grep -q 'FragCost 0.6250'
# the man page carries the commands' own --help text
for c in frag simulate check report; do
    grep -q "usage: migsched $c" "$stage/usr/local/share/man/man1/migsched.1" ||
        { echo "FAIL: man page lacks $c"; exit 1; }
done
if command -v groff >/dev/null 2>&1; then
    groff -man -ww -z "$stage/usr/local/share/man/man1/migsched.1" 2>"$tmp/groff.txt"
    [ ! -s "$tmp/groff.txt" ] || { echo "FAIL: roff warnings"; cat "$tmp/groff.txt"; exit 1; }
fi
echo ok
