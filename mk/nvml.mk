# mk/nvml.mk - the NVML executor (src/nvml/), its fake driver and tests.
#
#   $(BUILD)/libmsnvml.a                  src/nvml/*.c; linked into the CLI
#                                         (nvml-probe). Not part of
#                                         libmigsched: it does I/O (dlopen).
#   $(BUILD)/fake-nvml/libnvidia-ml.so.1  tests/nvml/fake_nvml.c, built with
#                                         the same flags (ASan in build-asan/)
#   $(BUILD)/fake-nvml-r470/...           the same without the V profile call
#   $(BUILD)/fake-nvml-broken/...         the same without a required symbol
#   $(BUILD)/tests/nvml/test_nvml         cmocka; loads the fake by path
#
# Nothing links against NVML: the executor dlopens libnvidia-ml.so.1 at run
# time, so no NVIDIA package is needed to build or test.

NVML_SRC  := $(sort $(wildcard src/nvml/*.c))
NVML_OBJ  := $(NVML_SRC:%.c=$(BUILD)/obj/%.o)
NVML_LIB  := $(BUILD)/libmsnvml.a
NVML_FAKE := $(BUILD)/fake-nvml/libnvidia-ml.so.1
NVML_FAKE_R470 := $(BUILD)/fake-nvml-r470/libnvidia-ml.so.1
NVML_FAKE_BROKEN := $(BUILD)/fake-nvml-broken/libnvidia-ml.so.1
NVML_TEST := $(BUILD)/tests/nvml/test_nvml

EXTRA_ALL    += $(NVML_LIB)
EXTRA_TESTS  += $(NVML_FAKE) $(NVML_FAKE_R470) $(NVML_FAKE_BROKEN) $(NVML_TEST)
CLI_LIBS     += $(NVML_LIB)
OWN_TEST_SRC += tests/nvml/test_nvml.c
LDLIBS       += -ldl

$(NVML_LIB): $(NVML_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@
	ar rcs $@ $^

$(NVML_FAKE): tests/nvml/fake_nvml.c src/nvml/nvml_api.h
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS_ALL) -fPIC -shared -Wl,-soname,libnvidia-ml.so.1 -o $@ $<

# variants: a driver without the V profile call (the executor falls back to
# v1), and one missing a required symbol (the executor refuses to open)
$(NVML_FAKE_R470): tests/nvml/fake_nvml.c src/nvml/nvml_api.h
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS_ALL) -DFAKE_R470 -fPIC -shared -Wl,-soname,libnvidia-ml.so.1 -o $@ $<

$(NVML_FAKE_BROKEN): tests/nvml/fake_nvml.c src/nvml/nvml_api.h
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS_ALL) -DFAKE_BROKEN -fPIC -shared -Wl,-soname,libnvidia-ml.so.1 -o $@ $<

$(NVML_TEST): tests/nvml/test_nvml.c $(NVML_LIB) $(LIB) $(NVML_FAKE) $(NVML_FAKE_R470) $(NVML_FAKE_BROKEN)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Itests $(CFLAGS_ALL) -DMS_FAKE_NVML_LIB='"$(abspath $(NVML_FAKE))"' \
	    -DMS_FAKE_NVML_R470_LIB='"$(abspath $(NVML_FAKE_R470))"' \
	    -DMS_FAKE_NVML_BROKEN_LIB='"$(abspath $(NVML_FAKE_BROKEN))"' \
	    -MMD -MP -o $@ $< $(NVML_LIB) $(LIB) -lcmocka $(LDLIBS)

# mk/agent.mk sorts before this file, so its rules were read while
# $(NVML_LIB) was still empty: the agent and its test linked the archive
# without waiting for it (a parallel build could link a half-written one).
# The dependency, stated where the archive's name is known:
$(AGENT_BIN) $(AGENT_TEST): $(NVML_LIB)
