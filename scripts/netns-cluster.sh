#!/usr/bin/env bash
# A cluster of N "nodes" on one Linux machine, for running multi-node gcbench (scan, coll, p2p)
# without a cluster: each node is a network namespace with its own hostname (a persistent UTS
# namespace), one veth pair to a bridge that lives in a namespace of its own (the host's network
# is never touched), and an rsh agent that enters a node so Open MPI's mpirun can start ranks
# across the nodes over TCP. Needs root (or CAP_SYS_ADMIN + CAP_NET_ADMIN), iproute2, util-linux.
#
#   scripts/netns-cluster.sh [--name NAME] check               exit 0 if namespaces can be made here,
#                                                              else 77 and why
#   scripts/netns-cluster.sh [--name NAME] up N                nodes node1..nodeN at 10.77.0.1..N/24
#   scripts/netns-cluster.sh [--name NAME] down                remove nodes, bridge, slow-node limits, state
#   scripts/netns-cluster.sh [--name NAME] exec NODE CMD...    run CMD inside NODE (network + hostname)
#   scripts/netns-cluster.sh [--name NAME] mpirun [ARGS] -- CMD...
#                                 mpirun -np N from node1 across all nodes, one rank per node, TCP over
#                                 the veths; ARGS go to mpirun
#   scripts/netns-cluster.sh [--name NAME] throttle NODE RATE  tc tbf on NODE's uplink (what it sends),
#                                                              e.g. 40mbit
#   scripts/netns-cluster.sh [--name NAME] unthrottle NODE
#   scripts/netns-cluster.sh [--name NAME] slow NODE PERCENT   a slow host: NODE's ranks get at most PERCENT
#                                 % of one CPU (a CPU-bandwidth cgroup, v2 cpu.max or v1 cfs quota); exit 3
#                                 when no writable cgroup with the cpu controller exists
#   scripts/netns-cluster.sh [--name NAME] unslow NODE
#
# NAME (default gcbscan, at most 8 of [a-z0-9]) keeps clusters apart, so tests can run side by
# side. State lives in /run/gcb-netns/NAME: hostfile, the agent, UTS namespace files, the slow
# node's wrapper and cgroup.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
state_root=/run/gcb-netns
subnet=10.77.0
name=gcbscan
die() { echo "netns-cluster: $*" >&2; exit 2; }
if [ "${1:-}" = "--name" ]; then
  [ "$#" -ge 2 ] || die "--name NAME"
  name=$2
  shift 2
