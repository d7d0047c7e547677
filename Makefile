# SPDX-License-Identifier: MIT
# tfd - timer file descriptors in user space.  Plain GNU make, no generator.
#
#   make                 libtfd.a, libtfd.so, libtfd-preload.so, the tfd program
#                        (warnings shown, not errors; hardened by default
#                        when no CFLAGS, CPPFLAGS, LDFLAGS are given)
#   make demo            run the demo
#   make check           build and run every test; TESTS="NAME -x NAME"
#                        picks them by name in every stage (below); here,
#                        in test-programs and in fuzz, warnings are errors
#                        (WERROR=-Werror; WERROR= or WERROR=-Werror says)
#   make install         PREFIX=/usr/local DESTDIR= (both optional); also
#                        the GNU names prefix= exec_prefix= bindir= libdir=
#                        includedir= datarootdir= mandir= (upper case wins)
#   make SAN=address,undefined check   the same under sanitizers
#   make check-valgrind  the tests under valgrind
#   make fuzz            libFuzzer on the operation checker (clang)
#   make dist            build/tfd-VERSION.tar.gz: the files git tracks
#   make -f SRC/Makefile [GOAL]...   out of tree: builds in the current
#                        directory from the tree SRC, writing nothing there

# Out of tree: run in a directory of its own, this Makefile runs make in
# the source tree with B set to that directory, where everything is
# written (objects, programs, the files the tests leave).
SRCDIR := $(realpath $(dir $(lastword $(MAKEFILE_LIST))))
ifneq ($(SRCDIR),$(CURDIR))
OUT := $(abspath $(if $(filter command line,$(origin B)),$(B),$(CURDIR)))
IN_TREE = $(MAKE) --no-print-directory -C $(SRCDIR) $(MAKEOVERRIDES) B=$(OUT)
.PHONY: out-of-tree $(MAKECMDGOALS)
# make -q: the tree's answer, given as this make's own.
ifneq ($(findstring q,$(firstword -$(MAKEFLAGS))),)
OOT_Q := $(shell $(IN_TREE) -q $(MAKECMDGOALS) >/dev/null 2>&1 && echo y)
endif
ifeq ($(OOT_Q),y)
out-of-tree $(MAKECMDGOALS): ;
else
out-of-tree:
	+@$(IN_TREE) $(MAKECMDGOALS)
$(filter-out out-of-tree,$(MAKECMDGOALS)): out-of-tree
	@:
endif
else

# The version is written once, in include/tfd.h (TFD_VERSION_MAJOR...).
VERSION := $(shell awk '/^.define TFD_VERSION_(MAJOR|MINOR|PATCH) / \
    { v = v (v == "" ? "" : ".") $$3 } END { print v }' include/tfd.h)
SOMAJOR := 0
# The directories: the GNU coding standards' names (prefix, exec_prefix,
# bindir, libdir, includedir, datarootdir, mandir) and this Makefile's
# upper-case ones, which are aliases; each name is set on the command
# line or in the environment, or derived as shown.  When both spellings
# of one are given, the upper-case one wins (PREFIX=/a prefix=/b installs
# in /a, and derives the other directories from /a).
prefix ?= /usr/local
PREFIX ?= $(prefix)
exec_prefix ?= $(PREFIX)
bindir ?= $(exec_prefix)/bin
libdir ?= $(exec_prefix)/lib
includedir ?= $(PREFIX)/include
datarootdir ?= $(PREFIX)/share
mandir ?= $(datarootdir)/man
BINDIR ?= $(bindir)
LIBDIR ?= $(libdir)
INCLUDEDIR ?= $(includedir)
MANDIR ?= $(mandir)
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
CMAKEDIR ?= $(LIBDIR)/cmake/tfd
BASHCOMPDIR ?= $(datarootdir)/bash-completion/completions
# The preload library has a directory of its own, as libfaketime's: it is
# not a library to link with (tfd exec looks for it there: tfd(1)).
PRELOADDIR := $(LIBDIR)/tfd
SEEDS ?= ../shared/seeds

CC ?= cc
CXX ?= c++
OPT ?= -O2 -g
# Warnings are shown always, and are errors (WERROR=-Werror) where the
# code is tested: in make check and its stages (check-*), test-programs
# and fuzz, which CI runs.  A plain make or make install, a user's or a
# package's, builds with a newer compiler's new warnings shown, not
# fatal.  WERROR= or WERROR=-Werror on the command line says which.  A
# change of it rebuilds everything ($(B)/werror.stamp): make check after
# a plain make still compiles every file with -Werror.
WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes \
        -Wmissing-prototypes -Wpointer-arith -Wcast-qual -Wvla
