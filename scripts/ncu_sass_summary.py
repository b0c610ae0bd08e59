"""Summarize ncu's per-instruction SASS page: where a kernel's executed instructions and stall samples go.
Usage: ncu -i REPORT.ncu-rep --page source --csv --print-source sass > sass.csv; python scripts/ncu_sass_summary.py sass.csv
Prints the straight-line runs of instructions executed equally often (basic blocks, roughly), largest first, with their
share of the executed instructions and of the warp stall samples, and the stall reasons by 2 KB of code address."""
import csv
import sys
from collections import defaultdict


def main(path: str, top: int = 30) -> None:
    rows = list(csv.reader(open(path)))
    head = next(i for i, r in enumerate(rows) if r and r[0] == "Address")
    hdr = rows[head]
    col = {h: i for i, h in enumerate(hdr)}
    recs = []
    for r in rows[head + 1:]:
        try:
            recs.append((int(r[0], 16), r[1].strip(), int(r[col["Instructions Executed"]] or 0),
                         int(r[col["Warp Stall Sampling (All Samples)"]] or 0), r))
        except (ValueError, IndexError):
            continue
    base = recs[0][0]
    total = sum(e for _, _, e, _, _ in recs)
    samples = sum(s for _, _, _, s, _ in recs)
    print(f"{len(recs)} SASS instructions, {total} executed (warp-level), {samples} stall samples")
    blocks, cur = [], None
    for a, text, ex, s, _ in recs:
        if cur and cur["ex"] == ex and not text.startswith("BSYNC"):
            cur.update(n=cur["n"] + 1, s=cur["s"] + s, end=a)
        else:
            cur = dict(start=a, end=a, ex=ex, n=1, s=s, first=text.split()[0])
            blocks.append(cur)
    blocks.sort(key=lambda b: -b["ex"] * b["n"])
    print(f"\n{'code':>17} {'instr':>5} {'runs':>6} {'executed':>9} {'share':>6} {'samples':>7}  first instruction")
    for b in blocks[:top]:
        ex = b["ex"] * b["n"]
        print(f"{b['start'] - base:#8x}-{b['end'] - base:#8x} {b['n']:5d} {b['ex']:6d} {ex:9d} {ex / total:6.1%} "
              f"{b['s']:7d}  {b['first']}")
    stalls = [h for h in hdr if h.startswith("stall_") and "Not Issued" not in h]
    region = defaultdict(lambda: defaultdict(int))
    for a, _, ex, _, r in recs:
        key = (a - base) // 0x800 * 0x800
        region[key]["executed"] += ex
        for h in stalls:
            region[key][h] += int(r[col[h]] or 0)
    print(f"\n{'code (2 KB)':>11} {'executed':>9} {'samples':>7}  top stall reasons")
    for key in sorted(region):
        d = region[key]
        n = sum(v for h, v in d.items() if h != "executed")
        if n < max(10, samples // 200):
            continue
        top5 = sorted(((v, h[6:]) for h, v in d.items() if h != "executed" and v), reverse=True)[:5]
        print(f"{key:#11x} {d['executed']:9d} {n:7d}  " + " ".join(f"{h}={v}" for v, h in top5))


if __name__ == "__main__":
    main(sys.argv[1])
