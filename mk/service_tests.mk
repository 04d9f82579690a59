# mk/service_tests.mk - the unit tests of migschedd's core
# (tests/service/test_{loop,restart,store,events,queue,syncer,exec,lanes,backend,backend_faults,kctl,ext,redo,
# takeover}.c): cmocka, every service object but main.o, and tests/service/fixture.c,
# which runs the core without its threads on a fake clock. Named to sort
# after mk/service_kube.mk, whose variables it uses.
SVC_UNIT_NAMES := loop restart store events queue syncer exec lanes backend backend_faults kctl ext redo takeover
SVC_UNIT := $(SVC_UNIT_NAMES:%=$(BUILD)/tests/service/test_%)
SVC_FIXTURE := $(BUILD)/obj/tests/service/fixture.o $(BUILD)/obj/tests/service/fake_agent.o
OWN_TEST_SRC += $(SVC_UNIT_NAMES:%=tests/service/test_%.c)
EXTRA_TESTS += $(SVC_UNIT)

$(SVC_FIXTURE): CPPFLAGS += -Itests -D_DEFAULT_SOURCE

SVC_UNIT_DEPS := $(SVC_FIXTURE) $(SVC_FUZZ_OBJ) $(BACKEND_LIB) $(NVML_LIB) $(DAEMON_LIB) $(LIB) $(KUBE_LIB) \
                 $(K8SCONF_LIB)
# test_backend also runs a migsched-agent's HTTP front in-process (the agent
# backend's conformance), so it links the agent's objects but main.o and
# the kubelet-facing gRPC halves (the device plugin src/agent/dp*.c and the
# DRA driver src/agent/dra*.c, mk/rpc.mk: the HTTP front and the ops call
# neither, and their protobuf objects are not linked here)
SVC_UNIT_AGENT := $(filter-out $(BUILD)/obj/src/agent/main.o $(BUILD)/obj/src/agent/dp%.o \
                    $(BUILD)/obj/src/agent/dra%.o,$(AGENT_OBJ))
# and the nvml backend on the fake driver (mk/nvml.mk builds it)
$(BUILD)/tests/service/test_backend: $(SVC_UNIT_AGENT) $(NVML_FAKE)
$(BUILD)/tests/service/test_backend: SVC_UNIT_EXTRA = $(SVC_UNIT_AGENT)
$(BUILD)/tests/service/test_backend: CPPFLAGS += -DMS_FAKE_NVML_LIB='"$(abspath $(NVML_FAKE))"'


$(SVC_UNIT): $(BUILD)/tests/service/test_%: tests/service/test_%.c $(SVC_UNIT_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -D_DEFAULT_SOURCE -Itests $(CFLAGS_ALL) -MMD -MP -o $@ $< $(SVC_FIXTURE) \
	    $(SVC_UNIT_EXTRA) $(SVC_FUZZ_OBJ) $(BACKEND_LIBS) $(LIB) $(SVC_LIBS) $(KUBE_LIBS) -lcmocka $(LDLIBS)
