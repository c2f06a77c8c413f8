# Sourced by the scripts: paths and tool locations shared by set-up, build and test.
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# rustup installs cargo here; a non-login CI shell may not have it on PATH yet.
if [ -d "$HOME/.cargo/bin" ]; then PATH="$HOME/.cargo/bin:$PATH"; fi
# better-sqlite3 (later issues) compiles with node-gyp and needs Node's headers; pnpm reads
# this from the environment only (TOOLCHAIN.md).
export npm_config_nodedir=${npm_config_nodedir:-/usr}
# onnxruntime-node's install script fetches from a host that is not reachable here; the
# linux-x64 library it needs is inside the package already (TOOLCHAIN.md).
export ONNXRUNTIME_NODE_INSTALL=skip
export PATH root
step() { printf '\033[1m== %s\033[0m\n' "$*"; }
