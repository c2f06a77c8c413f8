#!/usr/bin/env bash
# Builds the two S3-compatible servers the object-store tests run against (../shared/SCALEOUT.md,
# decision 0039): versitygw and MinIO, from the Go module proxy at the versions pinned below,
# into $KURA_CACHE/bin (default ~/.cache/kura/bin), named for their version so a pin change
# builds again. Idempotent: seconds when both binaries are in place. A cold build takes
# ~2.5 min (versitygw) and ~5.5 min (MinIO) on two cores; the tests skip neither server.
#
# MinIO is AGPLv3: it runs here as a separate test server only, never linked into Kura.
set -euo pipefail

cache=${KURA_CACHE:-$HOME/.cache/kura}
bin=$cache/bin
VERSITYGW_MODULE=github.com/versity/versitygw/cmd/versitygw
VERSITYGW_VERSION=v1.8.0
MINIO_MODULE=github.com/minio/minio
# The newest MinIO module the proxy serves (MinIO stopped tagging modules): SCALEOUT.md.
MINIO_VERSION=v0.0.0-20260212201848-7aac2a2c5b7c

if ! command -v go >/dev/null; then
  for g in /usr/local/go/bin/go /usr/lib/go/bin/go; do [ -x "$g" ] && PATH=$(dirname "$g"):$PATH && break; done
fi
command -v go >/dev/null || { echo "fetch-s3-servers: go not found (this machine kind ships Go 1.26 in /usr/local/go)" >&2; exit 1; }

# build NAME MODULE VERSION: go install into a scratch GOBIN, checked, then moved into place
# (a build cut short never leaves a binary under its final name).
build() {
  local name=$1 module=$2 version=$3
  local target=$bin/$name-$version
  [ -x "$target" ] && return 0
  printf '\033[1m== go install %s@%s\033[0m\n' "$module" "$version"
  mkdir -p "$bin"
  local tmp
  tmp=$(mktemp -d "$bin/.build-XXXXXX")
  # CGO off: static binaries that do not depend on this machine's C toolchain.
  if ! GOBIN=$tmp CGO_ENABLED=0 GOFLAGS=-buildvcs=false go install "$module@$version"; then
    rm -rf "$tmp"
    echo "fetch-s3-servers: building $module@$version failed" >&2
    exit 1
  fi
  local built=$tmp/$(basename "$module")
  if ! go version -m "$built" | grep -q "$version"; then
    rm -rf "$tmp"
    echo "fetch-s3-servers: $built is not $module@$version" >&2
    exit 1
  fi
  mv "$built" "$target"
  rm -rf "$tmp"
}

build versitygw $VERSITYGW_MODULE $VERSITYGW_VERSION
build minio $MINIO_MODULE $MINIO_VERSION
# Stable names the tests and benchmarks start (test/helpers/s3-servers.ts).
ln -sfn "versitygw-$VERSITYGW_VERSION" "$bin/versitygw"
ln -sfn "minio-$MINIO_VERSION" "$bin/minio"
