#!/bin/sh
# Builds tidemq's container image from this repository alone, pulling
# nothing: the static binary is built here (CGO_ENABLED=0) and staged with
# this machine's CA certificates and time zone data in a context whose
# Dockerfile (the repository's) starts FROM scratch.
#
#   deploy/image/build.sh [TAG]        default tag: tidemq:dev
#
# VERSION, COMMIT and BUILD_DATE (environment) go into the binary and the
# image's OCI labels. BINARY, if set, is a tidemq binary already built
# with the command below, used instead of building one; BINARY_OUT, if
# set, is where a copy of the binary in the image is left (CI runs it).
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
tag=${1:-tidemq:dev}
VERSION=${VERSION:-dev}
COMMIT=${COMMIT:-$(git -C "$root" rev-parse HEAD 2>/dev/null || true)}
BUILD_DATE=${BUILD_DATE:-$(date -u +%Y-%m-%dT%H:%M:%SZ)}
for f in /etc/ssl/certs/ca-certificates.crt /usr/share/zoneinfo/UTC; do
  [ -e "$f" ] || { echo "build.sh: $f is missing (Debian packages ca-certificates and tzdata)" >&2; exit 1; }
done
out=$(mktemp -d "${TMPDIR:-/tmp}/tidemq-image.XXXXXX")
trap 'rm -rf "$out"' EXIT
if [ -n "${BINARY:-}" ]; then
  cp "$BINARY" "$out/tidemq"
else
  cd "$root"
  # The one build command (e2e/release_test.go runs this very line).
  CGO_ENABLED=0 go build -trimpath -buildvcs=false -ldflags "-s -w -X main.version=${VERSION} -X main.commit=${COMMIT} -X main.buildDate=${BUILD_DATE}" -o "$out/tidemq" ./cmd/tidemq
fi
[ -z "${BINARY_OUT:-}" ] || cp "$out/tidemq" "$BINARY_OUT"
cp /etc/ssl/certs/ca-certificates.crt "$out/"
cp -RL /usr/share/zoneinfo "$out/zoneinfo"
install -d -m 0700 "$out/data"
cp "$root/Dockerfile" "$out/Dockerfile"
# The classic builder: it needs no BuildKit front-end image from a registry.
if ! DOCKER_BUILDKIT=0 docker build -q -t "$tag" --build-arg VERSION="$VERSION" --build-arg COMMIT="$COMMIT" \
  --build-arg BUILD_DATE="$BUILD_DATE" "$out" >/dev/null 2>"$out.log"; then
  cat "$out.log" >&2; rm -f "$out.log"; exit 1
fi
rm -f "$out.log"
echo "$tag"