WERROR_GOALS := check check-% test-programs fuzz
WERROR ?= $(if $(filter $(WERROR_GOALS),$(MAKECMDGOALS)),-Werror)
CFLAGS ?=
CPPFLAGS ?=
LDFLAGS ?=
SAN ?=
ifneq ($(SAN),)
SANFLAGS := -fsanitize=$(SAN) -fno-omit-frame-pointer -fno-sanitize-recover=all
# The sanitizer builds check the lock rules too (src/lockorder.h).
LOCKCHECK := -DTFD_DEBUG_LOCKS
endif
# Hardening, when the user gives no flags of that kind (a distribution's
# own, from dpkg-buildflags say, replace it): the stack protector with no
# CFLAGS; glibc's checked calls (_FORTIFY_SOURCE, which needs an
# optimisation) with neither CPPFLAGS nor CFLAGS, undefined first for a
# compiler that defines it itself (defined again, it would warn); a
# read-only GOT bound at load (RELRO, BIND_NOW) with no LDFLAGS.  Not
# _FORTIFY_SOURCE under the sanitizers: they intercept read, memcpy...,
# not glibc's __read_chk, __memcpy_chk...  The preload, which defines
# read() and poll() itself, undefines it in src/preload/preload.h, and
# exports glibc's __read_chk and __poll_chk for the programs built so.
FORTIFY := $(if $(filter-out -O0,$(filter -O%,$(OPT))),-U_FORTIFY_SOURCE \
    -D_FORTIFY_SOURCE=2)
HARDEN_CFLAGS := $(if $(strip $(CFLAGS)),,-fstack-protector-strong)
HARDEN_CPPFLAGS := $(if $(strip $(CPPFLAGS) $(CFLAGS) $(SAN)),,$(FORTIFY))
HARDEN_LDFLAGS := $(if $(strip $(LDFLAGS)),,-Wl,-z,relro -Wl,-z,now)
# -MMD -MP: each object's header dependencies, in a .d file beside it.
ALL_CFLAGS := -std=gnu11 $(OPT) $(WARN) $(WERROR) -Iinclude -Isrc \
              $(HARDEN_CPPFLAGS) $(CPPFLAGS) -pthread -MMD -MP $(SANFLAGS) \
              $(LOCKCHECK) $(HARDEN_CFLAGS) $(CFLAGS)
ALL_LDFLAGS := -pthread -ldl $(SANFLAGS) $(HARDEN_LDFLAGS) $(LDFLAGS)

comma := ,
B := build$(if $(SAN),-$(subst $(comma),-,$(SAN)))

# One job per file: src/core (pure arithmetic), src/engine (the default
# backend, see src/engine/engine.h), the kernel passthrough, the API layer
# and its doors (src/api.h), timer sets over a backend, the futex calls
# (also virtual time's).
LIB_SRC := $(wildcard src/core/*.c) $(wildcard src/engine/*.c) \
           src/backend_kernel.c src/api.c src/doors.c src/sets.c \
           src/version.c src/lockorder.c src/futex.c
LIB_HDR := include/tfd.h $(wildcard src/*.h src/*/*.h)
LIB_OBJ := $(LIB_SRC:src/%.c=$(B)/lib/%.o)
PIC_OBJ := $(LIB_SRC:src/%.c=$(B)/pic/%.o)
TEST_SRC := $(wildcard tests/test_*.c)
TEST_OBJ := $(TEST_SRC:tests/%.c=$(B)/tests/%.o) $(B)/tests/run.o \
            $(B)/tests/loop.o $(B)/tests/opcheck.o $(B)/tests/opcheck_set.o
