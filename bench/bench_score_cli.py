"""`inverse-surprisal score` end to end: its scoring throughput against a bare inference_mode forward of the same model
over the same batches, and its whole wall time (a new process: imports, loading, tokenising, scoring, the cache and the
table) against the library call a researcher would write (`score_dataset` on the tokenised pairs, model loaded), and
`score_file` in this process (the command's work without a new interpreter), with the new interpreter's fixed cost.
Two sizes, as bench_scoring: a tiny GPT-2 on 10 000 pairs, and a vocabulary-32768 GPT-2 on 256 longer pairs.
Prints one JSON object; medians of interleaved repeats."""
import argparse, json, statistics, subprocess, sys, tempfile, time
from pathlib import Path

import numpy as np
import torch
import tokenizers
import transformers

from inverse_surprisal.cache import _flatten, _pad_batch, score_dataset
from inverse_surprisal.score import score_file
from inverse_surprisal.text import TextPairs, load_causal_lm, load_tokenizer, read_pairs

BIN = Path(sys.executable).parent

def saved_model(folder: Path, vocab: int, d: int, layers: int, n: int, lo: int, hi: int):
    "A word-level tokenizer of `vocab` words, a GPT-2 over it and `n` pairs of lo-hi words, saved under `folder`."
    words = [f'w{i}' for i in range(vocab - 3)]
    tok = tokenizers.Tokenizer(tokenizers.models.WordLevel({w: i for i, w in enumerate(['[PAD]', '[UNK]', '[EOS]'] + words)}, unk_token='[UNK]'))
    tok.pre_tokenizer = tokenizers.pre_tokenizers.WhitespaceSplit()
    fast = transformers.PreTrainedTokenizerFast(tokenizer_object=tok, pad_token='[PAD]', unk_token='[UNK]', eos_token='[EOS]')
    fast.save_pretrained(folder / 'base')
    torch.manual_seed(0)
    transformers.GPT2LMHeadModel(transformers.GPT2Config(vocab_size=vocab, n_positions=128, n_embd=d, n_layer=layers, n_head=4,
                                                         bos_token_id=2, eos_token_id=2)).save_pretrained(folder / 'base')
    g = np.random.default_rng(0)
    with open(folder / 'pairs.jsonl', 'w') as f:
        for T in g.integers(lo, hi + 1, n):
            ws = g.choice(words, T - 2)       # [x ; sep ; y ; eos]: T tokens in all
            cut = (T - 2) // 2
            f.write(json.dumps(dict(x=' '.join(ws[:cut]), y=' '.join(ws[cut:]))) + '\n')

def forward_over_batches(folder: Path, bs: int):
    "(model, tokenizer, the bare forward over the batches scoring builds, tokens in them)."
    model = load_causal_lm(folder / 'base'); tok = load_tokenizer(folder / 'base')
    items = TextPairs(read_pairs(folder / 'pairs.jsonl'), tok).items
    flat = _flatten([(d['input_ids'], d['y_mask']) for d in items])
    order = torch.from_numpy(np.argsort(flat.lengths.numpy(), kind='stable'))
    bat = [_pad_batch(flat, order[s:s + bs], 0) for s in range(0, len(order), bs)]
    def bare():
        with torch.inference_mode():
            for ids, _, att in bat: model(ids, attention_mask=att, use_cache=False).logits
    return model, tok, bare, int(flat.lengths.sum())

def cold_forward(folder: Path, bs: int) -> float:
    "Seconds of the bare forward over the batches in a new process, as the command's scoring runs: first shapes included."
    res = subprocess.run([sys.executable, __file__, '--cold-forward', str(folder), str(bs)], capture_output=True, text=True, check=True)
    return float(res.stdout.strip().splitlines()[-1])

