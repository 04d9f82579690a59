# mk/service_kube.mk - the Kubernetes side of migschedd: the API-server
# client (src/kube/, an archive) linked into the daemon, the extender's
# contract test and its fuzz harness. Needs libcurl and libyaml
# (scripts/deps/kube.list). Named to sort after mk/service.mk, whose
# variables it uses.
KUBE_SRC := $(sort $(wildcard src/kube/*.c))
KUBE_OBJ := $(KUBE_SRC:%.c=$(BUILD)/obj/%.o)
KUBE_LIB := $(BUILD)/libmskube.a
# kctl.c reads the cluster policy (--k8s-policy) with src/k8sconf/ (mk/k8sconf.mk),
# which uses libmigsched: the library comes again after it
KUBE_LIBS := $(KUBE_LIB) $(K8SCONF_LIB) $(LIB) -lcurl -lyaml -ljansson -lpthread

$(KUBE_OBJ): CPPFLAGS += -D_DEFAULT_SOURCE

$(KUBE_LIB): $(KUBE_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@
	ar rcs $@ $^

# the daemon and the request parser's harness link the service objects,
# which call the client
$(SVC_BIN) $(BUILD)/fuzz/fuzz_svc_request: $(KUBE_LIB) $(K8SCONF_LIB)
$(SVC_BIN) $(BUILD)/fuzz/fuzz_svc_request: LDLIBS += $(KUBE_LIBS)

# The extender's contract test (tests/service/test_extender.c): the service
# objects without main.o, cmocka.
EXT_TEST := $(BUILD)/tests/service/test_extender
OWN_TEST_SRC += tests/service/test_extender.c
EXTRA_TESTS += $(EXT_TEST)
$(EXT_TEST): tests/service/test_extender.c $(SVC_FUZZ_OBJ) $(BACKEND_LIB) $(NVML_LIB) $(DAEMON_LIB) $(LIB) $(KUBE_LIB) $(K8SCONF_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -D_DEFAULT_SOURCE -Itests $(CFLAGS_ALL) -MMD -MP -o $@ $< $(SVC_FUZZ_OBJ) \
	    $(BACKEND_LIBS) $(LIB) $(SVC_LIBS) $(KUBE_LIBS) -lcmocka $(LDLIBS)

# The JSON text writer and a job's JSON against jansson
# (tests/service/test_render.c): the same objects, cmocka.
RENDER_TEST := $(BUILD)/tests/service/test_render
OWN_TEST_SRC += tests/service/test_render.c
EXTRA_TESTS += $(RENDER_TEST)
$(RENDER_TEST): tests/service/test_render.c $(SVC_FUZZ_OBJ) $(BACKEND_LIB) $(NVML_LIB) $(DAEMON_LIB) $(LIB) $(KUBE_LIB) $(K8SCONF_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -D_DEFAULT_SOURCE -Itests $(CFLAGS_ALL) -MMD -MP -o $@ $< $(SVC_FUZZ_OBJ) \
	    $(BACKEND_LIBS) $(LIB) $(SVC_LIBS) $(KUBE_LIBS) -lcmocka $(LDLIBS)

# Which preemption victims their PodDisruptionBudgets cannot give
# (tests/service/test_ext_pdb.c): the same objects, cmocka.
PDB_TEST := $(BUILD)/tests/service/test_ext_pdb
OWN_TEST_SRC += tests/service/test_ext_pdb.c
EXTRA_TESTS += $(PDB_TEST)
$(PDB_TEST): tests/service/test_ext_pdb.c $(SVC_FUZZ_OBJ) $(BACKEND_LIB) $(NVML_LIB) $(DAEMON_LIB) $(LIB) $(KUBE_LIB) $(K8SCONF_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -D_DEFAULT_SOURCE -Itests $(CFLAGS_ALL) -MMD -MP -o $@ $< $(SVC_FUZZ_OBJ) \
	    $(BACKEND_LIBS) $(LIB) $(SVC_LIBS) $(KUBE_LIBS) -lcmocka $(LDLIBS)

# A bind's wait for its instance (tests/service/test_ext_runs.c): the same
# objects, cmocka.
RUNS_TEST := $(BUILD)/tests/service/test_ext_runs
OWN_TEST_SRC += tests/service/test_ext_runs.c
EXTRA_TESTS += $(RUNS_TEST)
$(RUNS_TEST): tests/service/test_ext_runs.c $(SVC_FUZZ_OBJ) $(BACKEND_LIB) $(NVML_LIB) $(DAEMON_LIB) $(LIB) $(KUBE_LIB) $(K8SCONF_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -D_DEFAULT_SOURCE -Itests $(CFLAGS_ALL) -MMD -MP -o $@ $< $(SVC_FUZZ_OBJ) \
	    $(BACKEND_LIBS) $(LIB) $(SVC_LIBS) $(KUBE_LIBS) -lcmocka $(LDLIBS)

# The extender's wire-format parser under libFuzzer (make fuzz).
$(BUILD)/fuzz/fuzz_extender: fuzz/fuzz_extender.c fuzz/fuzz.h $(SVC_FUZZ_OBJ) $(BACKEND_LIB) $(NVML_LIB) $(DAEMON_LIB) $(LIB) $(KUBE_LIB) $(K8SCONF_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -D_DEFAULT_SOURCE -Ifuzz $(CFLAGS_ALL) -fsanitize=fuzzer -MMD -MP -o $@ $< \
	    $(SVC_FUZZ_OBJ) $(BACKEND_LIBS) $(LIB) $(SVC_LIBS) $(KUBE_LIBS) $(LDLIBS)

# What one pod costs the extender at 1,000 and 5,000 nodes (filter,
# prioritize, bind through the daemon's handlers; docs/performance.md):
# built by `make tests`, run by hand (tests/cli/test_service_extender.sh
# runs it once, small, to see that it works).
EXT_BENCH := $(BUILD)/bench_extender
EXTRA_TESTS += $(EXT_BENCH)
$(EXT_BENCH): tests/service/bench_extender.c $(SVC_FUZZ_OBJ) $(BACKEND_LIB) $(NVML_LIB) $(DAEMON_LIB) $(LIB) $(KUBE_LIB) $(K8SCONF_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -D_DEFAULT_SOURCE -Itests $(CFLAGS_ALL) -MMD -MP -o $@ $< $(SVC_FUZZ_OBJ) \
	    $(BACKEND_LIBS) $(LIB) $(SVC_LIBS) $(KUBE_LIBS) $(LDLIBS)

# The client's test (tests/service/test_kube.c): the archive, and
# libmicrohttpd for the fake API server its list+watch test runs.
KUBE_TEST := $(BUILD)/tests/service/test_kube
OWN_TEST_SRC += tests/service/test_kube.c
EXTRA_TESTS += $(KUBE_TEST)
$(KUBE_TEST): tests/service/test_kube.c $(KUBE_LIB) $(K8SCONF_LIB) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -D_DEFAULT_SOURCE -Itests $(CFLAGS_ALL) -MMD -MP -o $@ $< $(KUBE_LIBS) -lmicrohttpd -lpthread -lcmocka $(LDLIBS)
