# Counts the instructions and the stores one rank executes per repeated call, by stepping
# through one call instruction by instruction under gdb (a development aid; needs the
# Debian package gdb, which the build does not). A store is any instruction that writes
# memory: push, call, and an instruction whose last (AT&T: destination) operand is memory.
#
#   RANK=0 gdb -q -nx -batch -x scripts/count_stores.py --args \
#       build-rel/ranklab bench --coll bcast --p 2 --sizes 8 --algo auto --no-baselines -q
#
# It stops RANK's thread at FUNCTION (default ranklab::comm::run_collective, the entry that
# `ranklab bench` times) after SKIP earlier calls (default 60: past the first call and the
# calibration's start), then steps that thread until it is back at FUNCTION: one whole
# iteration of the caller's loop. The other ranks are held meanwhile (LOCK=on, for a
# sender) or run while it steps (LOCK=off, for a rank that waits for messages). Prints the
# totals, the instructions per function, and every store with its function. A count that
# stops at the limit met the end of a batch (the clock, the batch's allreduce) or waited
# for a held peer: take another SKIP, or LOCK=off.
import collections
import os
import re

import gdb

FUNCTION = os.environ.get("FUNCTION", "ranklab::comm::run_collective")
RANK = int(os.environ.get("RANK", "0"))
SKIP = int(os.environ.get("SKIP", "60"))
LOCK = os.environ.get("LOCK", "on")
LIMIT = 20000  # instructions: a rank that waits for a held peer would step for ever

gdb.execute("set pagination off")
gdb.execute("set confirm off")
# Displaced stepping over a breakpoint on a PLT entry can leave a scratch register changed
# (seen with gdb 13 on `bnd jmp *...(%rip)`); plain stepping is slower but exact.
gdb.execute("set displaced-stepping off")
# comm's first member is the team pointer, its second the rank.
gdb.execute(f"break {FUNCTION} if *(int*)((char*)$rdi + 8) == {RANK}")
gdb.execute("run")
for done in range(SKIP):
    try:
        gdb.execute("continue", to_string=True)
    except gdb.error:
        # Every stop at the breakpoint takes a while, so a benchmark calibrates to few calls.
        print(f"count_stores.py: the program ended after {done} calls; take a lower SKIP")
        raise SystemExit(1)
gdb.execute("delete")
gdb.execute(f"set scheduler-locking {LOCK}")

arch = gdb.selected_inferior().architecture()
start = int(gdb.parse_and_eval("$pc"))
no_store = ("cmp", "test", "lea", "prefetch", "j", "nop", "bt", "ucomi", "comi", "pause")
per_function = collections.Counter()
stores = []
total = 0
while total < LIMIT:
    pc = int(gdb.parse_and_eval("$pc"))
    if pc == start and total > 0:
        break
    total += 1
    where = gdb.execute(f"info symbol {pc}", to_string=True).split(" in section")[0]
    where = re.sub(r" \+ \d+$", "", where).strip()
    per_function[where[:100]] += 1
    asm = arch.disassemble(pc)[0]["asm"]
    mnemonic, _, operands = asm.partition(" ")
    operands = operands.split("#")[0].strip()
    if mnemonic.startswith(("push", "call")):
        stores.append((where, asm))
    elif operands and not mnemonic.startswith(no_store):
        last = operands.rsplit(",", 1)[-1].strip() if "," in operands else ""
        if "(" in last:
            stores.append((where, asm))
    gdb.execute("stepi", to_string=True)

print(f"instructions {total}, stores {len(stores)}" + (" (stopped at the limit)" if total >= LIMIT else ""))
print("instructions per function:")
for where, n in per_function.most_common():
    print(f"  {n:5d} {where}")
print("stores:")
for where, asm in stores:
    print(f"  {where[:60]:60s} {asm}")
gdb.execute("kill")
