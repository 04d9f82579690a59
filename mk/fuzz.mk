# mk/fuzz.mk - libFuzzer harnesses (fuzz/fuzz_*.c) and the clang build of
# the test suite. Needs clang and its libFuzzer runtime (scripts/deps/test/fuzz.list).
#
#   make fuzz          build every harness in build-fuzz/fuzz/ (clang, ASan,
#                      UBSan with float-cast-overflow, no recovery)
#   make check-clang   build the test suite with clang and the same
#                      sanitizers in build-clang/ and run it
#
# scripts/fuzz.sh builds and runs the harnesses; scripts/test.sh runs both.
# The clang run skips the Kubernetes end-to-end test (MIGSCHED_K8S_SKIP):
# it exercises no more C than the gcc run already did, and costs the most.
# Each target re-enters make with its own BUILD, so the library is built
# with the flags of its build directory and nothing mixes with build/.

FUZZ_CC      ?= clang
FUZZ_BUILD   := build-fuzz
FUZZ_SAN     := -fsanitize=address,undefined,float-cast-overflow -fno-sanitize-recover=all
FUZZ_SRC     := $(sort $(wildcard fuzz/fuzz_*.c))
FUZZ_BIN     := $(patsubst fuzz/%.c,$(BUILD)/fuzz/%,$(FUZZ_SRC))
# The CLI's list parsers are fuzzed too: their objects, without main.o.
FUZZ_CLI_OBJ := $(BUILD)/obj/src/cli/lists.o $(BUILD)/obj/src/cli/util.o
# clang's -Wpedantic adds -Wnewline-eof, which gcc does not have: a file
# without a final newline must not break only the clang build.
FUZZ_CFLAGS  := -Wno-newline-eof $(CFLAGS)

.PHONY: fuzz fuzz-bins check-clang
fuzz:
	$(MAKE) BUILD=$(FUZZ_BUILD) CC=$(FUZZ_CC) OPT="-O1 -g -fno-omit-frame-pointer" \
	    SAN="$(FUZZ_SAN) -fsanitize=fuzzer-no-link" CFLAGS="$(FUZZ_CFLAGS)" fuzz-bins

fuzz-bins: $(FUZZ_BIN)

$(BUILD)/fuzz/%: fuzz/%.c fuzz/fuzz.h $(LIB) $(FUZZ_CLI_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Ifuzz $(CFLAGS_ALL) -fsanitize=fuzzer -MMD -MP -o $@ $< $(FUZZ_CLI_OBJ) \
	    $(LIB) $(LDLIBS)

check-clang:
	$(MAKE) BUILD=build-clang CC=$(FUZZ_CC) OPT="-O1 -g -fno-omit-frame-pointer" \
	    SAN="$(FUZZ_SAN)" CFLAGS="$(FUZZ_CFLAGS)" tests
	MIGSCHED=build-clang/migsched BUILD=build-clang MIGSCHED_K8S_SKIP=1 \
	    ./scripts/run-test-binaries.sh build-clang/tests

.PHONY: clean-fuzz
clean: clean-fuzz
clean-fuzz:
	rm -rf build-fuzz build-fuzz.log
