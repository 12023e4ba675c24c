#!/bin/sh
# fails when its operation's input "fail" is true
[ "$fail" = "True" ] || [ "$fail" = "true" ] && { echo "asked to fail" >&2; exit 1; }
exit 0
