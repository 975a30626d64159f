#!/usr/bin/env python3
"""Test of scripts/compare_pingpong.sh's rounds, without MPI and without timing anything.

    test_compare_pingpong.py REPO_DIR WORK_DIR

Stand-ins replace the three programs: a ranklab round-latency program, an mpi_pingpong per
MPI and an mpirun per MPI (first on PATH) that starts the program once. Each stand-in
prints, on its k-th start, the k-th of its own list of times, and appends its name to a
log. With ROUNDS=3 the test checks:
1. the order of the starts: ranklab, Open MPI, MPICH in odd rounds, reversed in even ones;
2. each column is the median of that implementation's rounds;
3. each ratio is the median of the rounds' own ratios, with their range: per round
   ranklab/Open MPI 0.5, 0.75, 0.25 gives "0.50 (0.25-0.75)", which no ratio of the
   columns' medians (0.1 / 0.4) would give.
And that ROUNDS=0 is refused (exit 2, the message naming ROUNDS).
"""
import os
import shutil
import stat
import subprocess
import sys

repo, work = sys.argv[1:3]
script = os.path.join(repo, "scripts", "compare_pingpong.sh")
shutil.rmtree(work, ignore_errors=True)
bin_dir = os.path.join(work, "bin")
os.makedirs(bin_dir)
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAILED:", what, file=sys.stderr)


def executable(path, text):
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


starts_log = os.path.join(work, "starts.log")
# Per implementation, the time (µs) of its 1st, 2nd, 3rd start, for 8 and for 64 B.
times = {"ranklab": [0.1, 0.3, 0.1], "openmpi": [0.2, 0.4, 0.4], "mpich": [0.4, 0.4, 0.2]}
for impl, ts in times.items():
    counter = os.path.join(work, impl + ".count")
    executable(
        os.path.join(bin_dir, "fake_" + impl),
        f"""#!/bin/sh
k=$(cat {counter} 2>/dev/null || echo 0); k=$((k + 1)); echo $k > {counter}
echo {impl} >> {starts_log}
set -- {' '.join(str(t) for t in ts)}
eval t=\\${{$k}}
echo "{impl},sendrecv,2,8,$t,1"
echo "{impl},sendrecv,2,64,$t,1"
""",
    )
# mpirun stand-ins: start the first argument that is an executable file, once, with the rest.
for impl in ("openmpi", "mpich"):
    executable(
        os.path.join(bin_dir, "mpirun." + impl),
        """#!/bin/sh
while [ $# -gt 0 ] && ! { [ -f "$1" ] && [ -x "$1" ]; }; do shift; done
exec "$@"
""",
    )
peers = os.path.join(work, "peers")
os.makedirs(peers)
for impl in ("openmpi", "mpich"):
    os.symlink(os.path.join(bin_dir, "fake_" + impl), os.path.join(peers, "mpi_pingpong." + impl))

env = dict(os.environ)
env.update(
    PATH=bin_dir + os.pathsep + env.get("PATH", ""),
    ROUNDS="3",
    SIZES="8,64",
    PEERS_DIR=peers,
    RANKLAB_BENCH_ROUND_LATENCY=os.path.join(bin_dir, "fake_ranklab"),
    FORCE_MPICH="1",
    RAW_CSV=os.path.join(work, "raw.csv"),
)
run = subprocess.run(["bash", script], env=env, capture_output=True, text=True, timeout=60)
print(run.stdout)
check(run.returncode == 0, f"exit status {run.returncode}: {run.stderr[-500:]}")

with open(starts_log) as f:
    starts = f.read().split()
want = ["ranklab", "openmpi", "mpich", "mpich", "openmpi", "ranklab", "ranklab", "openmpi", "mpich"]
check(starts == want, f"starts in the order {starts}, expected {want}")

rows = {}
for line in run.stdout.splitlines():
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    if len(cells) == 6 and cells[0] in ("8", "64"):
        rows[cells[0]] = cells
check(set(rows) == {"8", "64"}, f"rows for 8 and 64 B, got {sorted(rows)}")
if "8" in rows:
    _, rl, om, mp, r_om, r_mp = rows["8"]
    check((rl, om, mp) == ("0.100", "0.400", "0.400"), f"8 B columns (medians of rounds): {rl}, {om}, {mp}")
    check(r_om == "0.50 (0.25-0.75)", f"8 B ranklab/Open MPI: {r_om!r}, expected the median of 0.5, 0.75, 0.25")
    check(r_mp == "0.50 (0.25-0.75)", f"8 B ranklab/MPICH: {r_mp!r}, expected the median of 0.25, 0.75, 0.5")
if "64" in rows:
    check(rows["64"][4] == "0.50 (0.25-0.75)", f"64 B ranklab/Open MPI: {rows['64'][4]!r}")
check("median over 3 rounds" in run.stdout, "the footnote names the rounds")

bad = subprocess.run(["bash", script], env=dict(env, ROUNDS="0"), capture_output=True, text=True, timeout=60)
check(bad.returncode == 2 and "ROUNDS=0" in bad.stderr, f"ROUNDS=0: exit {bad.returncode}, {bad.stderr!r}")

if failures:
    sys.exit(f"{len(failures)} check(s) failed")
print("compare_pingpong.sh rounds: all checks passed")
