"""Probe: which shapes make wgmma_rs_tf32 fault (each in its own process, CUDA_LAUNCH_BLOCKING=1)."""
import subprocess, sys, json
shapes = [dict(B=9, C_in=16, C_out=24, T=4160, K=3, dilation=1, bias=True),
          dict(B=9, C_in=128, C_out=128, T=4160, K=3, dilation=1, bias=True),
          dict(B=1, C_in=16, C_out=24, T=4160, K=3, dilation=1, bias=True),
          dict(B=9, C_in=16, C_out=24, T=256, K=3, dilation=1, bias=True),
          dict(B=9, C_in=16, C_out=24, T=4160, K=5, dilation=2, bias=True),
          dict(B=2, C_in=3, C_out=7, T=300, K=3, dilation=1, bias=True),
          dict(B=2, C_in=128, C_out=128, T=300, K=3, dilation=1, bias=True),
          dict(B=2, C_in=64, C_out=64, T=300, K=3, dilation=1, bias=True),
          dict(B=2, C_in=32, C_out=32, T=300, K=5, dilation=2, bias=True),
          dict(B=2, C_in=72, C_out=40, T=300, K=4, dilation=3, bias=True)]
code = """
import sys, json, torch, fused_jit as fj
s = json.loads(sys.argv[1]); v = sys.argv[2]
model, x = fj._make_case(s, torch.float32, 'cuda', seed=0)
y = fj.run_variant(v, model, x)
print('rel_err/bound', fj.rel_err(y, fj.reference(model, x)) / fj.tolerance(v))
"""
v = sys.argv[1] if len(sys.argv) > 1 else "wgmma_rs_tf32"
for s in shapes:
    r = subprocess.run([sys.executable, "-c", code, json.dumps(s), v], capture_output=True, text=True,
                       env={**__import__("os").environ, "CUDA_LAUNCH_BLOCKING": "1"})
    last = (r.stdout.strip().splitlines() or [""])[-1]
    err = [l for l in r.stderr.splitlines() if "Error" in l or "error" in l][-1:] 
    print(s, "->", "ok" if r.returncode == 0 else "FAIL", last, err)
