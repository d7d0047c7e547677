#!/bin/sh
# SPDX-License-Identifier: MIT
# install.sh - what a user and a distribution do with the tree works.
# `make dist` packs exactly the files git tracks (in a git work tree; else
# skipped); what it packed is unpacked and built out of tree (make -f
# SRC/Makefile in a directory of its own), writing nothing into SRC; right
# after, make -q says it is up to date; the header check and a few unit
# tests run there; CPPFLAGS reaches every compile line (make -n).  Then
# `make install PREFIX=<a temporary directory>` (which must rebuild what
# has the directories compiled in); the installed tfd exec finds the
# installed libtfd-preload.so in LIBDIR/tfd, the build tree's its own; a C
# program builds against the install with pkg-config, with CMake
# (find_package(tfd CONFIG) and pkg_check_modules) and Meson
# (dependency()) when they are installed; the installed pages render;
# bash completes tfd's commands, options and backends; a DESTDIR install
# keeps the final directories; uninstall removes every file.  One line per
# check, then "install: N passed, N failed, N skipped"; exit status 1 if
# any failed.  TFD_TESTS (make check TESTS=...) runs it, whole, when it
# picks the name "install" (tests/select.sh).
# Also: -Werror in what make check builds, not in a plain make or make
# install, and make check after a plain make compiles it all again.
# The default hardening (make -n; readelf on what was installed), and the
# user's CFLAGS, CPPFLAGS and LDFLAGS replacing it.
# The GNU names of the directories (prefix=, libdir=...) and PREFIX=...
# winning over them.
# The modes of the installed libraries (644) and program (755).
# tfd.pc and the CMake package find the prefix from where they are: the
# staged prefix, moved elsewhere, still builds programs against libtfd.so
# and libtfd.a; a LIBDIR out of PREFIX is written absolute.
#
#   MAKE=make sh tests/install.sh       (from the top of the tree)
set -u
MAKE=${MAKE:-make}
top=$(pwd)
. "$top/tests/select.sh"
if ! selected install; then
	echo "install: not picked by TESTS"
	echo "install: 0 passed, 0 failed, 0 skipped"
	exit 0
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/tfd-install.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT INT TERM
b=$work/build prefix=$work/prefix
version=$(awk '/^.define TFD_VERSION_(MAJOR|MINOR|PATCH) / {
	v = v (v == "" ? "" : ".") $3 } END { print v }' "$top/include/tfd.h")

stage=install
. "$top/tests/report.sh"

# make dist: the tarball holds what git tracks, as it is in the work tree
# (a file deleted but still tracked is not packed).  Then the rest builds
# what it packed, as a user of the tarball would.
src=$top
if ! command -v git >/dev/null 2>&1 ||
    [ "$(git -C "$top" rev-parse --show-toplevel 2>/dev/null)" != "$top" ]
then
	skip "make dist: not in a git work tree (the rest builds the tree)"
elif ! $MAKE -s -C "$top" B="$work/dist" dist >"$work/make.log" 2>&1; then
	bad "make dist" "$work/make.log"
else
	tgz=$work/dist/tfd-$version.tar.gz
	(cd "$top" && git ls-files -z | xargs -0 sh -c \
	    'for f; do [ -e "$f" ] && echo "$f"; done' sh | sort) \
	    >"$work/tracked"
	tar -tzf "$tgz" | sed -n "s|^tfd-$version/||p" | grep -v '/$' |
	    grep -v '^$' | sort >"$work/packed"
	if ! cmp -s "$work/tracked" "$work/packed"; then
		diff "$work/tracked" "$work/packed" >"$work/dist.diff"
		bad "make dist: tfd-$version.tar.gz is not the tracked files" \
		    "$work/dist.diff"
	elif ! tar -xzf "$tgz" -C "$work"; then
		bad "make dist: tfd-$version.tar.gz does not unpack"
	else
		src=$work/tfd-$version
		ok "make dist: tfd-$version.tar.gz, the $(wc -l <"$work/tracked") files git tracks"
	fi
fi

# make ARGS...: out of tree (make -f SRC/Makefile, from the private build
# directory), plain (no sanitizer), as a user who gives no flags (the
# Makefile's defaults, its hardening among them, are what is checked),
# quietly, into $work/make.log.
mkdir -p "$b"
mk() {
	(cd "$b" && $MAKE -s -f "$src/Makefile" B="$b" SAN= CFLAGS= CPPFLAGS= \
	    LDFLAGS= "$@") >"$work/make.log" 2>&1
}

: >"$work/before"
if ! mk all; then
	bad "make -f SRC/Makefile (out of tree)" "$work/make.log"
	finish
fi
ok "make -f SRC/Makefile, out of tree (LIBDIR $(sed -n \
    's/.*LIBDIR=\([^ ]*\).*/\1/p' "$b/config.stamp"))"
find "$src" -newer "$work/before" ! -path '*/.git/*' ! -path "$b/*" \
    >"$work/written"
