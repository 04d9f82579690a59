# mk/backend.mk - what both daemons link: the backends (src/backend/: sim,
# dry-run, nvml, agent behind one ops table, backend.h) and the shared
# daemon plumbing (src/daemon/: logs, clocks, HTTP helpers, JSON text).
# Archives outside libmigsched (they do I/O), linked into migschedd
# (mk/service.mk) and migsched-agent (mk/agent.mk), which name them by path
# since this file sorts after agent.mk. The nvml backend links src/nvml/
# (mk/nvml.mk); the agent backend libcurl.
DAEMON_SRC := $(sort $(wildcard src/daemon/*.c))
DAEMON_OBJ := $(DAEMON_SRC:%.c=$(BUILD)/obj/%.o)
DAEMON_LIB := $(BUILD)/libmsdaemon.a
BACKEND_SRC := $(sort $(wildcard src/backend/*.c))
BACKEND_OBJ := $(BACKEND_SRC:%.c=$(BUILD)/obj/%.o)
BACKEND_LIB := $(BUILD)/libmsbackend.a
# link order: the backends, then what they use
BACKEND_LIBS := $(BACKEND_LIB) $(BUILD)/libmsnvml.a $(DAEMON_LIB) -lcurl -ljansson -lpthread

$(DAEMON_OBJ) $(BACKEND_OBJ): CPPFLAGS += -D_DEFAULT_SOURCE

$(DAEMON_LIB): $(DAEMON_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@
	ar rcs $@ $^

$(BACKEND_LIB): $(BACKEND_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@
	ar rcs $@ $^
