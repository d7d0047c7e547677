# SPDX-License-Identifier: MIT
# tests/host: what daemons, servers, plugin hosts and sandboxed programs
# do around their timers (tests/host/host.h), natively and through tfd.
# Included by the Makefile; `make check` runs check-host.  One case:
# make check-host HOST_CASES=NAME.

HOST := $(B)/host
HOST_SRC := $(wildcard tests/host/*.c)
HOST_CASES ?=
HOST_CFLAGS := -std=gnu11 $(OPT) $(WARN) -Wno-missing-prototypes $(CPPFLAGS) $(SANFLAGS) \
               $(CFLAGS)

$(HOST):
	mkdir -p $@
$(HOST)/host: $(HOST_SRC) tests/host/host.h | $(HOST)
	$(CC) $(HOST_CFLAGS) -pthread $(HOST_SRC) -o $@ $(SANFLAGS) $(LDFLAGS) \
	    -pthread -ldl
$(HOST)/host-lib: $(HOST_SRC) tests/host/host.h $(STATIC) | $(HOST)
	$(CC) $(HOST_CFLAGS) -DHOST_LIB -Iinclude -pthread $(HOST_SRC) $(STATIC) \
	    -o $@ $(SANFLAGS) $(LDFLAGS) -pthread -ldl

.PHONY: check-host
check-host: $(PRELOAD) $(TOOL) $(HOST)/host $(HOST)/host-lib
	TFD_TOOL=$(TOOL) sh tests/host/run.sh $(HOST) $(HOST_CASES)