fi
[[ "$name" =~ ^[a-z0-9]{1,8}$ ]] || die "--name must be 1 to 8 of [a-z0-9]"
cmd=${1:-}
[ "$#" -gt 0 ] && shift
state() { echo "$state_root/$name"; }
nodes() { cat "$(state)/nodes" 2>/dev/null || die "no cluster '$name' (run: $0 up N --name $name)"; }
node_index() {  # node3 -> 3
  local n=${1#node}
  [[ "$n" =~ ^[0-9]+$ ]] && [ "$n" -ge 1 ] && [ "$n" -le "$(nodes)" ] || die "unknown node '$1' (node1..node$(nodes))"
  echo "$n"
}
ns() { echo "$name-node$1"; }

# Enter node i: its network namespace and its UTS namespace (hostname), then run "$@" — through
# the node's wrapper when `slow` gave it one.
enter() {
  local i=$1
  shift
  local wrap=()
  [ -x "$(state)/node$i.wrap" ] && wrap=("$(state)/node$i.wrap")
  exec nsenter --net="/run/netns/$(ns "$i")" --uts="$(state)/node$i.uts" -- "${wrap[@]}" "$@"
}

check() {
  if [ "$(id -u)" -ne 0 ]; then
    echo "netns-cluster: not root: network namespaces need CAP_SYS_ADMIN and CAP_NET_ADMIN"
    exit 77
  fi
  for tool in ip nsenter unshare tc mpirun; do
    command -v "$tool" >/dev/null || { echo "netns-cluster: '$tool' not found"; exit 77; }
  done
  local probe="gcbprobe$$"
  if ! ip netns add "$probe" 2>/dev/null; then
    echo "netns-cluster: 'ip netns add' failed (no permission in this container?)"
    exit 77
  fi
  local ok=1
  ip -n "$probe" link add br0 type bridge 2>/dev/null || ok=0
  ip link add "gcbp$$a" type veth peer name "gcbp$$b" 2>/dev/null && ip link del "gcbp$$a" || ok=0
  # A persistent UTS namespace (bound to a file, as `up` makes one per node).
  mkdir -p "$state_root" && touch "$state_root/$probe.uts" &&
    unshare --uts="$state_root/$probe.uts" true 2>/dev/null && umount "$state_root/$probe.uts" || ok=0
  rm -f "$state_root/$probe.uts"
  ip netns del "$probe"
  [ "$ok" = 1 ] || { echo "netns-cluster: bridges, veth pairs or UTS namespaces cannot be made here"; exit 77; }
  exit 0
}

up() {
  local n=$1
  [[ "$n" =~ ^[0-9]+$ ]] && [ "$n" -ge 2 ] && [ "$n" -le 64 ] || die "up N: N must be 2..64"
  [ -e "$(state)" ] && die "cluster '$name' exists; run: $0 down --name $name"
  mkdir -p "$(state)"
  echo "$n" >"$(state)/nodes"
  ip netns add "$name-sw"
  ip -n "$name-sw" link set lo up
  ip -n "$name-sw" link add br0 type bridge
  ip -n "$name-sw" link set br0 up
  : >"$(state)/hostfile"
  for i in $(seq 1 "$n"); do
    # The pair is made in the host namespace under short unique names, then moved out at once.
    local a="${name}${i}a" b="${name}${i}b"
    ip netns add "$(ns "$i")"
    ip link add "$a" type veth peer name "$b"
    ip link set "$a" netns "$(ns "$i")"
    ip link set "$b" netns "$name-sw"
    ip -n "$(ns "$i")" link set "$a" name eth0
    ip -n "$(ns "$i")" addr add "$subnet.$i/24" dev eth0
    ip -n "$(ns "$i")" link set eth0 up
    ip -n "$(ns "$i")" link set lo up
    ip -n "$name-sw" link set "$b" master br0
    ip -n "$name-sw" link set "$b" up
    touch "$(state)/node$i.uts"
    unshare --uts="$(state)/node$i.uts" hostname "node$i"
    echo "node$i slots=1" >>"$(state)/hostfile"
  done
  # The agent Open MPI calls as `agent [options] HOST COMMAND...`: it enters HOST and runs the
  # command through a shell, as ssh would.
  cat >"$(state)/agent" <<EOF
#!/bin/sh
while [ \$# -gt 0 ]; do case "\$1" in -*) shift ;; *) break ;; esac; done
host=\$1; shift
exec "$here/scripts/netns-cluster.sh" --name "$name" exec "\$host" sh -c "\$*"
EOF
  chmod +x "$(state)/agent"
  echo "netns-cluster: $n nodes up ($name): node1..node$n at $subnet.1..$n/24; state in $(state)"
}

down() {
  local n
  n=$(cat "$(state)/nodes" 2>/dev/null || echo 0)
  for i in $(seq 1 "$n"); do
    unslow "node$i"
    umount "$(state)/node$i.uts" 2>/dev/null || true
    ip netns del "$(ns "$i")" 2>/dev/null || true
  done
  # Namespaces left by a cluster whose state is gone (an interrupted `up`).
  for left in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^$name-(node[0-9]+|sw)$" || true); do
    ip netns del "$left" 2>/dev/null || true
  done
  ip netns del "$name-sw" 2>/dev/null || true
  rm -rf "$(state)"
}

exec_node() {
  local i
  i=$(node_index "$1")
  shift
  enter "$i" "$@"
}

run_mpi() {
  local mpi_args=()
  while [ "$#" -gt 0 ] && [ "$1" != "--" ]; do
    mpi_args+=("$1")
    shift
  done
  [ "$#" -gt 0 ] && shift
  [ "$#" -gt 0 ] || die "mpirun: give the command after --"
  local n
  n=$(nodes)
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  # One rank per node over TCP on the veth subnet; no shared memory between "nodes". The nodes
  # share this machine's cores, so waiting ranks yield instead of spinning (a spinning rank would
  # take the core its peer needs to answer), and Open MPI binds nothing (a `slow` node's CPUs are
  # its wrapper's to choose).
  nsenter --net="/run/netns/$(ns 1)" --uts="$(state)/node1.uts" -- \
    mpirun --mca plm_rsh_agent "$(state)/agent" --hostfile "$(state)/hostfile" -np "$n" --map-by node \
    --mca btl tcp,self --mca btl_tcp_if_include "$subnet.0/24" --mca oob_tcp_if_include "$subnet.0/24" \
    --mca mpi_yield_when_idle 1 --bind-to none "${mpi_args[@]}" "$@"
}

throttle() {
  local i
  i=$(node_index "$1")
  local rate=$2
  # tbf (netem is not needed): the node's sends leave at RATE. A small bucket (8 KiB) so that a
  # message after a pause does not pass at full speed; 400 ms of queue so TCP is slowed, not
  # starved.
  ip netns exec "$(ns "$i")" tc qdisc replace dev eth0 root tbf rate "$rate" burst 8kb latency 400ms
}

unthrottle() {
  local i
  i=$(node_index "$1")
  ip netns exec "$(ns "$i")" tc qdisc del dev eth0 root 2>/dev/null || true
}

# A CPU-bandwidth cgroup for node i limited to PERCENT % of one CPU: the kernel's smallest quota,
# 1 ms, per period of 100/PERCENT ms — as short a period as the limit allows, so that measurements
# of a few milliseconds see the limit rather than a lucky full quota. Prints its directory, or
# nothing when no writable cgroup with the cpu controller exists.
make_cpu_cgroup() {
  local i=$1 pct=$2 dir
  if [ -f /sys/fs/cgroup/cgroup.controllers ] && grep -qw cpu /sys/fs/cgroup/cgroup.controllers; then
    dir=/sys/fs/cgroup/gcb-$name-node$i
    grep -qw cpu /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null ||
      echo +cpu >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null
    mkdir -p "$dir" 2>/dev/null && echo "1000 $(( 100000 / pct ))" >"$dir/cpu.max" 2>/dev/null &&
      { echo "$dir"; return; }
    rmdir "$dir" 2>/dev/null
  elif [ -f /sys/fs/cgroup/cpu/cpu.cfs_quota_us ]; then
    dir=/sys/fs/cgroup/cpu/gcb-$name-node$i
    mkdir -p "$dir" 2>/dev/null && echo "$(( 100000 / pct ))" >"$dir/cpu.cfs_period_us" 2>/dev/null &&
      echo 1000 >"$dir/cpu.cfs_quota_us" 2>/dev/null && { echo "$dir"; return; }
    rmdir "$dir" 2>/dev/null
  fi
  return 0
}

slow() {
  local i
  i=$(node_index "$1")
  local pct=$2
  [[ "$pct" =~ ^[0-9]+$ ]] && [ "$pct" -ge 1 ] && [ "$pct" -le 100 ] || die "slow NODE PERCENT: 1..100"
  local dir
  dir=$(make_cpu_cgroup "$i" "$pct")
  # No fallback: nice(1) beside a busy loop is no limit under the scheduler's autogroups (a rank
  # in a session of its own gets an equal share whatever its nice), and stopping and continuing
  # the node's processes from a shell loop leaves whole samples of a few ms untouched.
  [ -n "$dir" ] || { echo "netns-cluster: no writable cpu cgroup (v2 cpu.max or v1 cpu.cfs_quota_us): cannot slow a node here" >&2; exit 3; }
  echo "$dir" >"$(state)/node$i.cgroup"
  printf '#!/bin/sh\necho $$ >"%s/cgroup.procs"\nexec "$@"\n' "$dir" >"$(state)/node$i.wrap"
  chmod +x "$(state)/node$i.wrap"
  echo "netns-cluster: node$i limited to $pct % of a CPU ($dir)"
}

unslow() {
  local i dir pid
  i=$(node_index "$1")
  if [ -e "$(state)/node$i.cgroup" ]; then
    dir=$(cat "$(state)/node$i.cgroup")
    # Processes still inside (a run that is ending) go back to the parent group first.
    if [ -f "$dir/cgroup.procs" ]; then
      while read -r pid; do echo "$pid" >"$dir/../cgroup.procs" 2>/dev/null || true; done <"$dir/cgroup.procs"
    fi
    rmdir "$dir" 2>/dev/null || true
  fi
  rm -f "$(state)/node$i.cgroup" "$(state)/node$i.wrap"
}

case "$cmd" in
  check) check ;;
  up) [ "$#" -eq 1 ] || die "up N"; up "$1" ;;
  down) down ;;
  exec) [ "$#" -ge 2 ] || die "exec NODE CMD..."; exec_node "$@" ;;
  mpirun) run_mpi "$@" ;;
  throttle) [ "$#" -eq 2 ] || die "throttle NODE RATE"; throttle "$1" "$2" ;;
  unthrottle) [ "$#" -eq 1 ] || die "unthrottle NODE"; unthrottle "$1" ;;
  slow) [ "$#" -eq 2 ] || die "slow NODE PERCENT"; slow "$1" "$2" ;;
  unslow) [ "$#" -eq 1 ] || die "unslow NODE"; unslow "$1" ;;
  *) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac
