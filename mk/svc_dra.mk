# mk/svc_dra.mk - migschedd's DRA allocator (src/service/dra_*.c, built into
# migschedd by mk/service.mk): its unit tests (tests/service/test_dra_*.c),
# linked with every service object but main.o as the extender's are.
# Named to sort after mk/service_tests.mk, whose variables it uses.
DRA_TEST_NAMES := dra_parse dra_alloc dra_flow
DRA_TESTS := $(DRA_TEST_NAMES:%=$(BUILD)/tests/service/test_%)
OWN_TEST_SRC += $(DRA_TEST_NAMES:%=tests/service/test_%.c)
EXTRA_TESTS += $(DRA_TESTS)
# the loop's fixture (tests/service/dra_fx.c), shared by test_dra_alloc and test_dra_flow
DRA_FX := $(BUILD)/obj/tests/service/dra_fx.o
$(DRA_FX): CPPFLAGS += -Itests -D_DEFAULT_SOURCE
$(BUILD)/tests/service/test_dra_alloc $(BUILD)/tests/service/test_dra_flow: $(DRA_FX)
$(BUILD)/tests/service/test_dra_alloc $(BUILD)/tests/service/test_dra_flow: DRA_TEST_EXTRA = $(DRA_FX)

$(DRA_TESTS): $(BUILD)/tests/service/test_%: tests/service/test_%.c $(SVC_FUZZ_OBJ) \
              $(BACKEND_LIB) $(NVML_LIB) $(DAEMON_LIB) $(LIB) $(KUBE_LIB) $(K8SCONF_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -D_DEFAULT_SOURCE -Itests $(CFLAGS_ALL) -MMD -MP -o $@ $< $(DRA_TEST_EXTRA) \
	    $(SVC_FUZZ_OBJ) $(BACKEND_LIBS) $(LIB) $(SVC_LIBS) $(KUBE_LIBS) -lcmocka $(LDLIBS)

# The slice, class, claim, template, pod and AdmissionReview readers, the
# CEL subset and quantities under libFuzzer (make fuzz; fuzz/fuzz_dra.c).
$(BUILD)/fuzz/fuzz_dra: fuzz/fuzz_dra.c fuzz/fuzz.h $(SVC_FUZZ_OBJ) $(BACKEND_LIB) $(NVML_LIB) $(DAEMON_LIB) $(LIB) \
                        $(KUBE_LIB) $(K8SCONF_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -D_DEFAULT_SOURCE -Ifuzz $(CFLAGS_ALL) -fsanitize=fuzzer -MMD -MP -o $@ $< \
	    $(SVC_FUZZ_OBJ) $(BACKEND_LIBS) $(LIB) $(SVC_LIBS) $(KUBE_LIBS) $(LDLIBS)
