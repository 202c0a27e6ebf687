#!/usr/bin/env bash
# A real Kubernetes 1.20.2 cluster on this machine, for the kubernetes tier of the tests
# (../../docs/deploying-kubernetes.md).
#
# - Binaries built from Debian bookworm's `kubernetes` source package (build.sh, cached).
# - etcd, containerd, runc and the CNI plugins from Debian's packages.
# - Control plane on 10.245.0.1 (a host bridge of its own, ayk8s0): etcd, kube-apiserver,
#   kube-controller-manager, kube-scheduler; certificates made here with openssl.
# - Node `ay-node1` in the host's network namespace, node `ay-node2` (unless --one-node) in a network
#   and mount namespace of its own (`ip netns` ayk8s-node2, address 10.245.0.2 on ayk8s0): each a
#   containerd with a private config and a kubelet, pods on a CNI bridge (10.244.N.0/24), routed
#   between the host and the nodes. No kube-proxy (Service cluster IPs are not routed: the platform
#   reaches pods by their IPs) and no cluster DNS.
# - Images: the pause image built from the source's pause.c, and the agent images from Podman
#   (`podman save` as docker-archive, imported into each node's containerd).
#
# Idempotent: what runs is kept, what is missing is made. Leaves the host's iptables, apt config,
# Podman and its CNI networks alone (private CNI config and IPAM directories). Undo with down.sh.
# Progress on stderr; the last stdout line is the kubeconfig's path (also $STATE/admin.kubeconfig).
#
# Options: --one-node  only ay-node1;  --image REF  an image to import from Podman (repeatable;
# default: the minimal gateway image, and the OpenClaw image when Podman has it).
set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "$0")" && pwd)
STATE=${AGENTYARD_K8S_STATE:-/var/lib/agentyard/kubernetes}
export AGENTYARD_K8S_CACHE=${AGENTYARD_K8S_CACHE:-/var/cache/agentyard/kubernetes}
CONTROL_IP=10.245.0.1
HUB=ayk8s0
API_PORT=16443
ETCD_PORT=23790
ETCD_PEER_PORT=23800
SERVICE_CIDR=10.96.0.0/24
PAUSE_IMAGE=localhost/agentyard-k8s-pause:3.4.1
WAIT=${AGENTYARD_K8S_WAIT_SECONDS:-120}

log() { printf 'kubernetes: %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

NODES=(1 2)
IMAGES=()
while [ $# -gt 0 ]; do
  case "$1" in
    --one-node) NODES=(1); shift ;;
    --image) IMAGES+=("${2:?}"); shift 2 ;;
    *) die "unknown option $1" ;;
  esac
done
[ "$(id -u)" = 0 ] || die "run as root (containerd and kubelet need it)"

