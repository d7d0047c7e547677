# SPDX-License-Identifier: MIT
# Go (issue 21), sourced by run.sh: a cgo program's runtime reads the
# clocks through the vDSO and waits with system calls of its own, which
# the preload takes over (gosys.c): time.Sleep, a Ticker, select, context,
# AfterFunc, a TCP read deadline, a child, an hour in a goroutine; threads
# and signals around them (vguest.go); natively at a tenth (the hour at a
# thousandth), on virtual time within a millisecond, 5 runs one output.
# After a virtual hour in its shell, its time.Now() is the shell's.  A
# stripped binary is told on standard error; one without cgo (static) is
# refused by tfd exec.

golang() {
	selected "go golang" || return 0
	if [ -n "${TFD_SAN:-}" ]; then
		skip "go: a sanitizer build ($TFD_SAN)"
		return
	fi
	if ! command -v go >/dev/null 2>&1; then
		skip "go: not installed (apt-get install golang-go)"
		return
	fi
	if ! CGO_ENABLED=1 gb "$dir/vtimers" "$src/vtimers.go" \
	    "$src/vfacts.go"; then
		bad "go: go build vtimers.go"
		sed 's/^/    /' "$out/go.build"
		return
	fi
	msg="time.Sleep, Ticker, select, context.WithTimeout, AfterFunc,"
	gocase vtimers "$msg a TCP read deadline, a child, an hour"
	if CGO_ENABLED=1 gb "$dir/vguest" "$src/vguest.go" "$src/vfacts.go"
	then
		msg="threads locked and ended, C threads calling Go,"
		msg="$msg signal.Notify, SIGILL sent and caught,"
		gocase vguest "$msg a context's child killed"
	else
		bad "go: go build vguest.go"
		sed 's/^/    /' "$out/go.build"
	fi
	golang_releases
	golang_now
	golang_stripped
	golang_static
}

# gb OUT [FLAGS...] SOURCES...: go build, with the Go in $GO (go if
# empty); its messages in $out/go.build.
gb() {
	o=$1
	shift
	env GOCACHE="$dir/gocache" GO111MODULE=off GOFLAGS= \
	    HOME="${HOME:-$dir}" "${GO:-go}" build -o "$o" "$@" \
	    >"$out/go.build" 2>&1
}

# gocase NAME WHAT: natively at a tenth (twice at most: a loaded machine
# may make a tick late), then 5 runs on virtual time.
gocase() {
	gn=$1 gwhat=$2 med=
	run "$gn.go.linux" "$dir/$gn" 10 ||
	    run "$gn.go.linux" "$dir/$gn" 10
	if again "$gn.go" 5 env TFD_EXACT=1 "$dir/$gn" &&
	    cmp -s "$out/$gn.go.linux" "$out/$gn.go.1" &&
	    grep -q '^all ok$' "$out/$gn.go.1" && [ "$med" -lt 3000 ]; then
		ok "go: $gwhat, as on Linux (median $med ms)"
	else
		bad "go: $gwhat (median ${med:-?} ms)"
		show_diff "$out/$gn.go.linux" "$out/$gn.go.1"
	fi
}

# Other Go releases installed beside the default (Debian's backports have
# golang-1.21-go to 1.23-go): from 1.21 the poller waits through the
# runtime's generic Syscall6, a call taken in place of an instruction
# (gosys.c).
golang_releases() {
	for GO in /usr/lib/go-1.*/bin/go; do
		[ -x "$GO" ] || continue
		v=$("$GO" env GOVERSION 2>/dev/null) || continue
		[ "$v" = "$(go env GOVERSION 2>/dev/null)" ] && continue
		if CGO_ENABLED=1 gb "$dir/vtimers-$v" "$src/vtimers.go" \
		    "$src/vfacts.go" &&
		    CGO_ENABLED=1 gb "$dir/vguest-$v" "$src/vguest.go" \
		    "$src/vfacts.go"
		then
			gocase "vtimers-$v" "$v: the timers of vtimers.go"
			gocase "vguest-$v" \
			    "$v: the threads and signals of vguest.go"
		else
			bad "go: $v: go build"
			sed 's/^/    /' "$out/go.build"
		fi
	done
	GO=
}

# Each Go program ends with the system call exit_group while its runtime
# may be starting a thread: such a thread held the tree's time for good
# (4 runs in 10 never ended the sleep after it).
golang_now() {
	if again go.now 5 bash -c 'a=$(date +%s); sleep 3600; b=$(date +%s)
	    c=$("$0" now); sleep 7200.5; d=$("$0" now)
	    echo $((b - a)) $((c - b)) $((d - c))' "$dir/vtimers" &&
	    [ "$(cat "$out/go.now.1")" = "3600 0 7200" ]; then
		msg="go: time.Now() after a virtual hour in its shell is the"
		ok "$msg shell's, and a sleep after a Go program ends"
	else
		msg="go: time.Now() against the shell's date"
		bad "$msg: $(cat "$out/go.now.1")"
	fi
}

# A stripped program is told, on standard error, that it stays in real
# time.
golang_stripped() {
	if ! CGO_ENABLED=1 gb "$dir/vtimers.s" -ldflags=-s "$src/vtimers.go" \
	    "$src/vfacts.go"; then
		bad "go: go build -ldflags=-s"
		sed 's/^/    /' "$out/go.build"
		return
	fi
	run go.stripped "$tool" exec --backend virtual -- "$dir/vtimers.s" \
	    now
	msg="libtfd-preload: a Go program: its symbol table is stripped;"
	has "$out/go.stripped" \
	    "go: a stripped program is told it stays in real time" \
	    "$msg its clocks and waits stay in real time"
	has "$out/go.stripped" "go: the stripped program runs" '^[0-9]+$'
}

# A program built without cgo is static: tfd exec refuses it.
golang_static() {
	printf 'package main\n\nfunc main() {}\n' >"$out/nocgo.go"
	if CGO_ENABLED=0 gb "$dir/nocgo" "$out/nocgo.go" &&
	    ! ldd "$dir/nocgo" >/dev/null 2>&1; then
		msg="go: a program built without cgo (static) is refused"
		expect 125 "$msg" "$tool" exec --backend virtual -- \
		    "$dir/nocgo"
	else
		skip "go: no static build without cgo here"
	fi
}
