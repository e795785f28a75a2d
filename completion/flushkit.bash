# SPDX-License-Identifier: MIT
# bash completion for flushkit(1).
#
# The commands, benchmark kinds and options are read from the command's
# own --help output (as bash-completion's _longopt does), so they follow
# the program and are not kept here a second time:
#   flushkit --help           the commands  ("commands:" list)
#   flushkit bench --help     the kinds     ("kinds:" list)
#   flushkit CMD --help       the options   (-x, --long, --long=ARG)
# Values after "=" come from the help as well: "--flush=naive|smooth"
# lists them, and an option shown as "--method=METHOD" followed by an
# indented table ("writeback   start writeback ...") lists them there.
# The one placeholder whose values the help spells in prose, IO (the
# --sync-io backends), completes to the names of fk_sync_io_name().
# Placeholders DIR, PATH, SRC, DST, RESULT, P complete file names.  A
# first operand whose words the usage lines spell (reproduce 000|...|all,
# disk create|list|...) completes to them; exec's COMMAND to a command,
# then to that command's own completion.

_flushkit_help()
{
	# "$@": the command words before the cursor (flushkit [bench] CMD).
	LC_ALL=C "$@" --help 2>/dev/null
}

# The list under "HEADING:" in a help text (first word of each line).
_flushkit_list()
{
	awk -v h="$1:" '$0 == h {c = 1; next} c && NF == 0 {c = 0} c {print $1}'
}

# The options a help text defines: those of its usage lines (up to the
# first blank line) and of the option table (a line that starts, after
# indentation, with an option; only that line's part before its
# description, so "with --results" in prose is no option of its own).
_flushkit_options()
{
	awk '
	NR == 1 || (usage && NF) { usage = (NF > 0); print; next }
	{ usage = 0 }
	/^ +-/ { o = substr($0, match($0, /[^ ]/)); sub(/  .*$/, "", o); print o }' |
		grep -oE -- '(^|[][ ,|])--?[A-Za-z0-9][A-Za-z0-9-]*(=|\[=)?' |
		sed -E 's/^[][ ,|]//; s/\[=$/=/' | sort -u
}

# The words a command's first operand can be, from its usage lines:
# "flushkit reproduce 000|001|...|all" -> 000 001 ... all; "flushkit
# disk create ...", "flushkit disk list" -> create list; nothing where
# the operand is a placeholder (PATH, SRC) or an option comes first.
# $1: the command words' count after "flushkit" (1, or 2 for bench).
_flushkit_operands()
{
	awk -v skip="$1" '
	NF == 0 { exit }
	{
		for (i = 1; i <= NF && $i != "flushkit"; i++) ;
		i += skip + 1
		depth = 0
		for (; i <= NF; i++) {
			t = $i
			if (depth > 0 || substr(t, 1, 1) == "[") {
				depth += gsub(/\[/, "[", t) - gsub(/\]/, "]", t)
				continue
			}
			if (t ~ /^[a-z0-9][a-z0-9|-]*$/) {
				n = split(t, w, "|")
				for (k = 1; k <= n; k++) print w[k]
			}
			break
		}
	}' | sort -u
}

# Values of option $1 in the help text on stdin.
_flushkit_values()
{
	awk -v opt="$1" '
	function emit(s,   n, i, v) {
		n = split(s, v, "|")
		for (i = 1; i <= n; i++)
			if (v[i] !~ /^[A-Z_]+$/ && v[i] != "") print v[i]
	}
	{
		line = $0
		while ((i = index(line, opt "=")) > 0) {
			rest = substr(line, i + length(opt) + 1)
			match(rest, /^[A-Za-z0-9_|-]+/)
			val = substr(rest, 1, RLENGTH)
			if (val ~ /^[A-Z_]+$/) {
				placeholder = val
				table = 1
				indent = -1
			} else if (val != "") {
				emit(val)
			}
			line = substr(rest, RLENGTH + 1)
		}
		if (table && index($0, opt "=") == 0) {
			# An indented table of values below the option.
			if (match($0, /^ +[a-z][a-z0-9-]*  +/)) {
				lead = match($0, /[^ ]/) - 1
				if (indent < 0) indent = lead
				if (lead == indent) print $1
				else if (lead < indent) table = 0
			} else if (substr($0, 1, 20) != "                    ") {
				table = 0
			}
		}
	}
	END { if (placeholder) print "PLACEHOLDER=" placeholder }' | sort -u
}