# The conformance suite (conform/): shipped in `tfd conform`, and run by
# the test binary.
CONF_SRC := $(wildcard conform/*.c)
CONF_OBJ := $(CONF_SRC:conform/%.c=$(B)/conform/%.o)
TEST_OBJ += $(CONF_OBJ)
# A page that is another's (tfd_gettime.3) is `.so man/OTHER.3`: it renders
# in the tree (man -l man/tfd_gettime.3, from here), and make install
# writes it as `.so man3/OTHER.3`, the path man(1) resolves when installed.
MAN_PAGES := $(wildcard man/*.[1-9])

STATIC := $(B)/libtfd.a
SHARED := $(B)/libtfd.so.$(VERSION)
TOOL := $(B)/tfd
TESTBIN := $(B)/tfd-test
SEEDBIN := $(B)/seed-test
PRELOAD := $(B)/libtfd-preload.so

.PHONY: all demo check check-header check-valgrind fuzz bench install \
        uninstall clean examples dist
all: $(STATIC) $(SHARED) $(PRELOAD) $(TOOL) $(B)/tfd.pc \
    $(B)/tfd-config.cmake $(B)/tfd-config-version.cmake

# What the build compiles in of its configuration: the directories (the
# tfd program looks for libtfd-preload.so in LIBDIR/tfd; tfd.pc and the
# CMake package name them)
# and the git description of the tree (tfd --version).  The stamp is
# rewritten only when that changes, so that `make install PREFIX=X` after a
# plain `make` rebuilds what depends on it, and nothing else.  It is
# compared and rewritten as the Makefile is read, not by a rule that
# always runs: right after a build, `make -q` says it is up to date.
GIT_DESCRIBE := $(shell [ "$$(git rev-parse --show-toplevel 2>/dev/null)" \
    = "$(CURDIR)" ] && git describe --always --dirty 2>/dev/null)
CONFIG := $(strip PREFIX=$(PREFIX) LIBDIR=$(LIBDIR) INCLUDEDIR=$(INCLUDEDIR) \
          VERSION=$(VERSION) GIT=$(GIT_DESCRIBE))
ifneq ($(if $(MAKECMDGOALS),$(filter-out clean dist,$(MAKECMDGOALS)),all),)
ifneq ($(CONFIG),$(shell cat $(B)/config.stamp 2>/dev/null))
$(shell mkdir -p $(B) && echo '$(CONFIG)' > $(B)/config.stamp)
endif
endif
$(B)/config.stamp:
	mkdir -p $(@D) && echo '$(CONFIG)' > $@
# Whether warnings are errors (WERROR), which every compile line says:
# kept as the stamp above, but a make -n or -q that finds it changed
# writes nothing, and says that everything would be compiled again.
WERROR_NOW := WERROR=$(WERROR)
DRY_RUN := $(findstring n,$(firstword -$(MAKEFLAGS)))$(findstring \
    q,$(firstword -$(MAKEFLAGS)))
ifneq ($(if $(MAKECMDGOALS),$(filter-out clean dist,$(MAKECMDGOALS)),all),)
ifneq ($(WERROR_NOW),$(shell cat $(B)/werror.stamp 2>/dev/null))
ifeq ($(DRY_RUN),)
$(shell mkdir -p $(B) && echo '$(WERROR_NOW)' > $(B)/werror.stamp)
else
$(B)/werror.stamp: FORCE
endif
endif
endif
$(B)/werror.stamp:
	mkdir -p $(@D) && echo '$(WERROR_NOW)' > $@
# pkg-config's file and CMake's (find_package(tfd CONFIG): tfd::tfd, the
# shared library, and tfd::tfd_static), with the directories written in,
# relative to where each file is installed when they are under PREFIX:
# moved elsewhere with the rest of the prefix, they still find it.
# tfd.pc's prefix is ${pcfiledir}/.. (as many as PKGCONFIGDIR is deep
# under PREFIX), its libdir and includedir ${prefix}/...; the CMake
# package computes its prefix from CMAKE_CURRENT_LIST_DIR the same way.
# A directory not under PREFIX (LIBDIR=/elsewhere) is written absolute,
# and so is PREFIX when the file itself is not under it.  (Under /usr,
# -I/usr/lib/pkgconfig/../../include is /usr/include by another name:
# gcc and clang recognise it as the system's and drop it.)
empty :=
space := $(empty) $(empty)
# $(call below,DIR,BASE): DIR as a path under BASE ("lib", "." for BASE
# itself), or nothing when DIR is not BASE nor under it.
canon = $(patsubst %//,%/,$(abspath $1)/)
below = $(if $(filter $(call canon,$2)%,$(call canon,$1)),$(or $(patsubst \
    %/,%,$(patsubst $(call canon,$2)%,%,$(call canon,$1))),.))
# $(call up,lib/pkgconfig): ../.. (nothing for .)
up = $(subst $(space),/,$(foreach d,$(filter-out .,$(subst /, ,$1)),..))
# $(call rel,DIR,VAR): DIR as ${VAR}/PATH (VAR names PREFIX in the file),
# or DIR itself when it is not under PREFIX.
rel = $(if $(call below,$1,$(PREFIX)),$(patsubst %/.,%,$${$2}/$(call \
    below,$1,$(PREFIX))),$1)
# $(call from,DIR,VAR): PREFIX as ${VAR}/../.. (VAR names DIR in the
# file), or PREFIX itself when DIR is not under it.
from = $(if $(call below,$1,$(PREFIX)),$(patsubst %/,%,$${$2}/$(call \
    up,$(call below,$1,$(PREFIX)))),$(PREFIX))
SUBST := sed -e 's|@VERSION@|$(VERSION)|' -e 's|@SOMAJOR@|$(SOMAJOR)|' \
    -e 's|@PC_PREFIX@|$(call from,$(PKGCONFIGDIR),pcfiledir)|' \
    -e 's|@PC_LIBDIR@|$(call rel,$(LIBDIR),prefix)|' \
    -e 's|@PC_INCLUDEDIR@|$(call rel,$(INCLUDEDIR),prefix)|' \
    -e 's|@CM_PREFIX@|$(call from,$(CMAKEDIR),CMAKE_CURRENT_LIST_DIR)|' \
    -e 's|@CM_LIBDIR@|$(call rel,$(LIBDIR),_tfd_prefix)|' \
    -e 's|@CM_INCLUDEDIR@|$(call rel,$(INCLUDEDIR),_tfd_prefix)|'
$(B)/tfd.pc: tfd.pc.in $(B)/config.stamp
	$(SUBST) tfd.pc.in > $@
$(B)/tfd-config.cmake: cmake/tfd-config.cmake.in $(B)/config.stamp
	$(SUBST) cmake/tfd-config.cmake.in > $@
$(B)/tfd-config-version.cmake: cmake/tfd-config-version.cmake.in \
    $(B)/config.stamp
	$(SUBST) -e "s|@SIZEOF_VOID_P@|$$(echo __SIZEOF_POINTER__ | \
	    $(CC) $(CPPFLAGS) $(CFLAGS) -E -P -)|" \
	    cmake/tfd-config-version.cmake.in > $@

# What each object includes is in its .d file (-MMD), read at the end.
$(B)/lib/%.o: src/%.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -fvisibility=hidden -c $< -o $@
$(B)/pic/%.o: src/%.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -fvisibility=hidden -fPIC -c $< -o $@
$(B)/tests/%.o: tests/%.c | $(B)/tests
	$(CC) $(ALL_CFLAGS) -c $< -o $@
$(B)/tests/loop.o: examples/loop.c | $(B)/tests
	$(CC) $(ALL_CFLAGS) -c $< -o $@
$(B)/tests/opcheck.o: fuzz/opcheck.c | $(B)/tests
	$(CC) $(ALL_CFLAGS) -c $< -o $@
$(B)/tests/opcheck_set.o: fuzz/opcheck_set.c | $(B)/tests
	$(CC) $(ALL_CFLAGS) -c $< -o $@
$(B)/tests/test_opcheck.o: fuzz/opcheck.h
# The examples (make examples): the event loop on the library, the same
# loop on glibc's timerfd_* for tfd exec (loop.c, LOOP_TIMERFD), and the
# program of the README (tests/test_examples.c runs them all).
EX := $(B)/examples
EXAMPLES := $(EX)/eventloop $(EX)/eventloop-timerfd $(EX)/readme \
    $(EX)/set_server
examples: $(EXAMPLES)
$(EX):
	mkdir -p $@
$(EX)/eventloop: examples/eventloop.c $(B)/tests/loop.o $(STATIC) | $(EX)
	$(CC) $(ALL_CFLAGS) -Iexamples $< $(B)/tests/loop.o $(STATIC) -o $@ $(ALL_LDFLAGS)
$(EX)/eventloop-timerfd: examples/eventloop.c examples/loop.c \
    examples/loop.h | $(EX)
	$(CC) $(ALL_CFLAGS) -DLOOP_TIMERFD -Iexamples examples/eventloop.c \
	    examples/loop.c -o $@ $(ALL_LDFLAGS)
$(EX)/readme: examples/readme.c include/tfd.h $(STATIC) | $(EX)
	$(CC) $(ALL_CFLAGS) $< $(STATIC) -o $@ $(ALL_LDFLAGS)
$(EX)/set_server: examples/set_server.c include/tfd.h $(STATIC) | $(EX)
	$(CC) $(ALL_CFLAGS) $< $(STATIC) -o $@ $(ALL_LDFLAGS)
$(B)/conform/%.o: conform/%.c conform/conform.h include/tfd.h | $(B)/conform
	$(CC) $(ALL_CFLAGS) -c $< -o $@
$(B)/tests/test_conform.o: conform/conform.h
$(B)/tests/test_conform.o: private ALL_CFLAGS += -Iconform
$(B)/lib $(B)/pic $(B)/tests $(B)/conform:
	mkdir -p $@

$(STATIC): $(LIB_OBJ)
	rm -f $@
	$(AR) rcs $@ $^
$(SHARED): $(PIC_OBJ) src/libtfd.map
	$(CC) -shared -Wl,-soname,libtfd.so.$(SOMAJOR) \
	    -Wl,--version-script=src/libtfd.map -Wl,-z,defs \
	    -o $@ $(PIC_OBJ) $(ALL_LDFLAGS)
	ln -sf libtfd.so.$(VERSION) $(B)/libtfd.so.$(SOMAJOR)
	ln -sf libtfd.so.$(VERSION) $(B)/libtfd.so
# LD_PRELOAD library for unmodified programs: the library's objects, the
# drop-in (src/preload: glibc's timerfd_* and the calls around them,
# tfd-preload(7)) and virtual time (src/vtime, src/vtime/vtime.h).
PRELOAD_SRC := $(wildcard src/preload/*.c src/vtime/*.c)
PRELOAD_OBJ := $(PRELOAD_SRC:src/%.c=$(B)/pic/%.o)
# The SIGSYS handler and the sigaction/signal the preload exports run
# before a sanitizer's runtime is ready (it installs its own handlers
# through them at load) and inside signal handlers: never instrumented.
$(B)/pic/preload/rawsys.o $(B)/pic/preload/exports_signals.o: \
    private ALL_CFLAGS := \
    $(filter-out -fsanitize=% -fno-sanitize-recover=%,$(ALL_CFLAGS))
# pthread_kill(3) has two versions on x86-64 (glibc 2.34 made the result
# for a thread that ended 0, where programs built before get ESRCH): the
# preload defines both there (src/preload/exports_sends.c), and does not
# wrap it elsewhere.
PRELOAD_VERSIONS := $(strip $(shell printf '%s\n' \
    '#if defined(__x86_64__) && !defined(__ILP32__)' yes '#endif' | \
    $(CC) $(CPPFLAGS) $(CFLAGS) -E -P -x c - 2>/dev/null))
PRELOAD_MAP := -Wl,--version-script=src/preload/versions.map
$(B)/pic/preload/exports_sends.o: private ALL_CFLAGS += \
    $(if $(PRELOAD_VERSIONS),-DTFD_KILL_VERSIONS)
# The preload's doors to the API are its own (src/api.h): not doors.c.
PRELOAD_LIB_OBJ := $(filter-out $(B)/pic/doors.o,$(PIC_OBJ))
$(PRELOAD): $(PRELOAD_LIB_OBJ) $(PRELOAD_OBJ) src/preload/versions.map
	$(CC) -shared -Wl,-z,defs -o $@ $(PRELOAD_LIB_OBJ) $(PRELOAD_OBJ) \
	    $(if $(PRELOAD_VERSIONS),$(PRELOAD_MAP)) \
	    $(ALL_LDFLAGS) -ldl
TOOL_SRC := $(wildcard tools/*.c tools/*/*.c)
$(TOOL): private ALL_CFLAGS += -DTFD_LIBDIR='"$(LIBDIR)"' \
    $(if $(GIT_DESCRIBE),-DTFD_GIT='"$(GIT_DESCRIBE)"')
