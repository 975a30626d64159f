#!/usr/bin/env bash
# Side by side: ranklab's circulant collectives (and the other ranklab algorithms) against
# Open MPI, for bcast, allreduce and allgatherv (regular / irregular / degenerate), in one run.
#
#   scripts/compare_circulant.sh [BUILD_DIR]
#
# Runs:
#   - ranklab: bench_circulant_collectives ($RANKLAB_BENCH, else BUILD_DIR/bench/...) with
#     --p $PS --sizes $SIZES --coll $COLLS; CSV ranklab,coll,algo,mode,p,bytes,usec
#   - Open MPI: mpi_collectives.openmpi ($PEERS_DIR, else BUILD_DIR/bench/peers, else compiled
#     into a temporary directory from bench/peers/mpi_collectives.c with mpicc.openmpi),
#     once per p through bench/peers/run_peers.sh (which adds --oversubscribe when p > cores);
#     CSV openmpi,coll,mode,p,bytes,usec
# Both use the same definitions of "bytes" (see bench/peers/mpi_collectives.c): the bcast
# buffer; allreduce bytes/4 int32 (sum); allgatherv the average contribution, the total
# being p*bytes (irregular: rank i has (i+1)*base, base = 2*bytes/(p+1), the rest to the
# last rank; degenerate: rank 0 has everything). Then prints per collective and mode:
# p | bytes | circulant µs | fastest other ranklab algorithm | Open MPI µs |
# circulant/OpenMPI | other/OpenMPI   (ratios < 1: ranklab faster).
#
# Environment:
#   PS           rank counts (default 2,4,8,16)
#   SIZES        bytes per rank (default 8,1Ki,64Ki,1Mi)
#   COLLS        collectives (default bcast,allreduce,allgatherv)
#   TIME         measured seconds per configuration (default 0.1)
#   BATCHES      batches per configuration, median reported (default 5)
#   BENCH_ARGS   extra arguments for bench_circulant_collectives (e.g. "--algos circulant,binomial")
#   PEER_ARGS    extra arguments for mpi_collectives
#   RUN_TIMEOUT  seconds allowed per benchmark run (default 900)
#   RAW_CSV      where to keep all raw CSV lines (default: a temp file, path printed)
#   SKIP_OPENMPI=1 / SKIP_RANKLAB=1
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
build=${1:-}
[[ -n $build && ! -d $build ]] && { echo "compare_circulant.sh: no directory $build" >&2; exit 2; }
ps_list=${PS:-2,4,8,16}
sizes=${SIZES:-8,1Ki,64Ki,1Mi}
colls=${COLLS:-bcast,allreduce,allgatherv}
time_s=${TIME:-0.1}
batches=${BATCHES:-5}
tmo=${RUN_TIMEOUT:-900}
tmp=$(mktemp -d /tmp/compare_circulant.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
raw=${RAW_CSV:-$(mktemp /tmp/compare_circulant.XXXXXX.csv)}
: >"$raw"

log() { echo "compare_circulant: $*" >&2; }

find_peer() {
  local d
  for d in "${PEERS_DIR:-}" "${build:+$build/bench/peers}"; do
    [[ -n $d && -x $d/mpi_collectives.openmpi ]] && { echo "$d/mpi_collectives.openmpi"; return; }
  done
  if command -v mpicc.openmpi >/dev/null 2>&1; then
    log "mpi_collectives.openmpi not in a build dir; compiling it with mpicc.openmpi"
    if mpicc.openmpi -O2 -std=c11 -o "$tmp/mpi_collectives.openmpi" "$repo/bench/peers/mpi_collectives.c"; then
      echo "$tmp/mpi_collectives.openmpi"
    fi
  fi
}

find_ranklab() {
  if [[ -n ${RANKLAB_BENCH:-} ]]; then
    [[ -x $RANKLAB_BENCH ]] && echo "$RANKLAB_BENCH" || log "RANKLAB_BENCH=$RANKLAB_BENCH is not executable"
    return
  fi
  [[ -z $build ]] && return
  if [[ -x $build/bench/bench_circulant_collectives ]]; then
    echo "$build/bench/bench_circulant_collectives"
  else
    find "$build" -name bench_circulant_collectives -type f -perm -u+x 2>/dev/null | head -n 1
  fi
}

run() { # label, command... ; appends stdout to $raw
  local label=$1 rc
  shift
  log "running $label: $*"
  timeout "$tmo" "$@" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  cat "$tmp/out" >>"$raw"
  if ((rc != 0)); then
    if ((rc == 124)); then log "$label timed out after ${tmo}s (partial results kept)"; else log "$label failed (exit $rc)"; fi
    sed 's/^/    /' "$tmp/err" | tail -n 8 >&2
  fi
}

if [[ ${SKIP_RANKLAB:-0} != 1 ]]; then
  rl=$(find_ranklab)
  if [[ -n $rl ]]; then
    # shellcheck disable=SC2086
    run ranklab "$rl" --coll "$colls" --p "$ps_list" --sizes "$sizes" --time "$time_s" --batches "$batches" \
      --no-table ${BENCH_ARGS:-}
  else
    log "bench_circulant_collectives not found (set RANKLAB_BENCH or pass a build dir); ranklab columns empty"
  fi
fi

if [[ ${SKIP_OPENMPI:-0} != 1 ]]; then
  bin=$(find_peer)
  if [[ -n $bin ]] && command -v mpirun.openmpi >/dev/null 2>&1; then
    for p in ${ps_list//,/ }; do
      # shellcheck disable=SC2086
      run "Open MPI p=$p" "$repo/bench/peers/run_peers.sh" openmpi "$p" "$bin" "$colls" "$sizes" \
        --impl openmpi --no-header --time "$time_s" --batches "$batches" ${PEER_ARGS:-}
    done
  else
    log "Open MPI (mpi_collectives.openmpi / mpirun.openmpi) not available; Open MPI column empty"
  fi
fi

python3 - "$raw" <<'EOF'
import sys

rl = {}    # (coll, mode, p, bytes) -> {algo: usec}
ompi = {}  # (coll, mode, p, bytes) -> usec
for line in open(sys.argv[1]):
    f = line.strip().split(",")
    try:
        if len(f) == 7 and f[0] == "ranklab":
            rl.setdefault((f[1], f[3], int(f[4]), int(f[5])), {})[f[2]] = float(f[6])
        elif len(f) == 6 and f[0] == "openmpi":
            ompi[(f[1], f[2], int(f[3]), int(f[4]))] = float(f[5])
    except ValueError:
        continue  # headers, junk

keys = sorted(set(rl) | set(ompi), key=lambda k: (("bcast", "allreduce", "allgatherv").index(k[0])
                                                   if k[0] in ("bcast", "allreduce", "allgatherv") else 9,
                                                   ("regular", "irregular", "degenerate").index(k[1])
                                                   if k[1] in ("regular", "irregular", "degenerate") else 9,
                                                   k[2], k[3]))
if not keys:
    sys.exit("compare_circulant: no results")

def fb(b):
    for unit, sh in (("Mi", 20), ("Ki", 10)):
        if b >= 1 << sh and b % (1 << sh) == 0:
            return f"{b >> sh}{unit}"
    return str(b)

def fu(v):
    return "-" if v is None else (f"{v:.2f}" if v < 100 else f"{v:.0f}")

def ratio(a, b):
    return "-" if a is None or b is None or b <= 0 else f"{a / b:.2f}"

head = ["p", "bytes", "circulant µs", "best other ranklab", "Open MPI µs", "circulant/OpenMPI",
        "other/OpenMPI", "other/circulant"]
groups = {}
for k in keys:
    groups.setdefault((k[0], k[1]), []).append(k)
for (coll, mode), ks in groups.items():
    rows = []
    for k in ks:
        algos = rl.get(k, {})
        c = algos.get("circulant")
        others = {a: v for a, v in algos.items() if a != "circulant"}
        best = min(others, key=others.get) if others else None
        bv = others.get(best) if best else None
        o = ompi.get(k)
        rows.append([str(k[2]), fb(k[3]), fu(c), f"{best} {fu(bv)}" if best else "-", fu(o),
                     ratio(c, o), ratio(bv, o), ratio(bv, c)])
    w = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]
    line = lambda cells: "| " + " | ".join(x.rjust(w[i]) for i, x in enumerate(cells)) + " |"
    print(f"\n{coll} ({mode})")
    print(line(head))
    print("|" + "|".join("-" * (x + 1) + ":" for x in w) + "|")
    for r in rows:
        print(line(r))
print("\nµs per call, median of batches (each: max over ranks of the mean per call).")
print("circulant/OpenMPI < 1: ranklab's circulant faster; other/circulant > 1: circulant faster than the")
print("fastest other ranklab algorithm. Ranks are threads (ranklab) vs processes (Open MPI, oversubscribed")
print("beyond the core count). Measured in one run; on a shared machine the figures are noisy.")
EOF
rc=$?
log "raw CSV: $raw"
exit $rc