need() { command -v "$1" >/dev/null || { log "installing $2 (apt-get)"; DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$2" >&2; }; }
need etcd etcd-server
need containerd containerd
need runc runc
need openssl openssl
need gcc gcc
need /usr/lib/cni/bridge containernetworking-plugins
need nsenter util-linux

BIN=$("$SCRIPT_DIR/build.sh")
mkdir -p "$STATE/pki" "$STATE/run" "$STATE/log"
chmod 700 "$STATE/pki"

# --- Processes, each with a pid file (processes.sh); the very process recorded is kept. ----------
. "$SCRIPT_DIR/processes.sh"
launch() { # name command...  (setsid: the cluster outlives this script's session)
  local name=$1; shift
  if live_pid "$name" >/dev/null; then return 0; fi
  log "starting $name"
  setsid "$@" >>"$STATE/log/$name.log" 2>&1 </dev/null &
  record_pid "$name" $!
}
wait_for() { # what command...
  local what=$1; shift
  local deadline=$(( $(date +%s) + WAIT ))
  until "$@" >/dev/null 2>&1; do
    [ "$(date +%s)" -lt "$deadline" ] || die "$what not ready after ${WAIT}s (logs: $STATE/log)"
    sleep 0.5
  done
}

# --- Kernel settings the kubelet changes: saved once, restored by down.sh. ------------------------
if [ ! -f "$STATE/sysctl.saved" ]; then
  for k in vm.overcommit_memory vm.panic_on_oom kernel.panic kernel.panic_on_oops kernel.keys.root_maxkeys kernel.keys.root_maxbytes net.ipv4.ip_forward; do
    printf '%s=%s\n' "$k" "$(sysctl -n "$k")"
  done >"$STATE/sysctl.saved.partial"
  mv "$STATE/sysctl.saved.partial" "$STATE/sysctl.saved"
fi

# --- The control plane's bridge (the nodes' addresses live on it). ---------------------------------
if ! ip link show "$HUB" >/dev/null 2>&1; then
  ip link add "$HUB" type bridge
fi
ip -4 addr show dev "$HUB" | grep -q " $CONTROL_IP/" || ip addr add "$CONTROL_IP/24" dev "$HUB"
ip link set "$HUB" up

# --- Certificates (openssl): a CA and one certificate per client and server. ------------------------
PKI=$STATE/pki
if [ ! -f "$PKI/ca.crt" ]; then
  log "making the cluster CA and keys"
  openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=agentyard-kubernetes-ca" -keyout "$PKI/ca.key" -out "$PKI/ca.crt" 2>/dev/null
  openssl genrsa -out "$PKI/sa.key" 2048 2>/dev/null
  openssl rsa -in "$PKI/sa.key" -pubout -out "$PKI/sa.pub" 2>/dev/null
fi
cert() { # name subject [subjectAltName]
  local name=$1 subject=$2 san=${3:-}
  [ -f "$PKI/$name.crt" ] && return 0
  local ext; ext=$(mktemp)
  { echo "basicConstraints=CA:FALSE"; echo "keyUsage=critical,digitalSignature,keyEncipherment"
    if [ -n "$san" ]; then echo "extendedKeyUsage=serverAuth,clientAuth"; echo "subjectAltName=$san"; else echo "extendedKeyUsage=clientAuth"; fi
  } >"$ext"
  openssl req -new -newkey rsa:2048 -nodes -subj "$subject" -keyout "$PKI/$name.key" -out "$PKI/$name.csr" 2>/dev/null
  openssl x509 -req -in "$PKI/$name.csr" -CA "$PKI/ca.crt" -CAkey "$PKI/ca.key" -CAcreateserial -days 3650 -extfile "$ext" -out "$PKI/$name.crt" 2>/dev/null
  rm -f "$ext" "$PKI/$name.csr"
}
cert apiserver "/CN=kube-apiserver" "IP:$CONTROL_IP,IP:127.0.0.1,IP:10.96.0.1,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:localhost"
cert apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client"
cert admin "/O=system:masters/CN=agentyard-admin"
cert controller-manager "/CN=system:kube-controller-manager"
cert scheduler "/CN=system:kube-scheduler"
cert etcd "/CN=etcd" "IP:127.0.0.1"
for n in "${NODES[@]}"; do
  cert "node$n" "/O=system:nodes/CN=system:node:ay-node$n"
  cert "node$n-serving" "/CN=ay-node$n" "IP:10.245.0.$n,DNS:ay-node$n"
done

kubeconfig() { # file user cert
  local file=$1 user=$2 crt=$3
  cat >"$file.partial" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: agentyard
  cluster:
    server: https://$CONTROL_IP:$API_PORT
    certificate-authority-data: $(base64 -w0 "$PKI/ca.crt")
users:
- name: $user
  user:
    client-certificate-data: $(base64 -w0 "$PKI/$crt.crt")
    client-key-data: $(base64 -w0 "$PKI/$crt.key")
contexts:
- name: agentyard
  context: {cluster: agentyard, user: $user}
current-context: agentyard
EOF
  chmod 600 "$file.partial"
  mv "$file.partial" "$file"
}
kubeconfig "$STATE/admin.kubeconfig" admin admin
kubeconfig "$STATE/controller-manager.kubeconfig" controller-manager controller-manager
kubeconfig "$STATE/scheduler.kubeconfig" scheduler scheduler
for n in "${NODES[@]}"; do kubeconfig "$STATE/node$n.kubeconfig" "system:node:ay-node$n" "node$n"; done
# The API as the cluster's admin (curl: the machine's kubectl may be a cloud SDK's dispatcher).
api() { curl -fsS --cacert "$PKI/ca.crt" --cert "$PKI/admin.crt" --key "$PKI/admin.key" "https://$CONTROL_IP:$API_PORT$1"; }
node_ready() { api "/api/v1/nodes/$1" | tr -d ' \n' | grep -q '"type":"Ready","status":"True"'; }

# --- etcd and the control plane. --------------------------------------------------------------------
mkdir -p "$STATE/etcd" && chmod 700 "$STATE/etcd"
launch etcd etcd --name agentyard --data-dir "$STATE/etcd" \
  --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
  --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
  --initial-cluster "agentyard=http://127.0.0.1:$ETCD_PEER_PORT" --listen-metrics-urls ''
wait_for etcd curl -fsS "http://127.0.0.1:$ETCD_PORT/health"

launch kube-apiserver "$BIN/kube-apiserver" \
  --advertise-address "$CONTROL_IP" --bind-address "$CONTROL_IP" --secure-port "$API_PORT" \
  --etcd-servers "http://127.0.0.1:$ETCD_PORT" \
  --service-cluster-ip-range "$SERVICE_CIDR" \
  --client-ca-file "$PKI/ca.crt" --tls-cert-file "$PKI/apiserver.crt" --tls-private-key-file "$PKI/apiserver.key" \
  --kubelet-client-certificate "$PKI/apiserver-kubelet-client.crt" --kubelet-client-key "$PKI/apiserver-kubelet-client.key" \
  --kubelet-preferred-address-types InternalIP,Hostname \
  --service-account-key-file "$PKI/sa.pub" --service-account-signing-key-file "$PKI/sa.key" \
  --service-account-issuer https://kubernetes.default.svc.cluster.local \
  --authorization-mode Node,RBAC --enable-admission-plugins NodeRestriction \
  --allow-privileged=false --insecure-port 0 --profiling=false
wait_for kube-apiserver curl -fsS --cacert "$PKI/ca.crt" "https://$CONTROL_IP:$API_PORT/healthz"

launch kube-controller-manager "$BIN/kube-controller-manager" \
  --kubeconfig "$STATE/controller-manager.kubeconfig" \
  --authentication-kubeconfig "$STATE/controller-manager.kubeconfig" --authorization-kubeconfig "$STATE/controller-manager.kubeconfig" \
  --bind-address 127.0.0.1 --secure-port 10257 --port 0 \
  --service-account-private-key-file "$PKI/sa.key" --root-ca-file "$PKI/ca.crt" \
  --cluster-signing-cert-file "$PKI/ca.crt" --cluster-signing-key-file "$PKI/ca.key" \
  --use-service-account-credentials --controllers '*,-bootstrapsigner,-tokencleaner' \
  --service-cluster-ip-range "$SERVICE_CIDR" --leader-elect=false
launch kube-scheduler "$BIN/kube-scheduler" \
  --kubeconfig "$STATE/scheduler.kubeconfig" \
  --authentication-kubeconfig "$STATE/scheduler.kubeconfig" --authorization-kubeconfig "$STATE/scheduler.kubeconfig" \
  --bind-address 127.0.0.1 --secure-port 10259 --port 0 --leader-elect=false

# --- The pause image, from the source tree's pause.c (no registry to pull one from). ---------------
SRC=$(find "$AGENTYARD_K8S_CACHE/src" -mindepth 1 -maxdepth 1 -type d -name 'kubernetes-1.20*' | head -1)
IMAGES_DIR=$AGENTYARD_K8S_CACHE/images
mkdir -p "$IMAGES_DIR"
if [ ! -f "$IMAGES_DIR/pause.tar" ]; then
  log "building the pause image"
  work=$(mktemp -d)
  gcc -Os -static -DVERSION=v3.4.1 -o "$work/pause" "$SRC/build/pause/linux/pause.c"
  printf 'FROM scratch\nCOPY pause /pause\nUSER 65535:65535\nENTRYPOINT ["/pause"]\n' >"$work/Containerfile"
  podman build -q -t "$PAUSE_IMAGE" -f "$work/Containerfile" "$work" >&2
  podman save --format docker-archive -o "$IMAGES_DIR/pause.tar.partial" "$PAUSE_IMAGE" >&2
  mv "$IMAGES_DIR/pause.tar.partial" "$IMAGES_DIR/pause.tar"
  rm -rf "$work"
fi
if [ ${#IMAGES[@]} -eq 0 ]; then
  IMAGES=(localhost/agentyard-gateway-minimal:1)
  podman image exists localhost/agentyard-openclaw:2026.9.6 && IMAGES+=(localhost/agentyard-openclaw:2026.9.6)
fi
# One archive per image id: a rebuilt image is saved and imported again.
archives=("$IMAGES_DIR/pause.tar")
for ref in "${IMAGES[@]}"; do
  id=$(podman image inspect --format '{{.Id}}' "$ref" 2>/dev/null) || die "image $ref is not in Podman (infra/agent-image/build.sh builds the agent images)"
  tarball=$IMAGES_DIR/$(printf '%s' "$ref" | tr '/:' '__')-${id:0:12}.tar
  if [ ! -f "$tarball" ]; then
    log "saving $ref from Podman"
    rm -f "$IMAGES_DIR/$(printf '%s' "$ref" | tr '/:' '__')"-*.tar
    podman save --format docker-archive -o "$tarball.partial" "$ref" >&2
    mv "$tarball.partial" "$tarball"
  fi
  archives+=("$tarball")
done

# --- Nodes: containerd + kubelet each; node 1 on the host's network, others in a namespace. -----------
NS_PREFIX=ayk8s-node
node_config() { # n
  local n=$1 dir=$STATE/node$1 bridge=ayk8s$((10 + $1))
  mkdir -p "$dir/cni/net.d" "$dir/cni/ipam" "$dir/containerd" "$dir/kubelet" "$dir/logs/pods" "$dir/logs/containers" "$dir/runc"
  cat >"$dir/containerd.toml" <<EOF
version = 2
root = "$dir/containerd/root"
state = "$dir/containerd/state"
[grpc]
  address = "$dir/containerd.sock"
[ttrpc]
  address = "$dir/containerd.sock.ttrpc"
[plugins."io.containerd.internal.v1.opt"]
  path = "$dir/containerd/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  restrict_oom_score_adj = true
  enable_selinux = false
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "$dir/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$dir/cni/net.d"
EOF
  # The bridge is made here with its gateway address, so the plugin (isGateway false) leaves the
  # namespace's ip_forward alone; no ipMasq: no iptables rules on the host.
  cat >"$dir/cni/net.d/10-agentyard.conflist" <<EOF
{
  "cniVersion": "0.4.0",
  "name": "agentyard-node$n",
  "plugins": [
    {
      "type": "bridge", "bridge": "$bridge", "isGateway": false, "ipMasq": false, "hairpinMode": true,
      "ipam": {
        "type": "host-local", "dataDir": "$dir/cni/ipam",
        "ranges": [[{"subnet": "10.244.$n.0/24", "gateway": "10.244.$n.1"}]],
        "routes": [{"dst": "0.0.0.0/0", "gw": "10.244.$n.1"}]
      }
    },
    {"type": "loopback"}
  ]
}
EOF
  cat >"$dir/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: 10.245.0.$n
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $((10247 + 100 * n))
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $PKI/ca.crt}
authorization: {mode: Webhook}
tlsCertFile: $PKI/node$n-serving.crt
tlsPrivateKeyFile: $PKI/node$n-serving.key
cgroupDriver: cgroupfs
cgroupRoot: /agentyard-node$n
cgroupsPerQOS: true
failSwapOn: false
makeIPTablesUtilChains: false
podCIDR: 10.244.$n.0/24
maxPods: 50
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: 200Mi, nodefs.available: 5%, imagefs.available: 5%}
serializeImagePulls: false
EOF
  echo "$bridge"
}

# The node's cgroup root (cgroupRoot) in every hierarchy: the kubelet refuses to start without it.
cgroup_root() { # n
  local h d
  for h in /sys/fs/cgroup/*/; do
    [ -f "$h/cgroup.procs" ] || continue
    d=$h/agentyard-node$1
    [ -d "$d" ] && continue
    mkdir "$d"
    # A new cpuset is empty: it gets its parent's CPUs and memory nodes.
    if [ -f "$h/cpuset.cpus" ]; then cat "$h/cpuset.cpus" >"$d/cpuset.cpus"; cat "$h/cpuset.mems" >"$d/cpuset.mems"; fi
  done
}

start_node() { # n
  local n=$1 dir=$STATE/node$1 bridge wrap=() in_node=()
  bridge=$(node_config "$n")
  cgroup_root "$n"
  if [ "$n" != 1 ]; then
    local ns=$NS_PREFIX$n
    if ! ip netns list | grep -qw "$ns"; then
      log "making network namespace $ns (10.245.0.$n)"
      ip netns add "$ns"
    fi
    if ! ip link show "ayk8s-n$n" >/dev/null 2>&1; then
      ip link add "ayk8s-n$n" type veth peer name eth0 netns "$ns"
      ip link set "ayk8s-n$n" master "$HUB" up
    fi
    ip -n "$ns" link set lo up
    ip -n "$ns" -4 addr show dev eth0 | grep -q " 10.245.0.$n/" || ip -n "$ns" addr add "10.245.0.$n/24" dev eth0
    ip -n "$ns" link set eth0 up
    ip -n "$ns" route replace default via "$CONTROL_IP"
    # Forwarding inside the node's own namespace only (the host's stays as it is).
    ip netns exec "$ns" sysctl -qw net.ipv4.ip_forward=1
    ip route replace "10.244.$n.0/24" via "10.245.0.$n" dev "$HUB"
    # Its own mount namespace: /var/log/pods and /var/log/containers are the node's own (each
    # kubelet removes log directories of pods it does not know), shared by its containerd and kubelet.
    # nsenter, not `ip netns exec`: that remounts /sys, which hides the cgroup hierarchies.
    wrap=(nsenter "--net=/run/netns/$ns" unshare --mount --propagation slave "$SCRIPT_DIR/node-namespace.sh" "$dir")
    in_node=(ip netns exec "$ns")
  else
    in_node=()
  fi
  # The pods' bridge with its gateway address, made before the CNI plugin sees it.
  if ! ${in_node[@]+"${in_node[@]}"} ip link show "$bridge" >/dev/null 2>&1; then
    ${in_node[@]+"${in_node[@]}"} ip link add "$bridge" type bridge
    ${in_node[@]+"${in_node[@]}"} ip addr add "10.244.$n.1/24" dev "$bridge"
  fi
  ${in_node[@]+"${in_node[@]}"} ip link set "$bridge" up
  if [ "$n" = 1 ]; then
    launch "containerd-node$n" containerd --config "$dir/containerd.toml"
  else
    # containerd and kubelet run under one launcher in the namespaces (node-namespace.sh).
    launch "node$n" "${wrap[@]}" containerd --config "$dir/containerd.toml" -- "$BIN/kubelet" "${kubelet_args[@]}"
  fi
}

for n in "${NODES[@]}"; do
  dir=$STATE/node$n
  kubelet_args=(--config "$dir/kubelet.yaml" --kubeconfig "$STATE/node$n.kubeconfig"
    --container-runtime remote --container-runtime-endpoint "unix://$dir/containerd.sock"
    --root-dir "$dir/kubelet" --node-ip "10.245.0.$n" --hostname-override "ay-node$n"
    --pod-infra-container-image "$PAUSE_IMAGE" --v 1)
  start_node "$n"
  wait_for "containerd of ay-node$n" ctr --address "$dir/containerd.sock" version
  # Images: imported once per node and archive (a marker per archive).
  for tarball in "${archives[@]}"; do
    marker=$dir/imported.$(basename "$tarball")
    [ -f "$marker" ] && continue
    log "importing $(basename "$tarball") into ay-node$n"
    ctr --address "$dir/containerd.sock" -n k8s.io images import "$tarball" >&2
    touch "$marker"
  done
  if [ "$n" = 1 ]; then
    launch "kubelet-node$n" "$BIN/kubelet" "${kubelet_args[@]}"
  fi
done

for n in "${NODES[@]}"; do
  wait_for "node ay-node$n Ready" node_ready "ay-node$n"
done
log "ready: nodes ${NODES[*]/#/ay-node}"
echo "$STATE/admin.kubeconfig"
