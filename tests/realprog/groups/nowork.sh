# SPDX-License-Identifier: MIT
# What the preload must not do or take, counted (not timed), sourced by
# run.sh.

# Work the preload must not do: the text of a trace line when nobody
# traces; holds for a wait that cannot block.  On virtual time a wait
# looks at the clocks under the library's lock: there, only the first
# part.
nowork() {
	selected nowork || return 0
	if [ ! -x "$dir/nowork" ]; then
		skip "nowork: not built"
		return
	fi
	# A ThreadSanitizer build takes the lock for every read (its reads
	# without it would be reports): the parts but that one.
	case ${TFD_SAN:-} in
	*thread*)
		same "$dir/nowork" nowork.format engine format
		same "$dir/nowork" nowork.lock engine lock ;;
	*)
		same "$dir/nowork" nowork engine ;;
	esac
	same "$dir/nowork" nowork kernel
	same "$dir/nowork" nowork.format virtual format
}

# What the library takes that the program did not ask for: calls of its
# allocator from our threads, threads it does not need.  A sanitizer's
# run-time has an allocator and threads of its own.
noalloc() {
	selected noalloc || return 0
	if [ -n "${TFD_SAN:-}" ]; then
		skip "noalloc: in a sanitizer's build (its run-time allocates)"
	elif [ -x "$dir/noalloc" ]; then
		same "$dir/noalloc" noalloc engine
		same "$dir/noalloc" noalloc kernel
	else
		skip "noalloc: not built"
	fi
}
