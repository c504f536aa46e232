#!/usr/bin/env bash
# Local stand-ins for the base images svc's generated Dockerfile builds FROM, for machines
# that reach no image registry (CI here). One minimal Debian bookworm, made with debootstrap
# from the Debian mirror this machine's apt uses, with Debian's python3 (+pip, venv) and this
# machine's Node binary, imported and tagged with every name in STANDIN_TAGS.
#
# A stand-in names an image, it does not reproduce it: its Python is Debian's (3.11), so it
# is tagged only as the python:3.11 image, and its Node is whatever `node` is here.
# The names must match src/image/runtime-images.ts (NODE_IMAGE) and the Python image the
# e2e project gets from the catalog; test/e2e/docker-build.test.ts checks that they do.
#
# Cached: does nothing when every tag already exists. STANDINS_REBUILD=1 forces a rebuild.
set -euo pipefail

STANDIN_TAGS=(${STANDIN_TAGS:-python:3.11-slim-bookworm node:22-bookworm-slim})
SUITE=bookworm

missing=()
for tag in "${STANDIN_TAGS[@]}"; do
  if [[ "${STANDINS_REBUILD:-}" == 1 ]] || ! docker image inspect "$tag" >/dev/null 2>&1; then
    missing+=("$tag")
  fi
done
if [[ ${#missing[@]} -eq 0 ]]; then
  echo "base-image stand-ins: all present (${STANDIN_TAGS[*]})"
  exit 0
fi

# The mirror apt uses here: deb822 sources first, then the one-line format.
mirror=$(
  { grep -hsE '^URIs:' /etc/apt/sources.list.d/*.sources | awk '{print $2}' || true
    grep -hsE '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list | awk '{print $2}' || true
  } 2>/dev/null | grep -v security | head -n 1
) || true
mirror=${mirror:-http://deb.debian.org/debian}
node_binary=$(command -v node)

work=$(mktemp -d /tmp/svc-standin.XXXXXX)
trap 'rm -rf "$work"' EXIT
rootfs="$work/rootfs"

echo "base-image stand-ins: debootstrap $SUITE from $mirror"
debootstrap --variant=minbase --include=python3,python3-pip,python3-venv,ca-certificates \
  "$SUITE" "$rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 || {
  tail -n 30 "$work/debootstrap.log" >&2
  exit 1
}

# Like the official python image: python, python3 and pip on PATH, pip allowed to install
# into the interpreter (Debian marks its Python as externally managed, PEP 668).
rm -f "$rootfs"/usr/lib/python3*/EXTERNALLY-MANAGED
ln -sf /usr/bin/python3 "$rootfs/usr/local/bin/python"
ln -sf /usr/bin/pip3 "$rootfs/usr/local/bin/pip"
# Like the official node image: the binary at /usr/local/bin/node.
install -m 0755 "$node_binary" "$rootfs/usr/local/bin/node"
# Trust what this machine trusts: where egress goes through a TLS-inspecting proxy (CI here),
# its CA is in /usr/local/share/ca-certificates, and pip in an image build (which brings
# its own CA bundle) must be pointed at the system one.
extra_cas=(/usr/local/share/ca-certificates/*.crt)
pip_cert=()
if [[ -e "${extra_cas[0]}" ]]; then
  cp "${extra_cas[@]}" "$rootfs/usr/local/share/ca-certificates/"
  chroot "$rootfs" update-ca-certificates >/dev/null 2>&1
  pip_cert=(--change 'ENV PIP_CERT=/etc/ssl/certs/ca-certificates.crt')
fi
# Keep the image small: no apt lists, docs or caches.
rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin "$rootfs"/usr/share/doc/* \
  "$rootfs"/usr/share/man/* "$rootfs"/usr/share/locale/*

image_id=$(tar -C "$rootfs" -c . | docker import \
  --platform linux/amd64 \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'ENV LANG=C.UTF-8' \
  "${pip_cert[@]}" \
  --change 'CMD ["python3"]' \
  --message "svc CI stand-in: debootstrap $SUITE + python3 + node $("$node_binary" --version)" \
  - )
for tag in "${STANDIN_TAGS[@]}"; do
  docker tag "$image_id" "$tag"
  echo "base-image stand-ins: tagged $tag"
done