# tfd exec is the mover of a virtual-time domain: src/vtime's mover and
# shared memory, built in from the same sources; and it reads a
# program's ELF file as the preload does (src/preload/elf.c).
TOOL_SHARED_SRC := src/vtime/shm.c src/vtime/slots.c src/vtime/mover.c \
                  src/vtime/clocks.c src/vtime/verdict.c src/vtime/procs.c \
                  src/vtime/busy.c src/vtime/procfs.c src/preload/elf.c
$(TOOL): $(TOOL_SRC) $(CONF_SRC) $(wildcard tools/*.h tools/*/*.h) \
    $(TOOL_SHARED_SRC) $(wildcard src/vtime/*.h) src/preload/elf.h \
    conform/conform.h include/tfd.h $(STATIC) $(B)/config.stamp
	$(CC) $(ALL_CFLAGS) -Itools -Iconform $(TOOL_SRC) $(CONF_SRC) \
	    $(TOOL_SHARED_SRC) $(STATIC) -o $@ $(ALL_LDFLAGS)
# test_fault.c makes allocation, thread creation and eventfd() fail
# through the linker's --wrap.
WRAP := -Wl,--wrap=calloc,--wrap=realloc,--wrap=pthread_create,--wrap=eventfd
$(TESTBIN): $(TEST_OBJ) $(STATIC)
	$(CC) $(TEST_OBJ) $(STATIC) -o $@ $(WRAP) $(ALL_LDFLAGS)

# The 2007 proposal's own test program, compiled unmodified: its syscall()
# becomes our adapter.  It was written before -Wformat: no -Werror here.
# It is not in the repository: it lives in $(SEEDS) (beside the clone in
# CI).  Without it the seed tests are skipped, and the runner says why.
SEED_SRC := $(wildcard $(SEEDS)/new_timerfd_errors_test.c)
ifneq ($(SEED_SRC),)
SEED_ENV := TFD_SEED=$(SEEDBIN)
$(SEEDBIN): $(SEED_SRC) tests/seed_adapter.c $(STATIC)
	$(CC) -std=gnu11 $(OPT) -w -pthread $(SANFLAGS) -D__NR_timerfd=4242 \
	    -Dsyscall=tfd_seed_syscall $(SEED_SRC) \
	    tests/seed_adapter.c -Iinclude $(CPPFLAGS) $(STATIC) -o $@ \
	    $(ALL_LDFLAGS)
else
SEEDBIN :=
SEED_ENV := TFD_SEED_SKIP="$(SEEDS)/new_timerfd_errors_test.c not found \
(SEEDS=DIR names the folder that holds it)"
endif

demo: $(TOOL)
	$(TOOL) run 0.5 0.2 5

# Every workload of issue 6 on the kernel's timerfd and on the engine,
# interleaved; prints figures, never fails on a slow machine (about 80 s).
# BENCH_FLAGS=--json for the same figures as JSON.  See bench/README.md.
BENCH_FLAGS ?=
bench: $(TOOL)
	$(TOOL) bench $(BENCH_FLAGS)

# The header must build as C99 and C++, alone and with <sys/timerfd.h>
# before or after it.
check-header: | $(B)/tests
	printf '#include <tfd.h>\n#include <sys/timerfd.h>\nint main(void){return tfd_close(-1);}\n' > $(B)/tests/h1.c
	printf '#include <sys/timerfd.h>\n#include <tfd.h>\nint main(void){return TFD_TIMER_ABSTIME + TFD_NONBLOCK;}\n' > $(B)/tests/h2.c
	printf '#include <tfd.h>\n#if TFD_VERSION_HEX < 0x000200\n#error\n#endif\nint main(void){return *tfd_version() != *TFD_VERSION_STRING;}\n' > $(B)/tests/h3.c
	$(CC) -std=c99 -Wall -Wextra -Werror -pedantic -Iinclude $(CPPFLAGS) -fsyntax-only $(B)/tests/h1.c
	$(CC) -std=c99 -Wall -Wextra -Werror -pedantic -Iinclude $(CPPFLAGS) -fsyntax-only $(B)/tests/h2.c
	$(CC) -std=c99 -Wall -Wextra -Werror -pedantic -Iinclude $(CPPFLAGS) -fsyntax-only $(B)/tests/h3.c
	@if command -v $(CXX) >/dev/null 2>&1; then \
	    echo "$(CXX) -x c++ -Wall -Wextra -Werror -fsyntax-only (tfd.h)"; \
	    $(CXX) -x c++ -std=c++11 -Wall -Wextra -Werror -pedantic -Iinclude $(CPPFLAGS) -fsyntax-only $(B)/tests/h1.c && \
	    $(CXX) -x c++ -std=c++11 -Wall -Wextra -Werror -pedantic -Iinclude $(CPPFLAGS) -fsyntax-only $(B)/tests/h2.c && \
	    $(CXX) -x c++ -std=c++11 -Wall -Wextra -Werror -pedantic -Iinclude $(CPPFLAGS) -fsyntax-only $(B)/tests/h3.c; \
	else echo "check-header: no C++ compiler ($(CXX)), C++ build skipped"; fi

# ThreadSanitizer refuses threads in a child forked from a threaded process
# unless told; the fork tests start the engine in the child on purpose.
# The engine's tests run twice: on its private descriptor table, and on the
# fallback that posts to the user's numbers (TFD_ENGINE_FILES=direct),
# less what tfd(7) says the fallback cannot keep (a plain close followed
# by reuse of the number; a wait on a timer another thread closes).
FALLBACK_TESTS ?= never_early periodic readiness rearm blocked_reader \
    closefrom dup2 as_many_timers no_wakeup_lost cancelling cancelled \
    fork exec idle no_descriptor duplicated one_nanosecond past_absolute \
    many_fast opcheck_random_sequences_on_the_system jump
#
# make check runs its stages one after the other, each to its end even
# when one fails (tests/check.sh), and ends with one line that sums them:
# "check: N passed, N failed, N skipped".  TESTS="NAME... -x NAME..."
# picks tests by name in every stage (tests/select.sh): a test runs when
# its name contains one of the NAMEs (any, if none is given) and none of
# those after -x.  The stages and what is named in each: unit (the
# runner's tests: build/tfd-test -l), fallback (the same), realprog
# (its groups: tests/realprog/groups/), host (its cases: build/host/host
# --list), install (the whole stage).
CHECK_STAGES := check-header check-unit check-fallback check-realprog \
    check-host check-install
export TFD_TESTS := $(TESTS)
.PHONY: check-unit check-fallback $(CHECK_STAGES)
check: test-programs
	@sh tests/check.sh "$(MAKE)" $(CHECK_STAGES)
check-unit: all $(TESTBIN) $(SEEDBIN) $(EXAMPLES)
	TSAN_OPTIONS="die_after_fork=0 suppressions=$(CURDIR)/tests/tsan.supp $(TSAN_OPTIONS)" \
	TFD_TOOL=$(TOOL) TFD_EXAMPLES=$(EX) TFD_MAKE_VERSION=$(VERSION) \
	    $(SEED_ENV) $(TESTBIN)
check-fallback: $(TOOL) $(TESTBIN)
	@echo "--- the same engine tests on the fallback (TFD_ENGINE_FILES=direct)"
	TSAN_OPTIONS="die_after_fork=0 suppressions=$(CURDIR)/tests/tsan.supp $(TSAN_OPTIONS)" TFD_ENGINE_FILES=direct \
	TFD_TOOL=$(TOOL) $(TESTBIN) -x conformance -x seed $(FALLBACK_TESTS)

# The tests under valgrind's memcheck, which follows the runner's fork into
# every test: no error, no byte definitely or indirectly lost.
VALGRIND ?= valgrind
VALGRIND_FLAGS ?= -q --error-exitcode=1 --leak-check=full \
                  --errors-for-leak-kinds=definite,indirect \
                  --suppressions=tests/valgrind.supp
check-valgrind: all $(TESTBIN) $(SEEDBIN) $(EXAMPLES)
	TFD_TOOL=$(TOOL) TFD_EXAMPLES=$(EX) TFD_MAKE_VERSION=$(VERSION) $(SEED_ENV) \
	    $(VALGRIND) $(VALGRIND_FLAGS) $(TESTBIN) $(TESTS)

# libFuzzer on the operation checker (fuzz/opcheck*.c), from the seeds in
# fuzz/corpus, for FUZZ_SECONDS; new inputs go to build-fuzz/corpus and a
# failing one to build-fuzz/ (DIR/fuzz/ in a build directory B=DIR out of
# the tree).  Needs clang.
FUZZ_CC ?= clang
FUZZ_SECONDS ?= 60
FUZZ_B := $(if $(filter build build-%,$(B)),build-fuzz,$(B)/fuzz)
FUZZ_BIN := $(FUZZ_B)/fuzz-ops
$(FUZZ_BIN): $(LIB_SRC) $(LIB_HDR) fuzz/opcheck.c fuzz/opcheck_set.c \
    fuzz/opcheck.h fuzz/opcheck_int.h fuzz/fuzz_ops.c
	mkdir -p $(FUZZ_B)/corpus
	$(FUZZ_CC) -std=gnu11 -O1 -g $(WARN) $(WERROR) -Iinclude -Isrc $(CPPFLAGS) \
	    -pthread \
	    -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	    $(LIB_SRC) fuzz/opcheck.c fuzz/opcheck_set.c fuzz/fuzz_ops.c \
	    -o $@
fuzz: $(FUZZ_BIN)
	$(FUZZ_BIN) -max_total_time=$(FUZZ_SECONDS) -max_len=2048 -timeout=10 \
	    -print_final_stats=1 -artifact_prefix=$(FUZZ_B)/ \
	    $(FUZZ_B)/corpus fuzz/corpus

# Real programs (Wayland, sd-event, ours) with and without the preload.
include tests/realprog/realprog.mk
include tests/host/host.mk

# The programs make check runs, built before its first stage.
.PHONY: test-programs
test-programs: all $(TESTBIN) $(SEEDBIN) $(EXAMPLES) $(RP_BIN) $(HOST)/host \
    $(HOST)/host-lib

# What is compiled with $(WERROR), built again when it changes.
$(LIB_OBJ) $(PIC_OBJ) $(PRELOAD_OBJ) $(TEST_OBJ) $(TOOL) $(EXAMPLES) \
    $(RP_BIN) $(HOST)/host $(HOST)/host-lib $(PLUGINS) $(FUZZ_BIN): \
    $(B)/werror.stamp

# What a user and a package do with the tree (tests/install.sh, in a
# directory of its own, without sanitizers): make dist, and a build of
# what it packed, out of tree; make install into a temporary prefix and
# what was installed at work there (pkg-config, CMake and Meson when they
# are installed, the pages, bash completion); DESTDIR; uninstall.
check-install:
	MAKE='$(MAKE)' TFD_SEEDS='$(abspath $(SEEDS))' sh tests/install.sh

# The release tarball: exactly the files git tracks, as they are in the
# work tree (uncommitted changes to them are packed, and said to be),
# under tfd-VERSION/.  Only from a git work tree.
DIST := $(B)/tfd-$(VERSION).tar.gz
dist:
	@[ "$$(git rev-parse --show-toplevel 2>/dev/null)" = "$(CURDIR)" ] || \
	{ echo "make dist: $(CURDIR) is not a git work tree (the tarball is" \
	    "the files git tracks, made with git archive)" >&2; exit 1; }
	@mkdir -p $(B) && t=$$(git stash create) && \
	{ [ -z "$$t" ] || echo "make dist: uncommitted changes to tracked" \
	    "files are in the tarball"; } && \
	git archive --format=tar.gz --prefix=tfd-$(VERSION)/ -o $(DIST) \
	    $${t:-HEAD} && echo "make dist: $(DIST)"

install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) \
	    $(DESTDIR)$(PRELOADDIR) $(DESTDIR)$(INCLUDEDIR) \
	    $(DESTDIR)$(PKGCONFIGDIR) $(DESTDIR)$(CMAKEDIR) \
	    $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(MANDIR)/man1 \
	    $(DESTDIR)$(MANDIR)/man3 $(DESTDIR)$(MANDIR)/man7
	install -m 755 $(TOOL) $(DESTDIR)$(BINDIR)/tfd
	install -m 644 $(STATIC) $(DESTDIR)$(LIBDIR)/libtfd.a
	install -m 644 $(SHARED) $(DESTDIR)$(LIBDIR)/libtfd.so.$(VERSION)
	install -m 644 $(PRELOAD) $(DESTDIR)$(PRELOADDIR)/libtfd-preload.so
	ln -sf libtfd.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libtfd.so.$(SOMAJOR)
	ln -sf libtfd.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libtfd.so
	install -m 644 include/tfd.h $(DESTDIR)$(INCLUDEDIR)/tfd.h
	install -m 644 $(B)/tfd.pc $(DESTDIR)$(PKGCONFIGDIR)/tfd.pc
	install -m 644 $(B)/tfd-config.cmake $(B)/tfd-config-version.cmake \
	    $(DESTDIR)$(CMAKEDIR)/
	install -m 644 completion/tfd.bash $(DESTDIR)$(BASHCOMPDIR)/tfd
	for p in $(MAN_PAGES); do \
	    s=$${p##*.}; d=$(DESTDIR)$(MANDIR)/man$$s/$${p##*/}; \
	    sed 's|^\.so man/\(.*\.\)\([1-9]\)$$|.so man\2/\1\2|' $$p > $$d && \
	    chmod 644 $$d || exit 1; done
	@$(MAKE) -s install-note

