# SPDX-License-Identifier: MIT
# A library's constructor on virtual time (tests/realprog/vctor.c),
# sourced by run.sh: the clock it reads and the thread it starts are the
# domain's, though the C library calls it before the preload's; its
# destructor joins that thread.

vctor() {
	selected vctor && virtual_prog vctor || return 0
	cat >"$out/vctor.want" <<'EOF2'
a library's constructor read the clock main() reads: yes
its thread slept on that clock: yes
a library's destructor joins that thread: yes
EOF2
	# Five runs: its end raced (a hang in 2 runs of 12).
	for i in 1 2 3 4 5; do
		run vctor "$tool" exec --backend virtual -- "$dir/vctor"
		cmp -s "$out/vctor.want" "$out/vctor" || break
	done
	matches "$out/vctor.want" "$out/vctor" \
	    "vctor: a library's constructor is on the domain's clock" \
	    "vctor: a library's constructor (run $i of 5)"
}
