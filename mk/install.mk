# mk/install.mk - `make install` with PREFIX and DESTDIR.
#
#   make install [PREFIX=/usr/local] [DESTDIR=stage]
#   make uninstall [PREFIX=...] [DESTDIR=...]
#   make man            only the man page, build/migsched.1
#
# Installs the CLI (bin/migsched), the library as static
# (lib/libmigsched.a) and shared (lib/libmigsched.so.X.Y.Z with the soname
# libmigsched.so.X and the link libmigsched.so), the public headers
# (include/migsched/*.h), a pkg-config file (lib/pkgconfig/migsched.pc) and
# the man page share/man/man1/migsched.1, generated from the CLI's own
# --help text (scripts/man.sh). The version comes from the file VERSION
# only; its first number is the soname's. The shared library is linked from
# position-independent objects built in their own directory, build-pic/.

MS_VERSION   := $(shell cat VERSION 2>/dev/null || echo 0.0.0)
MS_SOMAJOR   := $(firstword $(subst ., ,$(MS_VERSION)))
PREFIX       ?= /usr/local
BINDIR       ?= $(PREFIX)/bin
LIBDIR       ?= $(PREFIX)/lib
INCLUDEDIR   ?= $(PREFIX)/include
MANDIR       ?= $(PREFIX)/share/man
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
INSTALL      ?= install
PIC_BUILD    := build-pic
SO_REAL      := libmigsched.so.$(MS_VERSION)
SO_NAME      := libmigsched.so.$(MS_SOMAJOR)

.PHONY: install uninstall shared pic-shared man
# the man page alone: build/migsched.1 (man -l build/migsched.1)
man: $(BUILD)/migsched.1


# The shared library, from -fPIC objects in build-pic/ (a sub-make, so
# that its objects never mix with build/'s).
shared:
	$(MAKE) BUILD=$(PIC_BUILD) OPT="-O2 -g" SAN= CFLAGS="-fPIC $(CFLAGS)" pic-shared

pic-shared: $(BUILD)/$(SO_REAL)

$(BUILD)/$(SO_REAL): $(LIB_OBJ)
	$(CC) -shared -Wl,-soname,$(SO_NAME) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/migsched.1: $(CLI) scripts/man.sh VERSION
	bash scripts/man.sh $(CLI) $(MS_VERSION) > $@.tmp && mv $@.tmp $@

$(BUILD)/migsched.pc: VERSION mk/install.mk
	@mkdir -p $(dir $@)
	printf '%s\n' 'prefix=$(PREFIX)' 'exec_prefix=$${prefix}' 'libdir=$(LIBDIR)' \
	    'includedir=$(INCLUDEDIR)' '' 'Name: migsched' \
	    'Description: fragmentation-aware scheduler for NVIDIA Multi-Instance GPUs' \
	    'Version: $(MS_VERSION)' 'Libs: -L$${libdir} -lmigsched' 'Libs.private: -lm' \
	    'Cflags: -I$${includedir}' > $@

install: all shared $(BUILD)/migsched.1 $(BUILD)/migsched.pc
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR)/migsched \
	    $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(PKGCONFIGDIR)
	$(INSTALL) -m 755 $(CLI) $(DESTDIR)$(BINDIR)/migsched
	$(INSTALL) -m 644 $(LIB) $(DESTDIR)$(LIBDIR)/libmigsched.a
	$(INSTALL) -m 755 $(PIC_BUILD)/$(SO_REAL) $(DESTDIR)$(LIBDIR)/$(SO_REAL)
	ln -sf $(SO_REAL) $(DESTDIR)$(LIBDIR)/$(SO_NAME)
	ln -sf $(SO_NAME) $(DESTDIR)$(LIBDIR)/libmigsched.so
	$(INSTALL) -m 644 include/migsched/*.h $(DESTDIR)$(INCLUDEDIR)/migsched/
	$(INSTALL) -d $(DESTDIR)$(INCLUDEDIR)/migsched/research
	$(INSTALL) -m 644 include/migsched/research/*.h $(DESTDIR)$(INCLUDEDIR)/migsched/research/
	$(INSTALL) -m 644 $(BUILD)/migsched.1 $(DESTDIR)$(MANDIR)/man1/migsched.1
	$(INSTALL) -m 644 $(BUILD)/migsched.pc $(DESTDIR)$(PKGCONFIGDIR)/migsched.pc

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/migsched $(DESTDIR)$(LIBDIR)/libmigsched.a \
	    $(DESTDIR)$(LIBDIR)/$(SO_REAL) $(DESTDIR)$(LIBDIR)/$(SO_NAME) \
	    $(DESTDIR)$(LIBDIR)/libmigsched.so $(DESTDIR)$(MANDIR)/man1/migsched.1 \
	    $(DESTDIR)$(PKGCONFIGDIR)/migsched.pc
	rm -rf $(DESTDIR)$(INCLUDEDIR)/migsched

.PHONY: clean-pic
clean: clean-pic
clean-pic:
	rm -rf $(PIC_BUILD)
