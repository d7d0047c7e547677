# SPDX-License-Identifier: MIT
# dropin's modes beyond its plain run (compare dropin, issue 12: vfork,
# close_range, readv, select above FD_SETSIZE, EPOLLET), sourced by
# run.sh: pointers the kernel cannot use where a system call is made (the
# kernel backend is a passthrough, and says EFAULT as Linux does), a close
# during a wait, clone; pthread_kill's two versions.

dropin_modes() {
	[ -x "$dir/dropin" ] && selected dropin || return 0
	same "$dir/dropin" dropin.efault kernel efault
	same "$dir/dropin" dropin.closewait engine closewait
	same "$dir/dropin" dropin.closewait kernel closewait
	same "$dir/dropin" dropin.clone engine clone
	case ${TFD_SAN:-} in
	*thread*) # its run-time wraps pthread_kill, ahead of the preload
		skip "dropin.kill: ThreadSanitizer" ;;
	*)
		same "$dir/dropin" dropin.kill engine kill
		same "$dir/dropin" dropin.kill virtual kill ;;
	esac
}
