# SPDX-License-Identifier: MIT
# tests/host: what daemons, servers, plugin hosts and sandboxed programs
# do around their timers (tests/host/host.h), natively and through tfd.
# Included by the Makefile; `make check` runs check-host.  One case:
# make check-host HOST_CASES=NAME.

HOST := $(B)/host
HOST_SRC := $(wildcard tests/host/*.c)
HOST_CASES ?=
HOST_CFLAGS := -std=gnu11 $(OPT) $(WARN) $(WERROR) -Wno-missing-prototypes \
               $(HARDEN_CPPFLAGS) $(CPPFLAGS) $(SANFLAGS) $(HARDEN_CFLAGS) \
               $(CFLAGS)

$(HOST):
	mkdir -p $@
$(HOST)/host: $(HOST_SRC) tests/host/host.h | $(HOST)
	$(CC) $(HOST_CFLAGS) -pthread $(HOST_SRC) -o $@ $(SANFLAGS) \
	    $(HARDEN_LDFLAGS) $(LDFLAGS) -pthread -ldl
$(HOST)/host-lib: $(HOST_SRC) tests/host/host.h $(STATIC) | $(HOST)
	$(CC) $(HOST_CFLAGS) -DHOST_LIB -Iinclude -pthread $(HOST_SRC) $(STATIC) \
	    -o $@ $(SANFLAGS) $(HARDEN_LDFLAGS) $(LDFLAGS) -pthread -ldl

# Plugins a host dlopen()s (tests/host/lifetime.c), beside the host
# programs, where the cases find them: on glibc's timerfd_* (for host),
# linked with libtfd.so (found through $ORIGIN/..) and with the library's
# -fPIC objects linked in (for host-lib).  Their source is in a folder of
# its own, out of HOST_SRC.
PLUGIN_SRC := tests/host/plugin/plugin.c
PLUGINS := $(HOST)/plugin-timerfd.so $(HOST)/plugin-lib.so \
           $(HOST)/plugin-static.so
$(HOST)/plugin-timerfd.so: $(PLUGIN_SRC) tests/host/host.h | $(HOST)
	$(CC) $(HOST_CFLAGS) -fPIC -shared $(PLUGIN_SRC) -o $@ $(SANFLAGS) \
	    $(HARDEN_LDFLAGS) $(LDFLAGS)
$(HOST)/plugin-lib.so: $(PLUGIN_SRC) tests/host/host.h $(SHARED) | $(HOST)
	$(CC) $(HOST_CFLAGS) -DHOST_LIB -Iinclude -fPIC -shared $(PLUGIN_SRC) \
	    -o $@ -L$(B) -ltfd -Wl,-rpath,'$$ORIGIN/..' $(SANFLAGS) \
	    $(HARDEN_LDFLAGS) $(LDFLAGS)
$(HOST)/plugin-static.so: $(PLUGIN_SRC) tests/host/host.h $(PIC_OBJ) | $(HOST)
	$(CC) $(HOST_CFLAGS) -DHOST_LIB -Iinclude -fPIC -shared $(PLUGIN_SRC) \
	    $(PIC_OBJ) -o $@ $(ALL_LDFLAGS)

.PHONY: check-host
check-host: $(PRELOAD) $(TOOL) $(HOST)/host $(HOST)/host-lib $(PLUGINS)
	TFD_TOOL=$(TOOL) sh tests/host/run.sh $(HOST) $(HOST_CASES)
