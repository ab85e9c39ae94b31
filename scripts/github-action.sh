#!/usr/bin/env bash
# Entry point of the kubegpu GitHub Action (action.yml): install kubegpu, lint, write SARIF for code scanning.
# Inputs come as INPUT_* environment variables; outputs go to $GITHUB_OUTPUT. Runs locally too.
set -euo pipefail

paths="${INPUT_PATHS:-.}"
sarif="${INPUT_SARIF_FILE:-kubegpu.sarif}"
install="${INPUT_INSTALL:-action}"   # action: this checkout of the action; pypi: kubegpu from PyPI; none: on PATH
version="${INPUT_VERSION:-}"
args="${INPUT_ARGS:-}"
fail_on="${INPUT_FAIL_ON:-}"

case "$install" in
  action) python -m pip install --quiet "${GITHUB_ACTION_PATH:-$(dirname "$0")/..}" ;;
  pypi) python -m pip install --quiet "kubegpu${version:+==$version}" ;;
  none) ;;
  *) echo "kubegpu action: install must be action, pypi or none, not '$install'" >&2; exit 2 ;;
esac
command -v kubegpu >/dev/null || { echo "kubegpu action: kubegpu is not on PATH" >&2; exit 2; }

read -r -a extra <<< "$args"
read -r -a targets <<< "$paths"
fail_args=()
[ -n "$fail_on" ] && fail_args=(--fail-on "$fail_on")

# SARIF for code scanning; its exit code decides the step (1: findings at or above --fail-on, 2: bad input).
status=0
mkdir -p "$(dirname "$sarif")"
kubegpu lint "${targets[@]}" "${extra[@]}" "${fail_args[@]}" --format sarif > "$sarif" || status=$?
if [ -n "${GITHUB_OUTPUT:-}" ]; then
  {
    echo "sarif-file=$sarif"
    echo "exit-code=$status"
  } >> "$GITHUB_OUTPUT"
fi
if [ "$status" -ne 0 ]; then
  echo "kubegpu lint exited $status; findings are in $sarif" >&2
fi
exit "$status"
