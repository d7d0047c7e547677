# SPDX-License-Identifier: MIT
# select.sh - which tests a stage of make check runs, sourced by its shell
# runners (the unit runner does the same in tests/run.c).
#
# TFD_TESTS (make check TESTS=...) holds words: NAME, or -x NAME.
# `selected STRING` is true when STRING contains one of the NAMEs (any
# string, when there is none) and none of those after -x.  STRING is a
# test's name, or the names a group of tests goes by.

selected() {
	_sel_any=0 _sel_hit=0 _sel_x=0
	set -f
	# shellcheck disable=SC2086
	set -- "$1" ${TFD_TESTS:-}
	set +f
	_sel_s=$1
	shift
	for _sel_w; do
		if [ "$_sel_x" = 1 ]; then
			_sel_x=0
			case $_sel_s in *"$_sel_w"*) return 1 ;; esac
		elif [ "$_sel_w" = -x ]; then
			_sel_x=1
		else
			_sel_any=1
			case $_sel_s in *"$_sel_w"*) _sel_hit=1 ;; esac
		fi
	done
	[ "$_sel_any" = 0 ] || [ "$_sel_hit" = 1 ]
}
