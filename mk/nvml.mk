# mk/nvml.mk - the NVML executor (src/nvml/), its fake driver and tests.
#
#   $(BUILD)/libmsnvml.a                  src/nvml/*.c; linked into the CLI
#                                         (nvml-probe). Not part of
#                                         libmigsched: it does I/O (dlopen).
#   $(BUILD)/fake-nvml/libnvidia-ml.so.1  tests/nvml/fake_nvml.c, built with
#                                         the same flags (ASan in build-asan/)
#   $(BUILD)/fake-nvml-old/...            the same without one symbol (old driver)
#   $(BUILD)/tests/nvml/test_nvml         cmocka; loads the fake by path
#
# Nothing links against NVML: the executor dlopens libnvidia-ml.so.1 at run
# time, so no NVIDIA package is needed to build or test.

NVML_SRC  := $(sort $(wildcard src/nvml/*.c))
NVML_OBJ  := $(NVML_SRC:%.c=$(BUILD)/obj/%.o)
NVML_LIB  := $(BUILD)/libmsnvml.a
NVML_FAKE := $(BUILD)/fake-nvml/libnvidia-ml.so.1
NVML_FAKE_OLD := $(BUILD)/fake-nvml-old/libnvidia-ml.so.1
NVML_TEST := $(BUILD)/tests/nvml/test_nvml

EXTRA_ALL    += $(NVML_LIB)
EXTRA_TESTS  += $(NVML_FAKE) $(NVML_FAKE_OLD) $(NVML_TEST)
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

# the same fake without nvmlDeviceGetGpuInstanceProfileInfoV: a too-old driver
$(NVML_FAKE_OLD): tests/nvml/fake_nvml.c src/nvml/nvml_api.h
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS_ALL) -DFAKE_OLD_DRIVER -fPIC -shared -Wl,-soname,libnvidia-ml.so.1 -o $@ $<

$(NVML_TEST): tests/nvml/test_nvml.c $(NVML_LIB) $(LIB) $(NVML_FAKE) $(NVML_FAKE_OLD)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Itests $(CFLAGS_ALL) -DMS_FAKE_NVML_LIB='"$(abspath $(NVML_FAKE))"' \
	    -DMS_FAKE_NVML_OLD_LIB='"$(abspath $(NVML_FAKE_OLD))"' \
	    -MMD -MP -o $@ $< $(NVML_LIB) $(LIB) -lcmocka $(LDLIBS)
