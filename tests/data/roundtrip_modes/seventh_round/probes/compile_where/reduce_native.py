"""Reduces a ``py-spy record --native --format raw`` file of one repro script's run: the samples
per native function, inclusive (each function once per stack) among those in nvFuser's namespace,
and the leaves (self time) of all; top N each. Usage: reduce_native.py RAW [N]"""
import collections
import re
import sys

top = int(sys.argv[2]) if len(sys.argv) > 2 else 40
inclusive: collections.Counter[str] = collections.Counter()
leaves: collections.Counter[str] = collections.Counter()
total = 0
for line in open(sys.argv[1]):
    stack, _, n = line.rstrip("\n").rpartition(" ")
    count = int(n)
    frames = [re.sub(r" \(.*\)$", "", f) for f in stack.split(";")[1:]]
    total += count
    if frames:
        leaves[frames[-1][:160]] += count
    for name in set(frames):
        if "nvfuser" in name:
            inclusive[name[:160]] += count
print(f"samples {total}")
print("== nvFuser functions, inclusive")
for name, n in inclusive.most_common(top):
    print(f"{100 * n / total:5.1f} %  {name}")
print("== leaves")
for name, n in leaves.most_common(top // 2):
    print(f"{100 * n / total:5.1f} %  {name}")
