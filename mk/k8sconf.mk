# mk/k8sconf.mk - the GPU Operator configuration writer (src/k8sconf/):
# the cluster policy file (YAML, read with libyaml) -> mig-parted config,
# device-plugin configs, node labels. An archive outside libmigsched, so
# the library keeps no YAML dependency; the CLI (`migsched k8s-config`)
# links it, the daemon can too. Needs libyaml-dev (scripts/deps/k8sconf.list).
K8SCONF_SRC := $(sort $(wildcard src/k8sconf/*.c))
K8SCONF_OBJ := $(K8SCONF_SRC:%.c=$(BUILD)/obj/%.o)
K8SCONF_LIB := $(BUILD)/libmsk8sconf.a
CLI_LIBS += $(K8SCONF_LIB)

$(CLI): LDLIBS += -lyaml

$(K8SCONF_LIB): $(K8SCONF_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@
	ar rcs $@ $^

# The policy reader's libFuzzer harness (fuzz/fuzz_k8s_policy.c), built by
# `make fuzz` like every harness, with this archive and libyaml.
$(BUILD)/fuzz/fuzz_k8s_policy: fuzz/fuzz_k8s_policy.c fuzz/fuzz.h $(K8SCONF_LIB) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Ifuzz $(CFLAGS_ALL) -fsanitize=fuzzer -MMD -MP -o $@ $< $(K8SCONF_LIB) $(LIB) \
	    -lyaml $(LDLIBS)
