#!/usr/bin/env bash
# Side-by-side overlap of nonblocking collectives (they exist to overlap computation with
# communication, as A. D. Anenkov's LibNBC Bruck-allgather study stresses): ranklab's
# iallgather / iallreduce (progress in test/wait, progress thread) vs Open MPI's
# MPI_Iallgather / MPI_Iallreduce, measured the same way in the same run:
#
#   overlap% = max(0, 100 - (t_total - t_comp) / t_pure * 100)
#
#   scripts/compare_overlap.sh [--quick] [--mpich] [--repeat N] [BUILD_DIR]
#   scripts/compare_overlap.sh --from RAW.csv      (only print the tables of an earlier run)
#
#   --quick     sizes 8,64Ki, p = 2,4, algorithm auto only, shorter loops (~30 s)
#   --mpich     also MPICH (p = 2 only: it busy-polls and collapses when oversubscribed)
#   --repeat N  run everything N times (alternating implementations); the tables show the
#               median over the N runs of each figure (default 1; N times the run time)
#
# Default: allgather and allreduce, 8 B, 1 KiB, 64 KiB, 1 MiB per rank, p = 2,4,8,
# ranklab algorithms auto and circulant, ranklab modes test and thread, Open MPI mode test
# (about 2-3 minutes on 2 cores). p > cores runs oversubscribed (Open MPI with
# --oversubscribe --bind-to none).
#
# Binaries: BUILD_DIR/bench/bench_overlap (or $RANKLAB_BENCH_OVERLAP), and
# mpi_overlap.openmpi / mpi_overlap.mpich from $PEERS_DIR, else BUILD_DIR/bench/peers,
# else compiled into a temporary directory from bench/peers/mpi_overlap.c.
#
# Environment (override the defaults above):
#   COLLS=allgather,allreduce  SIZES=8,1Ki,64Ki,1Mi  PROCS=2,4,8  ALGOS=auto,circulant
#   MODES=test,thread (ranklab)  MPI_MODES=test (Open MPI / MPICH; also: wait)
#   TESTS=3 (test() calls per iteration in mode test)
#   LOOP_TIME=0.06 (s of the measured loop per configuration; --quick: 0.03)
#   RUN_TIMEOUT=300 (s per run)  RAW_CSV=path (default: a temp file, path printed)
#   SKIP_RANKLAB=1 / SKIP_OPENMPI=1
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
quick=0 mpich=0 repeat=1 build= from=
while (($#)); do
  case $1 in
    --quick) quick=1 ;;
    --mpich) mpich=1 ;;
    --repeat)
      [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || { echo "compare_overlap.sh: --repeat needs a count" >&2; exit 2; }
      repeat=$2
      shift
      ;;
    --from)
      [[ -f ${2:-} ]] || { echo "compare_overlap.sh: --from needs a CSV file" >&2; exit 2; }
      from=$2
      shift
      ;;
    -h|--help) sed -n '2,32p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "compare_overlap.sh: unknown option $1" >&2; exit 2 ;;
    *) build=$1 ;;
  esac
  shift
done
[[ -n $build && ! -d $build ]] && { echo "compare_overlap.sh: no directory $build" >&2; exit 2; }

if ((quick)); then
  colls=${COLLS:-allgather,allreduce} sizes=${SIZES:-8,64Ki} procs=${PROCS:-2,4}
  algos=${ALGOS:-auto} loop=${LOOP_TIME:-0.03}
else
  colls=${COLLS:-allgather,allreduce} sizes=${SIZES:-8,1Ki,64Ki,1Mi} procs=${PROCS:-2,4,8}
  algos=${ALGOS:-auto,circulant} loop=${LOOP_TIME:-0.06}
