#!/usr/bin/env bash
# Builds kopia, the second peer of the scaleout benchmark (bench/suites/scaleout.mjs; restic is
# Debian's), from the Go module proxy at the version pinned below into $KURA_CACHE/bin (default
# ~/.cache/kura/bin). `go install github.com/kopia/kopia@v0.21.1` fails (the proxy refuses the
# version list: ../shared/SCALEOUT.md), so it builds through a throw-away module that requires
# it. Idempotent: instant when the binary is in place; a cold build takes ~1.5-3 min here.
set -euo pipefail

cache=${KURA_CACHE:-$HOME/.cache/kura}
bin=$cache/bin
KOPIA_VERSION=v0.21.1
target=$bin/kopia-$KOPIA_VERSION

if [ ! -x "$target" ]; then
  if ! command -v go >/dev/null; then
    for g in /usr/local/go/bin/go /usr/lib/go/bin/go; do [ -x "$g" ] && PATH=$(dirname "$g"):$PATH && break; done
  fi
  command -v go >/dev/null || { echo "fetch-kopia: go not found (this machine kind ships Go in /usr/local/go)" >&2; exit 1; }
  printf '\033[1m== build kopia %s\033[0m\n' "$KOPIA_VERSION"
  mkdir -p "$bin"
  tmp=$(mktemp -d "$bin/.build-kopia-XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  cat > "$tmp/go.mod" <<MOD
module kura.local/kopia-build

go 1.24

require github.com/kopia/kopia $KOPIA_VERSION
MOD
  cat > "$tmp/tools.go" <<'GO'
//go:build tools

package tools

import _ "github.com/kopia/kopia"
GO
  (cd "$tmp" && GOFLAGS=-mod=mod go mod tidy && CGO_ENABLED=0 GOFLAGS="-mod=mod -buildvcs=false" go build -o kopia github.com/kopia/kopia)
  "$tmp/kopia" --version >/dev/null
  mv "$tmp/kopia" "$target"
fi
ln -sfn "kopia-$KOPIA_VERSION" "$bin/kopia"