# Whether the dynamic loader will find libtfd.so.$(SOMAJOR) in $(LIBDIR), as
# libtool's install notes say: the directories of /etc/ld.so.conf (and its
# includes) and the loader's own; and, installed there, its cache.
LD_DIRS := /lib /usr/lib /lib64 /usr/lib64
.PHONY: install-note
install-note:
	@d='$(LIBDIR)'; d=$${d%/}; \
	if { echo '$(LD_DIRS)' | tr ' ' '\n'; cat /etc/ld.so.conf \
	    /etc/ld.so.conf.d/*.conf 2>/dev/null; } | sed 's|/*$$||' | \
	    grep -qxF "$$d"; then \
	    if [ -z '$(DESTDIR)' ] && ! ldconfig -p 2>/dev/null | \
	        grep -qF "=> $$d/libtfd.so.$(SOMAJOR)"; then \
	        echo "note: $$d is in the loader's path but its cache does" \
	            "not list libtfd.so.$(SOMAJOR) yet: run ldconfig (as root)"; \
	    fi; \
	else \
	    echo "note: libtfd.so.$(SOMAJOR) is in $$d, which is not in the" \
	        "dynamic loader's path (/etc/ld.so.conf):"; \
	    echo "note: a program linked with -ltfd finds it only with" \
	        "LD_LIBRARY_PATH=$$d when it runs,"; \
	    echo "note: or -Wl,-rpath,$$d when it is linked, or once $$d" \
	        "is added to /etc/ld.so.conf.d/ and ldconfig is run (as root)."; \
	    echo "note: the tfd program and libtfd.a need none of this."; \
	fi

# Also LIBDIR/libtfd-preload.so, where versions before 0.2.0 put it.
uninstall:
	rm -f $(DESTDIR)$(BINDIR)/tfd $(DESTDIR)$(LIBDIR)/libtfd.a \
	    $(DESTDIR)$(LIBDIR)/libtfd.so* $(DESTDIR)$(INCLUDEDIR)/tfd.h \
	    $(DESTDIR)$(PRELOADDIR)/libtfd-preload.so \
	    $(DESTDIR)$(LIBDIR)/libtfd-preload.so \
	    $(DESTDIR)$(PKGCONFIGDIR)/tfd.pc \
	    $(DESTDIR)$(CMAKEDIR)/tfd-config.cmake \
	    $(DESTDIR)$(CMAKEDIR)/tfd-config-version.cmake \
	    $(DESTDIR)$(BASHCOMPDIR)/tfd
	rmdir $(DESTDIR)$(PRELOADDIR) $(DESTDIR)$(CMAKEDIR) 2>/dev/null || :
	for p in $(MAN_PAGES); do \
	    s=$${p##*.}; rm -f $(DESTDIR)$(MANDIR)/man$$s/$${p##*/}; done

