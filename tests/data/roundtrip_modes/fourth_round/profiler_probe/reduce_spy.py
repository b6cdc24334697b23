"""Reduces a ``py-spy record --native --threads --idle --format raw`` file to its Python frames:
each stack's thread, then its frames with a ``.py:`` location (paths cut at ``site-packages/``),
kept to the first DEPTH of them, samples summed per reduced stack, most first.
Usage: reduce_spy.py RAW [DEPTH] > REDUCED"""
import collections
import re
import sys

depth = int(sys.argv[2]) if len(sys.argv) > 2 else 12
counts: collections.Counter[str] = collections.Counter()
for line in open(sys.argv[1]):
    stack, _, n = line.rstrip("\n").rpartition(" ")
    frames = stack.split(";")
    kept = [frames[0]] + [re.sub(r"\(/\S*?site-packages/", "(", f) for f in frames[1:] if ".py:" in f][:depth]
    counts[";".join(kept)] += int(n)
for stack, n in counts.most_common():
    print(f"{stack} {n}")
