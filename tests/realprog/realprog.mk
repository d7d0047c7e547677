# SPDX-License-Identifier: MIT
# tests/realprog: programs that use glibc's timerfd_* (directly, or through
# libwayland-server and libsystemd's sd-event), run without and with
# libtfd-preload.so by tests/realprog/run.sh.  Included by the Makefile;
# `make check` runs check-realprog.  The Wayland and sd-event programs need
# the packages libwayland-dev and libsystemd-dev (pkg-config names
# wayland-server and libsystemd): without them they are skipped, and the
# run says so.  So is stress-ng's timerfd stressor without stress-ng.

RP := $(B)/realprog
RP_CFLAGS := -std=gnu11 $(OPT) $(WARN) $(WERROR) $(HARDEN_CPPFLAGS) $(CPPFLAGS) \
             $(SANFLAGS) $(HARDEN_CFLAGS) $(CFLAGS)
RP_LDFLAGS := $(SANFLAGS) $(HARDEN_LDFLAGS) $(LDFLAGS)
RP_WL := $(shell pkg-config --exists wayland-server 2>/dev/null && echo yes)
RP_SD := $(shell pkg-config --exists libsystemd 2>/dev/null && echo yes)
RP_CXX := $(shell command -v $(CXX) >/dev/null 2>&1 && echo yes)
# AddressSanitizer's run-time, where the compiler has it (not in a
# sanitizer's build of the tree: its programs are built so already).
RP_ASAN := $(if $(SAN),,$(shell echo 'int main(void){return 0;}' | \
    $(CC) -x c -fsanitize=address -o /dev/null - >/dev/null 2>&1 && echo yes))
# The kernel's io_uring header (linux-libc-dev) for vuring.
RP_URING := $(wildcard /usr/include/linux/io_uring.h)
RP_BIN := $(RP)/timerfd_glibc $(RP)/dropin $(RP)/deliver $(RP)/rawsys $(RP)/ticker $(RP)/overhead \
          $(RP)/onehop $(RP)/clockjump \
          $(RP)/nowork $(RP)/noalloc \
          $(RP)/vthreads $(RP)/vclock $(RP)/vwaits $(RP)/vtree $(RP)/vbusy $(RP)/vdeadline \
          $(RP)/vsyscall $(RP)/vscale $(RP)/vnagle $(RP)/vpark $(RP)/vctor \
          $(RP)/setclose \
          $(RP)/apivirt $(RP)/apierrs \
          $(if $(RP_URING),$(RP)/vuring) \
          $(if $(RP_WL),$(RP)/wl_timers) $(if $(RP_SD),$(RP)/sd_timers) \
          $(if $(RP_CXX),$(RP)/cvwait) $(if $(RP_ASAN),$(RP)/sanitized)

$(RP):
	mkdir -p $@
$(RP)/dropin $(RP)/deliver: $(RP)/%: tests/realprog/%.c | $(RP)
	$(CC) $(RP_CFLAGS) -pthread $< -o $@ $(RP_LDFLAGS) -pthread
$(RP)/timerfd_glibc $(RP)/ticker $(RP)/rawsys $(RP)/onehop $(RP)/noalloc \
    $(RP)/vscale $(RP)/vnagle: \
    $(RP)/%: tests/realprog/%.c | $(RP)
	$(CC) $(RP_CFLAGS) $< -o $@ $(RP_LDFLAGS)
$(RP)/vthreads $(RP)/vclock $(RP)/vwaits $(RP)/vtree $(RP)/vbusy $(RP)/vdeadline \
    $(RP)/vsyscall $(RP)/vuring $(RP)/vpark: $(RP)/%: \
    tests/realprog/%.c | $(RP)
	$(CC) $(RP_CFLAGS) -pthread $< -o $@ $(RP_LDFLAGS) -pthread
$(RP)/setclose $(RP)/apivirt $(RP)/apierrs: $(RP)/%: tests/realprog/%.c \
    $(SHARED) | $(RP)
	$(CC) $(RP_CFLAGS) -Iinclude -pthread $< -o $@ -L$(B) -ltfd \
	    -Wl,-rpath,'$$ORIGIN/..' $(RP_LDFLAGS) -pthread
