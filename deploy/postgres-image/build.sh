#!/bin/sh
# Builds the PostgreSQL image of the compose check (see Dockerfile) from
# this machine's Debian postgresql package, pulling nothing.
#
#   deploy/postgres-image/build.sh [TAG]     default tag: tidemq-postgres:local
set -eu
here=$(cd "$(dirname "$0")" && pwd)
tag=${1:-tidemq-postgres:local}
pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
[ -x "$pgbin/postgres" ] || { echo "build.sh: no PostgreSQL server here (Debian package postgresql)" >&2; exit 1; }
major=$(basename "$(dirname "$pgbin")")
out=$(mktemp -d "${TMPDIR:-/tmp}/tidemq-pgimage.XXXXXX")
trap 'rm -rf "$out"' EXIT
root=$out/rootfs
# The server's files keep their paths: PostgreSQL finds its share and lib
# directories relative to where it was built to be installed.
mkdir -p "$root/usr/lib/postgresql/$major/lib" "$root/usr/share/postgresql" "$root/bin" "$root/etc" "$root/usr/share"
mkdir -p "$root/usr/lib/postgresql/$major/bin"
for b in postgres initdb pg_isready; do cp "$pgbin/$b" "$root/usr/lib/postgresql/$major/bin/"; done
ln -s "$major/bin" "$root/usr/lib/postgresql/bin"
for l in plpgsql.so dict_snowball.so; do cp "/usr/lib/postgresql/$major/lib/$l" "$root/usr/lib/postgresql/$major/lib/"; done
cp -R "/usr/share/postgresql/$major" "$root/usr/share/postgresql/"
cp -RL /usr/share/zoneinfo "$root/usr/share/zoneinfo"
cp "$(readlink -f /bin/sh)" "$root/bin/sh"
# Every shared library they load, and the loader.
for f in "$root"/usr/lib/postgresql/"$major"/bin/* "$root"/usr/lib/postgresql/"$major"/lib/*.so "$root/bin/sh"; do
  ldd "$f" 2>/dev/null | awk '/=> \//{print $3} /^\t\//{print $1}'
done | sort -u | while read -r lib; do
  mkdir -p "$root$(dirname "$lib")"
  cp -L "$lib" "$root$lib"
done
printf 'root:x:0:0:root:/:/bin/sh\npostgres:x:999:999:PostgreSQL:/var/lib/postgresql:/bin/sh\n' >"$root/etc/passwd"
printf 'root:x:0:\npostgres:x:999:\n' >"$root/etc/group"
install -d -m 1777 "$root/tmp"
install -d -m 0700 "$out/pghome" "$out/pghome/data"
cp "$here/entrypoint.sh" "$root/entrypoint.sh"
cp "$here/Dockerfile" "$out/Dockerfile"
if ! DOCKER_BUILDKIT=0 docker build -q -t "$tag" "$out" >/dev/null 2>"$out.log"; then
  cat "$out.log" >&2; rm -f "$out.log"; exit 1
fi
rm -f "$out.log"
echo "$tag"
