# mk/service.mk - migschedd, the daemon (src/service/). Compiled only into
# $(BUILD)/migschedd, never into libmigsched. Needs libmicrohttpd, jansson
# and SQLite (scripts/deps/service.list); the backends and the shared
# daemon plumbing come from mk/backend.mk's archives (libcurl for the agent
# backend).
SVC_SRC := $(sort $(wildcard src/service/*.c))
SVC_OBJ := $(SVC_SRC:%.c=$(BUILD)/obj/%.o)
SVC_BIN := $(BUILD)/migschedd
SVC_LIBS := -lmicrohttpd -ljansson -lsqlite3 -lcurl -lpthread

EXTRA_ALL += $(SVC_BIN)

$(SVC_OBJ): CPPFLAGS += -D_DEFAULT_SOURCE

# the backends (mk/backend.mk: the nvml one links src/nvml/, mk/nvml.mk)
$(SVC_BIN): $(SVC_OBJ) $(BACKEND_LIB) $(NVML_LIB) $(DAEMON_LIB) $(LIB)
	$(CC) $(CFLAGS_ALL) $(LDFLAGS) -o $@ $(SVC_OBJ) $(BACKEND_LIBS) $(LIB) $(SVC_LIBS) $(LDLIBS)

# The CLI's client commands (status, submit, jobs, cancel, watch): src/client/,
# an archive linked into the CLI with libcurl and jansson.
CLIENT_SRC := $(sort $(wildcard src/client/*.c))
CLIENT_OBJ := $(CLIENT_SRC:%.c=$(BUILD)/obj/%.o)
CLIENT_LIB := $(BUILD)/libmsclient.a
CLI_LIBS += $(CLIENT_LIB)

$(CLIENT_OBJ): CPPFLAGS += -D_DEFAULT_SOURCE
$(CLI): LDLIBS += -lcurl -ljansson

$(CLIENT_LIB): $(CLIENT_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@
	ar rcs $@ $^

# The request parser's libFuzzer harness (fuzz/fuzz_svc_request.c): built by
# `make fuzz` (mk/fuzz.mk picks up fuzz/fuzz_*.c) with every service object
# but main.o, run by scripts/fuzz.sh like every other harness.
SVC_FUZZ_OBJ := $(filter-out $(BUILD)/obj/src/service/main.o,$(SVC_OBJ))
$(BUILD)/fuzz/fuzz_svc_request: fuzz/fuzz_svc_request.c fuzz/fuzz.h $(SVC_FUZZ_OBJ) $(BACKEND_LIB) $(NVML_LIB) \
                                 $(DAEMON_LIB) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -D_DEFAULT_SOURCE -Ifuzz $(CFLAGS_ALL) -fsanitize=fuzzer -MMD -MP -o $@ $< \
	    $(SVC_FUZZ_OBJ) $(BACKEND_LIBS) $(LIB) $(SVC_LIBS) $(LDLIBS)
