#!/usr/bin/env bash
# Debian's chromium for the viewer's browser tests (test/viewer): installed when it is missing
# and this user may install packages (root with apt-get, as on CI); elsewhere the tests skip and
# say how to get it. Usage: tools/install_chromium.sh
set -euo pipefail

if command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; then
    exit 0
fi
if [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null 2>&1; then
    echo "browser: installing Debian's chromium for the viewer tests (apt-get)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends chromium >/dev/null
else
    echo "browser: chromium not found; the viewer's browser tests will skip" \
         "(install it with: sudo apt-get install chromium)"
fi
