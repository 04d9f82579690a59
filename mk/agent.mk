# mk/agent.mk - migsched-agent, the per-node executor (src/agent/,
# docs/agent.md). It executes through the backends migschedd uses
# (src/backend/, mk/backend.mk: the same sim, dry-run and nvml code), with
# the daemons' shared plumbing (src/daemon/); it compiles nothing of
# src/service/. Needs libmicrohttpd, jansson and libcurl
# (scripts/deps/service.list). The archives are named by path: mk/backend.mk
# and mk/nvml.mk sort after this file.
AGENT_SRC := $(sort $(wildcard src/agent/*.c))
AGENT_OBJ := $(AGENT_SRC:%.c=$(BUILD)/obj/%.o)
AGENT_ARCHIVES := $(BUILD)/libmsbackend.a $(BUILD)/libmsnvml.a $(BUILD)/libmsdaemon.a
AGENT_BIN := $(BUILD)/migsched-agent
AGENT_LIBS := -lmicrohttpd -ljansson -lcurl -lpthread

EXTRA_ALL += $(AGENT_BIN)

$(AGENT_OBJ): CPPFLAGS += -D_DEFAULT_SOURCE

$(AGENT_BIN): $(AGENT_OBJ) $(AGENT_ARCHIVES) $(BUILD)/libmigsched.a
	$(CC) $(CFLAGS_ALL) $(LDFLAGS) -o $@ $(AGENT_OBJ) $(AGENT_ARCHIVES) $(LIB) $(AGENT_LIBS) $(LDLIBS)

# The request parser's libFuzzer harness (fuzz/fuzz_agent_request.c): only
# req.c, which is pure.
$(BUILD)/fuzz/fuzz_agent_request: fuzz/fuzz_agent_request.c fuzz/fuzz.h $(BUILD)/obj/src/agent/req.o $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -D_DEFAULT_SOURCE -Ifuzz $(CFLAGS_ALL) -fsanitize=fuzzer -MMD -MP -o $@ $< \
	    $(BUILD)/obj/src/agent/req.o $(LIB) -ljansson $(LDLIBS)

# tests/agent/test_agent.c (cmocka): the parsers, the CDI files and the
# create path in-process, on the sim backend; every agent object but main.o
# and http.o.
AGENT_TEST := $(BUILD)/tests/agent/test_agent
AGENT_TEST_OBJ := $(filter-out $(BUILD)/obj/src/agent/main.o $(BUILD)/obj/src/agent/http.o,$(AGENT_OBJ))
EXTRA_TESTS  += $(AGENT_TEST)
OWN_TEST_SRC += tests/agent/test_agent.c

$(AGENT_TEST): tests/agent/test_agent.c $(AGENT_TEST_OBJ) $(AGENT_ARCHIVES) $(BUILD)/libmigsched.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -D_DEFAULT_SOURCE $(CFLAGS_ALL) -MMD -MP -o $@ $< $(AGENT_TEST_OBJ) $(AGENT_ARCHIVES) \
	    $(LIB) -lcmocka $(AGENT_LIBS) $(LDLIBS)