_flushkit()
{
	local cur prev i
	local -a words cmd
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=
	((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
	COMPREPLY=()
	local fk=${COMP_WORDS[0]}
	[[ $fk == */* || $fk == flushkit ]] || fk=flushkit
	# The word being completed may be split at "=" (COMP_WORDBREAKS).
	local opt=
	if [[ $cur == = ]]; then
		opt=$prev
		cur=
	elif [[ $prev == = ]] && ((COMP_CWORD >= 2)); then
		opt=${COMP_WORDS[COMP_CWORD - 2]}
	elif [[ $cur == --*=* ]]; then
		opt=${cur%%=*}
		cur=${cur#*=}
	fi

	if ((COMP_CWORD == 1)); then
		words=($(_flushkit_help "$fk" | _flushkit_list commands) --help --version)
		COMPREPLY=($(compgen -W "${words[*]}" -- "$cur"))
		return
	fi
	cmd=("$fk" "${COMP_WORDS[1]}")
	if [[ ${COMP_WORDS[1]} == bench ]]; then
		if ((COMP_CWORD == 2)); then
			words=($(_flushkit_help "$fk" bench | _flushkit_list kinds) --help)
			COMPREPLY=($(compgen -W "${words[*]}" -- "$cur"))
			return
		fi
		cmd+=("${COMP_WORDS[2]}")
	fi

	if [[ -n $opt ]]; then
		local vals ph
		vals=$(_flushkit_help "${cmd[@]}" | _flushkit_values "$opt")
		ph=$(sed -n 's/^PLACEHOLDER=//p' <<<"$vals")
		vals=$(grep -v '^PLACEHOLDER=' <<<"$vals")
		case $ph in
		IO) vals+=" auto uring threads sequential" ;;
		DIR | PATH | P | FILE) COMPREPLY=($(compgen -f -- "$cur")); return ;;
		esac
		COMPREPLY=($(compgen -W "$vals" -- "$cur"))
		return
	fi
	if [[ $cur == -* ]]; then
		words=($(_flushkit_help "${cmd[@]}" | _flushkit_options))
		COMPREPLY=($(compgen -W "${words[*]}" -- "$cur"))
		# "--method=" waits for its value: no space after it.
		if [[ ${#COMPREPLY[@]} -eq 1 && ${COMPREPLY[0]} == *= ]]; then
			compopt -o nospace 2>/dev/null
		fi
		return
	fi
	# flushkit exec [OPTIONS] [--] COMMAND ARGS: a command, then its own
	# completion (bash-completion's _command_offset where it is loaded).
	if [[ ${COMP_WORDS[1]} == exec ]]; then
		for ((i = 2; i < COMP_CWORD; i++)); do
			[[ ${COMP_WORDS[i]} == -- ]] && { ((i++)); break; }
			[[ ${COMP_WORDS[i]} == -* || ${COMP_WORDS[i]} == = ||
				${COMP_WORDS[i - 1]} == = ]] || break
		done
		if ((COMP_CWORD == i)); then
			COMPREPLY=($(compgen -c -- "$cur"))
		elif declare -F _command_offset >/dev/null; then
			_command_offset "$i"
		else
			COMPREPLY=($(compgen -f -- "$cur"))
		fi
		return
	fi
	# The first operand, where the usage lines name its words.
	local given=0
	for ((i = ${#cmd[@]}; i < COMP_CWORD; i++)); do
		[[ ${COMP_WORDS[i]} == -* || ${COMP_WORDS[i]} == = ||
			${COMP_WORDS[i - 1]} == = ]] || given=1
	done
	if ((!given)); then
		words=($(_flushkit_help "${cmd[@]}" |
			_flushkit_operands $((${#cmd[@]} - 1))))
		if ((${#words[@]})); then
			COMPREPLY=($(compgen -W "${words[*]}" -- "$cur"))
			return
		fi
	fi
	COMPREPLY=($(compgen -f -- "$cur"))
}

complete -o filenames -o bashdefault -F _flushkit flushkit