def measure(folder: Path, bs: int, reps: int) -> dict:
    model, tok, bare, n_tokens = forward_over_batches(folder, bs)
    def library():
        score_dataset(model, TextPairs(read_pairs(folder / 'pairs.jsonl'), tok).items, batch_size=bs, progress=False)
    def cli():
        for p in folder.glob('s.*'): p.unlink()
        res = subprocess.run([BIN / 'inverse-surprisal', 'score', '--data', folder / 'pairs.jsonl', '--base-model', folder / 'base',
                              '--out', folder / 's.parquet', '--batch-size', str(bs), '--no-progress', '--device', 'cpu'],
                             capture_output=True, text=True, check=True)
        return float(res.stdout.split(' in ')[1].split(' s:')[0]), float(res.stdout.split(' pairs/s, ')[1].split(' tokens/s')[0])
    def in_process():                                          # the command's work, without a new interpreter
        for p in folder.glob('f.*'): p.unlink()
        score_file(folder / 'pairs.jsonl', folder / 'base', folder / 'f.parquet', batch_size=bs, progress=False, device='cpu')
    bare(); library(); cli(); in_process()                      # warm-up
    t_bare, t_lib, t_cli, t_cli_scoring, t_file, t_cold = [], [], [], [], [], []
    for _ in range(reps):
        t = time.perf_counter(); bare(); t_bare.append(time.perf_counter() - t)
        t_cold.append(cold_forward(folder, bs))
        t = time.perf_counter(); library(); t_lib.append(time.perf_counter() - t)
        t = time.perf_counter(); secs, _ = cli(); t_cli.append(time.perf_counter() - t); t_cli_scoring.append(secs)
        t = time.perf_counter(); in_process(); t_file.append(time.perf_counter() - t)
    return dict(forward_tokens_per_second=round(n_tokens / statistics.median(t_bare)),
                cold_forward_tokens_per_second=round(n_tokens / statistics.median(t_cold)),
                cli_tokens_per_second=round(n_tokens / statistics.median(t_cli_scoring)),
                # both in a new process, where the first batches of each shape cost more than in a warm one
                cli_vs_forward_ratio=round(statistics.median(b / s for b, s in zip(t_cold, t_cli_scoring)), 4),
                cli_vs_warm_forward_ratio=round(statistics.median(b / s for b, s in zip(t_bare, t_cli_scoring)), 4),
                cli_wall_seconds=round(statistics.median(t_cli), 3), library_seconds=round(statistics.median(t_lib), 3),
                cli_vs_library_ratio=round(statistics.median(c / l for c, l in zip(t_cli, t_lib)), 3),
                in_process_seconds=round(statistics.median(t_file), 3),
                in_process_vs_library_ratio=round(statistics.median(f / l for f, l in zip(t_file, t_lib)), 3))

def startup_seconds(reps: int) -> float:
    "A new interpreter that imports the command line and the transformers model classes, and exits: the CLI's fixed cost."
    code = 'import inverse_surprisal.cli, transformers; transformers.AutoModelForCausalLM, transformers.GPT2LMHeadModel'
    times = []
    for _ in range(reps):
        t = time.perf_counter(); subprocess.run([sys.executable, '-c', code], check=True); times.append(time.perf_counter() - t)
    return round(statistics.median(times), 3)

def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument('--device', default='cpu'); p.add_argument('--reps', type=int, default=5)
    p.add_argument('--cold-forward', nargs=2, metavar=('FOLDER', 'BATCH'), help='time one bare forward pass, then exit')
    a = p.parse_args()
    if a.cold_forward:
        _, _, bare, _ = forward_over_batches(Path(a.cold_forward[0]), int(a.cold_forward[1]))
        t = time.perf_counter(); bare(); return print(time.perf_counter() - t)
    if a.device != 'cpu': return print(json.dumps({}))     # the CLI bench is a CPU one; the GPU check script has its own
    res = dict(score_cli_startup_seconds=startup_seconds(a.reps))
    for suffix, what, shape, bs in (('', 'GPT-2 d=64, 2 layers, vocab 1024; 10000 pairs of 12-24 tokens, batch 256', (1024, 64, 2, 10000, 12, 24), 256),
                                    ('_lm', 'GPT-2 d=256, 4 layers, vocab 32768; 256 pairs of 16-64 tokens, batch 32', (32768, 256, 4, 256, 16, 64), 32)):
        with tempfile.TemporaryDirectory() as d:
            saved_model(Path(d), *shape)
            res[f'score_cli{suffix or "_small"}'] = what
            res.update({f'score_{k}{suffix}': v for k, v in measure(Path(d), bs, a.reps).items()})
    print(json.dumps(res))

if __name__ == '__main__': main()
