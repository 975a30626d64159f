#!/usr/bin/env bash
# Side-by-side round latency: ranklab vs Open MPI vs MPICH (2 ranks, sendrecv).
#
#   scripts/compare_pingpong.sh [BUILD_DIR]
#
# Runs, when available:
#   - ranklab's bench_round_latency: $RANKLAB_BENCH_ROUND_LATENCY, else
#     BUILD_DIR/bench/bench_round_latency, else the first executable of that
#     name under BUILD_DIR. Extra arguments: $RANKLAB_BENCH_ARGS. Only its
#     lines "ranklab,sendrecv,2,<bytes>,<usec>,<MBps>" are used.
#   - mpi_pingpong.openmpi / mpi_pingpong.mpich from $PEERS_DIR, else
#     BUILD_DIR/bench/peers; if not found there, they are compiled into a
#     temporary directory from bench/peers/mpi_pingpong.c with
#     mpicc.openmpi / mpicc.mpich (whichever exists).
# and prints: bytes | ranklab µs | Open MPI µs | MPICH µs | ranklab/OpenMPI | ranklab/MPICH
# (ratios < 1: ranklab is faster).
#
# Environment:
#   SIZES        message sizes for the MPI runs (default 8,64,512,4Ki,32Ki,256Ki,1Mi,4Mi,16Mi)
#   PEER_ARGS    extra arguments for mpi_pingpong (e.g. "--time 0.1 --batches 5")
#   RUN_TIMEOUT  seconds allowed per benchmark run (default 300)
#   RAW_CSV      where to keep all raw CSV lines (default: a temp file, path printed)
#   SKIP_OPENMPI=1 / SKIP_MPICH=1 / SKIP_RANKLAB=1
#   FORCE_MPICH=1  run MPICH even when 2 ranks would oversubscribe the cores
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
build=${1:-}
[[ -n $build && ! -d $build ]] && { echo "compare_pingpong.sh: no directory $build" >&2; exit 2; }
sizes=${SIZES:-8,64,512,4Ki,32Ki,256Ki,1Mi,4Mi,16Mi}
tmo=${RUN_TIMEOUT:-300}
np=2
cores=$(nproc)
tmp=$(mktemp -d /tmp/compare_pingpong.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
raw=${RAW_CSV:-$(mktemp /tmp/compare_pingpong.XXXXXX.csv)}
: >"$raw"

log() { echo "compare_pingpong: $*" >&2; }

# ---- locate the binaries ------------------------------------------------------
find_peer() { # impl -> path or empty
  local impl=$1 d
  for d in "${PEERS_DIR:-}" "${build:+$build/bench/peers}"; do
    [[ -n $d && -x $d/mpi_pingpong.$impl ]] && { echo "$d/mpi_pingpong.$impl"; return; }
  done
  if command -v "mpicc.$impl" >/dev/null 2>&1; then
    log "mpi_pingpong.$impl not in a build dir; compiling it with mpicc.$impl"
    if "mpicc.$impl" -O2 -std=c11 -o "$tmp/mpi_pingpong.$impl" "$repo/bench/peers/mpi_pingpong.c"; then
      echo "$tmp/mpi_pingpong.$impl"
    fi
  fi
}

find_ranklab() {
  if [[ -n ${RANKLAB_BENCH_ROUND_LATENCY:-} ]]; then
    if [[ -x $RANKLAB_BENCH_ROUND_LATENCY ]]; then
      echo "$RANKLAB_BENCH_ROUND_LATENCY"
    else
      log "RANKLAB_BENCH_ROUND_LATENCY=$RANKLAB_BENCH_ROUND_LATENCY is not executable"
    fi
    return
  fi
  [[ -z $build ]] && return
  if [[ -x $build/bench/bench_round_latency ]]; then
    echo "$build/bench/bench_round_latency"
  else
    find "$build" -name bench_round_latency -type f -perm -u+x 2>/dev/null | head -n 1
  fi
}

# ---- run ------------------------------------------------------------------------
run() { # label, command... ; appends stdout to $raw
  local label=$1 rc
  shift
  log "running $label: $*"
  timeout "$tmo" "$@" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  cat "$tmp/out" >>"$raw"
  if ((rc != 0)); then
    if ((rc == 124)); then
      log "$label timed out after ${tmo}s (partial results kept)"
    else
      log "$label failed (exit $rc)"
    fi
    sed 's/^/    /' "$tmp/err" | tail -n 5 >&2
  fi
}

if [[ ${SKIP_RANKLAB:-0} != 1 ]]; then
  rl=$(find_ranklab)
  if [[ -n $rl ]]; then
    # shellcheck disable=SC2086
    run ranklab "$rl" ${RANKLAB_BENCH_ARGS:-}
  else
    log "bench_round_latency not found (set RANKLAB_BENCH_ROUND_LATENCY or pass a build dir); ranklab column empty"
  fi
fi

if [[ ${SKIP_OPENMPI:-0} != 1 ]]; then
  bin=$(find_peer openmpi)
  if [[ -n $bin ]] && command -v mpirun.openmpi >/dev/null 2>&1; then
    cmd=(mpirun.openmpi)
    [[ $(id -u) -eq 0 ]] && cmd+=(--allow-run-as-root)
    if ((np <= cores)); then cmd+=(--bind-to core); else cmd+=(--oversubscribe --bind-to none); fi
    # shellcheck disable=SC2086
    run "Open MPI" "${cmd[@]}" -np "$np" "$bin" --impl openmpi --no-header --sizes "$sizes" ${PEER_ARGS:-}
  else
    log "Open MPI (mpi_pingpong.openmpi / mpirun.openmpi) not available; column empty"
  fi
fi

if [[ ${SKIP_MPICH:-0} != 1 ]]; then
  bin=$(find_peer mpich)
  if [[ -n $bin ]] && command -v mpirun.mpich >/dev/null 2>&1; then
    if ((np > cores)) && [[ ${FORCE_MPICH:-0} != 1 ]]; then
      log "MPICH: $np ranks on $cores core(s) would oversubscribe (MPICH busy-polls); skipped, FORCE_MPICH=1 to run"
    else
      cmd=(mpirun.mpich -np "$np")
      ((np <= cores)) && cmd+=(-bind-to core)
      # shellcheck disable=SC2086
      run MPICH "${cmd[@]}" "$bin" --impl mpich --no-header --sizes "$sizes" ${PEER_ARGS:-}
    fi
  else
    log "MPICH (mpi_pingpong.mpich / mpirun.mpich) not available; column empty"
  fi
fi

# ---- table ----------------------------------------------------------------------
python3 - "$raw" <<'EOF'
import sys

cols = ("ranklab", "openmpi", "mpich")
data = {}  # bytes -> impl -> usec
for line in open(sys.argv[1]):
    f = line.strip().split(",")
    if len(f) < 5 or f[1] != "sendrecv" or f[2] != "2":
        continue
    try:
        b, us = int(f[3]), float(f[4])
    except ValueError:
        continue  # header or junk
    data.setdefault(b, {})[f[0]] = us

if not data:
    sys.exit("compare_pingpong: no results")

def fmt_bytes(b):
    for unit, sh in (("Mi", 20), ("Ki", 10)):
        if b >= 1 << sh and b % (1 << sh) == 0:
            return f"{b >> sh}{unit}"
    return str(b)

def fmt_us(v):
    return "-" if v is None else (f"{v:.3f}" if v < 10 else f"{v:.1f}")

def ratio(a, b):
    return "-" if a is None or b is None or b <= 0 else f"{a / b:.2f}"

head = ["bytes", "ranklab µs", "Open MPI µs", "MPICH µs", "ranklab/OpenMPI", "ranklab/MPICH"]
rows = []
for b in sorted(data):
    r, o, m = (data[b].get(c) for c in cols)
    rows.append([fmt_bytes(b), fmt_us(r), fmt_us(o), fmt_us(m), ratio(r, o), ratio(r, m)])
w = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(head)]
line = lambda cells: "| " + " | ".join(c.rjust(w[i]) for i, c in enumerate(cells)) + " |"
print(line(head))
print("|" + "|".join("-" * (x + 1) + ":" for x in w) + "|")
for row in rows:
    print(line(row))
print("\nµs per round (one sendrecv exchange), median of batches; ratio < 1: ranklab faster.")
EOF
rc=$?
log "raw CSV: $raw"
exit $rc
