# Test driver (completions.rs): what zsh offers when TAB is pressed at the
# end of a line, one match a line. An interactive zsh in a pty (zpty)
# loads the completion from $1, compadd is wrapped to print each match,
# and a post-completion hook prints an end marker and exits. The markers
# are built at run time so the echo of these definitions does not hold them.
# $1: a directory holding _crem-ctl; $2: the line, completed where it ends.
zmodload zsh/zpty || exit 90
zpty z zsh -f -i || exit 91
zpty -w z "fpath=(${(q)1} \$fpath)"
zpty -w z 'autoload -U compinit; compinit -u -D'
zpty -w z 'compadd () {
  if [[ ${@[1,(i)(-|--)]} == *-(O|A|D)\ * ]]; then builtin compadd "$@"; return $?; fi
  typeset -a __hits
  builtin compadd -A __hits "$@"
  local h; for h in $__hits; do print -r -- "<${:-CAP}>$h"; done
}'
zpty -w z "null-line () { print -r -- \"<\${:-END}>\" }"
zpty -w z "comppostfuncs=( null-line exit )"
zpty -w z "bindkey '^I' complete-word"
zpty -n -w z "$2"$'\t'
local out all=""
integer n=0
while (( n++ < 200 )); do
  if zpty -r -t z out; then
    all+=$out
    [[ $all == *'<END>'* ]] && break
  else
    sleep 0.05
  fi
done
zpty -d z
local l
for l in ${(f)all}; do
  l=${l%$'\r'}
  [[ $l == *'<CAP>'* ]] && print -r -- ${l##*<CAP>}
done
[[ $all == *'<END>'* ]] || exit 92
