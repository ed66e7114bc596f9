"""onnxruntime-genai's own greedy loop on an edgebench int4/fp32 folder, for
benchmarks/onnx_decode.py --genai-python (run with an interpreter that has
onnxruntime-genai; edgebench's venv does not).

`models convert` writes no genai_config.json and onnxruntime-genai's model builder needs
transformers 5.x (docs/performance.md), so this writes one by hand into a temporary folder
beside a symlink to the folder's model.onnx: optimum's input/output names (the gqa graph
keeps them), the shapes from config.json; past and present in separate buffers for
optimum's graph (it concatenates), one shared buffer for the gqa graph (its
GroupQueryAttention writes the new keys in place, as in genai's own builder's graphs).

Usage: PY benchmarks/onnx_genai_loop.py FOLDER IDS.json STEPS THREADS ROUNDS
Prints one JSON line per (round, prompt): prompt tokens, prefill s, tok/s, ids.
"""

import json
import sys
import tempfile
import time
from pathlib import Path

import onnxruntime_genai as og


def genai_config(config: dict, threads: int, share: bool) -> dict:
    names = {
        "input_ids": "input_ids",
        "attention_mask": "attention_mask",
        "position_ids": "position_ids",
        "past_key_names": "past_key_values.%d.key",
        "past_value_names": "past_key_values.%d.value",
    }
    outputs = {
        "logits": "logits",
        "present_key_names": "present.%d.key",
        "present_value_names": "present.%d.value",
    }
    heads = config["num_attention_heads"]
    decoder = {
        "session_options": {"intra_op_num_threads": threads, "inter_op_num_threads": 1},
        "filename": "model.onnx",
        "head_size": config.get("head_dim") or config["hidden_size"] // heads,
        "hidden_size": config["hidden_size"],
        "num_attention_heads": heads,
        "num_key_value_heads": config["num_key_value_heads"],
        "num_hidden_layers": config["num_hidden_layers"],
        "inputs": names,
        "outputs": outputs,
    }
    eos = config["eos_token_id"]
    model = {
        "type": config["model_type"],
        "context_length": 2048,
        "vocab_size": config["vocab_size"],
        "bos_token_id": config["bos_token_id"],
        "eos_token_id": eos,
        "pad_token_id": config.get("pad_token_id", eos),
        "decoder": decoder,
    }
    search = {"do_sample": False, "max_length": 2048, "num_beams": 1, "top_k": 1}
    search["past_present_share_buffer"] = share
    return {"model": model, "search": search}


def main() -> None:
    folder, ids_file = Path(sys.argv[1]), sys.argv[2]
    steps, threads, rounds = (int(a) for a in sys.argv[3:6])
    prompts = json.loads(Path(ids_file).read_text())
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "model.onnx").symlink_to(folder.resolve() / "model.onnx")
        config = json.loads((folder / "config.json").read_text())
        provenance = json.loads((folder / "edgebench-onnx.json").read_text())
        share = (provenance.get("export") or {}).get("graph") == "gqa"
        genai = genai_config(config, threads, share)
        (Path(tmp) / "genai_config.json").write_text(json.dumps(genai))
        model = og.Model(tmp)
        for r in range(rounds):
            for ids in prompts:
                params = og.GeneratorParams(model)
                params.set_search_options(max_length=len(ids) + steps, do_sample=False)
                generator = og.Generator(model, params)
                t0 = time.perf_counter()
                generator.append_tokens(ids)
                t1 = time.perf_counter()
                out: list[int] = []
                while len(out) < steps and not generator.is_done():
                    generator.generate_next_token()
                    out.append(int(generator.get_next_tokens()[0]))
                t2 = time.perf_counter()
                row = {"round": r, "prompt_tokens": len(ids), "prefill_s": t1 - t0}
                row.update(tok_s=len(out) / (t2 - t1), ids=out)
                print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
