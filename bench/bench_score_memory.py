"""Peak memory of `inverse-surprisal score` as the pairs grow (issue 46): 100 000 and 1 000 000 pairs of ~20-token
targets (x ~5 words, y ~20) with a word-level tokenizer and a tiny GPT-2 (2 layers, d=32), each call a new process
whose peak resident set is read from the kernel (getrusage of the finished child). The goal: <= 2 GB at a million
pairs. Prints one JSON object: peak MB per size, bytes per pair above the fixed cost (the slope between the sizes),
and each call's seconds."""
import argparse, json, resource, subprocess, sys, tempfile, time
from pathlib import Path

import numpy as np, torch, tokenizers, transformers

BIN = Path(sys.executable).parent
VOCAB = 1000

def saved_model(folder: Path):
    words = [f'w{i}' for i in range(VOCAB - 3)]
    tok = tokenizers.Tokenizer(tokenizers.models.WordLevel(
        {w: i for i, w in enumerate(['[PAD]', '[UNK]', '[EOS]'] + words)}, unk_token='[UNK]'))
    tok.pre_tokenizer = tokenizers.pre_tokenizers.WhitespaceSplit()
    transformers.PreTrainedTokenizerFast(tokenizer_object=tok, pad_token='[PAD]', unk_token='[UNK]',
                                         eos_token='[EOS]').save_pretrained(folder / 'base')
    torch.manual_seed(0)
    transformers.GPT2LMHeadModel(transformers.GPT2Config(vocab_size=VOCAB, n_positions=64, n_embd=32, n_layer=2,
                                                         n_head=4, bos_token_id=2, eos_token_id=2)).save_pretrained(folder / 'base')
    return words

def pairs_file(path: Path, words: list, n: int):
    g = np.random.default_rng(0)
    with open(path, 'w') as f:
        for s in range(0, n, 100_000):
            m = min(100_000, n - s)
            xl, yl = g.integers(3, 8, m), g.integers(15, 26, m)
            w = g.choice(words, (m, 32))
            f.write(''.join(json.dumps(dict(x=' '.join(w[i, :xl[i]]), y=' '.join(w[i, 8:8 + yl[i]]))) + '\n'
                            for i in range(m)))

def peak_mb(folder: Path, n: int) -> tuple:
    "(peak resident MB, seconds) of one `score` call on n pairs, in a new process."
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t0 = time.perf_counter()
    subprocess.run([str(BIN / 'inverse-surprisal'), 'score', '--data', str(folder / f'pairs{n}.jsonl'),
                    '--base-model', str(folder / 'base'), '--out', str(folder / f'scores{n}.parquet'),
                    '--batch-size', '256', '--no-progress', '--device', 'cpu'], check=True, capture_output=True)
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss       # kB, the largest child so far
    if peak <= before: raise SystemExit('run the sizes from small to large: getrusage keeps the largest child')
    return peak / 1024, time.perf_counter() - t0

def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0]); p.add_argument('--device', default='cpu')
    p.add_argument('--sizes', type=int, nargs='+', default=[100_000, 1_000_000])
    a = p.parse_args()
    with tempfile.TemporaryDirectory() as d:
        d = Path(d); words = saved_model(d); res = {}
        for n in sorted(a.sizes):
            pairs_file(d / f'pairs{n}.jsonl', words, n)
            mb, s = peak_mb(d, n)
            res |= {f'score_peak_memory_mb_{n // 1000}k': round(mb, 1), f'score_seconds_{n // 1000}k': round(s, 1)}
        lo, hi = sorted(a.sizes)[0], sorted(a.sizes)[-1]
        if hi > lo:
            res['score_bytes_per_pair'] = round((res[f'score_peak_memory_mb_{hi // 1000}k']
                                                 - res[f'score_peak_memory_mb_{lo // 1000}k']) * 2**20 / (hi - lo))
    print(json.dumps(res))

if __name__ == '__main__': main()
