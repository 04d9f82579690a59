# mk/agent.mk - migsched-agent, the per-node executor (src/agent/,
# docs/agent.md). It executes through migschedd's backends: the agent
# compiles src/service/backend.c (and the agent backend it dispatches to,
# the JSON text writer, the logger and the HTTP helpers) into itself rather
# than copying them. Needs libmicrohttpd, jansson and libcurl
# (scripts/deps/service.list).
AGENT_SRC := $(sort $(wildcard src/agent/*.c))
AGENT_OBJ := $(AGENT_SRC:%.c=$(BUILD)/obj/%.o)
AGENT_SVC_OBJ := $(BUILD)/obj/src/service/backend.o $(BUILD)/obj/src/service/backend_agent.o \
                 $(BUILD)/obj/src/service/jtext.o \
                 $(BUILD)/obj/src/service/log.o $(BUILD)/obj/src/service/http_util.o
AGENT_BIN := $(BUILD)/migsched-agent
AGENT_LIBS := -lmicrohttpd -ljansson -lcurl -lpthread

EXTRA_ALL += $(AGENT_BIN)

$(AGENT_OBJ): CPPFLAGS += -D_DEFAULT_SOURCE

$(AGENT_BIN): $(AGENT_OBJ) $(AGENT_SVC_OBJ) $(NVML_LIB) $(LIB)
	$(CC) $(CFLAGS_ALL) $(LDFLAGS) -o $@ $(AGENT_OBJ) $(AGENT_SVC_OBJ) $(NVML_LIB) $(LIB) $(AGENT_LIBS) $(LDLIBS)

# The request parser's libFuzzer harness (fuzz/fuzz_agent_request.c): only
# req.c, which is pure.
$(BUILD)/fuzz/fuzz_agent_request: fuzz/fuzz_agent_request.c fuzz/fuzz.h $(BUILD)/obj/src/agent/req.o $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -D_DEFAULT_SOURCE -Ifuzz $(CFLAGS_ALL) -fsanitize=fuzzer -o $@ $< \
	    $(BUILD)/obj/src/agent/req.o $(LIB) -ljansson $(LDLIBS)

# tests/agent/test_agent.c (cmocka): the parsers, the CDI files and the
# create path in-process, on the sim backend; every agent object but main.o
# and http.o.
AGENT_TEST := $(BUILD)/tests/agent/test_agent
AGENT_TEST_OBJ := $(filter-out $(BUILD)/obj/src/agent/main.o $(BUILD)/obj/src/agent/http.o,$(AGENT_OBJ))
EXTRA_TESTS  += $(AGENT_TEST)
OWN_TEST_SRC += tests/agent/test_agent.c

$(AGENT_TEST): tests/agent/test_agent.c $(AGENT_TEST_OBJ) $(AGENT_SVC_OBJ) $(NVML_LIB) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -D_DEFAULT_SOURCE $(CFLAGS_ALL) -MMD -MP -o $@ $< $(AGENT_TEST_OBJ) $(AGENT_SVC_OBJ) \
	    $(NVML_LIB) $(LIB) -lcmocka $(AGENT_LIBS) $(LDLIBS)