# In a build directory out of the tree (B=DIR, make -f), only what the
# build writes there.
clean:
	rm -rf build build-*
ifeq ($(filter build build-%,$(B)),)
	rm -rf $(B)/lib $(B)/pic $(B)/tests $(EX) $(RP) $(HOST) $(B)/fuzz \
	    $(STATIC) $(B)/libtfd.so* $(PRELOAD) $(TOOL) $(TESTBIN) \
	    $(B)/seed-test $(B)/*.d $(B)/tfd.pc $(B)/tfd-config*.cmake \
	    $(B)/config.stamp $(B)/tfd-*.tar.gz
endif

# The header dependencies the compiler wrote (-MMD -MP).  An object
# without its .d file (built by an older Makefile) is built again: nothing
# else says which headers it was built from.
$(foreach o,$(LIB_OBJ) $(PIC_OBJ) $(PRELOAD_OBJ) $(TEST_OBJ),\
    $(if $(wildcard $(o:.o=.d)),,$(eval $(o): FORCE)))
.PHONY: FORCE
FORCE:
-include $(wildcard $(LIB_OBJ:.o=.d) $(PIC_OBJ:.o=.d) $(PRELOAD_OBJ:.o=.d) \
    $(TEST_OBJ:.o=.d) $(EXAMPLES:=.d))
endif