if [ -s "$work/written" ]; then
	bad "the out-of-tree build wrote into the source tree" "$work/written"
else
	ok "the out-of-tree build wrote nothing into the source tree"
fi
# Nothing to do right after a build, and make -q says so.
if (cd "$b" && $MAKE -q -f "$src/Makefile" B="$b" SAN= all) \
    >"$work/q.log" 2>&1; then
	ok "make -q right after make: up to date"
else
	(cd "$b" && $MAKE -n -f "$src/Makefile" B="$b" SAN= all) \
	    >"$work/q.log" 2>&1
	bad "make -q right after make: out of date; make -n:" "$work/q.log"
fi
# make check after a plain make compiles everything again, with -Werror
# (the plain build's objects were compiled without); make -n says so and
# changes nothing: make -q all is still up to date after it.
(cd "$b" && $MAKE -n -f "$src/Makefile" B="$b" SAN= CFLAGS= CPPFLAGS= \
    LDFLAGS= test-programs) >"$work/n.log" 2>&1
if ! grep -q -e '-Werror .*-c src/api\.c -o .*/lib/api\.o' "$work/n.log"; then
	bad "make -n test-programs after make: no -Werror compile of src/api.c" \
	    "$work/n.log"
elif ! (cd "$b" && $MAKE -q -f "$src/Makefile" B="$b" SAN= all) \
    >"$work/q.log" 2>&1; then
	bad "make -q after make -n test-programs: out of date" "$work/q.log"
else
	ok "after a plain make, make check compiles again with -Werror"
fi

# What the tarball packed is enough for the tests: the header check and
# a few unit tests (the version everywhere, the README's example, the
# tool), not the whole suite (that is the tree's own make check).
if [ "$src" != "$top" ]; then
	if mk check-header && mk "$b/tfd-test" &&
	    (cd "$src" && TFD_TESTS= TFD_TOOL=$b/tfd \
	    TFD_MAKE_VERSION=$version "$b/tfd-test" \
	    version_is_the_same_everywhere examples_readme_shows \
	    tool_help_and_version) >>"$work/make.log" 2>&1 &&
	    grep -q '^3 passed, 0 failed, 0 skipped$' "$work/make.log"; then
		ok "the tarball's check-header and unit tests (3) pass"
	else
		bad "the tarball's check-header and unit tests" "$work/make.log"
	fi
fi

# CPPFLAGS reaches every line that compiles (make -n -B, a compiler of
# another name): the library, the tool, the tests, the examples, the
# real programs and host cases, the fuzzer, the header check, and the
# seed program when make check has it (TFD_SEEDS).
(cd "$b" && $MAKE -n -B -f "$src/Makefile" B="$work/dry" SAN= \
    ${TFD_SEEDS:+SEEDS="$TFD_SEEDS"} CC=tfd-cc FUZZ_CC=tfd-cc CXX=tfd-c++ \
    CPPFLAGS=-DTFD_CPPFLAGS_SEEN test-programs check-header \
    "$work/dry/fuzz/fuzz-ops") >"$work/dry.log" 2>&1
sed -e ':a' -e '/\\$/N; s/\\\n//; ta' "$work/dry.log" | tr ';|&' '\n\n\n' |
    sed 's/^[[:space:]]*\(\$(\)*//' |
    grep -E '^tfd-(cc|c\+\+) ' |
    grep -E '\.cc?( |$)|-fsyntax-only| -E ' >"$work/compiles"
if ! [ "$(wc -l <"$work/compiles")" -gt 50 ]; then
	bad "make -n -B: $(wc -l <"$work/compiles") compile lines" \
	    "$work/dry.log"
elif grep -v -e '-DTFD_CPPFLAGS_SEEN' "$work/compiles" >"$work/nocpp"; then
	bad "CPPFLAGS is not on every compile line" "$work/nocpp"
else
	ok "CPPFLAGS on every compile line ($(wc -l <"$work/compiles"))"
fi
# What make check builds (and CI's fuzzer), warnings are errors in: every
# compile line but the seed program's, which is compiled with -w.
if [ "$(wc -l <"$work/compiles")" -gt 50 ] &&
    grep -v -e '-Werror' "$work/compiles" | grep -v -e ' -w ' -e ' -E ' \
    >"$work/nowerror"; then
	bad "make -n test-programs check-header fuzz: lines without -Werror" \
	    "$work/nowerror"
elif [ "$(wc -l <"$work/compiles")" -gt 50 ]; then
	ok "make check's programs, the header check, the fuzzer: -Werror"
fi

