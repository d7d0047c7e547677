# SPDX-License-Identifier: MIT
# Virtual time at scale (tfd-preload(7), The cost of a move), sourced by
# run.sh: 1,000 timers in one epoll set, every read counting 1, and no
# look through the whole set at each wait.

vscale() {
	selected vscale && virtual_prog vscale || return 0
	run vscale "$tool" exec --backend virtual -- "$dir/vscale" 1000
	cat >"$out/vscale.want" <<'EOF'
1000 timers: many expirations read, each read counts 1: yes
read system calls at most 2 an expiration: yes
EOF
	msg="vscale: 1,000 timers on virtual time"
	matches "$out/vscale.want" "$out/vscale" \
	    "$msg, each read 1, no look through the set at each wait" "$msg"
}
