# SPDX-License-Identifier: MIT
# bash completion for tfd(1): its commands, the options of each (as
# `tfd COMMAND --help` lists them: tests/install.sh checks that they are
# the same), the values of those that take a word (backends, clocks...),
# and after `tfd exec [OPTION]... [--]` the program and its arguments.
# make install puts it in PREFIX/share/bash-completion/completions/tfd,
# where bash-completion loads it; or `. completion/tfd.bash`.

_tfd_opts()
{
	case $1 in
	run) echo "--clock --abs --api --backend --help" ;;
	exec) echo "--backend --trace --raw-syscalls --virtual-rate --virtual-start --virtual-slack --allow-static --help" ;;
	trace) echo "--html --svg --chrome-json --help" ;;
	conform) echo "--backend --filter --quiet --errnos --departures --help" ;;
	bench) echo "--quick --json --filter --rounds --side --plain-read --help" ;;
	esac
}

# The values of option $2 of command $1, or "<file>" for a file name,
# "<word>" for a word of the user's; nothing for an option without one.
_tfd_values()
{
	case $1:$2 in
	run:--clock)
		echo "monotonic realtime boottime realtime-alarm boottime-alarm" ;;
	run:--api) echo "linux revised" ;;
	exec:--backend | run:--backend) echo "engine virtual kernel" ;;
	conform:--backend) echo "kernel engine virtual" ;;
	bench:--side) echo "kernel engine both" ;;
	exec:--trace | trace:--html | trace:--svg | trace:--chrome-json)
		echo "<file>" ;;
	exec:--virtual-rate | exec:--virtual-start | exec:--virtual-slack | conform:--filter | bench:--filter | \
	bench:--rounds) echo "<word>" ;;
	esac
}

_tfd()
{
	local cur=${COMP_WORDS[COMP_CWORD]} cmd= opt= vals i w
	local words=("${COMP_WORDS[@]:0:COMP_CWORD}")

	COMPREPLY=()
	# --name=value: bash splits at '=' (COMP_WORDBREAKS).
	if [[ $cur == = ]]; then
		opt=${words[${#words[@]} - 1]}
		cur=
	elif [[ ${words[${#words[@]} - 1]} == = ]]; then
		opt=${words[${#words[@]} - 2]}
	elif [[ $cur == --*=* ]]; then
		opt=${cur%%=*}
		cur=${cur#*=}
	fi

	# The command, and for exec where PROG starts.
	for ((i = 1; i < COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		if [[ -z $cmd ]]; then
			[[ $w == -* ]] && continue
			cmd=$w
			continue
		fi
		[[ $cmd == exec ]] || continue
		if [[ $w == -- ]]; then
			_tfd_prog $((i + 1))
			return
		fi
		if [[ $w == -* || $w == = ]]; then
			continue
		fi
		# A word after an option that takes one is its value.
		if [[ ${COMP_WORDS[i - 1]} == = ]] ||
		    [[ -n $(_tfd_values exec "${COMP_WORDS[i - 1]}") ]]; then
			continue
		fi
		_tfd_prog "$i"
		return
	done

	if [[ -z $cmd ]]; then
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "--help --version" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "run exec trace conform bench help" \
			    -- "$cur"))
		fi
		return
	fi
	if [[ $cmd == help ]]; then
		[[ $COMP_CWORD == 2 ]] && COMPREPLY=($(compgen -W \
		    "run exec trace conform bench" -- "$cur"))
		return
	fi

	[[ -n $opt ]] || opt=${words[${#words[@]} - 1]}
	[[ $opt == -* ]] && vals=$(_tfd_values "$cmd" "$opt")
	case $vals in
	"<file>")
		COMPREPLY=($(compgen -f -- "$cur"))
		compopt -o filenames 2>/dev/null
		return ;;
	"<word>") return ;;
	?*)
		COMPREPLY=($(compgen -W "$vals" -- "$cur"))
		return ;;
	esac
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$(_tfd_opts "$cmd")" -- "$cur"))
		[[ $cmd == exec ]] && COMPREPLY+=($(compgen -W "--" -- "$cur"))
	elif [[ $cmd == trace ]]; then
		COMPREPLY=($(compgen -f -- "$cur"))
		compopt -o filenames 2>/dev/null
	elif [[ $cmd == exec ]]; then
		_tfd_prog "$COMP_CWORD"
	fi
}

# tfd exec's PROG is word $1: complete from there as a command line of its
# own (bash-completion's _command_offset), else commands, then files.
_tfd_prog()
{
	if declare -F _command_offset >/dev/null; then
		_command_offset "$1"
	elif [[ $1 == "$COMP_CWORD" ]]; then
		COMPREPLY=($(compgen -c -- "${COMP_WORDS[COMP_CWORD]}"))
	else
		COMPREPLY=($(compgen -f -- "${COMP_WORDS[COMP_CWORD]}"))
		compopt -o filenames 2>/dev/null
	fi
}

complete -F _tfd tfd
