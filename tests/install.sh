#!/bin/sh
# SPDX-License-Identifier: MIT
# install.sh - what `make install` installs works where it is installed.
# A plain `make` in a build directory of its own, then `make install
# PREFIX=<a temporary directory>` (which must rebuild what has the
# directories compiled in); then the installed tfd exec finds the
# installed libtfd-preload.so, a C program builds against the install with
# pkg-config, and with CMake (pkg_check_modules) and Meson (dependency())
# when they are installed; the installed pages render; a DESTDIR install
# keeps the final directories; uninstall removes every file.  One line per
# check, then "install: N passed, N failed, N skipped"; exit status 1 if
# any failed.
#
#   MAKE=make sh tests/install.sh       (from the top of the tree)
set -u
MAKE=${MAKE:-make}
top=$(pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/tfd-install.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT INT TERM
b=$work/build prefix=$work/prefix
pass=0 fail=0 skipped=0

ok() {
	pass=$((pass + 1))
	echo "ok   $1"
}

bad() {
	fail=$((fail + 1))
	echo "FAIL $1"
	[ -n "${2:-}" ] && [ -f "$2" ] && sed 's/^/    /' "$2" | tail -n 20
}

skip() {
	skipped=$((skipped + 1))
	echo "skip $1"
}

finish() {
	echo "install: $pass passed, $fail failed, $skipped skipped"
	[ "$fail" = 0 ]
	exit
}

# make ARGS...: in the tree, plain (no sanitizer), into the private build
# directory, quietly, into $work/make.log.
mk() {
	$MAKE -s -C "$top" B="$b" SAN= "$@" >"$work/make.log" 2>&1
}

if ! mk all; then
	bad "a plain make" "$work/make.log"
	finish
fi
ok "a plain make (LIBDIR $(sed -n 's/.*LIBDIR=\([^ ]*\).*/\1/p' \
    "$b/config.stamp"))"
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

# The installed program finds the installed preload library: the
# directory compiled into it is PREFIX's, not the first build's.
if "$prefix/bin/tfd" exec -- true >"$work/exec.log" 2>&1; then
	ok "the installed tfd exec -- true"
else
	bad "the installed tfd exec -- true" "$work/exec.log"
fi
"$prefix/bin/tfd" exec -- sh -c 'echo "$LD_PRELOAD"' >"$work/env.log" 2>&1
if [ "$(cat "$work/env.log")" = "$prefix/lib/libtfd-preload.so" ]; then
	ok "the installed tfd exec preloads $prefix/lib/libtfd-preload.so"
else
	bad "the installed tfd exec preloads another library" "$work/env.log"
fi
version=$(awk '/^.define TFD_VERSION_(MAJOR|MINOR|PATCH) / {
	v = v (v == "" ? "" : ".") $3 } END { print v }' "$top/include/tfd.h")
case $("$prefix/bin/tfd" --version) in
"tfd $version"*) ok "the installed tfd --version: $version" ;;
*) bad "the installed tfd --version: $("$prefix/bin/tfd" --version)" ;;
esac

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
if ! command -v pkg-config >/dev/null 2>&1; then
	skip "pkg-config: not installed (apt-get install pkg-config)"
elif [ "$(pkg-config --modversion tfd 2>&1)" != "$version" ]; then
	bad "pkg-config --modversion tfd: $(pkg-config --modversion tfd 2>&1)"
elif ! ${CC:-cc} "$work/prog.c" -o "$work/prog" $(pkg-config --cflags \
    --libs tfd) >"$work/cc.log" 2>&1; then
	bad "cc prog.c \$(pkg-config --cflags --libs tfd)" "$work/cc.log"
elif [ "$(LD_LIBRARY_PATH=$prefix/lib "$work/prog" 2>&1)" != "$want" ]; then
	bad "the program built with pkg-config: $(LD_LIBRARY_PATH=$prefix/lib \
	    "$work/prog" 2>&1)"
elif ! LD_LIBRARY_PATH=$prefix/lib ldd "$work/prog" |
    grep -q "libtfd.so.0 => $prefix/lib/libtfd.so.0 "; then
	bad "the program built with pkg-config does not use $prefix/lib/libtfd.so.0"
else
	ok "a program built with pkg-config runs with $prefix/lib/libtfd.so.0"
fi

# CMake: the README's way, an imported target from pkg-config.
if ! command -v cmake >/dev/null 2>&1; then
	skip "CMake: cmake is not installed (apt-get install cmake)"
else
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

# A staged install (DESTDIR, for a package) keeps the final directories.
if ! mk install DESTDIR="$work/stage" PREFIX=/opt/tfd; then
	bad "make install DESTDIR=... PREFIX=/opt/tfd" "$work/make.log"
elif ! grep -qx 'prefix=/opt/tfd' "$work/stage/opt/tfd/lib/pkgconfig/tfd.pc"
then
	bad "DESTDIR: tfd.pc does not say prefix=/opt/tfd" \
	    "$work/stage/opt/tfd/lib/pkgconfig/tfd.pc"
elif "$work/stage/opt/tfd/bin/tfd" exec -- true >"$work/staged.log" 2>&1 ||
    ! grep -q "nor in /opt/tfd/lib" "$work/staged.log"; then
	bad "DESTDIR: the staged tfd does not look in /opt/tfd/lib" \
	    "$work/staged.log"
else
	ok "DESTDIR: the staged tfd and tfd.pc name /opt/tfd"
fi

# uninstall leaves no file of ours.
if mk uninstall PREFIX="$prefix" &&
    [ -z "$(find "$prefix" -type f -o -type l)" ]; then
	ok "make uninstall removes every file"
else
	find "$prefix" -type f -o -type l >>"$work/make.log"
	bad "make uninstall left files" "$work/make.log"
fi
finish
