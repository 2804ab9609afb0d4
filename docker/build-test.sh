#!/bin/sh
# Builds docker/Dockerfile's targets with docker or podman and runs one trial
# of each target's job spec in the image's filesystem: `trialshim sweep
# --max-trials 1` of examples/vertex/hpt.yaml (shim) and digits_job.yaml
# (digits), under chroot, so no container runtime is needed.
#
#   docker/build-test.sh [TARGET...]     # default: shim digits
#
# Prints a SKIP line and exits 0 when there is no builder, no base image
# (debian:12-slim, pulled if missing) or, for the trial, no root. Without a
# registry, a base image can be made from Debian's mirror:
#   debootstrap --variant=minbase bookworm DIR http://deb.debian.org/debian
#   tar -C DIR -c . | podman import - debian:12-slim
set -eu
cd "$(dirname "$0")/.."
targets=${*:-shim digits}
base=debian:12-slim

skip() { echo "SKIP docker/build-test.sh: $*"; exit 0; }

if command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then
  builder=docker build=""
elif command -v podman >/dev/null 2>&1; then
  builder=podman build="--isolation chroot"  # works without a container runtime
else
  skip "no docker daemon and no podman"
fi
$builder image inspect $base >/dev/null 2>&1 || $builder pull -q $base >/dev/null 2>&1 \
  || skip "no base image $base and none can be pulled (see the header for debootstrap)"

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
for target in $targets; do
  case $target in
    shim) job=examples/vertex/hpt.yaml ;;
    digits) job=examples/vertex/digits_job.yaml ;;
    *) echo "docker/build-test.sh: unknown target '$target' (shim, digits)" >&2; exit 2 ;;
  esac
  image=trialshim-$target:test
  echo "== $builder build --target $target -t $image"
  start=$(date +%s)
  # shellcheck disable=SC2086
  $builder build $build -f docker/Dockerfile --target "$target" -t "$image" .
  echo "== built $image in $(($(date +%s) - start)) s"

  [ "$(id -u)" = 0 ] || skip "built $image; the trial in it needs root (chroot)"
  fs=$root/$target
  mkdir -p "$fs"
  container=$($builder create "$image")
  $builder export "$container" | tar -C "$fs" -x
  $builder rm "$container" >/dev/null
  cp "$job" "$fs/tmp/job.yaml"
  # A private mount namespace: /proc and the few devices Python and LibTorch
  # open are gone with it, before rm -rf.
  echo "== one trial of $job in $image (chroot)"
  # shellcheck disable=SC2016  # expanded by the inner sh
  unshare -m sh -euc '
    fs=$1
    mount -t proc proc "$fs/proc"
    for dev in null zero random urandom; do
      touch "$fs/dev/$dev" && mount --bind "/dev/$dev" "$fs/dev/$dev"
    done
    exec chroot "$fs" /usr/bin/env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/root \
      sh -c "cd /app && trialshim sweep /tmp/job.yaml --max-trials 1 --parallel 1 --out /tmp/sweep"
  ' sh "$fs"
  python3 - "$fs/tmp/sweep/trials.json" "$target" <<'EOF'
import json, sys
trial = json.load(open(sys.argv[1]))["trials"][0]
print(f"== {sys.argv[2]}: trial {trial['id']} {trial['state']} in {trial['seconds']:.1f} s, "
      f"metric {trial['metric']} after {trial['reports']} reports, args {' '.join(trial['args'])}")
sys.exit(trial["state"] != "SUCCEEDED" or trial["metric"] is None)
EOF
done
echo "PASS docker/build-test.sh: $targets"
