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
# With ROUNDS=N the three run N times in turn (the order reversed every other round), so
# that each round's figures meet one state of the machine; the table then gives each
# implementation's median over the rounds and the median of the per-round ratios, with
# the range of those ratios. A VM that changes speed for seconds or minutes makes ratios
# of figures taken minutes apart meaningless; ratios within a round are the result.
#
# Environment:
#   SIZES        message sizes for the MPI runs (default 8,64,512,4Ki,32Ki,256Ki,1Mi,4Mi,16Mi)
#   PEER_ARGS    extra arguments for mpi_pingpong (e.g. "--time 0.1 --batches 5")
#   RUN_TIMEOUT  seconds allowed per benchmark run (default 300)
#   RAW_CSV      where to keep all raw CSV lines (default: a temp file, path printed)
#   ROUNDS       rounds of the three, in turn (default 1; see above)
#   SKIP_OPENMPI=1 / SKIP_MPICH=1 / SKIP_RANKLAB=1
#   FORCE_MPICH=1  run MPICH even when 2 ranks would oversubscribe the cores
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
build=${1:-}
[[ -n $build && ! -d $build ]] && { echo "compare_pingpong.sh: no directory $build" >&2; exit 2; }
sizes=${SIZES:-8,64,512,4Ki,32Ki,256Ki,1Mi,4Mi,16Mi}
rounds=${ROUNDS:-1}
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "compare_pingpong.sh: ROUNDS=$rounds: must be a positive integer" >&2; exit 2; }
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
round=1
run() { # label, command... ; appends stdout to $raw, each line prefixed with the round
  local label=$1 rc
  shift
  log "round $round: running $label: $*"
  timeout "$tmo" "$@" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  sed "s/^/$round,/" "$tmp/out" >>"$raw"
  if ((rc != 0)); then
    if ((rc == 124)); then
      log "$label timed out after ${tmo}s (partial results kept)"
    else
      log "$label failed (exit $rc)"
    fi
    sed 's/^/    /' "$tmp/err" | tail -n 5 >&2
  fi
}

run_ranklab() {
  if [[ ${SKIP_RANKLAB:-0} != 1 ]]; then
    rl_bin=${rl_bin-$(find_ranklab)}  # located in the first round
    if [[ -n $rl_bin ]]; then
      # shellcheck disable=SC2086
      run ranklab "$rl_bin" ${RANKLAB_BENCH_ARGS:-}
    else
      log "bench_round_latency not found (set RANKLAB_BENCH_ROUND_LATENCY or pass a build dir); ranklab column empty"
    fi
  fi
}

run_openmpi() {
  if [[ ${SKIP_OPENMPI:-0} != 1 ]]; then
    openmpi_bin=${openmpi_bin-$(find_peer openmpi)}
    if [[ -n $openmpi_bin ]] && command -v mpirun.openmpi >/dev/null 2>&1; then
      cmd=(mpirun.openmpi)
      [[ $(id -u) -eq 0 ]] && cmd+=(--allow-run-as-root)
      if ((np <= cores)); then cmd+=(--bind-to core); else cmd+=(--oversubscribe --bind-to none); fi
      # shellcheck disable=SC2086
      run "Open MPI" "${cmd[@]}" -np "$np" "$openmpi_bin" --impl openmpi --no-header --sizes "$sizes" ${PEER_ARGS:-}
    else
      log "Open MPI (mpi_pingpong.openmpi / mpirun.openmpi) not available; column empty"
    fi
  fi
}

run_mpich() {
  if [[ ${SKIP_MPICH:-0} != 1 ]]; then
    mpich_bin=${mpich_bin-$(find_peer mpich)}
    if [[ -n $mpich_bin ]] && command -v mpirun.mpich >/dev/null 2>&1; then
      if ((np > cores)) && [[ ${FORCE_MPICH:-0} != 1 ]]; then
        log "MPICH: $np ranks on $cores core(s) would oversubscribe (MPICH busy-polls); skipped, FORCE_MPICH=1 to run"
      else
        cmd=(mpirun.mpich -np "$np")
        ((np <= cores)) && cmd+=(-bind-to core)
        # shellcheck disable=SC2086
        run MPICH "${cmd[@]}" "$mpich_bin" --impl mpich --no-header --sizes "$sizes" ${PEER_ARGS:-}
      fi
    else
      log "MPICH (mpi_pingpong.mpich / mpirun.mpich) not available; column empty"
    fi
  fi
}

for ((round = 1; round <= rounds; ++round)); do
  if ((round % 2 == 1)); then
    run_ranklab; run_openmpi; run_mpich
  else
    run_mpich; run_openmpi; run_ranklab
  fi
done

# ---- table ----------------------------------------------------------------------
python3 - "$raw" <<'EOF'
import statistics
import sys

cols = ("ranklab", "openmpi", "mpich")
runs = {}  # bytes -> round -> impl -> usec
for line in open(sys.argv[1]):
    f = line.strip().split(",")
    if len(f) < 6 or f[2] != "sendrecv" or f[3] != "2":
        continue
    try:
        rnd, b, us = int(f[0]), int(f[4]), float(f[5])
    except ValueError:
        continue  # header or junk
    runs.setdefault(b, {}).setdefault(rnd, {})[f[1]] = us
data = {b: {c: statistics.median(v) for c in cols if (v := [r[c] for r in rs.values() if c in r])}
        for b, rs in runs.items()}
rounds = max((len(rs) for rs in runs.values()), default=0)

if not data:
    sys.exit("compare_pingpong: no results")

def fmt_bytes(b):
    for unit, sh in (("Mi", 20), ("Ki", 10)):
        if b >= 1 << sh and b % (1 << sh) == 0:
            return f"{b >> sh}{unit}"
    return str(b)

def fmt_us(v):
    return "-" if v is None else (f"{v:.3f}" if v < 10 else f"{v:.1f}")

def ratio(b, rival):
    """The median over rounds of ranklab's time over the rival's in the same round."""
    per_round = [r["ranklab"] / r[rival] for r in runs[b].values() if "ranklab" in r and r.get(rival, 0) > 0]
    if not per_round:
        return "-"
    text = f"{statistics.median(per_round):.2f}"
    return text if len(per_round) == 1 else f"{text} ({min(per_round):.2f}-{max(per_round):.2f})"

head = ["bytes", "ranklab µs", "Open MPI µs", "MPICH µs", "ranklab/OpenMPI", "ranklab/MPICH"]
rows = []
for b in sorted(data):
    r, o, m = (data[b].get(c) for c in cols)
    rows.append([fmt_bytes(b), fmt_us(r), fmt_us(o), fmt_us(m), ratio(b, "openmpi"), ratio(b, "mpich")])
w = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(head)]
line = lambda cells: "| " + " | ".join(c.rjust(w[i]) for i, c in enumerate(cells)) + " |"
print(line(head))
print("|" + "|".join("-" * (x + 1) + ":" for x in w) + "|")
for row in rows:
    print(line(row))
print("\nµs per round (one sendrecv exchange), median of batches"
      + (f", then median over {rounds} rounds; ratios: median (range) of the rounds' ratios" if rounds > 1 else "")
      + "; ratio < 1: ranklab faster.")
EOF
rc=$?
log "raw CSV: $raw"
exit $rc
