# mk/dra.mk - migsched-agent as a Kubernetes DRA driver (src/agent/dra*.c,
# docs/dra.md): its unit tests and the claim decoder's fuzz harness. The
# driver itself is part of the agent (mk/agent.mk picks up src/agent/*.c;
# mk/rpc.mk links gRPC, protobuf-c and the API-server client).
#
#   $(BUILD)/tests/dra/test_dra_names   names, counters and slices against
#       the geometry of every model; the claim decoder; the kubelet's messages
#   $(BUILD)/tests/dra/test_dra_prep    prepare and unprepare in-process on
#       the sim backend: idempotency, refusals, rollback, adoption
# Prerequisites name the archives by path (AGENT_ARCHIVES is agent.mk's, by
# path too): this file is included before backend.mk, nvml.mk, rpc.mk and
# service_kube.mk define their variables (recipes, which expand later, may
# use those).
DRA_TESTS := $(BUILD)/tests/dra/test_dra_names $(BUILD)/tests/dra/test_dra_prep
DRA_PB_H  := $(BUILD)/gen/proto/dra/v1/api.pb-c.h $(BUILD)/gen/proto/pluginregistration/v1/api.pb-c.h
EXTRA_TESTS  += $(DRA_TESTS)
OWN_TEST_SRC += tests/dra/test_dra_names.c tests/dra/test_dra_prep.c

$(DRA_TESTS): $(BUILD)/tests/dra/%: tests/dra/%.c $(AGENT_TEST_OBJ) $(AGENT_ARCHIVES) $(LIB) $(BUILD)/libmsrpc.a \
                                    $(BUILD)/libmskube.a | $(DRA_PB_H)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -D_DEFAULT_SOURCE -I$(RPC_GEN) -Itests $(CFLAGS_ALL) -MMD -MP -o $@ $< $(AGENT_TEST_OBJ) \
	    $(AGENT_ARCHIVES) $(LIB) -lcmocka $(AGENT_LIBS) $(DP_LIBS) $(LDLIBS)

# The claim decoder and the kubelet's DRA messages under libFuzzer (make fuzz).
$(BUILD)/fuzz/fuzz_dra_claim: fuzz/fuzz_dra_claim.c fuzz/fuzz.h $(BUILD)/obj/src/agent/dra_claim.o \
                              $(BUILD)/obj/src/agent/dra_names.o $(BUILD)/libmsrpc.a $(LIB) | $(DRA_PB_H)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -D_DEFAULT_SOURCE -I$(RPC_GEN) -Ifuzz $(CFLAGS_ALL) -fsanitize=fuzzer -MMD -MP -o $@ $< \
	    $(BUILD)/obj/src/agent/dra_claim.o $(BUILD)/obj/src/agent/dra_names.o $(RPC_LIB) $(LIB) -lgrpc -lgpr \
	    -lprotobuf-c -ljansson $(LDLIBS)
