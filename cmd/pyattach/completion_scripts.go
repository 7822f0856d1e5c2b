package main

// The completion scripts are thin: each passes the command line to
// `pyattach __complete -- WORD...` and shows what it prints (see
// CompleteCmd), so commands, flags and the Python processes come from the
// binary that is installed.
var completionScripts = map[string]string{
	"bash": bashCompletion,
	"zsh":  zshCompletion,
	"fish": fishCompletion,
}

const bashCompletion = `# bash completion for pyattach; load it with: source <(pyattach completion bash)
_pyattach() {
	# bash splits "--pid=123" into "--pid" "=" "123": join them again.
	local -a words=()
	local i t eq=0
	for ((i = 0; i <= COMP_CWORD; i++)); do
		t=${COMP_WORDS[i]}
		if [ $i -gt 1 ] && { [ "$t" = = ] || [ $eq = 1 ]; }; then
			words[${#words[@]} - 1]+=$t
		else
			words+=("$t")
		fi
		[ "$t" = = ] && eq=1 || eq=0
	done
	local cur=${words[${#words[@]} - 1]}
	# What bash replaces is the part after the last "=".
	local pre=
	case $cur in --*=*) pre=${cur%=*}= ;; esac
	local out
	out=$(command pyattach __complete -- "${words[@]:1}" 2>/dev/null) || return 0
	local directive=${out%%$'\n'*} line
	local -a vals=() descs=()
	while IFS= read -r line; do
		[ -n "$line" ] || continue
		t=${line%%$'\t'*}
		vals+=("${t#"$pre"}")
		if [[ $line == *$'\t'* ]]; then descs+=("${line#*$'\t'}"); else descs+=(""); fi
	done < <(printf '%s\n' "$out" | tail -n +2)
	local -a files=()
	if [ "$directive" = files ]; then
		compopt -o filenames 2>/dev/null
		mapfile -t files < <(compgen -f -- "${cur#"$pre"}")
	fi
	COMPREPLY=()
	if [ $((${#vals[@]} + ${#files[@]})) -le 1 ]; then
		COMPREPLY=("${vals[@]}" "${files[@]}")
		return 0
	fi
	# Several candidates: show each value with its description; bash
	# inserts only what they have in common, which is part of a value.
	local width=0
	for i in "${!vals[@]}"; do
		[ ${#vals[i]} -le $width ] || width=${#vals[i]}
	done
	for i in "${!vals[@]}"; do
		if [ -n "${descs[i]}" ]; then
			printf -v line '%-*s  (%s)' "$width" "${vals[i]}" "${descs[i]}"
			if [ -n "${COLUMNS:-}" ] && [ ${#line} -gt $((COLUMNS - 2)) ]; then
				line="${line:0:$((COLUMNS - 5))}...)"
			fi
			COMPREPLY+=("$line")
		else
			COMPREPLY+=("${vals[i]}")
		fi
	done
	COMPREPLY+=("${files[@]}")
}
complete -F _pyattach pyattach
`

const zshCompletion = `#compdef pyattach
# zsh completion for pyattach: put it in a directory of $fpath as
# _pyattach, or load it with: source <(pyattach completion zsh)
_pyattach() {
	local out directive line value
	local -a lines cands plain
	out=$(command pyattach __complete -- "${(@)words[2,CURRENT]}" 2>/dev/null) || return 1
	lines=("${(@f)out}")
	directive=${lines[1]}
	for line in "${(@)lines[2,-1]}"; do
		[[ -n $line ]] || continue
		value=${line%%$'\t'*}
		if [[ $line == *$'\t'* ]]; then
			cands+=("${value//:/\\:}:${line#*$'\t'}")
		else
			plain+=("$value")
		fi
	done
	(( ${#cands} )) && _describe -t values 'pyattach' cands
	(( ${#plain} )) && compadd -- "${plain[@]}"
	if [[ $directive == files ]]; then
		[[ $PREFIX == --*=* ]] && compset -P '*='
		_files
	fi
	return 0
}
if [[ ${funcstack[1]} == _pyattach ]]; then
	_pyattach "$@"
else
	compdef _pyattach pyattach
fi
`

const fishCompletion = `# fish completion for pyattach: put it in ~/.config/fish/completions/pyattach.fish,
# or load it with: pyattach completion fish | source
function __pyattach_complete
	set -l words (commandline -opc)
	set -e words[1]
	set -l cur (commandline -ct)
	set -l out (command pyattach __complete -- $words "$cur" 2>/dev/null)
	or return
	set -l directive $out[1]
	set -e out[1]
	for line in $out
		echo $line
	end
	if test "$directive" = files
		# After --flag=, paths behind the flag.
		set -l pre (string match -r -- '^--[^=]*=' "$cur")
		for p in (__fish_complete_path (string replace -r -- '^--[^=]*=' '' "$cur"))
			echo "$pre$p"
		end
	end
end
complete -c pyattach -f -a '(__pyattach_complete)'
`
