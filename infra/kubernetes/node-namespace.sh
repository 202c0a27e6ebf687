#!/usr/bin/env bash
# Runs one node's containerd and kubelet inside the node's own namespaces (up.sh starts it under
# `ip netns exec … unshare --mount`): /var/log/pods and /var/log/containers are bind-mounted from the
# node's directory, so the node's kubelet and containerd share them and no other kubelet sees them.
# Usage: node-namespace.sh NODE_DIR CONTAINERD_CMD... -- KUBELET_CMD...
# TERM stops both; USR1 stops the kubelet only (down.sh, to remove the pods through containerd
# first). Either ending on its own ends the node, so that up.sh starts it again.
set -euo pipefail
dir=$1; shift
containerd_cmd=(); while [ "$1" != -- ]; do containerd_cmd+=("$1"); shift; done; shift
kubelet_cmd=("$@")

mkdir -p /var/log/pods /var/log/containers
mount --bind "$dir/logs/pods" /var/log/pods
mount --bind "$dir/logs/containers" /var/log/containers
# The kubelet of 1.20 serves device plugins at a fixed path, whatever its root directory.
mkdir -p /var/lib/kubelet/device-plugins "$dir/device-plugins"
mount --bind "$dir/device-plugins" /var/lib/kubelet/device-plugins

pids=()
stop() { kill -TERM "${pids[@]}" 2>/dev/null || true; wait || true; exit 0; }
trap stop TERM INT
"${containerd_cmd[@]}" >>"$dir/containerd.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 240); do [ -S "$dir/containerd.sock" ] && break; sleep 0.25; done
"${kubelet_cmd[@]}" >>"$dir/kubelet.log" 2>&1 &
pids+=($!)
kubelet_stopping=0
trap 'kubelet_stopping=1; kill -TERM "${pids[1]}" 2>/dev/null || true' USR1
while true; do
  wait -n || true
  kill -0 "${pids[0]}" 2>/dev/null || break
  kill -0 "${pids[1]}" 2>/dev/null || [ "$kubelet_stopping" = 1 ] || break
done
stop
