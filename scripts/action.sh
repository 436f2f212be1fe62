#!/bin/sh
# action.sh — the entry point of the GitHub Action (action.yml): checks the
# built site in $INPUT_DIRECTORY, prints GitHub annotations (each broken link
# on its file and line), writes SARIF to $INPUT_SARIF and a Markdown summary
# to $GITHUB_STEP_SUMMARY, records exit-code and sarif in $GITHUB_OUTPUT, and
# exits with linkpatrol's own exit code (see --fail-on).
#
# Environment: LINKPATROL (the binary; default linkpatrol on $PATH),
# INPUT_DIRECTORY (required), INPUT_FAIL_ON (default broken), INPUT_ARGS
# (more flags, split on spaces), INPUT_SARIF (default linkpatrol.sarif),
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
# INPUT_ARGS is split on spaces on purpose: it holds several flags.
# shellcheck disable=SC2086
"$bin" "$@" ${INPUT_ARGS:-} "$dir"
code=$?

if [ -n "${GITHUB_OUTPUT:-}" ]; then
	echo "exit-code=$code" >>"$GITHUB_OUTPUT"
	if [ -f "$sarif" ]; then
		echo "sarif=$sarif" >>"$GITHUB_OUTPUT"
	fi
fi
exit "$code"