# dry GOAL VAR=VALUE...: the lines make -n -B GOAL runs, compiles and
# links (a compiler of another name), one a line, into $work/lines.
dry() {
	(cd "$b" && $MAKE -n -B -f "$src/Makefile" B="$work/dry2" SAN= \
	    CC=tfd-cc CXX=tfd-c++ CFLAGS= CPPFLAGS= LDFLAGS= PREFIX="$prefix" \
	    "$@") >"$work/dry.log" 2>&1
	sed -e ':a' -e '/\\$/N; s/\\\n//; ta' "$work/dry.log" |
	    tr ';|&' '\n\n\n' | sed 's/^[[:space:]]*//' |
	    grep -E '^tfd-(cc|c\+\+) ' >"$work/lines"
}
# A plain make, and make install: warnings shown, not errors (a newer
# compiler's new warning does not break a user's build).
for goal in all install; do
	dry "$goal"
	if ! [ "$(wc -l <"$work/lines")" -gt 20 ]; then
		bad "make -n -B $goal: $(wc -l <"$work/lines") compile lines" \
		    "$work/dry.log"
	elif grep -e '-Werror' "$work/lines" >"$work/werror"; then
		bad "make $goal compiles with -Werror" "$work/werror"
	elif grep -v -e '-Wall -Wextra' "$work/lines" | grep -v ' -shared ' |
	    grep -v -e ' -E ' >"$work/nowall"; then
		bad "make $goal: lines without -Wall -Wextra" "$work/nowall"
	else
		ok "make $goal: warnings shown, not errors (no -Werror)"
	fi
done

# Hardening, when the user gives no flags: the stack protector and
# _FORTIFY_SOURCE=2 on every compile line, RELRO and BIND_NOW on every
# link; the user's CFLAGS, CPPFLAGS and LDFLAGS (dpkg-buildflags') replace
# it; no _FORTIFY_SOURCE under the sanitizers, which do not check glibc's
# __*_chk calls.  What the linker made of it: below, on the installed
# files.
dry all
grep -v -e ' -E ' "$work/lines" >"$work/builds"
if grep -v -e ' -shared ' "$work/builds" | awk '!/-fstack-protector-strong/ ||
    !/-U_FORTIFY_SOURCE -D_FORTIFY_SOURCE=2/' >"$work/noharden"
    [ -s "$work/noharden" ]
then
	bad "make: lines without the stack protector or _FORTIFY_SOURCE" \
	    "$work/noharden"
elif grep -e ' -o [^ ]*\(/tfd\|\.so[.0-9]*\)\( \|$\)' "$work/builds" |
    grep -v -e '-Wl,-z,relro -Wl,-z,now' >"$work/norelro"; [ -s "$work/norelro" ]
then
	bad "make: links without -z relro -z now" "$work/norelro"
elif ! [ "$(grep -c -e ' -o [^ ]*\(/tfd\|\.so[.0-9]*\)\( \|$\)' \
    "$work/builds")" -ge 3 ]; then
	bad "make -n -B: the links of tfd and the libraries not found" \
	    "$work/builds"
else
	ok "make: stack protector, _FORTIFY_SOURCE=2, -z relro -z now"
fi
dry all CFLAGS=-O1 CPPFLAGS=-DTFD_USER LDFLAGS=-Wl,-O1
if grep -e '-fstack-protector-strong\|_FORTIFY_SOURCE\|-z,now\|-z,relro' \
    "$work/lines" >"$work/harden"; then
	bad "make CFLAGS= CPPFLAGS= LDFLAGS=: the defaults still added" \
	    "$work/harden"
elif ! grep -q -e '-DTFD_USER .*-O1' "$work/lines"; then
	bad "make CFLAGS= CPPFLAGS=: the user's flags not used" "$work/lines"
else
	ok "make CFLAGS=... CPPFLAGS=... LDFLAGS=...: the user's flags only"
fi
dry all SAN=address,undefined
if grep -e '_FORTIFY_SOURCE' "$work/lines" >"$work/harden"; then
	bad "make SAN=address,undefined: _FORTIFY_SOURCE" "$work/harden"
elif ! grep -q -e '-fsanitize=address,undefined .*-fstack-protector-strong' \
    "$work/lines"; then
	bad "make SAN=address,undefined: no stack protector" "$work/lines"
else
	ok "make SAN=address,undefined: no _FORTIFY_SOURCE"
fi

if ! mk install PREFIX="$prefix"; then
	bad "make install PREFIX=$prefix" "$work/make.log"
	finish
fi
ok "make install PREFIX=<temporary directory>"
cp "$work/make.log" "$work/install.log"
if grep -q "^note: libtfd.so.0 is in $prefix/lib, which is not in the dynamic loader's path" \
    "$work/install.log"; then
	ok "make install says $prefix/lib is not in the loader's path"
else
	bad "make install says nothing of the loader's path" "$work/install.log"
fi

# The installed program finds the installed preload library, in the
# directory of its own under LIBDIR: the directory compiled into it is
# PREFIX's, not the first build's.  The build tree's tfd still finds the
# build tree's.
if "$prefix/bin/tfd" exec -- true >"$work/exec.log" 2>&1; then
	ok "the installed tfd exec -- true"
else
	bad "the installed tfd exec -- true" "$work/exec.log"
