# SPDX-License-Identifier: MIT
# A program built with AddressSanitizer, whose run-time must be loaded
# first: tfd exec puts it before the preload.  Sourced by run.sh.

sanitized() {
	selected sanitized || return 0
	if [ ! -x "$dir/sanitized" ]; then
		msg="no AddressSanitizer here, or a sanitizer's build"
		skip "sanitized: $msg"
		return
	fi
	rm -f "$out/sanitized.trace"
	expect 0 sanitized env ASAN_OPTIONS= "$tool" exec --trace \
	    "$out/sanitized.trace" -- "$dir/sanitized"
	has "$out/sanitized" "sanitized: its timer read" '^read 1$'
	has "$out/sanitized.trace" "sanitized: through the preload" \
	    'timerfd_create'
}
