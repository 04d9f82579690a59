# migsched - plain GNU Makefile (see docs/build.md for why not CMake).
#
#   make            release build: build/libmigsched.a, build/migsched
#   make check      build everything with ASan+UBSan in build-asan/ and run
#                   every test binary (cmocka) and CLI script; prints
#                   "N passed, N failed, N skipped" (a test exits 77 to skip)
#   make bench      build optimised and run the benchmark suite
#   make demo       build and run `migsched experiment`
#
# Sources are picked up by wildcard: adding a module is adding a file.

CC      ?= cc
BUILD   ?= build
STD      = -std=c17
WARN     = -Wall -Wextra -Wpedantic -Werror -Wshadow -Wstrict-prototypes \
           -Wmissing-prototypes -Wpointer-arith -Wcast-qual -Wformat=2 \
           -Wundef -Wvla -Wno-unused-parameter
OPT     ?= -O2 -g
SAN     ?=
CPPFLAGS += -Iinclude -Isrc -D_POSIX_C_SOURCE=200809L
CFLAGS_ALL = $(STD) $(WARN) $(OPT) $(SAN) $(CFLAGS)
LDLIBS  += -lm

LIB_SRC  := $(sort $(wildcard src/core/*.c src/policy/*.c src/sched/*.c src/sim/*.c src/io/*.c src/research/*.c src/research/fgd/*.c src/advise/*.c src/control/*.c))
CLI_SRC  := $(sort $(wildcard src/cli/*.c))
TEST_SUPPORT := $(sort $(wildcard tests/support/*.c))
BENCH_SRC := $(sort $(wildcard bench/*.c))

LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/obj/%.o)
CLI_OBJ  := $(CLI_SRC:%.c=$(BUILD)/obj/%.o)
SUP_OBJ  := $(TEST_SUPPORT:%.c=$(BUILD)/obj/%.o)
LIB      := $(BUILD)/libmigsched.a
CLI      := $(BUILD)/migsched

.DEFAULT_GOAL := all

# Optional parts (the service, NVML, fuzzing, install) each live in their own
# mk/*.mk; they may add to EXTRA_ALL (built by `all`), EXTRA_TESTS (built by
# `tests`, run by the test runner when executable and named test_*),
# CLI_LIBS (linked into the CLI) and OWN_TEST_SRC (tests/*/test_*.c that the
# part builds itself, with its own libraries).
EXTRA_ALL :=
EXTRA_TESTS :=
CLI_LIBS :=
OWN_TEST_SRC :=
include $(sort $(wildcard mk/*.mk))

TEST_SRC := $(filter-out $(OWN_TEST_SRC),$(sort $(wildcard tests/*/test_*.c)))
TEST_BIN := $(patsubst tests/%.c,$(BUILD)/tests/%,$(TEST_SRC))


.PHONY: all check tests bench demo clean
all: $(LIB) $(CLI) $(EXTRA_ALL)

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS_ALL) -MMD -MP -c $< -o $@

# ms_version(): the VERSION file's text, for this one object
MS_VERSION_TEXT := $(shell cat VERSION 2>/dev/null || echo 0.0.0)
$(BUILD)/obj/src/core/version.o: CPPFLAGS += -DMS_VERSION_STRING='"$(MS_VERSION_TEXT)"'
$(BUILD)/obj/src/core/version.o: VERSION

$(LIB): $(LIB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@
	ar rcs $@ $^

$(CLI): $(CLI_OBJ) $(CLI_LIBS) $(LIB)
	$(CC) $(CFLAGS_ALL) $(LDFLAGS) -o $@ $(CLI_OBJ) $(CLI_LIBS) $(LIB) $(LDLIBS)

# tests/support/ objects are prerequisites of a pattern rule only, which
# would make them intermediate: deleted after each build, every test
# relinked at the next
.SECONDARY: $(SUP_OBJ)
$(BUILD)/tests/%: tests/%.c $(LIB) $(SUP_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Itests $(CFLAGS_ALL) -MMD -MP -o $@ $< $(SUP_OBJ) $(LIB) -lcmocka $(LDLIBS)

tests: $(TEST_BIN) $(CLI) $(EXTRA_ALL) $(EXTRA_TESTS)

# The test suite always runs sanitized, in its own build directory.
check:
	$(MAKE) BUILD=build-asan OPT="-O1 -g -fno-omit-frame-pointer" \
	    SAN="-fsanitize=address,undefined -fno-sanitize-recover=all" tests
	MIGSCHED=build-asan/migsched BUILD=build-asan ./scripts/run-test-binaries.sh build-asan/tests

bench:
	$(MAKE) BUILD=build-bench OPT="-O2 -g -DNDEBUG" all
	./build-bench/migsched bench $(BENCH_ARGS)

demo: all
	./$(CLI) experiment

clean:
	rm -rf build build-asan build-bench build-clang

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
