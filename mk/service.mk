# mk/service.mk - migschedd, the daemon (src/service/). Compiled only into
# $(BUILD)/migschedd, never into libmigsched. Needs libmicrohttpd, jansson
# and SQLite (scripts/deps/service.list).
SVC_SRC := $(sort $(wildcard src/service/*.c))
SVC_OBJ := $(SVC_SRC:%.c=$(BUILD)/obj/%.o)
SVC_BIN := $(BUILD)/migschedd
SVC_LIBS := -lmicrohttpd -ljansson -lsqlite3 -lpthread

EXTRA_ALL += $(SVC_BIN)

$(SVC_OBJ): CPPFLAGS += -D_DEFAULT_SOURCE

$(SVC_BIN): $(SVC_OBJ) $(LIB)
	$(CC) $(CFLAGS_ALL) $(LDFLAGS) -o $@ $(SVC_OBJ) $(LIB) $(SVC_LIBS) $(LDLIBS)
