#!/usr/bin/env bash
# Runs the `// RUN:` lines of one test file, as LLVM's lit does, with a much
# smaller feature set:
#   - a line ending in '\' continues on the next RUN line;
#   - %s is the test file, %S its directory, %t a scratch path for this test;
#   - the tools named on the command line (hgc, FileCheck, not) are found
#     first on PATH under their own names;
#   - every RUN line runs under `bash -eo pipefail` and must succeed.
# Usage: run_lit.sh TEST_FILE TOOL...
set -euo pipefail

test_file="$1"
shift
scratch="${TEST_TMPDIR:-$(mktemp -d)}"
bin_dir="$scratch/lit-bin"
mkdir -p "$bin_dir"
for tool in "$@"; do
  ln -sf "$(cd "$(dirname "$tool")" && pwd)/$(basename "$tool")" \
    "$bin_dir/$(basename "$tool")"
done
export PATH="$bin_dir:$PATH"
export FILECHECK_OPTS="-enable-var-scope"

test_abs="$(cd "$(dirname "$test_file")" && pwd)/$(basename "$test_file")"
test_dir="$(dirname "$test_abs")"
temp_path="$scratch/$(basename "$test_file").tmp"

commands=()
pending=""
while IFS= read -r line; do
  case "$line" in
    *"// RUN:"*) ;;
    *) continue ;;
  esac
  body="${line#*// RUN:}"
  if [[ "$body" == *\\ ]]; then
    pending+="${body%\\} "
    continue
  fi
  commands+=("$pending$body")
  pending=""
done < "$test_file"

if [[ ${#commands[@]} -eq 0 ]]; then
  echo "error: $test_file has no '// RUN:' lines" >&2
  exit 1
fi

status=0
for command in "${commands[@]}"; do
  command="${command//%s/$test_abs}"
  command="${command//%S/$test_dir}"
  command="${command//%t/$temp_path}"
  echo "RUN: $command"
  if ! (cd "$scratch" && bash -eo pipefail -c "$command"); then
    echo "FAILED: $command" >&2
    status=1
  fi
done
exit $status
