#!/bin/sh
# action.sh — the entry point of the GitHub Action (action.yml): checks the
# built site in $INPUT_DIRECTORY, prints GitHub annotations (each broken link
# on its file and line), writes SARIF to $INPUT_SARIF and a Markdown summary
# to $GITHUB_STEP_SUMMARY, records exit-code and sarif in $GITHUB_OUTPUT, and
# exits with linkpatrol's own exit code (see --fail-on).
#
# Environment: LINKPATROL (the binary; default linkpatrol on $PATH),
# INPUT_DIRECTORY (required), INPUT_FAIL_ON (default broken), INPUT_ARGS
# (more flags, split as a shell would, quotes included), INPUT_SARIF (default linkpatrol.sarif),
# RUNNER_TEMP (where the database goes; default /tmp), GITHUB_OUTPUT and
# GITHUB_STEP_SUMMARY (set by the runner; optional here).
set -u

bin=${LINKPATROL:-linkpatrol}
dir=${INPUT_DIRECTORY:-}
sarif=${INPUT_SARIF:-linkpatrol.sarif}
if [ -z "$dir" ]; then
	echo "::error::linkpatrol: the directory input is required" >&2
	exit 2
fi
if [ ! -d "$dir" ]; then
	echo "::error::linkpatrol: $dir is not a directory (build the site first)" >&2
	exit 2
fi

# Each run of the action is a new pass of a new site: the database lives in
# the runner's temporary directory, not in the checkout.
db="${RUNNER_TEMP:-/tmp}/linkpatrol-action.db"
rm -f "$db"

set -- check --db "$db" --new-pass --fail-on "${INPUT_FAIL_ON:-broken}" --format github -o "sarif:$sarif"
if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
	set -- "$@" -o "markdown:$GITHUB_STEP_SUMMARY"
fi
# INPUT_ARGS holds several flags, split as a shell splits words, quotes
# included (args: --exclude '^https://twitter\.com/' -H "Authorization: $T"),
# but without running anything: xargs reads the quotes and prints one word a
# line. Split on spaces alone, quotes became part of a regex that then
# matched nothing, silently.
if [ -n "${INPUT_ARGS:-}" ]; then
	if ! words=$(printf '%s\n' "$INPUT_ARGS" | xargs printf '%s\n' 2>&1); then
		echo "::error::linkpatrol: the args input is not valid: $words" >&2
		exit 2
	fi
	old_ifs=$IFS
	IFS='
'
	set -f
	# shellcheck disable=SC2086
	set -- "$@" $words
	set +f
	IFS=$old_ifs
fi
"$bin" "$@" "$dir"
code=$?

if [ -n "${GITHUB_OUTPUT:-}" ]; then
	echo "exit-code=$code" >>"$GITHUB_OUTPUT"
	if [ -f "$sarif" ]; then
		echo "sarif=$sarif" >>"$GITHUB_OUTPUT"
	fi
fi
exit "$code"