fi
modes=${MODES:-test,thread}
mpi_modes=${MPI_MODES:-test}
tests=${TESTS:-3}
tmo=${RUN_TIMEOUT:-300}
cores=$(nproc)
tmp=$(mktemp -d /tmp/compare_overlap.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
if [[ -n $from ]]; then
  raw=$from
else
  raw=${RAW_CSV:-$(mktemp /tmp/compare_overlap.XXXXXX.csv)}
  : >"$raw"
fi

log() { echo "compare_overlap: $*" >&2; }

# ---- locate the binaries ------------------------------------------------------
find_peer() { # impl -> path or empty
  local impl=$1 d
  for d in "${PEERS_DIR:-}" "${build:+$build/bench/peers}"; do
    [[ -n $d && -x $d/mpi_overlap.$impl ]] && { echo "$d/mpi_overlap.$impl"; return; }
  done
  if command -v "mpicc.$impl" >/dev/null 2>&1; then
    log "mpi_overlap.$impl not in a build dir; compiling it with mpicc.$impl"
    if "mpicc.$impl" -O2 -std=c11 -o "$tmp/mpi_overlap.$impl" "$repo/bench/peers/mpi_overlap.c"; then
      echo "$tmp/mpi_overlap.$impl"
    fi
  fi
}

find_ranklab() {
  if [[ -n ${RANKLAB_BENCH_OVERLAP:-} ]]; then
    [[ -x $RANKLAB_BENCH_OVERLAP ]] && echo "$RANKLAB_BENCH_OVERLAP" ||
      log "RANKLAB_BENCH_OVERLAP=$RANKLAB_BENCH_OVERLAP is not executable"
    return
  fi
  [[ -z $build ]] && return
  if [[ -x $build/bench/bench_overlap ]]; then
    echo "$build/bench/bench_overlap"
  else
    find "$build" -name bench_overlap -type f -perm -u+x 2>/dev/null | head -n 1
  fi
}

# ---- run ------------------------------------------------------------------------
run() { # label, command... ; appends stdout to $raw
  local label=$1 rc t0=$SECONDS
  shift
  log "running $label: $*"
  timeout "$tmo" "$@" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  log "$label: $((SECONDS - t0)) s"
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

if [[ -z $from ]]; then
  start=$SECONDS
  log "machine: $cores cores, load average $(cut -d' ' -f1-3 /proc/loadavg) (figures are noisy on a loaded machine)"

  rl=
  [[ ${SKIP_RANKLAB:-0} != 1 ]] && rl=$(find_ranklab)
  ompi_bin=
  [[ ${SKIP_OPENMPI:-0} != 1 ]] && ompi_bin=$(find_peer openmpi)
  mpich_bin=
  ((mpich)) && mpich_bin=$(find_peer mpich)

  for ((rep = 1; rep <= repeat; ++rep)); do
    ((repeat > 1)) && log "repetition $rep of $repeat"
    if [[ ${SKIP_RANKLAB:-0} != 1 ]]; then
      if [[ -n $rl ]]; then
        run ranklab "$rl" --no-header --colls "$colls" --sizes "$sizes" --procs "$procs" --algos "$algos" \
          --modes "$modes" --tests "$tests" --time "$loop"
      else
        log "bench_overlap not found (pass a build dir or set RANKLAB_BENCH_OVERLAP); ranklab columns empty"
      fi
    fi

    if [[ ${SKIP_OPENMPI:-0} != 1 ]]; then
      bin=$ompi_bin
      if [[ -n $bin ]] && command -v mpirun.openmpi >/dev/null 2>&1; then
        for np in ${procs//,/ }; do
          cmd=(mpirun.openmpi)
          [[ $(id -u) -eq 0 ]] && cmd+=(--allow-run-as-root)
          if ((np <= cores)); then cmd+=(--bind-to core); else cmd+=(--oversubscribe --bind-to none); fi
          run "Open MPI p=$np" "${cmd[@]}" -np "$np" "$bin" --impl openmpi --no-header --colls "$colls" \
            --sizes "$sizes" --modes "$mpi_modes" --tests "$tests" --time "$loop"
        done
      else
        log "Open MPI (mpi_overlap.openmpi / mpirun.openmpi) not available; column empty"
      fi
    fi

    if ((mpich)); then
      bin=$mpich_bin
      if [[ -n $bin ]] && command -v mpirun.mpich >/dev/null 2>&1; then
        np=2
        cmd=(mpirun.mpich -np "$np")
        ((np <= cores)) && cmd+=(-bind-to core)
        run "MPICH p=$np" "${cmd[@]}" "$bin" --impl mpich --no-header --colls "$colls" --sizes "$sizes" \
          --modes "$mpi_modes" --tests "$tests" --time "$loop"
      else
        log "MPICH (mpi_overlap.mpich / mpirun.mpich) not available; column empty"
      fi
    fi
  done
  log "measured in $((SECONDS - start)) s"
fi

# ---- table ----------------------------------------------------------------------
python3 - "$raw" "$tests" <<'EOF'
import statistics
import sys

rows = {}   # (coll, p, bytes) -> {(impl, mode): [(t_pure, t_comp, t_total, overlap), ...]}
order = []  # column keys
for line in open(sys.argv[1]):
    f = line.strip().split(",")
    if len(f) != 9:
        continue
    try:
        impl, coll, mode, p, b = f[0], f[1], f[2], int(f[3]), int(f[4])
        vals = tuple(float(x) for x in f[5:9])
    except ValueError:
        continue  # header or junk
    key = (impl, mode)
    if key not in order:
        order.append(key)
    rows.setdefault((coll, p, b), {}).setdefault(key, []).append(vals)

if not rows:
    sys.exit("compare_overlap: no results")

# ranklab columns first, then the MPIs.
order.sort(key=lambda k: (not k[0].startswith("ranklab"), k[0].startswith("mpich"), k[0], k[1]))

def fmt_bytes(b):
    for unit, sh in (("Mi", 20), ("Ki", 10)):
        if b >= 1 << sh and b % (1 << sh) == 0:
            return f"{b >> sh}{unit}"
    return str(b)

def label(k):
    impl, mode = k
    impl = impl.replace("ranklab-", "rl-").replace("openmpi", "OpenMPI").replace("mpich", "MPICH")
    return f"{impl} {mode}"

def table(title, pick, fmt):
    head = ["coll", "p", "bytes"] + [label(k) for k in order]
    body = []
    for (coll, p, b) in sorted(rows):
        cells = rows[(coll, p, b)]
        body.append([coll, str(p), fmt_bytes(b)] +
                    ["-" if k not in cells else fmt(statistics.median(pick(v) for v in cells[k]))
                     for k in order])
    w = [max(len(h), *(len(r[i]) for r in body)) for i, h in enumerate(head)]
    line = lambda cs: "| " + " | ".join(c.ljust(w[i]) if i == 0 else c.rjust(w[i]) for i, c in enumerate(cs)) + " |"
    print(title)
    print(line(head))
    print("|" + "|".join("-" * (x + 1) + ("-" if i == 0 else ":") for i, x in enumerate(w)) + "|")
    for r in body:
        print(line(r))
    print()

runs = max(len(v) for cells in rows.values() for v in cells.values())
more = f" (median of {runs} runs)" if runs > 1 else ""
table(f"overlap % (higher is better){more}", lambda v: v[3], lambda x: f"{x:.0f}")
table(f"t_pure µs (start + wait, no computation){more}", lambda v: v[0],
      lambda x: f"{x:.1f}" if x < 1000 else f"{x:.0f}")
table(f"t_total / (t_pure + t_comp): 1 = no overlap, 0.5 = full overlap, > 1 = slower than "
      f"not overlapping{more}", lambda v: v[2] / (v[0] + v[1]) if v[0] + v[1] > 0 else 0.0,
      lambda x: f"{x:.2f}")
print(f"modes: test = no progress thread, computation in {int(sys.argv[2]) + 1} slices with a test()/MPI_Test "
      "between slices;\n       thread = ranklab progress thread, no test(); wait = progress only in start and wait.")
print("overlap% = max(0, 100 - (t_total - t_comp)/t_pure*100) from medians over iterations of the max "
      "over ranks;\nvalues above 100 (t_total < t_comp), and t_pure far above its neighbours, are "
      "disturbances (other load on the machine).")
EOF
rc=$?
log "raw CSV: $raw"
exit $rc
