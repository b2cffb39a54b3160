# bash completion for twinlab: commands from 'twinlab help', options from
# 'twinlab COMMAND --help' (so it knows what the installed binary knows),
# files for operands.
_twinlab()
{
	local cur=${COMP_WORDS[COMP_CWORD]} cmd=${COMP_WORDS[1]:-}
	local tl=${COMP_WORDS[0]}

	if [ "$COMP_CWORD" -eq 1 ]; then
		COMPREPLY=($(compgen -W "$("$tl" help 2>/dev/null |
			awk '/^  [a-z]/ { print $1 }') --version" -- "$cur"))
		return
	fi
	if [ "$cmd" = help ] && [ "$COMP_CWORD" -eq 2 ]; then
		COMPREPLY=($(compgen -W "$("$tl" help 2>/dev/null |
			awk '/^  [a-z]/ { print $1 }')" -- "$cur"))
		return
	fi
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$("$tl" "$cmd" --help 2>/dev/null |
			grep -o -- '--[a-z][a-z-]*' | sort -u)" -- "$cur"))
		return
	fi
	COMPREPLY=($(compgen -f -- "$cur"))
}
complete -o filenames -F _twinlab twinlab
