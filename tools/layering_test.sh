#!/bin/sh
# //tools:layering_test: runs layering_test.py on the BUILD files it is given.
exec /usr/bin/python3 "$(dirname "$0")/layering_test.py" "$@"
