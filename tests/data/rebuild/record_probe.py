"""Probe: for each nvFusion of a litgpt training step, does print(fd) -> rebuild give the same fusion?"""
import difflib, json, os, re, sys, time, traceback
import torch
sys.path.insert(0, os.getcwd())
import nvfuser_direct as nvd
from nvfuser_direct import FusionDefinition, DataType
from fusiondiff.recording.inputs import faithful_copy
from fusiondiff.recording.nvfuser_adapter import canonical_source, split_cuda_sources
from fusiondiff.replay.rebuild import restore_constants

OUT = os.environ["OUT"]
MODELS = {
    "llama3": ("Llama-3-8B", 2, 1024, 4),
    "pythia": ("pythia-1b", 2, 512, 2),
    "qwen": ("Qwen2.5-0.5B", 2, 512, 2),
    "gemma2": ("gemma-2-2b", 2, 512, 2),
}
which = sys.argv[1:] or list(MODELS)
seen = {}
orig = FusionDefinition.execute
def execute(self, inputs, *a, **k):
    key = id(self)
    if key not in seen:
        seen[key] = (self, [faithful_copy(x) if isinstance(x, torch.Tensor) else x for x in inputs], k)
    return orig(self, inputs, *a, **k)
FusionDefinition.execute = execute

CONST = re.compile(r"\b(double|float|__half|__bfloat|bfloat16|half|complex\w*)\(([^()]*)\)")
def math_of(fd):
    try:
        return fd.fusion.print_math()
    except Exception as e:
        return f"print_math failed: {e}"
def canon_math(text):
    names = {}
    text = re.sub(r"\bT(\d+)_", lambda m: "T" + names.setdefault("T"+m[1], str(len(names))) + "_", text)
    return text
def rebuild(text):
    ns = {"FusionDefinition": FusionDefinition, "DataType": DataType}
    exec(text, ns)
    fn = [v for k, v in ns.items() if k.startswith("nvfuser_fusion")][0]
    with FusionDefinition() as fd2:
        fn(fd2)
    return fd2
def cuda(fd, inputs):
    code = fd.fec.get_cuda_kernel(inputs, False, 0)
    return {re.sub(r"_f\d+_c\d+_r\d+", "", k): canonical_source(v) for k, v in split_cuda_sources(code).items()}

results = []
for model_key in which:
    name, n_layer, block, batch = MODELS[model_key]
    from litgpt import GPT, Config
    from thunder.dynamo import thunderfx
    seen.clear()
    cfg = Config.from_name(name); cfg.n_layer = n_layer; cfg.block_size = block
    torch.manual_seed(0)
    torch.set_default_dtype(torch.bfloat16)
    with torch.device("cuda"):
        model = GPT(cfg)
        idx = torch.randint(0, cfg.padded_vocab_size, (batch, block))
    torch.set_default_dtype(torch.float32)
    cm = thunderfx(model)
    t = time.time()
    try:
        logits = cm(idx)
        loss = torch.nn.functional.cross_entropy(logits.float().flatten(0, 1), idx.flatten())
        loss.backward()
        torch.cuda.synchronize()
    except Exception as e:
        print(model_key, "FAILED", type(e).__name__, str(e)[:300], flush=True)
    print(f"{model_key}: step in {time.time()-t:.1f}s, {len(seen)} fds", flush=True)
    for n, (fd, inputs, kw) in enumerate(list(seen.values())):
        r = {"model": model_key, "n": n}
        try:
            text = str(fd)
            r["text"] = text
            r["math_live"] = math_of(fd)
            consts = [m.group(0) for m in CONST.finditer(r["math_live"])]
            r["consts_math"] = consts
            try:
                r["vals"] = sorted({str(v) for v in fd.fusion.vals() if not v.is_symbolic() and not v.is_tensor()})
            except Exception as e:
                r["vals"] = [f"vals failed {e}"]
            exact = [m.group(2) for m in CONST.finditer(r["math_live"])]
            restored, pairs, amb = restore_constants(text, exact)
            r["restored_pairs"] = pairs; r["ambiguous"] = amb
            live_cuda = cuda(fd, inputs)
            for variant, vtext in (("raw", text), ("restored", restored)):
                if variant == "restored" and vtext == text:
                    r["restored_same_as_raw"] = True
                    continue
                fd2 = rebuild(vtext)
                fd2.execute([faithful_copy(x) if isinstance(x, torch.Tensor) else x for x in inputs], **kw)
                c2 = cuda(fd2, inputs)
                m2 = math_of(fd2)
                r[f"math_{variant}"] = m2
                r[f"math_equal_{variant}"] = canon_math(m2) == canon_math(r["math_live"])
                same = c2 == live_cuda
                r[f"cuda_equal_{variant}"] = same
                if not same:
                    d = []
                    for k in sorted(set(c2) | set(live_cuda)):
                        d += list(difflib.unified_diff(live_cuda.get(k, "").splitlines(), c2.get(k, "").splitlines(), k + " live", k + " " + variant, n=1, lineterm=""))
                    r[f"cuda_diff_{variant}"] = d[:80]
        except Exception as e:
            r["error"] = traceback.format_exc()[-2000:]
        results.append(r)
        with open(f"{OUT}/fidelity.jsonl", "a") as fh:
            fh.write(json.dumps(r) + "\n")
        print(model_key, n, {k: v for k, v in r.items() if k.startswith(("cuda_equal", "math_equal", "error", "restored_same"))}, flush=True)
    del cm, model
    torch.cuda.empty_cache()
json.dump(results, open(f"{OUT}/fidelity.json", "w"), indent=1)