fi
"$prefix/bin/tfd" exec -- sh -c 'echo "$LD_PRELOAD"' >"$work/env.log" 2>&1
if [ "$(cat "$work/env.log")" = "$prefix/lib/tfd/libtfd-preload.so" ]; then
	ok "the installed tfd exec preloads $prefix/lib/tfd/libtfd-preload.so"
else
	bad "the installed tfd exec preloads another library" "$work/env.log"
fi
if [ -e "$prefix/lib/libtfd-preload.so" ]; then
	bad "libtfd-preload.so installed in LIBDIR, beside the libraries"
fi
"$b/tfd" exec -- sh -c 'echo "$LD_PRELOAD"' >"$work/env.log" 2>&1
if [ "$(cat "$work/env.log")" = "$b/libtfd-preload.so" ]; then
	ok "the build tree's tfd exec preloads the build tree's library"
else
	bad "the build tree's tfd exec preloads another library" "$work/env.log"
fi
case $("$prefix/bin/tfd" --version) in
"tfd $version"*) ok "the installed tfd --version: $version" ;;
*) bad "the installed tfd --version: $("$prefix/bin/tfd" --version)" ;;
esac

# The modes: a shared library is not a program (lintian's
# shared-library-is-executable), the program is.
so=$prefix/lib/libtfd.so.$version pre=$prefix/lib/tfd/libtfd-preload.so
modes=$(stat -c '%a' "$so" "$pre" "$prefix/bin/tfd" "$prefix/lib/libtfd.a" \
    2>&1 | tr '\n' ' ')
if [ "$modes" = "644 644 755 644 " ]; then
	ok "modes: libtfd.so.$version and libtfd-preload.so 644, tfd 755"
else
	bad "modes of libtfd.so.$version, libtfd-preload.so, tfd, libtfd.a: $modes"
fi

# What the default hardening made of the installed files: a read-only GOT
# bound at load (GNU_RELRO, BIND_NOW) in the libraries and the program,
# each calls the stack protector's __stack_chk_fail, and the program
# glibc's checked calls (__printf_chk...).  The preload defines read and
# poll itself, unfortified: it exports them and glibc's __read_chk and
# __poll_chk, and imports none of those.
if ! command -v readelf >/dev/null 2>&1; then
	skip "hardening: readelf is not installed (apt-get install binutils)"
