# mk/rpc.mk - gRPC in C for the kubelet's plugin APIs (src/rpc/, proto/)
# and migsched-agent's device plugin (src/agent/dp*.c, docs/kubernetes.md).
# Needs libgrpc-dev, libprotobuf-c-dev and protobuf-c-compiler
# (scripts/deps/rpc.list).
#
#   $(BUILD)/gen/proto/<api>/api.pb-c.{c,h}   protoc-c's code for each
#       proto/k8s.io/kubelet/pkg/apis/<api>/api.proto, made at build time.
#       protoc-c 1.4 (Debian 12) refuses proto3 'optional' fields, which
#       podresources/v1 and dra/v1 have: it is given a copy without the
#       keyword. The wire format is the same (such a field is then not sent
#       when empty, and reads the same). The copy also leaves out the
#       `service` blocks: src/rpc/ names methods by their paths, and
#       protoc-c would name a member of a service struct `register` (a C
#       keyword) for the device plugin's Register. The files in proto/ stay
#       as published.
#   $(BUILD)/libmsrpc.a       src/rpc/ (server, unary client) and the
#       generated code; linked into migsched-agent.
#   $(BUILD)/tests/rpc/test_rpc   the server and client against each other
#       over a socket, and the device plugin's messages (cmocka).
RPC_APIS    := deviceplugin/v1beta1 podresources/v1 pluginregistration/v1 dra/v1
RPC_PROTO   := proto/k8s.io/kubelet/pkg/apis
RPC_GEN     := $(BUILD)/gen/proto
RPC_PB_C    := $(RPC_APIS:%=$(RPC_GEN)/%/api.pb-c.c)
RPC_PB_H    := $(RPC_PB_C:.c=.h)
RPC_PB_OBJ  := $(RPC_PB_C:$(BUILD)/gen/%.c=$(BUILD)/obj/gen/%.o)
RPC_SRC     := $(sort $(wildcard src/rpc/*.c))
RPC_OBJ     := $(RPC_SRC:%.c=$(BUILD)/obj/%.o)
RPC_LIB     := $(BUILD)/libmsrpc.a
RPC_LIBS    := $(RPC_LIB) -lgrpc -lgpr -lprotobuf-c -lpthread
# the device plugin's objects read the API server with src/kube/ (mk/service_kube.mk)
DP_LIBS      = $(RPC_LIBS) $(BUILD)/libmskube.a -lcurl -lyaml -ljansson

EXTRA_ALL += $(RPC_LIB)

$(RPC_GEN)/%/api.pb-c.c $(RPC_GEN)/%/api.pb-c.h: $(RPC_PROTO)/%/api.proto
	@mkdir -p $(BUILD)/gen/proto-src/$* $(RPC_GEN)
	sed -E 's/^([[:space:]]*)optional[[:space:]]+/\1/' $< | \
	    awk '/^service /{skip=1} skip&&/^}/{skip=0; next} !skip' > $(BUILD)/gen/proto-src/$*/api.proto
	protoc-c --proto_path=$(BUILD)/gen/proto-src --c_out=$(RPC_GEN) $*/api.proto

# Generated code: the project's language level and sanitizers, not its
# warning set (protoc-c's output is not ours to fix).
$(BUILD)/obj/gen/%.o: $(BUILD)/gen/%.c
	@mkdir -p $(dir $@)
	$(CC) -I$(RPC_GEN) $(STD) -Wall -Werror $(OPT) $(SAN) $(CFLAGS) -MMD -MP -c $< -o $@

$(RPC_OBJ) $(AGENT_OBJ): CPPFLAGS += -I$(RPC_GEN)
$(RPC_OBJ) $(AGENT_OBJ): | $(RPC_PB_H)

$(RPC_LIB): $(RPC_OBJ) $(RPC_PB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@
	ar rcs $@ $^

# the agent links the device plugin (src/agent/dp*.c)
$(AGENT_BIN) $(AGENT_TEST): $(RPC_LIB) $(BUILD)/libmskube.a
$(AGENT_BIN) $(AGENT_TEST): LDLIBS += $(DP_LIBS)

RPC_TEST := $(BUILD)/tests/rpc/test_rpc
EXTRA_TESTS  += $(RPC_TEST)
OWN_TEST_SRC += tests/rpc/test_rpc.c
$(RPC_TEST): tests/rpc/test_rpc.c $(RPC_LIB) $(AGENT_TEST_OBJ) $(AGENT_ARCHIVES) $(LIB) $(BUILD)/libmskube.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -D_DEFAULT_SOURCE -I$(RPC_GEN) -Itests $(CFLAGS_ALL) -MMD -MP -o $@ $< $(AGENT_TEST_OBJ) \
	    $(AGENT_ARCHIVES) $(LIB) -lcmocka $(AGENT_LIBS) $(DP_LIBS) $(LDLIBS)

# The device plugin's message decoders under libFuzzer (make fuzz).
$(BUILD)/fuzz/fuzz_dp_msg: fuzz/fuzz_dp_msg.c fuzz/fuzz.h $(BUILD)/obj/src/agent/dp_msg.o $(RPC_LIB) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -D_DEFAULT_SOURCE -I$(RPC_GEN) -Ifuzz $(CFLAGS_ALL) -fsanitize=fuzzer -MMD -MP -o $@ $< \
	    $(BUILD)/obj/src/agent/dp_msg.o $(RPC_LIB) $(LIB) -lgrpc -lgpr -lprotobuf-c -ljansson $(LDLIBS)

