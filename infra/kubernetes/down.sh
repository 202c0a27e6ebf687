#!/usr/bin/env bash
# Undoes infra/kubernetes/up.sh: stops every pod, kubelet, containerd and the control plane by their
# saved pids, unmounts what the kubelets mounted, removes the nodes' namespace, bridges, routes and
# cgroups, and restores the kernel settings the kubelet changed. Builds stay cached.
# Options: --purge  also removes the cluster's state (certificates, etcd data, images in containerd).
set -uo pipefail
STATE=${AGENTYARD_K8S_STATE:-/var/lib/agentyard/kubernetes}
PURGE=0; [ "${1:-}" = --purge ] && PURGE=1
log() { printf 'kubernetes: %s\n' "$*" >&2; }
[ -d "$STATE" ] || { log "nothing to undo ($STATE absent)"; exit 0; }

. "$(dirname "$0")/processes.sh"
stop_pid() { # name
  local pid
  if pid=$(live_pid "$1"); then
    log "stopping $1 ($pid)"
    kill -TERM "$pid"
    for _ in $(seq 1 60); do live_pid "$1" >/dev/null || break; sleep 0.25; done
    live_pid "$1" >/dev/null && kill -KILL "$pid"
  fi
  rm -f "$STATE/run/$1.pid"
}

# The kubelets first (they would restart what is killed), then every pod's processes through containerd.
stop_pid kubelet-node1
for dir in "$STATE"/node*/; do
  [ -S "$dir/containerd.sock" ] || continue
  ctr=(ctr --address "$dir/containerd.sock" -n k8s.io)
  n=$(basename "$dir"); n=${n#node}
  if [ "$n" != 1 ] && launcher=$(live_pid "node$n"); then
    # The node's launcher keeps its containerd while its kubelet stops.
    kill -USR1 "$launcher" 2>/dev/null || true
    for _ in $(seq 1 60); do pgrep -P "$launcher" -x kubelet >/dev/null || break; sleep 0.25; done
  fi
  for task in $("${ctr[@]}" tasks ls -q 2>/dev/null); do "${ctr[@]}" tasks kill -s SIGKILL "$task" >/dev/null 2>&1 || true; done
  for _ in $(seq 1 40); do [ -z "$("${ctr[@]}" tasks ls -q 2>/dev/null | head -1)" ] && break; for task in $("${ctr[@]}" tasks ls -q 2>/dev/null); do "${ctr[@]}" tasks delete "$task" >/dev/null 2>&1 || true; done; sleep 0.25; done
  for c in $("${ctr[@]}" containers ls -q 2>/dev/null); do "${ctr[@]}" containers delete "$c" >/dev/null 2>&1 || true; done
done
stop_pid containerd-node1
for f in "$STATE"/run/node*.pid; do [ -f "$f" ] && stop_pid "$(basename "$f" .pid)"; done
stop_pid kube-scheduler
stop_pid kube-controller-manager
stop_pid kube-apiserver
stop_pid etcd

# Whatever still runs in the nodes' pod cgroups, and the shims of the nodes' containerds (named by
# their containerd's socket): nothing of Podman's.
for dir in "$STATE"/node*/; do
  n=$(basename "$dir"); n=${n#node}
  for procs in /sys/fs/cgroup/*/agentyard-node"$n"; do
    [ -d "$procs" ] && find "$procs" -name cgroup.procs -exec cat {} + 2>/dev/null | xargs -r kill -KILL 2>/dev/null
  done
  pgrep -f -- "-address ${dir%/}/containerd.sock" | xargs -r kill -KILL 2>/dev/null
done

# Mounts under the cluster's state (kubelet root bind mounts, pod volumes, pod network namespaces).
for m in $(awk -v s="$STATE" '$2 ~ "^"s {print $2}' /proc/self/mounts | sort -r); do umount -l "$m" 2>/dev/null || true; done
for m in $(awk '$2 ~ "^/run/netns/cni-" || $2 ~ "^/var/run/netns/cni-" {print $2}' /proc/self/mounts | sort -r); do
  # Pod network namespaces made by this cluster's containerd (Podman makes none: it uses slirp4netns).
  umount "$m" 2>/dev/null && rm -f "$m"
done

ip netns list 2>/dev/null | awk '/^ayk8s-node/ {print $1}' | while read -r ns; do log "removing namespace $ns"; ip netns del "$ns"; done
for link in $(ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | cut -d@ -f1 | grep -E '^ayk8s'); do ip link del "$link" 2>/dev/null || true; done
ip route show | awk '/^10\.244\./ {print $1}' | while read -r r; do ip route del "$r" 2>/dev/null || true; done

# The nodes' cgroups (cgroupRoot /agentyard-nodeN), deepest first.
for root in /sys/fs/cgroup/*/; do
  for d in "$root"agentyard-node*; do
    [ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} \; 2>/dev/null
  done
done

if [ -f "$STATE/sysctl.saved" ]; then
  log "restoring kernel settings"
  while IFS== read -r k v; do sysctl -qw "$k=$v" || true; done <"$STATE/sysctl.saved"
  rm -f "$STATE/sysctl.saved"
fi
# Directories the kubelet and containerd make outside the state (removed only when empty).
rmdir /var/log/pods /var/log/containers /run/containerd/s /run/containerd/runc /run/containerd /var/lib/cni/results 2>/dev/null || true

if [ "$PURGE" = 1 ]; then log "removing $STATE"; rm -rf "$STATE"; fi
log "down"
