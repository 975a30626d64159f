#!/usr/bin/env bash
# Installs what ranklab needs from Debian's archive, idempotently: packages already present
# are not touched. Runs apt-get directly as root, through sudo otherwise.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git python3
  libtbb-dev          # oneTBB: parallel `ranklab verify`, baselines
  libboost-dev        # Boost.Lockfree: the mailboxes' SPSC rings
  libboost-context-dev  # Boost.Context: ranks as fibers
  libhwloc-dev        # hwloc: thread pinning, machine description
  doctest-dev         # doctest: the test suites
  libcli11-dev        # CLI11: the command line
  nlohmann-json3-dev  # JSON output of the tools
  libfmt-dev          # formatting
  libopenmpi-dev openmpi-bin  # Open MPI: MPI executor, interposer, peer benchmarks
  libmpich-dev mpich          # MPICH: MPI executor, interposer, peer benchmarks
  chromium                    # headless browser: renders the drawings, loads them in a test
  doxygen                     # the API reference from the headers' comments (target docs)
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages present"
  exit 0
fi
echo "setup: installing ${missing[*]}"
if [ "$(id -u)" -eq 0 ]; then sudo=(); else sudo=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq "${missing[@]}"
