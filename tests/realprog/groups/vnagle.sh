# SPDX-License-Identifier: MIT
# Bytes held in the kernel's TCP stack between two processes of the tree
# (Nagle's algorithm, the peer's delayed ACK) are work in progress: time
# does not jump past them to a client's timeout.  Sourced by run.sh.

vnagle() {
	selected vnagle && virtual_prog vnagle || return 0
	run vnagle.linux "$dir/vnagle"
	run vnagle.virtual "$tool" exec --backend virtual -- "$dir/vnagle"
	echo "answers before the 60 s timeout: 5 of 5, within 10 s: yes" \
	    >"$out/vnagle.want"
	matches "$out/vnagle.want" "$out/vnagle.linux" \
	    "vnagle natively: every request answered" \
	    "vnagle natively (the machine's own TCP)"
	msg="vnagle: a request held by Nagle's algorithm"
	matches "$out/vnagle.linux" "$out/vnagle.virtual" \
	    "$msg is answered before the client's timeout, as on Linux" \
	    "$msg"
	# A request sent whole, answered after the server's sleep(20): the
	# kernel holds nothing, and time still jumps.
	t0=$(date +%s%N)
	run vnagle.late "$tool" exec --backend virtual -- "$dir/vnagle" late
	ms=$(ms_since)
	msg="vnagle late: an answer 20 s late on TCP"
	[ "$(cat "$out/vnagle.late")" = "answered: 6 of 6, after 20 s: yes" ] &&
	    [ "$ms" -lt 5000 ]
	verdict $? "$msg still jumps (${ms} ms)" "$msg, in ${ms} ms" \
	    "$out/vnagle.late"
}
