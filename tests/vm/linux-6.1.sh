#!/bin/bash
# tests/vm/run.sh on the newest installed Debian kernel of the 6.1 series
# (linux-image-amd64): a test of its own, so that each kernel has its own
# result.
TCX_TEST_NAME=$(basename "$0") exec "$(dirname "$0")/run.sh" 6.1