# vctor's library, whose constructor runs before the preload's.
$(RP)/libvctor.so: tests/realprog/vctorlib.c | $(RP)
	$(CC) $(RP_CFLAGS) -fPIC -shared -pthread $< -o $@ $(RP_LDFLAGS) \
	    -pthread
$(RP)/vctor: tests/realprog/vctor.c $(RP)/libvctor.so | $(RP)
	$(CC) $(RP_CFLAGS) $< -o $@ -L$(RP) -lvctor -Wl,-rpath,'$$ORIGIN' \
	    $(RP_LDFLAGS)
# clockjump defines clock_gettime for the preload to call.
$(RP)/clockjump: tests/realprog/clockjump.c | $(RP)
	$(CC) $(RP_CFLAGS) $< -o $@ $(RP_LDFLAGS) -Wl,--export-dynamic -ldl
# nowork defines snprintf and pthread_mutex_lock for the preload to call.
$(RP)/nowork: tests/realprog/nowork.c | $(RP)
	$(CC) $(RP_CFLAGS) -pthread $< -o $@ $(RP_LDFLAGS) -pthread \
	    -Wl,--export-dynamic -ldl
$(RP)/sanitized: tests/realprog/sanitized.c | $(RP)
	$(CC) $(RP_CFLAGS) -fsanitize=address $< -o $@ $(RP_LDFLAGS) \
	    -fsanitize=address
$(RP)/cvwait: tests/realprog/cvwait.cc | $(RP)
	$(CXX) -std=c++17 $(OPT) -Wall -Wextra $(WERROR) $(HARDEN_CPPFLAGS) \
	    $(CPPFLAGS) $(SANFLAGS) $(HARDEN_CFLAGS) -pthread $< -o $@ \
	    $(RP_LDFLAGS) -pthread
$(RP)/overhead: tests/realprog/overhead.c | $(RP)
	$(CC) $(RP_CFLAGS) $< -o $@ $(RP_LDFLAGS) -ldl
$(RP)/wl_timers: tests/realprog/wl_timers.c tests/realprog/helper.h | $(RP)
	$(CC) $(RP_CFLAGS) -pthread $$(pkg-config --cflags wayland-server) $< \
	    -o $@ $$(pkg-config --libs wayland-server) $(RP_LDFLAGS) -pthread
$(RP)/sd_timers: tests/realprog/sd_timers.c tests/realprog/helper.h | $(RP)
	$(CC) $(RP_CFLAGS) -pthread $$(pkg-config --cflags libsystemd) $< \
	    -o $@ $$(pkg-config --libs libsystemd) $(RP_LDFLAGS) -pthread
# The headers the programs share.
$(RP)/timerfd_glibc $(RP)/dropin $(RP)/rawsys: tests/realprog/facts.h
$(RP)/vclock $(RP)/vwaits: tests/realprog/units.h
$(RP)/vscale $(RP)/vpark: tests/realprog/syscr.h

.PHONY: check-realprog realprog-overhead
check-realprog: $(PRELOAD) $(TOOL) $(RP_BIN) $(EX)/eventloop-timerfd
	@test -n "$(RP_WL)" || echo "realprog: skipped the Wayland test:" \
	    "pkg-config finds no wayland-server (apt-get install libwayland-dev)"
	@test -n "$(RP_SD)" || echo "realprog: skipped the sd-event test:" \
	    "pkg-config finds no libsystemd (apt-get install libsystemd-dev)"
	TFD_TOOL=$(TOOL) TFD_SAN=$(SAN) TFD_EXAMPLES=$(EX) \
	    sh tests/realprog/run.sh $(RP)

# The cost of the preload on calls that do not concern a timer; prints
# figures, never fails (tfd-preload(7)).
realprog-overhead: $(PRELOAD) $(TOOL) $(RP)/overhead
	$(RP)/overhead
	$(TOOL) exec -- $(RP)/overhead