else
	: >"$work/elf.bad"
	for f in "$so" "$pre" "$prefix/bin/tfd"; do
		n=${f##*/}
		readelf -lW "$f" | grep -q 'GNU_RELRO' ||
		    echo "$n: no GNU_RELRO segment" >>"$work/elf.bad"
		readelf -dW "$f" | grep -q -e 'BIND_NOW' -e 'Flags:.* NOW' ||
		    echo "$n: no BIND_NOW" >>"$work/elf.bad"
		readelf -W --dyn-syms "$f" >"$work/syms"
		grep -q ' UND __stack_chk_fail' "$work/syms" ||
		    echo "$n: does not call __stack_chk_fail" >>"$work/elf.bad"
	done
	readelf -W --dyn-syms "$prefix/bin/tfd" | grep -q ' UND __[a-z]*_chk@' ||
	    echo "tfd: calls none of glibc's __*_chk" >>"$work/elf.bad"
	readelf -W --dyn-syms "$pre" >"$work/syms"
	for sym in read poll __read_chk __poll_chk; do
		grep -q " FUNC  *GLOBAL  *DEFAULT  *[0-9][0-9]* $sym\$" \
		    "$work/syms" ||
		    echo "libtfd-preload.so: does not export $sym" \
		    >>"$work/elf.bad"
		! grep -q " UND $sym\(@\|\$\)" "$work/syms" ||
		    echo "libtfd-preload.so: imports $sym" >>"$work/elf.bad"
	done
	if [ -s "$work/elf.bad" ]; then
		bad "hardening of the installed files" "$work/elf.bad"
	else
		ok "hardening: RELRO, BIND_NOW, stack protector; fortified tfd"
	fi
fi

# A program built against the install with pkg-config, linked with the
# shared library, run with the loader told where it is.
cat >"$work/prog.c" <<'PROG'
#include <stdio.h>
#include <tfd.h>

int main(void)
{
	struct itimerspec its = { .it_value = { 0, 1000000 },
	                          .it_interval = { 0, 1000000 } }, cur;
	int fd = tfd_create(CLOCK_MONOTONIC, 0);

	if (fd < 0 || tfd_settime(fd, 0, &its, NULL) < 0 ||
	    tfd_gettime(fd, &cur) < 0 || tfd_close(fd) < 0)
		return perror("tfd"), 1;
	printf("tfd %s, interval %ld ns\n", tfd_version(),
	       (long)cur.it_interval.tv_nsec);
	return 0;
}
PROG
want="tfd $version, interval 1000000 ns"
PKG_CONFIG_PATH=$prefix/lib/pkgconfig
export PKG_CONFIG_PATH
# pc_progs P: prog.c built against the install in P with pkg-config
# (PKG_CONFIG_PATH at P/lib/pkgconfig): with libtfd.so, it prints $want
# with P/lib/libtfd.so.0 (ldd); with libtfd.a and what
# pkg-config --static --libs adds (which has -pthread and -ldl), it
# prints $want and uses no libtfd.so.  The first problem goes to
# $work/pc.log, and the status is 1.
pc_progs() {
	p=$1
	if ! ${CC:-cc} "$work/prog.c" -o "$work/prog" \
	    $(pkg-config --cflags --libs tfd) >"$work/pc.log" 2>&1; then
		echo "cc prog.c \$(pkg-config --cflags --libs tfd) failed" \
		    >>"$work/pc.log"
	elif [ "$(LD_LIBRARY_PATH=$p/lib "$work/prog" 2>&1)" != "$want" ]; then
		LD_LIBRARY_PATH=$p/lib "$work/prog" >"$work/pc.log" 2>&1
	elif ! LD_LIBRARY_PATH=$p/lib ldd "$work/prog" |
	    grep -q "libtfd.so.0 => $p/lib/libtfd.so.0 "; then
		echo "the program does not use $p/lib/libtfd.so.0" >"$work/pc.log"
	elif ! ${CC:-cc} "$work/prog.c" -o "$work/prog-static" \
	    $(pkg-config --cflags tfd) $(pkg-config --static --libs tfd |
	    sed 's/-ltfd /-l:libtfd.a /') >"$work/pc.log" 2>&1; then
		echo "cc prog.c libtfd.a \$(pkg-config --static --libs tfd)" \
		    "failed" >>"$work/pc.log"
	elif [ "$("$work/prog-static" 2>&1)" != "$want" ] ||
	    ldd "$work/prog-static" | grep -q libtfd; then
		echo "the program with libtfd.a:" >"$work/pc.log"
		"$work/prog-static" >>"$work/pc.log" 2>&1
		ldd "$work/prog-static" >>"$work/pc.log" 2>&1
	elif ! pkg-config --static --libs tfd | tr ' ' '\n' |
	    grep -qx -e -pthread || ! pkg-config --static --libs tfd |
	    tr ' ' '\n' | grep -qx -e -ldl; then
		pkg-config --static --libs tfd >"$work/pc.log" 2>&1
	else
		return 0
	fi
	return 1
}
if ! command -v pkg-config >/dev/null 2>&1; then
	skip "pkg-config: not installed (apt-get install pkg-config)"
elif [ "$(pkg-config --modversion tfd 2>&1)" != "$version" ]; then
	bad "pkg-config --modversion tfd: $(pkg-config --modversion tfd 2>&1)"
elif ! pc_progs "$prefix"; then
	bad "programs built with pkg-config" "$work/pc.log"
else
	ok "programs built with pkg-config: libtfd.so.0 in $prefix/lib, libtfd.a"
fi

# CMake: find_package(tfd CONFIG), the package make install writes in
# LIBDIR/cmake/tfd, found through CMAKE_PREFIX_PATH; both its targets;
# a version it does not serve is refused.
# cmake_progs P DIR: prog.c built in DIR against the install in P with
# find_package(tfd CONFIG) (found in P/lib/cmake/tfd): with tfd::tfd it
# prints $want with P/lib/libtfd.so.0 (ldd); with tfd::tfd_static, which
# links with Threads::Threads and dl as tfd.pc's Libs.private says, it
# prints $want and uses no libtfd.so.  Status 1 if not, $work/cmake.log
# says why.
cmake_progs() {
	p=$1 c=$2
	mkdir -p "$c"
	cp "$work/prog.c" "$c/"
	cat >"$c/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.13)
project(use_tfd C)
find_package(tfd 1.0 CONFIG QUIET)
if(tfd_FOUND)
  message(FATAL_ERROR "find_package(tfd 1.0) found tfd ${tfd_VERSION}")
endif()
find_package(tfd 0.1 CONFIG REQUIRED)
message(STATUS "tfd ${tfd_VERSION} in ${tfd_DIR}")
get_target_property(l tfd::tfd_static INTERFACE_LINK_LIBRARIES)
message(STATUS "tfd::tfd_static links with ${l}")
add_executable(prog prog.c)
target_link_libraries(prog PRIVATE tfd::tfd)
add_executable(prog_static prog.c)
target_link_libraries(prog_static PRIVATE tfd::tfd_static)
CMAKE
	CMAKE_PREFIX_PATH=$p cmake -S "$c" -B "$c/build" \
	    >"$work/cmake.log" 2>&1 &&
	    grep -q "tfd $version in $p/lib/cmake/tfd" "$work/cmake.log" &&
	    grep -q "tfd::tfd_static links with Threads::Threads;dl\$" \
	        "$work/cmake.log" &&
	    cmake --build "$c/build" >>"$work/cmake.log" 2>&1 &&
	    [ "$(LD_LIBRARY_PATH=$p/lib "$c/build/prog" 2>&1)" = "$want" ] &&
	    LD_LIBRARY_PATH=$p/lib ldd "$c/build/prog" |
	        grep -q "libtfd.so.0 => $p/lib/libtfd.so.0 " &&
	    [ "$("$c/build/prog_static" 2>&1)" = "$want" ] &&
	    ! ldd "$c/build/prog_static" | grep -q libtfd
}
if ! command -v cmake >/dev/null 2>&1; then
	skip "CMake: cmake is not installed (apt-get install cmake)"
else
	if cmake_progs "$prefix" "$work/cmakecfg"; then
		ok "CMake: find_package(tfd CONFIG): tfd::tfd and tfd::tfd_static (Threads, dl)"
	else
		bad "CMake: find_package(tfd CONFIG)" "$work/cmake.log"
	fi

	# The README's other way, an imported target from pkg-config.
	mkdir -p "$work/cmake"
	cp "$work/prog.c" "$work/cmake/"
	cat >"$work/cmake/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.13)
project(use_tfd C)
find_package(PkgConfig REQUIRED)
pkg_check_modules(TFD REQUIRED IMPORTED_TARGET tfd)
add_executable(prog prog.c)
target_link_libraries(prog PRIVATE PkgConfig::TFD)
CMAKE
	if cmake -S "$work/cmake" -B "$work/cmake/build" >"$work/cmake.log" 2>&1 &&
	    cmake --build "$work/cmake/build" >>"$work/cmake.log" 2>&1 &&
	    [ "$(LD_LIBRARY_PATH=$prefix/lib "$work/cmake/build/prog" 2>&1)" = \
	        "$want" ]; then
		ok "CMake: pkg_check_modules(TFD REQUIRED IMPORTED_TARGET tfd)"
	else
		bad "CMake: pkg_check_modules(TFD REQUIRED IMPORTED_TARGET tfd)" \
		    "$work/cmake.log"
	fi
fi

# Meson: dependency('tfd').
if ! command -v meson >/dev/null 2>&1 || ! command -v ninja >/dev/null 2>&1
then
	skip "Meson: meson or ninja is not installed (apt-get install meson)"
else
	mkdir -p "$work/meson"
	cp "$work/prog.c" "$work/meson/"
	cat >"$work/meson/meson.build" <<'MESON'
project('use_tfd', 'c')
executable('prog', 'prog.c', dependencies : dependency('tfd'))
MESON
	if meson setup "$work/meson/build" "$work/meson" >"$work/meson.log" 2>&1 &&
	    meson compile -C "$work/meson/build" >>"$work/meson.log" 2>&1 &&
	    [ "$(LD_LIBRARY_PATH=$prefix/lib "$work/meson/build/prog" 2>&1)" = \
	        "$want" ]; then
		ok "Meson: dependency('tfd')"
	else
		bad "Meson: dependency('tfd')" "$work/meson.log"
	fi
fi

# The installed pages: each renders, a `.so` page finds its page.
if sh "$top/tests/man.sh" "$prefix/share/man" >"$work/man.log" 2>&1; then
	ok "the installed pages render ($(tail -n 1 "$work/man.log"))"
elif [ $? = 77 ]; then
	skip "the installed pages: $(cat "$work/man.log")"
else
	bad "the installed pages" "$work/man.log"
fi

# bash completion, installed where bash-completion loads it: commands,
# the options of each as its --help lists them, the backends.
comp=$prefix/share/bash-completion/completions/tfd
if ! command -v bash >/dev/null 2>&1; then
	skip "bash completion: bash is not installed"
elif [ ! -f "$comp" ]; then
	bad "bash completion: $comp not installed"
else
	# shellcheck disable=SC2016
	bash -c '
		. "$1"
		c() { COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _tfd
		      echo "$* -> ${COMPREPLY[*]}"; }
		c tfd ex
		c tfd exec --backend ""
		c tfd exec --backend = v
		c tfd conform --q
		for cmd in run exec trace conform bench; do
			c tfd "$cmd" --
			"$2" "$cmd" --help | sed -n "s/^  \(--[a-z-]*\).*/\1/p" |
			    tr "\n" " " | sed "s/^/$cmd --help: /; s/ \$//"
			echo
		done' sh "$comp" "$prefix/bin/tfd" >"$work/comp.log" 2>&1
	for cmd in run exec trace conform bench; do
		sed -n "s/^tfd $cmd -- -> //p" "$work/comp.log" |
		    tr ' ' '\n' | grep -v '^--$' | sort >"$work/comp.$cmd"
		sed -n "s/^$cmd --help: //p" "$work/comp.log" | tr ' ' '\n' |
		    sort >"$work/help.$cmd"
		cmp -s "$work/comp.$cmd" "$work/help.$cmd" ||
		    echo "tfd $cmd: the completion's options differ from --help's" \
		    >>"$work/comp.bad"
	done
	if grep -qx 'tfd ex -> exec' "$work/comp.log" &&
	    grep -qx 'tfd exec --backend  -> engine virtual kernel' \
	        "$work/comp.log" &&
	    grep -qx 'tfd exec --backend = v -> virtual' "$work/comp.log" &&
	    grep -qx 'tfd conform --q -> --quiet' "$work/comp.log" &&
	    [ ! -e "$work/comp.bad" ]; then
		ok "bash completion: commands, every command's options, backends"
	else
		cat "$work/comp.bad" >>"$work/comp.log" 2>/dev/null
		bad "bash completion" "$work/comp.log"
	fi
fi

# A staged install (DESTDIR, for a package) keeps the final directories:
# the staged tfd looks in /opt/tfd/lib/tfd; tfd.pc and the CMake package
# find theirs from where they are, and name no directory of the stage.
st=$work/stage/opt/tfd
if ! mk install DESTDIR="$work/stage" PREFIX=/opt/tfd; then
	bad "make install DESTDIR=... PREFIX=/opt/tfd" "$work/make.log"
elif ! grep -qx 'prefix=${pcfiledir}/../..' "$st/lib/pkgconfig/tfd.pc" ||
    ! grep -qx 'libdir=${prefix}/lib' "$st/lib/pkgconfig/tfd.pc" ||
    ! grep -qx 'includedir=${prefix}/include' "$st/lib/pkgconfig/tfd.pc"
then
	bad "DESTDIR: tfd.pc does not say prefix=\${pcfiledir}/../.." \
	    "$st/lib/pkgconfig/tfd.pc"
elif ! grep -q '"${CMAKE_CURRENT_LIST_DIR}/../../.."' \
    "$st/lib/cmake/tfd/tfd-config.cmake"; then
	bad "DESTDIR: tfd-config.cmake does not start from its own directory" \
	    "$st/lib/cmake/tfd/tfd-config.cmake"
elif grep -l "$work" "$st/lib/pkgconfig/tfd.pc" "$st/lib/cmake/tfd/"* \
    >"$work/named"; then
	bad "DESTDIR: files name the stage" "$work/named"
elif "$st/bin/tfd" exec -- true >"$work/staged.log" 2>&1 ||
    ! grep -q "nor in /opt/tfd/lib/tfd " "$work/staged.log"; then
	bad "DESTDIR: the staged tfd does not look in /opt/tfd/lib/tfd" \
	    "$work/staged.log"
else
	ok "DESTDIR: the staged tfd names /opt/tfd; tfd.pc, tfd-config.cmake their own directory"
fi

# The staged prefix, moved elsewhere (as a relocatable bundle, or a
# package unpacked under another root): programs still build against it
# with pkg-config and CMake, with the shared library and the static one,
# and run with the moved libraries.  (The static library needs what
# tfd.pc's Libs.private says, -pthread -ldl, and tfd::tfd_static says the
# same: glibc 2.34 and later need no -ldl, a link without it would not
# show that it is missing, so pc_progs and cmake_progs read the flags.)
mv=$work/moved/tfd
mkdir -p "$work/moved" && mv "$st" "$mv" 2>"$work/mv.log" ||
    bad "mv $st $mv" "$work/mv.log"
if ! command -v pkg-config >/dev/null 2>&1; then
	skip "moved prefix, pkg-config: not installed (apt-get install pkg-config)"
elif [ -d "$mv" ]; then
	PKG_CONFIG_PATH=$mv/lib/pkgconfig
	if pc_progs "$mv"; then
		ok "moved prefix: programs built with pkg-config (libtfd.so, libtfd.a)"
	else
		bad "moved prefix: programs built with pkg-config" "$work/pc.log"
	fi
	PKG_CONFIG_PATH=$prefix/lib/pkgconfig
fi
if ! command -v cmake >/dev/null 2>&1; then
	skip "moved prefix, CMake: cmake is not installed (apt-get install cmake)"
elif [ -d "$mv" ]; then
	if cmake_progs "$mv" "$work/cmakemoved"; then
		ok "moved prefix: CMake builds with tfd::tfd and tfd::tfd_static"
	else
		bad "moved prefix: CMake find_package(tfd CONFIG)" "$work/cmake.log"
	fi
fi

# The GNU coding standards' names of the directories: prefix alone, and
# each of the others; the upper-case names are aliases, and win.
# where DIR FILE...: the FILEs not found under $work/gnu/DIR, into
# $work/gnu.bad.
where() {
	d=$1
	shift
	for f; do
		[ -e "$work/gnu$d/$f" ] || echo "not in $d: $f" >>"$work/gnu.bad"
	done
}
: >"$work/gnu.bad"
rm -rf "$work/gnu"
if ! mk install DESTDIR="$work/gnu" prefix=/opt/gnu; then
	bad "make install prefix=/opt/gnu" "$work/make.log"
else
	where /opt/gnu bin/tfd lib/libtfd.so.$version lib/libtfd.a \
	    lib/tfd/libtfd-preload.so include/tfd.h lib/pkgconfig/tfd.pc \
	    lib/cmake/tfd/tfd-config.cmake share/man/man1/tfd.1 \
	    share/man/man3/tfd_create.3 share/bash-completion/completions/tfd
	[ "$(find "$work/gnu" -type f | grep -v "^$work/gnu/opt/gnu/")" = "" ] ||
	    echo "prefix=/opt/gnu: files elsewhere" >>"$work/gnu.bad"
	"$work/gnu/opt/gnu/bin/tfd" exec -- true >"$work/staged.log" 2>&1
	grep -q "nor in /opt/gnu/lib/tfd " "$work/staged.log" ||
	    echo "prefix=/opt/gnu: tfd does not look in /opt/gnu/lib/tfd" \
	    >>"$work/gnu.bad"
	mk uninstall DESTDIR="$work/gnu" prefix=/opt/gnu
	[ -z "$(find "$work/gnu" -type f -o -type l)" ] ||
	    echo "make uninstall prefix=/opt/gnu left files" >>"$work/gnu.bad"
fi
rm -rf "$work/gnu"
if ! mk install DESTDIR="$work/gnu" prefix=/opt/gnu exec_prefix=/opt/ex \
    includedir=/opt/inc datarootdir=/opt/share mandir=/opt/man; then
	bad "make install prefix=... exec_prefix=... includedir=..." \
	    "$work/make.log"
else
	where /opt/ex bin/tfd lib/libtfd.so.$version lib/tfd/libtfd-preload.so
	where /opt/inc tfd.h
	where /opt/share bash-completion/completions/tfd
	where /opt/man man1/tfd.1
fi
rm -rf "$work/gnu"
if ! mk install DESTDIR="$work/gnu" prefix=/opt/gnu bindir=/opt/bin \
    libdir=/opt/lib64; then
	bad "make install prefix=... bindir=... libdir=..." "$work/make.log"
else
	where /opt/bin tfd
	where /opt/lib64 libtfd.so.$version tfd/libtfd-preload.so \
	    pkgconfig/tfd.pc cmake/tfd/tfd-config.cmake
	where /opt/gnu include/tfd.h share/man/man7/tfd.7
fi
rm -rf "$work/gnu"
if ! mk install DESTDIR="$work/gnu" PREFIX=/opt/up prefix=/opt/low \
    LIBDIR=/opt/up/L libdir=/opt/low/l; then
	bad "make install PREFIX=... prefix=..." "$work/make.log"
else
	where /opt/up bin/tfd include/tfd.h L/libtfd.so.$version
	[ ! -e "$work/gnu/opt/low" ] ||
	    echo "PREFIX=/opt/up prefix=/opt/low: files in /opt/low" \
	    >>"$work/gnu.bad"
fi
if [ -s "$work/gnu.bad" ]; then
	bad "the GNU names of the directories" "$work/gnu.bad"
else
	ok "prefix=, exec_prefix=, bindir=, libdir=, includedir=, datarootdir=, mandir=; PREFIX= wins"
fi

# A LIBDIR out of PREFIX: tfd.pc and the CMake package name it, and PREFIX,
# as they are (absolute), since they are not found from where they are.
rm -rf "$work/gnu"
pc=$work/gnu/srv/tfd-lib/pkgconfig/tfd.pc
cm=$work/gnu/srv/tfd-lib/cmake/tfd/tfd-config.cmake
if ! mk install DESTDIR="$work/gnu" PREFIX=/opt/tfd LIBDIR=/srv/tfd-lib; then
	bad "make install PREFIX=/opt/tfd LIBDIR=/srv/tfd-lib" "$work/make.log"
elif ! grep -qx 'prefix=/opt/tfd' "$pc" ||
    ! grep -qx 'libdir=/srv/tfd-lib' "$pc" ||
    ! grep -qx 'includedir=${prefix}/include' "$pc"; then
	bad "LIBDIR out of PREFIX: tfd.pc" "$pc"
elif ! grep -q '_tfd_prefix "/opt/tfd"' "$cm" ||
    ! grep -q '_tfd_libdir "/srv/tfd-lib"' "$cm" ||
    ! grep -q '_tfd_includedir "${_tfd_prefix}/include"' "$cm"; then
	bad "LIBDIR out of PREFIX: tfd-config.cmake" "$cm"
else
	ok "LIBDIR out of PREFIX: tfd.pc and tfd-config.cmake name it absolute"
fi
rm -rf "$work/gnu"

# uninstall leaves no file of ours.
if mk uninstall PREFIX="$prefix" &&
    [ -z "$(find "$prefix" -type f -o -type l)" ]; then
	ok "make uninstall removes every file"
else
	find "$prefix" -type f -o -type l >>"$work/make.log"
	bad "make uninstall left files" "$work/make.log"
fi
finish
